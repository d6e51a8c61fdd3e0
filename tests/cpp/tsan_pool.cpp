// The thread pool and the parallel GEMMs under ThreadSanitizer, without Catch2 (whose main takes
// ~19 s to compile) and without the core: scripts/tsan-pool.sh builds this file with the kernels
// (-fsanitize=thread) and runs it; any data race is a TSan report and a non-zero exit.
// What it does: parallel_for coverage at 1 … 4 threads, nested loops, two threads dispatching at
// once (one runs inline), an exception crossing from a worker, and every parallel GEMM entry point
// at 1 … 4 threads against its one-thread bits.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/parallel.h"

namespace k = attn::kernels;

namespace {

int failures = 0;

void check(bool ok, const char* what, int threads) {
  if (!ok) {
    std::fprintf(stderr, "tsan_pool: FAILED %s at %d threads\n", what, threads);
    ++failures;
  }
}

std::vector<float> values(std::size_t n, std::uint32_t seed) {
  std::vector<float> v(n);
  std::uint32_t x = seed * 2654435761u + 1;
  for (float& f : v) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    f = static_cast<float>(x % 2001) / 1000.0f - 1.0f;
  }
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

void coverage(int threads) {
  for (std::int64_t n : {1, 3, 64, 1001}) {
    std::vector<int> hits(static_cast<std::size_t>(n), 0);  // each index written by one part only
    k::parallel_for(n, 1, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) hits[static_cast<std::size_t>(i)]++;
      k::parallel_for(10, 1, [](std::int64_t, std::int64_t) {});  // nested: inline
    });
    bool once = true;
    for (int h : hits) once = once && h == 1;
    check(once, "parallel_for coverage", threads);
  }
}

void gemms(int threads, const std::vector<std::vector<float>>& want, bool record,
           std::vector<std::vector<float>>& got) {
  struct Dims {
    int m, n, k;
  };
  got.clear();
  for (Dims d : {Dims{67, 133, 97}, Dims{3, 1029, 600}}) {
    const auto A = values(static_cast<std::size_t>(d.m) * d.k, 1),
               B = values(static_cast<std::size_t>(d.k) * d.n, 2);
    const auto W = values(static_cast<std::size_t>(d.n) * d.k, 3),
               bias = values(static_cast<std::size_t>(d.n), 4);
    std::vector<float> packed(static_cast<std::size_t>(k::packed_weight_floats(d.n, d.k)));
    k::pack_weight(d.n, d.k, W.data(), d.k, packed.data());
    const std::size_t size = static_cast<std::size_t>(d.m) * d.n;
    std::vector<float> c(size);
    k::gemm_nn(d.m, d.n, d.k, A.data(), d.k, B.data(), d.n, c.data(), d.n, false);
    got.push_back(c);
    k::gemm_nt(d.m, d.n, d.k, A.data(), d.k, W.data(), d.k, c.data(), d.n, true);
    got.push_back(c);
    k::gemm_tn(d.m, d.n, d.k, values(static_cast<std::size_t>(d.k) * d.m, 5).data(), d.m, B.data(), d.n,
               c.data(), d.n, false);
    got.push_back(c);
    k::linear_nt(d.m, d.n, d.k, A.data(), d.k, W.data(), d.k, bias.data(), c.data(), d.n);
    got.push_back(c);
    k::linear_nt_packed(d.m, d.n, d.k, A.data(), d.k, packed.data(), bias.data(), c.data(), d.n);
    got.push_back(c);
  }
  // The int8 mode (Q8_0 blocks, d = 2^-7): split by rows (the GEMM) and, at m = 1, by columns (the
  // GEMV); its workers read the calling thread's quantized activations.
  for (Dims d : {Dims{24, 48, 512}, Dims{1, 1100, 512}}) {
    const std::size_t row_bytes = static_cast<std::size_t>(d.k) / 32 * 34;
    std::vector<std::uint8_t> W(row_bytes * d.n);
    for (std::size_t i = 0; i < W.size(); ++i) W[i] = static_cast<std::uint8_t>((i * 2654435761u) >> 24);
    for (std::size_t blk = 0; blk < W.size() / 34; ++blk) {
      W[blk * 34] = 0x00;
      W[blk * 34 + 1] = 0x20;
    }
    const auto A = values(static_cast<std::size_t>(d.m) * d.k, 6),
               bias = values(static_cast<std::size_t>(d.n), 7);
    std::vector<float> c(static_cast<std::size_t>(d.m) * d.n);
    check(k::linear_nt_int8(d.m, d.n, d.k, A.data(), d.k, W.data(), row_bytes, 8, bias.data(), c.data(), d.n),
          "int8 product", threads);
    got.push_back(c);
  }
  if (!record)
    for (std::size_t i = 0; i < got.size(); ++i) check(same_bits(got[i], want[i]), "GEMM bits", threads);
}

}  // namespace

int main() {
  const int pool = k::start_thread_pool(4);
  if (pool != 4) {
    std::fprintf(stderr, "tsan_pool: pool of %d, want 4\n", pool);
    return 1;
  }
  std::vector<std::vector<float>> one, got;
  k::set_thread_count(1);
  gemms(1, one, true, one);
  for (int threads = 1; threads <= pool; ++threads) {
    k::set_thread_count(threads);
    coverage(threads);
    gemms(threads, one, false, got);
  }
  // Two threads dispatching at once: one gets the pool, the other runs its loop inline.
  std::atomic<std::int64_t> total{0};
  auto job = [&] {
    for (int r = 0; r < 50; ++r)
      k::parallel_for(400, 1, [&](std::int64_t b, std::int64_t e) { total += e - b; });
  };
  std::thread other(job);
  job();
  other.join();
  check(total.load() == 2 * 50 * 400, "concurrent dispatch", pool);
  // An exception in a worker's part reaches the caller; the pool keeps working.
  bool caught = false;
  try {
    k::parallel_for(100, 1, [](std::int64_t b, std::int64_t e) {
      if (b <= 99 && 99 < e) throw std::runtime_error("part failed");
    });
  } catch (const std::runtime_error&) {
    caught = true;
  }
  check(caught, "exception from a worker", pool);
  coverage(pool);
  if (failures == 0) std::printf("tsan_pool: ok (pool of %d, 1 … %d threads)\n", pool, pool);
  return failures == 0 ? 0 : 1;
}
