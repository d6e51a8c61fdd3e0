// One row per weight type (ggml's type_traits): every ggml type id a GGUF file may hold, with its
// name, elements and bytes per block and, for the types the library computes with, the entry points
// that read it — the row dequantizer, the exact product and the int8 product — and the block offsets
// of the float16 scales a finiteness check reads. This table is the only list of weight types: the
// core's WeightFormat is a ggml type id with a row here (core/stored_weight.h), and
// scripts/gen-constants.mjs writes src/js/constants.js's GGML_TYPE and WEIGHT_FORMAT from the rows
// below (it parses them: keep one row a line in this literal form). CONTRIBUTING.md, "Add a weight
// type", lists the steps.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/kernels.h"

namespace attn::kernels {

// ggml's type ids (ggml.h enum ggml_type) of the types the kernels name. The gaps are ids ggml
// removed.
enum class GgmlType : int {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kIQ4_NL = 20,
  kBF16 = 30,
};

// ggml's vec_dot_type of a quantized weight type: how the int8 product quantizes the activations
// (quant_int8.h). kNone: the type has no int8 product.
enum class ActivationBlocks { kNone, kQ8_0, kQ8_1, kQ8_K };

// y (k) = the k values the row at x holds, k a whole number of blocks (exact).
using DequantizeRow = void (*)(const void* x, float* y, std::int64_t k);
// C (M, N) = A (M, K) · Wᵀ + bias, W (N, K) stored in ggml type `type`, row j at W + j·ldw_bytes
// (kernels.h linear_nt_quant's contract). The int8 product returns false, writing nothing, where it
// cannot run (linear_nt_int8).
using ExactProduct = void (*)(int M, int N, int K, const float* A, int lda, const void* W,
                              std::size_t ldw_bytes, int type, const float* bias, float* C, int ldc);
using Int8Product = bool (*)(int M, int N, int K, const float* A, int lda, const void* W,
                             std::size_t ldw_bytes, int type, const float* bias, float* C, int ldc);

// One ggml type. `dequantized`: the library computes with it (it is a WeightFormat); then
// `dequantize` and `exact` are set, and `int8` with `activations` where llama.cpp's CPU backend has an
// integer product for it. scale_offsets: the byte offsets, within a block, of its float16 scale fields
// (ggml-common.h: d, and dmin or m; -1: none).
struct GgmlTypeInfo {
  int id;
  const char* name;
  int block_elements;
  int block_bytes;
  bool dequantized;
  DequantizeRow dequantize;
  ExactProduct exact;
  Int8Product int8;
  ActivationBlocks activations;
  int scale_offsets[2];
};

// The row dequantizers of the table (weight_types.cpp: F32 copied, F16 / BF16 widened exactly, the
// block types through quant.h's dequantize_row_*), and the exact products of the 16- and 32-bit
// types (linear_nt, linear_nt_half over W's bytes; the block types use linear_nt_quant).
void f32_to_float(const void* x, float* y, std::int64_t k);
void f16_to_float(const void* x, float* y, std::int64_t k);
void bf16_to_float(const void* x, float* y, std::int64_t k);
void q4_0_to_float(const void* x, float* y, std::int64_t k);
void q4_1_to_float(const void* x, float* y, std::int64_t k);
void q5_0_to_float(const void* x, float* y, std::int64_t k);
void q5_1_to_float(const void* x, float* y, std::int64_t k);
void q8_0_to_float(const void* x, float* y, std::int64_t k);
void q2_k_to_float(const void* x, float* y, std::int64_t k);
void q3_k_to_float(const void* x, float* y, std::int64_t k);
void q4_k_to_float(const void* x, float* y, std::int64_t k);
void q5_k_to_float(const void* x, float* y, std::int64_t k);
void q6_k_to_float(const void* x, float* y, std::int64_t k);
void iq4_nl_to_float(const void* x, float* y, std::int64_t k);
void linear_nt_f32_rows(int M, int N, int K, const float* A, int lda, const void* W, std::size_t ldw_bytes,
                        int type, const float* bias, float* C, int ldc);
void linear_nt_half_rows(int M, int N, int K, const float* A, int lda, const void* W, std::size_t ldw_bytes,
                         int type, const float* bias, float* C, int ldc);

namespace type_table {
constexpr auto kNone = ActivationBlocks::kNone, kQ8_0 = ActivationBlocks::kQ8_0,
               kQ8_1 = ActivationBlocks::kQ8_1, kQ8_K = ActivationBlocks::kQ8_K;
constexpr ExactProduct kQuant = linear_nt_quant, kF32 = linear_nt_f32_rows, kHalf = linear_nt_half_rows;
constexpr Int8Product kInt8 = linear_nt_int8;

// Every ggml type id, in id order: {id, name, block elements, block bytes, dequantized, dequantize,
// exact, int8, activations, scale offsets}.
// clang-format off
inline constexpr GgmlTypeInfo kTypes[] = {
    {0, "F32", 1, 4, true, f32_to_float, kF32, nullptr, kNone, {-1, -1}},
    {1, "F16", 1, 2, true, f16_to_float, kHalf, nullptr, kNone, {-1, -1}},
    {2, "Q4_0", 32, 18, true, q4_0_to_float, kQuant, kInt8, kQ8_0, {0, -1}},
    {3, "Q4_1", 32, 20, true, q4_1_to_float, kQuant, kInt8, kQ8_1, {0, 2}},
    {6, "Q5_0", 32, 22, true, q5_0_to_float, kQuant, kInt8, kQ8_0, {0, -1}},
    {7, "Q5_1", 32, 24, true, q5_1_to_float, kQuant, kInt8, kQ8_1, {0, 2}},
    {8, "Q8_0", 32, 34, true, q8_0_to_float, kQuant, kInt8, kQ8_0, {0, -1}},
    {9, "Q8_1", 32, 36, false, nullptr, nullptr, nullptr, kNone, {-1, -1}},
    {10, "Q2_K", 256, 84, true, q2_k_to_float, kQuant, kInt8, kQ8_K, {80, 82}},
    {11, "Q3_K", 256, 110, true, q3_k_to_float, kQuant, kInt8, kQ8_K, {108, -1}},
    {12, "Q4_K", 256, 144, true, q4_k_to_float, kQuant, kInt8, kQ8_K, {0, 2}},
    {13, "Q5_K", 256, 176, true, q5_k_to_float, kQuant, kInt8, kQ8_K, {0, 2}},
    {14, "Q6_K", 256, 210, true, q6_k_to_float, kQuant, kInt8, kQ8_K, {208, -1}},
    {15, "Q8_K", 256, 292, false, nullptr, nullptr, nullptr, kNone, {-1, -1}},
    {16, "IQ2_XXS", 256, 66, false, nullptr, nullptr, nullptr, kNone, {-1, -1}},
    {17, "IQ2_XS", 256, 74, false, nullptr, nullptr, nullptr, kNone, {-1, -1}},
    {18, "IQ3_XXS", 256, 98, false, nullptr, nullptr, nullptr, kNone, {-1, -1}},
    {19, "IQ1_S", 256, 50, false, nullptr, nullptr, nullptr, kNone, {-1, -1}},
    {20, "IQ4_NL", 32, 18, true, iq4_nl_to_float, kQuant, kInt8, kQ8_0, {0, -1}},
    {21, "IQ3_S", 256, 110, false, nullptr, nullptr, nullptr, kNone, {-1, -1}},
    {22, "IQ2_S", 256, 82, false, nullptr, nullptr, nullptr, kNone, {-1, -1}},
    {23, "IQ4_XS", 256, 136, false, nullptr, nullptr, nullptr, kNone, {-1, -1}},
    {24, "I8", 1, 1, false, nullptr, nullptr, nullptr, kNone, {-1, -1}},
    {25, "I16", 1, 2, false, nullptr, nullptr, nullptr, kNone, {-1, -1}},
    {26, "I32", 1, 4, false, nullptr, nullptr, nullptr, kNone, {-1, -1}},
    {27, "I64", 1, 8, false, nullptr, nullptr, nullptr, kNone, {-1, -1}},
    {28, "F64", 1, 8, false, nullptr, nullptr, nullptr, kNone, {-1, -1}},
    {29, "IQ1_M", 256, 56, false, nullptr, nullptr, nullptr, kNone, {-1, -1}},
    {30, "BF16", 1, 2, true, bf16_to_float, kHalf, nullptr, kNone, {-1, -1}},
    {34, "TQ1_0", 256, 54, false, nullptr, nullptr, nullptr, kNone, {-1, -1}},
    {35, "TQ2_0", 256, 66, false, nullptr, nullptr, nullptr, kNone, {-1, -1}},
    {39, "MXFP4", 32, 17, false, nullptr, nullptr, nullptr, kNone, {-1, -1}},
    {40, "NVFP4", 64, 36, false, nullptr, nullptr, nullptr, kNone, {-1, -1}},
    {41, "Q1_0", 128, 18, false, nullptr, nullptr, nullptr, kNone, {-1, -1}},
};
// clang-format on
constexpr int kCount = static_cast<int>(sizeof kTypes / sizeof kTypes[0]);

// What the rows promise each other: ids ascending; a type is computed with exactly when it has a
// dequantizer and an exact product; an int8 product exactly when it has activation blocks, and
// only for a block type; scale offsets inside the block.
constexpr bool rows_agree() {
  for (int i = 0; i < kCount; ++i) {
    const GgmlTypeInfo& t = kTypes[i];
    if (i > 0 && kTypes[i - 1].id >= t.id) return false;
    if (t.block_elements < 1 || t.block_bytes < 1) return false;
    if (t.dequantized != (t.dequantize != nullptr) || t.dequantized != (t.exact != nullptr)) return false;
    if ((t.int8 != nullptr) != (t.activations != kNone) || (t.int8 && t.block_elements == 1)) return false;
    for (int offset : t.scale_offsets)
      if (offset < -1 || offset + 2 > t.block_bytes) return false;
  }
  return true;
}
static_assert(rows_agree(), "a row of kTypes contradicts itself or is out of id order");
}  // namespace type_table

// Every ggml type id a GGUF file may hold, in id order.
constexpr const GgmlTypeInfo* ggml_types() {
  return type_table::kTypes;
}
constexpr int ggml_type_count() {
  return type_table::kCount;
}
// The row of a type id, or nullptr for an id ggml does not define.
constexpr const GgmlTypeInfo* ggml_type_info(int id) {
  for (const GgmlTypeInfo& t : type_table::kTypes)
    if (t.id == id) return &t;
  return nullptr;
}
// One past the largest id the library computes with.
constexpr int dequantized_id_end() {
  int end = 0;
  for (const GgmlTypeInfo& t : type_table::kTypes)
    if (t.dequantized) end = t.id + 1;
  return end;
}

}  // namespace attn::kernels
