// The comparison of every PyTorch-fixture test: each element within 1e-5 + 1e-4·|want| (the
// issues' bound), reporting the worst element relative to its tolerance.
#pragma once
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "core/tensor.h"

namespace golden {

constexpr double kFixtureAbsTol = 1e-5;
constexpr double kFixtureRelTol = 1e-4;

inline void require_fixture_close(const std::vector<float>& got, const attn::Tensor& want, const char* what) {
  REQUIRE(got.size() == want.data.size());
  double worst = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double err =
        std::fabs(got[i] - want.data[i]) / (kFixtureAbsTol + kFixtureRelTol * std::fabs(want.data[i]));
    if (!(err <= worst)) worst = err, at = i;
  }
  INFO(what << ": worst error / tolerance " << worst << " at " << at);
  REQUIRE(worst <= 1.0);
}

}  // namespace golden
