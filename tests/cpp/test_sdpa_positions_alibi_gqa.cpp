// Scaled dot-product attention as today's models use it: positions with an offset,
// bottom-right causal alignment, sliding windows, ALiBi and grouped-query heads. Forward (full and
// tiled paths) and backward against the PyTorch fixtures (tests/golden/make_modern_fixtures.py), the
// tiled path's tile skipping on long rows against a double reference, the trace's "alibi" step, and
// every refusal with its code.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "core/attention_backward.h"
#include "fixture.h"
#include "golden_close.h"
#include "test_helpers.h"

namespace {

// The tiled path against the double reference on long rows (float32 sums over hundreds of keys).
constexpr double kLongTol = 2e-5;

using golden::require_fixture_close;

// The fixture's options: causal_mode 0 none, 1 top-left (with position_offset), 2 bottom-right.
attn::SdpaOptions fixture_options(const Fixture& f) {
  attn::SdpaOptions o;
  const int mode = static_cast<int>(f.scalar("causal_mode", 0));
  o.causal = mode != 0;
  o.positions.bottom_right = mode == 2;
  if (mode != 2) o.positions.offset = static_cast<std::int64_t>(f.scalar("position_offset", 0));
  const int window = static_cast<int>(f.scalar("window", 0));
  if (window > 0) o.positions.window = window;
  if (f.flag("alibi")) o.positions.alibi_slopes = f.at("alibi_slopes").data;
  o.enable_gqa = f.flag("enable_gqa");
  return o;
}

void run_fixture(const Fixture& f) {
  attn::SdpaOptions o = fixture_options(f);
  attn::SdpaResult full, tiled;
  const attn::Status st = attn::scaled_dot_product_attention(f.at("q"), f.at("k"), f.at("v"), o, full);
  INFO(st.message);
  REQUIRE(st.ok());
  require_fixture_close(full.output.data, f.at("output"), "output");
  require_fixture_close(full.weights.data, f.at("weights"), "weights");
  REQUIRE(full.weights.shape == f.at("weights").shape);
  o.need_weights = false;
  REQUIRE(attn::scaled_dot_product_attention(f.at("q"), f.at("k"), f.at("v"), o, tiled).ok());
  require_fixture_close(tiled.output.data, f.at("output"), "output without weights");
  attn::SdpaGrads g;
  REQUIRE(
      attn::scaled_dot_product_attention_backward(f.at("q"), f.at("k"), f.at("v"), f.at("grad_output"), o, g)
          .ok());
  REQUIRE(g.k.shape == f.at("k").shape);
  require_fixture_close(g.q.data, f.at("grad_q"), "grad q");
  require_fixture_close(g.k.data, f.at("grad_k"), "grad k");
  require_fixture_close(g.v.data, f.at("grad_v"), "grad v");
}

struct Case {
  int h, hkv, tq, tk, d;
  bool causal, bottom_right;
  std::int64_t offset;
  int window;  // 0 = none
  bool alibi;
};

// softmax(q·kᵀ/√d + ALiBi, masked by causal and the window) · v in double, q (1, H, Tq, d),
// k and v (1, Hkv, Tk, d). A row with no key is zeros.
std::vector<double> reference(const Case& c, const attn::Tensor& q, const attn::Tensor& k,
                              const attn::Tensor& v, const std::vector<float>& slopes) {
  std::vector<double> out(static_cast<std::size_t>(c.h) * c.tq * c.d, 0.0);
  const std::int64_t offset = c.bottom_right ? c.tk - c.tq : c.offset;
  std::vector<double> s(c.tk);
  for (int h = 0; h < c.h; ++h) {
    const int g = h / (c.h / c.hkv);
    for (int r = 0; r < c.tq; ++r) {
      const std::int64_t i = offset + r;
      double max = -std::numeric_limits<double>::infinity();
      for (int j = 0; j < c.tk; ++j) {
        const std::int64_t dist = i - j;
        const bool ok = (!c.causal || dist >= 0) &&
                        (c.window == 0 || (c.causal ? dist < c.window : std::llabs(dist) < c.window));
        if (!ok) {
          s[j] = -std::numeric_limits<double>::infinity();
          continue;
        }
        double dot = 0;
        for (int e = 0; e < c.d; ++e)
          dot += double(q.data[(h * c.tq + r) * c.d + e]) * k.data[(g * c.tk + j) * c.d + e];
        s[j] = dot / std::sqrt(double(c.d)) -
               (c.alibi ? slopes[h] * double(c.causal ? dist : std::llabs(dist)) : 0.0);
        max = std::max(max, s[j]);
      }
      if (max == -std::numeric_limits<double>::infinity()) continue;
      double sum = 0;
      for (int j = 0; j < c.tk; ++j) sum += (s[j] = std::exp(s[j] - max));
      for (int j = 0; j < c.tk; ++j)
        for (int e = 0; e < c.d; ++e)
          out[(h * c.tq + r) * c.d + e] += s[j] / sum * v.data[(g * c.tk + j) * c.d + e];
    }
  }
  return out;
}

void check_long(const Case& c) {
  const attn::Tensor q = testutil::random_tensor({1, c.h, c.tq, c.d}, 11, 0.5f);
  const attn::Tensor k = testutil::random_tensor({1, c.hkv, c.tk, c.d}, 12, 0.5f);
  const attn::Tensor v = testutil::random_tensor({1, c.hkv, c.tk, c.d}, 13);
  attn::SdpaOptions o;
  o.causal = c.causal;
  o.positions.bottom_right = c.bottom_right;
  if (!c.bottom_right) o.positions.offset = c.offset;
  if (c.window > 0) o.positions.window = c.window;
  std::vector<float> slopes;
  if (c.alibi) {
    for (int h = 0; h < c.h; ++h) slopes.push_back(std::pow(2.0f, -8.0f * (h + 1) / c.h));
    o.positions.alibi_slopes = slopes;
  }
  o.enable_gqa = c.h != c.hkv;
  const std::vector<double> want = reference(c, q, k, v, slopes);
  for (const bool weights : {false, true}) {
    o.need_weights = weights;
    attn::SdpaResult r;
    REQUIRE(attn::scaled_dot_product_attention(q, k, v, o, r).ok());
    CAPTURE(c.h, c.hkv, c.tq, c.tk, c.causal, c.bottom_right, c.offset, c.window, c.alibi, weights);
    testutil::require_close(r.output.data, want, kLongTol, "long rows");
  }
}

attn::StatusCode code_of(const attn::SdpaOptions& o, attn::Shape qs, attn::Shape ks,
                         std::string* message = nullptr) {
  const attn::Tensor q = testutil::random_tensor(qs, 1), k = testutil::random_tensor(ks, 2),
                     v = testutil::random_tensor(ks, 3);
  attn::SdpaResult r;
  const attn::Status st = attn::scaled_dot_product_attention(q, k, v, o, r);
  if (message) *message = st.message;
  return st.code;
}

}  // namespace

TEST_CASE(
    "SDPA with ALiBi, grouped K/V and windows matches the PyTorch fixtures: forward (both paths) and "
    "backward",
    "[positions][golden-grad]") {
  int count = 0;
  for (const std::string& name : golden::list_fixtures("index_modern.txt")) {
    if (name.rfind("modern_sdpa_", 0) != 0) continue;
    ++count;
    DYNAMIC_SECTION(name) {
      run_fixture(load_fixture(name));
    }
  }
  REQUIRE(count == 10);
}

TEST_CASE(
    "SDPA with positions on long rows: the tiled path skips tiles outside the causal band and the window",
    "[positions]") {
  check_long({2, 2, 600, 600, 8, true, false, 0, 37, false});    // causal window, tiles skipped on both sides
  check_long({2, 2, 530, 530, 8, false, false, 0, 300, false});  // bidirectional window wider than a tile
  check_long({4, 2, 300, 700, 8, true, true, 0, 0, true});       // bottom-right, GQA, ALiBi
  check_long({4, 1, 280, 650, 8, true, false, 400, 129, true});  // offset + window + ALiBi, MQA
  check_long({2, 2, 300, 600, 8, true, true, 0, 0, false});      // bottom-right alone
  check_long({2, 2, 20, 600, 8, true, false, 0, 0, false});      // top-left with Tq < Tk: most keys unseen
}

TEST_CASE("the trace shows the ALiBi bias; masked = scaled + bias where a key is allowed",
          "[positions][trace]") {
  const attn::Tensor q = testutil::random_tensor({1, 4, 5, 4}, 5),
                     k = testutil::random_tensor({1, 4, 5, 4}, 6),
                     v = testutil::random_tensor({1, 4, 5, 4}, 7);
  attn::SdpaOptions o;
  o.causal = true;
  o.positions.alibi_slopes = {0.25f, 0.0625f, 0.015625f, 0.00390625f};
  attn::SdpaResult r;
  attn::Trace trace;
  REQUIRE(attn::scaled_dot_product_attention(q, k, v, o, r, &trace).ok());
  const auto& bias = trace.find("alibi")->tensor;
  const auto& scaled = trace.find("scaled")->tensor.data;
  const auto& masked = trace.find("masked")->tensor.data;
  REQUIRE(bias.shape == attn::Shape{1, 4, 5, 5});
  for (int h = 0; h < 4; ++h)
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j <= i; ++j) {
        const std::size_t e = (h * 5 + i) * 5 + j;
        REQUIRE(bias.data[e] == -o.positions.alibi_slopes[h] * float(i - j));
        REQUIRE(masked[e] == scaled[e] + bias.data[e]);
      }
}

TEST_CASE("SDPA position, ALiBi and window refusals: codes and messages", "[positions][errors]") {
  using attn::StatusCode;
  std::string msg;
  attn::SdpaOptions o;
  REQUIRE(code_of(o, {1, 4, 3, 2}, {1, 2, 3, 2}, &msg) == StatusCode::kShapeMismatch);
  REQUIRE(msg.find("enableGQA") != std::string::npos);
  o.enable_gqa = true;
  REQUIRE(code_of(o, {1, 4, 3, 2}, {1, 2, 3, 2}) == StatusCode::kOk);
  REQUIRE(code_of(o, {1, 6, 3, 2}, {1, 4, 3, 2}, &msg) == StatusCode::kHeadsDoNotDivide);
  o = {};
  o.positions.window = 0;
  REQUIRE(code_of(o, {2, 3, 2}, {2, 3, 2}, &msg) == StatusCode::kInvalidArgument);
  REQUIRE(msg.find("window must be") != std::string::npos);
  o = {};
  o.positions.bottom_right = true;
  REQUIRE(code_of(o, {2, 3, 2}, {2, 5, 2}) == StatusCode::kInvalidArgument);  // without causal
  o.causal = true;
  o.positions.offset = 1;
  REQUIRE(code_of(o, {2, 3, 2}, {2, 5, 2}, &msg) == StatusCode::kInvalidArgument);  // Tk − Tq = 2
  REQUIRE(msg.find("contradicts") != std::string::npos);
  o.positions.offset = 2;
  REQUIRE(code_of(o, {2, 3, 2}, {2, 5, 2}) == StatusCode::kOk);
  o = {};
  o.positions.offset = -1;
  REQUIRE(code_of(o, {2, 3, 2}, {2, 5, 2}) == StatusCode::kInvalidArgument);
  o = {};
  o.positions.alibi_slopes = {0.5f, 0.25f};
  REQUIRE(code_of(o, {1, 3, 3, 2}, {1, 3, 3, 2}, &msg) == StatusCode::kInvalidArgument);  // 3 heads, 2 slopes
  REQUIRE(msg.find("one slope per head") != std::string::npos);
  o.positions.alibi_slopes = {0.5f, std::numeric_limits<float>::quiet_NaN(), 0.1f};
  REQUIRE(code_of(o, {1, 3, 3, 2}, {1, 3, 3, 2}) == StatusCode::kInvalidArgument);
}
