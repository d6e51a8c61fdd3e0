// narrow_f16 (float32 → IEEE binary16, the float16 KV cache) of every variant this build has against
// a double reference that knows nothing of bit tricks: the nearest of all finite float16 values (their
// value from the fields, in double), ties to the even pattern, 65520 and up to inf; on every float16
// value, every midpoint between neighbours and the floats beside it, subnormals, overflow, inf, NaN.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernel_variants.h"

namespace {

namespace k = attn::kernels;

struct Narrow {
  std::string name;
  void (*fn)(std::int64_t, const float*, std::uint16_t*);
};

std::vector<Narrow> narrow_variants() {
  std::vector<Narrow> v{{"scalar", k::narrow_f16_scalar}};
#if defined(__wasm_simd128__)
  v.push_back({"simd128", k::narrow_f16_simd128});
#endif
  return v;
}

// The value of a non-negative finite float16 pattern (0 … 0x7bff) from its fields.
double half_value(int h) {
  const int e = h >> 10, m = h & 0x3ff;
  return e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
}

// The reference: the nearest float16 by value (ties to the even pattern), sign kept; NaN → 0x7e00
// with its sign; |x| ≥ 65520 (the midpoint between 65504 and 2^16) → inf.
std::uint16_t reference(float x) {
  const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return sign | 0x7e00;
  const double a = std::fabs(static_cast<double>(x));
  if (a >= 65520.0) return sign | 0x7c00;
  int lo = 0, hi = 0x7bff;  // the largest pattern whose value ≤ a
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (half_value(mid) <= a)
      lo = mid;
    else
      hi = mid - 1;
  }
  if (lo == 0x7bff) return sign | 0x7bff;
  const double below = a - half_value(lo), above = half_value(lo + 1) - a;
  const int pick = below < above ? lo : above < below ? lo + 1 : (lo % 2 == 0 ? lo : lo + 1);
  return static_cast<std::uint16_t>(sign | pick);
}

// Every float16 value, each midpoint between neighbours and the floats either side of it, with
// both signs; a spread of random magnitudes from 2^-30 to 2^17; the edges (65504, 65520, inf, NaN).
std::vector<float> cases() {
  std::vector<float> x;
  for (int h = 0; h <= 0x7bff; ++h) {
    const float v = static_cast<float>(half_value(h));
    x.push_back(v);
    if (h < 0x7bff) {
      const float mid = static_cast<float>((half_value(h) + half_value(h + 1)) / 2);  // exact in float
      x.push_back(mid);
      x.push_back(std::nextafter(mid, 0.0f));
      x.push_back(std::nextafter(mid, 1e9f));
    }
  }
  const auto r = kernel_test::random_vec(20000, 7u, -30.0f, 17.0f);
  for (float e : r) x.push_back(std::exp2(e) * (1.0f + (e - std::floor(e)) * 0.37f));
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {65504.0f, 65519.996f, 65520.0f, 65536.0f, 1e10f, std::numeric_limits<float>::max(), inf,
                  std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min(), 2.98e-8f,
                  2.9802322e-8f, 5.96e-8f, 6.1035156e-5f, 6.1032e-5f})
    x.push_back(v);
  const std::size_t n = x.size();
  for (std::size_t i = 0; i < n; ++i) x.push_back(-x[i]);
  return x;
}

}  // namespace

TEST_CASE("kernels: narrow_f16 rounds to the nearest float16 (ties to even), to inf from 65520, NaN quiet",
          "[kernel][half]") {
  const std::vector<float> x = cases();
  std::vector<std::uint16_t> want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = reference(x[i]);
  for (const Narrow& v : narrow_variants()) {
    INFO(v.name);
    std::vector<std::uint16_t> got(x.size(), 0xdead);
    v.fn(static_cast<std::int64_t>(x.size()), x.data(), got.data());
    std::size_t wrong = 0, first = x.size();
    for (std::size_t i = 0; i < x.size(); ++i)
      if (got[i] != want[i] && wrong++ == 0) first = i;
    if (wrong) INFO("x = " << x[first] << " got " << got[first] << " want " << want[first]);
    CHECK(wrong == 0);
    // Round trip: every float16 value widens back to the float it came from.
    std::vector<float> back(x.size());
    k::widen_half(static_cast<int>(x.size()), got.data(), k::HalfFormat::kF16, back.data());
    for (int h = 0; h <= 0x7bff; h += 37) REQUIRE(back[static_cast<std::size_t>(4 * h)] == x[4 * h]);
  }
}

TEST_CASE("kernels: narrow_f16 handles every length 0 … 2·8+1 and leaves the rest of y alone",
          "[kernel][half]") {
  const auto x = kernel_test::random_vec(40, 3u, -70000.0f, 70000.0f);
  for (const Narrow& v : narrow_variants()) {
    for (int n = 0; n <= 17; ++n) {
      INFO(v.name << " n = " << n);
      std::vector<std::uint16_t> y(40, 0xbeef);
      v.fn(n, x.data() + 3, y.data() + 1);  // an unaligned start
      CHECK(y[0] == 0xbeef);
      for (int i = 0; i < n; ++i)
        CHECK(y[static_cast<std::size_t>(i + 1)] == reference(x[static_cast<std::size_t>(i + 3)]));
      for (int i = n + 1; i < 40; ++i) CHECK(y[static_cast<std::size_t>(i)] == 0xbeef);
    }
  }
}
