// The pretrained MLPs' activations (gelu_tanh_row: GPT-2's "gelu_new"; silu_mul_row: Llama's SwiGLU),
// every variant against a double-precision reference, on sizes 1 … 2·width+1 (the SIMD tail), a
// sweep through both tails and huge values (x³ overflowing float), and in place.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "kernel_variants.h"

namespace {

// σ's relative error is that of its argument times |z| (dσ/σ = (1 − σ)·dz), and float rounds the
// argument to ~1e-7: |y − y_ref| ≤ kActRelTol · (1 + |z|) · |y_ref| + kActAbsFloor.
constexpr double kActRelTol = 5e-7;
constexpr double kActAbsFloor = 1e-37;  // below it both are 0 or subnormal

double logistic_ref(double z) {  // stable in double too
  const double e = std::exp(-std::fabs(z));
  return z >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}

std::vector<float> sweep() {
  std::vector<float> x;
  for (int i = -1400; i <= 1400; ++i) x.push_back(0.01f * static_cast<float>(i));
  for (float v :
       {-1e30f, -1e6f, -100.0f, -45.0f, -20.5f, 1e-30f, -1e-30f, 0.0f, 20.5f, 45.0f, 100.0f, 1e6f, 1e30f})
    x.push_back(v);
  return x;
}

bool within(float got, double want, double z) {
  return std::fabs(got - want) <= kActRelTol * (1.0 + std::fabs(z)) * std::fabs(want) + kActAbsFloor;
}

// Checks one variant on x (and u = a second sweep for silu_mul); returns the first failing index or -1.
int first_wrong(const kernel_test::Variant& v, const std::vector<float>& x, bool in_place) {
  const int n = static_cast<int>(x.size());
  std::vector<float> u(x.size()), y(x), s(x);
  for (int i = 0; i < n; ++i)
    u[i] = 0.5f + 0.125f * static_cast<float>(i % 9) - 0.6f * static_cast<float>(i % 2);
  if (in_place) {
    v.gelu_tanh_row(n, y.data(), y.data());
    v.silu_mul_row(n, s.data(), u.data(), s.data());
  } else {
    v.gelu_tanh_row(n, x.data(), y.data());
    v.silu_mul_row(n, x.data(), u.data(), s.data());
  }
  for (int i = 0; i < n; ++i) {
    const double xi = x[i];
    const double z = 2.0 * 0.7978845608028654 * (xi + 0.044715 * xi * xi * xi);
    if (!within(y[i], std::isinf(z) ? (z > 0 ? xi : 0.0) : xi * logistic_ref(z), std::isinf(z) ? 0.0 : z))
      return i;
    if (!within(s[i], xi * logistic_ref(xi) * u[i], xi)) return i;
  }
  return -1;
}

}  // namespace

TEST_CASE("kernels: gelu_tanh_row and silu_mul_row match the double reference", "[kernel][activation]") {
  const std::vector<float> x = sweep();
  for (const auto& v : kernel_test::variants()) {
    for (const bool in_place : {false, true}) {
      const int bad = first_wrong(v, x, in_place);
      INFO(v.name << (in_place ? " in place" : "") << ": first wrong x = " << (bad < 0 ? 0.0f : x[bad]));
      CHECK(bad == -1);
    }
    for (int n = 1; n <= 9; ++n) {  // the SIMD tail, and nothing written past n
      std::vector<float> part(x.begin() + 1000, x.begin() + 1000 + n), y(n + 1, 7.0f), u(n, 1.5f),
          s(n + 1, 7.0f);
      v.gelu_tanh_row(n, part.data(), y.data());
      v.silu_mul_row(n, part.data(), u.data(), s.data());
      INFO(v.name << " n = " << n);
      CHECK(y[n] == 7.0f);
      CHECK(s[n] == 7.0f);
      for (int i = 0; i < n; ++i) {
        const double xi = part[i], z = 2.0 * 0.7978845608028654 * (xi + 0.044715 * xi * xi * xi);
        CHECK(within(y[i], xi * logistic_ref(z), z));
        CHECK(within(s[i], xi * logistic_ref(xi) * 1.5, xi));
      }
    }
  }
}
