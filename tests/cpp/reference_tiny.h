// Naive double-precision TinyTransformer (src/model/tiny_transformer.h's computation written from its
// header comment, plain loops, no kernels): the loss from parameters given by state-dict name, for
// finite differences of every parameter.
//
//   ref_tiny::loss(config, params, ids, targets)  mean cross-entropy over targets != -100, double.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/tiny_transformer.h"

namespace ref_tiny {

using Params = std::map<std::string, std::vector<double>>;
using Rows = std::vector<double>;  // (N, width) row-major

struct Net {
  const attn::TinyConfig& c;
  const Params& p;
  int b, t, d;
  const std::vector<std::uint8_t>* allowed = nullptr;  // (T, T), 1 = may attend, every layer; null = all

  const std::vector<double>& at(const std::string& name) const { return p.at(name); }
  bool masked(int i, int j) const { return allowed && !(*allowed)[static_cast<std::size_t>(i) * t + j]; }

  // y (N, out) = x (N, in) · Wᵀ + bias
  Rows linear(const Rows& x, int in, const std::string& w, const std::string& bias) const {
    const auto& W = at(w);
    const auto& B = at(bias);
    const int out = static_cast<int>(B.size());
    const std::size_t n = x.size() / in;
    Rows y(n * out);
    for (std::size_t r = 0; r < n; ++r)
      for (int o = 0; o < out; ++o) {
        double s = B[o];
        for (int i = 0; i < in; ++i) s += x[r * in + i] * W[static_cast<std::size_t>(o) * in + i];
        y[r * out + o] = s;
      }
    return y;
  }

  Rows layer_norm(const Rows& x, const std::string& prefix) const {
    const auto& g = at(prefix + ".weight");
    const auto& be = at(prefix + ".bias");
    Rows y(x.size());
    for (std::size_t r = 0; r < x.size() / d; ++r) {
      double mean = 0, var = 0;
      for (int j = 0; j < d; ++j) mean += x[r * d + j];
      mean /= d;
      for (int j = 0; j < d; ++j) var += (x[r * d + j] - mean) * (x[r * d + j] - mean);
      var /= d;
      const double rstd = 1.0 / std::sqrt(var + 1e-5);
      for (int j = 0; j < d; ++j) y[r * d + j] = (x[r * d + j] - mean) * rstd * g[j] + be[j];
    }
    return y;
  }

  // y (N, out) = x (N, in) · W[r0 : r0 + out]ᵀ + b[b0 : b0 + out]
  static Rows lin(const Rows& x, int in, const std::vector<double>& w, int r0, const std::vector<double>& b,
                  int b0, int out) {
    const std::size_t n = x.size() / in;
    Rows y(n * out);
    for (std::size_t r = 0; r < n; ++r)
      for (int o = 0; o < out; ++o) {
        double s = b[b0 + o];
        for (int i = 0; i < in; ++i) s += x[r * in + i] * w[static_cast<std::size_t>(r0 + o) * in + i];
        y[r * out + o] = s;
      }
    return y;
  }

  // RoPE ('half', base 10000, every head dimension) of each head of rows (N, heads·dh), row r at r % t.
  void rope(Rows& y, int heads, int dh) const {
    const int half = dh / 2;
    for (std::size_t r = 0; r < y.size() / (heads * dh); ++r)
      for (int h = 0; h < heads; ++h)
        for (int i = 0; i < half; ++i) {
          const double a = static_cast<double>(r % t) * std::pow(10000.0, -2.0 * i / dh);
          double* row = &y[(r * heads + h) * dh];
          const double x0 = row[i], x1 = row[i + half];
          row[i] = x0 * std::cos(a) - x1 * std::sin(a);
          row[i + half] = x1 * std::cos(a) + x0 * std::sin(a);
        }
  }

  // The ALiBi paper's get_slopes(h), in double.
  static std::vector<double> slopes(int h) {
    int p = 1;
    while (p * 2 <= h) p *= 2;
    std::vector<double> m;
    for (int i = 0; i < p; ++i) m.push_back(std::pow(2.0, -8.0 * (i + 1) / p));
    for (int j = 0; j < h - p; ++j) m.push_back(std::pow(2.0, -8.0 * (2 * j + 1) / (2 * p)));
    return m;
  }

  // Self-attention as nn.MultiheadAttention (in_proj or q/k/v_proj with H_kv heads, out_proj), causal
  // when configured, with RoPE or ALiBi and a window.
  Rows attention(const Rows& x, const std::string& prefix) const {
    const int h = c.num_heads, dh = d / h, kv = c.num_kv_heads ? c.num_kv_heads : h, group = h / kv;
    const auto& bias = at(prefix + "in_proj_bias");
    const bool packed = p.count(prefix + "in_proj_weight") != 0;
    const auto& wq = at(prefix + (packed ? "in_proj_weight" : "q_proj_weight"));
    const auto& wk = at(prefix + (packed ? "in_proj_weight" : "k_proj_weight"));
    const auto& wv = at(prefix + (packed ? "in_proj_weight" : "v_proj_weight"));
    Rows q = lin(x, d, wq, 0, bias, 0, d);
    Rows k = lin(x, d, wk, packed ? d : 0, bias, d, kv * dh);
    Rows v = lin(x, d, wv, packed ? 2 * d : 0, bias, d + kv * dh, kv * dh);
    if (c.positional == attn::PositionalKind::kRope) {
      rope(q, h, dh);
      rope(k, kv, dh);
    }
    const std::vector<double> m = slopes(h);
    Rows ctx(x.size(), 0.0);
    std::vector<double> w(t);
    for (int bi = 0; bi < b; ++bi)
      for (int hi = 0; hi < h; ++hi)
        for (int i = 0; i < t; ++i) {
          const int g = hi / group;
          double max = -1e300;
          auto seen = [&](int j) {
            return !masked(i, j) && (!c.causal || j <= i) &&
                   (c.window == 0 || (c.causal ? i - j < c.window : std::abs(i - j) < c.window));
          };
          for (int j = 0; j < t; ++j) {
            if (!seen(j)) continue;
            double s = 0;
            for (int e = 0; e < dh; ++e)
              s += q[(bi * t + i) * d + hi * dh + e] * k[(bi * t + j) * kv * dh + g * dh + e];
            w[j] = s / std::sqrt(static_cast<double>(dh));
            if (c.positional == attn::PositionalKind::kAlibi)
              w[j] -= m[hi] * (c.causal ? i - j : std::abs(i - j));
            max = std::max(max, w[j]);
          }
          double sum = 0;
          for (int j = 0; j < t; ++j) sum += (w[j] = seen(j) ? std::exp(w[j] - max) : 0.0);
          for (int j = 0; j < t; ++j)
            for (int e = 0; e < dh; ++e)
              ctx[(bi * t + i) * d + hi * dh + e] += w[j] / sum * v[(bi * t + j) * kv * dh + g * dh + e];
        }
    return linear(ctx, d, prefix + "out_proj.weight", prefix + "out_proj.bias");
  }

  Rows mlp(const Rows& x, const std::string& prefix) const {
    Rows h = linear(x, d, prefix + "fc1.weight", prefix + "fc1.bias");
    for (double& v : h) v = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    return linear(h, c.mlp_hidden, prefix + "fc2.weight", prefix + "fc2.bias");
  }

  template <class F>
  Rows residual(const Rows& x, const std::string& ln, F&& f) const {
    Rows y = x;
    const Rows out = f(c.norm == attn::NormKind::kPre ? layer_norm(x, ln) : x);
    for (std::size_t i = 0; i < y.size(); ++i) y[i] += out[i];
    return c.norm == attn::NormKind::kPost ? layer_norm(y, ln) : y;
  }

  Rows logits(const std::vector<int>& ids, const attn::Tensor& sinusoid) const {
    Rows x(static_cast<std::size_t>(b) * t * d);
    for (int r = 0; r < b * t; ++r)
      for (int j = 0; j < d; ++j) {
        double v = at("tok_emb.weight")[static_cast<std::size_t>(ids[r]) * d + j];
        if (c.positional == attn::PositionalKind::kLearned) v += at("pos_emb.weight")[(r % t) * d + j];
        if (c.positional == attn::PositionalKind::kSinusoidal) v += sinusoid.data[(r % t) * d + j];
        x[static_cast<std::size_t>(r) * d + j] = v;
      }
    for (int l = 0; l < c.num_layers; ++l) {
      const std::string p = "blocks." + std::to_string(l) + ".";
      x = residual(x, p + "ln1", [&](const Rows& u) { return attention(u, p + "attn."); });
      if (c.mlp) x = residual(x, p + "ln2", [&](const Rows& u) { return mlp(u, p + "mlp."); });
    }
    if (c.norm == attn::NormKind::kPre) x = layer_norm(x, "ln_f");
    return linear(x, d, "head.weight", "head.bias");
  }
};

inline double loss(const attn::TinyConfig& c, const Params& p, const attn::Tensor& sinusoid, int b, int t,
                   const std::vector<int>& ids, const std::vector<int>& targets) {
  const Net net{c, p, b, t, c.d_model};
  const Rows z = net.logits(ids, sinusoid);
  const int v = c.vocab_size;
  double sum = 0;
  int count = 0;
  for (int r = 0; r < b * t; ++r) {
    if (targets[r] == -100) continue;
    double max = -1e300, s = 0;
    for (int j = 0; j < v; ++j) max = std::max(max, z[static_cast<std::size_t>(r) * v + j]);
    for (int j = 0; j < v; ++j) s += std::exp(z[static_cast<std::size_t>(r) * v + j] - max);
    sum += std::log(s) + max - z[static_cast<std::size_t>(r) * v + targets[r]];
    ++count;
  }
  return sum / count;
}

}  // namespace ref_tiny
