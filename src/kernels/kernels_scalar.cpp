// Scalar twins of every kernel in kernels.h: plain loops, std::exp, no intrinsics.
// They are the readable specification of each kernel, the implementation of the non-SIMD build,
// and the baseline the SIMD128 versions are measured against. Every row kernel accepts y == x.
#include <cmath>
#include <cstddef>
#include <limits>

#include "kernels/kernels.h"

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

}  // namespace

// ---- matrix products ------------------------------------------------------------------------

void gemm_nn_scalar(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
                    bool accumulate) {
  // i-k-j order: the inner loop walks a row of B and a row of C contiguously.
  for (int i = 0; i < M; ++i) {
    float* c = C + static_cast<std::ptrdiff_t>(i) * ldc;  // c: row i of C (N)
    if (!accumulate) fill_zero(N, c);
    for (int k = 0; k < K; ++k) {
      const float a = A[static_cast<std::ptrdiff_t>(i) * lda + k];
      const float* b = B + static_cast<std::ptrdiff_t>(k) * ldb;  // b: row k of B (N)
      for (int j = 0; j < N; ++j) c[j] += a * b[j];
    }
  }
}

void gemm_nt_scalar(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
                    bool accumulate) {
  // Each C[i][j] is the dot product of row i of A and row j of B (both contiguous in k).
  for (int i = 0; i < M; ++i) {
    const float* a = A + static_cast<std::ptrdiff_t>(i) * lda;  // a: row i of A (K)
    float* c = C + static_cast<std::ptrdiff_t>(i) * ldc;        // c: row i of C (N)
    for (int j = 0; j < N; ++j) {
      const float* b = B + static_cast<std::ptrdiff_t>(j) * ldb;  // b: row j of B (K)
      float dot = 0.0f;
      for (int k = 0; k < K; ++k) dot += a[k] * b[k];
      c[j] = accumulate ? c[j] + dot : dot;
    }
  }
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
  float max = kNegInf;
  for (int j = 0; j < n; ++j) {
    const float add = additive ? additive[j] : 0.0f;
    const float scaled = x[j] * scale;
    y[j] = (allowed && !allowed[j]) ? kNegInf : scaled + add;
    max = y[j] > max ? y[j] : max;
  }
  if (max == kNegInf) return fill_zero(n, y);
  softmax_from_max(n, y, max, y);
}

void layer_norm_row_scalar(int n, const float* x, const float* gamma, const float* beta, float eps,
                           float* y) {
  // 1. mean; 2. biased variance from the centred values (two passes: no cancellation);
  // 3. normalise, then the optional affine map.
  float sum = 0.0f;
  for (int j = 0; j < n; ++j) sum += x[j];
  const float mean = sum / static_cast<float>(n);
  float sq = 0.0f;
  for (int j = 0; j < n; ++j) {
    const float d = x[j] - mean;
    sq += d * d;
  }
  const float rstd = 1.0f / std::sqrt(sq / static_cast<float>(n) + eps);
  for (int j = 0; j < n; ++j) {
    float v = (x[j] - mean) * rstd;
    if (gamma) v = v * gamma[j];
    if (beta) v = v + beta[j];
    y[j] = v;
  }
}

// ---- online softmax -------------------------------------------------------------------------

void online_softmax_update_scalar(int n, const float* s, const float* V, int ldv, int dv, float* m, float* l,
                                  float* acc) {
  // 1. The tile's max; a tile with nothing allowed leaves the state untouched.
  const float tile_max = row_max(n, s);
  if (tile_max == kNegInf) return;
  // 2. Rescale the old state to the new max (exp(-inf) = 0 for the initial state m = -inf).
  const float new_max = tile_max > *m ? tile_max : *m;
  const float correction = std::exp(*m - new_max);
  float sum = *l * correction;
  for (int d = 0; d < dv; ++d) acc[d] *= correction;
  // 3. Fold in each key: p = exp(s_j - m), l += p, acc += p · v_j.
  for (int j = 0; j < n; ++j) {
    const float p = std::exp(s[j] - new_max);
    if (p == 0.0f) continue;  // masked key (or one too far below the max to matter)
    sum += p;
    const float* v = V + static_cast<std::ptrdiff_t>(j) * ldv;  // v: value row j (dv)
    for (int d = 0; d < dv; ++d) acc[d] += p * v[d];
  }
  *m = new_max;
  *l = sum;
}

}  // namespace attn::kernels
