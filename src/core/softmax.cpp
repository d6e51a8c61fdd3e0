#include "core/softmax.h"

#include <string>

#include "core/memory_limit.h"
#include "kernels/kernels.h"

namespace attn {

namespace {

Status check_last_axis_input(const Tensor& x, const char* what) {
  if (x.rank() < 1) {
    return Status::Error(StatusCode::kShapeMismatch, std::string(what) + " must have at least one axis");
  }
  ATTN_RETURN_IF_ERROR(check_well_formed(x, what));
  ATTN_RETURN_IF_ERROR(check_allocation(static_cast<std::uint64_t>(x.numel()), what));
  return Status::Ok();
}

}  // namespace

Status softmax(const Tensor& x, Tensor& y) {
  ATTN_RETURN_IF_ERROR(check_last_axis_input(x, "softmax input"));
  // -inf is allowed (a masked logit); NaN and +inf are not.
  ATTN_RETURN_IF_ERROR(check_additive_mask_values(x, "softmax input"));
  const int n = x.dim(-1);
  const std::int64_t rows = x.numel() / n;
  Tensor out = Tensor::zeros(x.shape);  // (..., N)
  for (std::int64_t r = 0; r < rows; ++r) {
    kernels::softmax_row(n, x.data.data() + r * n, out.data.data() + r * n);
  }
  y = std::move(out);
  return Status::Ok();
}

Status layer_norm(const Tensor& x, const LayerNormOptions& options, Tensor& y) {
  ATTN_RETURN_IF_ERROR(check_last_axis_input(x, "layerNorm input"));
  ATTN_RETURN_IF_ERROR(check_finite(x, "layerNorm input"));
  const int n = x.dim(-1);
  if (!(options.eps > 0.0f)) {
    return Status::Error(StatusCode::kInvalidArgument,
                         "layerNorm eps must be > 0, got " + format_number(options.eps));
  }
  for (const auto* param : {&options.weight, &options.bias}) {
    if (!param->empty() && static_cast<int>(param->size()) != n) {
      return Status::Error(StatusCode::kShapeMismatch,
                           std::string("layerNorm ") + (param == &options.weight ? "weight" : "bias") +
                               " has " + std::to_string(param->size()) + " values but the last axis is " +
                               std::to_string(n));
    }
  }
  const float* gamma = options.weight.empty() ? nullptr : options.weight.data();
  const float* beta = options.bias.empty() ? nullptr : options.bias.data();
  const std::int64_t rows = x.numel() / n;
  Tensor out = Tensor::zeros(x.shape);  // (..., N)
  for (std::int64_t r = 0; r < rows; ++r) {
    kernels::layer_norm_row(n, x.data.data() + r * n, gamma, beta, options.eps, out.data.data() + r * n);
  }
  y = std::move(out);
  return Status::Ok();
}

}  // namespace attn
