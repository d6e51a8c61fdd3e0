// MultiHeadAttention against the naive double reference (reference_mha.h), its trace, the extra
// keys, the weight layouts, and the seeded initialisation.
#include <catch2/catch.hpp>
#include <cmath>

#include "core/multi_head.h"
#include "core/positional.h"
#include "reference_mha.h"
#include "test_helpers.h"

namespace {

constexpr double kMhaTol = 1e-5;  // three float32 products of width ≤ 64 on values ~1

attn::MultiHeadAttention make(attn::MhaConfig config) {
  attn::MultiHeadAttention m;
  const attn::Status st = attn::MultiHeadAttention::create(config, m);
  INFO(st.message);
  REQUIRE(st.ok());
  return m;
}

// Random biases (the seeded init makes them zero, which would hide bias bugs).
void randomise_biases(attn::MultiHeadAttention& m, std::uint64_t seed) {
  for (const std::string name : {"in_proj_bias", "out_proj.bias"}) {
    attn::Tensor t;
    if (!m.get_parameter(name, t).ok()) continue;
    REQUIRE(m.set_parameter(name, testutil::random_tensor(t.shape, seed++)).ok());
  }
}

ref::MhaWeights weights_of(const attn::MultiHeadAttention& m) {
  const attn::MhaConfig& c = m.config();
  ref::MhaWeights w{c.embed_dim,
                    c.num_heads,
                    m.head_dim(),
                    m.value_head_dim(),
                    c.kdim ? c.kdim : c.embed_dim,
                    c.vdim ? c.vdim : c.embed_dim,
                    {},
                    {},
                    {},
                    {},
                    {},
                    {},
                    {},
                    {}};
  attn::Tensor t;
  REQUIRE(m.get_parameter("q_proj_weight", t).ok());
  w.wq = t.data;
  REQUIRE(m.get_parameter("k_proj_weight", t).ok());
  w.wk = t.data;
  REQUIRE(m.get_parameter("v_proj_weight", t).ok());
  w.wv = t.data;
  REQUIRE(m.get_parameter("out_proj.weight", t).ok());
  w.wo = t.data;
  if (c.bias) {
    REQUIRE(m.get_parameter("in_proj_bias", t).ok());
    const int qk = w.h * w.dk;
    w.bq.assign(t.data.begin(), t.data.begin() + qk);
    w.bk.assign(t.data.begin() + qk, t.data.begin() + 2 * qk);
    w.bv.assign(t.data.begin() + 2 * qk, t.data.end());
    REQUIRE(m.get_parameter("out_proj.bias", t).ok());
    w.bo = t.data;
  }
  return w;
}

struct MhaCase {
  int e, h, head_dim, value_head_dim, kdim, vdim, b, tq, tk;
  bool bias;
};

}  // namespace

TEST_CASE("MHA matches the double reference on odd shapes, head dims, kdim/vdim", "[mha]") {
  const MhaCase cases[] = {
      {1, 1, 0, 0, 0, 0, 1, 1, 1, true},  {5, 1, 0, 0, 0, 0, 2, 3, 3, true},
      {6, 3, 0, 0, 0, 0, 1, 9, 9, false}, {4, 2, 3, 2, 0, 0, 2, 4, 4, true},
      {8, 8, 0, 0, 3, 7, 2, 5, 9, true},  {9, 3, 5, 1, 2, 9, 1, 1, 6, true},
      {64, 4, 0, 0, 0, 0, 2, 9, 9, true},
  };
  for (const MhaCase& c : cases) {
    attn::MhaConfig config;
    config.embed_dim = c.e;
    config.num_heads = c.h;
    config.head_dim = c.head_dim;
    config.value_head_dim = c.value_head_dim;
    config.kdim = c.kdim;
    config.vdim = c.vdim;
    config.bias = c.bias;
    config.seed = 7;
    attn::MultiHeadAttention m = make(config);
    randomise_biases(m, 50);
    const bool self = c.kdim == 0 && c.vdim == 0 && c.tq == c.tk;
    const attn::Tensor query = testutil::random_tensor({c.b, c.tq, c.e}, 1);
    const attn::Tensor key = testutil::random_tensor({c.b, c.tk, c.kdim ? c.kdim : c.e}, 2);
    const attn::Tensor value = testutil::random_tensor({c.b, c.tk, c.vdim ? c.vdim : c.e}, 3);
    attn::MhaForwardOptions options;
    options.average_weights = false;
    attn::MhaResult r;
    REQUIRE(m.forward(query, self ? nullptr : &key, self ? nullptr : &value, options, r).ok());
    std::vector<double> out, weights;
    ref::mha(weights_of(m), query.data, self ? query.data : key.data, self ? query.data : value.data, c.b,
             c.tq, c.tk, nullptr, out, weights);
    CAPTURE(c.e, c.h, c.head_dim, c.value_head_dim, c.kdim, c.vdim);
    testutil::require_close(r.output.data, out, kMhaTol, "output");
    testutil::require_close(r.weights.data, weights, kMhaTol, "weights");
    CHECK(r.weights.shape == attn::Shape{c.b, c.h, c.tq, c.tk});
  }
}

TEST_CASE("MHA trace: step names in order, shapes, and traced output == fast output", "[mha][trace]") {
  attn::MhaConfig config;
  config.embed_dim = 12;
  config.num_heads = 3;
  config.residual = true;
  config.layer_norm = true;
  config.seed = 3;
  const attn::MultiHeadAttention m = make(config);
  attn::Tensor pe;
  REQUIRE(attn::sinusoidal_encoding(8, 12, 10000.0, pe).ok());
  const attn::Tensor x = testutil::random_tensor({2, 5, 12}, 9);
  attn::MhaForwardOptions options;
  options.positional = &pe;
  options.causal = true;
  options.dropout = {0.2f, 5};
  attn::MhaResult fast, traced;
  attn::Trace trace;
  REQUIRE(m.forward(x, nullptr, nullptr, options, fast).ok());
  REQUIRE(m.forward(x, nullptr, nullptr, options, traced, &trace).ok());
  CHECK(fast.output.data == traced.output.data);  // bit-identical
  CHECK(fast.weights.data == traced.weights.data);
  std::vector<std::string> names;
  for (const auto& s : trace.steps()) names.push_back(s.name);
  CHECK(names == std::vector<std::string>{"input", "positional", "x", "q", "k", "v", "scores", "scaled",
                                          "masked", "weights", "dropped", "context", "concat", "output",
                                          "residual", "normalized"});
  CHECK(trace.find("q")->tensor.shape == attn::Shape{2, 3, 5, 4});
  CHECK(trace.find("q")->axes == std::vector<std::string>{"B", "H", "T_q", "d_k"});
  CHECK(trace.find("concat")->tensor.shape == attn::Shape{2, 5, 12});
  CHECK(trace.find("normalized")->tensor.data == fast.output.data);
  // x = input + PE (row 0 of position 1 of batch 1).
  CHECK(trace.find("x")->tensor.data[12 * 6] == x.data[12 * 6] + pe.data[12]);
}

TEST_CASE("MHA without masks: fast output (rows four at a time) == traced output, bit for bit",
          "[mha][trace]") {
  // No mask: the fast path's softmax takes four short rows at once (scale_softmax_rows), the trace
  // runs scale_vec -> mask_row -> softmax_row per row. T = 16 is the demo; T = 7 leaves 3 rows over.
  for (int t : {16, 7}) {
    attn::MhaConfig config;
    config.embed_dim = 64;
    config.num_heads = 4;
    config.seed = 11;
    const attn::MultiHeadAttention m = make(config);
    const attn::Tensor x = testutil::random_tensor({1, t, 64}, 12 + t);
    for (bool need_weights : {false, true}) {
      CAPTURE(t, need_weights);
      attn::MhaForwardOptions options;
      options.need_weights = need_weights;
      attn::MhaResult fast, traced;
      attn::Trace trace;
      REQUIRE(m.forward(x, nullptr, nullptr, options, fast).ok());
      REQUIRE(m.forward(x, nullptr, nullptr, options, traced, &trace).ok());
      CHECK(fast.output.data == traced.output.data);
      CHECK(fast.weights.data == traced.weights.data);
    }
  }
}

TEST_CASE("setting a weight after a forward changes the next forward (the packed copies follow)",
          "[mha][params]") {
  attn::MhaConfig config;
  config.embed_dim = 12;
  config.num_heads = 3;
  config.kdim = 5;  // separate q/k/v_proj_weight
  attn::MultiHeadAttention m = make(config);
  const attn::Tensor q = testutil::random_tensor({2, 4, 12}, 21), kv = testutil::random_tensor({2, 6, 5}, 22);
  const attn::Tensor v = testutil::random_tensor({2, 6, 12}, 23);
  attn::MhaForwardOptions options;
  options.average_weights = false;
  int seed = 30;
  for (const char* name :
       {"", "in_proj_bias", "q_proj_weight", "k_proj_weight", "v_proj_weight", "out_proj.weight"}) {
    CAPTURE(name);
    attn::Tensor current;
    if (*name) {
      REQUIRE(m.get_parameter(name, current).ok());
      REQUIRE(m.set_parameter(name, testutil::random_tensor(current.shape, seed++)).ok());
    }
    attn::MhaResult r;
    REQUIRE(m.forward(q, &kv, &v, options, r).ok());
    std::vector<double> out, weights;
    ref::mha(weights_of(m), q.data, kv.data, v.data, 2, 4, 6, nullptr, out, weights);
    testutil::require_close(r.output.data, out, kMhaTol, "output");
  }
}

TEST_CASE("the 512-dim, 8-head shape of the tutorials runs", "[mha]") {
  attn::MhaConfig config;
  config.embed_dim = 512;
  config.num_heads = 8;
  const attn::MultiHeadAttention m = make(config);
  CHECK(m.head_dim() == 64);
  attn::MhaResult r;
  REQUIRE(m.forward(testutil::random_tensor({2, 10, 512}, 4), nullptr, nullptr, {}, r).ok());
  CHECK(r.output.shape == attn::Shape{2, 10, 512});
  CHECK(r.weights.shape == attn::Shape{2, 10, 10});
  CHECK(testutil::all_finite(r.output.data));
}

TEST_CASE("extra keys (add_bias_kv, add_zero_attn) are never masked", "[mha][mask]") {
  attn::MhaConfig config;
  config.embed_dim = 4;
  config.num_heads = 2;
  config.add_bias_kv = true;
  config.add_zero_attn = true;
  config.seed = 11;
  const attn::MultiHeadAttention m = make(config);
  attn::MhaForwardOptions options;
  options.causal = true;
  attn::BoolTensor padding{{1, 3}, {1, 1, 0}};
  options.key_padding_mask = &padding;
  attn::MhaResult r;
  REQUIRE(m.forward(testutil::random_tensor({1, 3, 4}, 1), nullptr, nullptr, options, r).ok());
  REQUIRE(r.weights.shape == attn::Shape{1, 3, 5});
  // Row 0: keys 1, 2 masked (causal; 2 also padded); key 0 and the two extras attend.
  CHECK(r.weights.data[1] == 0.0f);
  CHECK(r.weights.data[2] == 0.0f);
  CHECK(r.weights.data[3] > 0.0f);
  CHECK(r.weights.data[4] > 0.0f);
  double sum = 0;
  for (int j = 0; j < 5; ++j) sum += r.weights.data[j];
  CHECK(sum == Approx(1.0).epsilon(1e-6));
}

TEST_CASE("averaged weights are the mean of the per-head weights", "[mha]") {
  attn::MhaConfig config;
  config.embed_dim = 8;
  config.num_heads = 4;
  const attn::MultiHeadAttention m = make(config);
  const attn::Tensor x = testutil::random_tensor({2, 3, 8}, 5);
  attn::MhaForwardOptions options;
  attn::MhaResult avg, heads;
  REQUIRE(m.forward(x, nullptr, nullptr, options, avg).ok());
  options.average_weights = false;
  REQUIRE(m.forward(x, nullptr, nullptr, options, heads).ok());
  std::vector<double> mean(2 * 9, 0.0);
  for (int b = 0; b < 2; ++b)
    for (int h = 0; h < 4; ++h)
      for (int e = 0; e < 9; ++e) mean[b * 9 + e] += heads.weights.data[(b * 4 + h) * 9 + e] / 4.0;
  testutil::require_close(avg.weights.data, mean, 1e-7, "head average");
}

TEST_CASE("packed in_proj_weight and the three q/k/v_proj_weight are the same parameters", "[mha][params]") {
  attn::MhaConfig config;
  config.embed_dim = 4;
  config.num_heads = 2;
  attn::MultiHeadAttention m = make(config);
  const attn::Tensor packed = testutil::random_tensor({12, 4}, 8);
  REQUIRE(m.set_parameter("in_proj_weight", packed).ok());
  attn::Tensor k;
  REQUIRE(m.get_parameter("k_proj_weight", k).ok());
  CHECK(k.data == std::vector<float>(packed.data.begin() + 16, packed.data.begin() + 32));
  REQUIRE(m.set_parameter("v_proj_weight", testutil::random_tensor({4, 4}, 9)).ok());
  attn::Tensor back;
  REQUIRE(m.get_parameter("in_proj_weight", back).ok());
  CHECK(std::vector<float>(back.data.begin(), back.data.begin() + 32) ==
        std::vector<float>(packed.data.begin(), packed.data.begin() + 32));
  CHECK(m.parameter_names() ==
        std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"});
}

TEST_CASE("seeded initialisation is deterministic and uses the portable RNG", "[mha][rng]") {
  // Values of uniform01 computed independently (Python, SplitMix64) — the same on every platform.
  CHECK(attn::uniform01(0, 0) == 10946269.0f / 16777216.0f);
  CHECK(attn::uniform01(42, 7) == 1443373.0f / 16777216.0f);
  CHECK(attn::uniform01(123456789, 1000) == 2245422.0f / 16777216.0f);
  attn::MhaConfig config;
  config.embed_dim = 16;
  config.num_heads = 4;
  config.seed = 2024;
  attn::Tensor a, b, c;
  REQUIRE(make(config).get_parameter("in_proj_weight", a).ok());
  REQUIRE(make(config).get_parameter("in_proj_weight", b).ok());
  config.seed = 2025;
  REQUIRE(make(config).get_parameter("in_proj_weight", c).ok());
  CHECK(a.data == b.data);
  CHECK(a.data != c.data);
  const float bound = std::sqrt(6.0f / (16 + 48));  // xavier-uniform over the packed (48, 16)
  for (float w : a.data) CHECK(std::fabs(w) <= bound);
}
