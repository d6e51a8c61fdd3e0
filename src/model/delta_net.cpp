// The gated DeltaNet token mixer (delta_net.h): projections, the short conv, the norms and gates
// around the delta rule (delta_rule.cpp), threaded over (sequence, value head) — each item's result
// depends on its own rows alone, so the bits do not depend on the thread count.
#include "model/delta_net.h"

#include <algorithm>
#include <cmath>

#include "kernels/parallel.h"
#include "model/delta_rule.h"

namespace attn {

namespace {

double sigmoid(double x) {
  return 1 / (1 + std::exp(-x));
}

double softplus(double x) {
  return x > 20 ? x : std::log1p(std::exp(x));  // torch's threshold 20
}

// x / √(Σx² + eps) over each of `heads` blocks of `dim` in each of n rows, × scale.
void l2_norm_heads(std::int64_t n, int heads, int dim, double eps, double scale, float* x) {
  kernels::parallel_items(n * heads, 3 * dim, [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i) {
      float* r = x + i * dim;
      double ss = 0;
      for (int j = 0; j < dim; ++j) ss += static_cast<double>(r[j]) * r[j];
      const double inv = scale / std::sqrt(ss + eps);
      for (int j = 0; j < dim; ++j) r[j] = static_cast<float>(r[j] * inv);
    }
  });
}

}  // namespace

void DeltaNetBlock::convolve(int b, int t, std::vector<float>& mixed, const float* state, float* next) const {
  const int c = shape_.channels(), k = shape_.kernel, hist = k - 1;
  const std::int64_t per_seq = shape_.state_floats();
  const std::vector<float> in = mixed;  // the conv reads inputs it has overwritten
  kernels::parallel_items(static_cast<std::int64_t>(b) * c, static_cast<std::int64_t>(t) * k,
                          [&](std::int64_t i0, std::int64_t i1) {
                            for (std::int64_t i = i0; i < i1; ++i) {
                              const int s = static_cast<int>(i / c), ch = static_cast<int>(i % c);
                              const float* past = state ? state + s * per_seq : nullptr;  // (K − 1, C)
                              const float* rows = in.data() + static_cast<std::int64_t>(s) * t * c;
                              // input τ of this sequence: τ < 0 from the state (or 0)
                              const auto input = [&](int tau) -> double {
                                if (tau >= 0) return rows[static_cast<std::int64_t>(tau) * c + ch];
                                return past ? past[static_cast<std::int64_t>(hist + tau) * c + ch] : 0.0;
                              };
                              const float* w = conv.data.data() + static_cast<std::int64_t>(ch) * k;
                              for (int tau = 0; tau < t; ++tau) {
                                double acc = 0;
                                for (int j = 0; j < k; ++j) acc += w[j] * input(tau - hist + j);
                                mixed[(static_cast<std::int64_t>(s) * t + tau) * c + ch] =
                                    static_cast<float>(acc * sigmoid(acc));
                              }
                              if (!next) continue;
                              for (int j = 0; j < hist; ++j)  // the last K − 1 inputs, oldest first
                                next[s * per_seq + static_cast<std::int64_t>(j) * c + ch] =
                                    static_cast<float>(input(t - hist + j));
                            }
                          });
}

// The delta rule of every (sequence, value head) on the normed rows, into o (B·T, H_v·d_v), from
// `state`'s S (or zero) and its S after the rows into next; the effective attention where asked.
void DeltaNetBlock::rule(int b, int t, const std::vector<float>& q, const std::vector<float>& k,
                         const std::vector<float>& v, const std::vector<float>& beta,
                         const std::vector<float>& g, const float* state, float* next, float* attention,
                         std::vector<float>& o, float* final_state) const {
  const DeltaNetShape& s = shape_;
  const int hv = s.v_heads, dk = s.k_dim, dv = s.v_dim, qd = s.k_heads * dk, vd = hv * dv;
  const std::int64_t per_seq = s.state_floats(),
                     conv_floats = static_cast<std::int64_t>(s.kernel - 1) * s.channels();
  const std::int64_t work = static_cast<std::int64_t>(t) * (4 * dk * dv + kDeltaChunk * (dk + dv));
  kernels::parallel_items(static_cast<std::int64_t>(b) * hv, work, [&](std::int64_t i0, std::int64_t i1) {
    std::vector<double> st(static_cast<std::size_t>(dk) * dv);
    for (std::int64_t i = i0; i < i1; ++i) {
      const int sq = static_cast<int>(i / hv), h = static_cast<int>(i % hv), kh = key_head(h);
      const std::int64_t row0 = static_cast<std::int64_t>(sq) * t,
                         s_at = sq * per_seq + conv_floats + static_cast<std::int64_t>(h) * dk * dv;
      DeltaHeadView view;
      view.t = t;
      view.dk = dk;
      view.dv = dv;
      view.q = q.data() + row0 * qd + kh * dk;
      view.k = k.data() + row0 * qd + kh * dk;
      view.v = v.data() + row0 * vd + h * dv;
      view.beta = beta.data() + row0 * hv + h;
      view.g = g.data() + row0 * hv + h;
      view.qk_stride = qd;
      view.v_stride = vd;
      view.gate_stride = hv;
      for (std::size_t j = 0; j < st.size(); ++j)
        st[j] = state ? state[s_at + static_cast<std::int64_t>(j)] : 0.0;
      float* oh = o.data() + row0 * vd + h * dv;
      if (t == 1)
        delta_rule_recurrent(view, st.data(), oh, vd);
      else
        delta_rule_chunked(view, st.data(), oh, vd);
      if (next)
        for (std::size_t j = 0; j < st.size(); ++j)
          next[s_at + static_cast<std::int64_t>(j)] = static_cast<float>(st[j]);
      if (final_state)  // (B, H_v, d_k, d_v): linear_attn.hook_state
        for (std::size_t j = 0; j < st.size(); ++j)
          final_state[i * static_cast<std::int64_t>(st.size()) + static_cast<std::int64_t>(j)] =
              static_cast<float>(st[j]);
      if (attention) delta_rule_attention(view, attention + i * t * t);
    }
  });
}

Status DeltaNetBlock::forward(int b, int t, const float* x, float* y, const float* state, float* next,
                              float* attention, const HookRun* hooks, int layer, Trace* trace) const {
  const DeltaNetShape& s = shape_;
  const int e = s.hidden, c = s.channels(), hk = s.k_heads, hv = s.v_heads, dk = s.k_dim, dv = s.v_dim;
  const int qd = hk * dk, vd = hv * dv, m = b * t;
  const std::int64_t n = m;
  if (attention && state)
    return Status::Error(StatusCode::kInvalidArgument, "the effective attention starts at position 0");
  std::vector<float> mixed(static_cast<std::size_t>(n) * c), zz(static_cast<std::size_t>(n) * vd),
      beta(static_cast<std::size_t>(n) * hv), g(beta.size());
  qkv.linear(m, x, e, nullptr, mixed.data(), c);
  z.linear(m, x, e, nullptr, zz.data(), vd);
  b_proj.linear(m, x, e, nullptr, beta.data(), hv);
  a_proj.linear(m, x, e, nullptr, g.data(), hv);
  if (hooks) hooks->stream(HookKind::kDeltaGate, layer, zz.data(), vd);
  convolve(b, t, mixed, state, next);
  // q, k, v apart (each (N, ·), the layout the hooks and the rule read)
  std::vector<float> q(static_cast<std::size_t>(n) * qd), k(q.size()), v(static_cast<std::size_t>(n) * vd);
  for (std::int64_t r = 0; r < n; ++r) {
    const float* row = mixed.data() + r * c;
    std::copy(row, row + qd, q.data() + r * qd);
    std::copy(row + qd, row + 2 * qd, k.data() + r * qd);
    std::copy(row + 2 * qd, row + c, v.data() + r * vd);
  }
  if (hooks) {
    hooks->stream(HookKind::kDeltaQ, layer, q.data(), qd);
    hooks->stream(HookKind::kDeltaK, layer, k.data(), qd);
    hooks->stream(HookKind::kDeltaV, layer, v.data(), vd);
  }
  l2_norm_heads(n, hk, dk, s.eps, 1 / std::sqrt(static_cast<double>(dk)), q.data());
  l2_norm_heads(n, hk, dk, s.eps, 1, k.data());
  for (std::int64_t i = 0; i < n * hv; ++i) {
    const int h = static_cast<int>(i % hv);
    const double a = s.a_log ? -std::exp(static_cast<double>(decay.data[h])) : decay.data[h];
    beta[i] = static_cast<float>(sigmoid(beta[i]));
    g[i] = static_cast<float>(a * softplus(static_cast<double>(g[i]) + dt_bias.data[h]));
  }
  if (hooks) {
    hooks->stream(HookKind::kDeltaBeta, layer, beta.data(), hv);
    hooks->stream(HookKind::kDeltaG, layer, g.data(), hv);
  }
  std::vector<float> o(static_cast<std::size_t>(n) * vd);
  std::vector<float> final_state;  // the state after the last row, where a capture asks for it
  if (hooks && hooks->wants(HookKind::kDeltaState, layer))
    final_state.resize(static_cast<std::size_t>(b) * hv * dk * dv);
  rule(b, t, q, k, v, beta, g, state, next, attention, o, final_state.empty() ? nullptr : final_state.data());
  if (!final_state.empty()) hooks->whole(HookKind::kDeltaState, layer, final_state.data());
  if (hooks) hooks->stream(HookKind::kDeltaO, layer, o.data(), vd);
  // The gated norm, per value head: rms(o) · w · silu(z), into o
  kernels::parallel_items(n * hv, 4 * dv, [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i) {
      float* r = o.data() + i * dv;
      const float* gate = zz.data() + i * dv;
      double ss = 0;
      for (int j = 0; j < dv; ++j) ss += static_cast<double>(r[j]) * r[j];
      const double inv = 1 / std::sqrt(ss / dv + s.eps);
      for (int j = 0; j < dv; ++j)
        r[j] =
            static_cast<float>(static_cast<float>(r[j] * inv) * norm.data[j] * (gate[j] * sigmoid(gate[j])));
    }
  });
  if (trace) {  // (B, H_v, T, d_v) from the (B·T, H_v·d_v) rows
    std::vector<float> zh(o.size());
    for (std::int64_t r = 0; r < n; ++r)
      for (int h = 0; h < hv; ++h)
        std::copy_n(o.data() + r * vd + h * dv, dv, zh.data() + ((r / t * hv + h) * t + r % t) * dv);
    trace->record("z", {"B", "H", "T_q", "d_v"}, Tensor({b, hv, t, dv}, std::move(zh)));
  }
  out.linear(m, o.data(), vd, nullptr, y, e);
  return Status::Ok();
}

}  // namespace attn
