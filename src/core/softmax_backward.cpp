// TEMPORARY (replaced by the wt-ops branch at merge): straightforward placeholders for the
// declarations in softmax_backward.h, correct but not tuned, so that the JS bindings build and their
// tests run before the real implementations land.
#include "core/softmax_backward.h"

#include <cmath>
#include <string>

#include "core/memory_limit.h"

namespace attn {

namespace {

// y and grad_y: well-formed, rank ≥ 1, the same shape, finite; `what` names the forward's input.
Status check_backward_inputs(const Tensor& y, const Tensor& grad_y, const char* what) {
  if (y.rank() < 1) {
    return Status::Error(StatusCode::kShapeMismatch, std::string(what) + " must have at least one axis");
  }
  ATTN_RETURN_IF_ERROR(check_well_formed(y, what));
  ATTN_RETURN_IF_ERROR(check_well_formed(grad_y, "gradOutput"));
  if (grad_y.shape != y.shape) {
    return Status::Error(StatusCode::kShapeMismatch, std::string("gradOutput must have ") + what +
                                                         "'s shape " + shape_to_string(y.shape) + ", got " +
                                                         shape_to_string(grad_y.shape));
  }
  ATTN_RETURN_IF_ERROR(check_allocation(static_cast<std::uint64_t>(y.numel()), what));
  ATTN_RETURN_IF_ERROR(check_finite(y, what));
  return check_finite(grad_y, "gradOutput");
}

}  // namespace

void softmax_backward_row(int n, const float* y, const float* dy, float* dx) {
  float dot = 0.0f;
  for (int j = 0; j < n; ++j) dot += dy[j] * y[j];
  for (int j = 0; j < n; ++j) dx[j] = y[j] * (dy[j] - dot);
}

Status softmax_backward(const Tensor& y, const Tensor& grad_y, Tensor& grad_x) {
  ATTN_RETURN_IF_ERROR(check_backward_inputs(y, grad_y, "softmax output"));
  const int n = y.dim(-1);
  const std::int64_t rows = y.numel() / n;
  Tensor out = Tensor::zeros(y.shape);
  for (std::int64_t r = 0; r < rows; ++r) {
    softmax_backward_row(n, y.data.data() + r * n, grad_y.data.data() + r * n, out.data.data() + r * n);
  }
  grad_x = std::move(out);
  return Status::Ok();
}

// dx = rstd · (dy·γ − mean(dy·γ) − x̂ · mean(dy·γ · x̂)); dγ += Σ_rows dy · x̂; dβ += Σ_rows dy.
// dgamma / dbeta may be null; they are accumulated into (the caller zeroes them).
void layer_norm_backward_rows(std::int64_t rows, int n, const float* x, const float* gamma, float eps,
                              const float* dy, float* dx, bool accumulate_dx, float* dgamma, float* dbeta) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    const float* dyr = dy + r * n;
    float* dxr = dx + r * n;
    float mean = 0.0f, var = 0.0f;
    for (int j = 0; j < n; ++j) mean += xr[j];
    mean /= n;
    for (int j = 0; j < n; ++j) var += (xr[j] - mean) * (xr[j] - mean);
    const float rstd = 1.0f / std::sqrt(var / n + eps);
    float mean_g = 0.0f, mean_gx = 0.0f;
    for (int j = 0; j < n; ++j) {
      const float xhat = (xr[j] - mean) * rstd;
      const float g = dyr[j] * (gamma ? gamma[j] : 1.0f);
      mean_g += g;
      mean_gx += g * xhat;
      if (dgamma) dgamma[j] += dyr[j] * xhat;
      if (dbeta) dbeta[j] += dyr[j];
    }
    mean_g /= n;
    mean_gx /= n;
    for (int j = 0; j < n; ++j) {
      const float d = rstd * (dyr[j] * (gamma ? gamma[j] : 1.0f) - mean_g - (xr[j] - mean) * rstd * mean_gx);
      dxr[j] = accumulate_dx ? dxr[j] + d : d;
    }
  }
}

Status layer_norm_backward(const Tensor& x, const Tensor& grad_y, const LayerNormOptions& options,
                           LayerNormGrads& grads) {
  ATTN_RETURN_IF_ERROR(check_backward_inputs(x, grad_y, "layerNorm input"));
  Tensor y;  // the placeholder's shortcut to the forward's checks of eps, weight and bias
  ATTN_RETURN_IF_ERROR(layer_norm(x, options, y));
  const int n = x.dim(-1);
  LayerNormGrads out;
  out.x = Tensor::zeros(x.shape);
  if (!options.weight.empty()) out.weight = Tensor::zeros({n});
  if (!options.bias.empty()) out.bias = Tensor::zeros({n});
  layer_norm_backward_rows(x.numel() / n, n, x.data.data(),
                           options.weight.empty() ? nullptr : options.weight.data(), options.eps,
                           grad_y.data.data(), out.x.data.data(), false,
                           out.weight.data.empty() ? nullptr : out.weight.data.data(),
                           out.bias.data.empty() ? nullptr : out.bias.data.data());
  grads = std::move(out);
  return Status::Ok();
}

}  // namespace attn
