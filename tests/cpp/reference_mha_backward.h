// A naive double-precision MultiHeadAttention forward with EVERY option (kdim/vdim, head dims, biases,
// bias_k/bias_v, zero attention, masks as callbacks, causal, positional, dropout replayed from the
// portable RNG, residual, LayerNorm), with every input and parameter in double, so that central
// finite differences (finite_diff.h) of sum(output ⊙ g) give the reference gradients for
// MultiHeadAttention::backward. Written from PyTorch's documentation; plain loops (the projections
// are Eigen: linear_rows in reference.cpp), no core code except attn::uniform01 (the dropout draw
// the core documents). For tests.
#pragma once
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/rng.h"

namespace ref {

struct MhaFullConfig {
  int e, h, dk, dv, kdim, vdim;
  bool add_bias_kv, add_zero_attn, residual, layer_norm;
  double eps;
};

// Parameters by PyTorch state-dict name (in_proj_weight or q/k/v_proj_weight, in_proj_bias,
// out_proj.weight, out_proj.bias, bias_k, bias_v, layer_norm.weight, layer_norm.bias); absent = none.
using MhaParams = std::map<std::string, std::vector<double>>;

struct MhaFullInputs {
  int b, tq, tk;              // tk ignored in self-attention (key empty): keys are x
  std::vector<double> query;  // (B, Tq, E)
  std::vector<double> key;    // (B, Tk, kdim), empty = self-attention
  std::vector<double> value;  // (B, Tk, vdim), empty = the key serves as value
};

struct MhaFullOptions {
  // Over the real keys only (extra keys are never masked). true = may attend; null = all.
  std::function<bool(int b, int h, int i, int j)> allowed;
  std::function<double(int b, int h, int i, int j)> additive;  // null = 0; may be -inf
  bool causal = false;                                         // j <= i, real keys only
  double scale = 1.0;
  float dropout_p = 0.0f;  // weight (b, h, i, j) dropped iff uniform01(seed, ((b·H + h)·Tq + i)·Tk' + j) < p
  std::uint64_t dropout_seed = 0;
  const std::vector<float>* positional = nullptr;  // (T ≥ Tq, E) added to the query
};

// y (rows, out) = x (rows, in) · W[row0 : row0 + out]ᵀ + b[row0 : row0 + out] (b may be null).
// Eigen, in reference.cpp.
std::vector<double> linear_rows(const std::vector<double>& x, int rows, int in, const std::vector<double>& w,
                                const std::vector<double>* b, int row0, int out);

inline const std::vector<double>* find_param(const MhaParams& p, const char* name) {
  auto it = p.find(name);
  return it == p.end() ? nullptr : &it->second;
}

// q (B·Tq, H·dk), k (B·Tk, H·dk), v (B·Tk, H·dv) from x and the key/value sources.
inline void project_qkv(const MhaFullConfig& c, const MhaParams& p, const std::vector<double>& x,
                        const std::vector<double>& key_src, const std::vector<double>& value_src, int rows_q,
                        int rows_k, std::vector<double>& q, std::vector<double>& k, std::vector<double>& v) {
  const int qk = c.h * c.dk, vo = c.h * c.dv;
  const std::vector<double>* bias = find_param(p, "in_proj_bias");  // (2·qk + vo) stacked
  if (const std::vector<double>* in_proj = find_param(p, "in_proj_weight")) {
    q = linear_rows(x, rows_q, c.e, *in_proj, bias, 0, qk);
    k = linear_rows(key_src, rows_k, c.e, *in_proj, bias, qk, qk);
    v = linear_rows(value_src, rows_k, c.e, *in_proj, bias, 2 * qk, vo);
    return;
  }
  q = linear_rows(x, rows_q, c.e, p.at("q_proj_weight"), bias, 0, qk);
  // The biases of k and v sit at offsets qk and 2·qk of in_proj_bias: shift by taking sub-vectors.
  std::vector<double> bk, bv;
  if (bias) {
    bk.assign(bias->begin() + qk, bias->begin() + 2 * qk);
    bv.assign(bias->begin() + 2 * qk, bias->end());
  }
  k = linear_rows(key_src, rows_k, c.kdim, p.at("k_proj_weight"), bias ? &bk : nullptr, 0, qk);
  v = linear_rows(value_src, rows_k, c.vdim, p.at("v_proj_weight"), bias ? &bv : nullptr, 0, vo);
}

// context (B, Tq, H·dv) of attention over Tk real keys plus the extra keys.
inline std::vector<double> attend(const MhaFullConfig& c, const MhaParams& p, const MhaFullOptions& o, int b,
                                  int tq, int tk, const std::vector<double>& q, const std::vector<double>& k,
                                  const std::vector<double>& v) {
  const double kNegInf = -std::numeric_limits<double>::infinity();
  const int qk = c.h * c.dk, vo = c.h * c.dv;
  const int tkp = tk + (c.add_bias_kv ? 1 : 0) + (c.add_zero_attn ? 1 : 0);
  const std::vector<double>* bias_k = find_param(p, "bias_k");
  const std::vector<double>* bias_v = find_param(p, "bias_v");
  // Key / value element (batch bi, key j, column col) including the extra rows.
  auto key_at = [&](int bi, int j, int col) {
    if (j < tk) return k[(static_cast<std::size_t>(bi) * tk + j) * qk + col];
    return (j == tk && c.add_bias_kv) ? (*bias_k)[col] : 0.0;
  };
  auto value_at = [&](int bi, int j, int col) {
    if (j < tk) return v[(static_cast<std::size_t>(bi) * tk + j) * vo + col];
    return (j == tk && c.add_bias_kv) ? (*bias_v)[col] : 0.0;
  };
  std::vector<double> context(static_cast<std::size_t>(b) * tq * vo, 0.0), row(tkp);
  for (int bi = 0; bi < b; ++bi)
    for (int hi = 0; hi < c.h; ++hi)
      for (int i = 0; i < tq; ++i) {
        double max = kNegInf;
        for (int j = 0; j < tkp; ++j) {
          double dot = 0.0;
          for (int d = 0; d < c.dk; ++d)
            dot += q[(static_cast<std::size_t>(bi) * tq + i) * qk + hi * c.dk + d] *
                   key_at(bi, j, hi * c.dk + d);
          row[j] = o.scale * dot;
          if (j < tk && o.additive) row[j] += o.additive(bi, hi, i, j);
          if (j < tk && ((o.allowed && !o.allowed(bi, hi, i, j)) || (o.causal && j > i))) row[j] = kNegInf;
          max = std::max(max, row[j]);
        }
        if (max == kNegInf) continue;  // fully masked row: zero weights, zero context
        double sum = 0.0;
        for (int j = 0; j < tkp; ++j) sum += row[j] == kNegInf ? 0.0 : std::exp(row[j] - max);
        for (int j = 0; j < tkp; ++j) {
          double w = row[j] == kNegInf ? 0.0 : std::exp(row[j] - max) / sum;
          if (o.dropout_p > 0.0f) {
            const std::uint64_t at = ((static_cast<std::uint64_t>(bi) * c.h + hi) * tq + i) * tkp + j;
            w = attn::uniform01(o.dropout_seed, at) < o.dropout_p ? 0.0 : w / (1.0 - o.dropout_p);
          }
          for (int d = 0; d < c.dv; ++d)
            context[(static_cast<std::size_t>(bi) * tq + i) * vo + hi * c.dv + d] +=
                w * value_at(bi, j, hi * c.dv + d);
        }
      }
  return context;
}

// output (B, Tq, E).
inline std::vector<double> mha_full_forward(const MhaFullConfig& c, const MhaParams& p,
                                            const MhaFullInputs& in, const MhaFullOptions& o) {
  const int rows_q = in.b * in.tq;
  std::vector<double> x = in.query;  // x (B, Tq, E) = query + positional
  if (o.positional)
    for (int r = 0; r < rows_q; ++r)
      for (int j = 0; j < c.e; ++j)
        x[static_cast<std::size_t>(r) * c.e + j] += (*o.positional)[(r % in.tq) * c.e + j];
  const bool self = in.key.empty();
  const int tk = self ? in.tq : in.tk;
  const std::vector<double>& key_src = self ? x : in.key;
  const std::vector<double>& value_src = self ? x : (in.value.empty() ? in.key : in.value);
  std::vector<double> q, k, v;
  project_qkv(c, p, x, key_src, value_src, rows_q, in.b * tk, q, k, v);
  const std::vector<double> context = attend(c, p, o, in.b, in.tq, tk, q, k, v);
  std::vector<double> out = linear_rows(context, rows_q, c.h * c.dv, p.at("out_proj.weight"),
                                        find_param(p, "out_proj.bias"), 0, c.e);
  if (c.residual)
    for (std::size_t i = 0; i < out.size(); ++i) out[i] += x[i];
  if (c.layer_norm) {
    const std::vector<double>&gamma = p.at("layer_norm.weight"), &beta = p.at("layer_norm.bias");
    for (int r = 0; r < rows_q; ++r) {
      double* y = out.data() + static_cast<std::size_t>(r) * c.e;
      double mean = 0.0, var = 0.0;
      for (int j = 0; j < c.e; ++j) mean += y[j] / c.e;
      for (int j = 0; j < c.e; ++j) var += (y[j] - mean) * (y[j] - mean) / c.e;
      const double rstd = 1.0 / std::sqrt(var + c.eps);
      for (int j = 0; j < c.e; ++j) y[j] = (y[j] - mean) * rstd * gamma[j] + beta[j];
    }
  }
  return out;
}

// Σ output ⊙ g: the scalar whose gradient backward computes for grad_output = g.
inline double mha_full_loss(const MhaFullConfig& c, const MhaParams& p, const MhaFullInputs& in,
                            const MhaFullOptions& o, const std::vector<float>& g) {
  const std::vector<double> out = mha_full_forward(c, p, in, o);
  double loss = 0.0;
  for (std::size_t i = 0; i < out.size(); ++i) loss += out[i] * g[i];
  return loss;
}

}  // namespace ref
