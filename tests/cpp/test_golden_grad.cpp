// Gradients and training against PyTorch autograd fixtures (tests/golden/make_grad_fixtures.py):
// SDPA backward for every mask kind, dropout (torch given our mask as a fixed multiplier), and
// TinyTransformer logits, loss, every gradient and the parameters after 3 clipped AdamW steps.
#include <catch2/catch.hpp>
#include <cmath>

#include "core/attention_backward.h"
#include "fixture.h"
#include "golden_close.h"
#include "golden_mha.h"
#include "model/tiny_transformer.h"
#include "test_helpers.h"
#include "train/trainer.h"

namespace {

// The bound: 1e-5 absolute + 1e-4 relative, for values, gradients and trained parameters.
constexpr double kAbsTol = 1e-5;
constexpr double kRelTol = 1e-4;
// Parameters whose gradient is (or is rounding noise around) zero: AdamW turns noise into steps of up
// to lr, so they are held to a few steps of lr instead.
constexpr double kNoiseGrad = 1e-6;
constexpr double kNoiseSteps = 5.0;

using golden::require_fixture_close;

std::vector<std::string> family(const std::string& prefix) {
  std::vector<std::string> names;
  for (const std::string& n : golden::list_fixtures("index_grad.txt"))
    if (n.rfind(prefix, 0) == 0) names.push_back(n);
  REQUIRE_FALSE(names.empty());
  return names;
}

void run_sdpa(const Fixture& f) {
  attn::SdpaOptions o;
  attn::BoolTensor mask;
  if (f.has("mask")) {
    mask = f.as_bool("mask");
    o.mask = &mask;
  }
  if (f.has("additive_mask")) o.additive_mask = &f.at("additive_mask");
  o.causal = f.flag("causal");
  if (f.has("scale")) o.scale = f.scalar("scale", 1.0f);
  o.dropout.p = f.scalar("dropout_p", 0.0f);
  o.dropout.seed = static_cast<std::uint64_t>(f.scalar("dropout_seed", 0.0f));
  attn::SdpaResult fwd;
  attn::Trace trace;
  REQUIRE(attn::scaled_dot_product_attention(f.at("q"), f.at("k"), f.at("v"), o, fwd, &trace).ok());
  require_fixture_close(fwd.output.data, f.at("output"), "output");
  if (o.dropout.p > 0) {  // the mask torch was given is the one our forward drew
    const auto& w = trace.find("weights")->tensor.data;
    const auto& dropped = trace.find("dropped")->tensor.data;
    const auto& m = f.at("dropout_multiplier").data;
    for (std::size_t e = 0; e < w.size(); ++e)
      if (w[e] > 0) REQUIRE(dropped[e] == w[e] * m[e]);
  }
  attn::SdpaGrads g;
  REQUIRE(
      attn::scaled_dot_product_attention_backward(f.at("q"), f.at("k"), f.at("v"), f.at("grad_output"), o, g)
          .ok());
  require_fixture_close(g.q.data, f.at("grad_q"), "grad q");
  require_fixture_close(g.k.data, f.at("grad_k"), "grad k");
  require_fixture_close(g.v.data, f.at("grad_v"), "grad v");
}

// nn.MultiheadAttention backward: key is absent for self-attention, value when value = key.
void run_mha(const Fixture& f) {
  INFO(f.description);
  const attn::MultiHeadAttention mha = golden::make_mha(f);
  golden::MhaInputs in(f);
  if (f.has("positional")) in.options.positional = &f.at("positional");
  const attn::Tensor* key = f.has("key") ? &f.at("key") : nullptr;
  const attn::Tensor* value = f.has("value") ? &f.at("value") : nullptr;
  attn::MhaResult r;
  attn::MhaSaved saved;
  attn::Status st = mha.forward_saving(f.at("query"), key, value, in.options, r, saved);
  INFO(golden::describe(st));
  REQUIRE(st.ok());
  require_fixture_close(r.output.data, f.at("output"), "output");
  attn::MhaGrads g;
  st = mha.backward(saved, f.at("grad_output"), g);
  INFO(golden::describe(st));
  REQUIRE(st.ok());
  require_fixture_close(g.query.data, f.at("grad_query"), "grad query");
  REQUIRE(g.key.empty() == !f.has("grad_key"));
  REQUIRE(g.value.empty() == !f.has("grad_value"));
  if (f.has("grad_key")) require_fixture_close(g.key.data, f.at("grad_key"), "grad key");
  if (f.has("grad_value")) require_fixture_close(g.value.data, f.at("grad_value"), "grad value");
  REQUIRE(g.params.size() == mha.parameter_names().size());
  for (const auto& [name, t] : g.params) {
    INFO("grad of " << name);
    const attn::Tensor& want = f.at("grad." + name);
    for (std::size_t e = 0; e < want.data.size(); ++e) {
      // The key third of in_proj_bias has zero gradient by construction: torch stores rounding noise.
      if (std::fabs(want.data[e]) < kNoiseGrad) {
        REQUIRE(std::fabs(t.data[e]) < 10 * kNoiseGrad);
        continue;
      }
      REQUIRE(std::fabs(t.data[e] - want.data[e]) <= kAbsTol + kRelTol * std::fabs(want.data[e]));
    }
  }
}

attn::IdBatch ids_of(const attn::Tensor& t) {
  attn::IdBatch b{t.dim(0), t.dim(1), {}};
  for (float v : t.data) b.data.push_back(static_cast<std::int32_t>(v));
  return b;
}

attn::TinyConfig tiny_config(const Fixture& f) {
  attn::TinyConfig c;
  c.vocab_size = static_cast<int>(f.scalar("vocab_size", 0));
  c.max_length = static_cast<int>(f.scalar("max_length", 0));
  c.d_model = static_cast<int>(f.scalar("d_model", 0));
  c.num_heads = static_cast<int>(f.scalar("num_heads", 0));
  c.num_layers = static_cast<int>(f.scalar("num_layers", 0));
  c.mlp = f.flag("mlp");
  c.mlp_hidden = static_cast<int>(f.scalar("mlp_hidden", 0));
  c.positional = static_cast<attn::PositionalKind>(static_cast<int>(f.scalar("positional", 0)));
  c.norm = static_cast<attn::NormKind>(static_cast<int>(f.scalar("norm", 0)));
  c.causal = f.flag("causal");
  return c;
}

void run_tiny(const Fixture& f) {
  attn::TinyTransformer m;
  REQUIRE(attn::TinyTransformer::create(tiny_config(f), m).ok());
  std::vector<attn::Tensor> params;
  for (const std::string& name : m.parameter_names()) params.push_back(f.at("param." + name));
  REQUIRE(m.set_parameters(params).ok());
  const attn::IdBatch ids = ids_of(f.at("ids")), targets = ids_of(f.at("targets"));
  attn::TinyForwardResult r;
  REQUIRE(m.forward(ids, {}, r).ok());
  require_fixture_close(r.logits.data, f.at("logits"), "logits");
  float loss = 0;
  std::vector<attn::Tensor> grads;
  REQUIRE(m.gradients(ids, targets, loss, grads).ok());
  require_fixture_close({loss}, f.at("loss"), "loss");
  std::vector<bool> noise;  // per parameter element: a gradient at rounding-noise level in some step
  for (std::size_t k = 0; k < grads.size(); ++k) {
    const std::string& name = m.parameter_names()[k];
    INFO(name);
    const attn::Tensor& want = f.at("grad." + name);
    for (std::size_t e = 0; e < want.data.size(); ++e) {
      const bool tiny = std::fabs(want.data[e]) < kNoiseGrad;
      noise.push_back(tiny);
      if (!tiny)
        REQUIRE(std::fabs(grads[k].data[e] - want.data[e]) <= kAbsTol + kRelTol * std::fabs(want.data[e]));
    }
  }
  attn::AdamWOptions o;
  o.lr = f.scalar("lr", 0);
  o.beta1 = f.scalar("beta1", 0);
  o.beta2 = f.scalar("beta2", 0);
  o.eps = f.scalar("eps", 0);
  o.weight_decay = f.scalar("weight_decay", 0);
  o.clip_grad_norm = f.scalar("clip", 0);
  attn::Trainer trainer;
  REQUIRE(attn::Trainer::create(&m, o, trainer).ok());
  for (int s = 0; s < 3; ++s) {
    attn::TrainStepResult step;
    REQUIRE(trainer.step(ids, targets, step).ok());
    require_fixture_close({step.loss}, attn::Tensor({}, {f.at("step_loss").data[s]}), "step loss");
    require_fixture_close({step.grad_norm}, attn::Tensor({}, {f.at("step_grad_norm").data[s]}),
                          "step grad norm");
  }
  std::size_t flat = 0;
  for (std::size_t k = 0; k < grads.size(); ++k) {
    const std::string& name = m.parameter_names()[k];
    INFO("after 3 steps: " << name);
    const attn::Tensor& want = f.at("after." + name);
    for (std::size_t e = 0; e < want.data.size(); ++e, ++flat) {
      const double err = std::fabs(m.parameters()[k].data[e] - want.data[e]);
      REQUIRE(err <= (noise[flat] ? kNoiseSteps * o.lr : kAbsTol + kRelTol * std::fabs(want.data[e])));
    }
  }
}

}  // namespace

TEST_CASE("SDPA backward matches PyTorch autograd", "[golden-grad][sdpa-backward]") {
  for (const std::string& name : family("sdpa_bwd_")) {
    DYNAMIC_SECTION(name) {
      run_sdpa(load_fixture(name));
    }
  }
}

TEST_CASE("MultiHeadAttention backward matches nn.MultiheadAttention autograd",
          "[golden-grad][mha-backward]") {
  for (const std::string& name : family("mha_bwd_")) {
    DYNAMIC_SECTION(name) {
      run_mha(load_fixture(name));
    }
  }
}

TEST_CASE("TinyTransformer logits, loss, gradients and 3 AdamW steps match PyTorch", "[golden-grad][tiny]") {
  for (const std::string& name : family("tiny_")) {
    DYNAMIC_SECTION(name) {
      run_tiny(load_fixture(name));
    }
  }
}
