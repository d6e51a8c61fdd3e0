// The float16 KV cache below the model: the attention engine over float16 keys and values (both of
// its paths, every key tile) against attention over their exact float32 widening, and
// MultiHeadAttention decoding through a float16 cache against a float32 one — its sizes, the memory
// limit counting its bytes, and a refused step (a key past float16's range) leaving the cache as found.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

#include "core/attention.h"
#include "core/attention_engine.h"
#include "core/memory_limit.h"
#include "core/multi_head.h"
#include "kernels/kernels.h"
#include "kernels/parallel.h"
#include "test_helpers.h"

namespace {

namespace k = attn::kernels;

// The engine widens exactly, so float16 operands and their float32 widening differ only in the
// order a row's ·V products are summed (per key tile): float32 rounding of O(1) values.
constexpr double kWidenedTol = 2e-6;
// A float16 cache against a float32 one: each key and value rounded by at most 2^-11 relative
// (narrow_f16), for O(1) activations through the output projection.
constexpr double kF16CacheTol = 5e-3;

// Keys or values rounded to float16: the halves, and t widened back in place.
std::vector<std::uint16_t> to_half(attn::Tensor& t) {
  std::vector<std::uint16_t> h(t.data.size());
  k::narrow_f16(static_cast<std::int64_t>(h.size()), t.data.data(), h.data());
  k::widen_half(static_cast<int>(h.size()), h.data(), k::HalfFormat::kF16, t.data.data());
  return h;
}

struct EngineCase {
  int tq, tk;
  bool need_weights;
  int window;  // 0 = none
};

// Full path (short rows; weights kept over several key tiles), tiled path (600 keys: three tiles;
// 300 query rows: two blocks), a sliding window; GQA 4 query heads over 2 key/value heads.
const EngineCase kEngineCases[] = {
    {3, 7, false, 0}, {5, 600, true, 0}, {5, 600, false, 0}, {300, 600, false, 0}, {64, 600, false, 100}};

// The engine on float16 keys and values (got) and SDPA on their float32 widening (want).
void run_case(const EngineCase& c, attn::AttentionOutputs& got, attn::SdpaResult& want) {
  const attn::Tensor q = testutil::random_tensor({2, 4, c.tq, 16}, 1);
  attn::Tensor kf = testutil::random_tensor({2, 2, c.tk, 16}, 2);
  attn::Tensor vf = testutil::random_tensor({2, 2, c.tk, 8}, 3);
  const std::vector<std::uint16_t> kh = to_half(kf), vh = to_half(vf);
  attn::SdpaOptions o;
  o.causal = true;
  o.positions.bottom_right = true;
  if (c.window) o.positions.window = c.window;
  o.enable_gqa = true;
  o.need_weights = c.need_weights;
  REQUIRE(attn::scaled_dot_product_attention(q, kf, vf, o, want).ok());
  attn::AttentionProblem p;
  REQUIRE(attn::make_sdpa_problem(q, kf, vf, o, p).ok());
  p.k = p.v = nullptr;  // only the float16 bits are read
  p.k16 = kh.data();
  p.v16 = vh.data();
  attn::run_attention(p, c.need_weights, got, nullptr);
}

}  // namespace

TEST_CASE("attention over float16 keys and values equals attention over their float32 widening",
          "[kv_f16][attention]") {
  for (const EngineCase& c : kEngineCases) {
    INFO("tq " << c.tq << " tk " << c.tk << " weights " << c.need_weights << " window " << c.window);
    attn::AttentionOutputs got;
    attn::SdpaResult want;
    run_case(c, got, want);
    testutil::require_close(got.context, want.output.data, kWidenedTol, "context");
    if (c.need_weights) testutil::require_close(got.weights, want.weights.data, kWidenedTol, "weights");
  }
}

TEST_CASE("attention over float16 keys and values: at 2 threads, the bits of one thread",
          "[kv_f16][parallel]") {
  namespace kp = attn::kernels;
  if (!kp::threads_supported()) return;
  const int pool = kp::start_thread_pool(2);
  for (int spins = 0; kp::thread_pool_ready() < pool && spins < 10'000'000; ++spins)
    std::this_thread::yield();
  REQUIRE(kp::thread_pool_ready() == pool);
  for (const EngineCase& c : kEngineCases) {
    INFO("tq " << c.tq << " tk " << c.tk);
    attn::AttentionOutputs one, two;
    attn::SdpaResult want;
    REQUIRE(kp::set_thread_count(1));
    run_case(c, one, want);
    REQUIRE(kp::set_thread_count(2));
    run_case(c, two, want);
    REQUIRE(one.context == two.context);
    REQUIRE(one.weights == two.weights);
  }
  REQUIRE(kp::set_thread_count(kp::thread_pool_size()));
}

namespace {

attn::MultiHeadAttention gqa_rope_module() {
  attn::MhaConfig c;
  c.embed_dim = 32;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.rope = attn::RotaryOptions{};
  c.seed = 5;
  attn::MultiHeadAttention m;
  REQUIRE(attn::MultiHeadAttention::create(c, m).ok());
  return m;
}

// x's rows [t0, t0 + n) of every batch row: (B, n, E).
attn::Tensor rows(const attn::Tensor& x, int t0, int n) {
  const int b = x.shape[0], t = x.shape[1], e = x.shape[2];
  attn::Tensor out = attn::Tensor::zeros({b, n, e});
  for (int i = 0; i < b; ++i)
    std::copy(x.data.begin() + (static_cast<std::int64_t>(i) * t + t0) * e,
              x.data.begin() + (static_cast<std::int64_t>(i) * t + t0 + n) * e,
              out.data.begin() + static_cast<std::int64_t>(i) * n * e);
  return out;
}

// Decodes x (B, T, E)'s rows from t0 on through `cache` in the given chunks; every step's outputs.
std::vector<float> decode(const attn::MultiHeadAttention& m, const attn::Tensor& x, attn::KvCache& cache,
                          const std::vector<int>& chunks, int t0 = 0) {
  std::vector<float> out;
  attn::MhaForwardOptions o;
  o.causal = true;
  o.need_weights = false;
  for (int n : chunks) {
    attn::MhaResult r;
    REQUIRE(m.forward_cached(rows(x, t0, n), cache, o, r).ok());
    out.insert(out.end(), r.output.data.begin(), r.output.data.end());
    t0 += n;
  }
  return out;
}

}  // namespace

TEST_CASE("a float16 KV cache: half the bytes, the float32 cache's outputs within rounding, over 300 keys",
          "[kv_f16][cache]") {
  const attn::MultiHeadAttention m = gqa_rope_module();
  const attn::Tensor x = testutil::random_tensor({2, 303, 32}, 11);
  attn::KvCache c32, c16;
  REQUIRE(m.create_cache(303, 2, c32).ok());
  REQUIRE(m.create_cache(303, 2, c16, attn::KvDtype::kF16).ok());
  REQUIRE(c32.bytes() == 2u * 303 * (16 + 16) * 4);  // batch · rows · H_kv·(dk + dv) floats
  REQUIRE(c16.bytes() * 2 == c32.bytes());
  const std::vector<int> chunks = {256, 44, 1, 1, 1};  // a prefill in chunks, then decoding steps
  testutil::require_close(decode(m, x, c16, chunks), decode(m, x, c32, chunks), kF16CacheTol, "outputs");
  REQUIRE(c16.length == 303);
}

TEST_CASE("a float16 KV cache: the memory limit counts its bytes", "[kv_f16][cache]") {
  const attn::MultiHeadAttention m = gqa_rope_module();
  const std::uint64_t saved = attn::memory_limit_bytes();
  const std::uint64_t f32_bytes = 1000u * (16 + 16) * 4;  // rows · H_kv·(dk + dv) floats: 128,000
  attn::set_memory_limit_bytes(f32_bytes * 3 / 4);        // between the two sizes
  attn::KvCache c;
  const attn::Status refused = m.create_cache(1000, 1, c);
  const attn::Status fits = m.create_cache(1000, 1, c, attn::KvDtype::kF16);
  attn::set_memory_limit_bytes(saved);
  REQUIRE(refused.code == attn::StatusCode::kTooLarge);
  REQUIRE(fits.ok());
  REQUIRE(c.bytes() == f32_bytes / 2);
}

TEST_CASE("a float16 KV cache refuses a key beyond float16's range and stays as found", "[kv_f16][cache]") {
  const attn::MultiHeadAttention m = gqa_rope_module();
  const attn::Tensor x = testutil::random_tensor({1, 6, 32}, 12);
  attn::KvCache cache, fresh;
  REQUIRE(m.create_cache(6, 1, cache, attn::KvDtype::kF16).ok());
  REQUIRE(m.create_cache(6, 1, fresh, attn::KvDtype::kF16).ok());
  const std::vector<float> before = decode(m, x, cache, {3});
  attn::Tensor huge = rows(x, 3, 1);
  for (float& v : huge.data) v *= 1e6f;  // projections far past 65504
  attn::MhaForwardOptions o;
  o.causal = true;
  o.need_weights = false;
  attn::MhaResult r;
  const attn::Status st = m.forward_cached(huge, cache, o, r);
  REQUIRE(st.code == attn::StatusCode::kNonFinite);
  REQUIRE(st.message.find("float16") != std::string::npos);
  REQUIRE(cache.length == 3);
  // The cache goes on as if the refused step had never been: the same bits as a fresh one.
  const std::vector<float> went_on = decode(m, x, cache, {3}, 3);
  const std::vector<float> whole = decode(m, x, fresh, {3, 3});
  REQUIRE(std::vector<float>(whole.begin(), whole.begin() + before.size()) == before);
  REQUIRE(std::vector<float>(whole.begin() + before.size(), whole.end()) == went_on);
}

TEST_CASE("a float16 KV cache's traced keys and values are its float16 values, widened", "[kv_f16][cache]") {
  const attn::MultiHeadAttention m = gqa_rope_module();
  const attn::Tensor x = testutil::random_tensor({1, 5, 32}, 13);
  attn::MhaForwardOptions o;
  o.causal = true;
  attn::Trace t32, t16;
  for (const auto& [dtype, trace] :
       {std::pair{attn::KvDtype::kF32, &t32}, std::pair{attn::KvDtype::kF16, &t16}}) {
    attn::KvCache cache;
    REQUIRE(m.create_cache(5, 1, cache, dtype).ok());
    attn::MhaResult r;
    REQUIRE(m.forward_cached(x, cache, o, r, trace).ok());
  }
  for (const char* name : {"k_rotated", "v"}) {
    INFO(name);
    REQUIRE(t32.find(name) != nullptr);
    REQUIRE(t16.find(name) != nullptr);
    attn::Tensor want = t32.find(name)->tensor;  // the float32 cache's rows: the projections themselves
    to_half(want);                               // rounded to float16 and back
    REQUIRE(t16.find(name)->tensor.shape == want.shape);
    REQUIRE(t16.find(name)->tensor.data == want.data);
  }
}
