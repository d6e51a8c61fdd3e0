// scaled_dot_product_attention_backward against central finite differences of a double-precision
// forward: every mask kind, causal alignment (Tq < Tk and Tq > Tk), custom scale, a fully masked
// row, dropout (the forward's own mask), and a long key axis that splits the queries into blocks.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>

#include "core/attention_backward.h"
#include "core/rng.h"
#include "finite_diff.h"
#include "test_helpers.h"

namespace {

// Gradients are sums of Tk products of magnitude ~1 in float32; finite differences of the double
// reference are exact to ~1e-8, so this bounds the core's rounding.
constexpr double kGradTol = 2e-5;

struct Problem {  // (S, Tq, Tk) slices, flattened lead axes
  int s, tq, tk, dk, dv;
  double scale;
  std::function<bool(int, int, int)> allowed;  // null = all allowed
  std::vector<float> additive;                 // (S, Tq, Tk) or empty
  std::vector<float> dropout;                  // (S, Tq, Tk) multiplier or empty
};

// Σ out ⊙ g with out = dropout(softmax(scale·q·kᵀ + additive, masked)) · v, all in double.
double reference_loss(const Problem& p, const std::vector<double>& q, const std::vector<double>& k,
                      const std::vector<double>& v, const std::vector<float>& g) {
  const double kNegInf = -std::numeric_limits<double>::infinity();
  double loss = 0.0;
  std::vector<double> row(p.tk);  // row: (Tk) scores, then weights
  for (int s = 0; s < p.s; ++s)
    for (int i = 0; i < p.tq; ++i) {
      double max = kNegInf;
      for (int j = 0; j < p.tk; ++j) {
        double dot = 0.0;
        for (int c = 0; c < p.dk; ++c) dot += q[(s * p.tq + i) * p.dk + c] * k[(s * p.tk + j) * p.dk + c];
        const std::size_t at = (static_cast<std::size_t>(s) * p.tq + i) * p.tk + j;
        row[j] = (p.allowed && !p.allowed(s, i, j))
                     ? kNegInf
                     : p.scale * dot + (p.additive.empty() ? 0.0 : p.additive[at]);
        max = std::max(max, row[j]);
      }
      if (max == kNegInf) continue;  // fully masked: zero weights, zero output
      double sum = 0.0;
      for (int j = 0; j < p.tk; ++j) sum += row[j] == kNegInf ? 0.0 : std::exp(row[j] - max);
      for (int j = 0; j < p.tk; ++j) {
        const std::size_t at = (static_cast<std::size_t>(s) * p.tq + i) * p.tk + j;
        const double w = (row[j] == kNegInf ? 0.0 : std::exp(row[j] - max) / sum) *
                         (p.dropout.empty() ? 1.0 : p.dropout[at]);
        for (int c = 0; c < p.dv; ++c) {
          loss += w * v[(s * p.tk + j) * p.dv + c] * g[(s * p.tq + i) * p.dv + c];
        }
      }
    }
  return loss;
}

struct Inputs {
  attn::Tensor q, k, v, g;
};

Inputs make_inputs(const attn::Shape& lead, const Problem& p, std::uint64_t seed) {
  auto with = [&](int t, int d) {
    attn::Shape s = lead;
    s.push_back(t);
    s.push_back(d);
    return s;
  };
  return {testutil::random_tensor(with(p.tq, p.dk), seed),
          testutil::random_tensor(with(p.tk, p.dk), seed + 1),
          testutil::random_tensor(with(p.tk, p.dv), seed + 2),
          testutil::random_tensor(with(p.tq, p.dv), seed + 3)};
}

// The core's gradients against finite differences at every element (or `every`-th for big inputs).
void check_gradients(const Problem& p, const Inputs& in, const attn::SdpaOptions& options,
                     std::size_t every = 1) {
  attn::SdpaGrads grads;
  const attn::Status st = attn::scaled_dot_product_attention_backward(in.q, in.k, in.v, in.g, options, grads);
  INFO(st.message);
  REQUIRE(st.ok());
  REQUIRE(grads.q.shape == in.q.shape);
  REQUIRE(grads.k.shape == in.k.shape);
  REQUIRE(grads.v.shape == in.v.shape);
  std::vector<double> q = fd::to_double(in.q.data), k = fd::to_double(in.k.data),
                      v = fd::to_double(in.v.data);
  const auto loss = [&] { return reference_loss(p, q, k, v, in.g.data); };
  const std::pair<std::vector<double>*, const attn::Tensor*> pairs[] = {
      {&q, &grads.q}, {&k, &grads.k}, {&v, &grads.v}};
  const char* names[] = {"grad q", "grad k", "grad v"};
  for (int t = 0; t < 3; ++t) {
    std::vector<std::size_t> at;
    std::vector<float> got;
    for (std::size_t i = 0; i < pairs[t].first->size(); i += every) {
      at.push_back(i);
      got.push_back(pairs[t].second->data[i]);
    }
    testutil::require_close(got, fd::gradient_at(*pairs[t].first, loss, at), kGradTol, names[t]);
  }
}

}  // namespace

TEST_CASE("SDPA backward: no mask, custom scale, lead axes", "[sdpa-backward]") {
  for (int n : {1, 3, 5}) {
    Problem p{6, n, n + 2, 3, 5, 1.0 / std::sqrt(3.0), {}, {}, {}};
    check_gradients(p, make_inputs({2, 3}, p, 100 + n), {});
  }
  Problem p{1, 4, 7, 5, 3, 0.37, {}, {}, {}};
  attn::SdpaOptions o;
  o.scale = 0.37f;
  check_gradients(p, make_inputs({}, p, 7), o);
}

TEST_CASE("SDPA backward: broadcast boolean mask, additive -inf, both", "[sdpa-backward][mask]") {
  const int tq = 5, tk = 7;
  Problem p{6, tq, tk, 4, 3, 0.5, {}, {}, {}};
  attn::BoolTensor mask{{tq, tk}, {}};  // (Tq, Tk) broadcast over lead (2, 3)
  for (int i = 0; i < tq * tk; ++i) mask.data.push_back(attn::uniform01(9, i) < 0.7f || i % tk == 0);
  attn::Tensor additive = testutil::random_tensor({2, 3, tq, tk}, 31);
  additive.data[3] = -std::numeric_limits<float>::infinity();
  additive.data[40] = -std::numeric_limits<float>::infinity();
  p.allowed = [&](int, int i, int j) { return mask.data[i * tk + j] != 0; };
  attn::SdpaOptions o;
  o.scale = 0.5f;
  o.mask = &mask;
  const Inputs in = make_inputs({2, 3}, p, 50);
  check_gradients(p, in, o);
  p.additive = additive.data;
  o.additive_mask = &additive;
  check_gradients(p, in, o);
  p.allowed = nullptr;
  o.mask = nullptr;
  check_gradients(p, in, o);
}

TEST_CASE("SDPA backward: causal with Tq < Tk and Tq > Tk (top-left aligned)", "[sdpa-backward][causal]") {
  for (auto [tq, tk] : {std::pair{3, 6}, std::pair{6, 3}, std::pair{5, 5}}) {
    Problem p{3, tq, tk, 3, 4, 1.0 / std::sqrt(3.0), [](int, int i, int j) { return j <= i; }, {}, {}};
    attn::SdpaOptions o;
    o.causal = true;
    check_gradients(p, make_inputs({3}, p, 70 + tq), o);
  }
}

TEST_CASE("SDPA backward: a fully masked row gets zero gradients", "[sdpa-backward][masked-row]") {
  const int tq = 4, tk = 5;
  Problem p{2,  tq, tk, 3, 3, 1.0 / std::sqrt(3.0), [](int s, int i, int) { return !(s == 1 && i == 2); },
            {}, {}};
  attn::BoolTensor mask{{2, tq, tk}, std::vector<std::uint8_t>(2 * tq * tk, 1)};
  for (int j = 0; j < tk; ++j) mask.data[(1 * tq + 2) * tk + j] = 0;
  attn::SdpaOptions o;
  o.mask = &mask;
  const Inputs in = make_inputs({2}, p, 90);
  check_gradients(p, in, o);
  attn::SdpaGrads grads;
  REQUIRE(attn::scaled_dot_product_attention_backward(in.q, in.k, in.v, in.g, o, grads).ok());
  for (int c = 0; c < 3; ++c) REQUIRE(grads.q.data[(1 * tq + 2) * 3 + c] == 0.0f);
  REQUIRE(testutil::all_finite(grads.k.data));
  REQUIRE(testutil::all_finite(grads.v.data));
}

TEST_CASE("SDPA backward: dropout replays exactly the forward's mask", "[sdpa-backward][dropout]") {
  const int tq = 5, tk = 6;
  Problem p{2, tq, tk, 3, 4, 1.0 / std::sqrt(3.0), [](int, int i, int j) { return j <= i; }, {}, {}};
  attn::SdpaOptions o;
  o.causal = true;
  o.dropout = {0.3f, 1234};
  const Inputs in = make_inputs({2}, p, 120);
  // The multiplier the forward applied, read back from its trace: dropped ÷ weights (0 or 1/(1 − p)).
  attn::Trace trace;
  attn::SdpaResult fwd;
  REQUIRE(attn::scaled_dot_product_attention(in.q, in.k, in.v, o, fwd, &trace).ok());
  const attn::Tensor& w = trace.find("weights")->tensor;
  const attn::Tensor& dropped = trace.find("dropped")->tensor;
  const float keep = 1.0f / (1.0f - 0.3f);
  int zeros = 0;
  for (std::size_t e = 0; e < w.data.size(); ++e) {
    const bool kept = attn::uniform01(1234, e) >= 0.3f;
    p.dropout.push_back(kept ? keep : 0.0f);
    zeros += kept ? 0 : 1;
    if (w.data[e] != 0.0f) REQUIRE(dropped.data[e] == (kept ? w.data[e] * keep : 0.0f));
  }
  REQUIRE(zeros > 0);
  check_gradients(p, in, o);
}

TEST_CASE("SDPA backward: many query blocks over a long key axis", "[sdpa-backward][blocks]") {
  const int tq = 20, tk = 4099;  // 65536 / 4099 → blocks of 15 query rows
  Problem p{1,  tq, tk, 3, 2, 1.0 / std::sqrt(3.0), [](int, int i, int j) { return (i + j) % 5 != 0; },
            {}, {}};
  attn::BoolTensor mask{{tq, tk}, {}};
  for (int i = 0; i < tq; ++i)
    for (int j = 0; j < tk; ++j) mask.data.push_back((i + j) % 5 != 0);
  attn::SdpaOptions o;
  o.mask = &mask;
  check_gradients(p, make_inputs({}, p, 140), o, 97);
}

TEST_CASE("SDPA backward: bad gradOutput is a shape error naming it", "[sdpa-backward][errors]") {
  Problem p{1, 3, 4, 2, 2, 1.0, {}, {}, {}};
  Inputs in = make_inputs({}, p, 1);
  in.g = testutil::random_tensor({3, 3}, 2);
  attn::SdpaGrads grads;
  attn::Status st = attn::scaled_dot_product_attention_backward(in.q, in.k, in.v, in.g, {}, grads);
  REQUIRE(st.code == attn::StatusCode::kShapeMismatch);
  REQUIRE(st.message.find("gradOutput") != std::string::npos);
  in.g = testutil::random_tensor({3, 2}, 2);
  in.g.data[1] = std::numeric_limits<float>::quiet_NaN();
  st = attn::scaled_dot_product_attention_backward(in.q, in.k, in.v, in.g, {}, grads);
  REQUIRE(st.code == attn::StatusCode::kNonFinite);
}
