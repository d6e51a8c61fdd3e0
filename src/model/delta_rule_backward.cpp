// The backward of one value head's gated delta rule (delta_rule.h) from a zero state: backward
// through time over the states S_t, recomputed chunk by chunk. The forward is run again as the
// prefill runs it (delta_rule_chunked on each chunk), keeping only the state at each chunk's start;
// the backward then walks the chunks from the last, recomputing that chunk's states by the recurrence
// from its start. Memory: the T / kDeltaChunk chunk-start states and one chunk's states, each
// (d_k, d_v) in double, not a state per position. Per row t, with S' = e^{g_t} S_{t−1},
// u = β_t (v_t − S'ᵀk_t), S_t = S' + k_t uᵀ, o_t = S_tᵀq_t, and dS the gradient at S_t:
//   dS += q_t do_tᵀ; dq_t = S_t do_t; dk_t = dS u; du = dSᵀk_t; dβ_t = du·(v_t − S'ᵀk_t);
//   dv_t = β_t du; dS' = dS − β_t k_t duᵀ; dk_t −= β_t S' du; dg_t = ⟨S', dS'⟩; dS_{t−1} = e^{g_t} dS'.
#include <algorithm>
#include <cmath>
#include <vector>

#include "model/delta_rule.h"

namespace attn {

namespace {

// One row's step of the backward (the block comment above), on doubles; `prev` is S_{t−1}, `cur` S_t.
struct RowBackward {
  int dk, dv;
  std::vector<double> sp, sk, u, du;  // S' (d_k, d_v), S'ᵀk, u, du (d_v)
  RowBackward(int k_dim, int v_dim)
      : dk(k_dim), dv(v_dim), sp(static_cast<std::size_t>(k_dim) * v_dim), sk(v_dim), u(v_dim), du(v_dim) {}

  void run(const DeltaHeadView& h, int t, const double* prev, const double* cur, const float* d_o, double* ds,
           const DeltaHeadGrads& g) {
    const float *q = h.q + t * h.qk_stride, *k = h.k + t * h.qk_stride, *v = h.v + t * h.v_stride;
    const double decay = std::exp(static_cast<double>(h.g[t * h.gate_stride]));
    const double beta = h.beta[t * h.gate_stride];
    double* dq = g.dq + static_cast<std::int64_t>(t) * h.dk;
    double* dkk = g.dk + static_cast<std::int64_t>(t) * h.dk;
    for (int r = 0; r < dk; ++r) {
      double a = 0;
      for (int x = 0; x < dv; ++x) {
        ds[r * dv + x] += q[r] * static_cast<double>(d_o[x]);
        a += cur[r * dv + x] * d_o[x];
      }
      dq[r] = a;
    }
    for (int i = 0; i < dk * dv; ++i) sp[i] = decay * prev[i];
    for (int x = 0; x < dv; ++x) {
      double a = 0;
      for (int r = 0; r < dk; ++r) a += sp[r * dv + x] * k[r];
      sk[x] = a;
      u[x] = beta * (v[x] - a);
    }
    for (int x = 0; x < dv; ++x) {
      double a = 0;
      for (int r = 0; r < dk; ++r) a += ds[r * dv + x] * k[r];
      du[x] = a;
    }
    double dbeta = 0;
    for (int x = 0; x < dv; ++x) {
      dbeta += du[x] * (v[x] - sk[x]);
      g.dv[static_cast<std::int64_t>(t) * dv + x] = beta * du[x];
    }
    double dg = 0;
    for (int r = 0; r < dk; ++r) {
      double a = 0, b = 0;
      for (int x = 0; x < dv; ++x) {
        a += ds[r * dv + x] * u[x];
        b += sp[r * dv + x] * du[x];
        ds[r * dv + x] -= beta * k[r] * du[x];  // now dS'
        dg += sp[r * dv + x] * ds[r * dv + x];
      }
      dkk[r] = a - beta * b;
    }
    for (int i = 0; i < dk * dv; ++i) ds[i] *= decay;  // dS_{t−1}
    g.dbeta[t] = dbeta;
    g.dg[t] = dg;
  }
};

// S after each row of a chunk [t0, t0 + n) by the recurrence from `start` into states (n, d_k, d_v).
void chunk_states(const DeltaHeadView& h, int t0, int n, const double* start, std::vector<double>& states) {
  const int dk = h.dk, dv = h.dv;
  const std::size_t size = static_cast<std::size_t>(dk) * dv;
  std::vector<double> sk(static_cast<std::size_t>(dv));
  for (int i = 0; i < n; ++i) {
    const int t = t0 + i;
    const double* prev = i == 0 ? start : states.data() + (i - 1) * size;
    double* s = states.data() + i * size;
    const float *k = h.k + t * h.qk_stride, *v = h.v + t * h.v_stride;
    const double decay = std::exp(static_cast<double>(h.g[t * h.gate_stride]));
    const double beta = h.beta[t * h.gate_stride];
    for (std::size_t j = 0; j < size; ++j) s[j] = decay * prev[j];
    for (int x = 0; x < dv; ++x) {
      double a = 0;
      for (int r = 0; r < dk; ++r) a += s[r * dv + x] * k[r];
      sk[x] = beta * (v[x] - a);
    }
    for (int r = 0; r < dk; ++r)
      for (int x = 0; x < dv; ++x) s[r * dv + x] += k[r] * sk[x];
  }
}

}  // namespace

void delta_rule_forward_keeping(const DeltaHeadView& h, float* o, std::int64_t o_stride,
                                std::vector<double>& starts, int chunk) {
  const std::size_t size = static_cast<std::size_t>(h.dk) * h.dv;
  const int chunks = (h.t + chunk - 1) / chunk;
  starts.assign(static_cast<std::size_t>(chunks) * size, 0.0);
  std::vector<double> s(size, 0.0);
  for (int c = 0; c < chunks; ++c) {
    std::copy(s.begin(), s.end(), starts.begin() + static_cast<std::ptrdiff_t>(c * size));
    const int t0 = c * chunk;
    DeltaHeadView part = h;
    part.t = std::min(chunk, h.t - t0);
    part.q += t0 * h.qk_stride;
    part.k += t0 * h.qk_stride;
    part.v += t0 * h.v_stride;
    part.beta += t0 * h.gate_stride;
    part.g += t0 * h.gate_stride;
    // one row alone is a decoding step's recurrence, as the block's forward runs a T = 1 call
    if (h.t == 1)
      delta_rule_recurrent(part, s.data(), o + t0 * o_stride, o_stride);
    else
      delta_rule_chunked(part, s.data(), o + t0 * o_stride, o_stride, chunk);
  }
}

void delta_rule_backward(const DeltaHeadView& h, const std::vector<double>& starts, const float* d_o,
                         std::int64_t do_stride, const DeltaHeadGrads& g, int chunk) {
  const int dk = h.dk, dv = h.dv;
  const std::size_t size = static_cast<std::size_t>(dk) * dv;
  std::vector<double> ds(size, 0.0), states(static_cast<std::size_t>(std::min(chunk, h.t)) * size);
  RowBackward row(dk, dv);
  for (int c = (h.t + chunk - 1) / chunk - 1; c >= 0; --c) {
    const int t0 = c * chunk, n = std::min(chunk, h.t - t0);
    const double* start = starts.data() + c * size;
    chunk_states(h, t0, n, start, states);
    for (int i = n - 1; i >= 0; --i) {
      const double* prev = i == 0 ? start : states.data() + (i - 1) * size;
      row.run(h, t0 + i, prev, states.data() + i * size, d_o + (t0 + i) * do_stride, ds.data(), g);
    }
  }
}

}  // namespace attn
