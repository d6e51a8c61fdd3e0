// Backward of softmax and LayerNorm (src/core/softmax_backward.h) against central finite differences
// of double-precision forwards (reference_backward_ops.h), and every validation error.
// The small layers (src/model/layers.h) are tested in test_backward_ops_layers.cpp.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>

#include "core/softmax.h"
#include "core/softmax_backward.h"
#include "reference_backward_ops.h"
#include "test_helpers.h"

namespace {

constexpr double kFdStep = 1e-3;  // central differences in double: truncation error ~h²·f'''/6 ≈ 1e-7
constexpr double kSoftmaxGradTol = 2e-6;    // float backward of O(1) values vs the double derivative
constexpr double kLayerNormGradTol = 2e-5;  // rstd ~1, sums over ≤ 7 terms of O(1) values in float
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

using ref_ops::Vec;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// softmax x (rows, n) with -inf at two places of row 1 and all of row 2 (when rows ≥ 3).
attn::Tensor masked_logits(attn::Shape shape, std::uint64_t seed) {
  attn::Tensor x = testutil::random_tensor(shape, seed, 2.0f);
  const int n = x.dim(-1);
  x.data[1 * n + 1] = -kInf;
  x.data[1 * n + 3] = -kInf;
  for (int j = 0; j < n; ++j) x.data[2 * n + j] = -kInf;
  return x;
}

}  // namespace

TEST_CASE("softmax_backward matches finite differences, -inf inputs and the fully masked row give 0",
          "[backward-ops]") {
  for (attn::Shape shape : {attn::Shape{3, 5}, attn::Shape{4, 7}, attn::Shape{3, 3}}) {
    const attn::Tensor x = masked_logits(shape, 11 + shape.back());  // (rows, n)
    const int n = x.dim(-1);
    const attn::Tensor dy = testutil::random_tensor(shape, 40 + shape.back());  // (rows, n)
    attn::Tensor y, dx;
    REQUIRE(attn::softmax(x, y).ok());
    REQUIRE(attn::softmax_backward(y, dy, dx).ok());
    REQUIRE(dx.shape == x.shape);

    const Vec dy_d = ref_ops::to_double(dy.data);
    const Vec want = ref_ops::central_diff(
        ref_ops::to_double(x.data), [&](const Vec& p) { return ref_ops::softmax_loss(p, dy_d, n); }, kFdStep);
    testutil::require_close(dx.data, want, kSoftmaxGradTol, "softmax dx");
    CHECK(dx.data[1 * n + 1] == 0.0f);
    CHECK(dx.data[1 * n + 3] == 0.0f);
    for (int j = 0; j < n; ++j) CHECK(dx.data[2 * n + j] == 0.0f);
  }
}

TEST_CASE("softmax_backward_row works in place (dx aliasing dy) and handles higher rank", "[backward-ops]") {
  const attn::Tensor x = testutil::random_tensor({2, 3, 5}, 5, 3.0f);  // (2, 3, 5)
  const attn::Tensor dy = testutil::random_tensor({2, 3, 5}, 6);       // (2, 3, 5)
  attn::Tensor y, dx;
  REQUIRE(attn::softmax(x, y).ok());
  REQUIRE(attn::softmax_backward(y, dy, dx).ok());
  const Vec dy_d = ref_ops::to_double(dy.data);
  const Vec want = ref_ops::central_diff(
      ref_ops::to_double(x.data), [&](const Vec& p) { return ref_ops::softmax_loss(p, dy_d, 5); }, kFdStep);
  testutil::require_close(dx.data, want, kSoftmaxGradTol, "rank-3 softmax dx");

  std::vector<float> in_place = dy.data;  // (2, 3, 5): dy, overwritten by dx
  for (int r = 0; r < 6; ++r)
    attn::softmax_backward_row(5, y.data.data() + r * 5, in_place.data() + r * 5, in_place.data() + r * 5);
  CHECK(in_place == dx.data);
}

TEST_CASE("softmax_backward rejects bad shapes and non-finite values without touching grad_x",
          "[backward-ops]") {
  const attn::Tensor good({2, 3}, {0.2f, 0.3f, 0.5f, 0.1f, 0.1f, 0.8f});
  attn::Tensor grad_x({1}, {42.0f});
  auto expect = [&](const attn::Tensor& y, const attn::Tensor& dy, attn::StatusCode code,
                    std::vector<std::string> parts) {
    const attn::Status s = attn::softmax_backward(y, dy, grad_x);
    INFO(s.message);
    CHECK(s.code == code);
    for (const auto& part : parts) CHECK(contains(s.message, part));
    CHECK(grad_x.data == std::vector<float>{42.0f});
  };
  expect(good, attn::Tensor({3, 2}, good.data), attn::StatusCode::kShapeMismatch,
         {"(2, 3)", "(3, 2)", "gradOutput"});
  expect(attn::Tensor({}, {1.0f}), attn::Tensor({}, {1.0f}), attn::StatusCode::kShapeMismatch,
         {"y", "at least one axis"});
  expect(attn::Tensor({2, 3}, {1, 2, 3, 4, 5}), good, attn::StatusCode::kShapeMismatch, {"y", "5 values"});
  expect(good, attn::Tensor({2, 0}, {}), attn::StatusCode::kEmptyInput, {"gradOutput", "empty"});
  attn::Tensor bad = good;
  bad.data[4] = kNaN;
  expect(good, bad, attn::StatusCode::kNonFinite, {"gradOutput", "NaN", "flat index 4"});
  bad.data[4] = kInf;
  expect(bad, good, attn::StatusCode::kNonFinite, {"softmax backward y", "Inf", "flat index 4"});
}

TEST_CASE("layer_norm_backward matches finite differences for x, weight and bias", "[backward-ops]") {
  struct Case {
    attn::Shape shape;
    bool weight, bias;
  };
  for (const Case& c : {Case{{3, 5}, false, false}, Case{{2, 3, 7}, true, true}, Case{{4, 3}, true, false},
                        Case{{5, 5}, false, true}}) {
    const int n = c.shape.back();
    const attn::Tensor x = testutil::random_tensor(c.shape, 70 + n, 2.0f);  // (..., n)
    const attn::Tensor dy = testutil::random_tensor(c.shape, 80 + n);       // (..., n)
    attn::LayerNormOptions options;
    if (c.weight) options.weight = testutil::random_tensor({n}, 90 + n).data;  // (n)
    if (c.bias) options.bias = testutil::random_tensor({n}, 95 + n).data;      // (n)
    attn::LayerNormGrads grads;
    REQUIRE(attn::layer_norm_backward(x, dy, options, grads).ok());
    REQUIRE(grads.x.shape == x.shape);
    CHECK(grads.weight.empty() == !c.weight);
    CHECK(grads.bias.empty() == !c.bias);

    Vec xd = ref_ops::to_double(x.data), dyd = ref_ops::to_double(dy.data);
    Vec gamma = ref_ops::to_double(options.weight), beta = ref_ops::to_double(options.bias);
    const double eps = options.eps;
    auto loss = [&](const Vec& px, const Vec& pg, const Vec& pb) {
      return ref_ops::layer_norm_loss(px, pg, pb, dyd, n, eps);
    };
    testutil::require_close(grads.x.data,
                            ref_ops::central_diff(
                                xd, [&](const Vec& p) { return loss(p, gamma, beta); }, kFdStep),
                            kLayerNormGradTol, "layerNorm dx");
    if (c.weight) {
      REQUIRE(grads.weight.shape == attn::Shape{n});
      testutil::require_close(grads.weight.data,
                              ref_ops::central_diff(
                                  gamma, [&](const Vec& p) { return loss(xd, p, beta); }, kFdStep),
                              kLayerNormGradTol, "layerNorm dweight");
    }
    if (c.bias) {
      REQUIRE(grads.bias.shape == attn::Shape{n});
      testutil::require_close(grads.bias.data,
                              ref_ops::central_diff(
                                  beta, [&](const Vec& p) { return loss(xd, gamma, p); }, kFdStep),
                              kLayerNormGradTol, "layerNorm dbias");
    }
  }
}

TEST_CASE("layer_norm_backward_rows adds to dx, dgamma and dbeta when asked; null gamma means ones",
          "[backward-ops]") {
  const int rows = 3, n = 7;
  const float eps = 1e-5f;
  const std::vector<float> x = testutil::random_tensor({rows, n}, 201, 1.5f).data;  // (rows, n)
  const std::vector<float> dy = testutil::random_tensor({rows, n}, 202).data;       // (rows, n)
  const std::vector<float> gamma = testutil::random_tensor({n}, 203).data;          // (n)
  const std::vector<float> dx0 = testutil::random_tensor({rows, n}, 204).data;      // (rows, n) prior dx
  const std::vector<float> dg0 = testutil::random_tensor({n}, 205).data;            // (n) prior dgamma
  const std::vector<float> db0 = testutil::random_tensor({n}, 206).data;            // (n) prior dbeta
  const Vec xd = ref_ops::to_double(x), dyd = ref_ops::to_double(dy);

  for (bool with_gamma : {true, false}) {
    // The gradient for gamma is taken at gamma = ones when gamma is null (the identity it stands for).
    const Vec gd = with_gamma ? ref_ops::to_double(gamma) : Vec(n, 1.0);
    std::vector<float> dx = dx0, dg = dg0, db = db0;
    attn::layer_norm_backward_rows(rows, n, x.data(), with_gamma ? gamma.data() : nullptr, eps, dy.data(),
                                   dx.data(), true, dg.data(), db.data());
    const Vec want_dx = ref_ops::central_diff(
        xd, [&](const Vec& p) { return ref_ops::layer_norm_loss(p, gd, {}, dyd, n, eps); }, kFdStep);
    const Vec want_dg = ref_ops::central_diff(
        gd, [&](const Vec& p) { return ref_ops::layer_norm_loss(xd, p, {}, dyd, n, eps); }, kFdStep);
    Vec want_db(n, 0.0);
    for (int r = 0; r < rows; ++r)
      for (int j = 0; j < n; ++j) want_db[j] += dy[r * n + j];
    for (size_t i = 0; i < dx.size(); ++i) dx[i] -= dx0[i];
    for (int j = 0; j < n; ++j) {
      dg[j] -= dg0[j];
      db[j] -= db0[j];
    }
    testutil::require_close(dx, want_dx, kLayerNormGradTol, "accumulated dx");
    testutil::require_close(dg, want_dg, kLayerNormGradTol, "accumulated dgamma");
    testutil::require_close(db, want_db, kLayerNormGradTol, "accumulated dbeta");

    // Written (not added) without accumulate_dx; dx may be dy itself; null dgamma/dbeta are skipped.
    std::vector<float> in_place = dy;  // (rows, n): dy, overwritten by dx
    attn::layer_norm_backward_rows(rows, n, x.data(), with_gamma ? gamma.data() : nullptr, eps,
                                   in_place.data(), in_place.data(), false, nullptr, nullptr);
    testutil::require_close(in_place, want_dx, kLayerNormGradTol, "written dx in place");
  }
}

TEST_CASE("layer_norm_backward rejects bad shapes, options and non-finite values", "[backward-ops]") {
  const attn::Tensor x = testutil::random_tensor({2, 5}, 300);   // (2, 5)
  const attn::Tensor dy = testutil::random_tensor({2, 5}, 301);  // (2, 5)
  attn::LayerNormGrads grads;
  grads.x = attn::Tensor({1}, {42.0f});
  auto expect = [&](const attn::Tensor& xx, const attn::Tensor& gy, const attn::LayerNormOptions& o,
                    attn::StatusCode code, std::vector<std::string> parts) {
    const attn::Status s = attn::layer_norm_backward(xx, gy, o, grads);
    INFO(s.message);
    CHECK(s.code == code);
    for (const auto& part : parts) CHECK(contains(s.message, part));
    CHECK(grads.x.data == std::vector<float>{42.0f});
  };
  const attn::LayerNormOptions plain;
  expect(x, attn::Tensor({5, 2}, dy.data), plain, attn::StatusCode::kShapeMismatch, {"(2, 5)", "(5, 2)"});
  expect(attn::Tensor({}, {1.0f}), attn::Tensor({}, {1.0f}), plain, attn::StatusCode::kShapeMismatch,
         {"at least one axis"});
  attn::Tensor bad = x;
  bad.data[7] = kNaN;
  expect(bad, dy, plain, attn::StatusCode::kNonFinite, {"layerNorm backward x", "NaN", "flat index 7"});
  bad.data[7] = -kInf;
  expect(x, bad, plain, attn::StatusCode::kNonFinite, {"gradOutput", "Inf", "flat index 7"});
  attn::LayerNormOptions o = plain;
  o.eps = 0.0f;
  expect(x, dy, o, attn::StatusCode::kInvalidArgument, {"eps", "> 0"});
  o = plain;
  o.weight = {1, 1, 1, 1};
  expect(x, dy, o, attn::StatusCode::kShapeMismatch, {"weight", "4 values", "last axis is 5"});
  o = plain;
  o.bias = {0, 0, 0, 0, 0, 0};
  expect(x, dy, o, attn::StatusCode::kShapeMismatch, {"bias", "6 values", "last axis is 5"});
  o = plain;
  o.weight = {1, 1, kNaN, 1, 1};
  expect(x, dy, o, attn::StatusCode::kNonFinite, {"weight", "index 2"});
}
