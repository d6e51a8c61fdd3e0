// MultiHeadAttention::backward against central finite differences of the double-precision forward
// in reference_mha_backward.h: every input and every parameter tensor, for each option on its own
// and in combinations, on small odd shapes; plus forward_saving == forward bit for bit and the
// errors (empty MhaSaved, a parameter set after the forward, a bad gradOutput).
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <optional>

#include "core/memory_limit.h"
#include "core/multi_head.h"
#include "finite_diff.h"
#include "reference_mha_backward.h"
#include "test_helpers.h"

namespace {

// |core − finite difference| ≤ kGradAbsTol + kGradRelTol·|fd|: gradients are sums of a few dozen
// float32 products of magnitude ~1 (a few ulps each), the finite differences of the double
// reference are exact to ~1e-8.
constexpr double kGradAbsTol = 5e-5;
constexpr double kGradRelTol = 1e-4;

struct Case {
  attn::MhaConfig config;
  int b = 2, tq = 3, tk = 3;
  bool cross = false;          // a key is given (else self-attention)
  bool separate_value = true;  // with cross: a value is given (else the key serves as value)
  bool batched = true;         // false: (T, E) input, b must be 1
  std::optional<attn::BoolTensor> mask, key_padding_mask;
  std::optional<attn::Tensor> additive_mask, positional;
  bool causal = false;
  std::optional<float> scale;
  attn::DropoutOptions dropout;
};

attn::MhaConfig config(int e, int h) {
  attn::MhaConfig c;
  c.embed_dim = e;
  c.num_heads = h;
  c.seed = 11;
  return c;
}

Case make_case(int e, int h) {
  Case c;
  c.config = config(e, h);
  return c;
}

// Every parameter random (the seeded init has zero biases and unit LayerNorm weights, hiding bugs).
attn::MultiHeadAttention make_module(const attn::MhaConfig& c, std::uint64_t seed) {
  attn::MultiHeadAttention m;
  attn::Status st = attn::MultiHeadAttention::create(c, m);
  INFO(st.message);
  REQUIRE(st.ok());
  for (const std::string& name : m.parameter_names()) {
    attn::Tensor t;
    REQUIRE(m.get_parameter(name, t).ok());
    attn::Tensor r = testutil::random_tensor(t.shape, seed++, 0.5f);
    if (name == "layer_norm.weight")
      for (float& x : r.data) x += 1.0f;
    REQUIRE(m.set_parameter(name, r).ok());
  }
  return m;
}

attn::Shape seq_shape(const Case& c, int t, int width) {
  return c.batched ? attn::Shape{c.b, t, width} : attn::Shape{t, width};
}

attn::MhaForwardOptions options_of(const Case& c) {
  attn::MhaForwardOptions o;
  o.mask = c.mask ? &*c.mask : nullptr;
  o.key_padding_mask = c.key_padding_mask ? &*c.key_padding_mask : nullptr;
  o.additive_mask = c.additive_mask ? &*c.additive_mask : nullptr;
  o.positional = c.positional ? &*c.positional : nullptr;
  o.causal = c.causal;
  o.scale = c.scale;
  o.dropout = c.dropout;
  return o;
}

// The reference's masks read the same memory as the core's: (Tq, Tk) or (B·H, Tq, Tk); (B, Tk).
ref::MhaFullOptions reference_options(const Case& c, const attn::MultiHeadAttention& m, int tk) {
  ref::MhaFullOptions o;
  const int h = c.config.num_heads, tq = c.tq;
  auto at = [h, tq, tk](const attn::Shape& shape, int b, int hi, int i, int j) {
    const std::size_t lead = shape.size() == 3 ? static_cast<std::size_t>(b * h + hi) : 0;
    return (lead * tq + i) * tk + j;
  };
  if (c.mask || c.key_padding_mask) {
    o.allowed = [&c, at, tk](int b, int hi, int i, int j) {
      const bool by_mask = !c.mask || c.mask->data[at(c.mask->shape, b, hi, i, j)] != 0;
      return by_mask && (!c.key_padding_mask || c.key_padding_mask->data[b * tk + j] != 0);
    };
  }
  if (c.additive_mask) {
    o.additive = [&c, at](int b, int hi, int i, int j) {
      return static_cast<double>(c.additive_mask->data[at(c.additive_mask->shape, b, hi, i, j)]);
    };
  }
  o.causal = c.causal;
  o.scale = c.scale ? *c.scale : 1.0 / std::sqrt(static_cast<double>(m.head_dim()));
  o.dropout_p = c.dropout.p;
  o.dropout_seed = c.dropout.seed;
  o.positional = c.positional ? &c.positional->data : nullptr;
  return o;
}

void require_grad_close(const std::vector<float>& got, const std::vector<double>& want,
                        const std::string& what) {
  REQUIRE(got.size() == want.size());
  double worst = 0.0;
  std::size_t worst_at = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double excess = std::fabs(got[i] - want[i]) - kGradRelTol * std::fabs(want[i]);
    if (!(excess <= worst)) {
      worst = excess;
      worst_at = i;
    }
  }
  INFO(what << ": worst element " << worst_at << " core " << got[worst_at] << " finite difference "
            << want[worst_at] << " (tolerance " << kGradAbsTol << " + " << kGradRelTol << "·|fd|)");
  REQUIRE(worst <= kGradAbsTol);
}

// Runs forward_saving and backward on random inputs and checks every gradient by finite differences.
void check_case(const Case& c, std::uint64_t seed) {
  const attn::MultiHeadAttention m = make_module(c.config, seed);
  const int e = c.config.embed_dim, kdim = c.config.kdim ? c.config.kdim : e;
  const int vdim = c.config.vdim ? c.config.vdim : e;
  const attn::Tensor query = testutil::random_tensor(seq_shape(c, c.tq, e), seed + 100);
  const attn::Tensor key = testutil::random_tensor(seq_shape(c, c.tk, kdim), seed + 101);
  const attn::Tensor value = testutil::random_tensor(seq_shape(c, c.tk, vdim), seed + 102);
  const attn::Tensor* key_arg = c.cross ? &key : nullptr;
  const attn::Tensor* value_arg = c.cross && c.separate_value ? &value : nullptr;
  const attn::MhaForwardOptions options = options_of(c);
  attn::MhaResult plain, saving;
  attn::MhaSaved saved;
  REQUIRE(m.forward(query, key_arg, value_arg, options, plain).ok());
  attn::Status st = m.forward_saving(query, key_arg, value_arg, options, saving, saved);
  INFO(st.message);
  REQUIRE(st.ok());
  REQUIRE(saving.output.data == plain.output.data);  // bit for bit
  const attn::Tensor g = testutil::random_tensor(plain.output.shape, seed + 103);
  attn::MhaGrads grads;
  st = m.backward(saved, g, grads);
  INFO(st.message);
  REQUIRE(st.ok());
  REQUIRE(grads.query.shape == query.shape);
  REQUIRE(grads.key.shape == (c.cross ? key.shape : attn::Shape{}));
  REQUIRE(grads.value.shape == (c.cross && c.separate_value ? value.shape : attn::Shape{}));
  // The reference, all in double; finite differences perturb these vectors in place.
  const ref::MhaFullConfig rc{e,
                              c.config.num_heads,
                              m.head_dim(),
                              m.value_head_dim(),
                              kdim,
                              vdim,
                              c.config.add_bias_kv,
                              c.config.add_zero_attn,
                              c.config.residual,
                              c.config.layer_norm,
                              static_cast<double>(c.config.layer_norm_eps)};
  ref::MhaFullInputs in{c.b, c.tq, c.tk, fd::to_double(query.data), {}, {}};
  if (c.cross) in.key = fd::to_double(key.data);
  if (c.cross && c.separate_value) in.value = fd::to_double(value.data);
  ref::MhaParams params;
  const std::vector<std::string> names = m.parameter_names();
  REQUIRE(grads.params.size() == names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    attn::Tensor t;
    REQUIRE(m.get_parameter(names[i], t).ok());
    REQUIRE(grads.params[i].first == names[i]);
    REQUIRE(grads.params[i].second.shape == t.shape);
    params[names[i]] = fd::to_double(t.data);
  }
  const ref::MhaFullOptions ro = reference_options(c, m, c.cross ? c.tk : c.tq);
  const auto loss = [&] { return ref::mha_full_loss(rc, params, in, ro, g.data); };
  require_grad_close(grads.query.data, fd::gradient(in.query, loss), "grad query");
  if (c.cross) require_grad_close(grads.key.data, fd::gradient(in.key, loss), "grad key");
  if (c.cross && c.separate_value)
    require_grad_close(grads.value.data, fd::gradient(in.value, loss), "grad value");
  for (const auto& [name, grad] : grads.params) {
    require_grad_close(grad.data, fd::gradient(params[name], loss), "grad " + name);
  }
}

attn::BoolTensor random_mask(attn::Shape shape, std::uint64_t seed, int tk) {
  attn::BoolTensor mask{shape, {}};
  const std::int64_t n = attn::shape_numel(shape);
  for (std::int64_t i = 0; i < n; ++i) mask.data.push_back(attn::uniform01(seed, i) < 0.7f || i % tk == 0);
  return mask;
}

}  // namespace

TEST_CASE("MHA backward: self-attention, 2 and 3 heads, odd lengths", "[mha-backward]") {
  for (auto [h, t] : {std::pair{2, 3}, std::pair{3, 5}}) {
    Case c = make_case(6, h);
    c.tq = c.tk = t;
    check_case(c, 10 + h);
  }
}

TEST_CASE("MHA backward: cross-attention, kdim/vdim, value == key", "[mha-backward][cross]") {
  Case c = make_case(6, 2);
  c.cross = true;
  c.tq = 3;
  c.tk = 5;
  check_case(c, 20);  // kdim = vdim = E: in_proj_weight
  c.config.kdim = 5;
  c.config.vdim = 7;
  check_case(c, 21);  // q_proj_weight, k_proj_weight, v_proj_weight
  c.separate_value = false;
  c.config.vdim = 5;
  check_case(c, 22);  // the key serves as both: its gradient sums both paths
  c.config.kdim = c.config.vdim = 0;
  check_case(c, 23);
}

TEST_CASE("MHA backward: headDim / valueHeadDim, no bias", "[mha-backward][dims]") {
  Case c = make_case(6, 3);
  c.config.head_dim = 3;
  c.config.value_head_dim = 5;
  c.tq = c.tk = 4;
  check_case(c, 30);
  c.config.bias = false;
  check_case(c, 31);
  c.cross = true;
  c.tk = 5;
  c.config.kdim = 3;
  check_case(c, 32);
}

TEST_CASE("MHA backward: add_bias_kv, add_zero_attn", "[mha-backward][extra-keys]") {
  Case c = make_case(6, 2);
  c.config.add_bias_kv = true;
  check_case(c, 40);
  c.config.add_bias_kv = false;
  c.config.add_zero_attn = true;
  check_case(c, 41);
  c.config.add_bias_kv = true;
  c.cross = true;
  c.tk = 4;
  check_case(c, 42);
}

TEST_CASE("MHA backward: key padding, 2-D and per-head bool and additive masks, causal",
          "[mha-backward][masks]") {
  Case c = make_case(6, 2);
  c.cross = true;
  c.tq = 3;
  c.tk = 5;
  c.key_padding_mask = attn::BoolTensor{{2, 5}, {1, 1, 0, 1, 0, 1, 0, 1, 1, 1}};
  check_case(c, 50);
  c.key_padding_mask.reset();
  c.mask = random_mask({3, 5}, 51, 5);
  check_case(c, 51);
  c.mask = random_mask({4, 3, 5}, 52, 5);  // (B·H, Tq, Tk)
  check_case(c, 52);
  c.mask.reset();
  c.additive_mask = testutil::random_tensor({3, 5}, 53);
  c.additive_mask->data[4] = -std::numeric_limits<float>::infinity();
  check_case(c, 53);
  c.additive_mask = testutil::random_tensor({4, 3, 5}, 54);
  c.additive_mask->data[7] = -std::numeric_limits<float>::infinity();
  check_case(c, 54);
  c.additive_mask.reset();
  c.causal = true;
  check_case(c, 55);
}

TEST_CASE("MHA backward: residual, LayerNorm", "[mha-backward][output]") {
  Case c = make_case(6, 3);
  c.tq = c.tk = 5;
  c.config.residual = true;
  check_case(c, 60);
  c.config.residual = false;
  c.config.layer_norm = true;
  check_case(c, 61);
  c.config.residual = true;
  check_case(c, 62);
}

TEST_CASE("MHA backward: positional in self- and cross-attention", "[mha-backward][positional]") {
  Case c = make_case(6, 2);
  c.tq = c.tk = 3;
  c.positional = testutil::random_tensor({5, 6}, 70);  // T ≥ Tq
  check_case(c, 70);                                   // keys and values come from x too
  c.cross = true;
  c.tk = 4;
  check_case(c, 71);  // the memory is taken as encoded
}

TEST_CASE("MHA backward: dropout (replayed), unbatched input, custom scale", "[mha-backward][misc]") {
  Case c = make_case(6, 2);
  c.tq = c.tk = 5;
  c.dropout = {0.3f, 77};
  check_case(c, 80);
  c.dropout = {};
  c.batched = false;
  c.b = 1;
  check_case(c, 81);
  c.cross = true;
  c.tk = 3;
  check_case(c, 82);
  c.batched = true;
  c.b = 2;
  c.scale = 0.37f;
  check_case(c, 83);
}

TEST_CASE("MHA backward: everything at once", "[mha-backward][combined]") {
  Case c = make_case(6, 3);
  c.config.add_bias_kv = c.config.add_zero_attn = c.config.residual = c.config.layer_norm = true;
  c.tq = c.tk = 4;
  c.positional = testutil::random_tensor({4, 6}, 90);
  c.mask = random_mask({6, 4, 4}, 91, 4);
  c.key_padding_mask = attn::BoolTensor{{2, 4}, {1, 0, 1, 1, 1, 1, 1, 0}};
  c.causal = true;
  c.dropout = {0.2f, 92};
  check_case(c, 90);  // self-attention
  Case x = make_case(6, 2);
  x.config.kdim = 5;
  x.config.vdim = 3;
  x.config.head_dim = 2;
  x.config.value_head_dim = 3;
  x.config.add_bias_kv = x.config.layer_norm = x.config.residual = true;
  x.cross = true;
  x.tq = 5;
  x.tk = 3;
  x.positional = testutil::random_tensor({5, 6}, 93);
  x.additive_mask = testutil::random_tensor({5, 3}, 94);
  x.key_padding_mask = attn::BoolTensor{{2, 3}, {1, 1, 0, 0, 1, 1}};
  x.scale = 0.6f;
  x.dropout = {0.25f, 95};
  check_case(x, 95);  // cross-attention
}

TEST_CASE("MHA backward: errors (empty saved, stale parameters, bad gradOutput)", "[mha-backward][errors]") {
  attn::MultiHeadAttention m = make_module(config(6, 2), 1);
  const attn::Tensor query = testutil::random_tensor({2, 3, 6}, 2);
  attn::MhaResult result;
  attn::MhaGrads grads;
  attn::MhaSaved empty;
  const attn::Tensor g = testutil::random_tensor({2, 3, 6}, 3);
  attn::Status st = m.backward(empty, g, grads);
  CHECK(st.code == attn::StatusCode::kInvalidArgument);
  attn::MhaSaved saved;
  REQUIRE(m.forward_saving(query, nullptr, nullptr, {}, result, saved).ok());
  REQUIRE(m.backward(saved, g, grads).ok());
  attn::MhaSaved moved = std::move(saved);  // callers hold and move it
  REQUIRE(m.backward(moved, g, grads).ok());
  st = m.backward(moved, testutil::random_tensor({2, 3, 5}, 4), grads);
  CHECK(st.code == attn::StatusCode::kShapeMismatch);
  CHECK(st.message.find("gradOutput") != std::string::npos);
  st = m.backward(moved, testutil::random_tensor({3, 6}, 4), grads);
  CHECK(st.code == attn::StatusCode::kShapeMismatch);
  attn::Tensor nan = g;
  nan.data[5] = std::numeric_limits<float>::quiet_NaN();
  CHECK(m.backward(moved, nan, grads).code == attn::StatusCode::kNonFinite);
  // A failed set_parameter changes nothing, so the saved forward stays valid; a successful one does not.
  CHECK_FALSE(m.set_parameter("out_proj.bias", testutil::random_tensor({5}, 5)).ok());
  REQUIRE(m.backward(moved, g, grads).ok());
  REQUIRE(m.set_parameter("out_proj.bias", testutil::random_tensor({6}, 5)).ok());
  st = m.backward(moved, g, grads);
  CHECK(st.code == attn::StatusCode::kInvalidArgument);
  CHECK(st.message.find("forward_saving") != std::string::npos);
  // Another module's MhaSaved is refused too, even with the same configuration.
  const attn::MultiHeadAttention other = make_module(config(6, 2), 1);
  REQUIRE(m.forward_saving(query, nullptr, nullptr, {}, result, saved).ok());
  CHECK(other.backward(saved, g, grads).code == attn::StatusCode::kInvalidArgument);
  // The memory limit covers what backward allocates, checked before allocating.
  REQUIRE(m.forward_saving(query, nullptr, nullptr, {}, result, saved).ok());
  attn::set_memory_limit_bytes(1024);
  st = m.backward(saved, g, grads);
  attn::set_memory_limit_bytes(attn::kDefaultMemoryLimitBytes);
  CHECK(st.code == attn::StatusCode::kTooLarge);
  REQUIRE(m.backward(saved, g, grads).ok());
  // A forward_saving that fails validation empties the MhaSaved it was given.
  CHECK_FALSE(
      m.forward_saving(testutil::random_tensor({2, 3, 5}, 6), nullptr, nullptr, {}, result, saved).ok());
  CHECK(saved.empty());
  CHECK(m.backward(saved, g, grads).code == attn::StatusCode::kInvalidArgument);
}
