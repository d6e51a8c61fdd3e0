// StoredWeight and WeightView (stored_weight.h): one checkpoint tensor in its own format, and the
// matrix products that read 16-bit and quantized weights through the widening GEMM.
#include "core/stored_weight.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "core/memory_limit.h"
#include "kernels/kernels.h"

namespace attn {

namespace {

// f's row of the type table (f known).
const kernels::GgmlTypeInfo& type_info(WeightFormat f) {
  return *format_info(f);
}

// float32 elements (the memory limit's unit) that `bytes` take, rounded up.
std::uint64_t as_floats(std::uint64_t bytes) {
  return (bytes + 3) / 4;
}

// Floats a float32 (r, c) matrix may need: its packed form as (r, c) or, once transposed, as (c, r).
std::uint64_t packed_room(int r, int c) {
  return static_cast<std::uint64_t>(
      std::max(kernels::packed_weight_floats(r, c), kernels::packed_weight_floats(c, r)));
}

}  // namespace

const char* format_name(WeightFormat f) {
  return known_format(f) ? type_info(f).name : "?";
}

int format_ggml_type(WeightFormat f) {
  return known_format(f) ? static_cast<int>(f) : -1;
}

int format_block_elements(WeightFormat f) {
  return known_format(f) ? type_info(f).block_elements : 1;
}

std::uint64_t stored_bytes(WeightFormat f, std::uint64_t elements) {
  if (!known_format(f)) return 0;
  const kernels::GgmlTypeInfo& t = type_info(f);
  const std::uint64_t be = static_cast<std::uint64_t>(t.block_elements);
  return (elements + be - 1) / be * static_cast<std::uint64_t>(t.block_bytes);
}

std::size_t WeightView::row_bytes() const {
  return static_cast<std::size_t>(stored_bytes(format, static_cast<std::uint64_t>(cols)));
}

WeightView WeightView::row_block(int first, int count) const {
  const int p = kernels::packed_weight_panel_rows();
  if (packed && (first % p != 0 || (count % p != 0 && first + count != rows))) return WeightView{};
  WeightView v = *this;
  v.rows = count;
  v.data = static_cast<const char*>(data) + static_cast<std::ptrdiff_t>(first) * row_bytes();
  return v;
}

// Through the row of W's type (kernels/weight_types.h): its int8 product when asked for and the
// type has one, else its exact product.
void WeightView::linear(int m, const float* a, int lda, const float* bias, float* c, int ldc) const {
  if (packed) {
    kernels::linear_nt_packed(m, rows, cols, a, lda, static_cast<const float*>(data), bias, c, ldc);
    return;
  }
  const kernels::GgmlTypeInfo& t = type_info(format);
  if (int8_activations && t.int8 != nullptr &&
      t.int8(m, rows, cols, a, lda, data, row_bytes(), t.id, bias, c, ldc))
    return;
  t.exact(m, rows, cols, a, lda, data, row_bytes(), t.id, bias, c, ldc);
}

void WeightView::linear_many(int m, const float* a, int lda, const Output* outputs, int count) {
  kernels::QuantProduct products[kernels::kMaxQuantGroup];
  bool together = count <= kernels::kMaxQuantGroup;
  for (int p = 0; p < count && together; ++p) {
    const WeightView& v = *outputs[p].view;
    together = is_quantized(v.format) && !v.packed && v.cols == outputs[0].view->cols &&
               v.int8_activations == outputs[0].view->int8_activations;
    products[p] = {v.rows,          v.data,       v.row_bytes(), static_cast<int>(v.format),
                   outputs[p].bias, outputs[p].c, outputs[p].ldc};
  }
  if (together && kernels::linear_nt_quant_group(m, outputs[0].view->cols, a, lda, products, count,
                                                 outputs[0].view->int8_activations))
    return;
  for (int p = 0; p < count; ++p)
    outputs[p].view->linear(m, a, lda, outputs[p].bias, outputs[p].c, outputs[p].ldc);
}

void WeightView::widen_row(int r, float* out) const {
  if (packed)
    kernels::packed_weight_row(cols, static_cast<const float*>(data), r, out);
  else
    type_info(format).dequantize(
        static_cast<const char*>(data) + static_cast<std::ptrdiff_t>(r) * row_bytes(), out, cols);
}

void WeightView::linear_backward_input(int m, const float* dy, int lddy, float* dx, int lddx,
                                       bool accumulate) const {
  if (m < 1 || rows < 1 || cols < 1) return;
  if (format == WeightFormat::kF32 && !packed) {
    kernels::gemm_nn(m, cols, rows, dy, lddy, static_cast<const float*>(data), cols, dx, lddx, accumulate);
    return;
  }
  const int panel_rows = std::min(rows, kBackwardPanelRows);
  std::vector<float> panel(static_cast<std::size_t>(panel_rows) * cols);  // (panel_rows, cols) widened
  for (int r0 = 0; r0 < rows; r0 += panel_rows) {
    const int n = std::min(panel_rows, rows - r0);
    for (int r = 0; r < n; ++r) widen_row(r0 + r, panel.data() + static_cast<std::ptrdiff_t>(r) * cols);
    kernels::gemm_nn(m, cols, n, dy + r0, lddy, panel.data(), cols, dx, lddx, accumulate || r0 > 0);
  }
}

Tensor WeightView::widened() const {
  Tensor t = Tensor::zeros({rows, cols});
  for (int r = 0; r < rows; ++r) widen_row(r, t.data.data() + static_cast<std::ptrdiff_t>(r) * cols);
  return t;
}

namespace {

// INVALID_ARGUMENT unless `format` is known and, when quantized, the last dimension of `shape` is a
// whole number of its blocks.
Status check_format(const Shape& shape, WeightFormat format, const char* what) {
  if (!known_format(format))
    return Status::Error(StatusCode::kInvalidArgument, std::string(what) + ": unknown weight format " +
                                                           std::to_string(static_cast<int>(format)));
  const int block = format_block_elements(format);
  if (block > 1 && (shape.empty() || shape.back() % block != 0))
    return Status::Error(StatusCode::kInvalidArgument,
                         std::string(what) + ": a " + format_name(format) +
                             " tensor's rows must be a whole number of " + std::to_string(block) +
                             "-element blocks, got shape " + shape_to_string(shape));
  return Status::Ok();
}

}  // namespace

Status StoredWeight::allocate(const Shape& shape, WeightFormat format, const char* what, StoredWeight& out) {
  ATTN_RETURN_IF_ERROR(check_format(shape, format, what));
  std::uint64_t n = 1;
  for (int d : shape) {
    if (d < 0)
      return Status::Error(StatusCode::kInvalidArgument, std::string(what) + ": a negative dimension");
    n *= static_cast<std::uint64_t>(d);
    if (n > (1ull << 40)) break;  // far past any limit; keeps the product from overflowing
  }
  const bool matrix = format == WeightFormat::kF32 && shape.size() == 2 && n <= (1ull << 40);
  const std::uint64_t room = matrix ? packed_room(shape[0], shape[1]) : 0;
  ATTN_RETURN_IF_ERROR(check_allocation(matrix ? room : as_floats(stored_bytes(format, n)), what));
  StoredWeight w;
  w.shape_ = shape;
  w.format_ = format;
  if (format == WeightFormat::kF32) {
    if (matrix) w.f32_.reserve(static_cast<std::size_t>(room));
    w.f32_.assign(static_cast<std::size_t>(n), 0.0f);
  } else {
    w.words_.assign(static_cast<std::size_t>(stored_bytes(format, n) / 2), 0);
  }
  out = std::move(w);
  return Status::Ok();
}

std::int64_t StoredWeight::numel() const {
  return shape_numel(shape_);
}

// The flat index of the first inf or NaN of `elements` values of f at `bytes` (-1: none). A quantized
// format: of the first element of the first block whose float16 scale fields are inf or NaN, the
// only non-finite values blocks can hold (their quants are small integers).
std::int64_t first_non_finite(WeightFormat f, const void* bytes, std::int64_t elements) {
  if (is_quantized(f)) {
    const kernels::GgmlTypeInfo& t = type_info(f);
    const auto* u8 = static_cast<const std::uint8_t*>(bytes);
    const std::int64_t blocks = elements / t.block_elements;
    for (std::int64_t b = 0; b < blocks; ++b)
      for (int offset : t.scale_offsets) {
        if (offset < 0) continue;
        const std::uint8_t* h = u8 + b * t.block_bytes + offset;  // little-endian float16
        if ((h[1] & 0x7c) == 0x7c) return b * t.block_elements;
      }
    return -1;
  }
  if (f == WeightFormat::kF32) {
    const auto* v = static_cast<const float*>(bytes);
    for (std::int64_t i = 0; i < elements; ++i)
      if (!std::isfinite(v[i])) return i;
    return -1;
  }
  // all exponent bits set: inf or NaN (5 bits in float16, 8 in bfloat16)
  const std::uint16_t exp_mask = f == WeightFormat::kF16 ? 0x7c00 : 0x7f80;
  const auto* w = static_cast<const std::uint16_t*>(bytes);
  for (std::int64_t i = 0; i < elements; ++i)
    if ((w[i] & exp_mask) == exp_mask) return i;
  return -1;
}

Status StoredWeight::check_finite(const char* name) const {
  const std::int64_t bad = first_non_finite(format_, bytes(), numel());
  if (bad < 0) return Status::Ok();
  if (is_quantized(format_))
    return Status::Error(StatusCode::kNonFinite, std::string(name) + " holds a non-finite scale in its " +
                                                     format_name(format_) + " block at flat index " +
                                                     std::to_string(bad));
  return Status::Error(StatusCode::kNonFinite,
                       std::string(name) + " holds a non-finite value at flat index " + std::to_string(bad));
}

namespace {

template <typename T>
void transpose_into(const std::vector<T>& src, int r, int c, std::vector<T>& dst) {
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j)
      dst[static_cast<std::size_t>(j) * r + i] = src[static_cast<std::size_t>(i) * c + j];
}

}  // namespace

Status StoredWeight::transpose() {
  if (shape_.size() != 2)
    return Status::Error(StatusCode::kInvalidArgument, "only a 2-D weight can be transposed");
  if (is_quantized(format_))
    return Status::Error(StatusCode::kInvalidArgument,
                         std::string("a ") + format_name(format_) + " weight cannot be transposed");
  ATTN_RETURN_IF_ERROR(check_allocation(as_floats(byte_size()), "transposing a weight"));
  const int r = shape_[0], c = shape_[1];
  if (packed_) return Status::Error(StatusCode::kInvalidArgument, "a packed weight cannot be transposed");
  if (format_ == WeightFormat::kF32) {
    std::vector<float> t;
    t.reserve(static_cast<std::size_t>(packed_room(r, c)));  // room to pack the (c, r) result in place
    t.resize(f32_.size());
    transpose_into(f32_, r, c, t);
    f32_.swap(t);
  } else {
    std::vector<std::uint16_t> t(words_.size());
    transpose_into(words_, r, c, t);
    words_.swap(t);
  }
  shape_ = {c, r};
  return Status::Ok();
}

void StoredWeight::pack_for_linear() {
  if (format_ != WeightFormat::kF32 || shape_.size() != 2 || packed_) return;
  const int r = shape_[0], c = shape_[1];
  f32_.resize(static_cast<std::size_t>(kernels::packed_weight_floats(r, c)));  // within the reserved capacity
  kernels::pack_weight_in_place(r, c, f32_.data());
  packed_ = true;
}

bool StoredWeight::packable(int block_rows) {
  return block_rows % kernels::packed_weight_panel_rows() == 0;
}

WeightView StoredWeight::view() const {
  WeightView v;
  v.format = format_;
  v.packed = packed_;
  v.rows = shape_.empty() ? 1 : shape_[0];
  v.cols = v.rows == 0 ? 0 : static_cast<int>(numel() / v.rows);
  v.data = bytes();
  return v;
}

Tensor StoredWeight::widened() const {
  if (packed_) return view().widened();
  Tensor t = Tensor::zeros(shape_);
  if (format_ == WeightFormat::kF32)
    t.data = f32_;
  else  // 16-bit values or the rows' blocks, back to back: one long row
    type_info(format_).dequantize(words_.data(), t.data.data(), numel());
  return t;
}

}  // namespace attn
