// MaskPlan: every mask of one attention call (boolean, additive, key padding, causal), viewed as
// broadcast over the logical score shape (lead..., Tq, Tk), without materialising that shape.
// The engine asks it for one row segment at a time.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "core/tensor.h"

namespace attn {

// One mask tensor broadcast (numpy rules, trailing-aligned) over (lead..., Tq, real_keys).
struct MaskView {
  const std::uint8_t* bools = nullptr;  // exactly one of bools / floats is set
  const float* floats = nullptr;
  std::vector<std::int64_t> lead_strides;  // one per lead axis; 0 where broadcast
  std::int64_t row_stride = 0;             // 0 where broadcast over queries
  std::int64_t col_stride = 0;             // 0 where broadcast over keys
};

struct MaskPlan {
  Shape lead;         // leading axes, e.g. (B, H); the number of slices is their product
  int tq = 0;         // queries per slice
  int tk = 0;         // keys per slice, including extra keys (bias_k, zero attention)
  int real_keys = 0;  // masks and causal cover keys [0, real_keys); extra keys are never masked
  // Positions: query row r is at i = position_offset + r, key column c at j = c (a KV cache's keys
  // included). Causal, the window and ALiBi are functions of (i, j), never materialised.
  bool causal = false;  // key j allowed for query i iff j <= i
  std::int64_t position_offset = 0;
  int window = 0;            // > 0: allowed iff 0 <= i − j < window (causal), |i − j| < window (not)
  std::vector<float> alibi;  // per head of the innermost lead axis: −m·(i − j) causal, −m·|i − j| not
  std::vector<MaskView> bool_views;
  std::vector<MaskView> additive_views;

  bool has_bool() const { return causal || window > 0 || !bool_views.empty(); }
  bool has_additive() const { return !additive_views.empty() || !alibi.empty(); }
  std::int64_t slices() const { return shape_numel(lead); }

  // For keys [col0, col0 + n) of (slice, row): allowed[j] (1 = may attend) when allowed != null and
  // has_bool(); additive[j] (sum of additive masks) when additive != null and has_additive().
  void fill_row(std::int64_t slice, int row, int col0, int n, std::uint8_t* allowed, float* additive) const;
  // additive[j − col0] += the ALiBi bias of (slice, row) for keys j in [col0, end), end <= real_keys.
  void add_alibi(std::int64_t slice, int row, int col0, int end, float* additive) const;

 private:
  void mask_band(int row, int col0, int end, std::uint8_t* allowed) const;
};

// Where the queries sit and what they may see, beyond the mask tensors (attention.h documents them).
struct PositionOptions {
  bool bottom_right = false;           // causal aligned so that the last query sees the last key
  std::optional<std::int64_t> offset;  // position of query row 0; default 0, or Tk − Tq bottom-right
  std::optional<int> window;           // sliding window, >= 1
  std::vector<float> alibi_slopes;     // one per head (the innermost lead axis); empty = no ALiBi
  bool alibi_paper = false;            // ALiBi with the paper's slopes for the head count (rotary.h)
};

// Checks `o` against plan (tq, real_keys, lead set) and sets causal, position_offset, window and
// alibi. INVALID_ARGUMENT names the problem: bottom-right without causal, an offset < 0 or one that
// contradicts bottom-right, a window < 1, slopes not one per head or not finite.
Status set_positions(const PositionOptions& o, bool causal, MaskPlan& plan);

// Builds the view of a mask of `mask_shape` over (plan.lead..., plan.tq, plan.real_keys).
// kInvalidMask names `what` and both shapes when the mask does not broadcast.
Status make_mask_view(const MaskPlan& plan, const Shape& mask_shape, const char* what, MaskView& view);

// Checks a mask (well formed; additive values not NaN/+inf) and adds it to plan, read with
// `view_shape` (its own shape, or a reshape of the same memory such as (B·H, …) → (B, H, …)).
Status add_bool_mask(MaskPlan& plan, const BoolTensor& mask, const Shape& view_shape, const char* what);
Status add_additive_mask(MaskPlan& plan, const Tensor& mask, const Shape& view_shape, const char* what);

}  // namespace attn
