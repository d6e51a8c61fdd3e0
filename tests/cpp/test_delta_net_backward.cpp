// The DeltaNet backward (delta_net_backward.cpp, delta_rule_backward.cpp) against central finite
// differences of the float32 forward: the block alone (both value-head orders, T = 70 across a chunk
// of 64, several directions; z_out equal to the gated norm's output the forward feeds W_out), and
// metric_gradients on the qwen3_5-tiny checkpoint at T = 70: each hidden state's gradient (a forward
// restarted there) and each DeltaNet layer's z gradient (an add of W_out·Δz at its attn.hook_out).
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "core/rng.h"
#include "core/stored_weight.h"
#include "hook_helpers.h"
#include "model/delta_net.h"
#include "model/pretrained.h"
#include "parallel_check.h"
#include "pretrained_fixture.h"
#include "test_helpers.h"

namespace {

// Central differences along a direction of the input's rms × kFdStep: the float32 forward's rounding
// (≈ 1e-7 relative) over the step and the O(h²) truncation stay inside kFdTol of max(1, |g·v|).
constexpr float kFdStep = 2e-3f;
constexpr double kFdTol = 2e-2;
constexpr int kLongT = 70;  // past one chunk (kDeltaChunk = 64): the backward's second chunk

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

double rms(const std::vector<float>& x) {
  return std::sqrt(dot(x, x) / static_cast<double>(x.size()));
}

std::vector<float> direction(std::size_t n, std::uint64_t seed, double scale) {
  std::vector<float> v = testutil::random_tensor({static_cast<int>(n)}, seed, 1.0f).data;
  for (float& x : v) x = static_cast<float>(x * scale);
  return v;
}

void require_fd(double fd, double want, const char* what) {
  INFO(what << ": g·v " << want << ", finite difference " << fd);
  REQUIRE(std::abs(fd - want) <= kFdTol * std::max(1.0, std::abs(want)));
}

struct Block {
  attn::DeltaNetShape s;
  std::vector<attn::StoredWeight> store;
  attn::DeltaNetBlock block;
  attn::WeightView matrix(int rows, int cols, std::uint64_t seed, float scale) {
    attn::StoredWeight sw;
    REQUIRE(attn::StoredWeight::allocate({rows, cols}, attn::WeightFormat::kF32, "test", sw).ok());
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(rows) * cols; ++i)
      static_cast<float*>(sw.bytes())[i] = scale * attn::approx_normal(seed, i);
    store.push_back(std::move(sw));
    return store.back().view();
  }
  explicit Block(bool tiled) {
    s.hidden = 10;
    s.k_heads = 2;
    s.v_heads = 4;
    s.k_dim = 5;
    s.v_dim = 3;
    s.kernel = 4;
    s.tiled = tiled;
    s.a_log = !tiled;
    store.reserve(8);
    block = attn::DeltaNetBlock(s);
    const int c = s.channels(), vd = s.v_heads * s.v_dim;
    block.qkv = matrix(c, s.hidden, 1, 0.5f);
    block.z = matrix(vd, s.hidden, 2, 0.5f);
    block.b_proj = matrix(s.v_heads, s.hidden, 3, 0.5f);
    block.a_proj = matrix(s.v_heads, s.hidden, 4, 0.5f);
    block.out = matrix(s.hidden, vd, 5, 0.5f);
    block.conv = testutil::random_tensor({c, s.kernel}, 6, 0.5f);
    block.decay = testutil::random_tensor({s.v_heads}, 7, 0.5f);
    block.dt_bias = testutil::random_tensor({s.v_heads}, 8, 0.5f);
    block.norm = testutil::random_tensor({s.v_dim}, 9, 1.0f);
  }
  std::vector<float> forward(int b, int t, const std::vector<float>& x) const {
    std::vector<float> y(static_cast<std::size_t>(b) * t * s.hidden);
    REQUIRE(block.forward(b, t, x.data(), y.data(), nullptr, nullptr, nullptr, nullptr, 0).ok());
    return y;
  }
};

}  // namespace

TEST_CASE("DeltaNet block backward: finite differences across a chunk, both value-head orders",
          "[delta_net][gradients]") {
  for (const bool tiled : {false, true}) {
    INFO((tiled ? "tiled" : "grouped") << " value heads");
    const Block f(tiled);
    const int b = 2, t = kLongT;
    const std::vector<float> x = testutil::random_tensor({b, t, f.s.hidden}, 20, 1.0f).data;
    const std::vector<float> dy = testutil::random_tensor({b, t, f.s.hidden}, 21, 1.0f).data;
    std::vector<float> dx(x.size()), z, dz;
    REQUIRE(f.block.backward(b, t, x.data(), dy.data(), dx.data(), &z, &dz).ok());
    for (std::uint64_t seed = 30; seed < 34; ++seed) {
      const std::vector<float> v = direction(x.size(), seed, rms(x));
      std::vector<float> up(x), down(x);
      for (std::size_t i = 0; i < x.size(); ++i) {
        up[i] += kFdStep * v[i];
        down[i] -= kFdStep * v[i];
      }
      require_fd((dot(dy, f.forward(b, t, up)) - dot(dy, f.forward(b, t, down))) / (2.0 * kFdStep),
                 dot(dx, v), "the block's input");
    }
    // one late row alone: its gradient reaches back across the chunk boundary
    std::vector<float> late(x.size(), 0.0f);
    for (int j = 0; j < f.s.hidden; ++j) late[(t - 1) * f.s.hidden + j] = dy[(t - 1) * f.s.hidden + j];
    std::vector<float> dx_late(x.size());
    REQUIRE(f.block.backward(b, t, x.data(), late.data(), dx_late.data(), nullptr, nullptr).ok());
    double early = 0;
    for (int r = 0; r < 60; ++r)
      for (int j = 0; j < f.s.hidden; ++j) early += std::abs(dx_late[r * f.s.hidden + j]);
    REQUIRE(early > 0);
    // z_out through W_out is the block's output
    std::vector<float> y(x.size());
    const int vd = f.s.v_heads * f.s.v_dim;
    f.block.out.linear(b * t, z.data(), vd, nullptr, y.data(), f.s.hidden);
    testutil::require_close(y, f.forward(b, t, x), 1e-6, "W_out · z_out");
    REQUIRE(dz.size() == z.size());
  }
}

TEST_CASE("DeltaNet block backward: the same bits at every thread count", "[delta_net][parallel]") {
  const Block f(false);
  const int b = 4, t = 3 * kLongT;  // enough work for the pool to split
  const std::vector<float> x = testutil::random_tensor({b, t, f.s.hidden}, 40, 1.0f).data;
  const std::vector<float> dy = testutil::random_tensor({b, t, f.s.hidden}, 41, 1.0f).data;
  testutil::require_same_at_every_count("the DeltaNet backward", [&] {
    std::vector<float> dx(x.size());
    REQUIRE(f.block.backward(b, t, x.data(), dy.data(), dx.data(), nullptr, nullptr).ok());
    return dx;
  });
}

namespace {

// M of the qwen3_5-tiny forward with `request`'s hooks (its logits at the metric's position).
double metric_of(attn::PretrainedModel& model, const std::vector<std::int32_t>& ids,
                 const attn::MetricSpec& m, const attn::HookRequest& request) {
  testutil::Hooked h;
  h.request = request;
  h.options.logits_row = m.position;
  h.options.pre_cap_logits = true;
  const int t = static_cast<int>(ids.size());
  REQUIRE(h.make(model.hook_shapes(), 1, t).ok());
  attn::ForwardResult r;
  REQUIRE(model.forward(1, t, ids, h.options, r).ok());
  std::vector<float> d(r.logits.data.size());
  return attn::metric_value_and_grad(m, static_cast<int>(d.size()), r.logits.data.data(), 0.0f, d.data());
}

// A run from block l with the stream x (1, T, E), plus an add of delta at hook `add` (if named).
attn::HookRequest start_at(int l, const attn::Shape& shape, std::vector<float> x, const std::string& add,
                           std::vector<float> delta) {
  attn::HookRequest r;
  r.start_at = "blocks." + std::to_string(l) + ".hook_resid_pre";
  r.edits.push_back({r.start_at, false, shape, std::move(x), {}, {}});
  if (!add.empty()) r.edits.push_back({add, true, shape, std::move(delta), {}, {}});
  return r;
}

}  // namespace

TEST_CASE("qwen3_5-tiny metric_gradients at T = 70: hidden states and DeltaNet z by finite differences",
          "[delta_net][gradients][pretrained]") {
  attn::PretrainedModel model;
  pretrained_fixture::load_model("qwen3_5-tiny", "model.safetensors", model);
  const attn::PretrainedConfig& c = model.config();
  std::vector<std::int32_t> ids;
  for (int i = 0; i < kLongT; ++i) ids.push_back((i * 37 + 11) % c.vocab_size);
  attn::GradientOptions o;
  o.metric = {attn::MetricKind::kLogitDiff, kLongT - 1, 24, 57};
  o.activations = true;
  attn::GradientResult g;
  REQUIRE(model.metric_gradients(1, kLongT, ids, o, g).ok());
  for (int l = 0; l < c.layers; ++l) {
    INFO("layer " << l);
    const attn::Tensor& h = g.hidden[static_cast<std::size_t>(l)];
    const std::vector<float> v = direction(h.data.size(), 60 + l, rms(h.data));
    const auto moved = [&](float s) {
      std::vector<float> x = h.data;
      for (std::size_t i = 0; i < x.size(); ++i) x[i] += s * v[i];
      return metric_of(model, ids, o.metric, start_at(l, h.shape, x, "", {}));
    };
    require_fd((moved(kFdStep) - moved(-kFdStep)) / (2.0 * kFdStep), dot(g.grad_hidden[l].data, v),
               "a hidden state");
    if (c.layer_mixer[static_cast<std::size_t>(l)] != static_cast<int>(attn::MixerKind::kDeltaNet)) continue;
    // z per value head: the mixer's output moves by W_out·Δz
    const std::vector<float>& z = g.z[static_cast<std::size_t>(l)].data;
    REQUIRE(g.grad_z[static_cast<std::size_t>(l)].data.size() == z.size());
    const int vd = c.linear_v_heads * c.linear_v_dim, e = c.hidden;
    std::vector<float> w_out;
    REQUIRE(model.read_rows({attn::TensorRole::kLinearOut, l}, 0, e, w_out).ok());
    const std::vector<float> dz = direction(z.size(), 80 + l, rms(z));
    std::vector<float> step(static_cast<std::size_t>(kLongT) * e, 0.0f);
    for (int r = 0; r < kLongT; ++r)
      for (int i = 0; i < e; ++i)
        for (int j = 0; j < vd; ++j) step[r * e + i] += w_out[i * vd + j] * dz[r * vd + j];
    const auto added = [&](float s) {
      std::vector<float> delta(step);
      for (float& x : delta) x *= s;
      return metric_of(model, ids, o.metric,
                       start_at(l, h.shape, h.data, "blocks." + std::to_string(l) + ".attn.hook_out", delta));
    };
    require_fd((added(kFdStep) - added(-kFdStep)) / (2.0 * kFdStep), dot(g.grad_z[l].data, dz),
               "a DeltaNet layer's z");
  }
}
