// PretrainedModel (src/model/pretrained.h): the tensors each architecture expects, refusals before
// anything large is allocated, and a forward's shapes, causality and batch independence. Its numbers
// are checked against the PyTorch checkpoints of tests/golden/pretrained from JS
// (tests/js/pretrained.test.mjs).
#include <catch2/catch.hpp>
#include <cmath>

#include "model/pretrained.h"
#include "test_helpers.h"

namespace {

attn::PretrainedConfig tiny(attn::PretrainedArch arch) {
  attn::PretrainedConfig c;
  c.arch = arch;
  c.vocab_size = 11;
  c.hidden = 8;
  c.layers = 2;
  c.heads = 2;
  c.kv_heads = arch == attn::PretrainedArch::kGpt2 ? 2 : 1;
  c.head_dim = 4;
  c.intermediate = 12;
  c.max_positions = 6;
  c.tie_embeddings = arch == attn::PretrainedArch::kGpt2;
  return c;
}

void fill(attn::PretrainedModel& m, std::uint64_t seed) {
  std::uint64_t k = 0;
  for (const auto& [name, shape] : m.expected_tensors()) {
    attn::Tensor t = testutil::random_tensor(shape, seed + ++k, 0.3f);
    if (name.find("norm") != std::string::npos || name.find("ln_") != std::string::npos)
      for (float& v : t.data) v = 1.0f + 0.1f * v;
    const attn::Status st = m.set_tensor(name, t);
    INFO(name << ": " << st.message);
    REQUIRE(st.ok());
  }
}

}  // namespace

TEST_CASE("pretrained: expected tensors, missing ones, refusals", "[pretrained]") {
  attn::PretrainedModel m;
  REQUIRE(attn::PretrainedModel::create(tiny(attn::PretrainedArch::kGpt2), m).ok());
  REQUIRE(m.expected_tensors().front().first == "wte.weight");
  REQUIRE(m.missing_tensors().size() == m.expected_tensors().size());
  attn::PretrainedForwardResult r;
  attn::Status st = m.forward(1, 3, {1, 2, 3}, {}, r);
  REQUIRE(st.code == attn::StatusCode::kInvalidArgument);
  REQUIRE(st.message.find("missing tensor \"wte.weight\"") != std::string::npos);
  REQUIRE(m.set_tensor("h.0.attn.c_attn.weight", attn::Tensor::zeros({24, 8})).code == attn::StatusCode::kShapeMismatch);
  REQUIRE(m.set_tensor("h.9.attn.c_attn.weight", attn::Tensor::zeros({8, 24})).code == attn::StatusCode::kUnknownParameter);
  REQUIRE(m.set_tensor("transformer.h.0.attn.c_attn.weight", attn::Tensor::zeros({8, 24})).ok());  // the prefix is optional
  attn::PretrainedConfig huge = tiny(attn::PretrainedArch::kLlama);
  huge.vocab_size = 1000000;
  huge.hidden = 1000000;
  REQUIRE(attn::PretrainedModel::create(huge, m).code == attn::StatusCode::kTooLarge);
  attn::PretrainedConfig odd = tiny(attn::PretrainedArch::kLlama);
  odd.kv_heads = 3;
  REQUIRE(attn::PretrainedModel::create(odd, m).code == attn::StatusCode::kHeadsDoNotDivide);
}

TEST_CASE("pretrained forward: shapes, causal attention, hidden states, bad ids", "[pretrained]") {
  for (const auto arch : {attn::PretrainedArch::kGpt2, attn::PretrainedArch::kLlama}) {
    attn::PretrainedConfig c = tiny(arch);
    c.qkv_bias = arch == attn::PretrainedArch::kLlama;
    attn::PretrainedModel m;
    REQUIRE(attn::PretrainedModel::create(c, m).ok());
    fill(m, 5);
    REQUIRE(m.missing_tensors().empty());
    attn::PretrainedForwardOptions o;
    o.attention_layers = {1};
    o.hidden_states = true;
    attn::PretrainedForwardResult r;
    REQUIRE(m.forward(2, 4, {1, 2, 3, 4, 5, 6, 7, 8}, o, r).ok());
    REQUIRE(r.logits.shape == attn::Shape{2, 4, 11});
    REQUIRE(testutil::all_finite(r.logits.data));
    REQUIRE(r.attention[0].data.empty());
    REQUIRE(r.attention[1].shape == attn::Shape{2, 2, 4, 4});
    for (int i = 0; i < 4; ++i)
      for (int j = i + 1; j < 4; ++j) REQUIRE(r.attention[1].data[i * 4 + j] == 0.0f);
    REQUIRE(r.hidden_states.size() == 3);
    // A row of a batch is computed alone: the second sequence alone gives its rows of the logits.
    attn::PretrainedForwardResult one;
    REQUIRE(m.forward(1, 4, {5, 6, 7, 8}, {}, one).ok());
    testutil::require_close(one.logits.data, std::vector<float>(r.logits.data.begin() + 44, r.logits.data.end()), 1e-6,
                            "batch row alone");
    REQUIRE(m.forward(1, 2, {1, 11}, {}, r).code == attn::StatusCode::kInvalidArgument);
    REQUIRE(m.forward(1, 7, {1, 1, 1, 1, 1, 1, 1}, {}, r).code == attn::StatusCode::kTooLarge);
  }
}

TEST_CASE("pretrained decoding with KV caches equals the full forward; a refused step changes no cache", "[pretrained][cache]") {
  for (const auto arch : {attn::PretrainedArch::kGpt2, attn::PretrainedArch::kLlama}) {
    attn::PretrainedModel m;
    REQUIRE(attn::PretrainedModel::create(tiny(arch), m).ok());
    fill(m, 9);
    const std::vector<std::int32_t> ids = {3, 1, 4, 1, 5};
    attn::PretrainedForwardResult full;
    REQUIRE(m.forward(1, 5, ids, {}, full).ok());
    std::vector<attn::KvCache> caches;
    REQUIRE(m.create_caches(6, 1, caches).ok());
    std::vector<float> stepped;
    for (const auto& [t0, n] : {std::pair{0, 3}, std::pair{3, 1}, std::pair{4, 1}}) {
      attn::PretrainedForwardResult r;
      REQUIRE(m.forward(1, n, std::vector<std::int32_t>(ids.begin() + t0, ids.begin() + t0 + n), {}, r, &caches).ok());
      stepped.insert(stepped.end(), r.logits.data.begin(), r.logits.data.end());
    }
    testutil::require_close(stepped, full.logits.data, 1e-5, "cached logits");
    attn::PretrainedForwardResult r;
    REQUIRE(m.forward(1, 2, {1, 2}, {}, r, &caches).code == attn::StatusCode::kTooLarge);  // 5 + 2 > 6
    for (const attn::KvCache& k : caches) REQUIRE(k.length == 5);
    REQUIRE(m.create_caches(7, 1, caches).code == attn::StatusCode::kTooLarge);  // above max_positions 6
  }
}

TEST_CASE("pretrained logit lens: one top token per stream and position; the last is the model's own", "[pretrained]") {
  attn::PretrainedModel m;
  REQUIRE(attn::PretrainedModel::create(tiny(attn::PretrainedArch::kLlama), m).ok());
  fill(m, 13);
  attn::PretrainedForwardOptions o;
  o.logit_lens = true;
  attn::PretrainedForwardResult r;
  REQUIRE(m.forward(1, 4, {2, 7, 1, 8}, o, r).ok());
  REQUIRE(r.lens_ids.size() == 3 * 4);  // (layers + 1, B, T)
  for (int t = 0; t < 4; ++t) {
    const float* row = r.logits.data.data() + t * 11;
    int top = 0;
    for (int j = 1; j < 11; ++j)
      if (row[j] > row[top]) top = j;
    REQUIRE(r.lens_ids[2 * 4 + t] == top);
  }
  for (float p : r.lens_probs) REQUIRE((p > 0.0f && p <= 1.0f));
}
