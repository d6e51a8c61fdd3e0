// TEMPORARY (replaced by the wt-ops branch at merge): the backward of softmax and LayerNorm over the
// last axis. The declarations are the wt-ops contract; the implementations in softmax_backward.cpp are
// simple placeholders so the JS bindings (src/wasm/bindings_backward.cpp) build before it lands.
#pragma once
#include <cstdint>

#include "core/softmax.h"
#include "core/tensor.h"

namespace attn {

void softmax_backward_row(int n, const float* y, const float* dy, float* dx);
Status softmax_backward(const Tensor& y, const Tensor& grad_y, Tensor& grad_x);
struct LayerNormGrads { Tensor x; Tensor weight; Tensor bias; };  // weight/bias only when options had them
Status layer_norm_backward(const Tensor& x, const Tensor& grad_y, const LayerNormOptions& options, LayerNormGrads& grads);
void layer_norm_backward_rows(std::int64_t rows, int n, const float* x, const float* gamma, float eps,
                              const float* dy, float* dx, bool accumulate_dx, float* dgamma, float* dbeta);

}  // namespace attn
