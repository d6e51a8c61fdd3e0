// A double-precision multi-head attention over the reference SDPA, written from the PyTorch
// documentation, independent of the core's implementation. For tests; linear is Eigen (reference.cpp).
#pragma once
#include <cmath>
#include <vector>

#include "reference.h"

namespace ref {

struct MhaWeights {  // PyTorch layouts, as float vectors; empty biases mean "no bias"
  int e, h, dk, dv, kdim, vdim;
  std::vector<float> wq, wk, wv, bq, bk, bv, wo, bo;  // w*: (out, in)
};

// y (rows, out) = x (rows, in) · Wᵀ + b in double; W (out, in); b (out) or empty = no bias.
std::vector<double> linear(const std::vector<double>& x, int rows, int in, const std::vector<float>& w,
                           const std::vector<float>& b, int out);

// query (B, Tq, E), key (B, Tk, kdim), value (B, Tk, vdim); allowed (B·H, Tq, Tk) or null.
// Returns output (B, Tq, E) and per-head weights (B, H, Tq, Tk).
inline void mha(const MhaWeights& m, const std::vector<float>& query, const std::vector<float>& key,
                const std::vector<float>& value, int b, int tq, int tk,
                const std::vector<std::uint8_t>* allowed, std::vector<double>& out,
                std::vector<double>& weights) {
  auto to_double = [](const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); };
  const auto q = linear(to_double(query), b * tq, m.e, m.wq, m.bq, m.h * m.dk);
  const auto k = linear(to_double(key), b * tk, m.kdim, m.wk, m.bk, m.h * m.dk);
  const auto v = linear(to_double(value), b * tk, m.vdim, m.wv, m.bv, m.h * m.dv);
  // Split heads into (B·H, T, d) float arrays for the reference SDPA (which takes floats).
  auto split = [&](const std::vector<double>& x, int t, int d) {
    std::vector<float> y(x.size());
    for (int bi = 0; bi < b; ++bi)
      for (int hi = 0; hi < m.h; ++hi)
        for (int ti = 0; ti < t; ++ti)
          for (int c = 0; c < d; ++c)
            y[((bi * m.h + hi) * t + ti) * d + c] = float(x[(bi * t + ti) * m.h * d + hi * d + c]);
    return y;
  };
  std::vector<double> context;
  sdpa(split(q, tq, m.dk), split(k, tk, m.dk), split(v, tk, m.dv), b * m.h, tq, tk, m.dk, m.dv,
       1.0 / std::sqrt(double(m.dk)), allowed, nullptr, context, weights);
  std::vector<double> concat(static_cast<size_t>(b) * tq * m.h * m.dv);
  for (int bi = 0; bi < b; ++bi)
    for (int hi = 0; hi < m.h; ++hi)
      for (int ti = 0; ti < tq; ++ti)
        for (int c = 0; c < m.dv; ++c)
          concat[(bi * tq + ti) * m.h * m.dv + hi * m.dv + c] =
              context[((bi * m.h + hi) * tq + ti) * m.dv + c];
  out = linear(concat, b * tq, m.h * m.dv, m.wo, m.bo, m.e);
}

}  // namespace ref
