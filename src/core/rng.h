// Portable, counter-based random numbers: identical on every platform and compiler (native and
// wasm), because they use only integer arithmetic and exact float scaling. std::normal_distribution
// is implementation-defined, so it is never used.
#pragma once
#include <cstdint>

namespace attn {

// SplitMix64 finaliser: a well-mixed 64-bit hash of x.
std::uint64_t mix64(std::uint64_t x);
// Uniform in [0, 1) with 24 random bits, from (seed, counter): the same pair gives the same value.
float uniform01(std::uint64_t seed, std::uint64_t counter);
// Uniform in [-a, a).
float uniform_symmetric(std::uint64_t seed, std::uint64_t counter, float a);
// Approximately N(0, 1): the Irwin–Hall sum of 12 uniforms minus 6 (exact arithmetic, so
// bit-identical everywhere; tails are cut at ±6, which is fine for initialisation).
float approx_normal(std::uint64_t seed, std::uint64_t counter);

}  // namespace attn
