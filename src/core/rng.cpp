#include "core/rng.h"

namespace attn {

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

float uniform01(std::uint64_t seed, std::uint64_t counter) {
  // Two rounds so that nearby seeds and counters decorrelate. 24 bits fit a float mantissa exactly.
  const std::uint64_t bits = mix64(mix64(seed) ^ counter);
  return static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);
}

float uniform_symmetric(std::uint64_t seed, std::uint64_t counter, float a) {
  return (2.0f * uniform01(seed, counter) - 1.0f) * a;
}

float approx_normal(std::uint64_t seed, std::uint64_t counter) {
  float sum = 0.0f;
  for (std::uint64_t i = 0; i < 12; ++i) sum += uniform01(seed, counter * 12 + i);
  return sum - 6.0f;
}

}  // namespace attn
