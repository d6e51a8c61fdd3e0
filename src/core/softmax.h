// Softmax and LayerNorm over the last axis of a tensor of any rank ≥ 1.
#pragma once
#include <vector>

#include "core/tensor.h"

namespace attn {

// x (..., N) -> y (..., N), y = exp(x - max) / Σ exp(x - max) per row.
// A row of all -inf gives zeros (fully masked row). NaN/+inf inputs are kNonFinite.
Status softmax(const Tensor& x, Tensor& y);

struct LayerNormOptions {
  float eps = 1e-5f;          // PyTorch's default; the "official paper" tutorial uses 1e-6
  std::vector<float> weight;  // (N) or empty for ones
  std::vector<float> bias;    // (N) or empty for zeros
};

// x (..., N) -> y (..., N), normalised per row with biased variance (as nn.LayerNorm).
Status layer_norm(const Tensor& x, const LayerNormOptions& options, Tensor& y);

}  // namespace attn
