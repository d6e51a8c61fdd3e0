// Every kernel of src/kernels/kernels.h against the double reference (reference.h), for each
// variant this build has: the scalar twins always, the SIMD128 versions under __wasm_simd128__.
// Sizes run below, at and above the vector width (1 … 2·4+1) and across the GEMM tile and block
// boundaries; awkward shapes (T = 1, odd widths, heads of width 1), masked and huge inputs.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "reference.h"

namespace k = attn::kernels;

namespace {

// ---- named tolerances -----------------------------------------------------------------------
// GEMM: |C - ref| ≤ kGemmRelTol · Σ_k |a_ik b_kj| (float summation error grows with K; 1e-5 holds
// to K ≈ 1000 with margin, while one dropped or doubled term is ≥ 1e-3 off).
constexpr double kGemmRelTol = 1e-5;
constexpr double kSoftmaxTol = 2e-6;    // absolute, on weights in [0, 1]
constexpr double kExpUlpTol = 2.0;      // ulps, exp seen through softmax([0, x])[1]
constexpr double kLayerNormTol = 1e-5;  // absolute, outputs of order 1
constexpr double kOnlineTol = 1e-5;     // absolute, acc / l against softmax · V (|v| ≤ 1)
constexpr double kAttnTol = 1e-5;       // absolute, attention weights and outputs
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// ---- the variants under test ----------------------------------------------------------------
struct Variant {
  std::string name;
  decltype(&k::gemm_nn_scalar) gemm_nn, gemm_nt;
  decltype(&k::add_bias_rows_scalar) add_bias_rows;
  decltype(&k::scale_vec_scalar) scale_vec;
  decltype(&k::add_vec_scalar) add_vec;
  decltype(&k::mask_row_scalar) mask_row;
  decltype(&k::softmax_row_scalar) softmax_row;
  decltype(&k::scale_mask_softmax_row_scalar) scale_mask_softmax_row;
  decltype(&k::layer_norm_row_scalar) layer_norm_row;
  decltype(&k::online_softmax_update_scalar) online_softmax_update;
};

// clang-format off
#define ATTN_VARIANT(sfx)                                                                      \
  Variant{#sfx, k::gemm_nn_##sfx, k::gemm_nt_##sfx, k::add_bias_rows_##sfx, k::scale_vec_##sfx, \
          k::add_vec_##sfx, k::mask_row_##sfx, k::softmax_row_##sfx,                            \
          k::scale_mask_softmax_row_##sfx, k::layer_norm_row_##sfx,                              \
          k::online_softmax_update_##sfx}
// clang-format on

const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = {
    ATTN_VARIANT(scalar),
#if defined(__wasm_simd128__)
    ATTN_VARIANT(simd128),
#endif
  };
  return all;
}

// ---- deterministic inputs (portable LCG, same numbers on every platform) ---------------------
struct Rng {
  std::uint32_t s;
  float uniform(float lo, float hi) {
    s = s * 1664525u + 1013904223u;
    return lo + (hi - lo) * static_cast<float>(s >> 8) * (1.0f / 16777216.0f);
  }
};

std::vector<float> random_vec(size_t n, std::uint32_t seed, float lo = -1.f, float hi = 1.f) {
  Rng rng{seed};
  std::vector<float> v(n);
  for (auto& x : v) x = rng.uniform(lo, hi);
  return v;
}

const std::vector<int>& row_sizes() {  // 1 … 2·width+1, then odd and block-sized rows
  static const std::vector<int> n = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 16, 17, 33, 64, 100, 1000};
  return n;
}

bool bits_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

double max_abs_diff(const std::vector<float>& got, const std::vector<double>& want) {
  double e = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::fabs(got[i] - want[i]);
    e = (d > e || std::isnan(d)) ? d : e;  // a NaN fails every tolerance
  }
  return e;
}

// Runs one GEMM with padded leading dimensions and returns the worst error relative to the bound
// (≤ 1 passes); a write outside C's (M, N) range (padding column, guard row) returns +inf.
double gemm_error(const Variant& v, bool nt, int M, int N, int K, bool accumulate, int pad) {
  const int lda = K + pad, ldb = (nt ? K : N) + pad, ldc = N + pad;
  const auto A = random_vec(static_cast<size_t>(M) * lda, 11u + M);          // A: (M, K), stride lda
  const auto B = random_vec(static_cast<size_t>(nt ? N : K) * ldb, 7u + N);  // B: (K,N) or (N,K)
  // C: (M, N), stride ldc, then one guard row; padding columns and the guard row hold a sentinel.
  auto C = random_vec(static_cast<size_t>(M + 1) * ldc, 3u + K);
  for (int i = 0; i <= M; ++i)
    for (int j = i < M ? N : 0; j < ldc; ++j) C[static_cast<size_t>(i) * ldc + j] = 777.f;
  const auto C0 = C;
  (nt ? v.gemm_nt : v.gemm_nn)(M, N, K, A.data(), lda, B.data(), ldb, C.data(), ldc, accumulate);
  std::vector<double> want, scale;  // want, scale: (M, N)
  ref::gemm(M, N, K, A.data(), lda, B.data(), ldb, nt, want);
  ref::gemm_abs(M, N, K, A.data(), lda, B.data(), ldb, nt, scale);
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
#if defined(__wasm_simd128__)
  CHECK(std::string(k::active_variant()) == "simd128");
#else
  CHECK(std::string(k::active_variant()) == "scalar");
#endif
  const Variant& active = variants().back();
  REQUIRE(active.name == k::active_variant());
  const auto x = random_vec(37, 5u, -3.f, 3.f);
  std::vector<float> a(37), b(37);
  k::softmax_row(37, x.data(), a.data());
  active.softmax_row(37, x.data(), b.data());
  CHECK(bits_equal(a, b));
}

TEST_CASE("kernels: gemm_nn and gemm_nt match the reference for every M, N, K in 1..17", "[kernel][gemm]") {
  for (const auto& v : variants())
    for (int nt = 0; nt < 2; ++nt) {
      double worst = 0.0;
      std::string where;
      for (int M = 1; M <= 17; ++M)
        for (int N = 1; N <= 17; ++N)
          for (int K = 1; K <= 17; ++K) {
            const double e = gemm_error(v, nt, M, N, K, (M + N + K) % 2 == 1, (M * N + K) % 3);
            if (!(e <= worst)) {  // also catches NaN
              worst = e;
              where = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
            }
          }
      INFO(v.name << (nt ? " gemm_nt" : " gemm_nn") << ", worst at " << where);
      CHECK(worst <= 1.0);
    }
}

TEST_CASE("kernels: gemm crosses the tile and block boundaries on larger odd shapes", "[kernel][gemm]") {
  struct Shape {
    int M, N, K;
  };
  // 33x65x31: odd everything; K = 300 > one K slice; N = 520 > one N block; M = 131 > one M block.
  const Shape shapes[] = {{33, 65, 31}, {100, 37, 300}, {131, 520, 9}, {5, 1030, 260},
                          {1, 1, 1000}, {257, 3, 1},    {1, 64, 64},   {64, 1, 64}};
  for (const auto& v : variants())
    for (const auto& s : shapes)
      for (int nt = 0; nt < 2; ++nt)
        for (int acc = 0; acc < 2; ++acc) {
          INFO(v.name << (nt ? " gemm_nt " : " gemm_nn ") << s.M << "x" << s.N << "x" << s.K
                      << (acc ? " accumulate" : ""));
          CHECK(gemm_error(v, nt, s.M, s.N, s.K, acc, 1) <= 1.0);
        }
}

TEST_CASE("kernels: gemm with K = 0 writes zeros, or leaves C alone when accumulating", "[kernel][gemm]") {
  for (const auto& v : variants())
    for (int nt = 0; nt < 2; ++nt) {
      const float a = 1.f, b = 1.f;
      std::vector<float> C(6, 5.f);  // C: (2, 3)
      (nt ? v.gemm_nt : v.gemm_nn)(2, 3, 0, &a, 1, &b, 3, C.data(), 3, true);
      CHECK(C == std::vector<float>(6, 5.f));
      (nt ? v.gemm_nt : v.gemm_nn)(2, 3, 0, &a, 1, &b, 3, C.data(), 3, false);
      CHECK(C == std::vector<float>(6, 0.f));
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

TEST_CASE("kernels: softmax_row matches the reference, with some keys masked", "[kernel][softmax]") {
  for (const auto& v : variants())
    for (int n : row_sizes())
      for (int masked = 0; masked < 2; ++masked) {
        INFO(v.name << " n=" << n << " masked=" << masked);
        auto x = random_vec(n, 6u + n, -8.f, 8.f);
        if (masked)
          for (int j = 0; j < n; j += 3) x[j] = kNegInf;  // j = 0 masked; n = 1 is fully masked
        std::vector<double> want(n);
        ref::softmax_row(n, x.data(), want.data());
        std::vector<float> out(n);
        v.softmax_row(n, x.data(), out.data());
        CHECK(max_abs_diff(out, want) <= kSoftmaxTol);
        v.softmax_row(n, x.data(), x.data());  // in place
        CHECK(bits_equal(x, out));
      }
}

TEST_CASE("kernels: softmax_row of a fully masked row is zeros, never NaN", "[kernel][softmax]") {
  for (const auto& v : variants())
    for (int n : row_sizes()) {
      INFO(v.name << " n=" << n);
      const std::vector<float> x(n, kNegInf);
      std::vector<float> out(n, 123.f);
      v.softmax_row(n, x.data(), out.data());
      CHECK(out == std::vector<float>(n, 0.f));
    }
}

TEST_CASE("kernels: softmax_row of huge logits does not overflow", "[kernel][softmax]") {
  const std::vector<std::vector<float>> rows = {
      {1, 1, 1, 5},  // the tutorial's worked example
      {1e4f, 1e4f - 1.f, -1e4f},
      {3e38f, -3e38f, 3e38f, 0.f, 1.f},
      {88.f, 89.f, 90.f, 1000.f, 120.f, -120.f, 50.f},
      {-1e30f, -1e30f + 1e24f, kNegInf, -1e30f, -1e30f, -1e30f, -1e30f, -1e30f, -1e30f}};
  for (const auto& v : variants())
    for (const auto& x : rows) {
      INFO(v.name << " n=" << x.size() << " x[0]=" << x[0]);
      const int n = static_cast<int>(x.size());
      std::vector<double> want(n);
      ref::softmax_row(n, x.data(), want.data());
      std::vector<float> out(n);
      v.softmax_row(n, x.data(), out.data());
      CHECK(max_abs_diff(out, want) <= kSoftmaxTol);
    }
  std::vector<float> out(4);
  variants().back().softmax_row(4, rows[0].data(), out.data());
  CHECK(out[0] == Approx(0.0174).margin(1e-4));
  CHECK(out[3] == Approx(0.9479).margin(1e-4));
}

TEST_CASE("kernels: softmax_row's exp is accurate to a few ulp down to underflow", "[kernel][softmax]") {
  // softmax([0, x])[1] = e^x / (1 + e^x); for x < -17, 1 + e^x rounds to 1, so it is e^x itself.
  for (const auto& v : variants()) {
    double worst_ulp = 0.0, worst_rel = 0.0;
    for (float x = -87.0f; x < 0.f; x += 0.0137f) {
      const float row[2] = {0.f, x};
      float out[2];
      v.softmax_row(2, row, out);
      const double e = std::exp(static_cast<double>(x));
      if (x < -17.f) {
        int exp2;
        std::frexp(static_cast<float>(e), &exp2);
        worst_ulp = std::max(worst_ulp, std::fabs(out[1] - e) / std::ldexp(1.0, exp2 - 24));
      } else {
        worst_rel = std::max(worst_rel, std::fabs(out[1] - e / (1 + e)) / (e / (1 + e)));
      }
    }
    INFO(v.name << ": " << worst_ulp << " ulp on [-87, -17], relative " << worst_rel);
    CHECK(worst_ulp <= kExpUlpTol);
    CHECK(worst_rel <= 4 * kExpUlpTol * std::numeric_limits<float>::epsilon());
    const float deep[3] = {0.f, -100.f, -1e6f};  // far below underflow: exactly 0, not NaN
    float out[3];
    v.softmax_row(3, deep, out);
    CHECK(out[0] == 1.f);
    CHECK(out[1] == Approx(0.0).margin(1e-40));
    CHECK(out[2] == 0.f);
  }
}

TEST_CASE("kernels: scale_mask_softmax_row equals scale_vec -> mask_row -> softmax_row bit for bit",
          "[kernel][softmax]") {
  const float scales[] = {0.125f, 0.37796447f, 1.0f};
  std::vector<int> sizes = row_sizes();
  sizes.insert(sizes.end(), {11, 12, 15, 31, 40, 513});
  for (const auto& v : variants())
    for (int n : sizes)
      for (int mode = 0; mode < 8; ++mode) {
        const float scale = scales[mode % 3];
        const auto x = random_vec(n, 8u + n + mode, -20.f, 20.f), add = random_vec(n, 9u + n);
        std::vector<std::uint8_t> allowed(n);
        for (int j = 0; j < n; ++j) allowed[j] = mode == 7 ? 0 : (j * 5 + mode) % 4 != 0;
        const float* a = (mode & 1) ? add.data() : nullptr;
        const std::uint8_t* al = (mode & 2) || mode == 7 ? allowed.data() : nullptr;
        INFO(v.name << " n=" << n << " mode=" << mode);
        std::vector<float> fused(n), step(n), tmp(n);
        v.scale_mask_softmax_row(n, x.data(), scale, a, al, fused.data());
        v.scale_vec(n, x.data(), scale, tmp.data());
        v.mask_row(n, tmp.data(), a, al, tmp.data());
        v.softmax_row(n, tmp.data(), step.data());
        CHECK(bits_equal(fused, step));
        std::vector<double> z(n), want(n);  // z: (n) the reference's masked scores
        for (int j = 0; j < n; ++j)
          z[j] = (al && !al[j]) ? -HUGE_VAL : double(x[j] * scale) + (a ? a[j] : 0.0);
        ref::softmax_row(n, z.data(), want.data());
        CHECK(max_abs_diff(fused, want) <= kSoftmaxTol);
        if (mode == 7) CHECK(fused == std::vector<float>(n, 0.f));
      }
}

TEST_CASE("kernels: layer_norm_row matches the reference", "[kernel][layernorm]") {
  std::vector<int> sizes = row_sizes();
  sizes.push_back(512);
  for (const auto& v : variants())
    for (int n : sizes)
      for (int mode = 0; mode < 4; ++mode) {
        INFO(v.name << " n=" << n << " gamma=" << (mode & 1) << " beta=" << (mode >> 1));
        auto x = random_vec(n, 10u + n, 1.f, 5.f);
        const auto g = random_vec(n, 11u + n, 0.5f, 1.5f), b = random_vec(n, 12u + n);
        const float* gamma = (mode & 1) ? g.data() : nullptr;
        const float* beta = (mode >> 1) ? b.data() : nullptr;
        const float eps = mode % 2 ? 1e-5f : 1e-6f;
        std::vector<double> want(n);
        ref::layer_norm_row(n, x.data(), gamma, beta, eps, want.data());
        std::vector<float> out(n);
        v.layer_norm_row(n, x.data(), gamma, beta, eps, out.data());
        CHECK(max_abs_diff(out, want) <= kLayerNormTol);
        v.layer_norm_row(n, x.data(), gamma, beta, eps, x.data());  // in place
        CHECK(bits_equal(x, out));
        const std::vector<float> flat(n, 2.5f);  // zero variance: (x - mean) = 0 → beta
        v.layer_norm_row(n, flat.data(), gamma, beta, eps, out.data());
        CHECK(out == (beta ? b : std::vector<float>(n, 0.f)));
      }
}

TEST_CASE("kernels: online_softmax_update over tiles equals softmax · V", "[kernel][online]") {
  const int tiles[] = {1, 3, 4, 16, 64, 100};
  const int dvs[] = {1, 3, 4, 7, 16, 17, 64};
  for (const auto& v : variants())
    for (int Tk : {1, 5, 17, 64, 130})
      for (int tile : tiles)
        for (int dv : dvs)
          for (int mode = 0; mode < 3; ++mode) {  // 0 plain, 1 masked + steep, 2 all masked
            INFO(v.name << " Tk=" << Tk << " tile=" << tile << " dv=" << dv << " mode=" << mode);
            auto s = random_vec(Tk, 13u + Tk + dv, -4.f, 4.f);  // s: (Tk) scaled+masked scores
            for (int j = 0; j < Tk; ++j) {
              if (mode == 1) s[j] = (j < tile || j % 5 == 2) ? kNegInf : s[j] + 0.5f * j;
              if (mode == 2) s[j] = kNegInf;
            }
            const int ldv = dv + 1;
            const auto V = random_vec(static_cast<size_t>(Tk) * ldv, 14u + dv);  // V: (Tk, dv)
            float m = kNegInf, l = 0.f;
            std::vector<float> acc(dv, 0.f);  // acc: (dv)
            for (int j0 = 0; j0 < Tk; j0 += tile)
              v.online_softmax_update(std::min(tile, Tk - j0), s.data() + j0,
                                      V.data() + static_cast<size_t>(j0) * ldv, ldv, dv, &m, &l, acc.data());
            std::vector<double> w(Tk), want(dv, 0.0);
            ref::softmax_row(Tk, s.data(), w.data());
            for (int j = 0; j < Tk; ++j)
              for (int d = 0; d < dv; ++d) want[d] += w[j] * V[static_cast<size_t>(j) * ldv + d];
            std::vector<float> out(dv, 0.f);
            if (l > 0.f)
              for (int d = 0; d < dv; ++d) out[d] = acc[d] / l;
            if (mode == 2) CHECK((l == 0.f && m == kNegInf));
            CHECK(max_abs_diff(out, want) <= kOnlineTol);
          }
}

TEST_CASE("kernels: composed into attention, they match ref::sdpa", "[kernel][attention]") {
  struct Shape {
    int batch, Tq, Tk, dk, dv;
  };
  const Shape shapes[] = {{1, 1, 1, 1, 1}, {2, 1, 5, 3, 1},    {1, 7, 9, 1, 4},
                          {3, 5, 5, 8, 8}, {1, 17, 33, 65, 7}, {2, 9, 70, 16, 16}};
  for (const auto& v : variants())
    for (const auto& sh : shapes)
      for (int masked = 0; masked < 2; ++masked) {
        INFO(v.name << " b=" << sh.batch << " Tq=" << sh.Tq << " Tk=" << sh.Tk << " dk=" << sh.dk
                    << " dv=" << sh.dv << " masked=" << masked);
        const int B = sh.batch, Tq = sh.Tq, Tk = sh.Tk, dk = sh.dk, dv = sh.dv;
        const auto q = random_vec(size_t(B) * Tq * dk, 21u), kk = random_vec(size_t(B) * Tk * dk, 22u);
        const auto vv = random_vec(size_t(B) * Tk * dv, 23u);
        const auto add = random_vec(size_t(B) * Tq * Tk, 24u, -0.5f, 0.5f);
        std::vector<std::uint8_t> allowed(size_t(B) * Tq * Tk);  // causal; row 0 of batch 1 empty
        for (int b = 0; b < B; ++b)
          for (int i = 0; i < Tq; ++i)
            for (int j = 0; j < Tk; ++j)
              allowed[(size_t(b) * Tq + i) * Tk + j] = j <= i && !(b == 1 && i == 0);
        const double scale = 1.0 / std::sqrt(double(dk));
        std::vector<double> want_out, want_w;
        ref::sdpa(q, kk, vv, B, Tq, Tk, dk, dv, scale, masked ? &allowed : nullptr, masked ? &add : nullptr,
                  want_out, want_w);
        std::vector<float> w(size_t(B) * Tq * Tk), out(size_t(B) * Tq * dv), flash(out.size());
        for (int b = 0; b < B; ++b) {
          const size_t qo = size_t(b) * Tq, ko = size_t(b) * Tk;
          float* wb = &w[qo * Tk];  // wb: (Tq, Tk) scores, then weights
          v.gemm_nt(Tq, Tk, dk, &q[qo * dk], dk, &kk[ko * dk], dk, wb, Tk, false);
          for (int i = 0; i < Tq; ++i) {
            const size_t r = (qo + i) * Tk;
            v.scale_mask_softmax_row(Tk, wb + size_t(i) * Tk, float(scale), masked ? &add[r] : nullptr,
                                     masked ? &allowed[r] : nullptr, wb + size_t(i) * Tk);
          }
          v.gemm_nn(Tq, dv, Tk, wb, Tk, &vv[ko * dv], dv, &out[qo * dv], dv, false);
          for (int i = 0; i < Tq; ++i) {  // the flash path: scores of query i in tiles of 4 keys
            float m = kNegInf, l = 0.f, s[4];
            std::vector<float> acc(dv, 0.f);
            for (int j0 = 0; j0 < Tk; j0 += 4) {
              const int n = std::min(4, Tk - j0);
              const size_t r = (qo + i) * Tk + j0;
              v.gemm_nt(1, n, dk, &q[(qo + i) * dk], dk, &kk[(ko + j0) * dk], dk, s, n, false);
              v.scale_vec(n, s, float(scale), s);
              v.mask_row(n, s, masked ? &add[r] : nullptr, masked ? &allowed[r] : nullptr, s);
              v.online_softmax_update(n, s, &vv[(ko + j0) * dv], dv, dv, &m, &l, acc.data());
            }
            for (int d = 0; d < dv; ++d) flash[(qo + i) * dv + d] = l > 0.f ? acc[d] / l : 0.f;
          }
        }
        CHECK(max_abs_diff(w, want_w) <= kAttnTol);
        CHECK(max_abs_diff(out, want_out) <= kAttnTol);
        CHECK(max_abs_diff(flash, want_out) <= kAttnTol);
      }
}

TEST_CASE("kernels: ref::sdpa itself: a hand-computed case and the callback mask", "[kernel][attention]") {
  // One query, two keys, dk = dv = 1: scores [0, ln 3] → weights [1/4, 3/4], out = 0.25·2 + 0.75·6.
  const std::vector<float> q = {1.f}, kk = {0.f, float(std::log(3.0))}, vv = {2.f, 6.f};
  std::vector<double> out, w;
  ref::sdpa(q, kk, vv, 1, 1, 2, 1, 1, 1.0, nullptr, nullptr, out, w);
  CHECK(w[0] == Approx(0.25).epsilon(1e-7));
  CHECK(out[0] == Approx(5.0).epsilon(1e-7));
  const std::vector<std::uint8_t> none = {0, 0};
  ref::sdpa(q, kk, vv, 1, 1, 2, 1, 1, 1.0, &none, nullptr, out, w);
  CHECK((w[0] == 0.0 && w[1] == 0.0 && out[0] == 0.0));  // fully masked row → zeros
  ref::sdpa_fn(
      q, kk, vv, 1, 1, 2, 1, 1, 1.0, [](int, int, int j) { return j == 1; }, nullptr, out, w);
  CHECK((w[0] == 0.0 && w[1] == 1.0 && out[0] == 6.0));
}
