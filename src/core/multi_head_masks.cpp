// The masks of MultiHeadAttention::forward, turned into a MaskPlan over (B, H, Tq, Tk).
#include <string>

#include "core/attention_engine.h"
#include "core/multi_head.h"

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
    return Status::Error(StatusCode::kInvalidMask, std::string(what) + " must be (Tq, Tk) or (B·H, Tq, Tk), got " +
                                                       shape_to_string(shape));
  }
  return Status::Ok();
}

}  // namespace

Status mha_masks_to_plan(const MhaForwardOptions& options, MaskPlan& plan, int b, int h) {
  if (options.mask) {
    ATTN_RETURN_IF_ERROR(check_well_formed(*options.mask, "mask"));
    BoolTensor reshaped{{}, {}};
    ATTN_RETURN_IF_ERROR(per_head_shape(options.mask->shape, b, h, "mask", reshaped.shape));
    MaskView view;
    ATTN_RETURN_IF_ERROR(make_mask_view(plan, reshaped.shape, "mask", view));
    view.bools = options.mask->data.data();
    plan.bool_views.push_back(std::move(view));
  }
  if (options.additive_mask) {
    ATTN_RETURN_IF_ERROR(check_well_formed(*options.additive_mask, "additiveMask"));
    ATTN_RETURN_IF_ERROR(check_additive_mask_values(*options.additive_mask, "additiveMask"));
    Shape shape;
    ATTN_RETURN_IF_ERROR(per_head_shape(options.additive_mask->shape, b, h, "additiveMask", shape));
    MaskView view;
    ATTN_RETURN_IF_ERROR(make_mask_view(plan, shape, "additiveMask", view));
    view.floats = options.additive_mask->data.data();
    plan.additive_views.push_back(std::move(view));
  }
  if (options.key_padding_mask) {
    const BoolTensor& kpm = *options.key_padding_mask;
    ATTN_RETURN_IF_ERROR(check_well_formed(kpm, "keyPaddingMask"));
    if (kpm.rank() != 2 || kpm.shape[0] != b || kpm.shape[1] != plan.real_keys) {
      return Status::Error(StatusCode::kInvalidMask,
                           "keyPaddingMask must have shape (B=" + std::to_string(b) +
                               ", Tk=" + std::to_string(plan.real_keys) + "), got " +
                               shape_to_string(kpm.shape));
    }
    MaskView view;
    ATTN_RETURN_IF_ERROR(make_mask_view(plan, {b, 1, 1, plan.real_keys}, "keyPaddingMask", view));
    view.bools = kpm.data.data();
    plan.bool_views.push_back(std::move(view));
  }
  return Status::Ok();
}

}  // namespace attn
