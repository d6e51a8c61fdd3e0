// The double-precision references of the Catch2 suite as Eigen expressions: the one file of the
// project that includes Eigen (built into attn_reference, tests/cpp/CMakeLists.txt; natively and in
// the wasm test build). Declared in reference.h (products, softmax, LayerNorm, SDPA),
// reference_mha.h (linear), reference_mha_backward.h (linear_rows) and reference_backward_ops.h
// (the layer losses whose finite differences are the backward references). Inputs are widened to
// double first; every product and sum below is in double.
#include "reference.h"

#include <Eigen/Core>

#include "reference_backward_ops.h"
#include "reference_mha.h"
#include "reference_mha_backward.h"

namespace {

using Eigen::Dynamic;
using Eigen::RowMajor;
using MatD = Eigen::Matrix<double, Dynamic, Dynamic, RowMajor>;  // row-major like every test buffer
using MatF = Eigen::Matrix<float, Dynamic, Dynamic, RowMajor>;
using RowD = Eigen::Matrix<double, 1, Dynamic>;
using Stride = Eigen::OuterStride<>;

// a (rows, cols) with row stride ld, widened to double.
MatD widen(const float* a, int rows, int cols, int ld) {
  return Eigen::Map<const MatF, 0, Stride>(a, rows, cols, Stride(ld)).cast<double>();
}

// x (rows, cols) dense double, viewed in place.
Eigen::Map<const MatD> view(const double* x, int rows, int cols) {
  return Eigen::Map<const MatD>(x, rows, cols);
}

// A row vector (n) of floats, widened; or of doubles.
RowD widen_row(const float* x, int n) {
  return Eigen::Map<const Eigen::RowVectorXf>(x, n).cast<double>();
}
Eigen::Map<const RowD> view_row(const double* x, int n) {
  return Eigen::Map<const RowD>(x, n);
}

// The right factor (K, N) of a GEMM: B stored (K, N) with row stride ldb, or stored (N, K) and transposed.
MatD right_factor(const float* B, int K, int N, int ldb, bool b_transposed) {
  if (b_transposed) return widen(B, N, K, ldb).transpose();
  return widen(B, K, N, ldb);
}

std::vector<double> to_vector(const MatD& m) {
  return {m.data(), m.data() + m.size()};
}

// (x − mean) / sqrt(var + eps) of one row, biased variance.
RowD normalize(const RowD& x, double eps) {
  const RowD centered = x.array() - x.mean();
  const double var = centered.squaredNorm() / static_cast<double>(x.size());
  return centered * (1.0 / std::sqrt(var + eps));
}

}  // namespace

namespace ref {

void gemm(int M, int N, int K, const float* A, int lda, const float* B, int ldb, bool b_transposed,
          std::vector<double>& C) {
  C = to_vector(widen(A, M, K, lda) * right_factor(B, K, N, ldb, b_transposed));  // C (M, N) = A · B
}

void gemm_abs(int M, int N, int K, const float* A, int lda, const float* B, int ldb, bool b_transposed,
              std::vector<double>& C) {
  // Σ_k |a_ik · b_kj| = (|A| · |B|)_ij
  C = to_vector(widen(A, M, K, lda).cwiseAbs() * right_factor(B, K, N, ldb, b_transposed).cwiseAbs());
}

void softmax_row(int n, const double* x, double* y) {
  Eigen::Map<RowD> out(y, n);
  const double max =
      n > 0 ? view_row(x, n).maxCoeff<Eigen::PropagateNumbers>() : -std::numeric_limits<double>::infinity();
  if (max == -std::numeric_limits<double>::infinity()) {  // fully masked row (or empty)
    out.setZero();
    return;
  }
  const RowD e = (view_row(x, n).array() - max).exp();  // exp(-inf) = 0: masked entries drop out
  out = e / e.sum();
}

void softmax_row(int n, const float* x, double* y) {
  const RowD xd = widen_row(x, n);
  softmax_row(n, xd.data(), y);
}

void layer_norm_row(int n, const float* x, const float* gamma, const float* beta, double eps, double* y) {
  RowD out = normalize(widen_row(x, n), eps);
  if (gamma) out = out.cwiseProduct(widen_row(gamma, n));
  if (beta) out += widen_row(beta, n);
  Eigen::Map<RowD>(y, n) = out;
}

void sdpa_fn(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v, int batch,
             int Tq, int Tk, int dk, int dv, double scale,
             const std::function<bool(int, int, int)>& allowed_fn, const std::vector<float>* additive,
             std::vector<double>& out, std::vector<double>& weights) {
  const double kNegInf = -std::numeric_limits<double>::infinity();
  out.assign(static_cast<size_t>(batch) * Tq * dv, 0.0);      // out: (batch, Tq, dv)
  weights.assign(static_cast<size_t>(batch) * Tq * Tk, 0.0);  // weights: (batch, Tq, Tk)
  for (int b = 0; b < batch; ++b) {
    const MatD Q = widen(q.data() + static_cast<size_t>(b) * Tq * dk, Tq, dk, dk);  // (Tq, dk)
    const MatD K = widen(k.data() + static_cast<size_t>(b) * Tk * dk, Tk, dk, dk);  // (Tk, dk)
    const MatD V = widen(v.data() + static_cast<size_t>(b) * Tk * dv, Tk, dv, dv);  // (Tk, dv)
    // 1. Scaled scores, plus the additive mask, -inf where the boolean mask forbids.
    MatD S = scale * (Q * K.transpose());  // (Tq, Tk)
    if (additive) S += widen(additive->data() + static_cast<size_t>(b) * Tq * Tk, Tq, Tk, Tk);
    if (allowed_fn)
      for (int i = 0; i < Tq; ++i)
        for (int j = 0; j < Tk; ++j)
          if (!allowed_fn(b, i, j)) S(i, j) = kNegInf;
    // 2. Softmax of each row (zeros when fully masked); 3. weights · V.
    Eigen::Map<MatD> W(weights.data() + static_cast<size_t>(b) * Tq * Tk, Tq, Tk);
    for (int i = 0; i < Tq; ++i) softmax_row(Tk, S.row(i).data(), W.row(i).data());
    Eigen::Map<MatD>(out.data() + static_cast<size_t>(b) * Tq * dv, Tq, dv) = W * V;
  }
}

void sdpa(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v, int batch,
          int Tq, int Tk, int dk, int dv, double scale, const std::vector<std::uint8_t>* allowed,
          const std::vector<float>* additive, std::vector<double>& out, std::vector<double>& weights) {
  std::function<bool(int, int, int)> fn;
  if (allowed)
    fn = [allowed, Tq, Tk](int b, int i, int j) {
      return (*allowed)[(static_cast<size_t>(b) * Tq + i) * Tk + j] != 0;
    };
  sdpa_fn(q, k, v, batch, Tq, Tk, dk, dv, scale, fn, additive, out, weights);
}

std::vector<double> linear(const std::vector<double>& x, int rows, int in, const std::vector<float>& w,
                           const std::vector<float>& b, int out) {
  MatD y = view(x.data(), rows, in) * widen(w.data(), out, in, in).transpose();  // (rows, out) = x · Wᵀ
  if (!b.empty()) y.rowwise() += widen_row(b.data(), out);
  return to_vector(y);
}

std::vector<double> linear_rows(const std::vector<double>& x, int rows, int in, const std::vector<double>& w,
                                const std::vector<double>* b, int row0, int out) {
  const auto W = view(w.data() + static_cast<size_t>(row0) * in, out, in);  // rows [row0, row0 + out) of W
  MatD y = view(x.data(), rows, in) * W.transpose();                        // (rows, out)
  if (b) y.rowwise() += view_row(b->data() + row0, out);
  return to_vector(y);
}

}  // namespace ref

namespace ref_ops {

double layer_norm_loss(const Vec& x, const Vec& gamma, const Vec& beta, const Vec& dy, int n, double eps) {
  const int rows = static_cast<int>(x.size()) / n;
  const auto X = view(x.data(), rows, n), dY = view(dy.data(), rows, n);
  double loss = 0.0;
  for (int r = 0; r < rows; ++r) {
    RowD y = normalize(X.row(r), eps);
    if (!gamma.empty()) y = y.cwiseProduct(view_row(gamma.data(), n));
    if (!beta.empty()) y += view_row(beta.data(), n);
    loss += dY.row(r).dot(y);
  }
  return loss;
}

double linear_loss(const Vec& x, const Vec& w, const Vec& b, const Vec& dy, int rows, int in, int out) {
  MatD y = view(x.data(), rows, in) * view(w.data(), out, in).transpose();  // (rows, out) = x · Wᵀ + b
  y.rowwise() += view_row(b.data(), out);
  return view(dy.data(), rows, out).cwiseProduct(y).sum();
}

}  // namespace ref_ops
