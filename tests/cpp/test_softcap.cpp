// Attention-logit soft-capping (Gemma 2; MhaForwardOptions::softcap): the weights equal a double
// reference softmax(cap · tanh(q·k·scale / cap)) computed from the traced q and k, the tiled
// long-sequence path (no weights) gives the full path's output, and what cannot take it refuses.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "core/multi_head.h"
#include "test_helpers.h"

namespace {

constexpr double kWeightTol = 1e-6;  // float32 softmax of a double reference
constexpr double kPathTol = 2e-5;    // full vs tiled path: online softmax rounds differently

attn::MultiHeadAttention capped_module() {
  attn::MhaConfig c;
  c.embed_dim = 16;
  c.num_heads = 2;
  c.seed = 5;
  attn::MultiHeadAttention m;
  REQUIRE(attn::MultiHeadAttention::create(c, m).ok());
  return m;
}

}  // namespace

TEST_CASE("softcap: weights = softmax(cap·tanh(scaled scores / cap)) with the causal mask, against double",
          "[mha][softcap]") {
  const attn::MultiHeadAttention m = capped_module();
  const attn::Tensor x = testutil::random_tensor({1, 6, 16}, 3, 3.0f);  // large scores: the cap matters
  attn::MhaForwardOptions o;
  o.causal = true;
  o.average_weights = false;
  o.softcap = 1.5f;
  attn::MhaResult r;
  attn::Trace trace;
  REQUIRE(m.forward(x, nullptr, nullptr, o, r, &trace).ok());
  const attn::Tensor& q = trace.find("q")->tensor;  // (1, H, T, dk)
  const attn::Tensor& k = trace.find("k")->tensor;
  const int H = 2, T = 6, dk = 8;
  const double scale = 1.0 / std::sqrt(static_cast<double>(dk)), cap = 1.5;
  bool capped_something = false;
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < T; ++i) {
      std::vector<double> s(static_cast<std::size_t>(i) + 1);
      double max = -1e300, z = 0;
      for (int j = 0; j <= i; ++j) {
        double dot = 0;
        for (int d = 0; d < dk; ++d)
          dot += static_cast<double>(q.data[((h * T) + i) * dk + d]) * k.data[((h * T) + j) * dk + d];
        capped_something |= std::abs(dot * scale) > cap;
        s[j] = cap * std::tanh(dot * scale / cap);
        max = std::max(max, s[j]);
      }
      for (double& v : s) z += (v = std::exp(v - max));
      for (int j = 0; j < T; ++j) {
        const double want = j <= i ? s[j] / z : 0.0;
        REQUIRE(std::abs(r.weights.data[((h * T) + i) * T + j] - want) <= kWeightTol);
      }
    }
  REQUIRE(capped_something);  // the inputs reach past the cap, so the test tells capped from uncapped
  // Without the cap the weights differ.
  attn::MhaResult plain;
  o.softcap = 0;
  REQUIRE(m.forward(x, nullptr, nullptr, o, plain).ok());
  REQUIRE(plain.weights.data != r.weights.data);
}

TEST_CASE("softcap: the tiled path (no weights, long input) gives the full path's output; a bad cap refused",
          "[mha][softcap]") {
  attn::MultiHeadAttention m = capped_module();
  const attn::Tensor x = testutil::random_tensor({1, 300, 16}, 4, 2.0f);  // past one key tile (256)
  attn::MhaForwardOptions o;
  o.causal = true;
  o.softcap = 2.0f;
  attn::MhaResult full, tiled;
  o.need_weights = true;
  REQUIRE(m.forward(x, nullptr, nullptr, o, full).ok());
  o.need_weights = false;
  REQUIRE(m.forward(x, nullptr, nullptr, o, tiled).ok());
  testutil::require_close(tiled.output.data, full.output.data, kPathTol, "tiled vs full with softcap");
  o.softcap = -1.0f;
  REQUIRE(m.forward(x, nullptr, nullptr, o, tiled).code == attn::StatusCode::kInvalidArgument);
}
