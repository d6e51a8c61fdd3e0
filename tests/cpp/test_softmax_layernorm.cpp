// Softmax and LayerNorm over the last axis against plain double loops, and the seeds' worked example.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "core/softmax.h"
#include "test_helpers.h"

namespace {

constexpr double kSoftmaxTol = 1e-6;        // a few float32 ulps of values in [0, 1]
constexpr double kLayerNormTol = 2e-5;      // normalised values of magnitude ~3
constexpr double kWorkedExampleTol = 5e-5;  // the tutorial prints 4 digits

std::vector<double> softmax_ref(const std::vector<float>& x, int n) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r < x.size() / n; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < n; ++j) mx = std::max(mx, double(x[r * n + j]));
    for (int j = 0; j < n; ++j) sum += std::exp(double(x[r * n + j]) - mx);
    for (int j = 0; j < n; ++j) y[r * n + j] = std::exp(double(x[r * n + j]) - mx) / sum;
  }
  return y;
}

}  // namespace

TEST_CASE("softmax([1,1,1,5]) is the tutorial's [0.0174, 0.0174, 0.0174, 0.9479]", "[softmax]") {
  attn::Tensor y;
  REQUIRE(attn::softmax(attn::Tensor({4}, {1, 1, 1, 5}), y).ok());
  const std::vector<double> want = {0.0174, 0.0174, 0.0174, 0.9479};
  testutil::require_close(y.data, want, kWorkedExampleTol, "worked example");
}

TEST_CASE("softmax matches the double reference for sizes 1..9 and odd shapes", "[softmax]") {
  for (int n = 1; n <= 9; ++n) {
    for (attn::Shape shape : {attn::Shape{n}, attn::Shape{3, n}, attn::Shape{2, 5, n}}) {
      const attn::Tensor x = testutil::random_tensor(shape, 100 + n, 4.0f);
      attn::Tensor y;
      REQUIRE(attn::softmax(x, y).ok());
      REQUIRE(y.shape == x.shape);
      testutil::require_close(y.data, softmax_ref(x.data, n), kSoftmaxTol, "softmax");
    }
  }
}

TEST_CASE("softmax is stable for large logits and defines the all -inf row as zeros", "[softmax]") {
  const float inf = std::numeric_limits<float>::infinity();
  attn::Tensor y;
  REQUIRE(attn::softmax(attn::Tensor({2, 3}, {1000, 1001, 1002, -inf, -inf, -inf}), y).ok());
  testutil::require_close(std::vector<float>(y.data.begin(), y.data.begin() + 3), softmax_ref({0, 1, 2}, 3),
                          kSoftmaxTol, "large logits");
  CHECK(y.data[3] == 0.0f);
  CHECK(y.data[4] == 0.0f);
  CHECK(y.data[5] == 0.0f);
}

TEST_CASE("layer_norm matches the double reference with and without affine parameters", "[layernorm]") {
  for (int n = 1; n <= 9; ++n) {
    const attn::Tensor x = testutil::random_tensor({4, n}, 7 + n, 3.0f);
    attn::LayerNormOptions options;
    options.eps = n % 2 ? 1e-5f : 1e-6f;
    const bool affine = n > 2;
    if (affine) {
      options.weight = testutil::random_tensor({n}, 1000 + n).data;
      options.bias = testutil::random_tensor({n}, 2000 + n).data;
    }
    attn::Tensor y;
    REQUIRE(attn::layer_norm(x, options, y).ok());
    std::vector<double> want(x.data.size());
    for (int r = 0; r < 4; ++r) {
      double mean = 0, var = 0;
      for (int j = 0; j < n; ++j) mean += x.data[r * n + j];
      mean /= n;
      for (int j = 0; j < n; ++j) var += (x.data[r * n + j] - mean) * (x.data[r * n + j] - mean);
      var /= n;
      for (int j = 0; j < n; ++j) {
        const double norm = (x.data[r * n + j] - mean) / std::sqrt(var + options.eps);
        want[r * n + j] = affine ? norm * options.weight[j] + options.bias[j] : norm;
      }
    }
    testutil::require_close(y.data, want, kLayerNormTol, "layer_norm");
  }
}
