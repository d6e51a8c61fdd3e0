// The unsuffixed kernel names the core calls, bound at build time: the SIMD128 versions when the
// compiler targets WebAssembly SIMD128 (-msimd128), the scalar twins otherwise (native builds,
// and the scalar wasm build the benchmark compares against). Plain forwarding calls: no function
// pointers, so the optimiser can inline them away.
#include "kernels/kernels.h"

#if defined(__wasm_simd128__)
#define ATTN_KERNEL(name) name##_simd128
#else
#define ATTN_KERNEL(name) name##_scalar
#endif

namespace attn::kernels {

void gemm_nn(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
             bool accumulate) {
  ATTN_KERNEL(gemm_nn)(M, N, K, A, lda, B, ldb, C, ldc, accumulate);
}

void gemm_nt(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
             bool accumulate) {
  ATTN_KERNEL(gemm_nt)(M, N, K, A, lda, B, ldb, C, ldc, accumulate);
}

void gemm_tn(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
             bool accumulate) {
  ATTN_KERNEL(gemm_tn)(M, N, K, A, lda, B, ldb, C, ldc, accumulate);
}

void linear_nt(int M, int N, int K, const float* A, int lda, const float* W, int ldw, const float* bias,
               float* C, int ldc) {
  ATTN_KERNEL(linear_nt)(M, N, K, A, lda, W, ldw, bias, C, ldc);
}

void gelu_tanh_row(int n, const float* x, float* y) {
  ATTN_KERNEL(gelu_tanh_row)(n, x, y);
}

void silu_mul_row(int n, const float* g, const float* u, float* y) {
  ATTN_KERNEL(silu_mul_row)(n, g, u, y);
}

void widen_half(int n, const std::uint16_t* x, HalfFormat format, float* y) {
  ATTN_KERNEL(widen_half)(n, x, format, y);
}

void linear_nt_half(int M, int N, int K, const float* A, int lda, const std::uint16_t* W, int ldw,
                    HalfFormat format, const float* bias, float* C, int ldc) {
  ATTN_KERNEL(linear_nt_half)(M, N, K, A, lda, W, ldw, format, bias, C, ldc);
}

std::int64_t packed_weight_floats(int N, int K) {
  return ATTN_KERNEL(packed_weight_floats)(N, K);
}

void pack_weight(int N, int K, const float* W, int ldw, float* packed) {
  ATTN_KERNEL(pack_weight)(N, K, W, ldw, packed);
}

void linear_nt_packed(int M, int N, int K, const float* A, int lda, const float* packed, const float* bias,
                      float* C, int ldc) {
  ATTN_KERNEL(linear_nt_packed)(M, N, K, A, lda, packed, bias, C, ldc);
}

void pack_weight_in_place(int N, int K, float* W) {
  ATTN_KERNEL(pack_weight_in_place)(N, K, W);
}

int packed_weight_panel_rows() {
  return ATTN_KERNEL(packed_weight_panel_rows)();
}

void packed_weight_row(int K, const float* packed, int r, float* out) {
  ATTN_KERNEL(packed_weight_row)(K, packed, r, out);
}

void add_bias_rows(int M, int N, const float* bias, float* C, int ldc) {
  ATTN_KERNEL(add_bias_rows)(M, N, bias, C, ldc);
}

void scale_vec(int n, const float* x, float scale, float* y) {
  ATTN_KERNEL(scale_vec)(n, x, scale, y);
}

void add_vec(int n, const float* a, const float* b, float* y) {
  ATTN_KERNEL(add_vec)(n, a, b, y);
}

void mask_row(int n, const float* x, const float* additive, const std::uint8_t* allowed, float* y) {
  ATTN_KERNEL(mask_row)(n, x, additive, allowed, y);
}

void softmax_row(int n, const float* x, float* y) {
  ATTN_KERNEL(softmax_row)(n, x, y);
}

void scale_mask_softmax_row(int n, const float* x, float scale, const float* additive,
                            const std::uint8_t* allowed, float* y) {
  ATTN_KERNEL(scale_mask_softmax_row)(n, x, scale, additive, allowed, y);
}

void layer_norm_row(int n, const float* x, const float* gamma, const float* beta, float eps, float* y) {
  ATTN_KERNEL(layer_norm_row)(n, x, gamma, beta, eps, y);
}

float online_softmax_row(int n, const float* x, float scale, const float* additive,
                         const std::uint8_t* allowed, float* m, float* l, float* p) {
  return ATTN_KERNEL(online_softmax_row)(n, x, scale, additive, allowed, m, l, p);
}

void gelu_row(int n, const float* x, float* y, float* cdf) {
  ATTN_KERNEL(gelu_row)(n, x, y, cdf);
}

void gelu_backward_row(int n, const float* x, const float* cdf, const float* dy, float* dx) {
  ATTN_KERNEL(gelu_backward_row)(n, x, cdf, dy, dx);
}

const char* active_variant() {
#if defined(__wasm_simd128__) && defined(ATTN_RELAXED_SIMD)
  return "relaxed-simd";  // the SIMD128 kernels, GEMM with f32x4.relaxed_madd
#elif defined(__wasm_simd128__)
  return "simd128";
#else
  return "scalar";
#endif
}

}  // namespace attn::kernels
