// The scalar twin of the exact mode's fused GEMV (kernels.h gemv_quant_scalar): each block of a
// weight row dequantized by its type's dequantizer (quant_scalar.cpp, the specification) into a
// block-sized buffer on the stack, then multiplied into sixteen partial sums per activation row.
// The order is the SIMD128 version's (quant_gemv_exact_simd128.cpp): element k goes to sum k mod 16
// in k order; then t_l = (s_l + s_{4+l}) + (s_{8+l} + s_{12+l}) and the row's sum is
// (t_0 + t_2) + (t_1 + t_3). With SIMD128's separate multiply and add the two give the same bits.
#include "kernels/kernels.h"
#include "kernels/quant.h"

namespace attn::kernels {

namespace {
constexpr int kLanes = 16;

float reduce_lanes(const float s[kLanes]) {
  float t[4];
  for (int l = 0; l < 4; ++l) t[l] = (s[l] + s[4 + l]) + (s[8 + l] + s[12 + l]);
  return (t[0] + t[2]) + (t[1] + t[3]);
}
}  // namespace

bool gemv_quant_scalar(int M, int N, int K, const float* A, int lda, const void* W, std::size_t ldw_bytes,
                       int type, const float* bias, float* C, int ldc) {
  const GgmlTypeInfo* info = ggml_type_info(type);
  if (info == nullptr || !info->dequantized || info->block_elements == 1 || M > kQuantGemvRows) return false;
  const int block = info->block_elements, blocks = K / block;
  float w[kQK_K];                      // one block, dequantized
  float sums[kQuantGemvRows][kLanes];  // per activation row: the 16 partial sums
  for (int j = 0; j < N; ++j) {
    const char* row = static_cast<const char*>(W) + static_cast<std::ptrdiff_t>(j) * ldw_bytes;
    for (int i = 0; i < M; ++i)
      for (int l = 0; l < kLanes; ++l) sums[i][l] = 0.0f;
    for (int b = 0; b < blocks; ++b) {
      info->dequantize(row + static_cast<std::ptrdiff_t>(b) * info->block_bytes, w, block);
      for (int i = 0; i < M; ++i) {
        const float* a = A + static_cast<std::ptrdiff_t>(i) * lda + static_cast<std::ptrdiff_t>(b) * block;
        for (int k = 0; k < block; ++k) sums[i][k % kLanes] = sums[i][k % kLanes] + w[k] * a[k];
      }
    }
    for (int i = 0; i < M; ++i) {
      const float sum = reduce_lanes(sums[i]);
      C[static_cast<std::ptrdiff_t>(i) * ldc + j] = bias ? sum + bias[j] : sum;
    }
  }
  return true;
}

}  // namespace attn::kernels
