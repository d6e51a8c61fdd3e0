// Inference weights kept in their checkpoint's own format: a float16 or bfloat16 matrix stays 16-bit
// in memory (half the bytes of float32) and is widened only inside the GEMM (kernels::linear_nt_half),
// panel by panel, so no widened copy of a model ever exists. A quantized matrix (GGUF's Q4_K, Q8_0 …)
// keeps its ggml blocks as the file stores them and is dequantized the same way, panel by panel
// (kernels::linear_nt_quant). float32 matrices are kept once and
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
#include "kernels/weight_types.h"

namespace attn {

// A weight format is the ggml type its bytes are in: F32, F16, BF16 as safetensors and GGUF store
// them, the rest ggml's block formats (quant.h). Its number is ggml's type id and its facts (name,
// block, bytes, the products that read it) are that type's row of the one table,
// kernels/weight_types.h; the formats are the rows marked `dequantized` (WeightFormat::kQ8_K, say,
// names a type the core does not keep: known_format is false). The names are ggml's type names
// ("Q4_K", "IQ4_NL"), the keys the loaders look up (WEIGHT_FORMAT in src/js/constants.js).
using WeightFormat = kernels::GgmlType;
// Every format number is below this (not every number below it is a format: known_format).
constexpr int kWeightFormatCount = kernels::dequantized_id_end();

// f's row of the type table, or nullptr when f is not a format (a number from JS may be anything).
constexpr const kernels::GgmlTypeInfo* format_info(WeightFormat f) {
  const kernels::GgmlTypeInfo* t = kernels::ggml_type_info(static_cast<int>(f));
  return t != nullptr && t->dequantized ? t : nullptr;
}
inline bool known_format(WeightFormat f) {
  return format_info(f) != nullptr;
}
// Kept in blocks of more than one element (ggml's block formats).
inline bool is_quantized(WeightFormat f) {
  return known_format(f) && format_info(f)->block_elements > 1;
}
// Bytes per element of F32 (4), F16 and BF16 (2); 0 for a quantized format (see stored_bytes).
inline int format_bytes(WeightFormat f) {
  return known_format(f) && !is_quantized(f) ? format_info(f)->block_bytes : 0;
}
const char* format_name(WeightFormat f);    // ggml's name ("F32", "BF16", "Q4_K"); "?" for an unknown f
int format_ggml_type(WeightFormat f);       // the ggml type id (f's number); -1 for an unknown f
int format_block_elements(WeightFormat f);  // elements per block: 1 for F32/F16/BF16, 32 or 256
// Bytes `elements` consecutive values take in f (blocks rounded up; a whole number of blocks is
// what StoredWeight::allocate accepts).
std::uint64_t stored_bytes(WeightFormat f, std::uint64_t elements);
// The flat index of the first inf or NaN of `elements` values of f at `bytes`, -1 for none; quantized:
// of the first element of the first block whose float16 scale is not finite (StoredWeight::check_finite).
std::int64_t first_non_finite(WeightFormat f, const void* bytes, std::int64_t elements);

// W (rows, cols) as nn.Linear keeps it: row r is output r's weights over the inputs.
struct WeightView {
  WeightFormat format = WeightFormat::kF32;
  int rows = 0, cols = 0;
  const void* data = nullptr;  // rows · cols elements of `format`, row-major, no padding (quantized:
                               // each row cols / block elements blocks)
  bool packed = false;         // kF32 only: data is in kernels::pack_weight's layout (rows, cols)
  // Quantized only: linear() in the int8 activation mode (kernels/quant_int8.h: activations
  // quantized per block as llama.cpp does, integer dot products) instead of the exact one.
  bool int8_activations = false;
  bool empty() const { return data == nullptr; }
  std::size_t row_bytes() const;  // bytes of one row as stored (not meaningful when packed)
  // Rows [first, first + count) of this matrix. Of a packed matrix only a block starting at a
  // multiple of kernels::packed_weight_panel_rows() and either ending at one or at the last row is a
  // packed matrix; any other block is empty() (StoredWeight::packable says which blocks will work).
  WeightView row_block(int first, int count) const;
  // C (m, rows) with row stride ldc = A (m, cols) with row stride lda · Wᵀ + bias (rows; may be null).
  void linear(int m, const float* a, int lda, const float* bias, float* c, int ldc) const;
  // Several linears of the same A (each view's cols the same), e.g. a layer's q, k, v: as one job of
  // the pool where kernels::linear_nt_quant_group takes them (quantized views in one activation
  // mode, decoding's few rows), else one by one. The same bits as a linear call per view.
  struct Output {
    const WeightView* view;
    const float* bias;
    float* c;
    int ldc;
  };
  static void linear_many(int m, const float* a, int lda, const Output* outputs, int count);
  // The input gradient of linear: dx (m, cols), row stride lddx, = dy (m, rows), row stride lddy, · W
  // (added to dx when accumulate). Any format: a float32 matrix as stored is read by the GEMM itself;
  // a packed, 16-bit or quantized one is widened kBackwardPanelRows rows at a time into a panel, the
  // panels' products added in row order (the same bits at every thread count).
  void linear_backward_input(int m, const float* dy, int lddy, float* dx, int lddx, bool accumulate) const;
  static constexpr int kBackwardPanelRows = 64;
  // out (cols) = row r widened to float32.
  void widen_row(int r, float* out) const;
  Tensor widened() const;  // (rows, cols) float32
};

class StoredWeight {
 public:
  // Room for a tensor of `shape` in `format` (zeroed). TOO_LARGE past the memory limit, before
  // allocating. A float32 matrix gets the capacity its packed form needs, in either orientation.
  // INVALID_ARGUMENT for an unknown format, or a quantized one whose last dimension is not a
  // whole number of blocks.
  static Status allocate(const Shape& shape, WeightFormat format, const char* what, StoredWeight& out);
  const Shape& shape() const { return shape_; }
  WeightFormat format() const { return format_; }
  std::int64_t numel() const;
  std::size_t byte_size() const {
    return static_cast<std::size_t>(stored_bytes(format_, static_cast<std::uint64_t>(numel())));
  }
  // The bytes, for the caller to fill with the file's little-endian values (quantized: its blocks).
  void* bytes() { return format_ == WeightFormat::kF32 ? static_cast<void*>(f32_.data()) : words_.data(); }
  const void* bytes() const {
    return format_ == WeightFormat::kF32 ? static_cast<const void*>(f32_.data()) : words_.data();
  }
  // NON_FINITE naming `name` and the flat index of the first inf or NaN; for a quantized tensor, of
  // the first element of the first block whose float16 scale (d, dmin or m) is not finite.
  Status check_finite(const char* name) const;
  // A 2-D (r, c) tensor becomes (c, r) (GPT-2's Conv1D weights are stored (in, out)); the temporary
  // is this one tensor's size, TOO_LARGE-checked before it is allocated. INVALID_ARGUMENT for a
  // quantized tensor (its blocks run along rows; GGUF never stores a matrix transposed).
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
  bool packed_ = false;  // kF32 matrix in pack_weight's layout

  std::vector<float> f32_;            // format kF32
  std::vector<std::uint16_t> words_;  // kF16 / kBF16 bit patterns, or a quantized format's blocks
                                      // (every block size is even: 2-byte aligned float16 fields)
};

}  // namespace attn
