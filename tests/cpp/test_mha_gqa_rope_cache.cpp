// MultiHeadAttention as today's models use it: grouped- and multi-query heads
// (numKVHeads), RoPE on q and k, ALiBi, windows and bottom-right causal, forward and backward
// against the PyTorch fixtures (tests/golden/make_modern_fixtures.py, modern_mha_*); the trace's
// rotated steps; the config's refusals.
#include <catch2/catch.hpp>
#include <cmath>

#include "core/multi_head.h"
#include "fixture.h"
#include "golden_mha.h"
#include "test_helpers.h"

namespace {

// The fixtures' bound (as test_golden_grad.cpp): 1e-5 absolute + 1e-4 relative; gradients that are
// zero by construction (the key bias without RoPE) hold rounding noise below kNoiseGrad.
constexpr double kAbsTol = 1e-5;
constexpr double kRelTol = 1e-4;
constexpr double kNoiseGrad = 1e-6;

void require_fixture_close(const std::vector<float>& got, const attn::Tensor& want, const std::string& what) {
  REQUIRE(got.size() == want.data.size());
  for (std::size_t e = 0; e < got.size(); ++e) {
    INFO(what << "[" << e << "] = " << got[e] << ", want " << want.data[e]);
    if (std::fabs(want.data[e]) < kNoiseGrad) {
      REQUIRE(std::fabs(got[e]) < 10 * kNoiseGrad);
      continue;
    }
    REQUIRE(std::fabs(got[e] - want.data[e]) <= kAbsTol + kRelTol * std::fabs(want.data[e]));
  }
}

attn::MhaConfig modern_config(const Fixture& f) {
  attn::MhaConfig c;
  c.embed_dim = static_cast<int>(f.scalar("embed_dim", 0));
  c.num_heads = static_cast<int>(f.scalar("num_heads", 1));
  c.num_kv_heads = static_cast<int>(f.scalar("num_kv_heads", 0));
  c.head_dim = static_cast<int>(f.scalar("head_dim", 0));
  c.seed = 99;  // every parameter is overwritten from the fixture
  if (f.flag("rope")) {
    attn::RotaryOptions r;
    r.base = f.scalar("rope_base", 10000.0f);
    r.style = f.flag("rope_interleaved") ? attn::RotaryStyle::kInterleaved : attn::RotaryStyle::kHalf;
    r.dims = static_cast<int>(f.scalar("rope_dims", 0));
    c.rope = r;
  }
  return c;
}

attn::MultiHeadAttention modern_mha(const Fixture& f) {
  attn::MultiHeadAttention mha;
  attn::Status st = attn::MultiHeadAttention::create(modern_config(f), mha);
  INFO(golden::describe(st));
  REQUIRE(st.ok());
  for (const char* name : {"q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias",
                           "out_proj.weight", "out_proj.bias"}) {
    st = mha.set_parameter(name, f.at(name));
    INFO(name << ": " << golden::describe(st));
    REQUIRE(st.ok());
  }
  return mha;
}

attn::MhaForwardOptions modern_options(const Fixture& f) {
  attn::MhaForwardOptions o;
  const int mode = static_cast<int>(f.scalar("causal_mode", 0));
  o.causal = mode != 0;
  o.positions.bottom_right = mode == 2;
  if (mode != 2) o.positions.offset = static_cast<std::int64_t>(f.scalar("position_offset", 0));
  if (f.scalar("window", 0) > 0) o.positions.window = static_cast<int>(f.scalar("window", 0));
  o.positions.alibi_paper = f.flag("alibi");
  o.need_weights = false;
  return o;
}

// The gradient of a fixture parameter from the module's, which may hold it inside in_proj_weight.
std::vector<float> grad_of(const attn::MultiHeadAttention& mha, const attn::MhaGrads& g,
                           const std::string& name) {
  for (const auto& [n, t] : g.params)
    if (n == name) return t.data;
  const attn::Tensor* in_proj = nullptr;
  for (const auto& [n, t] : g.params)
    if (n == "in_proj_weight") in_proj = &t;
  REQUIRE(in_proj != nullptr);
  const std::size_t block =
      static_cast<std::size_t>(mha.config().num_heads) * mha.head_dim() * mha.config().embed_dim;
  const std::size_t at = name == "q_proj_weight" ? 0 : name == "k_proj_weight" ? block : 2 * block;
  return std::vector<float>(in_proj->data.begin() + at, in_proj->data.begin() + at + block);
}

void run_fixture(const Fixture& f) {
  INFO(f.description);
  const attn::MultiHeadAttention mha = modern_mha(f);
  const attn::MhaForwardOptions o = modern_options(f);
  const attn::Tensor* key = f.has("key") ? &f.at("key") : nullptr;
  const attn::Tensor* value = f.has("value") ? &f.at("value") : nullptr;
  attn::MhaResult r, plain;
  attn::MhaSaved saved;
  attn::Status st = mha.forward_saving(f.at("query"), key, value, o, r, saved);
  INFO(golden::describe(st));
  REQUIRE(st.ok());
  require_fixture_close(r.output.data, f.at("output"), "output");
  REQUIRE(mha.forward(f.at("query"), key, value, o, plain).ok());
  REQUIRE(plain.output.data == r.output.data);
  if (!f.has("grad_output")) return;
  attn::MhaGrads g;
  st = mha.backward(saved, f.at("grad_output"), g);
  INFO(golden::describe(st));
  REQUIRE(st.ok());
  require_fixture_close(g.query.data, f.at("grad_query"), "grad query");
  if (f.has("grad_key")) require_fixture_close(g.key.data, f.at("grad_key"), "grad key");
  if (f.has("grad_value")) require_fixture_close(g.value.data, f.at("grad_value"), "grad value");
  for (const char* name : {"q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias",
                           "out_proj.weight", "out_proj.bias"}) {
    require_fixture_close(grad_of(mha, g, name), f.at(std::string("grad.") + name),
                          std::string("grad.") + name);
  }
}

}  // namespace

TEST_CASE(
    "MultiHeadAttention with grouped heads and positions matches the PyTorch fixtures: GQA, MQA, RoPE, "
    "ALiBi, windows",
    "[positions][golden-grad]") {
  int count = 0;
  for (const std::string& name : golden::list_fixtures("index_modern.txt")) {
    if (name.rfind("modern_mha_", 0) != 0 || name == "modern_mha_cache") continue;
    ++count;
    DYNAMIC_SECTION(name) {
      run_fixture(load_fixture(name));
    }
  }
  REQUIRE(count == 6);
}

TEST_CASE("numKVHeads and rope: state-dict layout, trace steps, refusals", "[positions]") {
  attn::MhaConfig c;
  c.embed_dim = 16;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.rope = attn::RotaryOptions{};
  attn::MultiHeadAttention m;
  REQUIRE(attn::MultiHeadAttention::create(c, m).ok());
  REQUIRE(m.parameter_names() == std::vector<std::string>{"q_proj_weight", "k_proj_weight", "v_proj_weight",
                                                          "in_proj_bias", "out_proj.weight",
                                                          "out_proj.bias"});
  attn::Tensor t;
  REQUIRE(m.get_parameter("k_proj_weight", t).ok());
  REQUIRE(t.shape == attn::Shape{8, 16});
  REQUIRE(m.get_parameter("in_proj_bias", t).ok());
  REQUIRE(t.shape == attn::Shape{32});
  REQUIRE(m.get_parameter("in_proj_weight", t).code == attn::StatusCode::kUnknownParameter);
  // The trace: k and v have the key/value heads; the rotated q and k follow them.
  attn::MhaResult r;
  attn::Trace trace;
  attn::MhaForwardOptions o;
  o.causal = true;
  REQUIRE(m.forward(testutil::random_tensor({1, 5, 16}, 3), nullptr, nullptr, o, r, &trace).ok());
  REQUIRE(trace.find("k")->tensor.shape == attn::Shape{1, 2, 5, 4});
  REQUIRE(trace.find("q_rotated")->tensor.shape == attn::Shape{1, 4, 5, 4});
  REQUIRE(trace.find("k_rotated")->tensor.shape == attn::Shape{1, 2, 5, 4});
  REQUIRE(trace.find("weights")->tensor.shape == attn::Shape{1, 4, 5, 5});
  // Refusals.
  c.num_kv_heads = 3;
  REQUIRE(attn::MultiHeadAttention::create(c, m).code == attn::StatusCode::kHeadsDoNotDivide);
  c.num_kv_heads = 2;
  c.rope->dims = 3;
  REQUIRE(attn::MultiHeadAttention::create(c, m).code == attn::StatusCode::kInvalidArgument);
  c.rope->dims = 0;
  c.rope->offset = 4;
  REQUIRE(attn::MultiHeadAttention::create(c, m).code == attn::StatusCode::kInvalidArgument);
}

namespace {

// Rows [t0, t0 + n) of x (1, T, E) as (1, n, E).
attn::Tensor rows_of(const attn::Tensor& x, int t0, int n) {
  const int e = x.dim(2);
  return attn::Tensor({1, n, e}, std::vector<float>(x.data.begin() + t0 * e, x.data.begin() + (t0 + n) * e));
}

// Feeds x through a fresh cache in chunks of the given sizes; the outputs concatenated (1, T, E).
std::vector<float> decode(const attn::MultiHeadAttention& mha, const attn::Tensor& x,
                          const std::vector<int>& chunks, const attn::MhaForwardOptions& o) {
  attn::KvCache cache;
  REQUIRE(mha.create_cache(x.dim(1), 1, cache).ok());
  std::vector<float> out;
  int t0 = 0;
  for (int n : chunks) {
    attn::MhaResult r;
    const attn::Status st = mha.forward_cached(rows_of(x, t0, n), cache, o, r);
    INFO(golden::describe(st));
    REQUIRE(st.ok());
    out.insert(out.end(), r.output.data.begin(), r.output.data.end());
    t0 += n;
    REQUIRE(cache.length == t0);
  }
  return out;
}

}  // namespace

TEST_CASE("a KV cache fed 1…9 tokens one at a time and in chunks equals the full forward (PyTorch fixture)",
          "[positions][cache]") {
  const Fixture f = load_fixture("modern_mha_cache");
  const attn::MultiHeadAttention mha = modern_mha(f);
  attn::MhaForwardOptions o;
  o.causal = true;
  o.need_weights = false;
  const attn::Tensor& x = f.at("query");
  for (const auto& chunks :
       std::vector<std::vector<int>>{{1, 1, 1, 1, 1, 1, 1, 1, 1}, {4, 1, 4}, {2, 7}, {9}}) {
    require_fixture_close(decode(mha, x, chunks, o), f.at("output"), "cached output");
  }
}

TEST_CASE("a KV cache with ALiBi and a window equals the full forward; refusals leave it unchanged",
          "[positions][cache]") {
  attn::MhaConfig c;
  c.embed_dim = 12;
  c.num_heads = 6;
  c.num_kv_heads = 3;
  c.rope = attn::RotaryOptions{};
  c.rope->style = attn::RotaryStyle::kInterleaved;
  attn::MultiHeadAttention mha;
  REQUIRE(attn::MultiHeadAttention::create(c, mha).ok());
  const attn::Tensor x = testutil::random_tensor({1, 11, 12}, 21);
  attn::MhaForwardOptions o;
  o.causal = true;
  o.positions.window = 4;
  o.positions.alibi_paper = true;
  attn::MhaResult full;
  REQUIRE(mha.forward(x, nullptr, nullptr, o, full).ok());
  testutil::require_close(decode(mha, x, {3, 1, 1, 6}, o), full.output.data, 1e-5, "cached vs full");
  // Overflow: TOO_LARGE, length unchanged, the next call still works.
  attn::KvCache cache;
  REQUIRE(mha.create_cache(5, 1, cache).ok());
  attn::MhaResult r;
  REQUIRE(mha.forward_cached(rows_of(x, 0, 3), cache, o, r).ok());
  REQUIRE(mha.forward_cached(rows_of(x, 3, 3), cache, o, r).code == attn::StatusCode::kTooLarge);
  REQUIRE(cache.length == 3);
  REQUIRE(mha.forward_cached(rows_of(x, 3, 2), cache, o, r).ok());
  REQUIRE(cache.length == 5);
  for (int t = 0; t < 2; ++t)  // the last two rows of the full forward
    for (int e = 0; e < 12; ++e)
      REQUIRE(std::fabs(r.output.data[t * 12 + e] - full.output.data[(3 + t) * 12 + e]) < 1e-5);
  cache.reset();
  REQUIRE(cache.length == 0);
  // A mask, a batch other than the cache's, another module's cache, stale weights.
  attn::BoolTensor mask{{1, 1}, {1}};
  attn::MhaForwardOptions masked = o;
  masked.mask = &mask;
  REQUIRE(mha.forward_cached(rows_of(x, 0, 1), cache, masked, r).code == attn::StatusCode::kInvalidArgument);
  REQUIRE(mha.forward_cached(testutil::random_tensor({2, 1, 12}, 3), cache, o, r).code ==
          attn::StatusCode::kShapeMismatch);
  attn::MhaConfig other = c;
  other.num_kv_heads = 6;
  attn::MultiHeadAttention m2;
  REQUIRE(attn::MultiHeadAttention::create(other, m2).ok());
  REQUIRE(m2.forward_cached(rows_of(x, 0, 1), cache, o, r).code == attn::StatusCode::kInvalidArgument);
  REQUIRE(mha.forward_cached(rows_of(x, 0, 2), cache, o, r).ok());
  attn::Tensor w;
  REQUIRE(mha.get_parameter("out_proj.weight", w).ok());
  REQUIRE(mha.set_parameter("out_proj.weight", w).ok());
  REQUIRE(mha.forward_cached(rows_of(x, 2, 1), cache, o, r).code == attn::StatusCode::kInvalidArgument);
  REQUIRE(cache.length == 2);
}
