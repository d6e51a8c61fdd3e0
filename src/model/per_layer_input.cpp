// PerLayerInput (per_layer_input.h): the per-layer inputs and each layer's branch.
#include "model/per_layer_input.h"

#include <cmath>

#include "kernels/kernels.h"

namespace attn {

PerLayerInput::PerLayerInput(int layers, int width, int hidden, double eps)
    : proj_norm(NormBlock::Kind::kRms, width, eps), layers_(layers), width_(width), hidden_(hidden) {
  this->layers.resize(static_cast<std::size_t>(layers));
  for (Layer& L : this->layers) L.post_norm = NormBlock(NormBlock::Kind::kRms, hidden, eps);
}

void PerLayerInput::inputs(std::int64_t n, const std::int32_t* ids, const float* x, std::vector<float>& pl,
                           std::vector<float>& proj) const {
  const int lp = layers_ * width_;
  pl.resize(static_cast<std::size_t>(n) * lp);    // (N, L·P)
  proj.resize(static_cast<std::size_t>(n) * lp);  // (N, L·P)
  // 1. the context part: RMSNorm_P of W_model x / √E, each layer's P values its own row
  model_proj.linear(static_cast<int>(n), x, hidden_, nullptr, proj.data(), lp);
  const float inv_sqrt_e = 1.0f / std::sqrt(static_cast<float>(hidden_));
  kernels::scale_vec(static_cast<int>(proj.size()), proj.data(), inv_sqrt_e, proj.data());
  proj_norm.forward(n * layers_, proj.data(), proj.data());
  // 2. the token part: the table's rows × √P; 3. (context + token) / √2
  const float sqrt_p = std::sqrt(static_cast<float>(width_)), inv_sqrt2 = 1.0f / std::sqrt(2.0f);
  for (std::int64_t r = 0; r < n; ++r) {
    float* row = pl.data() + r * lp;
    table.widen_row(ids[r], row);
    const float* context = proj.data() + r * lp;
    for (int i = 0; i < lp; ++i) row[i] = (context[i] + row[i] * sqrt_p) * inv_sqrt2;
  }
}

void PerLayerInput::branch(int l, std::int64_t n, const float* x, const std::vector<float>& pl,
                           std::vector<float>& g, std::vector<float>& y, float* out) const {
  const Layer& L = layers[static_cast<std::size_t>(l)];
  const int lp = layers_ * width_;
  g.resize(static_cast<std::size_t>(n) * width_);   // (N, P)
  y.resize(static_cast<std::size_t>(n) * hidden_);  // (N, E)
  L.gate.linear(static_cast<int>(n), x, hidden_, nullptr, g.data(), width_);
  for (std::int64_t r = 0; r < n; ++r) {
    float* gr = g.data() + r * width_;
    kernels::gelu_tanh_row(width_, gr, gr);
    const float* in = pl.data() + r * lp + static_cast<std::int64_t>(l) * width_;
    for (int i = 0; i < width_; ++i) gr[i] *= in[i];
  }
  L.proj.linear(static_cast<int>(n), g.data(), width_, nullptr, y.data(), hidden_);
  L.post_norm.forward(n, y.data(), out);
}

}  // namespace attn
