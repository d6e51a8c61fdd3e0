// Double-precision reference for the tests, independent of the library: no kernels, no core code.
// Written as Eigen expressions (Eigen 3.4, double) in reference.cpp, the one test file that includes
// Eigen: the library itself never does (src/ stays Eigen-free; see docs/architecture.md).
// Every function takes float inputs (what the library sees) and computes in double.
//
//   ref::gemm(M, N, K, A, lda, B, ldb, b_transposed, C)
//       C (M, N) dense, double = A (M, K) · B, where B is (K, N) with row stride ldb, or when
//       b_transposed is true B is stored (N, K) and the product is A · Bᵀ.
//   ref::gemm_abs(...)      same shapes, Σ_k |a_ik · b_kj| = |A|·|B|: the scale for a relative GEMM bound.
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

void gemm(int M, int N, int K, const float* A, int lda, const float* B, int ldb, bool b_transposed,
          std::vector<double>& C);

void gemm_abs(int M, int N, int K, const float* A, int lda, const float* B, int ldb, bool b_transposed,
              std::vector<double>& C);

void softmax_row(int n, const double* x, double* y);
void softmax_row(int n, const float* x, double* y);

void layer_norm_row(int n, const float* x, const float* gamma, const float* beta, double eps, double* y);

void sdpa_fn(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v, int batch,
             int Tq, int Tk, int dk, int dv, double scale,
             const std::function<bool(int, int, int)>& allowed_fn, const std::vector<float>* additive,
             std::vector<double>& out, std::vector<double>& weights);

void sdpa(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v, int batch,
          int Tq, int Tk, int dk, int dv, double scale, const std::vector<std::uint8_t>* allowed,
          const std::vector<float>* additive, std::vector<double>& out, std::vector<double>& weights);

}  // namespace ref
