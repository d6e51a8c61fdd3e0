// Naive double-precision reference for the tests: plain loops, no Eigen, no kernels, header-only.
// Every function takes float inputs (what the library sees) and computes in double.
//
//   ref::gemm(M, N, K, A, lda, B, ldb, b_transposed, C)
//       C (M, N) dense, double = A (M, K) · B, where B is (K, N) with row stride ldb, or when
//       b_transposed is true B is stored (N, K) and the product is A · Bᵀ.
//   ref::gemm_abs(...)      same shapes, Σ_k |a_ik · b_kj|: the scale for a relative GEMM bound.
//   ref::softmax_row(n, x, y)
//       y (n) = exp(x - max) / Σ, in double; x may hold -inf (masked); all -inf → zeros.
//   ref::layer_norm_row(n, x, gamma, beta, eps, y)
//       y (n) = (x - mean) / sqrt(var + eps) · gamma + beta, biased variance; gamma/beta may be null.
//   ref::sdpa(q, k, v, batch, Tq, Tk, dk, dv, scale, allowed, additive, out, weights)
//       Scaled dot-product attention over `batch` independent (Tq, Tk) problems:
//       q (batch, Tq, dk), k (batch, Tk, dk), v (batch, Tk, dv), row-major float.
//       score[b][i][j] = scale · q_i·k_j + additive[b][i][j]; -inf where allowed[b][i][j] == 0.
//       allowed: (batch, Tq, Tk) uint8 (1 = may attend) or null = all allowed.
//       additive: (batch, Tq, Tk) float or null = 0 (may itself hold -inf).
//       weights (batch, Tq, Tk) = softmax over j; out (batch, Tq, dv) = weights · v.
//       A fully masked row gives zero weights and a zero output row.
//   ref::sdpa_fn(..., allowed_fn, additive, out, weights)
//       Same, with the boolean mask given as a callback bool(int b, int i, int j) (true = may
//       attend), e.g. [](int, int i, int j) { return j <= i; } for causal.
#pragma once
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

namespace ref {

// C (M, N) = Σ_k term(a_ik · b_kj) in double: the product itself (gemm) or its magnitude (gemm_abs).
template <class Term>
void gemm_sum(int M, int N, int K, const float* A, int lda, const float* B, int ldb, bool b_transposed,
              std::vector<double>& C, Term term) {
  C.assign(static_cast<size_t>(M) * N, 0.0);  // C: (M, N) dense
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0.0;
      for (int k = 0; k < K; ++k) {
        const float b =
            b_transposed ? B[static_cast<size_t>(j) * ldb + k] : B[static_cast<size_t>(k) * ldb + j];
        s += term(static_cast<double>(A[static_cast<size_t>(i) * lda + k]) * b);
      }
      C[static_cast<size_t>(i) * N + j] = s;
    }
}

inline void gemm(int M, int N, int K, const float* A, int lda, const float* B, int ldb, bool b_transposed,
                 std::vector<double>& C) {
  gemm_sum(M, N, K, A, lda, B, ldb, b_transposed, C, [](double p) { return p; });
}

inline void gemm_abs(int M, int N, int K, const float* A, int lda, const float* B, int ldb, bool b_transposed,
                     std::vector<double>& C) {
  gemm_sum(M, N, K, A, lda, B, ldb, b_transposed, C, [](double p) { return std::fabs(p); });
}

inline void softmax_row(int n, const double* x, double* y) {
  const double kNegInf = -std::numeric_limits<double>::infinity();
  double max = kNegInf;
  for (int j = 0; j < n; ++j) max = x[j] > max ? x[j] : max;
  if (max == kNegInf) {  // fully masked row
    for (int j = 0; j < n; ++j) y[j] = 0.0;
    return;
  }
  double sum = 0.0;
  for (int j = 0; j < n; ++j) sum += std::exp(x[j] - max);
  for (int j = 0; j < n; ++j) y[j] = std::exp(x[j] - max) / sum;
}

inline void softmax_row(int n, const float* x, double* y) {
  std::vector<double> xd(x, x + n);  // xd: (n) the row in double
  softmax_row(n, xd.data(), y);
}

inline void layer_norm_row(int n, const float* x, const float* gamma, const float* beta, double eps,
                           double* y) {
  double mean = 0.0;
  for (int j = 0; j < n; ++j) mean += x[j];
  mean /= n;
  double var = 0.0;
  for (int j = 0; j < n; ++j) var += (x[j] - mean) * (x[j] - mean);
  var /= n;
  const double rstd = 1.0 / std::sqrt(var + eps);
  for (int j = 0; j < n; ++j) y[j] = (x[j] - mean) * rstd * (gamma ? gamma[j] : 1.0) + (beta ? beta[j] : 0.0);
}

inline void sdpa_fn(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                    int batch, int Tq, int Tk, int dk, int dv, double scale,
                    const std::function<bool(int, int, int)>& allowed_fn, const std::vector<float>* additive,
                    std::vector<double>& out, std::vector<double>& weights) {
  const double kNegInf = -std::numeric_limits<double>::infinity();
  out.assign(static_cast<size_t>(batch) * Tq * dv, 0.0);      // out: (batch, Tq, dv)
  weights.assign(static_cast<size_t>(batch) * Tq * Tk, 0.0);  // weights: (batch, Tq, Tk)
  std::vector<double> s(Tk);                                  // s: (Tk) one row of scores
  for (int b = 0; b < batch; ++b)
    for (int i = 0; i < Tq; ++i) {
      // 1. Scaled, masked scores of query i.
      const float* qi = &q[(static_cast<size_t>(b) * Tq + i) * dk];
      for (int j = 0; j < Tk; ++j) {
        const float* kj = &k[(static_cast<size_t>(b) * Tk + j) * dk];
        double dot = 0.0;
        for (int c = 0; c < dk; ++c) dot += static_cast<double>(qi[c]) * kj[c];
        const size_t idx = (static_cast<size_t>(b) * Tq + i) * Tk + j;
        const double add = additive ? (*additive)[idx] : 0.0;
        s[j] = (allowed_fn && !allowed_fn(b, i, j)) ? kNegInf : scale * dot + add;
      }
      // 2. Softmax (zeros when fully masked); 3. weights · V.
      double* w = &weights[(static_cast<size_t>(b) * Tq + i) * Tk];
      softmax_row(Tk, s.data(), w);
      double* o = &out[(static_cast<size_t>(b) * Tq + i) * dv];
      for (int j = 0; j < Tk; ++j)
        for (int c = 0; c < dv; ++c) o[c] += w[j] * v[(static_cast<size_t>(b) * Tk + j) * dv + c];
    }
}

inline void sdpa(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                 int batch, int Tq, int Tk, int dk, int dv, double scale,
                 const std::vector<std::uint8_t>* allowed, const std::vector<float>* additive,
                 std::vector<double>& out, std::vector<double>& weights) {
  std::function<bool(int, int, int)> fn;
  if (allowed)
    fn = [allowed, Tq, Tk](int b, int i, int j) {
      return (*allowed)[(static_cast<size_t>(b) * Tq + i) * Tk + j] != 0;
    };
  sdpa_fn(q, k, v, batch, Tq, Tk, dk, dv, scale, fn, additive, out, weights);
}

}  // namespace ref
