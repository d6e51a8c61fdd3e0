// The row statistics of the scalar LayerNorm kernel, shared with the core's LayerNorm backward so
// that the backward's x̂ is the scalar forward's, bit for bit (one definition, not two loops kept
// in step by hand).
#pragma once
#include <cmath>

namespace attn::kernels {

struct LayerNormRowStats {
  float mean;
  float rstd;  // 1 / sqrt(biased variance + eps)
};

// 1. mean (sequential sum); 2. biased variance from the centred values (two passes: no cancellation).
inline LayerNormRowStats layer_norm_row_stats(int n, const float* x, float eps) {
  float sum = 0.0f;
  for (int j = 0; j < n; ++j) sum += x[j];
  const float mean = sum / static_cast<float>(n);
  float sq = 0.0f;
  for (int j = 0; j < n; ++j) {
    const float d = x[j] - mean;
    sq += d * d;
  }
  return {mean, 1.0f / std::sqrt(sq / static_cast<float>(n) + eps)};
}

}  // namespace attn::kernels
