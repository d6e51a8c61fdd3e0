// The forward's options and hook points (model/interp_hooks.h, model/hooks.h) on TinyTransformer, as
// test_pretrained.cpp checks them on PretrainedModel: hidden states in Hugging Face's L + 1 order, a run
// from hidden state l (startAt) gives the full forward's logits bit for bit, logits_row the same row,
// an edit at one row changes only that row onward, each MLP's output, the logit lens, the refusals.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "core/rng.h"
#include "hook_helpers.h"
#include "model/tiny_transformer.h"

namespace {

attn::TinyTransformer model_of(attn::NormKind norm, bool mlp) {
  attn::TinyConfig c;
  c.vocab_size = 9;
  c.max_length = 6;
  c.d_model = 8;
  c.num_heads = 2;
  c.num_layers = 3;
  c.mlp = mlp;
  c.positional = attn::PositionalKind::kSinusoidal;
  c.norm = norm;
  c.seed = 11;
  attn::TinyTransformer m;
  REQUIRE(attn::TinyTransformer::create(c, m).ok());
  std::vector<attn::Tensor> values = m.parameters();
  for (std::size_t k = 0; k < values.size(); ++k)
    for (std::size_t e = 0; e < values[k].data.size(); ++e)
      values[k].data[e] += 0.3f * attn::approx_normal(40 + k, e);
  REQUIRE(m.set_parameters(values).ok());
  return m;
}

const attn::IdBatch kIds{2, 5, {1, 4, 2, 8, 0, 3, 3, 7, 5, 6}};

}  // namespace

TEST_CASE("TinyTransformer hooks: hidden states, runs from a hidden state, deltas, logits_row, MLP outputs",
          "[tiny][interp]") {
  for (const attn::NormKind norm : {attn::NormKind::kPre, attn::NormKind::kPost, attn::NormKind::kNone}) {
    for (const bool mlp : {true, false}) {
      attn::TinyTransformer m = model_of(norm, mlp);
      testutil::Hooked o;
      o.options.hidden_states = true;
      o.options.logit_lens = true;
      if (mlp) o.request.capture = {"blocks.*.mlp.hook_out"};
      REQUIRE(o.make(m.hook_shapes(), 2, 5).ok());
      attn::ForwardResult full;
      REQUIRE(m.forward(kIds, o.options, full).ok());
      REQUIRE(full.hidden_states.size() == 4);  // L + 1
      REQUIRE(full.hidden_states[0].shape == attn::Shape{2, 5, 8});
      REQUIRE(o.run->take_captures().size() == (mlp ? 3u : 0u));
      // the lens: (L + 1, B, T), its last row the model's own top token
      REQUIRE(full.lens_ids.size() == 4u * 10u);
      for (int r = 0; r < 10; ++r) {
        const float* row = full.logits.data.data() + r * 9;
        REQUIRE(full.lens_ids[30 + r] == static_cast<int>(std::max_element(row, row + 9) - row));
        REQUIRE(full.lens_probs[30 + r] > 0.0f);
      }
      for (int l = 0; l < 3; ++l) {
        testutil::Hooked from;
        from.start_at(l, full.hidden_states[l].data, {2, 5, 8});
        REQUIRE(from.make(m.hook_shapes(), 2, 5).ok());
        attn::ForwardResult r;
        REQUIRE(m.forward(kIds, from.options, r).ok());
        REQUIRE(r.logits.data == full.logits.data);  // bit for bit
        from.options.logits_row = 2;
        REQUIRE(m.forward(kIds, from.options, r).ok());
        REQUIRE(r.logits.shape == attn::Shape{2, 1, 9});
        for (int b = 0; b < 2; ++b)
          for (int v = 0; v < 9; ++v)
            REQUIRE(std::fabs(r.logits.data[b * 9 + v] - full.logits.data[(b * 5 + 2) * 9 + v]) <= 1e-6f);
      }
      testutil::Hooked delta;
      std::vector<float> add(80, 0.0f);
      add[(0 * 5 + 1) * 8 + 3] = 0.5f;  // sequence 0, row 1
      delta.edit("blocks.1.attn.hook_out", true, {2, 5, 8}, add);
      REQUIRE(delta.make(m.hook_shapes(), 2, 5).ok());
      attn::ForwardResult r;
      REQUIRE(m.forward(kIds, delta.options, r).ok());
      for (int row = 0; row < 10; ++row) {
        const bool same = std::equal(r.logits.data.begin() + row * 9, r.logits.data.begin() + (row + 1) * 9,
                                     full.logits.data.begin() + row * 9);
        REQUIRE(same == (row == 0 || row >= 5));  // causal: row 1 onward of sequence 0 only
      }
    }
  }
}

TEST_CASE("TinyTransformer hooks: refusals", "[tiny][interp]") {
  attn::TinyTransformer m = model_of(attn::NormKind::kPre, true);
  const auto refused = [&](testutil::Hooked& h) {
    return h.make(m.hook_shapes(), 2, 5).code != attn::StatusCode::kOk;
  };
  testutil::Hooked bad;
  bad.request.start_at = "blocks.1.hook_resid_pre";  // without a set of it
  REQUIRE(refused(bad));
  bad.edit("blocks.1.hook_resid_pre", false, {2, 5, 7}, std::vector<float>(70, 0.0f));
  REQUIRE(refused(bad));
  testutil::Hooked ok;
  ok.start_at(1, std::vector<float>(80, 0.0f), {2, 5, 8});
  REQUIRE(ok.make(m.hook_shapes(), 2, 5).ok());
  attn::ForwardResult r;
  REQUIRE(m.forward(kIds, ok.options, r).ok());
  ok.options.hidden_states = true;  // a run from a residual has no hidden states
  REQUIRE(m.forward(kIds, ok.options, r).code == attn::StatusCode::kInvalidArgument);
  testutil::Hooked late;
  late.edit("blocks.3.attn.hook_out", true, {8}, std::vector<float>(8, 0.0f));  // 3 layers
  REQUIRE(refused(late));
  testutil::Hooked before;
  before.start_at(2, std::vector<float>(80, 0.0f), {2, 5, 8});
  before.edit("blocks.1.hook_attn_out", true, {8}, std::vector<float>(8, 0.0f));  // before startAt
  REQUIRE(refused(before));
  attn::ForwardOptions row;
  row.logits_row = 5;
  REQUIRE(m.forward(kIds, row, r).code == attn::StatusCode::kInvalidArgument);
}
