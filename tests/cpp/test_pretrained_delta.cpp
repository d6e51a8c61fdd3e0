// A hybrid pretrained model (DeltaNet and softmax attention layers; pretrained_delta.cpp) with random
// weights: decoding from the layers' states equals the whole forward, a refused step changes no
// state, the effective attention reproduces the layer's o through the hook points, and a trace of a
// DeltaNet layer holds its z per value head.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "hook_helpers.h"
#include "model/pretrained.h"
#include "test_helpers.h"

namespace {

attn::PretrainedConfig hybrid() {
  attn::PretrainedConfig c;
  c.arch = attn::PretrainedArch::kLlama;
  c.vocab_size = 13;
  c.hidden = 8;
  c.layers = 3;
  c.heads = 2;
  c.kv_heads = 1;
  c.head_dim = 4;
  c.intermediate = 12;
  c.max_positions = 80;
  c.tie_embeddings = false;
  c.layer_mixer = {2, 2, 0};
  c.linear_k_heads = 1;
  c.linear_v_heads = 2;
  c.linear_k_dim = 4;
  c.linear_v_dim = 3;
  c.linear_conv_kernel = 4;
  return c;
}

void fill(attn::PretrainedModel& m, std::uint64_t seed) {
  std::uint64_t k = 0;
  for (const attn::TensorSpec& s : m.tensors()) {
    attn::Tensor t = testutil::random_tensor(s.shape, seed + ++k, 0.4f);
    if (std::string(attn::role_name(s.key.role)).find("norm") != std::string::npos)
      for (float& v : t.data) v = 1.0f + 0.1f * v;
    void* data = nullptr;
    REQUIRE(m.begin_tensor(s.key, t.shape, attn::WeightFormat::kF32, false, s.key.label(), data).ok());
    std::copy(t.data.begin(), t.data.end(), static_cast<float*>(data));
    REQUIRE(m.end_tensor(s.key).ok());
  }
}

std::vector<std::int32_t> ids_of(int n, int shift) {
  std::vector<std::int32_t> ids;
  for (int i = 0; i < n; ++i) ids.push_back((i * 7 + shift) % 13);
  return ids;
}

}  // namespace

TEST_CASE("hybrid model: decoding from the DeltaNet states equals the whole forward",
          "[pretrained][delta_net]") {
  for (const int layout : {0, 1}) {
    attn::PretrainedConfig c = hybrid();
    c.linear_layout = layout;
    attn::PretrainedModel m;
    REQUIRE(attn::PretrainedModel::create(c, m).ok());
    fill(m, 3);
    const int b = 2, t = 72, prefill = 68;  // the prefill crosses a chunk of 64
    std::vector<std::int32_t> ids = ids_of(t, 1), other = ids_of(t, 5);
    ids.insert(ids.end(), other.begin(), other.end());
    attn::PretrainedForwardResult full;
    REQUIRE(m.forward(b, t, ids, {}, full).ok());
    attn::DecodeCaches caches;
    REQUIRE(m.create_caches(t, b, caches).ok());
    const int v = c.vocab_size;
    double worst = 0;
    const auto compare = [&](const attn::PretrainedForwardResult& r, int t0, int n) {
      for (int s = 0; s < b; ++s)
        for (int r0 = 0; r0 < n; ++r0)
          for (int i = 0; i < v; ++i) {
            const float want = full.logits.data[(static_cast<std::size_t>(s) * t + t0 + r0) * v + i];
            const float got = r.logits.data[(static_cast<std::size_t>(s) * n + r0) * v + i];
            worst = std::max(worst, std::fabs(got - want) / (1.0 + std::fabs(want)));
          }
    };
    const auto rows = [&](int t0, int n) {
      std::vector<std::int32_t> out;
      for (int s = 0; s < b; ++s)
        out.insert(out.end(), ids.begin() + s * t + t0, ids.begin() + s * t + t0 + n);
      return out;
    };
    attn::PretrainedForwardResult r;
    REQUIRE(m.forward(b, prefill, rows(0, prefill), {}, r, &caches).ok());
    compare(r, 0, prefill);
    const std::vector<float> kept = caches.layers[0].state;
    REQUIRE(m.forward(b, 1, {1, 99}, {}, r, &caches).code == attn::StatusCode::kInvalidArgument);  // id 99
    REQUIRE(caches.layers[0].state == kept);
    REQUIRE(caches.length == prefill);
    for (int s = prefill; s < t; ++s) {
      REQUIRE(m.forward(b, 1, rows(s, 1), {}, r, &caches).ok());
      compare(r, s, 1);
    }
    INFO("layout " << layout << ": worst error / (1 + |logit|) " << worst);
    REQUIRE(worst <= 1e-5);
  }
}

TEST_CASE("hybrid model: a DeltaNet layer's effective attention reproduces its o",
          "[pretrained][delta_net]") {
  attn::PretrainedModel m;
  REQUIRE(attn::PretrainedModel::create(hybrid(), m).ok());
  fill(m, 7);
  const int t = 70, hv = 2, dv = 3, l = 1;
  testutil::Hooked h;
  h.request.capture = {"blocks.1.linear_attn.hook_v", "blocks.1.linear_attn.hook_o"};
  REQUIRE(h.make(m.hook_shapes(), 1, t).ok());
  h.options.attention_layers = {l};
  attn::PretrainedForwardResult r;
  REQUIRE(m.forward(1, t, ids_of(t, 2), h.options, r).ok());
  const attn::Tensor& a = r.attention[l];
  REQUIRE(a.shape == attn::Shape{1, hv, t, t});
  const attn::Tensor v = h.captured("blocks.1.linear_attn.hook_v"),
                     o = h.captured("blocks.1.linear_attn.hook_o");
  REQUIRE(v.shape == attn::Shape{1, t, hv, dv});
  double max_o = 0, worst = 0;
  for (float x : o.data) max_o = std::max(max_o, static_cast<double>(std::fabs(x)));
  for (int head = 0; head < hv; ++head)
    for (int i = 0; i < t; ++i)
      for (int j = 0; j < dv; ++j) {
        double sum = 0;
        for (int s = 0; s <= i; ++s)
          sum += static_cast<double>(a.data[(static_cast<std::size_t>(head) * t + i) * t + s]) *
                 v.data[(static_cast<std::size_t>(s) * hv + head) * dv + j];
        worst = std::max(worst, std::fabs(sum - o.data[(static_cast<std::size_t>(i) * hv + head) * dv + j]));
      }
  INFO("max |Σ A v − o| " << worst << ", max |o| " << max_o);
  REQUIRE(max_o > 0);
  REQUIRE(worst <= 1e-4 * max_o);
}

TEST_CASE("hybrid model: refusals name the DeltaNet layer; its trace is z per value head",
          "[pretrained][delta_net]") {
  attn::PretrainedConfig c = hybrid();
  c.linear_v_heads = 3;
  c.linear_k_heads = 2;
  attn::PretrainedModel m;
  REQUIRE(attn::PretrainedModel::create(c, m).code == attn::StatusCode::kHeadsDoNotDivide);
  REQUIRE(attn::PretrainedModel::create(hybrid(), m).ok());
  fill(m, 9);
  // a traced DeltaNet layer: its value heads' z only (B, H_v, T, d_v), no softmax steps
  attn::ForwardOptions o;
  o.trace_layers = {0};
  attn::PretrainedForwardResult r;
  REQUIRE(m.forward(1, 4, ids_of(4, 1), o, r).ok());
  REQUIRE(r.traces[0].steps().size() == 1);
  REQUIRE(r.traces[0].find("z")->tensor.shape == attn::Shape{1, 2, 4, 3});
  // the attention layer has attn.hook_q, the DeltaNet layers linear_attn.hook_q only
  attn::HookId id;
  REQUIRE(attn::parse_hook("blocks.2.attn.hook_q", m.hook_shapes(), id).ok());
  REQUIRE(!attn::parse_hook("blocks.0.attn.hook_q", m.hook_shapes(), id).ok());
  REQUIRE(attn::parse_hook("blocks.0.linear_attn.hook_beta", m.hook_shapes(), id).ok());
}

TEST_CASE("hybrid model: linear_attn.hook_state is the decoding state's S after the rows",
          "[pretrained][delta_net][hooks]") {
  attn::PretrainedModel m;
  REQUIRE(attn::PretrainedModel::create(hybrid(), m).ok());
  fill(m, 11);
  const int b = 2, t = 70, hv = 2, dk = 4, dv = 3;  // past one chunk of 64
  std::vector<std::int32_t> ids = ids_of(t, 1), other = ids_of(t, 4);
  ids.insert(ids.end(), other.begin(), other.end());
  testutil::Hooked h;
  h.request.capture = {"blocks.*.linear_attn.hook_state"};
  REQUIRE(h.make(m.hook_shapes(), b, t).ok());
  attn::PretrainedForwardResult r;
  REQUIRE(m.forward(b, t, ids, h.options, r).ok());
  attn::DecodeCaches caches;  // the prefill keeps each layer's state: [conv inputs | S] per sequence
  REQUIRE(m.create_caches(t, b, caches).ok());
  attn::PretrainedForwardResult prefill;
  REQUIRE(m.forward(b, t, ids, {}, prefill, &caches).ok());
  const std::size_t per_seq = caches.layers[0].state.size() / b, s_floats = hv * dk * dv;
  for (int l = 0; l < 2; ++l) {
    const attn::Tensor got = h.captured("blocks." + std::to_string(l) + ".linear_attn.hook_state");
    REQUIRE(got.shape == attn::Shape{b, hv, dk, dv});
    for (int s = 0; s < b; ++s) {
      const float* want = caches.layers[l].state.data() + s * per_seq + (per_seq - s_floats);
      REQUIRE(std::equal(want, want + s_floats, got.data.begin() + s * s_floats));
    }
  }
  bool listed = false;
  for (const attn::HookInfo& info : attn::hook_list(m.hook_shapes()))
    if (info.name == "blocks.0.linear_attn.hook_state")
      listed = info.shape == attn::Shape{attn::kHookBatchAxis, hv, dk, dv};
  REQUIRE(listed);
  testutil::Hooked e;  // captured only: an edit is refused by name
  e.edit("blocks.0.linear_attn.hook_state", true, {b, hv, dk, dv}, std::vector<float>(b * s_floats, 1.0f));
  const attn::Status st = e.make(m.hook_shapes(), b, t);
  REQUIRE(st.code == attn::StatusCode::kInvalidArgument);
  REQUIRE(st.message.find("captured only") != std::string::npos);
}
