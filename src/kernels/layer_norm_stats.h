// The row statistics of LayerNorm, shared by the scalar kernel and the core's LayerNorm backward (so
// the backward's x̂ is the scalar forward's, bit for bit: one definition, not two loops kept in step
// by hand). The SIMD128 kernel computes the same quantities in f64x2 lanes.
//
// Why double: on a row with a large common offset (1e4 + N(0, 1)) a float32 mean is off by up to
// half an ulp of 1e4 (~5e-4), and every x − mean inherits that error: PyTorch's float32 kernel is
// 3e-4 off there. With the sums, the centring and the scaling in double, x̂ is within a few float32
// ulps of the exact value whatever the offset (tests/cpp/test_softmax_layernorm.cpp checks
// 1e-6 × max |y| against a float64 reference). LayerNorm is O(n) per row beside O(n²) GEMMs, so
// the wider arithmetic costs little (bench/README.md, demo shape before and after).
#pragma once
#include <cmath>

namespace attn::kernels {

struct LayerNormRowStats {
  double mean;
  double rstd;  // 1 / sqrt(biased variance + eps)
};

// 1. mean; 2. biased variance from the centred values (two passes: no cancellation); both in double.
inline LayerNormRowStats layer_norm_row_stats(int n, const float* x, float eps) {
  double sum = 0.0;
  for (int j = 0; j < n; ++j) sum += x[j];
  const double mean = sum / n;
  double sq = 0.0;
  for (int j = 0; j < n; ++j) {
    const double d = x[j] - mean;
    sq += d * d;
  }
  return {mean, 1.0 / std::sqrt(sq / n + static_cast<double>(eps))};
}

// 3. x̂ = (x − mean) · rstd, rounded to float once.
inline float layer_norm_normalised(float x, const LayerNormRowStats& s) {
  return static_cast<float>((x - s.mean) * s.rstd);
}

}  // namespace attn::kernels
