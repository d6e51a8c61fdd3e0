// TinyTransformer: logits and loss against a double-precision reference (reference_tiny.h), every
// parameter's gradient against central finite differences of it, for pre / post / none × mlp on/off ×
// learned / sinusoidal / no positions; input errors; initialisation.
#include <catch2/catch.hpp>
#include <cmath>

#include "core/positional.h"
#include "core/rng.h"
#include "finite_diff.h"
#include "model/tiny_transformer.h"
#include "reference_tiny.h"
#include "test_helpers.h"

namespace {

constexpr double kLogitTol = 2e-5;  // float32 passes through a few layers, values ~1
constexpr double kGradTol = 3e-5;   // the float32 backward against O(h²)-exact differences
constexpr double kGradRelTol = 1e-3;

attn::TinyConfig small_config(attn::NormKind norm, bool mlp, attn::PositionalKind pos, int layers,
                              bool causal) {
  attn::TinyConfig c;
  c.vocab_size = 7;
  c.max_length = 6;
  c.d_model = 6;
  c.num_heads = 2;
  c.num_layers = layers;
  c.mlp = mlp;
  c.mlp_hidden = 5;
  c.positional = pos;
  c.norm = norm;
  c.causal = causal;
  c.seed = 3;
  return c;
}

// Random parameters large enough that no gradient is negligible; LayerNorm weights near 1.
void randomise(attn::TinyTransformer& m, std::uint64_t seed) {
  std::vector<attn::Tensor> values = m.parameters();
  for (std::size_t k = 0; k < values.size(); ++k) {
    const bool ln_weight = m.parameter_names()[k].find("ln") != std::string::npos &&
                           m.parameter_names()[k].find("weight") != std::string::npos;
    for (std::size_t e = 0; e < values[k].data.size(); ++e) {
      const float r = attn::approx_normal(seed + k, e);
      values[k].data[e] = ln_weight ? 1.0f + 0.1f * r : 0.4f * r;
    }
  }
  REQUIRE(m.set_parameters(values).ok());
}

struct Batch {
  attn::IdBatch ids, targets;
};

Batch make_batch(int b, int t, int v, std::uint64_t seed) {
  Batch x{{b, t, {}}, {b, t, {}}};
  for (int i = 0; i < b * t; ++i) {
    x.ids.data.push_back(static_cast<int>(attn::uniform01(seed, i) * v));
    x.targets.data.push_back(i % 4 == 1 ? -100 : static_cast<int>(attn::uniform01(seed + 1, i) * v));
  }
  return x;
}

ref_tiny::Params as_double(const attn::TinyTransformer& m) {
  ref_tiny::Params p;
  for (std::size_t k = 0; k < m.parameters().size(); ++k)
    p[m.parameter_names()[k]] = fd::to_double(m.parameters()[k].data);
  return p;
}

void check_model(const attn::TinyConfig& c) {
  attn::TinyTransformer m;
  REQUIRE(attn::TinyTransformer::create(c, m).ok());
  randomise(m, 40 + c.num_layers);
  const Batch x = make_batch(2, 5, c.vocab_size, 17);
  attn::Tensor sinusoid;
  if (c.positional == attn::PositionalKind::kSinusoidal)
    REQUIRE(attn::sinusoidal_encoding(c.max_length, c.d_model, 10000.0, sinusoid).ok());
  ref_tiny::Params p = as_double(m);
  const std::vector<int> ids(x.ids.data.begin(), x.ids.data.end()),
      targets(x.targets.data.begin(), x.targets.data.end());
  const auto loss = [&] { return ref_tiny::loss(c, p, sinusoid, 2, 5, ids, targets); };
  // Logits and loss.
  attn::TinyForwardResult r;
  REQUIRE(m.forward(x.ids, {}, r).ok());
  REQUIRE(r.logits.shape == attn::Shape{2, 5, c.vocab_size});
  const ref_tiny::Net net{c, p, 2, 5, c.d_model};
  testutil::require_close(r.logits.data, net.logits(ids, sinusoid), kLogitTol, "logits");
  float got_loss = 0, grad_loss = 0;
  REQUIRE(m.loss(x.ids, x.targets, got_loss).ok());
  REQUIRE(std::fabs(got_loss - loss()) <= kLogitTol);
  // Every parameter's gradient.
  std::vector<attn::Tensor> grads;
  const attn::Status st = m.gradients(x.ids, x.targets, grad_loss, grads);
  INFO(st.message);
  REQUIRE(st.ok());
  REQUIRE(grad_loss == got_loss);
  REQUIRE(grads.size() == m.parameter_names().size());
  for (std::size_t k = 0; k < grads.size(); ++k) {
    const std::string& name = m.parameter_names()[k];
    const std::vector<double> want = fd::gradient(p[name], loss);
    double worst = 0;
    for (std::size_t e = 0; e < want.size(); ++e) {
      worst = std::max(worst,
                       std::fabs(grads[k].data[e] - want[e]) / (kGradTol + kGradRelTol * std::fabs(want[e])));
    }
    INFO("gradient of " << name << ": worst error / tolerance " << worst);
    REQUIRE(worst <= 1.0);
  }
}

}  // namespace

TEST_CASE("TinyTransformer gradients: pre-LN, MLP, learned positions, 2 layers", "[tiny]") {
  check_model(small_config(attn::NormKind::kPre, true, attn::PositionalKind::kLearned, 2, true));
}
TEST_CASE("TinyTransformer gradients: post-LN, MLP, sinusoidal", "[tiny]") {
  check_model(small_config(attn::NormKind::kPost, true, attn::PositionalKind::kSinusoidal, 1, true));
}
TEST_CASE("TinyTransformer gradients: no LayerNorm, MLP, no positions", "[tiny]") {
  check_model(small_config(attn::NormKind::kNone, true, attn::PositionalKind::kNone, 1, true));
}
TEST_CASE("TinyTransformer gradients: attention-only, pre / post / none", "[tiny]") {
  check_model(small_config(attn::NormKind::kPre, false, attn::PositionalKind::kLearned, 2, true));
  check_model(small_config(attn::NormKind::kPost, false, attn::PositionalKind::kNone, 1, true));
  check_model(small_config(attn::NormKind::kNone, false, attn::PositionalKind::kSinusoidal, 1, true));
}
TEST_CASE("TinyTransformer gradients: not causal", "[tiny]") {
  check_model(small_config(attn::NormKind::kPre, true, attn::PositionalKind::kLearned, 1, false));
}

TEST_CASE("TinyTransformer gradients: RoPE, ALiBi, grouped-query heads, a sliding window",
          "[tiny][positions]") {
  attn::TinyConfig rope = small_config(attn::NormKind::kPre, true, attn::PositionalKind::kRope, 2, true);
  rope.d_model = 8;       // an even head size for the rotation
  rope.num_kv_heads = 1;  // multi-query
  check_model(rope);
  attn::TinyConfig alibi = small_config(attn::NormKind::kPre, false, attn::PositionalKind::kAlibi, 1, true);
  alibi.window = 3;
  check_model(alibi);
  attn::TinyConfig bidir = small_config(attn::NormKind::kPost, true, attn::PositionalKind::kAlibi, 1, false);
  bidir.window = 2;
  check_model(bidir);
}

TEST_CASE("TinyTransformer: state-dict names, parameter count, seeded initialisation", "[tiny]") {
  attn::TinyTransformer a, b;
  const attn::TinyConfig c =
      small_config(attn::NormKind::kPre, true, attn::PositionalKind::kLearned, 2, true);
  REQUIRE(attn::TinyTransformer::create(c, a).ok());
  REQUIRE(attn::TinyTransformer::create(c, b).ok());
  const auto& names = a.parameter_names();
  REQUIRE(names.front() == "tok_emb.weight");
  REQUIRE(names[1] == "pos_emb.weight");
  REQUIRE(names[2] == "blocks.0.ln1.weight");
  REQUIRE(names.back() == "head.bias");
  REQUIRE(std::find(names.begin(), names.end(), "blocks.1.mlp.fc2.weight") != names.end());
  REQUIRE(std::find(names.begin(), names.end(), "ln_f.bias") != names.end());
  std::int64_t count = 0;
  for (const auto& t : a.parameters()) count += t.numel();
  REQUIRE(a.parameter_count() == count);
  for (std::size_t k = 0; k < names.size(); ++k) REQUIRE(a.parameters()[k].data == b.parameters()[k].data);
  // GPT-2's scales: embeddings ~0.02, residual projections ~0.02/√(2·layers), LayerNorm weight 1.
  const auto rms = [&](const std::string& n) {
    const auto& v = a.parameters()[std::find(names.begin(), names.end(), n) - names.begin()].data;
    double s = 0;
    for (float x : v) s += double(x) * x;
    return std::sqrt(s / v.size());
  };
  REQUIRE(rms("tok_emb.weight") == Approx(0.02).epsilon(0.25));
  REQUIRE(rms("blocks.0.attn.out_proj.weight") == Approx(0.01).epsilon(0.35));
  REQUIRE(rms("blocks.0.ln1.weight") == 1.0);
  REQUIRE(rms("head.bias") == 0.0);
}

TEST_CASE("TinyTransformer: bad ids and targets are clear errors", "[tiny][errors]") {
  attn::TinyTransformer m;
  REQUIRE(attn::TinyTransformer::create(
              small_config(attn::NormKind::kPre, true, attn::PositionalKind::kLearned, 1, true), m)
              .ok());
  Batch x = make_batch(2, 5, 7, 1);
  float loss = 0;
  x.ids.data[3] = 7;
  attn::Status st = m.loss(x.ids, x.targets, loss);
  REQUIRE(st.code == attn::StatusCode::kInvalidArgument);
  REQUIRE(st.message.find("ids[0][3] = 7") != std::string::npos);
  x = make_batch(2, 7, 7, 1);  // T = 7 > maxLength 6
  st = m.loss(x.ids, x.targets, loss);
  REQUIRE(st.message.find("maxLength") != std::string::npos);
  x = make_batch(2, 5, 7, 1);
  x.targets.t = 4;
  x.targets.data.resize(8);
  REQUIRE(m.loss(x.ids, x.targets, loss).code == attn::StatusCode::kShapeMismatch);
  x = make_batch(2, 5, 7, 1);
  x.targets.data.assign(10, -100);
  st = m.loss(x.ids, x.targets, loss);
  REQUIRE(st.message.find("-100") != std::string::npos);
  x.ids.b = 0;
  x.ids.data.clear();
  REQUIRE(m.loss(x.ids, x.targets, loss).code == attn::StatusCode::kEmptyInput);
  attn::TinyConfig bad = small_config(attn::NormKind::kPre, true, attn::PositionalKind::kLearned, 1, true);
  bad.num_heads = 4;  // does not divide 6
  REQUIRE(attn::TinyTransformer::create(bad, m).code == attn::StatusCode::kHeadsDoNotDivide);
}

TEST_CASE("TinyTransformer forward with a mask: every layer, on top of causal, against the reference",
          "[tiny]") {
  for (const bool causal : {true, false}) {
    attn::TinyConfig c{11,     8, 8, 2, 2, true, 0, attn::PositionalKind::kLearned, attn::NormKind::kPre,
                       causal, 5};
    attn::TinyTransformer m;
    REQUIRE(attn::TinyTransformer::create(c, m).ok());
    randomise(m, 71);
    const int t = 5;
    const Batch x = make_batch(1, t, c.vocab_size, 23);
    // Take away a few keys (never the diagonal, so no row is fully masked).
    attn::BoolTensor mask;
    mask.shape = {t, t};
    mask.data.assign(t * t, 1);
    for (const auto& ij : {std::pair{2, 0}, std::pair{4, 1}, std::pair{4, 3}, std::pair{1, 3}})
      mask.data[ij.first * t + ij.second] = 0;
    attn::TinyForwardOptions options;
    options.attention_layers = {0, 1};
    options.mask = &mask;
    attn::TinyForwardResult r;
    REQUIRE(m.forward(x.ids, options, r).ok());
    const ref_tiny::Params p = as_double(m);
    ref_tiny::Net net{m.config(), p, 1, t, c.d_model};
    net.allowed = &mask.data;
    const std::vector<int> ids(x.ids.data.begin(), x.ids.data.end());
    testutil::require_close(r.logits.data, net.logits(ids, attn::Tensor()), kLogitTol, "masked logits");
    for (int l = 0; l < 2; ++l)
      for (int h = 0; h < 2; ++h)
        for (int i = 0; i < t; ++i)
          for (int j = 0; j < t; ++j)
            if (!mask.data[i * t + j] || (causal && j > i))
              REQUIRE(r.attention[l].data[(h * t + i) * t + j] == 0.0f);
    // The unmasked forward differs (the mask did something) and a mask of the wrong shape is refused.
    attn::TinyForwardResult plain;
    REQUIRE(m.forward(x.ids, {}, plain).ok());
    REQUIRE(plain.logits.data != r.logits.data);
    attn::BoolTensor wrong;
    wrong.shape = {t, t + 1};
    wrong.data.assign(t * (t + 1), 1);
    options.mask = &wrong;
    const attn::Status st = m.forward(x.ids, options, r);
    REQUIRE(st.code == attn::StatusCode::kInvalidMask);
  }
}
