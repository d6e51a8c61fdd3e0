// DeltaNetBlock::backward (delta_net.h): input gradients of a whole-sequence forward (zero state), the
// weights frozen. The forward is recomputed from x, keeping the conv's pre-activations, the raw and
// normed q/k, β, g; then, per (sequence, value head) in parallel, the head's o again with its
// chunk-start states, the gated norm's backward and the delta rule's (delta_rule_backward.cpp); the
// value heads sharing a key head add their dq, dk in head order; then the L2 norms, β = σ(b),
// g = A·softplus(a + dt_bias), the conv and its SiLU, and the four projections (Wᵀ·d in each
// matrix's stored format). Element-wise steps in double; every output value is written by one thread
// in a fixed order, so the bits do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/parallel.h"
#include "model/delta_net.h"
#include "model/delta_rule.h"

namespace attn {

namespace {

double sigmoid(double x) {
  return 1 / (1 + std::exp(-x));
}

double silu_grad(double c) {
  const double s = sigmoid(c);
  return s * (1 + c * (1 - s));
}

// What the backward reads of the forward, rows (N, ·).
struct DeltaActs {
  std::vector<float> pre, mixed;          // the conv's outputs before and after SiLU (N, C): [q | k | v]
  std::vector<float> q_raw, k_raw;        // q, k after the conv (N, H_k·d_k)
  std::vector<float> q, k;                // L2-normed, q × d_k^−1/2
  std::vector<float> zz, a_raw, beta, g;  // z (N, H_v·d_v); a, β, g (N, H_v)
};

// y = x · scale / √(Σx² + eps) per block of `dim` (the forward's l2_norm_heads, the same bits).
void l2_forward(std::int64_t blocks, int dim, double eps, double scale, const float* x, float* y) {
  kernels::parallel_items(blocks, 3 * dim, [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i) {
      const float* r = x + i * dim;
      double ss = 0;
      for (int j = 0; j < dim; ++j) ss += static_cast<double>(r[j]) * r[j];
      const double inv = scale / std::sqrt(ss + eps);
      for (int j = 0; j < dim; ++j) y[i * dim + j] = static_cast<float>(r[j] * inv);
    }
  });
}

// Its backward: dx = scale·inv·(dy − x·inv²·(x·dy)), inv = 1 / √(Σx² + eps).
void l2_backward(std::int64_t blocks, int dim, double eps, double scale, const float* x, const float* dy,
                 float* dx) {
  kernels::parallel_items(blocks, 4 * dim, [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i) {
      const float *r = x + i * dim, *d = dy + i * dim;
      double ss = 0, xd = 0;
      for (int j = 0; j < dim; ++j) {
        ss += static_cast<double>(r[j]) * r[j];
        xd += static_cast<double>(r[j]) * d[j];
      }
      const double inv = 1 / std::sqrt(ss + eps);
      for (int j = 0; j < dim; ++j)
        dx[i * dim + j] = static_cast<float>(scale * inv * (d[j] - r[j] * inv * inv * xd));
    }
  });
}

// The decay's factor A of value head h: g = A · softplus(a + dt_bias).
double decay_factor(const DeltaNetBlock& blk, int h) {
  const double a = blk.decay.data[h];
  return blk.shape().a_log ? -std::exp(a) : a;
}

double softplus(double x) {
  return x > 20 ? x : std::log1p(std::exp(x));  // torch's threshold 20, as the forward
}

}  // namespace

namespace {

// The conv over each sequence from zeros (a whole sequence), pre-activation kept: pre = Σ_j w[j] ·
// in[τ − (K − 1) + j], mixed = silu(pre), as DeltaNetBlock::convolve computes them.
void conv_forward(const DeltaNetBlock& blk, int b, int t, const std::vector<float>& in, DeltaActs& a) {
  const int c = blk.shape().channels(), k = blk.shape().kernel, hist = k - 1;
  kernels::parallel_items(static_cast<std::int64_t>(b) * c, static_cast<std::int64_t>(t) * k,
                          [&](std::int64_t i0, std::int64_t i1) {
                            for (std::int64_t i = i0; i < i1; ++i) {
                              const std::int64_t s = i / c, ch = i % c;
                              const float* w = blk.conv.data.data() + ch * k;
                              for (int tau = 0; tau < t; ++tau) {
                                double acc = 0;
                                for (int j = 0; j < k; ++j) {
                                  const int from = tau - hist + j;
                                  if (from >= 0)
                                    acc += w[j] * static_cast<double>(in[(s * t + from) * c + ch]);
                                }
                                const std::int64_t at = (s * t + tau) * c + ch;
                                a.pre[at] = static_cast<float>(acc);
                                a.mixed[at] = static_cast<float>(acc * sigmoid(acc));
                              }
                            }
                          });
}

// The forward up to the rule's inputs, from x (N, E).
void recompute(const DeltaNetBlock& blk, int b, int t, const float* x, DeltaActs& a) {
  const DeltaNetShape& s = blk.shape();
  const int e = s.hidden, c = s.channels(), hv = s.v_heads, qd = s.k_heads * s.k_dim, vd = hv * s.v_dim;
  const int m = b * t;
  const std::size_t n = static_cast<std::size_t>(m);
  std::vector<float> proj(n * c);
  blk.qkv.linear(m, x, e, nullptr, proj.data(), c);
  a.pre.resize(n * c);
  a.mixed.resize(n * c);
  conv_forward(blk, b, t, proj, a);
  a.zz.resize(n * vd);
  a.beta.resize(n * hv);
  a.a_raw.resize(n * hv);
  a.g.resize(n * hv);
  blk.z.linear(m, x, e, nullptr, a.zz.data(), vd);
  blk.b_proj.linear(m, x, e, nullptr, a.beta.data(), hv);
  blk.a_proj.linear(m, x, e, nullptr, a.a_raw.data(), hv);
  for (std::size_t i = 0; i < n * hv; ++i) {
    const int h = static_cast<int>(i % hv);
    a.beta[i] = static_cast<float>(sigmoid(a.beta[i]));
    a.g[i] = static_cast<float>(decay_factor(blk, h) *
                                softplus(static_cast<double>(a.a_raw[i]) + blk.dt_bias.data[h]));
  }
  a.q_raw.resize(n * qd);
  a.k_raw.resize(n * qd);
  for (std::size_t r = 0; r < n; ++r) {
    const float* row = a.mixed.data() + r * c;
    std::copy(row, row + qd, a.q_raw.data() + r * qd);
    std::copy(row + qd, row + 2 * qd, a.k_raw.data() + r * qd);
  }
  a.q.resize(n * qd);
  a.k.resize(n * qd);
  l2_forward(static_cast<std::int64_t>(n) * s.k_heads, s.k_dim, s.eps,
             1 / std::sqrt(static_cast<double>(s.k_dim)), a.q_raw.data(), a.q.data());
  l2_forward(static_cast<std::int64_t>(n) * s.k_heads, s.k_dim, s.eps, 1, a.k_raw.data(), a.k.data());
}

// The gradients the per-head pass writes, rows (N, ·): dq, dk per value head (N, H_v, d_k), into
// d_mixed's v columns, dz (N, H_v·d_v), d_b and d_a (N, H_v); z_out (the gated norm's output) if not
// null.
struct HeadGrads {
  std::vector<float> dq, dk, d_mixed, dz, d_b, d_a;
  std::vector<float>* z_out = nullptr;
};

// One (sequence sq, value head h): its o, the gated norm's backward from d_gated into dz and d_o, the
// rule's backward, β's and g's.
void head_backward(const DeltaNetBlock& blk, int t, int sq, int h, const DeltaActs& a,
                   const std::vector<float>& d_gated, HeadGrads& g) {
  const DeltaNetShape& s = blk.shape();
  const int hv = s.v_heads, dk = s.k_dim, dv = s.v_dim, c = s.channels(), qd = s.k_heads * dk, vd = hv * dv;
  const int kh = blk.key_head(h);
  const std::int64_t row0 = static_cast<std::int64_t>(sq) * t;
  DeltaHeadView view;
  view.t = t;
  view.dk = dk;
  view.dv = dv;
  view.q = a.q.data() + row0 * qd + kh * dk;
  view.k = a.k.data() + row0 * qd + kh * dk;
  view.v = a.mixed.data() + row0 * c + 2 * qd + h * dv;
  view.beta = a.beta.data() + row0 * hv + h;
  view.g = a.g.data() + row0 * hv + h;
  view.qk_stride = qd;
  view.v_stride = c;
  view.gate_stride = hv;
  std::vector<float> o(static_cast<std::size_t>(t) * dv), d_o(o.size());
  std::vector<double> starts, ag(static_cast<std::size_t>(dv));
  delta_rule_forward_keeping(view, o.data(), dv, starts);
  for (int tau = 0; tau < t; ++tau) {  // the gated norm: rms(o) · w · silu(z)
    const std::int64_t at = (row0 + tau) * vd + h * dv;
    const float *orow = o.data() + tau * dv, *z = a.zz.data() + at, *dg = d_gated.data() + at;
    double ss = 0, ao = 0;
    for (int j = 0; j < dv; ++j) ss += static_cast<double>(orow[j]) * orow[j];
    const double inv = 1 / std::sqrt(ss / dv + s.eps);
    for (int j = 0; j < dv; ++j) {
      const double w = blk.norm.data[j], sz = z[j] * sigmoid(z[j]);
      ag[j] = dg[j] * w * sz;
      ao += ag[j] * orow[j];
      g.dz[at + j] = static_cast<float>(dg[j] * (orow[j] * inv) * w * silu_grad(z[j]));
      if (g.z_out)
        (*g.z_out)[at + j] = static_cast<float>(static_cast<float>(orow[j] * inv) * blk.norm.data[j] * sz);
    }
    for (int j = 0; j < dv; ++j)
      d_o[tau * dv + j] = static_cast<float>(inv * (ag[j] - orow[j] * inv * inv * ao / dv));
  }
  std::vector<double> dq(static_cast<std::size_t>(t) * dk), dkk(dq.size()),
      dvv(static_cast<std::size_t>(t) * dv), dbeta(t), dgate(t);
  delta_rule_backward(view, starts, d_o.data(), dv,
                      DeltaHeadGrads{dq.data(), dkk.data(), dvv.data(), dbeta.data(), dgate.data()});
  const double factor = decay_factor(blk, h);
  for (int tau = 0; tau < t; ++tau) {
    const std::int64_t row = row0 + tau;
    for (int r = 0; r < dk; ++r) {
      g.dq[(row * hv + h) * dk + r] = static_cast<float>(dq[tau * dk + r]);
      g.dk[(row * hv + h) * dk + r] = static_cast<float>(dkk[tau * dk + r]);
    }
    for (int x = 0; x < dv; ++x)
      g.d_mixed[row * c + 2 * qd + h * dv + x] = static_cast<float>(dvv[tau * dv + x]);
    const double beta = a.beta[row * hv + h],
                 pre = static_cast<double>(a.a_raw[row * hv + h]) + blk.dt_bias.data[h];
    g.d_b[row * hv + h] = static_cast<float>(dbeta[tau] * beta * (1 - beta));
    g.d_a[row * hv + h] = static_cast<float>(dgate[tau] * factor * (pre > 20 ? 1.0 : sigmoid(pre)));
  }
}

}  // namespace

namespace {

// dq, dk per value head (N, H_v, d_k) summed onto their key heads in head order, through the L2
// norms, into d_mixed's q and k columns.
void qk_backward(const DeltaNetBlock& blk, std::int64_t n, const DeltaActs& a, HeadGrads& g) {
  const DeltaNetShape& s = blk.shape();
  const int hv = s.v_heads, dk = s.k_dim, qd = s.k_heads * dk, c = s.channels();
  std::vector<float> dqn(static_cast<std::size_t>(n) * qd), dkn(dqn.size());
  kernels::parallel_items(n, 2 * hv * dk, [&](std::int64_t r0, std::int64_t r1) {
    std::vector<double> sq(static_cast<std::size_t>(qd)), sk(sq.size());
    for (std::int64_t row = r0; row < r1; ++row) {
      std::fill(sq.begin(), sq.end(), 0.0);
      std::fill(sk.begin(), sk.end(), 0.0);
      for (int h = 0; h < hv; ++h) {
        const int kh = blk.key_head(h);
        for (int r = 0; r < dk; ++r) {
          sq[kh * dk + r] += g.dq[(row * hv + h) * dk + r];
          sk[kh * dk + r] += g.dk[(row * hv + h) * dk + r];
        }
      }
      for (int j = 0; j < qd; ++j) {
        dqn[row * qd + j] = static_cast<float>(sq[j]);
        dkn[row * qd + j] = static_cast<float>(sk[j]);
      }
    }
  });
  std::vector<float> dq_raw(dqn.size()), dk_raw(dqn.size());
  l2_backward(n * s.k_heads, dk, s.eps, 1 / std::sqrt(static_cast<double>(dk)), a.q_raw.data(), dqn.data(),
              dq_raw.data());
  l2_backward(n * s.k_heads, dk, s.eps, 1, a.k_raw.data(), dkn.data(), dk_raw.data());
  for (std::int64_t row = 0; row < n; ++row) {
    std::copy_n(dq_raw.data() + row * qd, qd, g.d_mixed.data() + row * c);
    std::copy_n(dk_raw.data() + row * qd, qd, g.d_mixed.data() + row * c + qd);
  }
}

// Through the SiLU and the conv (zero padding): d_in[τ′] = Σ_j w[j] · d_pre[τ′ + K − 1 − j], into
// d_mixed in place.
void conv_backward(const DeltaNetBlock& blk, int b, int t, const DeltaActs& a, std::vector<float>& d_mixed) {
  const int c = blk.shape().channels(), k = blk.shape().kernel, hist = k - 1;
  kernels::parallel_items(static_cast<std::int64_t>(b) * c, static_cast<std::int64_t>(t) * (k + 4),
                          [&](std::int64_t i0, std::int64_t i1) {
                            std::vector<double> d_pre(static_cast<std::size_t>(t));
                            for (std::int64_t i = i0; i < i1; ++i) {
                              const std::int64_t s = i / c, ch = i % c;
                              const float* w = blk.conv.data.data() + ch * k;
                              for (int tau = 0; tau < t; ++tau) {
                                const std::int64_t at = (s * t + tau) * c + ch;
                                d_pre[tau] = d_mixed[at] * silu_grad(a.pre[at]);
                              }
                              for (int tau = 0; tau < t; ++tau) {
                                double acc = 0;
                                for (int j = 0; j < k; ++j) {
                                  const int to = tau + hist - j;
                                  if (to < t) acc += w[j] * d_pre[to];
                                }
                                d_mixed[(s * t + tau) * c + ch] = static_cast<float>(acc);
                              }
                            }
                          });
}

}  // namespace

Status DeltaNetBlock::backward(int b, int t, const float* x, const float* dy, float* dx,
                               std::vector<float>* z_out, std::vector<float>* dz_out) const {
  const DeltaNetShape& s = shape_;
  const int e = s.hidden, c = s.channels(), hv = s.v_heads, vd = hv * s.v_dim, m = b * t;
  const std::size_t n = static_cast<std::size_t>(m);
  DeltaActs a;
  recompute(*this, b, t, x, a);
  std::vector<float> d_gated(n * vd);  // ∂M/∂(the gated norm's output) = dy · W_out
  out.linear_backward_input(m, dy, e, d_gated.data(), vd, false);
  HeadGrads g;
  g.dq.resize(n * hv * s.k_dim);
  g.dk.resize(g.dq.size());
  g.d_mixed.resize(n * c);
  g.dz.resize(n * vd);
  g.d_b.resize(n * hv);
  g.d_a.resize(n * hv);
  if (z_out) z_out->resize(n * vd);
  g.z_out = z_out;
  // per row: the chunked forward again, the chunk's states recomputed, the row's backward
  const std::int64_t work =
      static_cast<std::int64_t>(t) * (12 * s.k_dim * s.v_dim + kDeltaChunk * (s.k_dim + s.v_dim));
  kernels::parallel_items(static_cast<std::int64_t>(b) * hv, work, [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i)
      head_backward(*this, t, static_cast<int>(i / hv), static_cast<int>(i % hv), a, d_gated, g);
  });
  qk_backward(*this, static_cast<std::int64_t>(n), a, g);
  conv_backward(*this, b, t, a, g.d_mixed);
  qkv.linear_backward_input(m, g.d_mixed.data(), c, dx, e, false);
  z.linear_backward_input(m, g.dz.data(), vd, dx, e, true);
  b_proj.linear_backward_input(m, g.d_b.data(), hv, dx, e, true);
  a_proj.linear_backward_input(m, g.d_a.data(), hv, dx, e, true);
  if (dz_out) *dz_out = std::move(d_gated);
  return Status::Ok();
}

}  // namespace attn
