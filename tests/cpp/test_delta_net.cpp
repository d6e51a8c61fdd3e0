// The gated delta rule and the DeltaNet block (delta_rule.h, delta_net.h) against float64
// references written here from the formulas: the recurrence, the chunked (WY) form across chunks,
// the exact effective attention, the whole block in both value-head orders, decoding by state, and
// the same bits at every thread count.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "core/rng.h"
#include "model/delta_net.h"
#include "model/delta_rule.h"
#include "parallel_check.h"
#include "test_helpers.h"

namespace {

using attn::DeltaHeadView;

// One head's random rows: q, k unit length (q × d^−1/2), β ∈ (0, 1), g ∈ (−0.5, 0).
struct Head {
  int t, dk, dv;
  std::vector<float> q, k, v, beta, g;
  Head(int t_, int dk_, int dv_, std::uint64_t seed) : t(t_), dk(dk_), dv(dv_) {
    q.resize(static_cast<std::size_t>(t) * dk);
    k.resize(q.size());
    v.resize(static_cast<std::size_t>(t) * dv);
    for (std::size_t i = 0; i < q.size(); ++i) {
      q[i] = attn::approx_normal(seed, i);
      k[i] = attn::approx_normal(seed + 1, i);
    }
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = attn::approx_normal(seed + 2, i);
    for (int r = 0; r < t; ++r) {
      double sq = 0, sk = 0;
      for (int i = 0; i < dk; ++i) {
        sq += q[r * dk + i] * q[r * dk + i];
        sk += k[r * dk + i] * k[r * dk + i];
      }
      for (int i = 0; i < dk; ++i) {
        q[r * dk + i] = static_cast<float>(q[r * dk + i] / std::sqrt(sq * dk));
        k[r * dk + i] = static_cast<float>(k[r * dk + i] / std::sqrt(sk));
      }
      beta.push_back(static_cast<float>(1 / (1 + std::exp(-attn::approx_normal(seed + 3, r)))));
      g.push_back(static_cast<float>(-0.25 * (1 + std::tanh(attn::approx_normal(seed + 4, r)))));
    }
  }
  DeltaHeadView view() const {
    DeltaHeadView h;
    h.t = t;
    h.dk = dk;
    h.dv = dv;
    h.q = q.data();
    h.k = k.data();
    h.v = v.data();
    h.beta = beta.data();
    h.g = g.data();
    h.qk_stride = dk;
    h.v_stride = dv;
    h.gate_stride = 1;
    return h;
  }
};

// The float64 reference: S ← e^g S; S ← S + k (β (v − Sᵀk))ᵀ; o = Sᵀq, from `s0`.
std::vector<double> reference(const Head& h, std::vector<double> s) {
  std::vector<double> o;
  for (int t = 0; t < h.t; ++t) {
    for (double& x : s) x *= std::exp(static_cast<double>(h.g[t]));
    for (int j = 0; j < h.dv; ++j) {
      double sk = 0;
      for (int i = 0; i < h.dk; ++i) sk += s[i * h.dv + j] * h.k[t * h.dk + i];
      const double d = h.beta[t] * (h.v[t * h.dv + j] - sk);
      for (int i = 0; i < h.dk; ++i) s[i * h.dv + j] += h.k[t * h.dk + i] * d;
    }
    for (int j = 0; j < h.dv; ++j) {
      double r = 0;
      for (int i = 0; i < h.dk; ++i) r += s[i * h.dv + j] * h.q[t * h.dk + i];
      o.push_back(r);
    }
  }
  return o;
}

// |got − want| ≤ tol · (1 + |want|) everywhere.
void require_relative(const std::vector<float>& got, const std::vector<double>& want, double tol,
                      const char* what) {
  REQUIRE(got.size() == want.size());
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs(got[i] - want[i]) / (1 + std::fabs(want[i])));
  INFO(what << ": worst error / (1 + |o|) " << worst << " (tolerance " << tol << ")");
  REQUIRE(worst <= tol);
}

}  // namespace

TEST_CASE("delta rule: recurrence and chunked form equal a float64 recurrence over several chunks",
          "[delta_net]") {
  const Head h(150, 8, 6, 11);  // chunks of 64, 64 and 22
  std::vector<double> s0(8 * 6);
  for (std::size_t i = 0; i < s0.size(); ++i) s0[i] = 0.3 * attn::approx_normal(5, i);
  for (const bool from_zero : {true, false}) {
    const std::vector<double> start = from_zero ? std::vector<double>(s0.size(), 0.0) : s0;
    const std::vector<double> want = reference(h, start);
    std::vector<float> rec(want.size()), chunked(want.size()), small(want.size());
    std::vector<double> sr = start, sc = start, ss = start;
    attn::delta_rule_recurrent(h.view(), sr.data(), rec.data(), h.dv);
    attn::delta_rule_chunked(h.view(), sc.data(), chunked.data(), h.dv);
    attn::delta_rule_chunked(h.view(), ss.data(), small.data(), h.dv, 7);
    require_relative(rec, want, 1e-5, "recurrence");
    require_relative(chunked, want, 1e-5, "chunked, 64 rows");
    require_relative(small, want, 1e-5, "chunked, 7 rows");
    // The final states agree too (decoding continues from them).
    REQUIRE(testutil::max_abs_diff(sc, sr) <= 1e-9);
    REQUIRE(testutil::max_abs_diff(ss, sr) <= 1e-9);
  }
}

TEST_CASE("delta rule: the effective attention reproduces o and equals the matrix product", "[delta_net]") {
  const Head h(70, 5, 4, 21);
  std::vector<float> a(static_cast<std::size_t>(h.t) * h.t), o(static_cast<std::size_t>(h.t) * h.dv);
  attn::delta_rule_attention(h.view(), a.data());
  std::vector<double> s(static_cast<std::size_t>(h.dk) * h.dv, 0.0);
  attn::delta_rule_chunked(h.view(), s.data(), o.data(), h.dv);
  // Σ_s A[t,s] v_s = o_t within 1e-4 · max|o|
  double max_o = 0, worst = 0;
  for (float x : o) max_o = std::max(max_o, static_cast<double>(std::fabs(x)));
  for (int t = 0; t < h.t; ++t)
    for (int j = 0; j < h.dv; ++j) {
      double r = 0;
      for (int u = 0; u < h.t; ++u) r += static_cast<double>(a[t * h.t + u]) * h.v[u * h.dv + j];
      worst = std::max(worst, std::fabs(r - o[t * h.dv + j]));
    }
  INFO("max |Σ A v − o| " << worst << ", max |o| " << max_o);
  REQUIRE(worst <= 1e-4 * max_o);
  // A[t,s] = β_s k_sᵀ (Π_{r=s+1..t} e^{g_r}(I − β_r k_r k_rᵀ)) q_t with the d_k × d_k products formed.
  const int d = h.dk;
  double err = 0;
  for (int t = 0; t < h.t; t += 9)
    for (int u = 0; u <= t; ++u) {
      std::vector<double> p(static_cast<std::size_t>(d) * d, 0.0);
      for (int i = 0; i < d; ++i) p[i * d + i] = 1;
      for (int r = u + 1; r <= t; ++r) {  // p ← p · M_r
        std::vector<double> m(p.size());
        for (int i = 0; i < d; ++i)
          for (int j = 0; j < d; ++j)
            m[i * d + j] = std::exp(static_cast<double>(h.g[r])) *
                           ((i == j) - static_cast<double>(h.beta[r]) * h.k[r * d + i] * h.k[r * d + j]);
        std::vector<double> n(p.size(), 0.0);
        for (int i = 0; i < d; ++i)
          for (int x = 0; x < d; ++x)
            for (int j = 0; j < d; ++j) n[i * d + j] += p[i * d + x] * m[x * d + j];
        p = n;
      }
      double want = 0;
      for (int i = 0; i < d; ++i)
        for (int j = 0; j < d; ++j) want += h.k[u * d + i] * p[i * d + j] * h.q[t * d + j];
      want *= h.beta[u];
      err = std::max(err, std::fabs(want - a[t * h.t + u]));
    }
  REQUIRE(err <= 1e-6);
  for (int t = 0; t < h.t; ++t)
    for (int u = t + 1; u < h.t; ++u) REQUIRE(a[t * h.t + u] == 0.0f);
}
