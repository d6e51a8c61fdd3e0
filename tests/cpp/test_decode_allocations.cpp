// Decoding without waste (docs/gguf.md): once a step has run, a pretrained model's decoding step
// (one token through every layer's KV cache, the last row's logits only) allocates nothing — no
// per-token buffer, trace list or message string — in F32, a quantized file's exact mode and its
// int8 mode, for Llama and GPT-2, on one thread and split over the pool. Counted by replacing the
// global operator new, so this file is linked only into the builds without a sanitizer
// (attn_kernel_tests: natively and in wasm); ASan + UBSan keep their own operator new (and its
// mismatched-delete checks) for the rest of the suite.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "kernels/parallel.h"
#include "model/pretrained.h"
#include "parallel_check.h"
#include "quant_quantizer.h"
#include "test_helpers.h"

namespace {

std::atomic<long> g_allocations{0};  // operator new calls since the program started, every thread

}  // namespace

// gcc sees free() on what its own notion of operator new returned: these are the pair.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  return operator new(n);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept {
  return operator new(n, t);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}

namespace {

using attn::WeightFormat;

enum class Weights { kF32, kQ4K, kQ4KInt8 };

attn::PretrainedConfig config(attn::PretrainedArch arch) {  // rows of whole Q4_K blocks (256)
  attn::PretrainedConfig c;
  c.arch = arch;
  c.vocab_size = 2048;  // the head (2048 × 256) is split over the pool's threads
  c.hidden = 256;
  c.layers = 2;
  c.heads = 4;
  c.kv_heads = arch == attn::PretrainedArch::kGpt2 ? 4 : 2;
  c.head_dim = 64;
  c.intermediate = 512;
  c.max_positions = 16;
  c.tie_embeddings = arch == attn::PretrainedArch::kGpt2;
  return c;
}

void load(attn::PretrainedModel& m, Weights w) {
  m.set_int8_activations(w == Weights::kQ4KInt8);
  const quant_test::Layout& q4k = quant_test::layouts()[8];
  REQUIRE(std::string(q4k.name) == "Q4_K");
  std::uint64_t seed = 70;
  for (const attn::TensorSpec& s : m.tensors()) {
    attn::Tensor v = testutil::random_tensor(s.shape, ++seed, 0.2f);
    const bool vector = s.shape.size() == 1;
    if (vector && std::string(attn::role_name(s.key.role)).find("norm") != std::string::npos)
      for (float& x : v.data) x = 1.0f + 0.1f * x;
    std::vector<std::uint8_t> bytes(v.data.size() * 4);
    std::memcpy(bytes.data(), v.data.data(), bytes.size());
    WeightFormat f = WeightFormat::kF32;
    if (!vector && w != Weights::kF32) {
      bytes = quant_test::quantize_row(q4k, v.data);  // the rows back to back
      f = WeightFormat::kQ4_K;
    }
    void* data = nullptr;
    INFO(s.key.label());
    REQUIRE(m.begin_tensor(s.key, s.shape, f, false, s.key.label(), data).ok());
    std::memcpy(data, bytes.data(), bytes.size());
    REQUIRE(m.end_tensor(s.key).ok());
  }
}

// Prefills 4 tokens, decodes 7 more one at a time with one result object, and returns the
// allocations of the last 5 steps (the first two warm the buffers and the pool threads' scratch).
// Each step's logits must equal the last row of the whole sequence's forward.
long decode_allocations(attn::PretrainedModel& m) {
  const std::vector<std::int32_t> ids = {3, 141, 59, 26, 535, 897, 93, 238, 46, 264, 338};
  attn::DecodeCaches caches;
  REQUIRE(m.create_caches(16, 1, caches).ok());
  attn::ForwardOptions last;
  last.logits_row = 3;
  attn::PretrainedForwardResult r;
  REQUIRE(m.forward(1, 4, std::vector<std::int32_t>(ids.begin(), ids.begin() + 4), last, r, &caches).ok());
  last.logits_row = 0;
  std::vector<std::int32_t> step(1);
  std::vector<float> decoded;
  long counted = 0;
  for (std::size_t t = 4; t < ids.size(); ++t) {
    step[0] = ids[t];
    const long before = g_allocations.load();
    const attn::Status st = m.forward(1, 1, step, last, r, &caches);
    if (t >= 6) counted += g_allocations.load() - before;
    REQUIRE(st.ok());
    decoded.insert(decoded.end(), r.logits.data.begin(), r.logits.data.end());
  }
  attn::PretrainedForwardResult full;
  REQUIRE(m.forward(1, static_cast<int>(ids.size()), ids, {}, full).ok());
  const std::size_t v = static_cast<std::size_t>(m.config().vocab_size);
  testutil::require_close(decoded,
                          std::vector<float>(full.logits.data.begin() + 4 * v, full.logits.data.end()), 1e-4,
                          "decoded logits");
  return counted;
}

}  // namespace

TEST_CASE("decoding a pretrained model allocates nothing once a step has run",
          "[pretrained][cache][allocations]") {
  const std::vector<int> counts = testutil::thread_counts();
  const long before = g_allocations.load();
  void* volatile probe = ::operator new(8);  // a call, not a new-expression: never elided
  ::operator delete(probe);
  REQUIRE(g_allocations.load() == before + 1);  // the counter counts
  for (const auto arch : {attn::PretrainedArch::kLlama, attn::PretrainedArch::kGpt2})
    for (const Weights w : {Weights::kF32, Weights::kQ4K, Weights::kQ4KInt8}) {
      if (arch == attn::PretrainedArch::kGpt2 && w != Weights::kF32) continue;
      attn::PretrainedModel m;
      REQUIRE(attn::PretrainedModel::create(config(arch), m).ok());
      load(m, w);
      for (const int threads : {counts.front(), counts.back()}) {
        REQUIRE(attn::kernels::set_thread_count(threads));
        INFO((arch == attn::PretrainedArch::kGpt2 ? "GPT-2" : "Llama")
             << (w == Weights::kF32   ? " F32"
                 : w == Weights::kQ4K ? " Q4_K exact"
                                      : " Q4_K int8")
             << " at " << threads << " threads");
        const std::uint64_t jobs = attn::kernels::pool_jobs();
        CHECK(decode_allocations(m) == 0);
        if (threads > 1) CHECK(attn::kernels::pool_jobs() > jobs);  // the steps really were split
      }
    }
  REQUIRE(attn::kernels::set_thread_count(attn::kernels::thread_pool_size()));
}
