// Every tiny fixture (tests/golden/pretrained: llama-like, GQA, sliding windows, shared K/V, and the
// hybrids whose convolution and DeltaNet layers keep no KV cache) decoded through float16 KV caches
// against float32 ones: the next-token probabilities of every step within kF16ProbTol, the greedy
// ids equal, every attention layer's cache half the bytes, and a refused step changing no cache.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "pretrained_fixture.h"

namespace fx = pretrained_fixture;
using testjson::Value;

namespace {

// max |Δp| over a step's next-token probabilities, float16 cache against float32: keys and values
// rounded by at most 2^-11 relative move the tiny models' (peaky, random-weight) probabilities by
// 4e-5 … 1.4e-3, and 2.8e-3 for ministral3-tiny (measured over every fixture, 8 steps); the bound
// keeps under 2× of that worst case.
constexpr double kF16ProbTol = 5e-3;
constexpr int kSteps = 8;

struct Prompt {
  int b = 0, t = 0;
  std::vector<std::int32_t> ids;
};

Prompt prompt_of(const Value& expected) {  // the generate case's prompt, else the first case's ids
  Prompt p;
  if (expected.has("generate")) {
    for (const Value& row : expected["generate"]["input_ids"].items()) {
      const std::vector<std::int32_t> r = row.numbers<std::int32_t>();
      p.t = static_cast<int>(r.size());
      p.ids.insert(p.ids.end(), r.begin(), r.end());
      ++p.b;
    }
    return p;
  }
  const Value& input = expected["cases"][0]["input_ids"];
  const std::vector<int> shape = input["shape"].numbers<int>();
  return {shape[0], shape[1], input["data"].numbers<std::int32_t>()};
}

// Softmax of each sequence's last logits row, in double (logits (B, T, V)).
std::vector<double> last_probs(const attn::Tensor& logits) {
  const int b = logits.shape[0], t = logits.shape[1], v = logits.shape[2];
  std::vector<double> p;
  for (int i = 0; i < b; ++i) {
    const float* row = logits.data.data() + (static_cast<std::size_t>(i) * t + (t - 1)) * v;
    double top = row[0], sum = 0;
    for (int j = 1; j < v; ++j) top = std::max(top, static_cast<double>(row[j]));
    for (int j = 0; j < v; ++j) sum += std::exp(row[j] - top);
    for (int j = 0; j < v; ++j) p.push_back(std::exp(row[j] - top) / sum);
  }
  return p;
}

std::vector<std::int32_t> argmax_rows(const std::vector<double>& p, int b) {
  const std::size_t v = p.size() / static_cast<std::size_t>(b);
  std::vector<std::int32_t> out;
  for (int i = 0; i < b; ++i) {
    const auto row = p.begin() + static_cast<std::ptrdiff_t>(i * v);
    out.push_back(
        static_cast<std::int32_t>(std::max_element(row, row + static_cast<std::ptrdiff_t>(v)) - row));
  }
  return out;
}

}  // namespace

TEST_CASE("pretrained families: float16 KV caches against float32 ones, step by step",
          "[pretrained][kv_f16]") {
  for (const std::string& f : fx::list_fixtures()) {
    INFO(f);
    attn::PretrainedModel model;
    fx::load_model(f, "model.safetensors", model);
    const Prompt p = prompt_of(testjson::parse_file(fx::path(f, "expected.json")));
    attn::DecodeCaches c32, c16;
    REQUIRE(model.create_caches(p.t + kSteps, p.b, c32).ok());
    REQUIRE(model.create_caches(p.t + kSteps, p.b, c16, attn::KvDtype::kF16).ok());
    REQUIRE(c16.kv_bytes() * 2 == c32.kv_bytes());
    for (std::size_t l = 0; l < c32.layers.size(); ++l)  // conv / DeltaNet / shared layers keep none
      REQUIRE(c16.layers[l].kv.bytes() * 2 == c32.layers[l].kv.bytes());
    attn::PretrainedForwardResult r32, r16;
    REQUIRE(model.forward(p.b, p.t, p.ids, {}, r32, &c32).ok());
    REQUIRE(model.forward(p.b, p.t, p.ids, {}, r16, &c16).ok());
    double worst = 0;
    for (int step = 0; step < kSteps; ++step) {
      const std::vector<double> p32 = last_probs(r32.logits), p16 = last_probs(r16.logits);
      for (std::size_t i = 0; i < p32.size(); ++i) worst = std::max(worst, std::fabs(p32[i] - p16[i]));
      const std::vector<std::int32_t> next = argmax_rows(p32, p.b);
      REQUIRE(argmax_rows(p16, p.b) == next);
      if (step + 1 == kSteps) break;
      REQUIRE(model.forward(p.b, 1, next, {}, r32, &c32).ok());
      REQUIRE(model.forward(p.b, 1, next, {}, r16, &c16).ok());
    }
    INFO("max |dp| " << worst);
    CHECK(worst <= kF16ProbTol);
    // A step past the caches' room is refused and changes nothing: every cache keeps its length.
    attn::PretrainedForwardResult refused;
    REQUIRE(model.forward(p.b, 2, std::vector<std::int32_t>(2 * p.b, 1), {}, refused, &c16).code ==
            attn::StatusCode::kTooLarge);
    REQUIRE(c16.length == p.t + kSteps - 1);
    for (const attn::LayerCache& c : c16.layers)
      if (c.kv.made()) REQUIRE(c.kv.length == p.t + kSteps - 1);
  }
}
