// The small layers of src/model/layers.h (GELU, nn.Linear backward, embeddings, cross-entropy) against
// double-precision forwards and central finite differences of them (reference_backward_ops.h).
// Softmax and LayerNorm backward are in test_backward_ops.cpp.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>

#include "model/layers.h"
#include "reference_backward_ops.h"
#include "test_helpers.h"

namespace {

constexpr double kFdStep = 1e-3;          // central differences in double: truncation error ~h²·f'''/6
constexpr double kGeluTol = 1e-6;         // float erf of |x| ≤ 6: a few ulps of values up to 6
constexpr double kGeluGradTol = 2e-6;     // derivative in [−0.17, 1.13], float erf and exp
constexpr double kLinearGradTol = 3e-6;   // float sums of ≤ 7 products of O(1) values (seen: 3e-7)
constexpr double kLinearLargeTol = 2e-4;  // sums of 257–300 float products, Σ|terms| ~ 200 (seen: 3.5e-5)
constexpr double kEmbeddingGradTol = 1e-9;  // exact float sums of 3 values vs FD of a linear function
constexpr double kLossTol = 2.5e-7;  // loss accumulated in double, rounded once to float (~1 ulp of ~2)
constexpr double kCrossEntropyGradTol = 1e-7;  // (softmax − onehot)/count in double, rounded to float
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

using ref_ops::Vec;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Dense (rows, width) copy of a strided buffer with row stride ld.
std::vector<float> unpad(const std::vector<float>& a, int rows, int width, int ld) {
  std::vector<float> out;
  for (int r = 0; r < rows; ++r) out.insert(out.end(), a.begin() + r * ld, a.begin() + r * ld + width);
  return out;
}

}  // namespace

TEST_CASE("gelu_forward matches the exact erf GELU and gelu_backward its derivative", "[backward-ops]") {
  std::vector<float> x = testutil::random_tensor({37}, 500, 2.5f).data;  // (37)
  for (float v : {0.0f, -6.0f, 6.0f, -0.5f, 1e-4f}) x.push_back(v);
  const auto n = static_cast<std::int64_t>(x.size());
  std::vector<float> y(x.size());
  attn::gelu_forward(n, x.data(), y.data());
  Vec want_y(x.size());
  for (size_t i = 0; i < x.size(); ++i) want_y[i] = ref_ops::gelu(x[i]);
  testutil::require_close(y, want_y, kGeluTol, "gelu forward");

  const std::vector<float> dy = testutil::random_tensor({static_cast<int>(n)}, 501).data;  // (n)
  std::vector<float> dx(x.size());
  attn::gelu_backward(n, x.data(), dy.data(), dx.data());
  const Vec dyd = ref_ops::to_double(dy);
  const Vec want_dx = ref_ops::central_diff(
      ref_ops::to_double(x),
      [&](const Vec& p) {
        double loss = 0.0;
        for (size_t i = 0; i < p.size(); ++i) loss += dyd[i] * ref_ops::gelu(p[i]);
        return loss;
      },
      kFdStep);
  testutil::require_close(dx, want_dx, kGeluGradTol, "gelu dx");

  std::vector<float> in_place = dy;  // (n): dy, overwritten by dx
  attn::gelu_backward(n, x.data(), in_place.data(), in_place.data());
  CHECK(in_place == dx);
  // Training's path: Φ(x) saved by the forward, the backward from it — the same bits.
  std::vector<float> y_saving(x.size()), cdf(x.size()), dx_from_cdf(x.size());
  attn::gelu_forward(n, x.data(), y_saving.data(), cdf.data());
  CHECK(y_saving == y);
  attn::gelu_backward_from_cdf(n, x.data(), cdf.data(), dy.data(), dx_from_cdf.data());
  CHECK(dx_from_cdf == dx);
  attn::gelu_forward(n, x.data(), x.data());  // y may alias x
  CHECK(x == y);
}

TEST_CASE("linear_backward gives dx, dw and db of x·Wᵀ + b, strided, written or accumulated",
          "[backward-ops]") {
  const int rows = 5, in = 3, out = 7;
  const int ldx = in + 2, lddy = out + 3, lddx = in + 1;  // row strides wider than the rows
  // NaN in the padding of x and dy: a read outside the rows would poison the results.
  std::vector<float> x(rows * ldx, kNaN),
      dy(rows * lddy, kNaN);  // x (rows, in) ld ldx; dy (rows, out) ld lddy
  const std::vector<float> x_dense = testutil::random_tensor({rows, in}, 600).data;    // (rows, in)
  const std::vector<float> dy_dense = testutil::random_tensor({rows, out}, 601).data;  // (rows, out)
  for (int r = 0; r < rows; ++r) {
    std::copy(x_dense.begin() + r * in, x_dense.begin() + (r + 1) * in, x.begin() + r * ldx);
    std::copy(dy_dense.begin() + r * out, dy_dense.begin() + (r + 1) * out, dy.begin() + r * lddy);
  }
  const std::vector<float> w = testutil::random_tensor({out, in}, 602).data;  // (out, in)
  const Vec xd = ref_ops::to_double(x_dense), wd = ref_ops::to_double(w), dyd = ref_ops::to_double(dy_dense);
  const Vec bd(out, 0.0);  // b does not enter the gradients; any value works for the reference
  auto loss = [&](const Vec& px, const Vec& pw, const Vec& pb) {
    return ref_ops::linear_loss(px, pw, pb, dyd, rows, in, out);
  };
  const Vec want_dx = ref_ops::central_diff(
      xd, [&](const Vec& p) { return loss(p, wd, bd); }, kFdStep);
  const Vec want_dw = ref_ops::central_diff(
      wd, [&](const Vec& p) { return loss(xd, p, bd); }, kFdStep);
  const Vec want_db = ref_ops::central_diff(
      bd, [&](const Vec& p) { return loss(xd, wd, p); }, kFdStep);
  constexpr float kPad = 12345.0f;  // dx's padding must stay untouched

  for (bool accumulate : {false, true}) {
    const std::vector<float> dx0 = testutil::random_tensor({rows, in}, 610).data;  // (rows, in) prior dx
    const std::vector<float> dw0 = testutil::random_tensor({out, in}, 611).data;   // (out, in) prior dw
    const std::vector<float> db0 = testutil::random_tensor({out}, 612).data;       // (out) prior db
    std::vector<float> dx(rows * lddx, kPad);  // (rows, in) row stride lddx
    for (int r = 0; r < rows; ++r)
      for (int k = 0; k < in; ++k) dx[r * lddx + k] = accumulate ? dx0[r * in + k] : kNaN;
    std::vector<float> dw = dw0, db = db0;
    attn::linear_backward(rows, in, out, x.data(), ldx, w.data(), dy.data(), lddy, dx.data(), lddx,
                          accumulate, dw.data(), db.data());
    std::vector<float> got_dx = unpad(dx, rows, in, lddx);
    for (size_t i = 0; i < got_dx.size() && accumulate; ++i) got_dx[i] -= dx0[i];
    for (size_t i = 0; i < dw.size(); ++i) dw[i] -= dw0[i];
    for (int o = 0; o < out; ++o) db[o] -= db0[o];
    INFO("accumulate_dx = " << accumulate);
    testutil::require_close(got_dx, want_dx, kLinearGradTol, "linear dx");
    testutil::require_close(dw, want_dw, kLinearGradTol, "linear dw (added)");
    testutil::require_close(db, want_db, kLinearGradTol, "linear db (added)");
    for (int r = 0; r < rows; ++r) CHECK(dx[r * lddx + in] == kPad);
  }

  // Null outputs are skipped; the others are still produced.
  std::vector<float> dw(out * in, 0.0f);  // (out, in)
  attn::linear_backward(rows, in, out, x.data(), ldx, w.data(), dy.data(), lddy, nullptr, lddx, false,
                        dw.data(), nullptr);
  testutil::require_close(dw, want_dw, kLinearGradTol, "linear dw alone");
  std::vector<float> db(out, 0.0f);  // (out)
  attn::linear_backward(rows, in, out, x.data(), ldx, w.data(), dy.data(), lddy, nullptr, lddx, false,
                        nullptr, db.data());
  testutil::require_close(db, want_db, kLinearGradTol, "linear db alone");
}

TEST_CASE("linear_backward at a size whose transposed dy overflows the scratch cache", "[backward-ops]") {
  // dy_t (out, rows) = 77,100 floats > ScratchScope::kScratchCacheFloats: the owned-buffer path.
  const int rows = 300, in = 5, out = 257;
  const std::vector<float> x = testutil::random_tensor({rows, in}, 620).data;    // (rows, in)
  const std::vector<float> w = testutil::random_tensor({out, in}, 621).data;     // (out, in)
  const std::vector<float> dy = testutil::random_tensor({rows, out}, 622).data;  // (rows, out)
  std::vector<float> dx(rows * in), dw(out * in, 0.0f);                          // (rows, in), (out, in)
  attn::linear_backward(rows, in, out, x.data(), in, w.data(), dy.data(), out, dx.data(), in, false,
                        dw.data(), nullptr);
  Vec want_dx;  // (rows, in) = dy · W
  ref::gemm(rows, in, out, dy.data(), out, w.data(), in, false, want_dx);
  Vec want_dw(out * in, 0.0);  // (out, in) = dyᵀ · x
  for (int r = 0; r < rows; ++r)
    for (int o = 0; o < out; ++o)
      for (int k = 0; k < in; ++k) want_dw[o * in + k] += double(dy[r * out + o]) * x[r * in + k];
  testutil::require_close(dx, want_dx, kLinearLargeTol, "large linear dx");
  testutil::require_close(dw, want_dw, kLinearLargeTol, "large linear dw");
}

TEST_CASE("embedding_forward copies rows and embedding_backward scatter-adds repeated ids",
          "[backward-ops]") {
  const int vocab = 6, d = 3;
  const std::vector<std::int32_t> ids = {2, 0, 2, 5, 2};
  const auto n = static_cast<std::int64_t>(ids.size());
  const std::vector<float> table = testutil::random_tensor({vocab, d}, 700).data;  // (vocab, d)
  std::vector<float> out(n * d, kNaN);                                             // (n, d)
  attn::embedding_forward(n, ids.data(), table.data(), d, out.data());
  for (std::int64_t i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j) CHECK(out[i * d + j] == table[ids[i] * d + j]);

  const std::vector<float> dout = testutil::random_tensor({static_cast<int>(n), d}, 701).data;  // (n, d)
  const std::vector<float> dtable0 = testutil::random_tensor({vocab, d}, 702).data;  // (vocab, d) prior
  std::vector<float> dtable = dtable0;
  attn::embedding_backward(n, ids.data(), dout.data(), d, dtable.data());
  const Vec doutd = ref_ops::to_double(dout);
  const Vec want = ref_ops::central_diff(
      ref_ops::to_double(table), [&](const Vec& p) { return ref_ops::embedding_loss(p, ids, doutd, d); },
      kFdStep);
  for (size_t i = 0; i < dtable.size(); ++i) dtable[i] -= dtable0[i];
  testutil::require_close(dtable, want, kEmbeddingGradTol, "embedding dtable");
  for (int row : {1, 3, 4})
    for (int j = 0; j < d; ++j) CHECK(dtable[row * d + j] == 0.0f);  // unused ids: exactly unchanged
}

TEST_CASE("cross_entropy: loss and dlogits against a double reference; ignored rows do not count",
          "[backward-ops]") {
  const int n = 7, V = 5;
  const std::vector<std::int32_t> targets = {3, attn::kIgnoreIndex, 0, 4, attn::kIgnoreIndex, 1, 4};
  std::vector<float> logits = testutil::random_tensor({n, V}, 800, 3.0f).data;  // (n, V)
  float loss = kNaN;
  std::int64_t scored = -1;
  std::vector<float> dlogits(n * V, kNaN);  // (n, V): every entry must be written
  REQUIRE(attn::cross_entropy(n, V, logits.data(), targets.data(), loss, dlogits.data(), &scored).ok());
  CHECK(scored == 5);
  const Vec ld = ref_ops::to_double(logits);
  CHECK(std::fabs(loss - ref_ops::cross_entropy(ld, targets, V)) <= kLossTol);
  const Vec want = ref_ops::central_diff(
      ld, [&](const Vec& p) { return ref_ops::cross_entropy(p, targets, V); }, kFdStep);
  testutil::require_close(dlogits, want, kCrossEntropyGradTol, "cross_entropy dlogits");
  for (int row : {1, 4})
    for (int j = 0; j < V; ++j) CHECK(dlogits[row * V + j] == 0.0f);

  // Ignored rows do not enter the loss at all; dlogits may be null.
  for (int j = 0; j < V; ++j) logits[1 * V + j] = 50.0f * static_cast<float>(j);
  float loss2 = kNaN;
  REQUIRE(attn::cross_entropy(n, V, logits.data(), targets.data(), loss2, nullptr).ok());
  CHECK(loss2 == loss);
}

TEST_CASE("cross_entropy: hand-computed values and large logits", "[backward-ops]") {
  const std::vector<float> uniform = {0.0f, 0.0f, 0.0f};  // (1, 3): loss = ln 3
  const std::vector<std::int32_t> t0 = {0};
  float loss = 0.0f;
  REQUIRE(attn::cross_entropy(1, 3, uniform.data(), t0.data(), loss, nullptr).ok());
  CHECK(std::fabs(loss - std::log(3.0)) <= kLossTol);
  const std::vector<float> big = {1000.0f, 1001.0f, 1002.0f};  // (1, 3): loss = ln(1 + e⁻¹ + e⁻²)
  const std::vector<std::int32_t> t2 = {2};
  std::vector<float> dlogits(3);  // (1, 3)
  REQUIRE(attn::cross_entropy(1, 3, big.data(), t2.data(), loss, dlogits.data()).ok());
  const double sum = 1.0 + std::exp(-1.0) + std::exp(-2.0);
  CHECK(std::fabs(loss - std::log(sum)) <= kLossTol);
  testutil::require_close(dlogits, Vec{std::exp(-2.0) / sum, std::exp(-1.0) / sum, 1.0 / sum - 1.0},
                          kCrossEntropyGradTol, "large-logit dlogits");
}

TEST_CASE("cross_entropy rejects bad targets and non-finite logits before writing anything",
          "[backward-ops]") {
  const int n = 3, V = 4;
  const std::vector<float> logits = testutil::random_tensor({n, V}, 900).data;  // (n, V)
  auto expect = [&](const std::vector<float>& lg, const std::vector<std::int32_t>& targets,
                    attn::StatusCode code, std::vector<std::string> parts) {
    float loss = 42.0f;
    std::int64_t scored = 42;
    std::vector<float> dlogits(n * V, 42.0f);  // (n, V)
    const attn::Status s =
        attn::cross_entropy(n, V, lg.data(), targets.data(), loss, dlogits.data(), &scored);
    INFO(s.message);
    CHECK(s.code == code);
    for (const auto& part : parts) CHECK(contains(s.message, part));
    CHECK(loss == 42.0f);
    CHECK(scored == 42);
    CHECK(dlogits == std::vector<float>(n * V, 42.0f));
  };
  expect(logits, {0, 1, 4}, attn::StatusCode::kInvalidArgument, {"flat index 2", "is 4", "[0, 4)"});
  expect(logits, {-1, 1, 2}, attn::StatusCode::kInvalidArgument, {"flat index 0", "is -1"});
  expect(logits, {0, -101, 2}, attn::StatusCode::kInvalidArgument, {"flat index 1", "is -101"});
  expect(logits, {-100, -100, -100}, attn::StatusCode::kInvalidArgument,
         {"no scored position: every target is -100"});
  std::vector<float> bad = logits;
  bad[7] = kNaN;
  expect(bad, {0, 1, 2}, attn::StatusCode::kNonFinite, {"NaN", "flat index 7"});
  bad[7] = logits[7];
  bad[10] = -kInf;  // in a row whose target is ignored: still an error
  expect(bad, {0, 1, -100}, attn::StatusCode::kNonFinite, {"Inf", "flat index 10"});
}
