// Rotary position embeddings (RoPE) and ALiBi slopes: the position schemes of modern attention.
//
// RoPE (Su et al., RoFormer): row t of a sequence sits at position p = offset + t. For the pairs
// m = 0 … dims/2 − 1, θ_m = base^(−2m/dims) and the angle p·θ_m is computed in double (positions
// reach 2^31, where a float angle would be off by whole turns); cos and sin are then rounded to
// float and the rotation itself runs in float32:
//   y_a = x_a·cos − x_b·sin,  y_b = x_b·cos + x_a·sin
// with (a, b) = (m, m + dims/2) in the `half` style (GPT-NeoX / Llama rotate_half) and
// (2m, 2m + 1) in the `interleaved` style (GPT-J / RoFormer). Features dims … d − 1 pass through
// (partial rotary). With `scale` s ≠ 1 (Phi-3's LongRoPE attention factor, which transformers
// multiplies into cos and sin) the rotated pairs are also scaled by s: y = s·R·x. The map is a scaled
// rotation, so its backward is its transpose s·Rᵀ, the rotation by −angle with the same table.
#pragma once
#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace attn {

enum class RotaryStyle { kHalf = 0, kInterleaved = 1 };

struct RotaryOptions {
  double base = 10000.0;
  RotaryStyle style = RotaryStyle::kHalf;
  int dims = 0;             // features rotated per head; 0 = all of d
  std::int64_t offset = 0;  // position of row 0
  // When it holds dims/2 values: θ_m per pair instead of base^(−2m/dims) (Llama 3's scaled
  // frequencies, computed by the model that needs them).
  std::vector<double> inv_freq;
  // Multiplies cos and sin (in double, before they are rounded to float): the rotated features are
  // scaled by it, the features past dims are not (transformers' attention_scaling of LongRoPE).
  double scale = 1.0;
};

// Positions must stay exact in double (and offset + T must not overflow): offset < 2^53.
constexpr std::int64_t kMaxRotaryOffset = std::int64_t{1} << 53;

// INVALID_ARGUMENT naming the problem: d < 1, dims < 0, dims > d, dims (or d when dims is 0) odd,
// base not finite or <= 0, scale not finite or <= 0, offset < 0 or >= kMaxRotaryOffset. `d` is the head size.
Status check_rotary(const RotaryOptions& options, int d);

// The rotated feature count: options.dims, or d when it is 0.
inline int rotary_dims(const RotaryOptions& options, int d) {
  return options.dims == 0 ? d : options.dims;
}

// cos/sin per (position, pair) for `count` positions starting at `first`.
struct RotaryTable {
  int dims = 0;
  RotaryStyle style = RotaryStyle::kHalf;
  std::int64_t first = 0;
  int count = 0;
  std::vector<float> cos, sin;  // each (count, dims/2)
  std::vector<double> theta;    // (dims/2): θ_m, kept so that a table refilled allocates nothing
};

// Fills `table` for positions first … first + count − 1 (options must pass check_rotary(options, d)).
void make_rotary_table(const RotaryOptions& options, int d, std::int64_t first, int count,
                       RotaryTable& table);

// In place on a strided buffer: `seqs` sequences of `t` rows; row r of sequence n starts at
// x + (n·t + r)·ld (ld in floats, ld >= heads·d); each row holds `heads` heads of size d at
// x_row + h·d. Row r uses table entry r, i.e. sits at position table.first + r: the table must cover
// t positions (table.count >= t) and table.dims <= d. inverse = true applies the backward (rotation
// by −angle).
void rotate_rows(float* x, int seqs, int t, int ld, int heads, int d, const RotaryTable& table, bool inverse);

// Tensor API: x (..., T, d) (rank >= 2), row t at offset + t, every leading index its own sequence.
// Errors: the tensor's (well formed, rank >= 2: SHAPE_MISMATCH, finite: NON_FINITE), check_rotary's,
// TOO_LARGE over the memory limit.
Status apply_rotary(const Tensor& x, const RotaryOptions& options, Tensor& out);
// The gradient of x given the gradient of apply_rotary's output (same options): grad_x (..., T, d).
Status apply_rotary_backward(const Tensor& grad_out, const RotaryOptions& options, Tensor& grad_x);

// Llama 4's attention temperature (Ministral 3's llama_4_scaling_beta; llama.cpp's
// attention.temperature_scale): after RoPE, the query at position p is multiplied by
//   τ(p) = 1 + beta · ln(1 + ⌊p / floor⌋)   (in double, rounded to float once per row),
// the keys are not. beta 0 = none. Its backward multiplies the query's gradient by the same τ(p).
struct QueryTemperature {
  double beta = 0;
  std::int64_t floor = 0;  // original_max_position_embeddings; >= 1 when beta != 0
  bool active() const { return beta != 0; }
};
// INVALID_ARGUMENT: beta not finite, or beta != 0 with floor < 1.
Status check_query_temperature(const QueryTemperature& t);
double query_temperature(const QueryTemperature& t, std::int64_t position);
// In place on rows laid out as rotate_rows' (seqs sequences of t rows, stride ld, `width` features
// each): row r × τ(first + r). Nothing when !temperature.active().
void temper_rows(float* x, int seqs, int t, int ld, int width, const QueryTemperature& temperature,
                 std::int64_t first);

// ALiBi (Press et al.) head slopes, the paper's get_slopes(H): for H a power of two
// m_h = 2^(−8(h+1)/H); otherwise get_slopes(P) for P the largest power of two below H, followed by
// 2^(−8(2j+1)/(2P)) for j = 0 … H−P−1 (every other slope of get_slopes(2P)). Computed in double,
// returned as float. num_heads < 1 is INVALID_ARGUMENT.
Status alibi_slopes(int num_heads, std::vector<float>& out);

}  // namespace attn
