// The hook points (model/hooks.h) on both model classes: every hook a model lists can be captured,
// with its listed shape; a set of each hook to its own captured value and an add of zero leave the
// logits bit for bit; an add at hook_resid_pre equals a run started (startAt) from the edited stream;
// the pattern captured equals the attention weights the forward returns; positions and heads
// restrict an edit; decoding steps take edits over one position; bad requests are refused by name.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/rng.h"
#include "hook_helpers.h"
#include "model/pretrained.h"
#include "model/tiny_transformer.h"
#include "pretrained_fixture.h"
#include "test_helpers.h"

namespace {

attn::TinyTransformer tiny_model(attn::NormKind norm, attn::PositionalKind positional) {
  attn::TinyConfig c;
  c.vocab_size = 11;
  c.max_length = 8;
  c.d_model = 8;
  c.num_heads = 2;
  c.num_kv_heads = 1;
  c.num_layers = 2;
  c.positional = positional;
  c.norm = norm;
  c.seed = 5;
  attn::TinyTransformer m;
  REQUIRE(attn::TinyTransformer::create(c, m).ok());
  for (attn::Tensor& p : m.parameters_for_update())
    for (std::size_t e = 0; e < p.data.size(); ++e) p.data[e] += 0.2f * attn::approx_normal(70, e);
  return m;
}

const attn::IdBatch kIds{1, 6, {3, 1, 4, 1, 5, 9}};

// Every hook's name, with its shape for this pass (B = 1, T = 6).
std::vector<std::pair<std::string, attn::Shape>> every_hook(const attn::HookShapes& s) {
  std::vector<std::pair<std::string, attn::Shape>> out;
  for (const attn::HookInfo& h : attn::hook_list(s)) {
    attn::Shape shape = h.shape;
    for (auto& v : shape) v = v == attn::kHookBatchAxis ? 1 : v == attn::kHookTimeAxis ? 6 : v;
    out.emplace_back(h.name, shape);
  }
  return out;
}

template <class Forward>
void check_identities(const attn::HookShapes& shapes, Forward&& forward) {
  attn::ForwardResult plain;
  attn::ForwardOptions none;
  REQUIRE(forward(none, plain).ok());
  testutil::Hooked all;
  for (const auto& [name, shape] : every_hook(shapes)) all.request.capture.push_back(name);
  REQUIRE(all.make(shapes, 1, 6).ok());
  attn::ForwardResult captured_run;
  REQUIRE(forward(all.options, captured_run).ok());
  REQUIRE(captured_run.logits.data == plain.logits.data);  // capturing changes nothing
  for (const auto& [name, shape] : every_hook(shapes)) {
    INFO(name);
    const attn::Tensor value = all.captured(name);
    REQUIRE(value.shape == shape);
    testutil::Hooked set, add;
    set.edit(name, false, shape, value.data);
    add.edit(name, true, {shape.back()}, std::vector<float>(static_cast<std::size_t>(shape.back()), 0.0f));
    REQUIRE(set.make(shapes, 1, 6).ok());
    REQUIRE(add.make(shapes, 1, 6).ok());
    attn::ForwardResult r;
    REQUIRE(forward(set.options, r).ok());
    REQUIRE(r.logits.data == plain.logits.data);
    REQUIRE(forward(add.options, r).ok());
    REQUIRE(r.logits.data == plain.logits.data);
  }
}

}  // namespace

TEST_CASE("hooks: captures of every hook; set to its own value and add zero change no bit", "[hooks]") {
  for (const auto norm : {attn::NormKind::kPre, attn::NormKind::kPost}) {
    for (const auto pos : {attn::PositionalKind::kLearned, attn::PositionalKind::kRope}) {
      attn::TinyTransformer m = tiny_model(norm, pos);
      check_identities(m.hook_shapes(), [&](const attn::ForwardOptions& o, attn::ForwardResult& r) {
        return m.forward(kIds, o, r);
      });
    }
  }
}

TEST_CASE("hooks: every hook of three pretrained families captured, set to itself, added zero: same bits",
          "[hooks][pretrained]") {
  for (const char* family : {"gpt2-tiny", "qwen3-tiny", "gemma2-tiny"}) {
    INFO(family);
    attn::PretrainedModel model;
    pretrained_fixture::load_model(family, "model.safetensors", model);
    const std::vector<std::int32_t> ids = {7, 52, 19, 83, 40, 11};
    check_identities(model.hook_shapes(), [&](const attn::ForwardOptions& o, attn::ForwardResult& r) {
      return model.forward(1, 6, ids, o, r);
    });
  }
}

TEST_CASE("hooks: an add at hook_resid_pre equals a run from the edited stream; the pattern is the weights",
          "[hooks]") {
  attn::TinyTransformer m = tiny_model(attn::NormKind::kPre, attn::PositionalKind::kRope);
  attn::ForwardOptions o;
  o.hidden_states = true;
  o.attention_layers = {0, 1};
  attn::ForwardResult full;
  REQUIRE(m.forward(kIds, o, full).ok());
  const std::vector<float> steer = testutil::random_tensor({8}, 31, 0.5f).data;
  testutil::Hooked added;
  added.edit("blocks.1.hook_resid_pre", true, {8}, steer, {2, 4});
  added.request.capture = {"blocks.*.attn.hook_pattern"};
  REQUIRE(added.make(m.hook_shapes(), 1, 6).ok());
  attn::ForwardResult a;
  REQUIRE(m.forward(kIds, added.options, a).ok());
  REQUIRE(added.captured("blocks.0.attn.hook_pattern").data == full.attention[0].data);
  std::vector<float> stream = full.hidden_states[1].data;
  for (int pos : {2, 4})
    for (int i = 0; i < 8; ++i)
      stream[static_cast<std::size_t>(pos * 8 + i)] += steer[static_cast<std::size_t>(i)];
  testutil::Hooked from;
  from.start_at(1, stream, {1, 6, 8});
  REQUIRE(from.make(m.hook_shapes(), 1, 6).ok());
  attn::ForwardResult b;
  REQUIRE(m.forward(kIds, from.options, b).ok());
  REQUIRE(a.logits.data == b.logits.data);
  for (int i = 0; i < 2 * 11; ++i)
    REQUIRE(a.logits.data[static_cast<std::size_t>(i)] == full.logits.data[static_cast<std::size_t>(i)]);
  REQUIRE(a.logits.data[2 * 11] != full.logits.data[2 * 11]);
}

TEST_CASE("hooks: heads restrict an edit of z and of the pattern to those heads", "[hooks]") {
  attn::TinyTransformer m = tiny_model(attn::NormKind::kPre, attn::PositionalKind::kRope);
  testutil::Hooked z;
  z.edit("blocks.0.attn.hook_z", false, {4}, {0, 0, 0, 0}, {}, {1});
  z.request.capture = {"blocks.0.attn.hook_z"};
  REQUIRE(z.make(m.hook_shapes(), 1, 6).ok());
  attn::ForwardResult r;
  REQUIRE(m.forward(kIds, z.options, r).ok());
  const attn::Tensor got = z.captured("blocks.0.attn.hook_z");  // (1, 6, 2, 4): head 1 zero, head 0 not
  bool head0_nonzero = false;
  for (int t = 0; t < 6; ++t)
    for (int i = 0; i < 4; ++i) {
      REQUIRE(got.data[static_cast<std::size_t>((t * 2 + 1) * 4 + i)] == 0.0f);
      head0_nonzero = head0_nonzero || got.data[static_cast<std::size_t>((t * 2) * 4 + i)] != 0.0f;
    }
  REQUIRE(head0_nonzero);
  testutil::Hooked p;  // head 0 of layer 1 attends to the first token only, at every query row
  std::vector<float> row(6, 0.0f);
  row[0] = 1.0f;
  p.edit("blocks.1.attn.hook_pattern", false, {6}, row, {}, {0});
  p.request.capture = {"blocks.1.attn.hook_pattern"};
  REQUIRE(p.make(m.hook_shapes(), 1, 6).ok());
  REQUIRE(m.forward(kIds, p.options, r).ok());
  const attn::Tensor pattern = p.captured("blocks.1.attn.hook_pattern");
  for (int t = 0; t < 6; ++t) {
    REQUIRE(pattern.data[static_cast<std::size_t>(t * 6)] == 1.0f);
    if (t > 0) REQUIRE(pattern.data[static_cast<std::size_t>(36 + t * 6)] != 1.0f);  // head 1 untouched
  }
}

TEST_CASE("hooks: refusals name the hook, before anything runs", "[hooks]") {
  attn::TinyTransformer m = tiny_model(attn::NormKind::kPre, attn::PositionalKind::kLearned);
  const auto message = [&](testutil::Hooked& h) { return h.make(m.hook_shapes(), 1, 6).message; };
  testutil::Hooked unknown;
  unknown.request.capture = {"blocks.0.attn.hook_nothing"};
  REQUIRE(message(unknown).find("blocks.0.attn.hook_nothing") != std::string::npos);
  testutil::Hooked shape;
  shape.edit("blocks.0.hook_resid_pre", true, {7}, std::vector<float>(7, 0.0f));
  REQUIRE(message(shape).find("blocks.0.hook_resid_pre") != std::string::npos);
  testutil::Hooked position;
  position.edit("blocks.0.hook_resid_pre", true, {8}, std::vector<float>(8, 0.0f), {6});
  REQUIRE(message(position).find("position 6") != std::string::npos);
  testutil::Hooked head;
  head.edit("blocks.0.attn.hook_k", true, {4}, std::vector<float>(4, 0.0f), {}, {1});  // one KV head
  REQUIRE(message(head).find("head 1") != std::string::npos);
  testutil::Hooked stream_heads;
  stream_heads.edit("hook_embed", true, {8}, std::vector<float>(8, 0.0f), {}, {0});
  REQUIRE(message(stream_heads).find("attention hooks only") != std::string::npos);
  testutil::Hooked nan;
  nan.edit("hook_embed", true, {8}, std::vector<float>(8, std::nanf("")));
  REQUIRE(nan.make(m.hook_shapes(), 1, 6).code == attn::StatusCode::kNonFinite);
  // a decoding step: no whole values, no pattern edits, no captures of scores or weights (the rows of
  // its own positions, as the maps' prefill takes q and k, are captured)
  std::unique_ptr<attn::HookRun> run;
  attn::HookRequest step;
  step.edits.push_back({"blocks.0.attn.hook_pattern", true, {7}, std::vector<float>(7, 0.0f), {}, {}});
  REQUIRE(!attn::HookRun::create(step, m.hook_shapes(), 1, 1, 6, 8, run).ok());
  step.edits = {{"blocks.0.hook_resid_pre", true, {8}, std::vector<float>(8, 0.0f), {}, {}}};
  REQUIRE(attn::HookRun::create(step, m.hook_shapes(), 1, 1, 6, 8, run).ok());
  step.capture = {"hook_embed", "blocks.0.attn.hook_rot_q"};
  REQUIRE(attn::HookRun::create(step, m.hook_shapes(), 1, 1, 6, 8, run).ok());
  step.capture = {"blocks.0.attn.hook_pattern"};
  REQUIRE(!attn::HookRun::create(step, m.hook_shapes(), 1, 1, 6, 8, run).ok());
}
