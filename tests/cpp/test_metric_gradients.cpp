// metric_gradients on both model classes, against the models' own float32 forward: central finite
// differences of M along a direction in each hidden state (a forward restarted at block l from the
// perturbed stream: startAt), in each MLP branch (an add at hook_mlp_out) and in a layer's z (an add
// at attn.hook_out of W_O·Δz); the hook_mlp_out capture against the gradient pass's own activations; the
// batch rows each their own; the same bits at every thread count; bad options refused, nothing changed. (The
// values themselves are held to PyTorch float64 autograd in test_gradient_fixtures.cpp.)
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "core/memory_limit.h"
#include "hook_helpers.h"
#include "model/pretrained.h"
#include "model/tiny_transformer.h"
#include "parallel_check.h"
#include "pretrained_fixture.h"
#include "test_helpers.h"

namespace {

// Central differences of a float32 forward along a direction scaled to the perturbed tensor's rms,
// step kFdStep: truncation O(h²) and rounding ≈ 1e-7·|M|/h stay well inside kFdTol of max(1, |g·v|).
constexpr float kFdStep = 2e-3f;
constexpr double kFdTol = 2e-2;

double rms(const std::vector<float>& x) {
  double s = 0;
  for (float v : x) s += static_cast<double>(v) * v;
  return std::sqrt(s / static_cast<double>(x.size()));
}

std::vector<float> direction(std::size_t n, std::uint64_t seed, double scale) {
  std::vector<float> v = testutil::random_tensor({static_cast<int>(n)}, seed, 1.0f).data;
  for (float& x : v) x = static_cast<float>(x * scale);
  return v;
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

// A run from block l with the stream x (1, T, E) (startAt).
attn::HookRequest start_at(int l, const attn::Shape& shape, std::vector<float> x) {
  attn::HookRequest r;
  r.start_at = "blocks." + std::to_string(l) + ".hook_resid_pre";
  r.edits.push_back({r.start_at, false, shape, std::move(x), {}, {}});
  return r;
}

// M of a forward with the hooks of `request` (its logits at the metric's position, one sequence).
template <class Forward>
double metric_of(Forward&& forward, const attn::MetricSpec& m, float cap, const attn::HookRequest& request) {
  attn::ForwardResult r;
  REQUIRE(forward(request, m.position, r).ok());
  std::vector<float> d(r.logits.data.size());
  return attn::metric_value_and_grad(m, static_cast<int>(r.logits.data.size()), r.logits.data.data(), cap,
                                     d.data());
}

// g·v against the central difference of M with `perturb(s)` hooks, for s = ±h.
template <class Forward, class Perturb>
void require_fd(Forward&& forward, const attn::MetricSpec& m, float cap, const std::vector<float>& g,
                const std::vector<float>& v, Perturb&& perturb, const char* what) {
  const double fd =
      (metric_of(forward, m, cap, perturb(kFdStep)) - metric_of(forward, m, cap, perturb(-kFdStep))) /
      (2.0 * kFdStep);
  const double want = dot(g, v);
  INFO(what << ": g·v " << want << ", finite difference " << fd);
  REQUIRE(std::abs(fd - want) <= kFdTol * std::max(1.0, std::abs(want)));
}

// Every check on one model: hidden states, MLP branches and one layer's z by finite differences.
template <class Forward>
void check_model(Forward&& forward, const attn::GradientResult& g, const attn::MetricSpec& m, float cap,
                 const std::vector<float>& w_o, int hz) {
  const int layers = static_cast<int>(g.grad_z.size());
  for (int l = 0; l < layers; ++l) {
    const std::vector<float>& h = g.hidden[static_cast<std::size_t>(l)].data;
    const std::vector<float> v = direction(h.size(), 10 + l, rms(h));
    require_fd(
        forward, m, cap, g.grad_hidden[static_cast<std::size_t>(l)].data, v,
        [&](float s) {
          std::vector<float> x = h;
          for (std::size_t i = 0; i < h.size(); ++i) x[i] += s * v[i];
          return start_at(l, g.hidden[static_cast<std::size_t>(l)].shape, x);
        },
        "a hidden state");
    if (g.grad_mlp.empty()) continue;
    const std::vector<float> u =
        direction(h.size(), 30 + l, rms(g.mlp_branch[static_cast<std::size_t>(l)].data));
    require_fd(
        forward, m, cap, g.grad_mlp[static_cast<std::size_t>(l)].data, u,
        [&](float s) {
          const attn::Shape& shape = g.hidden[static_cast<std::size_t>(l)].shape;
          attn::HookRequest o = start_at(l, shape, h);
          std::vector<float> delta(u.size());
          for (std::size_t i = 0; i < u.size(); ++i) delta[i] = s * u[i];
          o.edits.push_back({"blocks." + std::to_string(l) + ".hook_mlp_out", true, shape, delta, {}, {}});
          return o;
        },
        "an MLP branch");
  }
  // z of the last layer along dz: the attention output moves by W_O·dz (E, H·d) at each row.
  const std::vector<float>& z = g.z.back().data;
  const std::vector<float> dz = direction(z.size(), 50, rms(z));
  const int e = static_cast<int>(w_o.size() / hz), rows = static_cast<int>(z.size() / hz);
  std::vector<float> moved(static_cast<std::size_t>(rows) * e, 0.0f);
  for (int r = 0; r < rows; ++r)
    for (int i = 0; i < e; ++i)
      for (int j = 0; j < hz; ++j) moved[r * e + i] += w_o[i * hz + j] * dz[r * hz + j];
  require_fd(
      forward, m, cap, g.grad_z.back().data, dz,
      [&](float s) {
        const attn::Tensor& last = g.hidden[static_cast<std::size_t>(layers - 1)];
        attn::HookRequest o = start_at(layers - 1, last.shape, last.data);
        std::vector<float> delta(moved.size());
        for (std::size_t i = 0; i < moved.size(); ++i) delta[i] = s * moved[i];
        o.edits.push_back(
            {"blocks." + std::to_string(layers - 1) + ".attn.hook_out", true, last.shape, delta, {}, {}});
        return o;
      },
      "a layer's z");
}

}  // namespace

TEST_CASE("PretrainedModel::metric_gradients: float32 finite differences of the model's own forward",
          "[gradients][pretrained]") {
  for (const char* family : {"gpt2-tiny", "gemma2-tiny", "olmo2-tiny", "qwen3-tiny", "phi3-tiny"}) {
    INFO(family);
    attn::PretrainedModel model;
    pretrained_fixture::load_model(family, "model.safetensors", model);
    const attn::PretrainedConfig& c = model.config();
    const std::vector<std::int32_t> ids = {7, 52, 19, 83, 40, 11};
    const int t = static_cast<int>(ids.size());
    auto forward = [&](const attn::HookRequest& request, int row, attn::ForwardResult& r) {
      testutil::Hooked h;
      h.request = request;
      h.options.logits_row = row;
      h.options.pre_cap_logits = true;  // M applies the cap itself (metric_value_and_grad)
      const attn::Status st = h.make(model.hook_shapes(), 1, t);
      return st.ok() ? model.forward(1, t, ids, h.options, r) : st;
    };
    std::vector<float> w_o;
    const attn::TensorRole o_role = attn::TensorRole::kO;
    REQUIRE(model.read_rows({o_role, c.layers - 1}, 0, c.hidden, w_o).ok());
    for (const attn::MetricKind kind : {attn::MetricKind::kLogitDiff, attn::MetricKind::kLogProbability}) {
      attn::GradientOptions o;
      o.metric = {kind, 4, 24, kind == attn::MetricKind::kLogitDiff ? 95 : -1};
      o.activations = true;
      attn::GradientResult g;
      REQUIRE(model.metric_gradients(1, t, ids, o, g).ok());
      check_model(forward, g, o.metric, c.final_softcap, w_o, c.heads * c.head_dim);
      testutil::Hooked branch;
      branch.request.capture = {"blocks.*.hook_mlp_out"};
      REQUIRE(branch.make(model.hook_shapes(), 1, t).ok());
      attn::ForwardResult r;
      REQUIRE(model.forward(1, t, ids, branch.options, r).ok());
      for (int l = 0; l < c.layers; ++l)
        testutil::require_close(branch.captured("blocks." + std::to_string(l) + ".hook_mlp_out").data,
                                g.mlp_branch[l].data, 1e-6, "the MLP branch hook");
    }
  }
}

TEST_CASE(
    "TinyTransformer::metric_gradients: finite differences for every norm kind, without an MLP, with RoPE",
    "[gradients][tiny]") {
  struct Variant {
    attn::NormKind norm;
    bool mlp;
    attn::PositionalKind positional;
  };
  for (const Variant& variant : {Variant{attn::NormKind::kPre, true, attn::PositionalKind::kLearned},
                                 Variant{attn::NormKind::kPost, true, attn::PositionalKind::kRope},
                                 Variant{attn::NormKind::kNone, false, attn::PositionalKind::kAlibi}}) {
    INFO("norm " << static_cast<int>(variant.norm) << ", mlp " << variant.mlp);
    attn::TinyConfig c;
    c.vocab_size = 13;
    c.max_length = 8;
    c.d_model = 16;
    c.num_heads = 4;
    c.num_kv_heads = 2;
    c.num_layers = 2;
    c.mlp = variant.mlp;
    c.norm = variant.norm;
    c.positional = variant.positional;
    c.seed = 9;
    attn::TinyTransformer model;
    REQUIRE(attn::TinyTransformer::create(c, model).ok());
    for (attn::Tensor& p : model.parameters_for_update())  // larger than the N(0, 0.02²) init: a real signal
      for (float& x : p.data) x *= 5.0f;
    const std::vector<attn::Tensor> before = model.parameters();
    const attn::IdBatch ids{1, 6, {3, 1, 4, 1, 5, 9}};
    auto forward = [&](const attn::HookRequest& request, int row, attn::ForwardResult& r) {
      testutil::Hooked h;
      h.request = request;
      h.options.logits_row = row;
      const attn::Status st = h.make(model.hook_shapes(), 1, 6);
      return st.ok() ? model.forward(ids, h.options, r) : st;
    };
    attn::GradientOptions o;
    o.metric = {attn::MetricKind::kProbability, 4, 2, -1};
    o.activations = true;
    attn::GradientResult g;
    REQUIRE(model.metric_gradients(ids, o, g).ok());
    attn::Tensor out_proj;
    for (std::size_t i = 0; i < model.parameter_names().size(); ++i)
      if (model.parameter_names()[i] == "blocks.1.attn.out_proj.weight") out_proj = model.parameters()[i];
    check_model(forward, g, o.metric, 0.0f, out_proj.data, c.d_model);
    for (std::size_t i = 0; i < before.size(); ++i) REQUIRE(model.parameters()[i].data == before[i].data);
  }
}

TEST_CASE("metric_gradients: each batch row its own, the same bits at every thread count, refusals",
          "[gradients][parallel]") {
  attn::PretrainedModel model;
  pretrained_fixture::load_model("qwen3-tiny", "model.bf16.safetensors", model);
  const std::vector<std::int32_t> one = {7, 52, 19, 83, 40, 11},
                                  two = {7, 52, 19, 83, 40, 11, 9, 3, 1, 4, 1, 5};
  attn::GradientOptions o;
  o.metric = {attn::MetricKind::kLogitDiff, -1, 24, 95};
  o.attention = true;
  attn::GradientResult a, b;
  REQUIRE(model.metric_gradients(1, 6, one, o, a).ok());
  REQUIRE(model.metric_gradients(2, 6, two, o, b).ok());
  REQUIRE(b.values.size() == 2);
  REQUIRE(b.values[0] == a.values[0]);
  const std::vector<float> first(b.grad_hidden[0].data.begin(),
                                 b.grad_hidden[0].data.begin() + a.grad_hidden[0].data.size());
  testutil::require_close(first, a.grad_hidden[0].data, 1e-6, "row 0 of a batch of two");
  std::vector<std::int32_t> long_ids;  // 2 × 32 tokens: enough work for the pool to split
  for (int i = 0; i < 64; ++i) long_ids.push_back((i * 37 + 5) % 90);
  testutil::require_same_at_every_count("pretrained metric gradients", [&] {
    attn::GradientResult r;
    REQUIRE(model.metric_gradients(2, 32, long_ids, o, r).ok());
    std::vector<float> all = r.grad_hidden[0].data;
    for (const attn::Tensor& z : r.grad_z) all.insert(all.end(), z.data.begin(), z.data.end());
    all.insert(all.end(), r.grad_attention[0].data.begin(), r.grad_attention[0].data.end());
    return all;
  });
  attn::GradientResult r;
  for (const attn::MetricSpec& bad : {attn::MetricSpec{attn::MetricKind::kLogitDiff, 6, 1, -1},
                                      attn::MetricSpec{attn::MetricKind::kLogitDiff, 0, -3, -1},
                                      attn::MetricSpec{attn::MetricKind::kProbability, 0, 1, 2},
                                      attn::MetricSpec{static_cast<attn::MetricKind>(7), 0, 1, -1}}) {
    o.metric = bad;
    REQUIRE(model.metric_gradients(1, 6, one, o, r).code == attn::StatusCode::kInvalidArgument);
  }
  o.metric = {};
  o.start_embedding.assign(5, 0.0f);
  REQUIRE(model.metric_gradients(1, 6, one, o, r).code == attn::StatusCode::kInvalidArgument);
  REQUIRE(r.values.empty());
}

TEST_CASE("metric_gradients under a tight memory limit: each block recomputed, the same bits",
          "[gradients]") {
  attn::PretrainedModel model;
  pretrained_fixture::load_model("olmo2-tiny", "model.safetensors", model);
  const std::vector<std::int32_t> ids = {7, 52, 19, 83, 40, 11};
  attn::GradientOptions o;
  o.metric = {attn::MetricKind::kLogProbability, -1, 24, -1};
  o.activations = true;
  attn::GradientResult kept, recomputed;
  REQUIRE(model.metric_gradients(1, 6, ids, o, kept).ok());
  const std::uint64_t before = attn::memory_limit_bytes();
  // The smallest limit (in 4 KB steps) the call passes: there the blocks' activations do not all fit.
  std::uint64_t lo = 0, hi = std::uint64_t{64} << 20;
  while (hi - lo > 4096) {
    const std::uint64_t mid = (lo + hi) / 2;
    attn::set_memory_limit_bytes(mid);
    attn::GradientResult r;
    (model.metric_gradients(1, 6, ids, o, r).ok() ? hi : lo) = mid;
  }
  attn::set_memory_limit_bytes(hi);
  const attn::Status st = model.metric_gradients(1, 6, ids, o, recomputed);
  attn::set_memory_limit_bytes(before);
  REQUIRE(st.ok());
  for (std::size_t l = 0; l < kept.grad_hidden.size(); ++l)
    REQUIRE(kept.grad_hidden[l].data == recomputed.grad_hidden[l].data);
  for (std::size_t l = 0; l < kept.grad_z.size(); ++l)
    REQUIRE(kept.grad_z[l].data == recomputed.grad_z[l].data);
  for (std::size_t l = 0; l < kept.mlp_branch.size(); ++l)
    REQUIRE(kept.mlp_branch[l].data == recomputed.mlp_branch[l].data);
}
