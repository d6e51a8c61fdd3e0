// One value head of the gated delta rule (delta_rule.h): the recurrence, the chunked form and the
// effective attention. Everything is double inside: the chunked form's decays e^{G_i − G_j} and its
// triangular solve then agree with the recurrence to ~1e-12, far inside the 1e-5 the model promises.
#include "model/delta_rule.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace attn {

namespace {

double dot(int n, const double* a, const float* b) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

double dot(int n, const float* a, const float* b) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

}  // namespace

void delta_rule_recurrent(const DeltaHeadView& h, double* s, float* o, std::int64_t o_stride) {
  const int dk = h.dk, dv = h.dv;
  std::vector<double> sk(static_cast<std::size_t>(dv)), out(static_cast<std::size_t>(dv));
  for (int t = 0; t < h.t; ++t) {
    const float *q = h.q + t * h.qk_stride, *k = h.k + t * h.qk_stride, *v = h.v + t * h.v_stride;
    const double decay = std::exp(static_cast<double>(h.g[t * h.gate_stride]));
    const double beta = h.beta[t * h.gate_stride];
    for (int i = 0; i < dk * dv; ++i) s[i] *= decay;
    for (int j = 0; j < dv; ++j) sk[j] = 0;
    for (int i = 0; i < dk; ++i)  // Sᵀk
      for (int j = 0; j < dv; ++j) sk[j] += s[i * dv + j] * k[i];
    for (int j = 0; j < dv; ++j) sk[j] = beta * (v[j] - sk[j]);  // the delta, × β
    for (int i = 0; i < dk; ++i)
      for (int j = 0; j < dv; ++j) s[i * dv + j] += k[i] * sk[j];
    for (int j = 0; j < dv; ++j) out[j] = 0;
    for (int i = 0; i < dk; ++i)  // Sᵀq
      for (int j = 0; j < dv; ++j) out[j] += s[i * dv + j] * q[i];
    for (int j = 0; j < dv; ++j) o[t * o_stride + j] = static_cast<float>(out[j]);
  }
}

void delta_rule_chunked(const DeltaHeadView& h, double* s, float* o, std::int64_t o_stride, int chunk) {
  const int dk = h.dk, dv = h.dv;
  const std::size_t c = static_cast<std::size_t>(chunk);
  std::vector<double> G(c), u(c * dv), kk(c * c), qk(c * c), sk(c * dv), sq(c * dv);
  for (int t0 = 0; t0 < h.t; t0 += chunk) {
    const int n = std::min(chunk, h.t - t0);
    const auto q = [&](int i) { return h.q + (t0 + i) * h.qk_stride; };
    const auto k = [&](int i) { return h.k + (t0 + i) * h.qk_stride; };
    double acc = 0;
    for (int i = 0; i < n; ++i) G[i] = acc += h.g[(t0 + i) * h.gate_stride];  // in-chunk cumulative decay
    // S_0ᵀk_i and S_0ᵀq_i, the old state's reads, × e^{G_i}
    for (int i = 0; i < n; ++i) {
      const double e = std::exp(G[i]);
      for (int j = 0; j < dv; ++j) {
        double a = 0, b = 0;
        for (int r = 0; r < dk; ++r) {
          a += s[r * dv + j] * k(i)[r];
          b += s[r * dv + j] * q(i)[r];
        }
        sk[i * dv + j] = e * a;
        sq[i * dv + j] = e * b;
      }
    }
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) {
        const double decay = std::exp(G[i] - G[j]);
        kk[i * c + j] = decay * dot(dk, k(i), k(j));
        qk[i * c + j] = decay * dot(dk, q(i), k(j));
      }
    // Forward substitution: u_i = β_i (v_i − e^{G_i}S_0ᵀk_i − Σ_{j<i} kk_ij u_j)
    for (int i = 0; i < n; ++i) {
      const float* v = h.v + (t0 + i) * h.v_stride;
      const double beta = h.beta[(t0 + i) * h.gate_stride];
      for (int x = 0; x < dv; ++x) {
        double r = v[x] - sk[i * dv + x];
        for (int j = 0; j < i; ++j) r -= kk[i * c + j] * u[j * dv + x];
        u[i * dv + x] = beta * r;
      }
    }
    for (int i = 0; i < n; ++i)
      for (int x = 0; x < dv; ++x) {
        double r = sq[i * dv + x];
        for (int j = 0; j <= i; ++j) r += qk[i * c + j] * u[j * dv + x];
        o[(t0 + i) * o_stride + x] = static_cast<float>(r);
      }
    // S ← e^{G_n} S + Σ_j e^{G_n − G_j} k_j u_jᵀ
    const double last = G[n - 1], e = std::exp(last);
    for (int r = 0; r < dk * dv; ++r) s[r] *= e;
    for (int j = 0; j < n; ++j) {
      const double w = std::exp(last - G[j]);
      for (int r = 0; r < dk; ++r) {
        const double kr = w * k(j)[r];
        for (int x = 0; x < dv; ++x) s[r * dv + x] += kr * u[j * dv + x];
      }
    }
  }
}

void delta_rule_attention(const DeltaHeadView& h, float* a) {
  const int dk = h.dk, T = h.t;
  std::vector<double> w(static_cast<std::size_t>(dk));
  for (int t = 0; t < T; ++t) {
    float* row = a + static_cast<std::int64_t>(t) * T;
    for (int s = t + 1; s < T; ++s) row[s] = 0;
    const float* q = h.q + t * h.qk_stride;
    for (int i = 0; i < dk; ++i) w[i] = q[i];
    for (int s = t; s >= 0; --s) {  // w = M_{s+1} ⋯ M_t q_t
      const float* k = h.k + s * h.qk_stride;
      const double beta = h.beta[s * h.gate_stride], kw = dot(dk, w.data(), k);
      row[s] = static_cast<float>(beta * kw);
      if (s == 0) break;
      const double e = std::exp(static_cast<double>(h.g[s * h.gate_stride]));
      for (int i = 0; i < dk; ++i) w[i] = e * (w[i] - beta * kw * k[i]);
    }
  }
}

}  // namespace attn
