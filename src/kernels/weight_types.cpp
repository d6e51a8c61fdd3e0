// The entry points weight_types.h's rows name: each type's row dequantizer behind one signature,
// and the exact products of the 32- and 16-bit types over a stored matrix's bytes (the block types'
// exact product is linear_nt_quant itself).
#include "kernels/weight_types.h"

#include <cstring>

#include "kernels/kernels.h"
#include "kernels/quant.h"

namespace attn::kernels {

namespace {

// The row dequantizer of a block type: quant.h's typed dequantize_row_* over the bytes at x.
template <typename Block>
void blocks_to_float(void (*dequantize)(const Block*, float*, std::int64_t), const void* x, float* y,
                     std::int64_t k) {
  dequantize(static_cast<const Block*>(x), y, k);
}

HalfFormat half_format_of(int type) {
  return type == static_cast<int>(GgmlType::kF16) ? HalfFormat::kF16 : HalfFormat::kBF16;
}

}  // namespace

void f32_to_float(const void* x, float* y, std::int64_t k) {
  std::memcpy(y, x, static_cast<std::size_t>(k) * sizeof(float));
}
void f16_to_float(const void* x, float* y, std::int64_t k) {
  widen_half(static_cast<int>(k), static_cast<const std::uint16_t*>(x), HalfFormat::kF16, y);
}
void bf16_to_float(const void* x, float* y, std::int64_t k) {
  widen_half(static_cast<int>(k), static_cast<const std::uint16_t*>(x), HalfFormat::kBF16, y);
}
void q4_0_to_float(const void* x, float* y, std::int64_t k) {
  blocks_to_float(dequantize_row_q4_0, x, y, k);
}
void q4_1_to_float(const void* x, float* y, std::int64_t k) {
  blocks_to_float(dequantize_row_q4_1, x, y, k);
}
void q5_0_to_float(const void* x, float* y, std::int64_t k) {
  blocks_to_float(dequantize_row_q5_0, x, y, k);
}
void q5_1_to_float(const void* x, float* y, std::int64_t k) {
  blocks_to_float(dequantize_row_q5_1, x, y, k);
}
void q8_0_to_float(const void* x, float* y, std::int64_t k) {
  blocks_to_float(dequantize_row_q8_0, x, y, k);
}
void q2_k_to_float(const void* x, float* y, std::int64_t k) {
  blocks_to_float(dequantize_row_q2_K, x, y, k);
}
void q3_k_to_float(const void* x, float* y, std::int64_t k) {
  blocks_to_float(dequantize_row_q3_K, x, y, k);
}
void q4_k_to_float(const void* x, float* y, std::int64_t k) {
  blocks_to_float(dequantize_row_q4_K, x, y, k);
}
void q5_k_to_float(const void* x, float* y, std::int64_t k) {
  blocks_to_float(dequantize_row_q5_K, x, y, k);
}
void q6_k_to_float(const void* x, float* y, std::int64_t k) {
  blocks_to_float(dequantize_row_q6_K, x, y, k);
}
void iq4_nl_to_float(const void* x, float* y, std::int64_t k) {
  blocks_to_float(dequantize_row_iq4_nl, x, y, k);
}

// W's rows are float32 (ldw_bytes a multiple of 4): linear_nt reading them where they lie.
void linear_nt_f32_rows(int M, int N, int K, const float* A, int lda, const void* W, std::size_t ldw_bytes,
                        int /*type*/, const float* bias, float* C, int ldc) {
  linear_nt(M, N, K, A, lda, static_cast<const float*>(W), static_cast<int>(ldw_bytes / sizeof(float)), bias,
            C, ldc);
}

// W's rows are float16 or bfloat16 (by `type`): the widening GEMM.
void linear_nt_half_rows(int M, int N, int K, const float* A, int lda, const void* W, std::size_t ldw_bytes,
                         int type, const float* bias, float* C, int ldc) {
  linear_nt_half(M, N, K, A, lda, static_cast<const std::uint16_t*>(W),
                 static_cast<int>(ldw_bytes / sizeof(std::uint16_t)), half_format_of(type), bias, C, ldc);
}

}  // namespace attn::kernels
