#include "core/softmax_backward.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/memory_limit.h"
#include "kernels/layer_norm_stats.h"
#include "kernels/parallel.h"

namespace attn {

namespace {

// `a` and `b` are well-formed tensors of rank ≥ 1 with the same shape.
Status check_pair(const Tensor& a, const char* a_name, const Tensor& b, const char* b_name) {
  for (const auto& [t, name] : {std::pair{&a, a_name}, std::pair{&b, b_name}}) {
    if (t->rank() < 1) {
      return Status::Error(StatusCode::kShapeMismatch, std::string(name) + " must have at least one axis");
    }
    ATTN_RETURN_IF_ERROR(check_well_formed(*t, name));
  }
  if (a.shape != b.shape) {
    return Status::Error(StatusCode::kShapeMismatch, std::string(a_name) + " has shape " +
                                                         shape_to_string(a.shape) + " but " + b_name +
                                                         " has shape " + shape_to_string(b.shape));
  }
  ATTN_RETURN_IF_ERROR(check_finite(a, a_name));
  ATTN_RETURN_IF_ERROR(check_finite(b, b_name));
  return Status::Ok();
}

// The affine parameters of a LayerNorm with last axis n: empty or n finite values each.
Status check_layer_norm_params(const LayerNormOptions& options, int n) {
  if (!(options.eps > 0.0f)) {
    return Status::Error(StatusCode::kInvalidArgument,
                         "layerNorm backward: eps must be > 0, got " + format_number(options.eps));
  }
  for (const auto* param : {&options.weight, &options.bias}) {
    const char* name = param == &options.weight ? "weight" : "bias";
    if (param->empty()) continue;
    if (static_cast<int>(param->size()) != n) {
      return Status::Error(StatusCode::kShapeMismatch, std::string("layerNorm backward: ") + name + " has " +
                                                           std::to_string(param->size()) +
                                                           " values but the last axis is " +
                                                           std::to_string(n));
    }
    for (size_t i = 0; i < param->size(); ++i) {
      if (!std::isfinite((*param)[i])) {
        return Status::Error(StatusCode::kNonFinite, std::string("layerNorm backward: ") + name +
                                                         " is not finite at index " + std::to_string(i));
      }
    }
  }
  return Status::Ok();
}

// One row of the LayerNorm backward. Pass 1 takes mean(g) and mean(g·xhat) with g = dy·γ and adds the
// parameter gradients; pass 2 writes dx = rstd·(g − mean(g) − xhat·mean(g·xhat)).
// dx of one row from its statistics s (the scalar forward's own, kernels/layer_norm_stats.h, so x̂
// here is its x̂). dγ and dβ are summed over the rows apart (layer_norm_backward_rows).
void layer_norm_dx_row(int n, const float* x, const kernels::LayerNormRowStats& s, const float* gamma,
                       const float* dy, float* dx, bool accumulate_dx) {
  float sum_g = 0.0f;
  float sum_g_xhat = 0.0f;
  for (int j = 0; j < n; ++j) {
    const float xhat = kernels::layer_norm_normalised(x[j], s);
    const float g = gamma ? dy[j] * gamma[j] : dy[j];
    sum_g += g;
    sum_g_xhat += g * xhat;
  }
  const float mean_g = sum_g / static_cast<float>(n);
  const float mean_g_xhat = sum_g_xhat / static_cast<float>(n);
  for (int j = 0; j < n; ++j) {
    const float xhat = kernels::layer_norm_normalised(x[j], s);
    const float g = gamma ? dy[j] * gamma[j] : dy[j];
    const float d = static_cast<float>(s.rstd) * (g - mean_g - xhat * mean_g_xhat);
    dx[j] = accumulate_dx ? dx[j] + d : d;
  }
}

}  // namespace

void softmax_backward_row(int n, const float* y, const float* dy, float* dx) {
  // The dot product first: dx may overwrite dy afterwards, element by element.
  float dot = 0.0f;
  for (int j = 0; j < n; ++j) dot += dy[j] * y[j];
  for (int j = 0; j < n; ++j) dx[j] = y[j] * (dy[j] - dot);
}

Status softmax_backward(const Tensor& y, const Tensor& grad_y, Tensor& grad_x) {
  ATTN_RETURN_IF_ERROR(check_pair(y, "softmax backward y", grad_y, "softmax backward gradOutput"));
  ATTN_RETURN_IF_ERROR(check_allocation(static_cast<std::uint64_t>(y.numel()), "softmax backward"));
  const int n = y.dim(-1);
  const std::int64_t rows = y.numel() / n;
  Tensor out = Tensor::zeros(y.shape);  // (..., N)
  for (std::int64_t r = 0; r < rows; ++r) {
    softmax_backward_row(n, y.data.data() + r * n, grad_y.data.data() + r * n, out.data.data() + r * n);
  }
  grad_x = std::move(out);
  return Status::Ok();
}

Status layer_norm_backward(const Tensor& x, const Tensor& grad_y, const LayerNormOptions& options,
                           LayerNormGrads& grads) {
  ATTN_RETURN_IF_ERROR(check_pair(x, "layerNorm backward x", grad_y, "layerNorm backward gradOutput"));
  const int n = x.dim(-1);
  ATTN_RETURN_IF_ERROR(check_layer_norm_params(options, n));
  ATTN_RETURN_IF_ERROR(check_allocation(
      static_cast<std::uint64_t>(x.numel()) + 2u * static_cast<std::uint64_t>(n), "layerNorm backward"));
  const bool has_weight = !options.weight.empty();
  const bool has_bias = !options.bias.empty();
  LayerNormGrads out;
  out.x = Tensor::zeros(x.shape);                   // (..., N)
  if (has_weight) out.weight = Tensor::zeros({n});  // (N)
  if (has_bias) out.bias = Tensor::zeros({n});      // (N)
  layer_norm_backward_rows(x.numel() / n, n, x.data.data(), has_weight ? options.weight.data() : nullptr,
                           options.eps, grad_y.data.data(), out.x.data.data(), false,
                           has_weight ? out.weight.data.data() : nullptr,
                           has_bias ? out.bias.data.data() : nullptr);
  grads = std::move(out);
  return Status::Ok();
}

void layer_norm_backward_rows(std::int64_t rows, int n, const float* x, const float* gamma, float eps,
                              const float* dy, float* dx, bool accumulate_dx, float* dgamma, float* dbeta) {
  // Two parallel passes (docs/threads.md), each output element computed by one thread in the serial
  // order: 1. the row statistics and dx, split over rows; 2. dγ and dβ, split over columns, each
  // column summed over the rows in row order. The statistics are kept between the passes (allocated
  // here, on the calling thread: workers never allocate).
  std::vector<kernels::LayerNormRowStats> stats(static_cast<std::size_t>(rows));  // (rows)
  kernels::parallel_items(rows, 8 * static_cast<std::int64_t>(n), [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      const std::int64_t offset = r * n;
      stats[static_cast<std::size_t>(r)] = kernels::layer_norm_row_stats(n, x + offset, eps);
      layer_norm_dx_row(n, x + offset, stats[static_cast<std::size_t>(r)], gamma, dy + offset, dx + offset,
                        accumulate_dx);
    }
  });
  if (!dgamma && !dbeta) return;
  kernels::parallel_items(n, 4 * rows, [&](std::int64_t j0, std::int64_t j1) {
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * n;    // xr: (n) row r
      const float* dyr = dy + r * n;  // dyr: (n) row r
      const kernels::LayerNormRowStats& s = stats[static_cast<std::size_t>(r)];
      for (std::int64_t j = j0; j < j1; ++j) {
        if (dgamma) dgamma[j] += dyr[j] * kernels::layer_norm_normalised(xr[j], s);
        if (dbeta) dbeta[j] += dyr[j];
      }
    }
  });
}

}  // namespace attn
