// Scalar twins of every kernel in kernels.h: plain loops, std::exp, no intrinsics.
// They are the readable specification of each kernel, the implementation of the non-SIMD build,
// and the baseline the SIMD128 versions are measured against. Every row kernel accepts y == x.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>

#include "kernels/kernels.h"
#include "kernels/layer_norm_stats.h"
#include "kernels/quant.h"

namespace attn::kernels {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Largest entry of a row (n ≥ 1); -inf when every entry is -inf.
float row_max(int n, const float* x) {
  float m = kNegInf;
  for (int j = 0; j < n; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

// Steps 2 and 3 of softmax, shared by softmax_row and the fused kernel so they round identically:
// y = exp(x - max) / Σ exp(x - max). `max` must be finite (callers handle the all -inf row).
void softmax_from_max(int n, const float* x, float max, float* y) {
  float sum = 0.0f;
  for (int j = 0; j < n; ++j) {
    y[j] = std::exp(x[j] - max);
    sum += y[j];
  }
  for (int j = 0; j < n; ++j) y[j] = y[j] / sum;
}

void fill_zero(int n, float* y) {
  for (int j = 0; j < n; ++j) y[j] = 0.0f;
}

// y = mask_row(scale_vec(x)) with the same operations; returns max y (-inf when all are -inf).
float scale_mask_max(int n, const float* x, float scale, const float* additive, const std::uint8_t* allowed,
                     float* y) {
  float max = kNegInf;
  for (int j = 0; j < n; ++j) {
    const float add = additive ? additive[j] : 0.0f;
    const float scaled = x[j] * scale;
    y[j] = (allowed && !allowed[j]) ? kNegInf : scaled + add;
    max = y[j] > max ? y[j] : max;
  }
  return max;
}

// ---- matrix products ------------------------------------------------------------------------

// C (M, N) += A (M, K) · B (K, N) in i-k-j order: the inner loop walks a row of B and a row of C
// contiguously (native compilers vectorise it), and each C[i][j] sums its products in k order.
// A's entry (i, k) sits at A[i·a_row_stride + k·a_k_stride]: (lda, 1) for A stored (M, K),
// (1, lda) for A stored (K, M) as gemm_tn reads it — one strided scalar load per (i, k) only.
void add_product(int M, int N, int K, const float* A, std::ptrdiff_t a_row_stride, std::ptrdiff_t a_k_stride,
                 const float* B, int ldb, float* C, int ldc) {
  for (int i = 0; i < M; ++i) {
    float* c = C + static_cast<std::ptrdiff_t>(i) * ldc;  // c: row i of C (N)
    for (int k = 0; k < K; ++k) {
      const float a = A[i * a_row_stride + k * a_k_stride];
      const float* b = B + static_cast<std::ptrdiff_t>(k) * ldb;  // b: row k of B (N)
      for (int j = 0; j < N; ++j) c[j] += a * b[j];
    }
  }
}

void zero_rows(int M, int N, float* C, int ldc) {
  for (int i = 0; i < M; ++i) fill_zero(N, C + static_cast<std::ptrdiff_t>(i) * ldc);
}

// C (M, N) += A (M, K) · Bᵀ with B (N, K) read as read_b(j, k) (float32, or widened 16-bit). Bᵀ is
// built one kTile×kTile tile at a time on the stack and multiplied like gemm_nn: the same k order
// per C[i][j] as a plain dot product, but a contiguous inner loop (a dot product per entry runs
// ~8× slower natively: compilers may not reorder its sum into vectors).
template <typename ReadB>
void add_product_nt(int M, int N, int K, const float* A, int lda, ReadB read_b, float* C, int ldc) {
  constexpr int kTile = 64;
  float bt[kTile * kTile];  // bt: (kb, nb) tile of Bᵀ, row stride kTile
  for (int j0 = 0; j0 < N; j0 += kTile) {
    const int nb = std::min(kTile, N - j0);
    for (int k0 = 0; k0 < K; k0 += kTile) {
      const int kb = std::min(kTile, K - k0);
      for (int j = 0; j < nb; ++j)
        for (int k = 0; k < kb; ++k) bt[k * kTile + j] = read_b(j0 + j, k0 + k);
      add_product(M, nb, kb, A + k0, lda, 1, bt, kTile, C + j0, ldc);
    }
  }
}

}  // namespace

void gemm_nn_scalar(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
                    bool accumulate) {
  if (!accumulate) zero_rows(M, N, C, ldc);
  add_product(M, N, K, A, lda, 1, B, ldb, C, ldc);
}

void gemm_tn_scalar(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
                    bool accumulate) {
  // Row i of C gets A[k][i] · B[k][:] for k = 0 … K-1 in turn: the same per-entry k order and
  // operations as gemm_nn_scalar over an explicit Aᵀ, without building it. Walking i outermost
  // keeps one row of C in cache while B streams by, as in gemm_nn_scalar.
  if (!accumulate) zero_rows(M, N, C, ldc);
  add_product(M, N, K, A, 1, lda, B, ldb, C, ldc);
}

void gemm_nt_scalar(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
                    bool accumulate) {
  if (!accumulate) zero_rows(M, N, C, ldc);
  add_product_nt(
      M, N, K, A, lda, [&](int j, int k) { return B[static_cast<std::ptrdiff_t>(j) * ldb + k]; }, C, ldc);
}

void linear_nt_scalar(int M, int N, int K, const float* A, int lda, const float* W, int ldw,
                      const float* bias, float* C, int ldc) {
  gemm_nt_scalar(M, N, K, A, lda, W, ldw, C, ldc, false);
  if (bias) add_bias_rows_scalar(M, N, bias, C, ldc);
}

// The scalar twin's packed layout is W itself, row-major (N, K): its linear_nt reads W as it is
// (tile-transposing, like gemm_nt_scalar), so packing gains nothing and in-place packing is free.
std::int64_t packed_weight_floats_scalar(int N, int K) {
  return static_cast<std::int64_t>(N) * K;
}

void pack_weight_scalar(int N, int K, const float* W, int ldw, float* packed) {
  for (int j = 0; j < N; ++j)
    std::memcpy(packed + static_cast<std::ptrdiff_t>(j) * K, W + static_cast<std::ptrdiff_t>(j) * ldw,
                static_cast<std::size_t>(K) * sizeof(float));
}

void linear_nt_packed_scalar(int M, int N, int K, const float* A, int lda, const float* packed,
                             const float* bias, float* C, int ldc) {
  linear_nt_scalar(M, N, K, A, lda, packed, K, bias, C, ldc);
}

void pack_weight_in_place_scalar(int, int, float*) {}  // already the packed layout

int packed_weight_panel_rows_scalar() {
  return 1;
}

void packed_weight_row_scalar(int K, const float* packed, int r, float* out) {
  std::memcpy(out, packed + static_cast<std::ptrdiff_t>(r) * K, static_cast<std::size_t>(K) * sizeof(float));
}

// ---- 16-bit weights ---------------------------------------------------------------------------
namespace {

float bits_to_float(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// IEEE binary16 → binary32 field by field: rebias the exponent, normalise a subnormal's mantissa
// (the SIMD128 twin scales by 2^112 instead, an independent route to the same bits).
float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return bits_to_float(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
  if (exponent == 0) {
    if (mantissa == 0) return bits_to_float(sign);  // ±0
    exponent = 1;
    while (!(mantissa & 0x400u)) {  // subnormal: shift until the implicit bit appears
      mantissa <<= 1;
      --exponent;
    }
    mantissa &= 0x3ffu;
  }
  return bits_to_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

float widen_one(std::uint16_t x, HalfFormat format) {
  return format == HalfFormat::kBF16 ? bits_to_float(static_cast<std::uint32_t>(x) << 16) : half_to_float(x);
}

}  // namespace

void widen_half_scalar(int n, const std::uint16_t* x, HalfFormat format, float* y) {
  for (int i = 0; i < n; ++i) y[i] = widen_one(x[i], format);
}

// gemm_nt_scalar with the tile of Wᵀ widened as it is built: the same products in the same order.
void linear_nt_half_scalar(int M, int N, int K, const float* A, int lda, const std::uint16_t* W, int ldw,
                           HalfFormat format, const float* bias, float* C, int ldc) {
  zero_rows(M, N, C, ldc);
  add_product_nt(
      M, N, K, A, lda,
      [&](int j, int k) { return widen_one(W[static_cast<std::ptrdiff_t>(j) * ldw + k], format); }, C, ldc);
  if (bias) add_bias_rows_scalar(M, N, bias, C, ldc);
}

// ---- quantized weights --------------------------------------------------------------------------

// W is dequantized kQuantRows rows × kQuantSlice columns at a time into a fixed per-thread scratch
// (64 KB; kQuantSlice a whole number of every block size) and multiplied by gemm_nt_scalar, the
// later slices accumulating onto C: each C[i][j] gets the same products in the same k order as
// linear_nt_scalar over the whole dequantized W, then the bias, so the bits are the same.
void linear_nt_quant_scalar(int M, int N, int K, const float* A, int lda, const void* W,
                            std::size_t ldw_bytes, int type, const float* bias, float* C, int ldc) {
  constexpr int kQuantRows = 8, kQuantSlice = 2048;
  static_assert(kQuantSlice % kQK_K == 0, "a slice holds whole blocks");
  thread_local float scratch[kQuantRows * kQuantSlice];  // (rows, kc), row stride kQuantSlice
  const GgmlTypeInfo* info = ggml_type_info(type);
  if (K <= 0 || info == nullptr) zero_rows(M, N, C, ldc);  // the empty product
  for (int j0 = 0; j0 < N && K > 0 && info; j0 += kQuantRows) {
    const int nb = std::min(kQuantRows, N - j0);
    for (int k0 = 0; k0 < K; k0 += kQuantSlice) {
      const int kc = std::min(kQuantSlice, K - k0);
      const std::size_t skip = static_cast<std::size_t>(k0 / info->block_elements) * info->block_bytes;
      for (int r = 0; r < nb; ++r)
        dequantize_row(type,
                       static_cast<const char*>(W) + static_cast<std::ptrdiff_t>(j0 + r) * ldw_bytes + skip,
                       scratch + r * kQuantSlice, kc);
      gemm_nt_scalar(M, nb, kc, A + k0, lda, scratch, kQuantSlice, C + j0, ldc, k0 > 0);
    }
  }
  if (bias) add_bias_rows_scalar(M, N, bias, C, ldc);
}

// ---- element-wise and row-wise --------------------------------------------------------------

void add_bias_rows_scalar(int M, int N, const float* bias, float* C, int ldc) {
  for (int i = 0; i < M; ++i) {
    float* c = C + static_cast<std::ptrdiff_t>(i) * ldc;  // c: row i of C (N)
    for (int j = 0; j < N; ++j) c[j] += bias[j];
  }
}

void scale_vec_scalar(int n, const float* x, float scale, float* y) {
  for (int j = 0; j < n; ++j) y[j] = x[j] * scale;
}

void add_vec_scalar(int n, const float* a, const float* b, float* y) {
  for (int j = 0; j < n; ++j) y[j] = a[j] + b[j];
}

void mask_row_scalar(int n, const float* x, const float* additive, const std::uint8_t* allowed, float* y) {
  for (int j = 0; j < n; ++j) {
    const float add = additive ? additive[j] : 0.0f;
    y[j] = (allowed && !allowed[j]) ? kNegInf : x[j] + add;
  }
}

void softmax_row_scalar(int n, const float* x, float* y) {
  // 1. max for stability; 2. exponentials and their sum; 3. normalise.
  const float max = row_max(n, x);
  if (max == kNegInf) return fill_zero(n, y);  // fully masked (or empty) row
  softmax_from_max(n, x, max, y);
}

void scale_mask_softmax_row_scalar(int n, const float* x, float scale, const float* additive,
                                   const std::uint8_t* allowed, float* y) {
  // 1. scale and mask into y exactly as scale_vec → mask_row do, tracking the max on the way;
  // 2–3. the same exp/sum/normalise code as softmax_row, so the result is bit-identical.
  const float max = scale_mask_max(n, x, scale, additive, allowed, y);
  if (max == kNegInf) return fill_zero(n, y);
  softmax_from_max(n, y, max, y);
}

void layer_norm_row_scalar(int n, const float* x, const float* gamma, const float* beta, float eps,
                           float* y) {
  // 1.–2. mean and 1/std (layer_norm_stats.h); 3. normalise, then the optional affine map.
  const LayerNormRowStats stats = layer_norm_row_stats(n, x, eps);
  for (int j = 0; j < n; ++j) {
    float v = layer_norm_normalised(x[j], stats);
    if (gamma) v = v * gamma[j];
    if (beta) v = v + beta[j];
    y[j] = v;
  }
}

// ---- online softmax -------------------------------------------------------------------------

float online_softmax_row_scalar(int n, const float* x, float scale, const float* additive,
                                const std::uint8_t* allowed, float* m, float* l, float* p) {
  // 1. z = mask(x · scale) into p, and the segment's max; 2. the new running max.
  const float seg_max = scale_mask_max(n, x, scale, additive, allowed, p);
  const float new_max = seg_max > *m ? seg_max : *m;
  if (new_max == kNegInf) {  // nothing allowed so far: the state stays empty
    fill_zero(n, p);
    return 1.0f;
  }
  // 3. The old state's factor exp(m - m') (0 from the empty state m = -inf);
  // 4. p = exp(z - m'), l = l · factor + Σ p.
  const float factor = std::exp(*m - new_max);
  float sum = 0.0f;
  for (int j = 0; j < n; ++j) {
    p[j] = std::exp(p[j] - new_max);
    sum += p[j];
  }
  *l = *l * factor + sum;
  *m = new_max;
  return factor;
}

// ---- GELU ------------------------------------------------------------------------------------

void gelu_row_scalar(int n, const float* x, float* y, float* cdf) {
  for (int i = 0; i < n; ++i) {
    const float v = x[i];
    const float phi = 0.5f * (1.0f + std::erf(v * 0.70710678118654752f));  // Φ(x)
    if (cdf) cdf[i] = phi;
    y[i] = v * phi;
  }
}

namespace {

// σ(z) from e = e^−|z| (kernels.h: no overflow, no cancellation).
float logistic(float z) {
  const float e = std::exp(-std::fabs(z));
  return z >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
}

}  // namespace

void gelu_tanh_row_scalar(int n, const float* x, float* y) {
  for (int i = 0; i < n; ++i) {
    const float v = x[i];
    const float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
    y[i] = v * logistic(2.0f * u);
  }
}

void silu_mul_row_scalar(int n, const float* g, const float* u, float* y) {
  for (int i = 0; i < n; ++i) y[i] = g[i] * logistic(g[i]) * u[i];
}

void gelu_backward_row_scalar(int n, const float* x, const float* cdf, const float* dy, float* dx) {
  for (int i = 0; i < n; ++i) {
    const float v = x[i];
    const float pdf = 0.39894228040143268f * std::exp(-0.5f * v * v);  // φ(x)
    dx[i] = dy[i] * (cdf[i] + v * pdf);
  }
}

}  // namespace attn::kernels
