// Inference weights kept in their checkpoint's own format: a float16 or bfloat16 matrix stays 16-bit
// in memory (half the bytes of float32) and is widened only inside the GEMM (kernels::linear_nt_half),
// panel by panel, so no widened copy of a model ever exists. float32 matrices are kept once and
// packed where they lie into the GEMM's layout (pack_for_linear: packing a weight per call was ~9%
// of a GPT-2-small forward).
//
//   StoredWeight  owns one tensor's bytes (any rank) in its format;
//   WeightView    a non-owning (rows, cols) matrix over stored bytes, e.g. a block of rows of a fused
//                 projection, which MultiHeadAttention's frozen mode reads its projections through.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace attn {

enum class WeightFormat : int { kF32 = 0, kF16 = 1, kBF16 = 2 };

inline int format_bytes(WeightFormat f) {
  return f == WeightFormat::kF32 ? 4 : 2;
}
const char* format_name(WeightFormat f);  // "F32", "F16", "BF16" as safetensors names them

// W (rows, cols) as nn.Linear keeps it: row r is output r's weights over the inputs.
struct WeightView {
  WeightFormat format = WeightFormat::kF32;
  int rows = 0, cols = 0;
  const void* data = nullptr;  // rows · cols elements of `format`, row-major, no padding
  bool packed = false;         // kF32 only: data is in kernels::pack_weight's layout (rows, cols)
  bool empty() const { return data == nullptr; }
  // Rows [first, first + count) of this matrix. Of a packed matrix only a block starting at a
  // multiple of kernels::packed_weight_panel_rows() and either ending at one or at the last row is a
  // packed matrix; any other block is empty() (StoredWeight::packable says which blocks will work).
  WeightView row_block(int first, int count) const;
  // C (m, rows) with row stride ldc = A (m, cols) with row stride lda · Wᵀ + bias (rows; may be null).
  void linear(int m, const float* a, int lda, const float* bias, float* c, int ldc) const;
  // out (cols) = row r widened to float32.
  void widen_row(int r, float* out) const;
  Tensor widened() const;  // (rows, cols) float32
};

class StoredWeight {
 public:
  // Room for a tensor of `shape` in `format` (zeroed). TOO_LARGE past the memory limit, before
  // allocating. A float32 matrix gets the capacity its packed form needs, in either orientation.
  static Status allocate(const Shape& shape, WeightFormat format, const char* what, StoredWeight& out);
  const Shape& shape() const { return shape_; }
  WeightFormat format() const { return format_; }
  std::int64_t numel() const;
  std::size_t byte_size() const { return static_cast<std::size_t>(numel()) * format_bytes(format_); }
  // The bytes, for the caller to fill with the file's little-endian values.
  void* bytes() { return format_ == WeightFormat::kF32 ? static_cast<void*>(f32_.data()) : half_.data(); }
  const void* bytes() const {
    return format_ == WeightFormat::kF32 ? static_cast<const void*>(f32_.data()) : half_.data();
  }
  // NON_FINITE naming `name` and the flat index of the first inf or NaN.
  Status check_finite(const char* name) const;
  // A 2-D (r, c) tensor becomes (c, r) (GPT-2's Conv1D weights are stored (in, out)); the temporary
  // is this one tensor's size, TOO_LARGE-checked before it is allocated.
  Status transpose();
  // A float32 matrix (rows, cols) rewritten into the GEMM's packed layout in place (its capacity was
  // reserved by allocate/transpose: nothing is reallocated). Read it afterwards through view() only.
  // Other formats and ranks are left as they are.
  void pack_for_linear();
  // Whether row blocks of `block_rows` rows (a fused projection's parts) stay valid once packed.
  static bool packable(int block_rows);
  WeightView view() const;  // the whole tensor as (dim 0, the product of the rest)
  Tensor widened() const;   // float32, same shape

 private:
  Shape shape_;
  WeightFormat format_ = WeightFormat::kF32;
  bool packed_ = false;              // kF32 matrix in pack_weight's layout
  std::vector<float> f32_;           // format kF32
  std::vector<std::uint16_t> half_;  // format kF16 / kBF16 bit patterns
};

}  // namespace attn
