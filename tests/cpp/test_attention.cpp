// Scaled dot-product attention: against the double reference (reference.h), every mask kind,
// causal alignment, the fully masked row, dropout, the tiled path and the trace.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "core/attention.h"
#include "reference.h"
#include "test_helpers.h"

namespace {

constexpr double kSdpaTol = 2e-6;     // outputs of magnitude ~1 after two float32 products
constexpr double kTiledTol = 2e-6;    // online softmax sums in another order
constexpr double kStatRelTol = 0.15;  // ≈ 5 standard errors of a sample variance with N = 4096

struct Case {
  int batch, tq, tk, dk, dv;
};

// Runs the core and the reference on one case with a dense allowed mask and/or additive mask.
void check_against_reference(const Case& c, const attn::SdpaOptions& base_options,
                             const std::vector<std::uint8_t>* allowed, const std::vector<float>* additive) {
  const attn::Tensor q = testutil::random_tensor({c.batch, c.tq, c.dk}, 11 + c.tq);
  const attn::Tensor k = testutil::random_tensor({c.batch, c.tk, c.dk}, 12 + c.tk);
  const attn::Tensor v = testutil::random_tensor({c.batch, c.tk, c.dv}, 13 + c.dv);
  attn::SdpaOptions options = base_options;
  attn::BoolTensor mask{{c.batch, c.tq, c.tk}, allowed ? *allowed : std::vector<std::uint8_t>()};
  attn::Tensor add({c.batch, c.tq, c.tk}, additive ? *additive : std::vector<float>());
  if (allowed) options.mask = &mask;
  if (additive) options.additive_mask = &add;
  attn::SdpaResult got;
  REQUIRE(attn::scaled_dot_product_attention(q, k, v, options, got).ok());
  std::vector<double> out, weights;
  const double scale = options.scale ? *options.scale : 1.0 / std::sqrt(double(c.dk));
  ref::sdpa(q.data, k.data, v.data, c.batch, c.tq, c.tk, c.dk, c.dv, scale, allowed, additive, out, weights);
  CAPTURE(c.batch, c.tq, c.tk, c.dk, c.dv);
  testutil::require_close(got.output.data, out, kSdpaTol, "output");
  testutil::require_close(got.weights.data, weights, kSdpaTol, "weights");
}

std::vector<std::uint8_t> pattern_mask(const Case& c, int seed) {
  std::vector<std::uint8_t> m(static_cast<size_t>(c.batch) * c.tq * c.tk);
  for (size_t i = 0; i < m.size(); ++i) m[i] = attn::uniform01(seed, i) < 0.7f;
  return m;
}

}  // namespace

TEST_CASE("SDPA matches the double reference on sizes 1..9 and odd shapes", "[sdpa]") {
  for (int n = 1; n <= 9; ++n) {
    for (Case c : {Case{1, n, n, n, n}, Case{2, n, n + 2, 3, 5}, Case{3, 1, n, n, 1}, Case{1, 7, 1, 2, n}}) {
      check_against_reference(c, {}, nullptr, nullptr);
    }
  }
}

TEST_CASE("SDPA boolean, additive and combined masks match the reference", "[sdpa][mask]") {
  const Case c{2, 5, 7, 4, 3};
  std::vector<std::uint8_t> allowed = pattern_mask(c, 5);
  std::vector<float> additive = testutil::random_tensor({c.batch, c.tq, c.tk}, 77).data;
  additive[3] = -std::numeric_limits<float>::infinity();
  check_against_reference(c, {}, &allowed, nullptr);
  check_against_reference(c, {}, nullptr, &additive);
  check_against_reference(c, {}, &allowed, &additive);
  attn::SdpaOptions temperature;
  temperature.scale = 1.0f / 0.7f;  // temperature 0.7
  check_against_reference(c, temperature, &allowed, nullptr);
}

TEST_CASE("SDPA causal mask is top-left aligned when Tq != Tk", "[sdpa][causal]") {
  for (Case c : {Case{1, 4, 4, 3, 2}, Case{2, 3, 6, 3, 2}, Case{1, 6, 3, 3, 2}}) {
    std::vector<std::uint8_t> allowed(static_cast<size_t>(c.batch) * c.tq * c.tk);
    for (int b = 0; b < c.batch; ++b)
      for (int i = 0; i < c.tq; ++i)
        for (int j = 0; j < c.tk; ++j) allowed[(b * c.tq + i) * c.tk + j] = j <= i;
    attn::SdpaOptions causal;
    causal.causal = true;
    // The core's causal flag must equal an explicit lower-triangular mask (top-left aligned).
    const attn::Tensor q = testutil::random_tensor({c.batch, c.tq, c.dk}, 1);
    const attn::Tensor k = testutil::random_tensor({c.batch, c.tk, c.dk}, 2);
    const attn::Tensor v = testutil::random_tensor({c.batch, c.tk, c.dv}, 3);
    attn::SdpaResult got;
    REQUIRE(attn::scaled_dot_product_attention(q, k, v, causal, got).ok());
    std::vector<double> out, weights;
    ref::sdpa(q.data, k.data, v.data, c.batch, c.tq, c.tk, c.dk, c.dv, 1.0 / std::sqrt(3.0), &allowed,
              nullptr, out, weights);
    testutil::require_close(got.output.data, out, kSdpaTol, "causal output");
    testutil::require_close(got.weights.data, weights, kSdpaTol, "causal weights");
  }
}

TEST_CASE("a fully masked row gives zero weights and a zero output row, never NaN", "[sdpa][mask]") {
  const attn::Tensor q = testutil::random_tensor({3, 4}, 1), k = testutil::random_tensor({5, 4}, 2),
                     v = testutil::random_tensor({5, 2}, 3);
  attn::BoolTensor mask{{3, 5}, {1, 1, 0, 0, 1, /* row 1 fully masked */ 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}};
  for (bool need_weights : {true, false}) {
    attn::SdpaOptions options;
    options.mask = &mask;
    options.need_weights = need_weights;  // false takes the tiled path
    attn::SdpaResult r;
    REQUIRE(attn::scaled_dot_product_attention(q, k, v, options, r).ok());
    REQUIRE(testutil::all_finite(r.output.data));
    CHECK(r.output.data[2] == 0.0f);
    CHECK(r.output.data[3] == 0.0f);
    CHECK(std::fabs(r.output.data[0]) > 0.0f);
    if (need_weights) {
      for (int j = 0; j < 5; ++j) CHECK(r.weights.data[5 + j] == 0.0f);
      CHECK(r.weights.data[10] == 1.0f);  // a row with one allowed key puts all weight there
    }
  }
  // An additive -inf row is fully masked too.
  attn::Tensor additive({3, 5}, std::vector<float>(15, -std::numeric_limits<float>::infinity()));
  attn::SdpaOptions options;
  options.additive_mask = &additive;
  attn::SdpaResult r;
  REQUIRE(attn::scaled_dot_product_attention(q, k, v, options, r).ok());
  for (float x : r.output.data) CHECK(x == 0.0f);
}

TEST_CASE("masks broadcast over leading axes", "[sdpa][mask]") {
  const Case c{2, 3, 4, 2, 2};
  std::vector<std::uint8_t> dense = pattern_mask({1, 3, 4, 2, 2}, 9);
  attn::BoolTensor mask2d{{3, 4}, dense};
  const attn::Tensor q = testutil::random_tensor({2, 3, 2}, 4), k = testutil::random_tensor({2, 4, 2}, 5),
                     v = testutil::random_tensor({2, 4, 2}, 6);
  attn::SdpaOptions options;
  options.mask = &mask2d;
  attn::SdpaResult got;
  REQUIRE(attn::scaled_dot_product_attention(q, k, v, options, got).ok());
  std::vector<std::uint8_t> both(dense);
  both.insert(both.end(), dense.begin(), dense.end());
  std::vector<double> out, weights;
  ref::sdpa(q.data, k.data, v.data, c.batch, c.tq, c.tk, c.dk, c.dv, 1.0 / std::sqrt(2.0), &both, nullptr,
            out, weights);
  testutil::require_close(got.output.data, out, kSdpaTol, "broadcast mask");
}

TEST_CASE("the tiled path (no weights) equals the full path", "[sdpa][tiled]") {
  for (Case c : {Case{1, 1, 1, 1, 1}, Case{2, 5, 33, 7, 3}, Case{1, 40, 300, 8, 5}, Case{1, 70, 520, 3, 4}}) {
    const attn::Tensor q = testutil::random_tensor({c.batch, c.tq, c.dk}, 21);
    const attn::Tensor k = testutil::random_tensor({c.batch, c.tk, c.dk}, 22);
    const attn::Tensor v = testutil::random_tensor({c.batch, c.tk, c.dv}, 23);
    attn::BoolTensor mask{{c.tq, c.tk}, pattern_mask({1, c.tq, c.tk, 0, 0}, 3)};
    for (int variant = 0; variant < 3; ++variant) {
      attn::SdpaOptions options;
      options.causal = variant == 1;
      if (variant == 2) options.mask = &mask;
      attn::SdpaResult full, tiled;
      REQUIRE(attn::scaled_dot_product_attention(q, k, v, options, full).ok());
      options.need_weights = false;
      REQUIRE(attn::scaled_dot_product_attention(q, k, v, options, tiled).ok());
      CAPTURE(c.tq, c.tk, variant);
      CHECK(tiled.weights.empty());
      testutil::require_close(tiled.output.data, full.output.data, kTiledTol, "tiled vs full");
    }
  }
}

TEST_CASE("dropout is deterministic for a seed, scales kept weights by 1/(1-p), and is traced",
          "[sdpa][dropout]") {
  const attn::Tensor q = testutil::random_tensor({4, 16, 8}, 1), k = testutil::random_tensor({4, 16, 8}, 2),
                     v = testutil::random_tensor({4, 16, 8}, 3);
  attn::SdpaOptions options;
  options.dropout = {0.25f, 1234};
  attn::SdpaResult a, b, c, none;
  attn::Trace trace;
  REQUIRE(attn::scaled_dot_product_attention(q, k, v, options, a, &trace).ok());
  REQUIRE(attn::scaled_dot_product_attention(q, k, v, options, b).ok());
  CHECK(a.output.data == b.output.data);  // same seed, traced or not: identical
  options.dropout.seed = 99;
  REQUIRE(attn::scaled_dot_product_attention(q, k, v, options, c).ok());
  CHECK(c.output.data != a.output.data);
  const attn::TraceStep* weights = trace.find("weights");
  const attn::TraceStep* dropped = trace.find("dropped");
  REQUIRE(weights);
  REQUIRE(dropped);
  CHECK(a.weights.data == weights->tensor.data);  // returned weights are before dropout
  int zeroed = 0;
  for (size_t i = 0; i < dropped->tensor.data.size(); ++i) {
    const float d = dropped->tensor.data[i], w = weights->tensor.data[i];
    if (d == 0.0f)
      ++zeroed;
    else
      CHECK(d == Approx(w / 0.75f).epsilon(1e-6));
  }
  const double fraction = zeroed / double(dropped->tensor.data.size());
  CHECK(fraction == Approx(0.25).margin(0.05));  // 1024 draws: 5 standard errors ≈ 0.07
}

TEST_CASE("q·k of N(0,1) vectors has variance d_k, and 1 after dividing by sqrt(d_k)", "[sdpa][stats]") {
  constexpr int kSamples = 4096;
  for (int dk : {4, 16, 64, 256}) {
    // (kSamples, 1, dk): each slice is one independent q·k product.
    const attn::Tensor q = testutil::random_tensor({kSamples, 1, dk}, 1000 + dk);
    const attn::Tensor k = testutil::random_tensor({kSamples, 1, dk}, 2000 + dk);
    const attn::Tensor v = testutil::random_tensor({kSamples, 1, 1}, 3);
    attn::Trace trace;
    attn::SdpaResult r;
    REQUIRE(attn::scaled_dot_product_attention(q, k, v, {}, r, &trace).ok());
    for (const char* step : {"scores", "scaled"}) {
      const std::vector<float>& x = trace.find(step)->tensor.data;
      double mean = 0, var = 0;
      for (float s : x) mean += s;
      mean /= x.size();
      for (float s : x) var += (s - mean) * (s - mean);
      var /= x.size() - 1;
      const double want = std::string(step) == "scores" ? dk : 1.0;
      CAPTURE(dk, step, var);
      CHECK(std::fabs(var - want) <= kStatRelTol * want);
    }
  }
}

TEST_CASE("the SDPA trace has the named steps and the traced output equals the fast output",
          "[sdpa][trace]") {
  const attn::Tensor q = testutil::random_tensor({2, 3, 5, 4}, 1),
                     k = testutil::random_tensor({2, 3, 6, 4}, 2),
                     v = testutil::random_tensor({2, 3, 6, 3}, 3);
  attn::SdpaOptions options;
  options.causal = true;
  attn::SdpaResult fast, traced;
  attn::Trace trace;
  REQUIRE(attn::scaled_dot_product_attention(q, k, v, options, fast).ok());
  REQUIRE(attn::scaled_dot_product_attention(q, k, v, options, traced, &trace).ok());
  CHECK(fast.output.data == traced.output.data);  // bit-identical
  CHECK(fast.weights.data == traced.weights.data);
  std::vector<std::string> names;
  for (const auto& s : trace.steps()) names.push_back(s.name);
  CHECK(names == std::vector<std::string>{"scores", "scaled", "masked", "weights", "context"});
  CHECK(trace.find("scores")->tensor.shape == attn::Shape{2, 3, 5, 6});
  CHECK(trace.find("masked")->tensor.data[1] == -std::numeric_limits<float>::infinity());  // causal
  CHECK(trace.find("context")->tensor.data == fast.output.data);
}
