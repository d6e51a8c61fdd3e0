// Every kernel of src/kernels/kernels.h against the double reference (reference.h), for each
// variant this build has: the scalar twins always, the SIMD128 versions under __wasm_simd128__.
// This file: dispatch, GEMM, element-wise kernels and masking; test_kernels_softmax.cpp: softmax,
// LayerNorm, the online softmax and the kernels composed into attention.
// Sizes run below, at and above the vector width (1 … 2·4+1) and across the GEMM tile and block
// boundaries; awkward shapes (T = 1, odd widths, heads of width 1), masked and huge inputs.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernel_variants.h"
#include "reference.h"

using namespace kernel_test;

namespace {

// ---- named tolerances -----------------------------------------------------------------------
// GEMM: |C - ref| ≤ kGemmRelTol · Σ_k |a_ik b_kj| (float summation error grows with K; 1e-5 holds
// to K ≈ 1000 with margin, while one dropped or doubled term is ≥ 1e-3 off).
constexpr double kGemmRelTol = 1e-5;

// The three GEMM kernels: how A and B are stored.
enum class Gemm { kNN, kNT, kTN };  // A·B, A·Bᵀ (B stored (N, K)), Aᵀ·B (A stored (K, M))
constexpr Gemm kAllGemms[] = {Gemm::kNN, Gemm::kNT, Gemm::kTN};

const char* gemm_name(Gemm g) {
  return g == Gemm::kNN ? " gemm_nn" : g == Gemm::kNT ? " gemm_nt" : " gemm_tn";
}

decltype(&k::gemm_nn_scalar) gemm_of(const Variant& v, Gemm g) {
  return g == Gemm::kNN ? v.gemm_nn : g == Gemm::kNT ? v.gemm_nt : v.gemm_tn;
}

// a (M, K) dense = A stored (K, M) with row stride lda, transposed: what ref::gemm takes for Aᵀ.
std::vector<float> transpose_km(int M, int K, const std::vector<float>& A, int lda) {
  std::vector<float> a(static_cast<size_t>(M) * K);
  for (int kk = 0; kk < K; ++kk)
    for (int i = 0; i < M; ++i) a[static_cast<size_t>(i) * K + kk] = A[static_cast<size_t>(kk) * lda + i];
  return a;
}

// Runs one GEMM with padded leading dimensions and returns the worst error relative to the bound
// (≤ 1 passes); a write outside C's (M, N) range (padding column, guard row) returns +inf.
double gemm_error(const Variant& v, Gemm g, int M, int N, int K, bool accumulate, int pad) {
  const bool nt = g == Gemm::kNT, tn = g == Gemm::kTN;
  const int lda = (tn ? M : K) + pad, ldb = (nt ? K : N) + pad, ldc = N + pad;
  const auto A = random_vec(static_cast<size_t>(tn ? K : M) * lda, 11u + M);  // A: (M,K) or (K,M)
  const auto B = random_vec(static_cast<size_t>(nt ? N : K) * ldb, 7u + N);   // B: (K,N) or (N,K)
  // C: (M, N), stride ldc, then one guard row; padding columns and the guard row hold a sentinel.
  auto C = random_vec(static_cast<size_t>(M + 1) * ldc, 3u + K);
  for (int i = 0; i <= M; ++i)
    for (int j = i < M ? N : 0; j < ldc; ++j) C[static_cast<size_t>(i) * ldc + j] = 777.f;
  const auto C0 = C;
  gemm_of(v, g)(M, N, K, A.data(), lda, B.data(), ldb, C.data(), ldc, accumulate);
  const auto a = tn ? transpose_km(M, K, A, lda) : A;  // a: (M, K), stride lda_ref
  const int lda_ref = tn ? K : lda;
  std::vector<double> want, scale;  // want, scale: (M, N)
  ref::gemm(M, N, K, a.data(), lda_ref, B.data(), ldb, nt, want);
  ref::gemm_abs(M, N, K, a.data(), lda_ref, B.data(), ldb, nt, scale);
  double worst = 0.0;
  for (int i = 0; i <= M; ++i) {
    for (int j = 0; j < ldc; ++j) {
      const size_t c = static_cast<size_t>(i) * ldc + j, r = static_cast<size_t>(i) * N + j;
      if (i == M || j >= N) {
        if (C[c] != 777.f) return std::numeric_limits<double>::infinity();
        continue;
      }
      const double base = accumulate ? C0[c] : 0.0;
      const double bound = kGemmRelTol * (scale[r] + std::fabs(base)) + 1e-30;
      const double err = std::fabs(C[c] - (want[r] + base)) / bound;
      worst = (err > worst || std::isnan(err)) ? err : worst;
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("kernels: the build dispatches to the variant it reports", "[kernel]") {
  CHECK(std::string(k::active_variant()) == expected_variant());
  const Variant& active = variants().back();
  REQUIRE(active.name == k::active_variant());
  const auto x = random_vec(37, 5u, -3.f, 3.f);
  std::vector<float> a(37), b(37);
  k::softmax_row(37, x.data(), a.data());
  active.softmax_row(37, x.data(), b.data());
  CHECK(bits_equal(a, b));
}

TEST_CASE("kernels: gemm_nn, gemm_nt and gemm_tn match the reference for every M, N, K in 1..17",
          "[kernel][gemm]") {
  for (const auto& v : variants())
    for (const Gemm g : kAllGemms) {
      double worst = 0.0;
      std::string where;
      for (int M = 1; M <= 17; ++M)
        for (int N = 1; N <= 17; ++N)
          for (int K = 1; K <= 17; ++K) {
            const double e = gemm_error(v, g, M, N, K, (M + N + K) % 2 == 1, (M * N + K) % 3);
            if (!(e <= worst)) {  // also catches NaN
              worst = e;
              where = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
            }
          }
      INFO(v.name << gemm_name(g) << ", worst at " << where);
      CHECK(worst <= 1.0);
    }
}

TEST_CASE("kernels: gemm crosses the tile and block boundaries on larger odd shapes", "[kernel][gemm]") {
  struct Shape {
    int M, N, K;
  };
  // 33x65x31: odd everything; K = 800 and 1000 > one K slice (768); N = 520 > two N blocks (256);
  // M = 131 > one M block (64 rows with 4-row tiles, 80 with 5-row tiles).
  const Shape shapes[] = {{33, 65, 31}, {100, 37, 800}, {131, 520, 9}, {5, 1030, 260},
                          {1, 1, 1000}, {257, 3, 1},    {1, 64, 64},   {64, 1, 64}};
  for (const auto& v : variants())
    for (const auto& s : shapes)
      for (const Gemm g : kAllGemms)
        for (int acc = 0; acc < 2; ++acc) {
          INFO(v.name << gemm_name(g) << " " << s.M << "x" << s.N << "x" << s.K
                      << (acc ? " accumulate" : ""));
          CHECK(gemm_error(v, g, s.M, s.N, s.K, acc, 1) <= 1.0);
        }
}

TEST_CASE("kernels: gemm with K = 0 writes zeros, or leaves C alone when accumulating", "[kernel][gemm]") {
  for (const auto& v : variants())
    for (const Gemm g : kAllGemms) {
      INFO(v.name << gemm_name(g));
      const float a = 1.f, b = 1.f;
      std::vector<float> C(6, 5.f);  // C: (2, 3)
      gemm_of(v, g)(2, 3, 0, &a, 1, &b, 3, C.data(), 3, true);
      CHECK(C == std::vector<float>(6, 5.f));
      gemm_of(v, g)(2, 3, 0, &a, 1, &b, 3, C.data(), 3, false);
      CHECK(C == std::vector<float>(6, 0.f));
    }
}

TEST_CASE("kernels: gemm_tn with row strides wider than two vectors", "[kernel][gemm]") {
  // pad 9 = 2·width + 1: lda, ldb and ldc all exceed the row they hold by more than a panel, so a
  // packer that assumed lda == M (or ldb == N) would read the wrong columns.
  struct Shape {
    int M, N, K;
  };
  const Shape shapes[] = {{3, 5, 7}, {4, 8, 4}, {9, 17, 13}, {131, 37, 260}};
  for (const auto& v : variants())
    for (const auto& s : shapes)
      for (int acc = 0; acc < 2; ++acc) {
        INFO(v.name << " gemm_tn " << s.M << "x" << s.N << "x" << s.K << (acc ? " accumulate" : ""));
        CHECK(gemm_error(v, Gemm::kTN, s.M, s.N, s.K, acc, 9) <= 1.0);
      }
}

TEST_CASE("kernels: each row of a product has the same bits as that row alone (decoding's M = 1)",
          "[kernel][gemm]") {
  // The SIMD128 GEMM runs a one-row A panel through its own micro-kernel: same k order, same bits.
  const int M = 11, N = 21, K = 800;  // two K slices, partial tiles in both directions
  const auto A = random_vec(static_cast<size_t>(M) * K, 51u), W = random_vec(static_cast<size_t>(N) * K, 52u);
  const auto bias = random_vec(N, 53u);
  for (const auto& v : variants()) {
    std::vector<float> all(static_cast<size_t>(M) * N), row(N);
    v.linear_nt(M, N, K, A.data(), K, W.data(), K, bias.data(), all.data(), N);
    for (int i = 0; i < M; ++i) {
      INFO(v.name << " row " << i);
      v.linear_nt(1, N, K, A.data() + static_cast<size_t>(i) * K, K, W.data(), K, bias.data(), row.data(), N);
      CHECK(bits_equal(row, std::vector<float>(all.begin() + i * N, all.begin() + (i + 1) * N)));
    }
  }
}

TEST_CASE("kernels: gemm_tn equals gemm_nn over an explicit transpose, bit for bit", "[kernel][gemm]") {
  // The backward passes replaced transpose + gemm_nn by gemm_tn; this is why their results did not move.
  struct Shape {
    int M, N, K;
  };
  const Shape shapes[] = {{1, 1, 1}, {5, 7, 3}, {17, 9, 33}, {90, 300, 800}};  // blocks crossed: as below
  for (const auto& v : variants())
    for (const auto& s : shapes)
      for (int acc = 0; acc < 2; ++acc) {
        INFO(v.name << " " << s.M << "x" << s.N << "x" << s.K << (acc ? " accumulate" : ""));
        const int lda = s.M + 3, ldb = s.N + 1, ldc = s.N + 2;
        const auto A = random_vec(static_cast<size_t>(s.K) * lda, 41u);          // A: (K, M), stride M + 3
        const auto B = random_vec(static_cast<size_t>(s.K) * ldb, 42u);          // B: (K, N), stride N + 1
        const auto a_t = transpose_km(s.M, s.K, A, lda);                         // Aᵀ: (M, K) dense
        auto got = random_vec(static_cast<size_t>(s.M) * ldc, 43u), want = got;  // C: (M, N), stride N + 2
        v.gemm_tn(s.M, s.N, s.K, A.data(), lda, B.data(), ldb, got.data(), ldc, acc);
        v.gemm_nn(s.M, s.N, s.K, a_t.data(), s.K, B.data(), ldb, want.data(), ldc, acc);
        CHECK(bits_equal(got, want));
      }
}

TEST_CASE(
    "kernels: linear_nt, and linear_nt_packed over pack_weight, equal gemm_nt then add_bias_rows, bit for "
    "bit",
    "[kernel][gemm]") {
  struct Shape {
    int M, N, K;
  };
  // Single tiles, odd edges, and blocks: K = 800 > one K slice (768), N = 300 > one N block (256),
  // M = 90 > one M block (64 rows with 4-row tiles, 80 with the relaxed-SIMD build's 5-row tiles).
  const Shape shapes[] = {{1, 1, 1}, {5, 7, 3}, {16, 64, 64}, {33, 65, 31}, {90, 300, 800}, {3, 4, 0}};
  for (const auto& v : variants())
    for (const auto& s : shapes)
      for (int with_bias = 0; with_bias < 2; ++with_bias) {
        INFO(v.name << " " << s.M << "x" << s.N << "x" << s.K << (with_bias ? " bias" : ""));
        const int lda = s.K + 1, ldc = s.N + 2;
        const auto A = random_vec(static_cast<size_t>(s.M) * lda, 31u);           // A: (M, K), stride K + 1
        const auto W = random_vec(static_cast<size_t>(s.N) * (s.K + 1), 32u);     // W: (N, K), stride K + 1
        const auto bias = random_vec(static_cast<size_t>(s.N), 33u);              // bias: (N)
        std::vector<float> got(static_cast<size_t>(s.M) * ldc, 5.f), want = got;  // (M, N), stride N + 2
        auto packed_got = got;
        v.linear_nt(s.M, s.N, s.K, A.data(), lda, W.data(), s.K + 1, with_bias ? bias.data() : nullptr,
                    got.data(), ldc);
        // packed: the variant's packed W, with a guard float after it
        const auto floats = static_cast<size_t>(v.packed_weight_floats(s.N, s.K));
        CHECK(floats >= static_cast<size_t>(s.N) * s.K);
        std::vector<float> packed(floats + 1, 777.f);
        v.pack_weight(s.N, s.K, W.data(), s.K + 1, packed.data());
        CHECK(packed[floats] == 777.f);
        v.linear_nt_packed(s.M, s.N, s.K, A.data(), lda, packed.data(), with_bias ? bias.data() : nullptr,
                           packed_got.data(), ldc);
        v.gemm_nt(s.M, s.N, s.K, A.data(), lda, W.data(), s.K + 1, want.data(), ldc, false);
        if (with_bias) v.add_bias_rows(s.M, s.N, bias.data(), want.data(), ldc);
        CHECK(bits_equal(got, want));  // padding columns untouched too
        CHECK(bits_equal(packed_got, want));
      }
}

TEST_CASE("kernels: pack_weight_in_place equals pack_weight; packed_weight_row reads the rows back",
          "[kernel][gemm]") {
  // N across one and several panels with every remainder, K from 1 past two SIMD widths; row blocks
  // starting at a multiple of the panel height are packed matrices of their own.
  for (const auto& v : variants())
    for (int N : {1, 2, 7, 8, 9, 15, 16, 17, 24, 41})
      for (int K : {1, 3, 4, 5, 8, 9, 33, 70}) {
        INFO(v.name << " N=" << N << " K=" << K);
        const auto W = random_vec(static_cast<size_t>(N) * K, 50u + N * 7u + K);  // W: (N, K)
        const auto floats = static_cast<size_t>(v.packed_weight_floats(N, K));
        std::vector<float> want(floats + 1, 777.f), got(floats + 1, 555.f);  // + a guard float
        v.pack_weight(N, K, W.data(), K, want.data());
        std::copy(W.begin(), W.end(), got.begin());
        v.pack_weight_in_place(N, K, got.data());
        CHECK(got[floats] == 555.f);
        got[floats] = 777.f;
        CHECK(bits_equal(got, want));
        std::vector<float> row(K);
        bool rows_ok = true;
        for (int r = 0; r < N; ++r) {
          v.packed_weight_row(K, got.data(), r, row.data());
          rows_ok =
              rows_ok && std::equal(row.begin(), row.end(), W.begin() + static_cast<std::ptrdiff_t>(r) * K);
        }
        CHECK(rows_ok);
        const int p = v.packed_weight_panel_rows();
        if (N > p) {  // rows [p, N) as their own packed matrix, read through linear_nt_packed
          const int M = 3, n = N - p;
          const auto A = random_vec(static_cast<size_t>(M) * K, 60u);  // A: (M, K)
          std::vector<float> c_block(static_cast<size_t>(M) * n), c_want(c_block.size());
          v.linear_nt_packed(M, n, K, A.data(), K, got.data() + static_cast<std::ptrdiff_t>(p) * K, nullptr,
                             c_block.data(), n);
          v.linear_nt(M, n, K, A.data(), K, W.data() + static_cast<std::ptrdiff_t>(p) * K, K, nullptr,
                      c_want.data(), n);
          CHECK(bits_equal(c_block, c_want));
        }
      }
}

TEST_CASE("kernels: scale_vec, add_vec and add_bias_rows round each element once", "[kernel]") {
  for (const auto& v : variants())
    for (int n : row_sizes()) {
      INFO(v.name << " n=" << n);
      const auto x = random_vec(n, 1u + n), y = random_vec(n, 2u + n);
      std::vector<float> out(n), want(n);
      v.scale_vec(n, x.data(), 0.3f, out.data());
      for (int j = 0; j < n; ++j) want[j] = static_cast<float>(static_cast<double>(x[j]) * 0.3f);
      CHECK(out == want);
      v.add_vec(n, x.data(), y.data(), out.data());
      for (int j = 0; j < n; ++j) want[j] = static_cast<float>(static_cast<double>(x[j]) + y[j]);
      CHECK(out == want);
      const int rows = 3, ldc = n + 2;
      auto C = random_vec(static_cast<size_t>(rows) * ldc, 9u);  // C: (3, n), stride n + 2
      auto expect = C;
      for (int i = 0; i < rows; ++i)
        for (int j = 0; j < n; ++j) expect[i * ldc + j] = C[i * ldc + j] + y[j];
      v.add_bias_rows(rows, n, y.data(), C.data(), ldc);
      CHECK(C == expect);
    }
}

TEST_CASE("kernels: mask_row puts -inf where not allowed and adds the additive mask", "[kernel][mask]") {
  for (const auto& v : variants())
    for (int n : row_sizes())
      for (int mode = 0; mode < 4; ++mode) {
        INFO(v.name << " n=" << n << " additive=" << (mode & 1) << " allowed=" << (mode >> 1));
        const auto x = random_vec(n, 4u + n, -5.f, 5.f), add = random_vec(n, 5u + n);
        std::vector<std::uint8_t> allowed(n);
        for (int j = 0; j < n; ++j) allowed[j] = (j * 7 + n) % 3 == 0 ? 0 : (j % 2 ? 1 : 7);
        const float* a = (mode & 1) ? add.data() : nullptr;
        const std::uint8_t* al = (mode >> 1) ? allowed.data() : nullptr;
        std::vector<float> out(n), want(n);
        v.mask_row(n, x.data(), a, al, out.data());
        for (int j = 0; j < n; ++j)
          want[j] = (al && !al[j]) ? kNegInf : static_cast<float>(x[j] + (a ? double(a[j]) : 0.0));
        CHECK(out == want);
      }
}
