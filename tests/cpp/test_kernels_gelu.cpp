// GELU kernels (gelu_row, gelu_backward_row), every variant against a double-precision reference on
// sizes 1 … 2·width+1 (the SIMD tail) and a sweep of x including the tails and huge values.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "kernel_variants.h"

namespace {

// The SIMD128 version's erfc fit has relative error < 1.2e-7; float32 evaluation adds a few ulps.
constexpr double kCdfTol = 4e-7;       // |Φ − Φ_ref|
constexpr double kGeluRelTol = 4e-7;   // |y − y_ref| ≤ kGeluRelTol · max(1, |x|)
constexpr double kDerivRelTol = 1e-6;  // |dx − dx_ref| ≤ kDerivRelTol · max(1, |x|) · |dy|

double phi_ref(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}
double pdf_ref(double x) {
  return std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
}

std::vector<float> sweep() {
  std::vector<float> x;
  for (int i = -1200; i <= 1200; ++i) x.push_back(0.01f * static_cast<float>(i));
  for (float v : {-1e30f, -1e6f, -40.0f, -20.5f, -13.0f, 1e-30f, -1e-30f, 13.0f, 20.5f, 40.0f, 1e6f, 1e30f})
    x.push_back(v);
  return x;
}

void check_variant(const kernel_test::Variant& v, const std::vector<float>& x) {
  const int n = static_cast<int>(x.size());
  std::vector<float> y(x.size(), -7.0f), cdf(x.size(), -7.0f), dx(x.size(), -7.0f);
  std::vector<float> dy(x.size());
  for (int i = 0; i < n; ++i) dy[i] = 1.0f + 0.25f * static_cast<float>(i % 7);
  v.gelu_row(n, x.data(), y.data(), cdf.data());
  v.gelu_backward_row(n, x.data(), cdf.data(), dy.data(), dx.data());
  for (int i = 0; i < n; ++i) {
    const double xi = x[i], scale = std::max(1.0, std::fabs(xi));
    const double phi = phi_ref(xi);
    INFO(v.name << " x = " << xi);
    REQUIRE(std::fabs(cdf[i] - phi) <= kCdfTol);
    REQUIRE(std::fabs(y[i] - xi * phi) <= kGeluRelTol * scale);
    const double want = dy[i] * (phi + xi * pdf_ref(xi));
    REQUIRE(std::fabs(dx[i] - want) <= kDerivRelTol * scale * dy[i]);
  }
  // No cdf requested, and in place (y over x): the same y.
  std::vector<float> in_place = x;
  v.gelu_row(n, in_place.data(), in_place.data(), nullptr);
  REQUIRE(in_place == y);
}

}  // namespace

TEST_CASE("kernels: gelu_row and gelu_backward_row match the double reference", "[kernel][gelu]") {
  const std::vector<float> all = sweep();
  for (const auto& v : kernel_test::variants()) {
    check_variant(v, all);
    for (int n = 1; n <= 9; ++n) {  // tails below, at and above the vector width
      std::vector<float> x(all.begin() + 1100, all.begin() + 1100 + n);
      check_variant(v, x);
    }
  }
}
