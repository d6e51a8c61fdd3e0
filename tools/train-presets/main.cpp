// train-presets: trains every preset of recipes.cpp with the library's own TinyTransformer and AdamW
// (native, single-threaded, seeded: the same build writes the same bytes), rounds the weights to
// float16, checks what each preset claims about its heads on fresh sequences, and writes
// web/presets/<name>.safetensors (the layout of TinyTransformer.toSafetensors(), F16, with the
// preset's description in __metadata__.preset).
//
//   train_presets [--out DIR] [--budget full|small] [--corpus FILE] [--only NAME]
// small: a hundredth of the steps (at least 10) and no claim enforced (the determinism test: the
// same code paths, training, evaluation, claims and writing, in ~2 s instead of ~9).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "claims.h"
#include "recipes.h"
#include "repeat_data.h"
#include "safetensors_writer.h"
#include "text_data.h"
#include "train/evaluate.h"
#include "train/tasks.h"
#include "train/trainer.h"

namespace {

using Batch = std::function<void(bool held_out, std::uint64_t index, int n, std::vector<std::int32_t>&,
                                 std::vector<std::int32_t>&)>;

struct Options {
  std::string out = "web/presets", corpus = "tools/train-presets/corpus.txt";
  bool small = false;
  std::string only;  // one preset by name (to work on a recipe)
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "train-presets: %s\n", what.c_str());
  std::exit(1);
}

void check(const attn::Status& s, const std::string& at) {
  if (!s.ok()) die(at + ": " + s.message);
}

std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", x);
  return buf;
}

// Weights rounded to float16 and back: what the file holds, so claims are measured on it.
void round_to_half(attn::TinyTransformer& m) {
  std::vector<attn::Tensor> p = m.parameters();
  for (auto& t : p)
    for (float& x : t.data) x = presets::from_half(presets::to_half(x));
  check(m.set_parameters(p), "rounding to float16");
}

// Token and sequence accuracy of the argmax prediction on scored targets (for data that is not a Task).
void greedy_accuracy(attn::TinyTransformer& m, const std::vector<std::int32_t>& ids,
                     const std::vector<std::int32_t>& targets, int n, int t, attn::EvalResult& ev) {
  attn::TinyForwardResult res;
  check(m.forward({n, t, ids}, {}, res), "accuracy forward");
  const int v = m.config().vocab_size;
  long scored = 0, right = 0, sequences = 0;
  for (int s = 0; s < n; ++s) {
    bool all = true;
    for (int r = 0; r < t; ++r) {
      const std::int32_t want = targets[static_cast<std::size_t>(s) * t + r];
      if (want == -100) continue;
      const float* row = res.logits.data.data() + (static_cast<std::size_t>(s) * t + r) * v;
      int best = 0;
      for (int k = 1; k < v; ++k)
        if (row[k] > row[best]) best = k;
      ++scored;
      if (best == want)
        ++right;
      else
        all = false;
    }
    if (all) ++sequences;
  }
  ev.token_accuracy = scored ? static_cast<double>(right) / scored : 0.0;
  ev.sequence_accuracy = static_cast<double>(sequences) / n;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// Finds the head that best shows each claim (in its layer, or in any), enforcing the threshold.
std::vector<presets::Claim> measure_claims(const presets::Recipe& r, attn::TinyTransformer& m,
                                           const Batch& batch) {
  const int n = 64, t = m.config().max_length, heads = m.config().num_heads;
  std::vector<std::int32_t> ids, targets;
  batch(true, 99, n, ids, targets);
  attn::TinyForwardOptions fo;
  for (int l = 0; l < m.config().num_layers; ++l) fo.attention_layers.push_back(l);
  attn::TinyForwardResult res;
  check(m.forward({n, t, ids}, fo, res), r.name + " forward");
  std::vector<presets::Claim> out;
  for (const auto& hc : r.claims) {
    presets::Claim best{0, 0, hc.kind, -1.0, hc.min_fraction};
    for (int l = 0; l < m.config().num_layers; ++l) {
      if (hc.layer >= 0 && l != hc.layer) continue;
      for (int h = 0; h < heads; ++h) {
        const double f =
            presets::measure_claim(hc.kind, res.attention[l].data, n, heads, t, h, ids, targets, r.length);
        if (f > best.fraction) best = {l, h, hc.kind, f, hc.min_fraction};
      }
    }
    out.push_back(best);
  }
  return out;
}

std::string preset_json(const presets::Recipe& r, const std::vector<std::string>& tokens,
                        const std::vector<presets::Claim>& claims, double token_acc, double seq_acc,
                        double loss) {
  using presets::json_string;
  std::string j = "{\"name\":" + json_string(r.name) + ",\"title\":" + json_string(r.title) +
                  ",\"summary\":" + json_string(replace_all(r.summary, "{L}", std::to_string(r.length))) +
                  ",\"kind\":" +
                  json_string(r.task == "text"     ? "text"
                              : r.task == "repeat" ? "repeat"
                                                   : "task");
  if (r.task == "repeat")
    j += ",\"data\":{\"name\":\"repeat\",\"symbols\":" + std::to_string(r.num_symbols) +
         ",\"length\":" + std::to_string(r.length) + ",\"minSegment\":6,\"maxSegment\":11}";
  else if (r.task != "text")
    j += ",\"task\":{\"name\":" + json_string(r.task) + ",\"length\":" + std::to_string(r.length) +
         ",\"numSymbols\":" + std::to_string(r.num_symbols) + "}";
  else
    j += ",\"unknownToken\":\"?\"";
  j += ",\"tokens\":[";
  for (std::size_t i = 0; i < tokens.size(); ++i) j += (i ? "," : "") + json_string(tokens[i]);
  j += "],\"evaluation\":{\"loss\":" + fmt(loss) + ",\"tokenAccuracy\":" + fmt(token_acc) +
       ",\"sequenceAccuracy\":" + fmt(seq_acc) + "}";
  j += ",\"heads\":[";
  for (std::size_t i = 0; i < claims.size(); ++i) {
    const auto& c = claims[i];
    j += std::string(i ? "," : "") + "{\"layer\":" + std::to_string(c.layer) +
         ",\"head\":" + std::to_string(c.head) + ",\"claim\":{\"kind\":" + json_string(c.kind) +
         ",\"minFraction\":" + fmt(c.min_fraction) + "},\"measured\":" + fmt(c.fraction) +
         ",\"explanation\":" +
         json_string(replace_all(r.claims[i].explanation, "{L}", std::to_string(r.length))) + "}";
  }
  return j + "]}";
}

std::string config_json(const attn::TinyConfig& c) {
  return "{\"vocabSize\":" + std::to_string(c.vocab_size) + ",\"maxLength\":" + std::to_string(c.max_length) +
         ",\"dModel\":" + std::to_string(c.d_model) + ",\"numHeads\":" + std::to_string(c.num_heads) +
         ",\"numLayers\":" + std::to_string(c.num_layers) + ",\"mlp\":" + (c.mlp ? "true" : "false") +
         ",\"mlpHidden\":" + std::to_string(c.mlp_hidden ? c.mlp_hidden : 4 * c.d_model) +
         ",\"positional\":\"learned\",\"norm\":\"pre\",\"causal\":true,\"seed\":" + std::to_string(c.seed) +
         "}";
}

void train_one(const presets::Recipe& r, const Options& o, const presets::TextData& text) {
  attn::Task task;
  attn::TinyConfig c = r.model;
  std::vector<std::string> tokens;
  Batch batch;
  presets::RepeatData repeat;
  if (r.task == "repeat") {
    repeat.symbols = r.num_symbols;
    repeat.length = r.length;
    c.vocab_size = repeat.symbols;
    c.max_length = repeat.length;
    for (int i = 0; i < repeat.symbols; ++i) tokens.push_back(std::to_string(i));
    batch = [&repeat](bool held, std::uint64_t index, int n, auto& ids, auto& targets) {
      repeat.batch(held ? 7 : 1, index, n, ids, targets);
    };
  } else if (r.task == "text") {
    c.vocab_size = static_cast<int>(text.vocab().size());
    c.max_length = r.length;
    for (char ch : text.vocab()) tokens.push_back(ch == '\n' ? "\n" : std::string(1, ch));
    batch = [&text, &r](bool held, std::uint64_t index, int n, auto& ids, auto& targets) {
      text.batch(held, held ? 7 : 1, index, n, r.length, ids, targets);
    };
  } else {
    check(attn::Task::create({r.task, r.length, r.num_symbols, 1}, task), r.name + " task");
    c.vocab_size = task.vocab_size();
    c.max_length = task.sequence_length();
    tokens = task.token_names();
    batch = [&task](bool held, std::uint64_t index, int n, auto& ids, auto& targets) {
      check(held ? task.batch_at(7, index, n, ids, targets) : task.next_batch(n, ids, targets), "batch");
    };
  }
  attn::TinyTransformer m;
  check(attn::TinyTransformer::create(c, m), r.name + " model");
  attn::AdamWOptions adam;
  adam.lr = r.lr;
  adam.weight_decay = 0.0f;
  adam.clip_grad_norm = 1.0f;
  attn::Trainer trainer;
  check(attn::Trainer::create(&m, adam, trainer), r.name + " trainer");
  const int steps = o.small ? std::max(10, r.steps / 100) : r.steps;
  std::vector<std::int32_t> ids, targets;
  for (int s = 0; s < steps; ++s) {
    batch(false, static_cast<std::uint64_t>(s), r.batch, ids, targets);
    attn::TrainStepResult tr;
    check(trainer.step({r.batch, c.max_length, ids}, {r.batch, c.max_length, targets}, tr), r.name + " step");
  }
  round_to_half(m);
  attn::EvalResult ev;
  if (r.task == "text" || r.task == "repeat") {
    batch(true, 5, 64, ids, targets);
    check(m.loss({64, c.max_length, ids}, {64, c.max_length, targets}, ev.loss), r.name + " loss");
    if (r.task == "repeat") greedy_accuracy(m, ids, targets, 64, c.max_length, ev);
  } else {
    check(attn::evaluate(m, task, 8, 32, 3, ev), r.name + " evaluate");
  }
  const auto claims = measure_claims(r, m, batch);
  const auto bytes = presets::write_safetensors(
      m.parameter_names(), m.parameters(),
      {{"format", "attention-wasm/tiny-transformer"},
       {"config", config_json(c)},
       {"preset", preset_json(r, tokens, claims, ev.token_accuracy, ev.sequence_accuracy, ev.loss)}});
  const std::string path = o.out + "/" + r.name + ".safetensors";
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!f) die("cannot write " + path);
  std::printf("%-10s %6d steps  %7zu bytes  loss %.3f  tokens %.1f%%  sequences %.1f%%", r.name.c_str(),
              steps, bytes.size(), ev.loss, 100 * ev.token_accuracy, 100 * ev.sequence_accuracy);
  for (const auto& cl : claims)
    std::printf("  %s L%dH%d %.1f%%", cl.kind.c_str(), cl.layer, cl.head, 100 * cl.fraction);
  std::printf("\n");
  for (const auto& cl : claims)  // enforced after the summary line, so a failure shows its numbers
    if (!o.small && cl.fraction < cl.min_fraction)
      die(r.name + ": no head shows '" + cl.kind + "' in " + fmt(cl.min_fraction) + " of rows (best " +
          fmt(cl.fraction) + ")");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--out")
      o.out = value;
    else if (key == "--budget")
      o.small = value == "small";
    else if (key == "--corpus")
      o.corpus = value;
    else if (key == "--only")
      o.only = value;
    else
      die("unknown option " + key);
  }
  presets::TextData text;
  std::string error;
  if (!text.load(o.corpus, error)) die(error);
  for (const auto& r : presets::all_recipes())
    if (o.only.empty() || o.only == r.name) train_one(r, o, text);
  return 0;
}
