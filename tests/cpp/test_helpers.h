// Small helpers shared by the core tests: random tensors from the portable RNG and comparisons
// with named tolerances that report the worst element.
#pragma once
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/rng.h"
#include "core/tensor.h"

namespace testutil {

inline attn::Tensor random_tensor(attn::Shape shape, std::uint64_t seed, float scale = 1.0f) {
  attn::Tensor t = attn::Tensor::zeros(std::move(shape));
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = scale * attn::approx_normal(seed, i);
  return t;
}

// Largest |a[i] - b[i]| over two same-sized arrays.
template <typename A, typename B>
double max_abs_diff(const A& a, const B& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
    if (!(d <= worst)) worst = d;  // NaN propagates as "worst"
  }
  return worst;
}

template <typename A, typename B>
void require_close(const A& got, const B& want, double tol, const char* what) {
  const double err = max_abs_diff(got, want);
  INFO(what << ": max abs error " << err << " (tolerance " << tol << ")");
  REQUIRE(err <= tol);
}

inline bool all_finite(const std::vector<float>& v) {
  for (float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

}  // namespace testutil
