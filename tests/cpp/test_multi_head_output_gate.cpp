// MultiHeadAttention's output gate (MhaConfig::output_gate, Qwen3.5's full layers): the context z ×
// σ(W_g x) before the output projection. Against the same module without the gate and an identity
// output projection (its output is z), the gated output is z ⊙ σ(x W_gᵀ) computed in double;
// decoding through a KV cache gives the full forward's rows; what it cannot take is refused; its
// backward (frozen) against central differences.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "core/multi_head.h"
#include "core/stored_weight.h"
#include "test_helpers.h"

namespace {

constexpr double kGateTol = 1e-5;  // float32 outputs of O(1) against a double reference

attn::MhaConfig gate_config(bool gate) {
  attn::MhaConfig c;
  c.embed_dim = 12;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = 3;
  c.bias = false;
  c.frozen = true;
  c.output_gate = gate;
  return c;
}

// q, k, v, o (identity: the output is z) and the gate's weights, as stored checkpoint matrices.
struct Weights {
  std::vector<attn::StoredWeight> store = std::vector<attn::StoredWeight>(5);
  Weights() {
    const int shapes[][2] = {{12, 12}, {6, 12}, {6, 12}, {12, 12}, {12, 12}};
    for (int i = 0; i < 5; ++i) {
      REQUIRE(attn::StoredWeight::allocate({shapes[i][0], shapes[i][1]}, attn::WeightFormat::kF32, "test",
                                           store[i])
                  .ok());
      attn::Tensor v = testutil::random_tensor({shapes[i][0], shapes[i][1]}, 70 + i, 0.6f);
      if (i == 3)
        for (int r = 0; r < 12; ++r)
          for (int c = 0; c < 12; ++c) v.data[r * 12 + c] = r == c ? 1.0f : 0.0f;
      std::copy(v.data.begin(), v.data.end(), static_cast<float*>(store[i].bytes()));
    }
  }
  void set(attn::MultiHeadAttention& m, bool gate) const {
    const char* names[] = {"q_proj_weight", "k_proj_weight", "v_proj_weight", "out_proj.weight"};
    for (int i = 0; i < 4; ++i) REQUIRE(m.set_weight_view(names[i], store[i].view()).ok());
    if (gate) REQUIRE(m.set_weight_view("gate_proj_weight", store[4].view()).ok());
  }
};

}  // namespace

TEST_CASE("output gate: z × σ(W_g x) against a double reference; cached decoding agrees", "[mha][frozen]") {
  const Weights w;
  attn::MultiHeadAttention plain, gated;
  REQUIRE(attn::MultiHeadAttention::create(gate_config(false), plain).ok());
  REQUIRE(attn::MultiHeadAttention::create(gate_config(true), gated).ok());
  w.set(plain, false);
  const attn::Tensor x = testutil::random_tensor({2, 5, 12}, 11);
  attn::MhaForwardOptions o;
  o.causal = true;
  attn::MhaResult z, out;
  REQUIRE(gated.forward(x, nullptr, nullptr, o, out).code == attn::StatusCode::kInvalidArgument);  // unset
  w.set(gated, true);
  REQUIRE(plain.forward(x, nullptr, nullptr, o, z).ok());
  attn::Trace trace;
  REQUIRE(gated.forward(x, nullptr, nullptr, o, out, &trace).ok());
  REQUIRE(trace.find("gate"));
  const float* g = static_cast<const float*>(w.store[4].bytes());
  std::vector<double> want;
  for (int r = 0; r < 10; ++r)
    for (int f = 0; f < 12; ++f) {
      double pre = 0;
      for (int e = 0; e < 12; ++e) pre += static_cast<double>(g[f * 12 + e]) * x.data[r * 12 + e];
      want.push_back(z.output.data[r * 12 + f] / (1 + std::exp(-pre)));
    }
  testutil::require_close(out.output.data, want, kGateTol, "gated output");
  attn::KvCache cache;
  REQUIRE(gated.create_cache(5, 2, cache).ok());
  for (int t = 0; t < 5; ++t) {
    attn::Tensor step({2, 1, 12}, std::vector<float>(24));
    for (int b = 0; b < 2; ++b)
      for (int e = 0; e < 12; ++e) step.data[b * 12 + e] = x.data[(b * 5 + t) * 12 + e];
    attn::MhaResult r;
    REQUIRE(gated.forward_cached(step, cache, o, r).ok());
    for (int b = 0; b < 2; ++b)
      for (int e = 0; e < 12; ++e)
        REQUIRE(std::abs(r.output.data[b * 12 + e] - out.output.data[(b * 5 + t) * 12 + e]) < kGateTol);
  }
}

TEST_CASE(
    "output gate: refusals (a trainable module, a wrong shape); the backward against finite differences",
    "[mha][frozen]") {
  attn::MhaConfig c = gate_config(true);
  attn::MultiHeadAttention trainable, m;
  c.frozen = false;
  REQUIRE(attn::MultiHeadAttention::create(c, trainable).code == attn::StatusCode::kInvalidArgument);
  const attn::Status made = attn::MultiHeadAttention::create(gate_config(true), m);
  INFO(made.message);
  REQUIRE(made.ok());
  const Weights w;
  REQUIRE(m.set_weight_view("gate_proj_weight", w.store[1].view()).code == attn::StatusCode::kShapeMismatch);
  attn::MultiHeadAttention plain;
  REQUIRE(attn::MultiHeadAttention::create(gate_config(false), plain).ok());
  REQUIRE(plain.set_weight_view("gate_proj_weight", w.store[4].view()).code ==
          attn::StatusCode::kUnknownParameter);
  w.set(m, true);
  const attn::Tensor x = testutil::random_tensor({1, 3, 12}, 5);
  attn::MhaForwardOptions o;
  o.causal = true;
  // the backward: the input gradient against central differences of Σ dy · output(x) (float32
  // forward, step kFdStep: rounding ≈ 1e-7 / kFdStep stays inside kFdTol)
  constexpr float kFdStep = 1e-2f;
  constexpr double kFdTol = 2e-3;
  attn::MhaResult r;
  attn::MhaSaved saved;
  REQUIRE(m.forward_saving(x, nullptr, nullptr, o, r, saved).ok());
  const attn::Tensor dy = testutil::random_tensor({1, 3, 12}, 6);
  attn::MhaGrads grads;
  attn::MhaBackwardOptions bo;
  bo.parameters = false;
  REQUIRE(m.backward(saved, dy, grads, bo).ok());
  const auto metric = [&](const attn::Tensor& at) {
    attn::MhaResult out;
    REQUIRE(m.forward(at, nullptr, nullptr, o, out).ok());
    double s = 0;
    for (std::size_t i = 0; i < out.output.data.size(); ++i)
      s += static_cast<double>(dy.data[i]) * out.output.data[i];
    return s;
  };
  for (std::size_t i = 0; i < x.data.size(); ++i) {
    attn::Tensor up = x, down = x;
    up.data[i] += kFdStep;
    down.data[i] -= kFdStep;
    const double fd = (metric(up) - metric(down)) / (2.0 * kFdStep);
    INFO("x[" << i << "]: backward " << grads.query.data[i] << ", finite difference " << fd);
    REQUIRE(std::abs(fd - grads.query.data[i]) <= kFdTol * std::max(1.0, std::abs(fd)));
  }
}
