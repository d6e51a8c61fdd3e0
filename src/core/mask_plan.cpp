#include "core/mask_plan.h"

#include <string>

namespace attn {

Status make_mask_view(const MaskPlan& plan, const Shape& mask_shape, const char* what, MaskView& view) {
  Shape target = plan.lead;  // target: (lead..., Tq, real_keys)
  target.push_back(plan.tq);
  target.push_back(plan.real_keys);
  const int rank = static_cast<int>(mask_shape.size());
  const int target_rank = static_cast<int>(target.size());
  auto mismatch = [&] {
    return Status::Error(StatusCode::kInvalidMask,
                         std::string(what) + " of shape " + shape_to_string(mask_shape) +
                             " does not broadcast to the scores " + shape_to_string(target));
  };
  if (rank < 1 || rank > target_rank) return mismatch();
  // Strides of the mask itself (row-major), then aligned to the target from the right.
  std::vector<std::int64_t> strides(target_rank, 0);
  std::int64_t stride = 1;
  for (int a = rank - 1; a >= 0; --a) {
    const int t = a + target_rank - rank;  // the target axis this mask axis lines up with
    if (mask_shape[a] != target[t] && mask_shape[a] != 1) return mismatch();
    strides[t] = mask_shape[a] == 1 ? 0 : stride;
    stride *= mask_shape[a];
  }
  view.lead_strides.assign(strides.begin(), strides.end() - 2);
  view.row_stride = strides[target_rank - 2];
  view.col_stride = strides[target_rank - 1];
  return Status::Ok();
}

Status add_bool_mask(MaskPlan& plan, const BoolTensor& mask, const Shape& view_shape, const char* what) {
  ATTN_RETURN_IF_ERROR(check_well_formed(mask, what));
  MaskView view;
  ATTN_RETURN_IF_ERROR(make_mask_view(plan, view_shape, what, view));
  view.bools = mask.data.data();
  plan.bool_views.push_back(std::move(view));
  return Status::Ok();
}

Status add_additive_mask(MaskPlan& plan, const Tensor& mask, const Shape& view_shape, const char* what) {
  ATTN_RETURN_IF_ERROR(check_well_formed(mask, what));
  ATTN_RETURN_IF_ERROR(check_additive_mask_values(mask, what));
  MaskView view;
  ATTN_RETURN_IF_ERROR(make_mask_view(plan, view_shape, what, view));
  view.floats = mask.data.data();
  plan.additive_views.push_back(std::move(view));
  return Status::Ok();
}

namespace {

// Offset of the (slice, row) start inside a view's data.
std::int64_t row_offset(const MaskPlan& plan, const MaskView& view, std::int64_t slice, int row) {
  std::int64_t offset = 0;
  for (int a = static_cast<int>(plan.lead.size()) - 1; a >= 0; --a) {
    offset += (slice % plan.lead[a]) * view.lead_strides[a];
    slice /= plan.lead[a];
  }
  return offset + row * view.row_stride;
}

}  // namespace

void MaskPlan::fill_row(std::int64_t slice, int row, int col0, int n, std::uint8_t* allowed,
                        float* additive) const {
  // Keys at or past real_keys are extra keys: always allowed, nothing added.
  const int real_end = col0 + n < real_keys ? col0 + n : real_keys;
  if (allowed && has_bool()) {
    for (int j = col0; j < col0 + n; ++j) allowed[j - col0] = 1;
    for (const auto& view : bool_views) {
      const std::uint8_t* base = view.bools + row_offset(*this, view, slice, row);
      for (int j = col0; j < real_end; ++j) {
        if (!base[j * view.col_stride]) allowed[j - col0] = 0;
      }
    }
    if (causal) {
      for (int j = col0 > row + 1 ? col0 : row + 1; j < real_end; ++j) allowed[j - col0] = 0;
    }
  }
  if (additive && has_additive()) {
    for (int j = col0; j < col0 + n; ++j) additive[j - col0] = 0.0f;
    for (const auto& view : additive_views) {
      const float* base = view.floats + row_offset(*this, view, slice, row);
      for (int j = col0; j < real_end; ++j) additive[j - col0] += base[j * view.col_stride];
    }
  }
}

}  // namespace attn
