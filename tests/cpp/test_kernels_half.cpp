// The 16-bit weight kernels (widen_half, linear_nt_half) of every variant this build has, against
// independent references: every float16 / bfloat16 bit pattern decoded in double arithmetic from its
// fields, and the GEMM against the double reference over the widened weights; plus the contract that
// linear_nt_half equals the same variant's linear_nt over widen_half(W) bit for bit.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernel_variants.h"
#include "reference.h"

using namespace kernel_test;
using attn::kernels::HalfFormat;

namespace {

// |C - ref| ≤ kHalfGemmRelTol · Σ_k |a_ik w_kj|: the widening is exact, so this is the float GEMM's
// own summation bound (test_kernels.cpp's kGemmRelTol).
constexpr double kHalfGemmRelTol = 1e-5;

std::uint32_t float_bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// The value of a float16 bit pattern from its fields, in double: (-1)^s · 2^(e-15) · (1 + m/1024),
// subnormals 2^-14 · m/1024; exponent 31 is ±inf or NaN.
double f16_value(std::uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const double sign = s ? -1.0 : 1.0;
  if (e == 31)
    return m ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
  if (e == 0) return sign * std::ldexp(m / 1024.0, -14);
  return sign * std::ldexp(1.0 + m / 1024.0, e - 15);
}

// The value of a bfloat16 bit pattern: float32's fields with 7 mantissa bits.
double bf16_value(std::uint16_t h) {
  const int s = h >> 15, e = (h >> 7) & 0xff, m = h & 0x7f;
  const double sign = s ? -1.0 : 1.0;
  if (e == 255)
    return m ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
  if (e == 0) return sign * std::ldexp(m / 128.0, -126);
  return sign * std::ldexp(1.0 + m / 128.0, e - 127);
}

// Random 16-bit weights in [-1, 1): the float values rounded to the format (round to nearest even
// is not needed: any pattern is a valid weight; truncation keeps the generator independent).
std::vector<std::uint16_t> random_half(std::size_t n, std::uint32_t seed, HalfFormat f) {
  const auto v = random_vec(n, seed);
  std::vector<std::uint16_t> h(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t b = float_bits(v[i]);
    if (f == HalfFormat::kBF16) {
      h[i] = static_cast<std::uint16_t>(b >> 16);
    } else {  // |v| < 1: exponent ≤ 126; below 2^-14 the value becomes a float16 subnormal or zero
      const int e = static_cast<int>((b >> 23) & 0xff) - 127 + 15;
      const std::uint32_t sign = (b >> 16) & 0x8000u, mant = (b & 0x7fffffu) >> 13;
      h[i] = static_cast<std::uint16_t>(e > 0 ? sign | (static_cast<std::uint32_t>(e) << 10) | mant : sign);
    }
  }
  return h;
}

const char* format_name(HalfFormat f) {
  return f == HalfFormat::kBF16 ? " bf16" : " f16";
}

// One linear_nt_half with padded strides: the worst error against the double reference relative to
// its bound (≤ 1 passes), +inf for a write outside C's (M, N); `bits_equal_to_float` reports whether
// it equals linear_nt over the widened W bit for bit.
double half_gemm_error(const Variant& v, HalfFormat f, int M, int N, int K, bool bias, bool& same_as_float) {
  const int lda = K + 1, ldw = K + 2, ldc = N + 1;
  const auto A = random_vec(static_cast<std::size_t>(M) * lda, 5u + M + K);
  const auto W = random_half(static_cast<std::size_t>(N) * ldw, 9u + N, f);  // W: (N, K), stride ldw
  const auto b = random_vec(static_cast<std::size_t>(N), 13u + N);
  std::vector<float> wide(W.size());
  v.widen_half(static_cast<int>(W.size()), W.data(), f, wide.data());
  std::vector<float> C(static_cast<std::size_t>(M + 1) * ldc, 777.f), C_float(C);
  v.linear_nt_half(M, N, K, A.data(), lda, W.data(), ldw, f, bias ? b.data() : nullptr, C.data(), ldc);
  v.linear_nt(M, N, K, A.data(), lda, wide.data(), ldw, bias ? b.data() : nullptr, C_float.data(), ldc);
  same_as_float = bits_equal(C, C_float);
  std::vector<double> want, scale;  // (M, N)
  ref::gemm(M, N, K, A.data(), lda, wide.data(), ldw, true, want);
  ref::gemm_abs(M, N, K, A.data(), lda, wide.data(), ldw, true, scale);
  double worst = 0.0;
  for (int i = 0; i <= M; ++i)
    for (int j = 0; j < ldc; ++j) {
      const float got = C[static_cast<std::size_t>(i) * ldc + j];
      if (i == M || j >= N) {
        if (got != 777.f) return std::numeric_limits<double>::infinity();
        continue;
      }
      const std::size_t r = static_cast<std::size_t>(i) * N + j;
      const double expect = want[r] + (bias ? b[j] : 0.0);
      const double err =
          std::fabs(got - expect) / (kHalfGemmRelTol * (scale[r] + (bias ? std::fabs(b[j]) : 0.0)) + 1e-30);
      worst = (err > worst || std::isnan(err)) ? err : worst;
    }
  return worst;
}

}  // namespace

TEST_CASE("kernels: widen_half decodes every float16 and bfloat16 bit pattern exactly", "[kernel][half]") {
  std::vector<std::uint16_t> all(65536);
  for (std::uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<std::uint16_t>(i);
  for (const auto& v : variants())
    for (const HalfFormat f : {HalfFormat::kF16, HalfFormat::kBF16}) {
      std::vector<float> y(all.size());
      v.widen_half(static_cast<int>(all.size()), all.data(), f, y.data());
      int wrong = 0, first_wrong = -1;
      for (std::uint32_t i = 0; i < 65536; ++i) {
        const double want = f == HalfFormat::kBF16 ? bf16_value(all[i]) : f16_value(all[i]);
        bool ok = std::isnan(want) ? std::isnan(y[i]) : static_cast<double>(y[i]) == want;
        // A zero keeps its sign; a NaN keeps its sign and payload in float32's top mantissa bits.
        if (want == 0.0) ok = ok && std::signbit(y[i]) == ((all[i] & 0x8000u) != 0);
        if (std::isnan(want)) {
          const std::uint32_t payload =
              f == HalfFormat::kBF16 ? (all[i] & 0x7fu) << 16 : (all[i] & 0x3ffu) << 13;
          ok = ok && float_bits(y[i]) == (((all[i] & 0x8000u) << 16) | 0x7f800000u | payload);
        }
        if (!ok && wrong++ == 0) first_wrong = static_cast<int>(i);
      }
      INFO(v.name << format_name(f) << ": first wrong pattern " << first_wrong);
      CHECK(wrong == 0);
    }
}

TEST_CASE("kernels: widen_half handles every length 1 … 2·8+1 and leaves the rest of y alone",
          "[kernel][half]") {
  for (const auto& v : variants())
    for (const HalfFormat f : {HalfFormat::kF16, HalfFormat::kBF16})
      for (int n = 1; n <= 17; ++n) {
        const auto x = random_half(static_cast<std::size_t>(n), 3u + n, f);
        std::vector<float> y(static_cast<std::size_t>(n) + 1, 777.f);
        v.widen_half(n, x.data(), f, y.data());
        bool ok = y[n] == 777.f;
        for (int i = 0; i < n; ++i)
          ok = ok &&
               static_cast<double>(y[i]) == (f == HalfFormat::kBF16 ? bf16_value(x[i]) : f16_value(x[i]));
        INFO(v.name << format_name(f) << " n = " << n);
        CHECK(ok);
      }
}

TEST_CASE("kernels: linear_nt_half matches the double reference and linear_nt over the widened W",
          "[kernel][half][gemm]") {
  for (const auto& v : variants())
    for (const HalfFormat f : {HalfFormat::kF16, HalfFormat::kBF16}) {
      double worst = 0.0;
      bool all_same = true;
      std::string where, differs;
      for (int M = 1; M <= 9; ++M)
        for (int N = 1; N <= 17; ++N)
          for (int K = 1; K <= 17; ++K) {
            bool same = false;
            const double e = half_gemm_error(v, f, M, N, K, (M + N + K) % 2 == 1, same);
            if (!(e <= worst)) {
              worst = e;
              where = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
            }
            if (!same && all_same)
              differs = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
            all_same = all_same && same;
          }
      INFO(v.name << format_name(f) << ", worst at " << where
                  << "; first differing from linear_nt: " << differs);
      CHECK(worst <= 1.0);
      CHECK(all_same);
    }
}

TEST_CASE("kernels: linear_nt_half crosses the K slice, N block and M block boundaries",
          "[kernel][half][gemm]") {
  struct Shape {
    int M, N, K;
  };
  // K = 800 and 1600 > one and two K slices (768); N = 520 > two N blocks (256); M = 131 > one M
  // block (64 or 80 rows).
  const Shape shapes[] = {{1, 520, 800}, {131, 9, 33}, {4, 1030, 260}, {2, 3, 1600}, {128, 64, 64}};
  for (const auto& v : variants())
    for (const HalfFormat f : {HalfFormat::kF16, HalfFormat::kBF16})
      for (const auto& s : shapes) {
        bool same = false;
        INFO(v.name << format_name(f) << " " << s.M << "x" << s.N << "x" << s.K);
        CHECK(half_gemm_error(v, f, s.M, s.N, s.K, true, same) <= 1.0);
        CHECK(same);
      }
}
