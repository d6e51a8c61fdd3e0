// What the [parallel] tests share (test_parallel.cpp, test_parallel_models.cpp): the thread counts
// to compare, bit equality, and "f() gives one thread's bits at every count, and really split".
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "kernels/parallel.h"
#include "test_helpers.h"

namespace testutil {

namespace k = attn::kernels;

// Thread counts to compare: 1 … 4 where the build has threads (the pool grows to 4 even on a
// 2-core machine: the partition, not the speed, is under test).
inline std::vector<int> thread_counts() {
  const int pool = k::start_thread_pool(4);
  // Under Emscripten the workers start asynchronously (preallocated here: PTHREAD_POOL_SIZE=4).
  for (int spins = 0; k::thread_pool_ready() < pool && spins < 10'000'000; ++spins) std::this_thread::yield();
  REQUIRE(k::thread_pool_ready() == pool);
  std::vector<int> out;
  for (int n = 1; n <= pool; ++n) out.push_back(n);
  return out;
}

// Same bits (NaN payloads included), element for element.
inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// f() at every thread count must return the bits it returns at one thread.
template <class F>
void require_same_at_every_count(const char* what, F&& f) {
  const std::vector<int> counts = thread_counts();
  REQUIRE(k::set_thread_count(1));
  const std::vector<float> one = f();
  REQUIRE(!one.empty());
  for (int n : counts) {
    REQUIRE(k::set_thread_count(n));
    INFO(what << " at " << n << " threads");
    const std::uint64_t jobs = k::pool_jobs();
    REQUIRE(same_bits(f(), one));
    if (n > 1) REQUIRE(k::pool_jobs() > jobs);  // the case really was split
  }
  REQUIRE(k::set_thread_count(k::thread_pool_size()));
}

inline std::vector<float> randoms(std::size_t n, std::uint64_t seed) {
  return testutil::random_tensor({static_cast<int>(n)}, seed).data;
}

}  // namespace testutil
