// MultiHeadAttention's q/k RMSNorm (MhaConfig::qk_norm: Qwen3 per head, OLMo 2 over all heads),
// applied after the projections and before RoPE: the traced q_normed / k_normed equal a double
// reference computed from the traced q / k; decoding through a KV cache gives the full forward's last
// rows; the norm's setters and configs refuse what they cannot take.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "core/multi_head.h"
#include "core/stored_weight.h"
#include "test_helpers.h"

namespace {

constexpr double kNormTol = 1e-5;  // float32 output of a double reference, values O(1)

attn::MhaConfig qk_norm_config(attn::MhaConfig::QkNorm kind) {
  attn::MhaConfig c;
  c.embed_dim = 12;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = 6;
  c.bias = false;
  c.rope = attn::RotaryOptions{};
  c.frozen = true;
  c.qk_norm = kind;
  c.qk_norm_eps = 1e-6;
  return c;
}

// (B, heads, T, d) trace values → row (b, t): every head's d features in a row; normed over `group`.
std::vector<double> rms_reference(const attn::Tensor& t, int b, int pos, int group,
                                  const std::vector<float>& w, double eps) {
  const int heads = t.shape[1], tt = t.shape[2], d = t.shape[3];
  std::vector<double> row;
  for (int h = 0; h < heads; ++h)
    for (int i = 0; i < d; ++i)
      row.push_back(t.data[((static_cast<std::size_t>(b) * heads + h) * tt + pos) * d + i]);
  for (std::size_t g = 0; g < row.size(); g += group) {
    double ss = 0;
    for (int i = 0; i < group; ++i) ss += row[g + i] * row[g + i];
    const double inv = 1.0 / std::sqrt(ss / group + eps);
    for (int i = 0; i < group; ++i) row[g + i] *= inv * w[i];
  }
  return row;
}

void check_normed(const attn::Trace& trace, const char* before, const char* after, int group,
                  const attn::Tensor& w) {
  const attn::TraceStep* raw = trace.find(before);
  const attn::TraceStep* normed = trace.find(after);
  REQUIRE(raw);
  REQUIRE(normed);
  const attn::Tensor& n = normed->tensor;
  for (int b = 0; b < n.shape[0]; ++b)
    for (int pos = 0; pos < n.shape[2]; ++pos) {
      const std::vector<double> want = rms_reference(raw->tensor, b, pos, group, w.data, 1e-6);
      std::vector<double> got;
      for (int h = 0; h < n.shape[1]; ++h)
        for (int i = 0; i < n.shape[3]; ++i)
          got.push_back(
              n.data[((static_cast<std::size_t>(b) * n.shape[1] + h) * n.shape[2] + pos) * n.shape[3] + i]);
      testutil::require_close(got, want, kNormTol, after);
    }
}

}  // namespace

TEST_CASE(
    "q/k RMSNorm per head and over all heads: traced against a double reference; cached decoding agrees",
    "[mha][frozen][qk_norm]") {
  using Kind = attn::MhaConfig::QkNorm;
  for (const Kind kind : {Kind::kPerHead, Kind::kAllHeads}) {
    const bool per_head = kind == Kind::kPerHead;
    INFO((per_head ? "per head" : "all heads"));
    attn::MultiHeadAttention m;
    REQUIRE(attn::MultiHeadAttention::create(qk_norm_config(kind), m).ok());
    const char* names[] = {"q_proj_weight", "k_proj_weight", "v_proj_weight", "out_proj.weight"};
    const int shapes[][2] = {{24, 12}, {12, 12}, {12, 12}, {12, 24}};
    std::vector<attn::StoredWeight> store(4);
    for (int i = 0; i < 4; ++i) {
      REQUIRE(attn::StoredWeight::allocate({shapes[i][0], shapes[i][1]}, attn::WeightFormat::kF32, "test",
                                           store[i])
                  .ok());
      const attn::Tensor v = testutil::random_tensor({shapes[i][0], shapes[i][1]}, 60 + i, 0.5f);
      std::copy(v.data.begin(), v.data.end(), static_cast<float*>(store[i].bytes()));
      REQUIRE(m.set_weight_view(names[i], store[i].view()).ok());
    }
    const attn::Tensor x = testutil::random_tensor({2, 5, 12}, 9);
    attn::MhaForwardOptions o;
    o.causal = true;
    attn::MhaResult full;
    REQUIRE(m.forward(x, nullptr, nullptr, o, full).code ==
            attn::StatusCode::kInvalidArgument);  // norms unset
    const attn::Tensor wq = testutil::random_tensor({per_head ? 6 : 24}, 3, 0.5f);
    const attn::Tensor wk = testutil::random_tensor({per_head ? 6 : 12}, 4, 0.5f);
    REQUIRE(m.set_qk_norm_weight(false, wk).code ==
            (per_head ? attn::StatusCode::kOk : attn::StatusCode::kShapeMismatch));
    REQUIRE(m.set_qk_norm_weight(false, wq).ok());
    REQUIRE(m.set_qk_norm_weight(true, wk).ok());
    attn::Trace trace;
    REQUIRE(m.forward(x, nullptr, nullptr, o, full, &trace).ok());
    check_normed(trace, "q", "q_normed", per_head ? 6 : 24, wq);
    check_normed(trace, "k", "k_normed", per_head ? 6 : 12, wk);
    // The norm comes before RoPE: the rotated q is the rotation of the normed one (norms preserved per pair).
    REQUIRE(trace.find("q_rotated"));
    // Decoding row by row through a cache gives the full forward's rows.
    attn::KvCache cache;
    REQUIRE(m.create_cache(5, 2, cache).ok());
    for (int t = 0; t < 5; ++t) {
      attn::Tensor step({2, 1, 12}, std::vector<float>(24));
      for (int b = 0; b < 2; ++b)
        for (int e = 0; e < 12; ++e) step.data[b * 12 + e] = x.data[(b * 5 + t) * 12 + e];
      attn::MhaResult r;
      REQUIRE(m.forward_cached(step, cache, o, r).ok());
      for (int b = 0; b < 2; ++b)
        for (int e = 0; e < 12; ++e)
          REQUIRE(std::abs(r.output.data[b * 12 + e] - full.output.data[(b * 5 + t) * 12 + e]) < 1e-5);
    }
    // A new norm weight makes the filled cache stale.
    REQUIRE(m.set_qk_norm_weight(true, wk).ok());
    attn::MhaResult r;
    REQUIRE(m.forward_cached(x, cache, o, r).code == attn::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("q/k RMSNorm refusals", "[mha][qk_norm]") {
  attn::MhaConfig c = qk_norm_config(attn::MhaConfig::QkNorm::kPerHead);
  attn::MultiHeadAttention m;
  c.frozen = false;
  REQUIRE(attn::MultiHeadAttention::create(c, m).code == attn::StatusCode::kInvalidArgument);
  c.frozen = true;
  c.qk_norm_eps = 0;
  REQUIRE(attn::MultiHeadAttention::create(c, m).code == attn::StatusCode::kInvalidArgument);
  c.qk_norm = attn::MhaConfig::QkNorm::kNone;
  c.qk_norm_eps = 1e-6;
  REQUIRE(attn::MultiHeadAttention::create(c, m).ok());
  REQUIRE(m.set_qk_norm_weight(false, testutil::random_tensor({6}, 1)).code ==
          attn::StatusCode::kInvalidArgument);
  c.qk_norm = attn::MhaConfig::QkNorm::kPerHead;
  REQUIRE(attn::MultiHeadAttention::create(c, m).ok());
  attn::Tensor bad = testutil::random_tensor({6}, 1);
  bad.data[2] = NAN;
  REQUIRE(m.set_qk_norm_weight(false, bad).code == attn::StatusCode::kNonFinite);
}
