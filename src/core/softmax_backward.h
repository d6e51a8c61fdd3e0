// Backward of softmax and LayerNorm over the last axis (the forwards are in softmax.h).
// The tensor forms validate and allocate; the row forms are the loops the model code calls on its
// own buffers (already validated there).
#pragma once
#include <cstdint>

#include "core/softmax.h"
#include "core/tensor.h"

namespace attn {

// One row: y = softmax(x) (n); dx (n) = y ⊙ (dy − Σ_j dy_j·y_j). A fully masked row (y all 0) gives dx = 0.
// dx may alias dy.
void softmax_backward_row(int n, const float* y, const float* dy, float* dx);
// y, grad_y (..., N) same shape → grad_x (..., N). Shapes checked (kShapeMismatch), values finite
// (kNonFinite).
Status softmax_backward(const Tensor& y, const Tensor& grad_y, Tensor& grad_x);

struct LayerNormGrads {
  Tensor x;       // (..., N)
  Tensor weight;  // (N), only when options.weight is non-empty (else left empty)
  Tensor bias;    // (N), only when options.bias is non-empty (else left empty)
};
// Backward of layer_norm(x, options) (biased variance, eps as in options). Mean and 1/std are recomputed
// from x in double-free float math that matches layer_norm's forward. Shapes/finite checked.
Status layer_norm_backward(const Tensor& x, const Tensor& grad_y, const LayerNormOptions& options,
                           LayerNormGrads& grads);
// Row-level form for the model code: rows of width n, contiguous (row stride n).
// gamma may be null (= ones). dx (rows, n) is written, or added to when accumulate_dx.
// dgamma (n), dbeta (n) are ADDED to (either may be null).
// dx may alias dy (each row's sums are taken before its dx is written).
void layer_norm_backward_rows(std::int64_t rows, int n, const float* x, const float* gamma, float eps,
                              const float* dy, float* dx, bool accumulate_dx, float* dgamma, float* dbeta);

}  // namespace attn
