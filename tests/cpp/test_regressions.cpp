// What the fuzzers (tests/fuzz) found, kept as tests. Each was a call that returned OK
// with a non-finite result from finite inputs; each is now NON_FINITE naming the step that
// overflowed, and nothing is returned.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "core/attention.h"
#include "core/attention_backward.h"
#include "core/multi_head.h"
#include "model/tiny_transformer.h"
#include "train/trainer.h"

using attn::StatusCode;

namespace {

bool mentions(const attn::Status& s, const char* what) {
  return s.message.find(what) != std::string::npos;
}

}  // namespace

TEST_CASE("fuzz_sdpa: q·k overflowing float32 is NON_FINITE naming the scores, not a NaN output",
          "[regression]") {
  // q = k = 1e30 (finite): q·k = 1e60. Found with need_weights off (the tiled path).
  const attn::Tensor q({1, 1}, {1e30f}), k({1, 1}, {1e30f}), v({1, 1}, {-1.8f});
  for (bool weights : {false, true}) {
    attn::SdpaOptions o;
    o.need_weights = weights;
    attn::SdpaResult r;
    const attn::Status s = attn::scaled_dot_product_attention(q, k, v, o, r);
    INFO(s.message);
    CHECK(s.code == StatusCode::kNonFinite);
    CHECK(mentions(s, "scores q·kᵀ·scale"));
    CHECK(r.output.empty());
  }
  // Ordinary large values still work: the check only fires on an actual overflow.
  const attn::Tensor big({1, 2}, {1e18f, 1e18f});
  attn::SdpaResult r;
  CHECK(attn::scaled_dot_product_attention(big, big, big, {}, r).ok());
}

TEST_CASE("fuzz_sdpa: the backward's overflowing gradients are NON_FINITE", "[regression]") {
  const attn::Tensor q({1, 2}, {1e19f, 1.0f}), k({2, 2}, {1.0f, 0.0f, 0.0f, 1.0f}),
      v({2, 2}, {1e19f, 0.f, 0.f, 1e19f});
  attn::SdpaResult r;
  REQUIRE(attn::scaled_dot_product_attention(q, k, v, {}, r).ok());
  attn::SdpaGrads g;
  const attn::Status s =
      attn::scaled_dot_product_attention_backward(q, k, v, attn::Tensor({1, 2}, {3e38f, 3e38f}), {}, g);
  INFO(s.message);
  CHECK(s.code == StatusCode::kNonFinite);
  CHECK(mentions(s, "attention backward"));
}

TEST_CASE("fuzz_mha: an overflowing projection is NON_FINITE naming it", "[regression]") {
  attn::MhaConfig c;
  c.embed_dim = 2;
  c.num_heads = 1;
  attn::MultiHeadAttention mha;
  REQUIRE(attn::MultiHeadAttention::create(c, mha).ok());
  REQUIRE(mha.set_parameter("in_proj_weight", attn::Tensor({6, 2}, std::vector<float>(12, 3e38f))).ok());
  attn::MhaResult r;
  const attn::Status s = mha.forward(attn::Tensor({1, 2}, {2.0f, 2.0f}), nullptr, nullptr, {}, r);
  INFO(s.message);
  CHECK(s.code == StatusCode::kNonFinite);
  CHECK(mentions(s, "multi-head attention: the projections"));
}

TEST_CASE("fuzz_tiny_train: a gradient norm overflowing float32 refuses the step, weights unchanged",
          "[regression]") {
  attn::TinyConfig c;
  c.vocab_size = 3;
  c.max_length = 2;
  c.d_model = 2;
  c.num_heads = 1;
  c.mlp = false;
  c.norm = attn::NormKind::kNone;
  attn::TinyTransformer m;
  REQUIRE(attn::TinyTransformer::create(c, m).ok());
  // Every gradient finite but up to ~1e30: their squares, summed for the norm, overflow float32.
  std::vector<attn::Tensor> values = m.parameters();
  for (std::size_t i = 0; i < values.size(); ++i)
    if (m.parameter_names()[i] == "tok_emb.weight")
      for (float& x : values[i].data) x = 1e30f;
  REQUIRE(m.set_parameters(values).ok());
  attn::Trainer trainer;
  REQUIRE(attn::Trainer::create(&m, {}, trainer).ok());
  const std::vector<attn::Tensor> before = m.parameters();
  attn::TrainStepResult r;
  const attn::Status s = trainer.step({1, 2, {0, 1}}, {1, 2, {1, 2}}, r);
  INFO(s.message);
  REQUIRE_FALSE(s.ok());
  CHECK(s.code == StatusCode::kNonFinite);
  for (std::size_t i = 0; i < before.size(); ++i) CHECK(m.parameters()[i].data == before[i].data);
}

TEST_CASE("property tests: scores overflowing to −∞ for every key are NON_FINITE, not a zero (masked) row",
          "[regression]") {
  // q·k = −1e60 → −∞ for the only key: it used to look like a fully masked row (zeros, OK).
  const attn::Tensor q({1, 1}, {-1e30f}), k({1, 1}, {1e30f}), v({1, 1}, {2.0f});
  for (bool weights : {false, true}) {
    attn::SdpaOptions o;
    o.need_weights = weights;
    attn::SdpaResult r;
    const attn::Status s = attn::scaled_dot_product_attention(q, k, v, o, r);
    INFO(s.message);
    CHECK(s.code == StatusCode::kNonFinite);
  }
}

TEST_CASE("property tests: keys whose scores overflow to −∞ get weight 0 when others are finite",
          "[regression]") {
  // 150 keys with q·k = −1e40 (→ −∞; weight e^(−1e40) = 0 in float64 too), then 50 ordinary ones:
  // the tiled path sees whole −∞ segments first and must not call the row overflowed.
  const int tk = 200, first = 150;
  std::vector<float> kd(tk), vd(tk);
  for (int j = 0; j < tk; ++j) {
    kd[j] = j < first ? -1e20f : 1e-20f * static_cast<float>(j - first) / 10.0f;
    vd[j] = static_cast<float>(j % 7);
  }
  const attn::Tensor q({1, 1}, {1e20f}), k({tk, 1}, kd), v({tk, 1}, vd);
  double z = 0.0, want = 0.0;  // softmax over the ordinary keys (scale 1 for dk = 1)
  for (int j = first; j < tk; ++j) z += std::exp((j - first) / 10.0);
  for (int j = first; j < tk; ++j) want += std::exp((j - first) / 10.0) / z * vd[j];
  for (bool weights : {false, true}) {
    attn::SdpaOptions o;
    o.need_weights = weights;
    attn::SdpaResult r;
    const attn::Status s = attn::scaled_dot_product_attention(q, k, v, o, r);
    INFO(s.message << " weights=" << weights);
    REQUIRE(s.ok());
    CHECK(std::abs(r.output.data[0] - want) <= 1e-4 * std::abs(want));
  }
}

TEST_CASE("fuzz_tiny_train: finite logits whose loss overflows float32 are NON_FINITE, not an infinite loss",
          "[regression]") {
  attn::TinyConfig c;
  c.vocab_size = 3;
  c.max_length = 2;
  c.d_model = 2;
  c.num_heads = 1;
  c.mlp = false;
  attn::TinyTransformer m;
  REQUIRE(attn::TinyTransformer::create(c, m).ok());
  std::vector<attn::Tensor> values = m.parameters();
  for (std::size_t i = 0; i < values.size(); ++i)
    if (m.parameter_names()[i] == "head.bias") values[i].data = {3e38f, -3e38f, 0.0f};
  REQUIRE(m.set_parameters(values).ok());
  float loss = 0.0f;
  const attn::Status s = m.loss({1, 2, {0, 1}}, {1, 2, {1, 1}}, loss);  // target 1: logsumexp − (−3e38) = ∞
  INFO(s.message);
  CHECK(s.code == StatusCode::kNonFinite);
  CHECK(mentions(s, "loss"));
}
