// Every pretrained family natively: each folder of tests/golden/pretrained (listed from the directory)
// is built from its committed core config (core-config.json), loaded by role (tensor-roles.json: the
// file names the family registry gives each role) from its safetensors files and run against the
// float64 PyTorch expectations of make_pretrained_fixtures.py — logits, the listed layers' attention,
// hidden states (Hugging Face's L + 1), F16/BF16 weights and greedy generation with the KV caches — so
// every family runs in the native, ASan/UBSan, wasm and threaded suites, not from JS only. The bounds
// are tests/js/pretrained.test.mjs's.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "kernels/parallel.h"
#include "model/pretrained.h"
#include "pretrained_fixture.h"

namespace {

namespace fx = pretrained_fixture;
using testjson::Value;

// The pretrained fixtures' bounds (the same names and values as tests/js/pretrained.test.mjs).
constexpr double kLogitAbs = 1e-4, kLogitRel = 1e-3;  // logits, hidden states
constexpr double kAttnAbs = 1e-5, kAttnRel = 1e-4;    // attention weights

// got within abs + rel·|want| of want ({ shape, data }) everywhere, the shapes equal; reports the
// worst element relative to its bound.
void require_close(const attn::Tensor& got, const Value& want, double abs, double rel,
                   const std::string& what) {
  INFO(what);
  REQUIRE(got.shape == want["shape"].numbers<int>());
  const std::vector<double> w = want["data"].numbers<double>();
  REQUIRE(got.data.size() == w.size());
  double worst = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const double err = std::fabs(got.data[i] - w[i]) / (abs + rel * std::fabs(w[i]));
    if (!(err <= worst)) worst = err, at = i;
  }
  INFO("worst error / bound " << worst << " at " << at << ": got " << got.data[at] << ", want " << w[at]);
  REQUIRE(worst <= 1.0);
}

struct Ids {
  int b = 0, t = 0;
  std::vector<std::int32_t> data;
};

Ids ids_of(const Value& input) {  // { shape: [B, T], data }
  const std::vector<int> shape = input["shape"].numbers<int>();
  REQUIRE(shape.size() == 2);
  return {shape[0], shape[1], input["data"].numbers<std::int32_t>()};
}

// A forward with every output the expectations hold: the listed layers' attention and hidden states.
attn::PretrainedForwardResult run(attn::PretrainedModel& model, const Ids& ids,
                                  const std::vector<int>& layers, bool hidden_states) {
  attn::PretrainedForwardOptions o;
  o.attention_layers = layers;
  o.hidden_states = hidden_states;
  attn::PretrainedForwardResult r;
  const attn::Status st = model.forward(ids.b, ids.t, ids.data, o, r);
  INFO(st.message);
  REQUIRE(st.ok());
  return r;
}

// Every case of one expected*.json against a model loaded from the matching weights.
void check_cases(attn::PretrainedModel& model, const Value& expected, const std::string& where) {
  const std::vector<int> layers = expected["attention_layers"].numbers<int>();
  for (const Value& c : expected["cases"].items()) {
    const std::string what = where + " " + c["name"].str();
    const bool hidden = c.has("hidden_states");
    const attn::PretrainedForwardResult r = run(model, ids_of(c["input_ids"]), layers, hidden);
    require_close(r.logits, c["logits"], kLogitAbs, kLogitRel, what + " logits");
    if (c.has("attention")) {
      const std::vector<Value>& attention = c["attention"].items();
      REQUIRE(attention.size() == layers.size());
      for (std::size_t i = 0; i < layers.size(); ++i)
        require_close(r.attention.at(layers[i]), attention[i], kAttnAbs, kAttnRel,
                      what + " attention " + std::to_string(layers[i]));
    }
    if (hidden) {
      const std::vector<Value>& states = c["hidden_states"].items();
      REQUIRE(states.size() == static_cast<std::size_t>(model.config().layers) + 1);
      REQUIRE(r.hidden_states.size() == states.size());
      for (std::size_t i = 0; i < states.size(); ++i)
        require_close(r.hidden_states[i], states[i], kLogitAbs, kLogitRel,
                      what + " hidden " + std::to_string(i));
    }
  }
}

// Each sequence's next token: the first largest logit of its last position (logits (B, T, V)).
std::vector<std::int32_t> last_argmax(const attn::Tensor& logits) {
  const int b = logits.shape[0], t = logits.shape[1], v = logits.shape[2];
  std::vector<std::int32_t> out;
  for (int i = 0; i < b; ++i) {
    const float* row = logits.data.data() + (static_cast<std::size_t>(i) * t + (t - 1)) * v;
    int best = 0;
    for (int j = 1; j < v; ++j)
      if (row[j] > row[best]) best = j;
    out.push_back(best);
  }
  return out;
}

// Greedy decoding as generate() does it (src/js/pretrained/generation.js): the prompt through the caches,
// then one token per step; returns the new ids (B, steps) row-major.
std::vector<std::int32_t> greedy(attn::PretrainedModel& model, const Ids& prompt, int steps) {
  attn::DecodeCaches caches;
  REQUIRE(model.create_caches(prompt.t + steps, prompt.b, caches).ok());
  attn::PretrainedForwardResult r;
  REQUIRE(model.forward(prompt.b, prompt.t, prompt.data, {}, r, &caches).ok());
  std::vector<std::int32_t> out(static_cast<std::size_t>(prompt.b) * steps);
  for (int s = 0; s < steps; ++s) {
    const std::vector<std::int32_t> next = last_argmax(r.logits);
    for (int i = 0; i < prompt.b; ++i) out[static_cast<std::size_t>(i) * steps + s] = next[i];
    if (s + 1 < steps) REQUIRE(model.forward(prompt.b, 1, next, {}, r, &caches).ok());
  }
  return out;
}

Ids rows_of(const Value& rows) {  // [[id, …], …]
  Ids ids;
  ids.b = static_cast<int>(rows.items().size());
  for (const Value& row : rows.items()) {
    const std::vector<std::int32_t> r = row.numbers<std::int32_t>();
    ids.t = static_cast<int>(r.size());
    ids.data.insert(ids.data.end(), r.begin(), r.end());
  }
  return ids;
}

}  // namespace

TEST_CASE("pretrained families: the fixture folders, each with its core config, tensor roles and files",
          "[pretrained]") {
  const std::vector<std::string> fixtures = fx::list_fixtures();
  REQUIRE(!fixtures.empty());
  for (const std::string& f : fixtures) {
    for (const char* file :
         {"core-config.json", "tensor-roles.json", "expected.json", "expected_f16.json", "expected_bf16.json",
          "model.safetensors", "model.f16.safetensors", "model.bf16.safetensors"}) {
      INFO(f << "/" << file);
      REQUIRE(static_cast<bool>(std::ifstream(fx::path(f, file))));
    }
  }
}

TEST_CASE("pretrained families: logits, attention and hidden states of every fixture (F32)", "[pretrained]") {
  for (const std::string& f : fx::list_fixtures()) {
    attn::PretrainedModel model;
    fx::load_model(f, "model.safetensors", model);
    check_cases(model, testjson::parse_file(fx::path(f, "expected.json")), f);
  }
}

TEST_CASE("pretrained families: F16 and BF16 weights kept 16-bit, widened in the products", "[pretrained]") {
  for (const std::string& f : fx::list_fixtures()) {
    for (const std::string dtype : {"f16", "bf16"}) {
      attn::PretrainedModel model;
      fx::load_model(f, "model." + dtype + ".safetensors", model);
      check_cases(model, testjson::parse_file(fx::path(f, "expected_" + dtype + ".json")), f + " " + dtype);
    }
  }
}

TEST_CASE("pretrained families: greedy generation with the KV caches", "[pretrained]") {
  for (const std::string& f : fx::list_fixtures()) {
    const Value expected = testjson::parse_file(fx::path(f, "expected.json"));
    if (!expected.has("generate")) continue;
    const Value& g = expected["generate"];
    attn::PretrainedModel model;
    fx::load_model(f, "model.safetensors", model);
    INFO(f);
    REQUIRE(greedy(model, rows_of(g["input_ids"]), g["max_new_tokens"].integer()) ==
            rows_of(g["new_ids"]).data);
  }
}

// The threaded suites (build/wasm-threads) run every case above on a pool of 4; natively this case
// runs every fixture on a pool of 2 too: the same bits as one thread, within the bounds.
TEST_CASE("pretrained families: at 2 threads, the bits of one thread", "[pretrained][parallel]") {
  namespace k = attn::kernels;
  if (!k::threads_supported()) return;
  const int pool = k::start_thread_pool(2);
  for (int spins = 0; k::thread_pool_ready() < pool && spins < 10'000'000; ++spins) std::this_thread::yield();
  REQUIRE(k::thread_pool_ready() == pool);
  for (const std::string& f : fx::list_fixtures()) {
    attn::PretrainedModel model;
    fx::load_model(f, "model.safetensors", model);
    const Value expected = testjson::parse_file(fx::path(f, "expected.json"));
    const Ids ids = ids_of(expected["cases"][0]["input_ids"]);
    const std::vector<int> layers = expected["attention_layers"].numbers<int>();
    REQUIRE(k::set_thread_count(1));
    const attn::PretrainedForwardResult one = run(model, ids, layers, true);
    REQUIRE(k::set_thread_count(2));
    check_cases(model, expected, f + " at 2 threads");
    const attn::PretrainedForwardResult two = run(model, ids, layers, true);
    INFO(f);
    REQUIRE(two.logits.data == one.logits.data);
    for (std::size_t i = 0; i < one.hidden_states.size(); ++i)
      REQUIRE(two.hidden_states[i].data == one.hidden_states[i].data);
  }
  REQUIRE(k::set_thread_count(k::thread_pool_size()));
}
