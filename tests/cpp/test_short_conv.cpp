// LFM2's short-convolution layers (src/model/short_conv.h) on the lfm2-tiny fixture (a conv layer,
// then an attention layer): decoding with the conv state equals the whole-sequence forward, a
// failed step leaves every state as it found it, the hook points' values and the mixing map agree
// with a float64 recomputation from the captured [B | C | X] and the kernel, and the metric's
// gradient through the conv layer agrees with central differences of the metric, keeps sequences
// apart and has the same bits at every thread count. The logits
// themselves are checked against PyTorch by test_pretrained_families.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/pretrained.h"
#include "parallel_check.h"
#include "pretrained_fixture.h"

namespace {

namespace fx = pretrained_fixture;

constexpr double kDecodeRel = 1e-5;  // a decoded row vs the full forward's: 1e-5·(1 + |x|)
constexpr double kMapAbs = 1e-6;     // the mixing map vs its float64 recomputation

const std::vector<std::int32_t> kIds = {5, 17, 42, 88, 3, 61, 29};

attn::PretrainedForwardResult full(attn::PretrainedModel& m, const attn::PretrainedForwardOptions& o = {}) {
  attn::PretrainedForwardResult r;
  const attn::Status st = m.forward(1, static_cast<int>(kIds.size()), kIds, o, r);
  INFO(st.message);
  REQUIRE(st.ok());
  return r;
}

}  // namespace

TEST_CASE("short conv: decoding with the conv state equals the full forward", "[pretrained][short_conv]") {
  attn::PretrainedModel m;
  fx::load_model("lfm2-tiny", "model.safetensors", m);
  REQUIRE(m.config().layer_mixer == std::vector<int>{1, 0});
  const attn::PretrainedForwardResult want = full(m);
  const int v = m.config().vocab_size, t = static_cast<int>(kIds.size());
  attn::DecodeCaches caches;
  REQUIRE(m.create_caches(t, 1, caches).ok());
  REQUIRE(caches.layers[0].state.size() == 2u * 32u);  // (K − 1) rows of E
  std::vector<float> got;
  const auto step = [&](int from, int count) {
    attn::PretrainedForwardResult r;
    const std::vector<std::int32_t> ids(kIds.begin() + from, kIds.begin() + from + count);
    REQUIRE(m.forward(1, count, ids, {}, r, &caches).ok());
    got.insert(got.end(), r.logits.data.begin(), r.logits.data.end());
  };
  step(0, 3);  // a prompt longer than the kernel's state, then one row per step
  for (int i = 3; i < t; ++i) step(i, 1);
  REQUIRE(got.size() == static_cast<std::size_t>(t) * v);
  std::size_t exact = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("logit " << i);
    REQUIRE(std::fabs(got[i] - want.logits.data[i]) <= kDecodeRel * (1 + std::fabs(want.logits.data[i])));
    exact += got[i] == want.logits.data[i];
  }
  // Reported, not required: the conv sums the same values in the same order either way.
  WARN("decoded logits equal to the full forward's bit for bit: " << exact << " of " << got.size());
}

TEST_CASE("short conv: a failed step leaves the conv and KV states as found", "[pretrained][short_conv]") {
  attn::PretrainedModel m;
  fx::load_model("lfm2-tiny", "model.safetensors", m);
  attn::DecodeCaches caches;
  REQUIRE(m.create_caches(8, 1, caches).ok());
  attn::PretrainedForwardResult r;
  REQUIRE(m.forward(1, 3, {5, 17, 42}, {}, r, &caches).ok());
  const std::vector<float> state = caches.layers[0].state;
  // The last MLP's activations pushed to 3e38: its output overflows, the logits are not finite and
  // are refused after every layer ran (the conv wrote its next state, the attention its KV rows).
  attn::HookRequest req;
  req.edits.push_back({"blocks.1.mlp.hook_post", true, {80}, std::vector<float>(80, 3e38f), {}, {}});
  std::unique_ptr<attn::HookRun> run;
  const attn::Status made = attn::HookRun::create(req, m.hook_shapes(), 1, 1, 3, 8, run);
  INFO(made.message);
  REQUIRE(made.ok());
  attn::PretrainedForwardOptions bad;
  bad.hooks = run.get();
  REQUIRE(!m.forward(1, 1, {88}, bad, r, &caches).ok());
  REQUIRE(caches.length == 3);
  REQUIRE(caches.layers[0].state == state);
  REQUIRE(caches.layers[1].kv.length == 3);
  // The sequence continues as if the failed step had not been tried.
  REQUIRE(m.forward(1, 4, {88, 3, 61, 29}, {}, r, &caches).ok());
  const attn::PretrainedForwardResult want = full(m);
  const int v = m.config().vocab_size;
  for (int i = 0; i < 4 * v; ++i) {
    const float w = want.logits.data[static_cast<std::size_t>(3 * v + i)];
    REQUIRE(std::fabs(r.logits.data[i] - w) <= kDecodeRel * (1 + std::fabs(w)));
  }
}

TEST_CASE("short conv: hooks and the mixing map against a float64 recomputation",
          "[pretrained][short_conv]") {
  attn::PretrainedModel m;
  fx::load_model("lfm2-tiny", "model.safetensors", m);
  const int e = 32, k = 3, t = static_cast<int>(kIds.size());
  attn::HookRequest req;
  req.capture = {"blocks.0.conv.hook_bcx", "blocks.0.conv.hook_in", "blocks.0.conv.hook_out",
                 "blocks.0.conv.hook_gated"};
  std::unique_ptr<attn::HookRun> run;
  REQUIRE(attn::HookRun::create(req, m.hook_shapes(), 1, t, 0, t, run).ok());
  attn::PretrainedForwardOptions o;
  o.hooks = run.get();
  o.attention_layers = {0, 1};
  const attn::PretrainedForwardResult r = full(m, o);
  const auto caps = run->take_captures();
  REQUIRE(caps.size() == 4u);
  const std::vector<float>&bcx = caps[0].second.data, &in = caps[1].second.data, &out = caps[2].second.data,
        &gated = caps[3].second.data;
  REQUIRE(caps[0].second.shape == attn::Shape{1, t, 3 * e});
  std::vector<float> w;
  REQUIRE(m.read_rows({attn::TensorRole::kConvWeight, 0}, 0, e, w).ok());
  const attn::Tensor& map = r.attention[0];
  REQUIRE(map.shape == attn::Shape{1, 1, t, t});
  REQUIRE(r.attention[1].shape == attn::Shape{1, 4, t, t});  // the attention layer's softmax
  for (int i = 0; i < t; ++i) {
    double mean_gated = 0, mixed = 0;  // Σ_s of the per-channel mixing · X: the gated output's mean
    for (int c = 0; c < e; ++c) {
      const double b = bcx[i * 3 * e + c], x = bcx[i * 3 * e + 2 * e + c];
      REQUIRE(in[i * e + c] == static_cast<float>(b * x));
      double conv = 0;
      for (int s = std::max(0, i - k + 1); s <= i; ++s)
        conv += w[c * k + k - 1 - (i - s)] * static_cast<double>(in[s * e + c]);
      REQUIRE(std::fabs(out[i * e + c] - conv) <= 1e-6 * (1 + std::fabs(conv)));
      mean_gated += gated[i * e + c] / static_cast<double>(e);
    }
    for (int s = 0; s < t; ++s) {
      double a = 0;
      for (int c = 0; c < e; ++c) {
        if (i - s < 0 || i - s >= k) continue;
        const double coef = bcx[i * 3 * e + e + c] * w[c * k + k - 1 - (i - s)] * bcx[s * 3 * e + c];
        a += coef / e;
        mixed += coef * bcx[s * 3 * e + 2 * e + c] / e;
      }
      INFO("map row " << i << " column " << s);
      REQUIRE(std::fabs(map.data[i * t + s] - a) <= kMapAbs);
      if (i - s < 0 || i - s >= k) REQUIRE(map.data[i * t + s] == 0.0f);
    }
    REQUIRE(std::fabs(mean_gated - mixed) <= 1e-5 * (1 + std::fabs(mixed)));
  }
}

TEST_CASE("short conv: hook names; the map needs the whole sequence", "[pretrained][short_conv]") {
  attn::PretrainedModel m;
  fx::load_model("lfm2-tiny", "model.safetensors", m);
  const attn::HookShapes shapes = m.hook_shapes();
  attn::HookId id;
  REQUIRE(attn::parse_hook("blocks.0.conv.hook_in", shapes, id).ok());
  REQUIRE(attn::parse_hook("blocks.0.hook_attn_out", shapes, id).ok());
  REQUIRE(!attn::parse_hook("blocks.0.attn.hook_pattern", shapes, id).ok());
  REQUIRE(!attn::parse_hook("blocks.1.conv.hook_in", shapes, id).ok());
  REQUIRE(attn::parse_hook("blocks.1.attn.hook_pattern", shapes, id).ok());
  attn::PretrainedForwardResult r;
  attn::DecodeCaches caches;
  REQUIRE(m.create_caches(8, 1, caches).ok());
  attn::PretrainedForwardOptions o;
  o.attention_layers = {0};
  REQUIRE(!m.forward(1, 2, {5, 17}, o, r, &caches).ok());  // the map needs the whole sequence
  REQUIRE(caches.length == 0);
}

// ∂M/∂(the stream entering block 0) along directions v (one per position, one dense) against
// (M(e + h·v) − M(e − h·v)) / 2h of the float32 forward (metric_gradients' value from start_embedding),
// h = 1e-2: within kFdTol of the Cauchy–Schwarz bound |∇M on v's support|·|v| (measured ≤ 2e-5 of it;
// a conv backward off by a row or a channel misses by ~5e-2 of it).
TEST_CASE("short conv: the metric's gradient through the conv layer against central differences",
          "[pretrained][short_conv]") {
  constexpr double kFdTol = 5e-4, kStep = 1e-2;
  attn::PretrainedModel m;
  fx::load_model("lfm2-tiny", "model.safetensors", m);
  const std::vector<std::int32_t> ids = {5, 17, 42, 88, 5, 17, 3};
  const int t = static_cast<int>(ids.size()), e = 32;
  attn::GradientOptions g;
  g.metric.kind = attn::MetricKind::kLogitDiff;  // logit 3 − logit 7 at T − 1
  g.metric.token = 3;
  g.metric.against = 7;
  g.activations = true;
  attn::GradientResult gr;
  REQUIRE(m.metric_gradients(1, t, ids, g, gr).ok());
  REQUIRE(gr.grad_z[0].data.empty());  // the conv layer has no heads
  const std::vector<float> e0 = gr.hidden[0].data, grad = gr.grad_hidden[0].data;
  const auto metric = [&](const std::vector<double>& v, double sign) {
    attn::GradientOptions o = g;
    o.activations = false;
    o.start_embedding.resize(e0.size());
    for (std::size_t i = 0; i < e0.size(); ++i)
      o.start_embedding[i] = static_cast<float>(e0[i] + sign * kStep * v[i]);
    attn::GradientResult r;
    REQUIRE(m.metric_gradients(1, t, ids, o, r).ok());
    return r.values[0];
  };
  std::uint32_t seed = 7;
  const auto rnd = [&]() { return (seed = seed * 1664525u + 1013904223u) / 4294967296.0 * 2 - 1; };
  for (int only = -1; only < t; ++only) {
    std::vector<double> v(e0.size(), 0.0);
    for (std::size_t i = 0; i < v.size(); ++i)
      if (only < 0 || static_cast<int>(i) / e == only) v[i] = rnd();
    double dot = 0, gg = 0, vv = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      dot += grad[i] * v[i];
      if (v[i] != 0) gg += static_cast<double>(grad[i]) * grad[i];
      vv += v[i] * v[i];
    }
    const double fd = (metric(v, 1) - metric(v, -1)) / (2 * kStep);
    INFO("direction " << only << ": finite differences " << fd << ", gradient " << dot);
    REQUIRE(std::fabs(fd - dot) <= kFdTol * std::sqrt(gg * vv));
  }
}

// The conv backward keeps each sequence's rows apart (row 0 of a batch of two is the batch of one's)
// and gives the same bits at every thread count.
TEST_CASE("short conv: the backward per sequence, the same bits at every thread count",
          "[pretrained][short_conv][parallel]") {
  attn::PretrainedModel m;
  fx::load_model("lfm2-tiny", "model.safetensors", m);
  attn::GradientOptions o;
  o.metric = {attn::MetricKind::kLogitDiff, -1, 24, 95};
  const std::vector<std::int32_t> one = {7, 52, 19, 83, 40, 11},
                                  two = {7, 52, 19, 83, 40, 11, 9, 3, 1, 4, 1, 5};
  attn::GradientResult a, b;
  REQUIRE(m.metric_gradients(1, 6, one, o, a).ok());
  REQUIRE(m.metric_gradients(2, 6, two, o, b).ok());
  REQUIRE(b.values[0] == a.values[0]);
  for (std::size_t i = 0; i < a.grad_hidden[0].data.size(); ++i)
    REQUIRE(std::fabs(b.grad_hidden[0].data[i] - a.grad_hidden[0].data[i]) <=
            1e-6 * (1 + std::fabs(a.grad_hidden[0].data[i])));
  // 96 × 64 rows: the conv's row loops (3E·K work a row) split too, not only the GEMMs
  std::vector<std::int32_t> long_ids;
  for (int i = 0; i < 96 * 64; ++i) long_ids.push_back((i * 37 + 5) % 90);
  testutil::require_same_at_every_count("lfm2 metric gradients", [&] {
    attn::GradientResult r;
    REQUIRE(m.metric_gradients(96, 64, long_ids, o, r).ok());
    return r.grad_hidden[0].data;
  });
}
