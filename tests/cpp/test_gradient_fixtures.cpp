// PretrainedModel::metric_gradients and TinyTransformer::metric_gradients against PyTorch float64 autograd
// on every fixture family: the
// committed tests/golden/pretrained/<family>/expected_gradients.json (written by
// tests/golden/make_gradient_fixtures.py from the same safetensors files, the bf16 case on the
// bfloat16 weights widened as the model widens them). Every family folder is read from the directory;
// a folder without gradient fixtures fails. The TinyTransformer cases:
// tests/golden/gradients/tiny_transformer.json (the models of tests/golden/interp/tiny_transformer.json,
// weights copied).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "json_value.h"
#include "model/metric_gradients.h"
#include "model/pretrained.h"
#include "model/tiny_transformer.h"
#include "pretrained_fixture.h"

namespace {

// The model computes in float32 (forward and backward through L blocks: norms, softmax, the MLP),
// the fixtures in float64: float32's rounding (~6e-8) grows with the depth and the sums over E and T
// to ~1e-5 of a tensor's largest entry on these two-layer models; the bound leaves a 100× margin
// while still catching any wrong term (a missing path changes entries by O(max)).
constexpr double kGradScaleTol = 1e-3;  // × the tensor's largest |want|
constexpr double kGradRelTol = 1e-3;    // × |want| of the element
constexpr double kValueTol = 1e-4;      // × max(1, |value|)

attn::MetricKind kind_of(const std::string& kind) {
  if (kind == "logit-diff") return attn::MetricKind::kLogitDiff;
  if (kind == "probability") return attn::MetricKind::kProbability;
  REQUIRE(kind == "log-probability");
  return attn::MetricKind::kLogProbability;
}

// One gradient tensor (got: (1, T, ...) of the batch of one) against the fixture's (T, ...) or (H, T, T).
void require_grad_close(const attn::Tensor& got, const testjson::Value& want, const std::string& what) {
  const std::vector<double> w = want["data"].numbers<double>();
  INFO(what);
  REQUIRE(got.data.size() == w.size());
  if (w.empty()) return;  // a layer without heads (LFM2's conv): no z, in both
  double scale = 0;
  for (double v : w) scale = std::max(scale, std::fabs(v));
  double worst = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const double err =
        std::fabs(got.data[i] - w[i]) / (kGradScaleTol * scale + kGradRelTol * std::fabs(w[i]) + 1e-12);
    if (!(err <= worst)) worst = err, at = i;
  }
  INFO("worst error / tolerance " << worst << " at " << at << " (got " << got.data[at] << ", want " << w[at]
                                  << ", scale " << scale << ")");
  REQUIRE(worst <= 1.0);
}

void require_list_close(const std::vector<attn::Tensor>& got, const testjson::Value& want,
                        const std::string& what) {
  REQUIRE(got.size() == want.items().size());
  for (std::size_t l = 0; l < got.size(); ++l)
    require_grad_close(got[l], want[l], what + "[" + std::to_string(l) + "]");
}

attn::GradientOptions options_of(const testjson::Value& c) {
  attn::GradientOptions options;
  const testjson::Value& m = c["metric"];
  options.metric.kind = kind_of(m["kind"].str());
  options.metric.position = m["position"].integer();
  options.metric.token = m["token"].integer();
  options.metric.against = m["against"].integer();
  options.attention = c.has("grad_attention");
  return options;
}

// The result of one case's run against its fixture.
void require_case_close(const attn::GradientResult& result, const testjson::Value& c, bool attention) {
  REQUIRE(result.values.size() == 1);
  const double value = c["value"].num();
  CHECK(std::fabs(result.values[0] - value) <= kValueTol * std::max(1.0, std::fabs(value)));
  require_list_close(result.grad_hidden, c["grad_hidden"], "grad_hidden");
  require_list_close(result.grad_z, c["grad_z"], "grad_z");
  require_list_close(result.grad_mlp, c["grad_mlp"], "grad_mlp");
  if (attention) require_list_close(result.grad_attention, c["grad_attention"], "grad_attention");
}

void check_case(attn::PretrainedModel& model, const testjson::Value& c, const std::string& label) {
  INFO(label);
  const std::vector<std::int32_t> ids = c["ids"].numbers<std::int32_t>();
  const attn::GradientOptions options = options_of(c);
  attn::GradientResult result;
  const attn::Status st = model.metric_gradients(1, static_cast<int>(ids.size()), ids, options, result);
  INFO(st.message);
  REQUIRE(st.ok());
  require_case_close(result, c, options.attention);
}

// A TinyTransformer from a case's config (make_interp_fixtures.py's names) and weights (state-dict names).
void load_tiny(const testjson::Value& c, attn::TinyTransformer& model) {
  const testjson::Value& j = c["config"];
  attn::TinyConfig config;
  config.vocab_size = j["vocabSize"].integer();
  config.max_length = j["maxLength"].integer();
  config.d_model = j["dModel"].integer();
  config.num_heads = j["numHeads"].integer();
  config.num_layers = j["numLayers"].integer();
  config.mlp = j["mlp"].flag();
  config.mlp_hidden = j["mlpHidden"].integer();
  const std::string pos = j["positional"].str(), norm = j["norm"].str();
  config.positional = pos == "learned"      ? attn::PositionalKind::kLearned
                      : pos == "sinusoidal" ? attn::PositionalKind::kSinusoidal
                                            : attn::PositionalKind::kNone;
  config.norm = norm == "pre"    ? attn::NormKind::kPre
                : norm == "post" ? attn::NormKind::kPost
                                 : attn::NormKind::kNone;
  config.causal = j["causal"].flag();
  REQUIRE(attn::TinyTransformer::create(config, model).ok());
  for (const auto& [name, t] : c["weights"].object) {
    const attn::Status st =
        model.set_parameter(name, attn::Tensor(t["shape"].numbers<int>(), t["data"].numbers<float>()));
    INFO(name << ": " << st.message);
    REQUIRE(st.ok());
  }
}

}  // namespace

TEST_CASE("metric gradients match float64 autograd on every pretrained family", "[gradients][pretrained]") {
  const std::vector<std::string> fixtures = pretrained_fixture::list_fixtures();
  REQUIRE(!fixtures.empty());
  for (const std::string& fixture : fixtures) {
    const std::string file = pretrained_fixture::path(fixture, "expected_gradients.json");
    INFO(fixture << ": " << file << " (tests/golden/make_gradient_fixtures.py writes it)");
    if (fixture == "gemma4-tiny") {  // its backward is not written yet: refused, naming what is missing
      attn::PretrainedModel model;
      pretrained_fixture::load_model(fixture, "model.safetensors", model);
      attn::GradientResult r;
      const attn::Status st = model.metric_gradients(1, 2, {1, 2}, attn::GradientOptions{}, r);
      REQUIRE(!st.ok());
      REQUIRE(st.message.find("per-layer inputs, shared keys and values") != std::string::npos);
      continue;
    }
    // a hybrid without its own file: Qwen3.5's vision-language copy, whose text model is qwen3_5-tiny's
    // (tests/golden/make_qwen3_5_gradients.py writes that one's)
    if (!std::ifstream(file).good()) {
      const std::vector<int> mixers =
          pretrained_fixture::core_config(
              testjson::parse_file(pretrained_fixture::path(fixture, "core-config.json")))
              .layer_mixer;
      REQUIRE(std::find(mixers.begin(), mixers.end(), 2) != mixers.end());
      continue;
    }
    const testjson::Value doc = testjson::parse_file(file);
    std::map<std::string, std::unique_ptr<attn::PretrainedModel>> models;  // one per weights file
    const std::vector<testjson::Value>& cases = doc["cases"].items();
    REQUIRE(!cases.empty());
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const std::string weights = cases[i]["weights"].str();
      auto& model = models[weights];
      if (!model) {
        model = std::make_unique<attn::PretrainedModel>();
        pretrained_fixture::load_model(fixture, weights, *model);
      }
      check_case(*model, cases[i],
                 fixture + " case " + std::to_string(i) + " (" + weights + ", " +
                     cases[i]["metric"]["kind"].str() + ")");
    }
  }
}

TEST_CASE("metric gradients match float64 autograd on TinyTransformer", "[gradients][tiny]") {
  const testjson::Value doc =
      testjson::parse_file(std::string(ATTN_PRETRAINED_DIR) + "/../gradients/tiny_transformer.json");
  const std::vector<testjson::Value>& cases = doc["cases"].items();
  REQUIRE(!cases.empty());
  for (const testjson::Value& c : cases) {
    INFO(c["model"].str() << " (" << c["metric"]["kind"].str() << ")");
    attn::TinyTransformer model;
    load_tiny(c, model);
    const std::vector<std::int32_t> ids = c["ids"].numbers<std::int32_t>();
    const attn::GradientOptions options = options_of(c);
    attn::GradientResult result;
    const attn::Status st = model.metric_gradients({1, static_cast<int>(ids.size()), ids}, options, result);
    INFO(st.message);
    REQUIRE(st.ok());
    require_case_close(result, c, options.attention);
  }
}
