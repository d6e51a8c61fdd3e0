// PretrainedModel (src/model/pretrained.h): the tensors each architecture expects, refusals before
// anything large is allocated, and a forward's shapes, causality and batch independence. Its numbers
// are checked against the PyTorch checkpoints of tests/golden/pretrained natively, every family, in
// test_pretrained_families.cpp (and from JS in tests/js/pretrained.test.mjs).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "core/memory_limit.h"
#include "hook_helpers.h"
#include "kernels/kernels.h"
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

using attn::TensorKey;
using attn::TensorRole;

// Sets one tensor by role in float32: as the model keeps it, or (in, out) with `transposed` (as
// GPT-2's files store their Conv1D weights).
attn::Status set(attn::PretrainedModel& m, const TensorKey& key, const attn::Tensor& t,
                 bool transposed = false) {
  void* data = nullptr;
  const attn::Status st =
      m.begin_tensor(key, t.shape, attn::WeightFormat::kF32, transposed, key.label(), data);
  if (!st.ok()) return st;
  std::copy(t.data.begin(), t.data.end(), static_cast<float*>(data));
  return m.end_tensor(key);
}

// Random values for a tensor of the model's list: norm weights and biases near 1, the rest near 0.
attn::Tensor random_values(const attn::TensorSpec& s, std::uint64_t seed) {
  attn::Tensor t = testutil::random_tensor(s.shape, seed, 0.3f);
  if (std::string(attn::role_name(s.key.role)).find("norm") != std::string::npos)
    for (float& v : t.data) v = 1.0f + 0.1f * v;
  return t;
}

// Every tensor of the model's role list, random.
void fill(attn::PretrainedModel& m, std::uint64_t seed) {
  std::uint64_t k = 0;
  for (const attn::TensorSpec& s : m.tensors()) {
    const attn::Status st = set(m, s.key, random_values(s, seed + ++k));
    INFO(s.key.label() << ": " << st.message);
    REQUIRE(st.ok());
  }
}

}  // namespace

TEST_CASE("pretrained: the tensors by role, missing ones, refusals", "[pretrained]") {
  attn::PretrainedModel m;
  REQUIRE(attn::PretrainedModel::create(tiny(attn::PretrainedArch::kGpt2), m).ok());
  REQUIRE(m.tensors().front().key == TensorKey{TensorRole::kEmbed, -1});
  REQUIRE(m.missing().size() == m.tensors().size());
  attn::PretrainedForwardResult r;
  attn::Status st = m.forward(1, 3, {1, 2, 3}, {}, r);
  REQUIRE(st.code == attn::StatusCode::kInvalidArgument);
  REQUIRE(st.message.find("missing tensor embed") != std::string::npos);
  // GPT-2's fused [q; k; v] is (3E, E) as the model keeps it, (E, 3E) as its files store it.
  REQUIRE(set(m, {TensorRole::kQkv, 0}, attn::Tensor::zeros({8, 24})).code ==
          attn::StatusCode::kShapeMismatch);
  REQUIRE(set(m, {TensorRole::kQkv, 0}, attn::Tensor::zeros({24, 8}), true).code ==
          attn::StatusCode::kShapeMismatch);
  REQUIRE(set(m, {TensorRole::kQkv, 9}, attn::Tensor::zeros({24, 8})).code ==
          attn::StatusCode::kUnknownParameter);
  REQUIRE(set(m, {TensorRole::kQ, 0}, attn::Tensor::zeros({8, 8})).code ==
          attn::StatusCode::kUnknownParameter);  // GPT-2 has the fused projection only
  REQUIRE(set(m, {TensorRole::kQkv, 0}, attn::Tensor::zeros({24, 8})).ok());
  REQUIRE(set(m, {TensorRole::kQkv, 0}, attn::Tensor::zeros({8, 24}), true).ok());
  REQUIRE(m.missing().size() == m.tensors().size() - 1);
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
    REQUIRE(m.missing().empty());
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
    testutil::require_close(one.logits.data,
                            std::vector<float>(r.logits.data.begin() + 44, r.logits.data.end()), 1e-6,
                            "batch row alone");
    REQUIRE(m.forward(1, 2, {1, 11}, {}, r).code == attn::StatusCode::kInvalidArgument);
    REQUIRE(m.forward(1, 7, {1, 1, 1, 1, 1, 1, 1}, {}, r).code == attn::StatusCode::kTooLarge);
  }
}

TEST_CASE("pretrained decoding with KV caches equals the full forward; a refused step changes no cache",
          "[pretrained][cache]") {
  for (const auto arch : {attn::PretrainedArch::kGpt2, attn::PretrainedArch::kLlama}) {
    attn::PretrainedModel m;
    REQUIRE(attn::PretrainedModel::create(tiny(arch), m).ok());
    fill(m, 9);
    const std::vector<std::int32_t> ids = {3, 1, 4, 1, 5};
    attn::PretrainedForwardResult full;
    REQUIRE(m.forward(1, 5, ids, {}, full).ok());
    attn::DecodeCaches caches;
    REQUIRE(m.create_caches(6, 1, caches).ok());
    std::vector<float> stepped;
    for (const auto& [t0, n] : {std::pair{0, 3}, std::pair{3, 1}, std::pair{4, 1}}) {
      attn::PretrainedForwardResult r;
      REQUIRE(
          m.forward(1, n, std::vector<std::int32_t>(ids.begin() + t0, ids.begin() + t0 + n), {}, r, &caches)
              .ok());
      stepped.insert(stepped.end(), r.logits.data.begin(), r.logits.data.end());
    }
    testutil::require_close(stepped, full.logits.data, 1e-5, "cached logits");
    {  // decoding's prefill asks for the last row only (logits_row): that row, the same bits
      attn::DecodeCaches fresh;
      REQUIRE(m.create_caches(6, 1, fresh).ok());
      attn::ForwardOptions last;
      last.logits_row = 2;
      attn::PretrainedForwardResult r;
      REQUIRE(m.forward(1, 3, {3, 1, 4}, last, r, &fresh).ok());
      const int v = r.logits.shape[2];
      REQUIRE(r.logits.shape == attn::Shape{1, 1, v});
      REQUIRE(r.logits.data == std::vector<float>(stepped.begin() + 2 * v, stepped.begin() + 3 * v));
    }
    attn::PretrainedForwardResult r;
    REQUIRE(m.forward(1, 2, {1, 2}, {}, r, &caches).code == attn::StatusCode::kTooLarge);  // 5 + 2 > 6
    REQUIRE(caches.length == 5);
    for (const attn::LayerCache& k : caches.layers) REQUIRE(k.kv.length == 5);
    REQUIRE(m.create_caches(7, 1, caches).code == attn::StatusCode::kTooLarge);  // above max_positions 6
  }
}

TEST_CASE("pretrained logit lens: one top token per stream and position; the last is the model's own",
          "[pretrained]") {
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

// ---- 16-bit storage: weights stay in the file's format ----------------------------

namespace {

using attn::WeightFormat;

// The 16-bit pattern of v: bfloat16 by truncation; float16 for |v| < 2 by truncation (values below
// 2^-14 become ±0). Any pattern is a valid weight; the widened float32 is what the reference uses.
std::uint16_t to_half(float v, WeightFormat f) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  if (f == WeightFormat::kBF16) return static_cast<std::uint16_t>(b >> 16);
  const int e = static_cast<int>((b >> 23) & 0xff) - 127 + 15;
  const std::uint32_t sign = (b >> 16) & 0x8000u;
  return static_cast<std::uint16_t>(
      e > 0 ? sign | (static_cast<std::uint32_t>(e) << 10) | ((b & 0x7fffffu) >> 13) : sign);
}

// Fills `half` with every tensor in format f and `wide` with the same values widened to float32.
void fill_pair(attn::PretrainedModel& half, attn::PretrainedModel& wide, WeightFormat f, std::uint64_t seed) {
  std::uint64_t k = 0;
  for (const attn::TensorSpec& s : half.tensors()) {
    attn::Tensor t = random_values(s, seed + ++k);
    std::vector<std::uint16_t> bits(t.data.size());
    for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = to_half(t.data[i], f);
    attn::kernels::widen_half(
        static_cast<int>(bits.size()), bits.data(),
        f == WeightFormat::kF16 ? attn::kernels::HalfFormat::kF16 : attn::kernels::HalfFormat::kBF16,
        t.data.data());
    void* dst = nullptr;
    REQUIRE(half.begin_tensor(s.key, s.shape, f, false, s.key.label(), dst).ok());
    std::memcpy(dst, bits.data(), bits.size() * 2);
    REQUIRE(half.end_tensor(s.key).ok());
    REQUIRE(set(wide, s.key, t).ok());
  }
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE(
    "pretrained 16-bit weights: the forward equals the widened float32 model's bit for bit, in about half "
    "the bytes",
    "[pretrained][half]") {
  // hidden 12: GPT-2's fused q/k/v weight splits mid-panel of the SIMD packed layout, so that
  // float32 matrix stays unpacked while the others are packed in place (hidden 8: all packed).
  for (const int hidden : {8, 12}) {
    for (const auto arch : {attn::PretrainedArch::kGpt2, attn::PretrainedArch::kLlama})
      for (const WeightFormat f : {WeightFormat::kF16, WeightFormat::kBF16}) {
        INFO((arch == attn::PretrainedArch::kGpt2 ? "GPT-2 " : "Llama ")
             << attn::format_name(f) << " hidden " << hidden);
        attn::PretrainedConfig c = tiny(arch);
        c.qkv_bias = arch == attn::PretrainedArch::kLlama;
        c.hidden = hidden;
        c.heads = hidden / c.head_dim;
        if (arch == attn::PretrainedArch::kGpt2) c.kv_heads = c.heads;
        attn::PretrainedModel half, wide;
        REQUIRE(attn::PretrainedModel::create(c, half).ok());
        REQUIRE(attn::PretrainedModel::create(c, wide).ok());
        fill_pair(half, wide, f, 21);
        attn::PretrainedForwardOptions o;
        o.attention_layers = {0, 1};
        o.trace_layers = {1};
        o.hidden_states = true;
        o.logit_lens = true;
        attn::PretrainedForwardResult a, b;
        const std::vector<std::int32_t> ids = {3, 1, 4, 1, 5, 9, 2, 6};
        REQUIRE(half.forward(2, 4, ids, o, a).ok());
        REQUIRE(wide.forward(2, 4, ids, o, b).ok());
        REQUIRE(same_bits(a.logits.data, b.logits.data));
        REQUIRE(same_bits(a.attention[1].data, b.attention[1].data));
        REQUIRE(same_bits(a.hidden_states.back().data, b.hidden_states.back().data));
        REQUIRE(a.traces[1].steps().size() == b.traces[1].steps().size());
        REQUIRE(a.lens_ids == b.lens_ids);
        // Decoding through the caches reads the same 16-bit weights.
        attn::DecodeCaches caches;
        REQUIRE(half.create_caches(6, 1, caches).ok());
        attn::PretrainedForwardResult first, next, full;
        REQUIRE(half.forward(1, 3, {3, 1, 4}, {}, first, &caches).ok());
        REQUIRE(half.forward(1, 1, {1}, {}, next, &caches).ok());
        REQUIRE(wide.forward(1, 4, {3, 1, 4, 1}, {}, full).ok());
        testutil::require_close(next.logits.data,
                                std::vector<float>(full.logits.data.end() - 11, full.logits.data.end()), 1e-5,
                                "cached step");
        // Matrices take 2 bytes per value instead of 4; the norms and biases stay float32.
        REQUIRE(half.weight_bytes() < 0.6 * wide.weight_bytes());
        REQUIRE(half.weight_bytes() > 0.5 * wide.weight_bytes());
      }
  }
}

TEST_CASE(
    "pretrained loading: a non-finite value or a tensor past the memory limit leaves the model as it was",
    "[pretrained][half]") {
  attn::PretrainedConfig c = tiny(attn::PretrainedArch::kLlama);
  attn::PretrainedModel m, wide;
  REQUIRE(attn::PretrainedModel::create(c, m).ok());
  REQUIRE(attn::PretrainedModel::create(c, wide).ok());
  fill_pair(m, wide, WeightFormat::kBF16, 33);
  attn::PretrainedForwardResult before, after;
  REQUIRE(m.forward(1, 4, {1, 2, 3, 4}, {}, before).ok());
  const std::uint64_t bytes = m.weight_bytes();
  for (const TensorKey key : {TensorKey{TensorRole::kK, 1}, TensorKey{TensorRole::kAttnNorm, 0}}) {
    const attn::Shape& shape =
        std::find_if(m.tensors().begin(), m.tensors().end(), [&](const attn::TensorSpec& s) {
          return s.key == key;
        })->shape;
    void* dst = nullptr;
    REQUIRE(m.begin_tensor(key, shape, WeightFormat::kBF16, false, key.label(), dst).ok());
    std::vector<std::uint16_t> bits(static_cast<std::size_t>(attn::shape_numel(shape)), 0x3f80);  // 1.0
    bits[3] = 0x7f80;                                                                             // +inf
    std::memcpy(dst, bits.data(), bits.size() * 2);
    const attn::Status st = m.end_tensor(key);
    REQUIRE(st.code == attn::StatusCode::kNonFinite);
    REQUIRE(st.message.find("flat index 3") != std::string::npos);
    REQUIRE(m.missing().empty());  // refused: the old values are still in use
    REQUIRE(m.forward(1, 4, {1, 2, 3, 4}, {}, after).ok());
    REQUIRE(same_bits(after.logits.data, before.logits.data));
    REQUIRE(m.end_tensor(key).code == attn::StatusCode::kInvalidArgument);  // nothing begun
  }
  REQUIRE(m.weight_bytes() == bytes);
  // Past the limit: refused before the room is allocated.
  const std::uint64_t limit = attn::memory_limit_bytes();
  attn::set_memory_limit_bytes(bytes / 2);
  void* dst = nullptr;
  const attn::Status big =
      m.begin_tensor({TensorRole::kEmbed, -1}, {11, 8}, WeightFormat::kF32, false, "embed", dst);
  const attn::Status reserve = m.reserve(bytes);
  attn::set_memory_limit_bytes(limit);
  REQUIRE(big.code == attn::StatusCode::kTooLarge);
  REQUIRE(reserve.code == attn::StatusCode::kTooLarge);
  REQUIRE(m.reserve(bytes).ok());
}

TEST_CASE(
    "pretrained hooks: a run from a hidden state (startAt), an edit of attn.hook_out, logits_row, read_rows",
    "[pretrained][interp]") {
  for (const bool post : {false, true}) {
    for (const auto arch : {attn::PretrainedArch::kGpt2, attn::PretrainedArch::kLlama}) {
      if (post && arch == attn::PretrainedArch::kGpt2) continue;
      attn::PretrainedConfig c = tiny(arch);
      c.post_norms = post;  // OLMo 2's placement
      attn::PretrainedModel m;
      REQUIRE(attn::PretrainedModel::create(c, m).ok());
      fill(m, 9);
      const std::vector<std::int32_t> ids = {1, 2, 3, 4, 5, 6, 7, 8};
      testutil::Hooked o;
      o.options.hidden_states = true;
      o.request.capture = {"blocks.*.mlp.hook_out"};
      REQUIRE(o.make(m.hook_shapes(), 2, 4).ok());
      attn::PretrainedForwardResult full;
      REQUIRE(m.forward(2, 4, ids, o.options, full).ok());
      REQUIRE(o.captured("blocks.1.mlp.hook_out").shape == attn::Shape{2, 4, 8});
      for (int l = 0; l < c.layers; ++l) {
        // the stream entering block l given back: the same logits, bit for bit; a zero add changes nothing
        const std::string out = "blocks." + std::to_string(l) + ".attn.hook_out";
        testutil::Hooked from;
        from.start_at(l, full.hidden_states[l].data, {2, 4, 8});
        from.edit(out, true, {2, 4, 8}, std::vector<float>(64, 0.0f));
        REQUIRE(from.make(m.hook_shapes(), 2, 4).ok());
        attn::PretrainedForwardResult r;
        REQUIRE(m.forward(2, 4, ids, from.options, r).ok());
        REQUIRE(r.logits.data == full.logits.data);
        from.options.logits_row = 2;  // one position's logits: (B, 1, V), the same values
        REQUIRE(m.forward(2, 4, ids, from.options, r).ok());
        REQUIRE(r.logits.shape == attn::Shape{2, 1, 11});
        for (int b = 0; b < 2; ++b)
          for (int v = 0; v < 11; ++v)
            REQUIRE(r.logits.data[b * 11 + v] == full.logits.data[(b * 4 + 2) * 11 + v]);
        // an add at one row changes only that row and the rows after it
        testutil::Hooked moved;
        moved.start_at(l, full.hidden_states[l].data, {2, 4, 8});
        std::vector<float> delta(64, 0.0f);
        delta[(0 * 4 + 1) * 8 + 3] = 0.5f;
        moved.edit(out, true, {2, 4, 8}, delta);
        REQUIRE(moved.make(m.hook_shapes(), 2, 4).ok());
        REQUIRE(m.forward(2, 4, ids, moved.options, r).ok());
        for (int v = 0; v < 11; ++v) REQUIRE(r.logits.data[v] == full.logits.data[v]);
        REQUIRE(r.logits.data[11] != full.logits.data[11]);
        for (int i = 44; i < 88; ++i) REQUIRE(r.logits.data[i] == full.logits.data[i]);  // the other sequence
      }
      // refusals: each before anything runs
      const auto refused = [&](testutil::Hooked& h) { return !h.make(m.hook_shapes(), 2, 4).ok(); };
      testutil::Hooked bad;
      bad.request.start_at = "blocks.1.hook_resid_pre";  // without a set of it
      REQUIRE(refused(bad));
      testutil::Hooked short_stream;
      short_stream.start_at(1, std::vector<float>(63, 0.0f), {2, 4, 8});
      REQUIRE(refused(short_stream));
      testutil::Hooked past;
      past.start_at(2, std::vector<float>(64, 0.0f), {2, 4, 8});  // 2 layers
      REQUIRE(refused(past));
      testutil::Hooked early;
      early.start_at(1, std::vector<float>(64, 0.0f), {2, 4, 8});
      early.edit("blocks.0.attn.hook_out", true, {8}, std::vector<float>(8, 0.0f));  // before startAt
      REQUIRE(refused(early));
      attn::PretrainedForwardResult r;
      testutil::Hooked ok;
      ok.start_at(1, std::vector<float>(64, 0.0f), {2, 4, 8});
      REQUIRE(ok.make(m.hook_shapes(), 2, 4).ok());
      ok.options.logits_row = 4;
      REQUIRE(m.forward(2, 4, ids, ok.options, r).code == attn::StatusCode::kInvalidArgument);
      ok.options.logits_row = -1;
      ok.options.hidden_states = true;
      REQUIRE(m.forward(2, 4, ids, ok.options, r).code == attn::StatusCode::kInvalidArgument);
      attn::DecodeCaches caches;
      REQUIRE(m.create_caches(6, 2, caches).ok());
      ok.options.hidden_states = false;  // startAt needs a full run (logits_row does not)
      REQUIRE(m.forward(2, 4, ids, ok.options, r, &caches).code == attn::StatusCode::kInvalidArgument);
    }
  }
  // read_rows: rows as the model keeps them (GPT-2's Conv1D transposed), vectors as one row
  attn::PretrainedModel m;
  REQUIRE(attn::PretrainedModel::create(tiny(attn::PretrainedArch::kGpt2), m).ok());
  fill(m, 3);
  const attn::Tensor proj = testutil::random_tensor({8, 8}, 77, 0.3f);  // (in, out) as the file stores it
  REQUIRE(set(m, {TensorRole::kO, 1}, proj, true).ok());
  std::vector<float> rows;
  REQUIRE(m.read_rows({TensorRole::kO, 1}, 2, 3, rows).ok());
  REQUIRE(rows.size() == 24);
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 8; ++k) REQUIRE(rows[r * 8 + k] == proj.data[k * 8 + (2 + r)]);
  const attn::Tensor bias = testutil::random_tensor({8}, 78, 0.3f);
  REQUIRE(set(m, {TensorRole::kFinalNormBias, -1}, bias).ok());
  REQUIRE(m.read_rows({TensorRole::kFinalNormBias, -1}, 0, 1, rows).ok());
  REQUIRE(rows == bias.data);
  REQUIRE(m.read_rows({TensorRole::kEmbed, -1}, 10, 1, rows).ok());
  REQUIRE(rows.size() == 8);
  REQUIRE(m.read_rows({TensorRole::kEmbed, -1}, 10, 2, rows).code == attn::StatusCode::kInvalidArgument);
  REQUIRE(m.read_rows({TensorRole::kO, 7}, 0, 1, rows).code == attn::StatusCode::kInvalidArgument);
}
