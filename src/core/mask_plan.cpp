#include "core/mask_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "core/rotary.h"

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
    if (causal || window > 0) mask_band(row, col0, real_end, allowed);
  }
  if (additive && has_additive()) {
    for (int j = col0; j < col0 + n; ++j) additive[j - col0] = 0.0f;
    for (const auto& view : additive_views) {
      const float* base = view.floats + row_offset(*this, view, slice, row);
      for (int j = col0; j < real_end; ++j) additive[j - col0] += base[j * view.col_stride];
    }
    if (!alibi.empty()) add_alibi(slice, row, col0, real_end, additive);
  }
}

// allowed[j − col0] = 0 for the keys j in [col0, end) that the causal mask or the window exclude.
void MaskPlan::mask_band(int row, int col0, int end, std::uint8_t* allowed) const {
  const std::int64_t i = position_offset + row;
  auto clear = [&](std::int64_t from, std::int64_t to) {  // keys [from, to) ∩ [col0, end)
    for (std::int64_t j = std::max<std::int64_t>(from, col0); j < std::min<std::int64_t>(to, end); ++j)
      allowed[j - col0] = 0;
  };
  if (causal) clear(i + 1, end);  // j > i
  if (window > 0) {
    clear(col0, i - window + 1);          // i − j >= window
    if (!causal) clear(i + window, end);  // j − i >= window
  }
}

// additive[j − col0] += −m·(i − j) (causal) or −m·|i − j|, m the slope of the slice's head.
void MaskPlan::add_alibi(std::int64_t slice, int row, int col0, int end, float* additive) const {
  const double m = alibi[static_cast<std::size_t>(slice % lead.back())];
  const std::int64_t i = position_offset + row;
  for (int j = col0; j < end; ++j) {
    const std::int64_t d = causal ? i - j : std::llabs(i - j);
    additive[j - col0] += static_cast<float>(-m * static_cast<double>(d));
  }
}

Status set_positions(const PositionOptions& o, bool causal, MaskPlan& plan) {
  auto invalid = [](const std::string& what) { return Status::Error(StatusCode::kInvalidArgument, what); };
  if (o.bottom_right && !causal) return invalid("a bottom-right alignment needs causal attention");
  const std::int64_t aligned = static_cast<std::int64_t>(plan.real_keys) - plan.tq;
  if (o.offset && *o.offset < 0)
    return invalid("positionOffset must be >= 0, got " + std::to_string(*o.offset));
  if (o.offset && o.bottom_right && *o.offset != aligned) {
    return invalid("causal 'bottom-right' places query row 0 at Tk − Tq = " + std::to_string(aligned) +
                   "; positionOffset " + std::to_string(*o.offset) + " contradicts it");
  }
  if (o.window && *o.window < 1)
    return invalid("window must be an integer >= 1, got " + std::to_string(*o.window));
  std::vector<float> paper;
  if (o.alibi_paper) {
    if (plan.lead.empty()) return invalid("alibi needs a head axis: give q as (..., H, T, d)");
    ATTN_RETURN_IF_ERROR(alibi_slopes(static_cast<int>(plan.lead.back()), paper));
  }
  const std::vector<float>& slopes = o.alibi_paper ? paper : o.alibi_slopes;
  if (!slopes.empty()) {
    const std::int64_t heads = plan.lead.empty() ? 0 : plan.lead.back();
    if (static_cast<std::int64_t>(slopes.size()) != heads) {
      return invalid("alibi needs one slope per head: " + std::to_string(heads) + " heads, got " +
                     std::to_string(slopes.size()) + " slopes" +
                     (plan.lead.empty() ? " (q has no head axis: give q as (..., H, T, d))" : ""));
    }
    for (float m : slopes)
      if (!std::isfinite(m)) return invalid("alibi slopes must be finite, got " + format_number(m));
  }
  plan.causal = causal;
  plan.position_offset = o.offset ? *o.offset : (o.bottom_right ? aligned : 0);
  plan.window = o.window ? *o.window : 0;
  plan.alibi = slopes;
  return Status::Ok();
}

}  // namespace attn
