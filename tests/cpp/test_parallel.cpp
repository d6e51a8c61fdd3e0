// The thread pool (kernels/parallel.h) and the parallel kernels: parallel_for covers every index
// once, in contiguous parts; nested loops run inline; the pool's size and thread count are checked;
// and every parallel product and attention path gives the same bits at 1, 2, 3 and 4 threads
// (docs/threads.md). In a build without threads the pool has one thread and only that is checked.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/attention.h"
#include "core/attention_backward.h"
#include "core/multi_head.h"
#include "kernels/kernels.h"
#include "kernels/parallel.h"
#include "parallel_check.h"
#include "test_helpers.h"

namespace k = attn::kernels;
using testutil::randoms;
using testutil::require_same_at_every_count;
using testutil::same_bits;
using testutil::thread_counts;

TEST_CASE("parallel_for: every index once, in contiguous parts", "[parallel]") {
  for (int threads : thread_counts()) {
    REQUIRE(k::set_thread_count(threads));
    for (std::int64_t n : {1, 2, 3, 7, 64, 1001}) {
      std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
      std::vector<std::int64_t> begins(static_cast<std::size_t>(threads),
                                       -1);  // written by the parts, checked here
      const int parts = k::parallel_parts(n, 1);
      REQUIRE(parts == static_cast<int>(std::min<std::int64_t>(n, threads)));
      k::parallel_for_parts(n, parts, [&](int part, std::int64_t b, std::int64_t e) {
        begins[static_cast<std::size_t>(part)] = b;
        for (std::int64_t i = b; i < e; ++i) hits[static_cast<std::size_t>(i)]++;
      });
      for (auto& h : hits) REQUIRE(h.load() == 1);
      for (int t = 0; t < parts; ++t) REQUIRE(begins[static_cast<std::size_t>(t)] == n * t / parts);
    }
  }
}

TEST_CASE("parallel_for: the parts run on different threads", "[parallel]") {
  if (!k::threads_supported()) return;
  // thread_counts() starts the pool and waits for its workers (under Emscripten they start
  // asynchronously: run alone, this case used to find only 2 of the 4 running).
  REQUIRE(thread_counts().back() == 4);
  REQUIRE(k::set_thread_count(4));
  std::vector<std::thread::id> ids(4);
  k::parallel_for_parts(4, 4, [&](int part, std::int64_t, std::int64_t) {
    ids[static_cast<std::size_t>(part)] = std::this_thread::get_id();
  });
  REQUIRE(std::set<std::thread::id>(ids.begin(), ids.end()).size() == 4);
  REQUIRE(ids[0] == std::this_thread::get_id());  // part 0 runs on the caller
}

TEST_CASE("parallel_for: small loops and nested loops stay on one thread", "[parallel]") {
  thread_counts();
  REQUIRE(k::parallel_parts(10, 6) == 1);  // fewer than two parts' worth
  std::atomic<int> inner_parts{0};
  k::parallel_for(8, 1, [&](std::int64_t, std::int64_t) {
    inner_parts += k::parallel_parts(1000, 1);  // inside a part: 1
  });
  REQUIRE(inner_parts.load() == k::parallel_parts(8, 1));
}

TEST_CASE("thread pool: the demo shape never wakes a worker; a large product does", "[parallel]") {
  thread_counts();  // all 4 threads in use
  attn::MhaConfig c;
  c.embed_dim = 64;
  c.num_heads = 4;
  attn::MultiHeadAttention demo;
  REQUIRE(attn::MultiHeadAttention::create(c, demo).ok());
  const attn::Tensor x = testutil::random_tensor({1, 16, 64}, 61);
  const std::uint64_t before = k::pool_jobs();
  attn::MhaResult r;
  attn::MhaSaved saved;
  REQUIRE(demo.forward_saving(x, nullptr, nullptr, attn::MhaForwardOptions{}, r, saved).ok());
  attn::MhaGrads grads;
  REQUIRE(demo.backward(saved, x, grads).ok());
  REQUIRE(k::pool_jobs() == before);
  const std::vector<float> A = randoms(256 * 256, 62);
  std::vector<float> C(A.size());
  k::gemm_nn(256, 256, 256, A.data(), 256, A.data(), 256, C.data(), 256, false);
  REQUIRE(k::pool_jobs() == before + (k::threads_supported() ? 1 : 0));
}

TEST_CASE("thread pool: size, thread count and refused counts", "[parallel]") {
  const int pool = k::start_thread_pool(4);
  REQUIRE(pool == (k::threads_supported() ? 4 : 1));
  REQUIRE(k::thread_pool_size() == pool);
  REQUIRE(k::thread_count() == pool);
  REQUIRE_FALSE(k::set_thread_count(0));
  REQUIRE_FALSE(k::set_thread_count(-1));
  REQUIRE_FALSE(k::set_thread_count(pool + 1));
  REQUIRE(k::thread_count() == pool);  // unchanged by a refusal
  REQUIRE(k::set_thread_count(1));
  REQUIRE(k::thread_count() == 1);
  REQUIRE(k::set_thread_count(pool));
}

TEST_CASE("thread pool: an exception in a part reaches the caller", "[parallel]") {
#if defined(__EMSCRIPTEN__)
  // The wasm libraries are built without exception catching (only the test binary has it), so a
  // throw in a worker would end that worker; the kernels never throw (docs/threads.md).
  return;
#endif
  thread_counts();
  REQUIRE_THROWS_AS(k::parallel_for(100, 1,
                                    [](std::int64_t b, std::int64_t e) {
                                      if (b <= 99 && 99 < e) throw std::runtime_error("part failed");
                                    }),
                    std::runtime_error);
  // The pool still works afterwards.
  std::atomic<int> sum{0};
  k::parallel_for(100, 1, [&](std::int64_t b, std::int64_t e) { sum += static_cast<int>(e - b); });
  REQUIRE(sum.load() == 100);
}

TEST_CASE("parallel GEMMs: the same bits at every thread count", "[parallel]") {
  // (M, N, K): rows split (tall), columns split (M too small to split rows), ragged edges.
  struct Dims {
    int m, n, k;
  };
  for (Dims d : {Dims{67, 133, 97}, Dims{3, 1029, 600}, Dims{1, 2051, 320}, Dims{300, 9, 260}}) {
    INFO("M " << d.m << " N " << d.n << " K " << d.k);
    const std::vector<float> A = randoms(static_cast<std::size_t>(d.m) * d.k, 1);   // (M, K)
    const std::vector<float> At = randoms(static_cast<std::size_t>(d.k) * d.m, 2);  // (K, M)
    const std::vector<float> B = randoms(static_cast<std::size_t>(d.k) * d.n, 3);   // (K, N)
    const std::vector<float> W = randoms(static_cast<std::size_t>(d.n) * d.k, 4);   // (N, K)
    const std::vector<float> bias = randoms(static_cast<std::size_t>(d.n), 5);
    const std::vector<float> C0 = randoms(static_cast<std::size_t>(d.m) * d.n, 6);  // accumulated onto
    std::vector<float> packed(static_cast<std::size_t>(k::packed_weight_floats(d.n, d.k)));
    k::pack_weight(d.n, d.k, W.data(), d.k, packed.data());
    std::vector<std::uint16_t> W16(W.size());
    for (std::size_t i = 0; i < W.size(); ++i) {
      std::uint32_t bits;
      std::memcpy(&bits, &W[i], 4);
      W16[i] = static_cast<std::uint16_t>(bits >> 16);  // bfloat16 by truncation
    }
    require_same_at_every_count("gemm_nn", [&] {
      std::vector<float> C = C0;
      k::gemm_nn(d.m, d.n, d.k, A.data(), d.k, B.data(), d.n, C.data(), d.n, true);
      return C;
    });
    require_same_at_every_count("gemm_nt", [&] {
      std::vector<float> C(C0.size());
      k::gemm_nt(d.m, d.n, d.k, A.data(), d.k, W.data(), d.k, C.data(), d.n, false);
      return C;
    });
    require_same_at_every_count("gemm_tn", [&] {
      std::vector<float> C = C0;
      k::gemm_tn(d.m, d.n, d.k, At.data(), d.m, B.data(), d.n, C.data(), d.n, true);
      return C;
    });
    require_same_at_every_count("linear_nt", [&] {
      std::vector<float> C(C0.size());
      k::linear_nt(d.m, d.n, d.k, A.data(), d.k, W.data(), d.k, bias.data(), C.data(), d.n);
      return C;
    });
    require_same_at_every_count("linear_nt_packed", [&] {
      std::vector<float> C(C0.size());
      k::linear_nt_packed(d.m, d.n, d.k, A.data(), d.k, packed.data(), bias.data(), C.data(), d.n);
      return C;
    });
    require_same_at_every_count("linear_nt_half", [&] {
      std::vector<float> C(C0.size());
      k::linear_nt_half(d.m, d.n, d.k, A.data(), d.k, W16.data(), d.k, k::HalfFormat::kBF16, nullptr,
                        C.data(), d.n);
      return C;
    });
  }
}

// The property the GEMM split relies on, checked in every build (the wasm suites have no threads
// but run the SIMD128 kernels): a product computed block by block (rows split anywhere, columns
// split at multiples of 8) equals the whole product bit for bit.
TEST_CASE("GEMM blocks: rows and 8-column panels computed apart give the whole product's bits",
          "[parallel]") {
  const int M = 37, N = 70, K = 803;  // K over one K slice of the SIMD128 GEMM (768)
  const std::vector<float> A = randoms(static_cast<std::size_t>(M) * K, 51),
                           B = randoms(static_cast<std::size_t>(K) * N, 52);
  const std::vector<float> W = randoms(static_cast<std::size_t>(N) * K, 53), bias = randoms(N, 54);
  std::vector<float> packed(static_cast<std::size_t>(k::packed_weight_floats(N, K)));
  k::pack_weight(N, K, W.data(), K, packed.data());
  const std::size_t size = static_cast<std::size_t>(M) * N;
  std::vector<float> whole_nn(size), whole_lin(size), whole_packed(size);
  REQUIRE(k::set_thread_count(1));
  k::gemm_nn(M, N, K, A.data(), K, B.data(), N, whole_nn.data(), N, false);
  k::linear_nt(M, N, K, A.data(), K, W.data(), K, bias.data(), whole_lin.data(), N);
  k::linear_nt_packed(M, N, K, A.data(), K, packed.data(), bias.data(), whole_packed.data(), N);
  for (int i0 : {0, 1, 5, 13, 36})
    for (int j0 : {0, 8, 16, 40, 64}) {
      INFO("blocks at row " << i0 << ", column " << j0);
      std::vector<float> nn(size), lin(size), pk(size);
      for (int ib = 0; ib < 2; ++ib)
        for (int jb = 0; jb < 2; ++jb) {
          const int r0 = ib ? i0 : 0, m = ib ? M - i0 : i0, c0 = jb ? j0 : 0, n = jb ? N - j0 : j0;
          if (m == 0 || n == 0) continue;
          const std::ptrdiff_t a = static_cast<std::ptrdiff_t>(r0) * K,
                               c = static_cast<std::ptrdiff_t>(r0) * N + c0;
          k::gemm_nn(m, n, K, A.data() + a, K, B.data() + c0, N, nn.data() + c, N, false);
          k::linear_nt(m, n, K, A.data() + a, K, W.data() + static_cast<std::ptrdiff_t>(c0) * K, K,
                       bias.data() + c0, lin.data() + c, N);
          k::linear_nt_packed(m, n, K, A.data() + a, K, packed.data() + static_cast<std::ptrdiff_t>(c0) * K,
                              bias.data() + c0, pk.data() + c, N);
        }
      REQUIRE(same_bits(nn, whole_nn));
      REQUIRE(same_bits(lin, whole_lin));
      REQUIRE(same_bits(pk, whole_packed));
    }
  REQUIRE(k::set_thread_count(k::thread_pool_size()));
}

TEST_CASE("parallel attention: the same bits at every thread count", "[parallel]") {
  using testutil::random_tensor;
  SECTION("SDPA, full path: weights, causal, dropout, trace") {
    const attn::Tensor q = random_tensor({2, 3, 70, 16}, 11), kk = random_tensor({2, 3, 90, 16}, 12),
                       v = random_tensor({2, 3, 90, 24}, 13);
    for (int variant = 0; variant < 3; ++variant) {
      INFO("variant " << variant);
      require_same_at_every_count("sdpa", [&] {
        attn::SdpaOptions o;
        o.causal = variant != 1;
        if (variant == 1) o.dropout = {0.25f, 7};
        attn::SdpaResult r;
        attn::Trace trace;
        REQUIRE(attn::scaled_dot_product_attention(q, kk, v, o, r, variant == 2 ? &trace : nullptr).ok());
        std::vector<float> all = r.output.data;
        all.insert(all.end(), r.weights.data.begin(), r.weights.data.end());
        return all;
      });
    }
  }
  SECTION("SDPA, tiled path (long rows), grouped-query heads, sliding window") {
    const attn::Tensor q = random_tensor({1, 4, 300, 16}, 21), kk = random_tensor({1, 2, 600, 16}, 22),
                       v = random_tensor({1, 2, 600, 16}, 23);
    for (int window : {0, 100}) {
      INFO("window " << window);
      require_same_at_every_count("sdpa tiled", [&] {
        attn::SdpaOptions o;
        o.need_weights = false;
        o.enable_gqa = true;
        o.causal = window > 0;
        if (window > 0) o.positions.window = window;
        attn::SdpaResult r;
        REQUIRE(attn::scaled_dot_product_attention(q, kk, v, o, r).ok());
        return r.output.data;
      });
    }
  }
  SECTION("SDPA backward, grouped-query heads, dropout") {
    // 6 query heads reading 2 key/value heads: dK, dV sum over the 3 heads of each group.
    const attn::Tensor q = random_tensor({2, 6, 80, 16}, 31), kk = random_tensor({2, 2, 80, 16}, 32),
                       v = random_tensor({2, 2, 80, 16}, 33), g = random_tensor({2, 6, 80, 16}, 34);
    require_same_at_every_count("sdpa backward", [&] {
      attn::SdpaOptions o;
      o.causal = true;
      o.enable_gqa = true;
      o.dropout = {0.1f, 3};
      attn::SdpaGrads grads;
      REQUIRE(attn::scaled_dot_product_attention_backward(q, kk, v, g, o, grads).ok());
      std::vector<float> all = grads.q.data;
      all.insert(all.end(), grads.k.data.begin(), grads.k.data.end());
      all.insert(all.end(), grads.v.data.begin(), grads.v.data.end());
      return all;
    });
  }
  SECTION("multi-head attention: averaged and per-head weights, forward and backward") {
    attn::MhaConfig c;
    c.embed_dim = 64;
    c.num_heads = 4;
    c.seed = 5;
    attn::MultiHeadAttention mha;
    REQUIRE(attn::MultiHeadAttention::create(c, mha).ok());
    const attn::Tensor x = random_tensor({3, 50, 64}, 41), g = random_tensor({3, 50, 64}, 42);
    for (bool average : {true, false}) {
      INFO("average " << average);
      require_same_at_every_count("mha", [&] {
        attn::MhaForwardOptions o;
        o.causal = true;
        o.average_weights = average;
        attn::MhaResult r;
        attn::MhaSaved saved;
        REQUIRE(mha.forward_saving(x, nullptr, nullptr, o, r, saved).ok());
        attn::MhaGrads grads;
        REQUIRE(mha.backward(saved, g, grads).ok());
        std::vector<float> all = r.output.data;
        all.insert(all.end(), r.weights.data.begin(), r.weights.data.end());
        all.insert(all.end(), grads.query.data.begin(), grads.query.data.end());
        for (const auto& p : grads.params) all.insert(all.end(), p.second.data.begin(), p.second.data.end());
        return all;
      });
    }
  }
}
