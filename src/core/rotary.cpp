#include "core/rotary.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <string>

#include "core/memory_limit.h"

namespace attn {

namespace {

Status invalid(std::string message) {
  return Status::Error(StatusCode::kInvalidArgument, std::move(message));
}

// One head's pairs (m, m + half): the GPT-NeoX / Llama rotate_half layout. `s` already carries the
// sign of the direction (negated for the backward).
void rotate_half_pairs(float* x, int half, const float* c, const float* s, float sign) {
  float* xb = x + half;  // second member of every pair
  for (int m = 0; m < half; ++m) {
    const float a = x[m], b = xb[m], sm = sign * s[m];
    x[m] = a * c[m] - b * sm;
    xb[m] = b * c[m] + a * sm;
  }
}

// One head's pairs (2m, 2m + 1): the GPT-J / RoFormer layout.
void rotate_interleaved_pairs(float* x, int half, const float* c, const float* s, float sign) {
  for (int m = 0; m < half; ++m) {
    const float a = x[2 * m], b = x[2 * m + 1], sm = sign * s[m];
    x[2 * m] = a * c[m] - b * sm;
    x[2 * m + 1] = b * c[m] + a * sm;
  }
}

// The forward and the backward share every check; only the direction and the names differ.
Status apply(const Tensor& x, const RotaryOptions& options, bool inverse, const char* what, Tensor& out) {
  ATTN_RETURN_IF_ERROR(check_well_formed(x, what));
  if (x.rank() < 2) {
    return Status::Error(
        StatusCode::kShapeMismatch,
        std::string(what) + " must have rank >= 2 ((..., T, d)), got shape " + shape_to_string(x.shape));
  }
  ATTN_RETURN_IF_ERROR(check_finite(x, what));
  const int t = x.dim(-2), d = x.dim(-1);
  ATTN_RETURN_IF_ERROR(check_rotary(options, d));
  const int dims = rotary_dims(options, d);
  // The output plus the cos and sin tables (t, dims/2) each.
  const std::uint64_t table = static_cast<std::uint64_t>(t) * static_cast<std::uint64_t>(dims);
  ATTN_RETURN_IF_ERROR(check_allocation(static_cast<std::uint64_t>(x.numel()) + table,
                                        inverse ? "rotary backward" : "rotary"));

  RotaryTable tab;
  make_rotary_table(options, d, options.offset, t, tab);
  Tensor y = x;  // y: (..., T, d), rotated in place; a copy first so that &out == &x is fine
  const std::int64_t seq_floats = static_cast<std::int64_t>(t) * d;
  const std::int64_t seqs = x.numel() / seq_floats;
  // rotate_rows counts sequences in int: hand it at most INT_MAX at a time.
  for (std::int64_t n0 = 0; n0 < seqs; n0 += INT_MAX) {
    const int n = static_cast<int>(std::min<std::int64_t>(INT_MAX, seqs - n0));
    rotate_rows(y.data.data() + n0 * seq_floats, n, t, d, 1, d, tab, inverse);
  }
  // |y| <= |x_a| + |x_b|: inputs near FLT_MAX can still overflow.
  ATTN_RETURN_IF_ERROR(
      check_computed(y.data.data(), y.data.size(),
                     inverse ? "rotary backward: the rotated gradient" : "rotary: the rotated rows"));
  out = std::move(y);
  return Status::Ok();
}

}  // namespace

Status check_rotary(const RotaryOptions& options, int d) {
  if (d < 1) return invalid("rotary head size d must be >= 1, got " + std::to_string(d));
  if (options.dims < 0) {
    return invalid("rotary dims must be >= 0 (0 = the whole head), got " + std::to_string(options.dims));
  }
  if (options.dims > d) {
    return invalid("rotary dims " + std::to_string(options.dims) +
                   " exceeds the head size d = " + std::to_string(d));
  }
  const int dims = rotary_dims(options, d);
  if (dims % 2 != 0) {
    return invalid("rotary dims must be even, got " + std::to_string(dims) +
                   (options.dims == 0 ? " (dims 0 means the head size d)" : ""));
  }
  if (!(options.base > 0.0) || !std::isfinite(options.base)) {
    return invalid("rotary base must be a finite number > 0, got " + format_number(options.base));
  }
  if (!(options.scale > 0.0) || !std::isfinite(options.scale)) {
    return invalid("rotary scale must be a finite number > 0, got " + format_number(options.scale));
  }
  if (options.offset < 0) return invalid("rotary offset must be >= 0, got " + std::to_string(options.offset));
  if (options.offset >= kMaxRotaryOffset) {
    return invalid("rotary offset must be < 2^53 (positions must be exact in double), got " +
                   std::to_string(options.offset));
  }
  return Status::Ok();
}

void make_rotary_table(const RotaryOptions& options, int d, std::int64_t first, int count,
                       RotaryTable& table) {
  const int dims = rotary_dims(options, d), half = dims / 2;
  table.dims = dims;
  table.style = options.style;
  table.first = first;
  table.count = count;
  const std::size_t n = static_cast<std::size_t>(count) * static_cast<std::size_t>(half);
  table.cos.assign(n, 0.0f);                 // cos: (count, dims/2)
  table.sin.assign(n, 0.0f);                 // sin: (count, dims/2)
  std::vector<double>& theta = table.theta;  // theta: (dims/2), θ_m = base^(−2m/dims)
  theta.resize(static_cast<std::size_t>(half));
  const bool given = options.inv_freq.size() == static_cast<std::size_t>(half);
  for (int m = 0; m < half; ++m)
    theta[m] = given ? options.inv_freq[m] : std::pow(options.base, -2.0 * m / dims);
  for (int i = 0; i < count; ++i) {
    // Double angles: at p ~ 2^31 a float p·θ would be off by up to 128 rad; double keeps ~1e-6 rad.
    const double p = static_cast<double>(first + i);
    for (int m = 0; m < half; ++m) {
      const double angle = p * theta[m];
      table.cos[static_cast<std::size_t>(i) * half + m] = static_cast<float>(options.scale * std::cos(angle));
      table.sin[static_cast<std::size_t>(i) * half + m] = static_cast<float>(options.scale * std::sin(angle));
    }
  }
}

Status check_query_temperature(const QueryTemperature& t) {
  if (!std::isfinite(t.beta)) return invalid("the query temperature's beta must be finite");
  if (t.active() && t.floor < 1)
    return invalid("the query temperature needs a floor scale >= 1 (original_max_position_embeddings), got " +
                   std::to_string(t.floor));
  return Status::Ok();
}

double query_temperature(const QueryTemperature& t, std::int64_t position) {
  if (!t.active()) return 1.0;
  return 1.0 + t.beta * std::log(1.0 + static_cast<double>(position / t.floor));
}

void temper_rows(float* x, int seqs, int t, int ld, int width, const QueryTemperature& temperature,
                 std::int64_t first) {
  if (!temperature.active()) return;
  for (int r = 0; r < t; ++r) {
    const float tau = static_cast<float>(query_temperature(temperature, first + r));
    for (int n = 0; n < seqs; ++n) {
      float* row = x + (static_cast<std::int64_t>(n) * t + r) * ld;
      for (int i = 0; i < width; ++i) row[i] *= tau;
    }
  }
}

void rotate_rows(float* x, int seqs, int t, int ld, int heads, int d, const RotaryTable& table,
                 bool inverse) {
  const int half = table.dims / 2;
  const float sign = inverse ? -1.0f : 1.0f;  // the backward rotates by −angle
  for (int n = 0; n < seqs; ++n) {
    for (int r = 0; r < t; ++r) {
      float* row = x + (static_cast<std::ptrdiff_t>(n) * t + r) * ld;          // row: (heads, d), stride d
      const float* c = table.cos.data() + static_cast<std::size_t>(r) * half;  // c: (dims/2)
      const float* s = table.sin.data() + static_cast<std::size_t>(r) * half;  // s: (dims/2)
      for (int h = 0; h < heads; ++h) {
        float* head = row + static_cast<std::ptrdiff_t>(h) * d;
        if (table.style == RotaryStyle::kHalf) {
          rotate_half_pairs(head, half, c, s, sign);
        } else {
          rotate_interleaved_pairs(head, half, c, s, sign);
        }
      }
    }
  }
}

Status apply_rotary(const Tensor& x, const RotaryOptions& options, Tensor& out) {
  return apply(x, options, false, "rotary input", out);
}

Status apply_rotary_backward(const Tensor& grad_out, const RotaryOptions& options, Tensor& grad_x) {
  return apply(grad_out, options, true, "rotary grad_output", grad_x);
}

Status alibi_slopes(int num_heads, std::vector<float>& out) {
  if (num_heads < 1) return invalid("alibi num_heads must be >= 1, got " + std::to_string(num_heads));
  ATTN_RETURN_IF_ERROR(check_allocation(static_cast<std::uint64_t>(num_heads), "alibi slopes"));
  int p = 1;  // the largest power of two <= num_heads
  while (p <= num_heads / 2) p *= 2;
  std::vector<float> slopes(static_cast<std::size_t>(num_heads));  // slopes: (num_heads)
  for (int h = 0; h < p; ++h) slopes[h] = static_cast<float>(std::exp2(-8.0 * (h + 1) / p));
  // Not a power of two: get_slopes(2P)[0::2], the slopes of 2P heads that fall between the first P.
  for (int j = 0; j < num_heads - p; ++j) {
    slopes[p + j] = static_cast<float>(std::exp2(-8.0 * (2 * j + 1) / (2.0 * p)));
  }
  out = std::move(slopes);
  return Status::Ok();
}

}  // namespace attn
