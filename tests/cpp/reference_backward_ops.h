// Double-precision forwards of the row ops and small layers, written as scalar losses
// L = Σ upstream ⊙ forward(params) so that central finite differences of L give the gradients the
// backward functions must return. Independent of the library; the layer losses are Eigen
// expressions in reference.cpp, the rest plain loops here.
//
//   ref_ops::central_diff(p, f, h)      g (p.size()) = (f(p + h·e_i) − f(p − h·e_i)) / 2h
//   ref_ops::softmax_loss(x, dy, n)     Σ dy ⊙ softmax(x) per row of width n (-inf allowed in x)
//   ref_ops::layer_norm_loss(x, gamma, beta, dy, n, eps)   Σ dy ⊙ LayerNorm(x) (gamma/beta empty = 1/0)
//   ref_ops::gelu(x)                    0.5·x·(1 + erf(x/√2))
//   ref_ops::linear_loss(x, w, b, dy, rows, in, out)       Σ dy ⊙ (x·Wᵀ + b), all dense
//   ref_ops::embedding_loss(table, ids, dout, d)           Σ dout ⊙ table[ids]
//   ref_ops::cross_entropy(logits, targets, V)             mean over targets ≠ -100 of lse − x[t]
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "reference.h"

namespace ref_ops {

using Vec = std::vector<double>;

template <class F>
Vec central_diff(Vec p, F f, double h) {
  Vec g(p.size());  // g: same shape as p
  for (size_t i = 0; i < p.size(); ++i) {
    const double saved = p[i];
    p[i] = saved + h;
    const double plus = f(p);
    p[i] = saved - h;
    const double minus = f(p);
    p[i] = saved;
    g[i] = (plus - minus) / (2.0 * h);
  }
  return g;
}

template <class T>
Vec to_double(const std::vector<T>& v) {
  return Vec(v.begin(), v.end());
}

inline double softmax_loss(const Vec& x, const Vec& dy, int n) {
  Vec y(n);  // y: (n) one row
  double loss = 0.0;
  for (size_t r = 0; r < x.size() / n; ++r) {
    ref::softmax_row(n, x.data() + r * n, y.data());
    for (int j = 0; j < n; ++j) loss += dy[r * n + j] * y[j];
  }
  return loss;
}

// Σ dy ⊙ LayerNorm(x) over rows of width n; gamma / beta empty = 1 / 0.
double layer_norm_loss(const Vec& x, const Vec& gamma, const Vec& beta, const Vec& dy, int n, double eps);

inline double gelu(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

// Σ dy ⊙ (x·Wᵀ + b): x (rows, in), W (out, in), b (out), dy (rows, out).
double linear_loss(const Vec& x, const Vec& w, const Vec& b, const Vec& dy, int rows, int in, int out);

inline double embedding_loss(const Vec& table, const std::vector<std::int32_t>& ids, const Vec& dout, int d) {
  double loss = 0.0;
  for (size_t i = 0; i < ids.size(); ++i)
    for (int j = 0; j < d; ++j) loss += dout[i * d + j] * table[ids[i] * d + j];
  return loss;
}

inline double cross_entropy(const Vec& logits, const std::vector<std::int32_t>& targets, int V) {
  double total = 0.0;
  int count = 0;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (targets[i] == -100) continue;
    const double* row = logits.data() + i * V;  // row: (V)
    double max = row[0], sum = 0.0;
    for (int j = 1; j < V; ++j) max = std::fmax(max, row[j]);
    for (int j = 0; j < V; ++j) sum += std::exp(row[j] - max);
    total += max + std::log(sum) - row[targets[i]];
    ++count;
  }
  return total / count;
}

}  // namespace ref_ops
