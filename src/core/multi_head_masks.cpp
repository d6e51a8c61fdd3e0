// The masks of MultiHeadAttention::forward, turned into a MaskPlan over (B, H, Tq, Tk).
#include "core/multi_head_masks.h"

#include <string>

namespace attn {

namespace {

// (Tq, Tk) broadcasts as is; (B·H, Tq, Tk) is read as (B, H, Tq, Tk) — the same memory.
Status per_head_shape(const Shape& shape, int b, int h, const char* what, Shape& out) {
  out = shape;
  if (shape.size() == 3) {
    if (shape[0] != b * h) {
      return Status::Error(StatusCode::kInvalidMask,
                           std::string(what) + " of shape " + shape_to_string(shape) +
                               " must be (Tq, Tk) or (B·H = " + std::to_string(b * h) + ", Tq, Tk)");
    }
    out = {b, h, shape[1], shape[2]};
  } else if (shape.size() != 2) {
    return Status::Error(
        StatusCode::kInvalidMask,
        std::string(what) + " must be (Tq, Tk) or (B·H, Tq, Tk), got " + shape_to_string(shape));
  }
  return Status::Ok();
}

}  // namespace

Status mha_masks_to_plan(const MhaForwardOptions& options, MaskPlan& plan, int b, int h) {
  Shape shape;
  if (options.mask) {
    ATTN_RETURN_IF_ERROR(per_head_shape(options.mask->shape, b, h, "mask", shape));
    ATTN_RETURN_IF_ERROR(add_bool_mask(plan, *options.mask, shape, "mask"));
  }
  if (options.additive_mask) {
    ATTN_RETURN_IF_ERROR(per_head_shape(options.additive_mask->shape, b, h, "additiveMask", shape));
    ATTN_RETURN_IF_ERROR(add_additive_mask(plan, *options.additive_mask, shape, "additiveMask"));
  }
  if (options.key_padding_mask) {
    const BoolTensor& kpm = *options.key_padding_mask;
    if (kpm.rank() != 2 || kpm.shape[0] != b || kpm.shape[1] != plan.real_keys) {
      return Status::Error(StatusCode::kInvalidMask,
                           "keyPaddingMask must have shape (B=" + std::to_string(b) + ", Tk=" +
                               std::to_string(plan.real_keys) + "), got " + shape_to_string(kpm.shape));
    }
    // (B, Tk) read as (B, 1, 1, Tk): one row per batch, broadcast over heads and queries.
    ATTN_RETURN_IF_ERROR(add_bool_mask(plan, kpm, {b, 1, 1, plan.real_keys}, "keyPaddingMask"));
  }
  return Status::Ok();
}

}  // namespace attn
