// float32 → IEEE binary16 (the float16 KV cache), scalar twin: the rounding done with integer
// arithmetic on the float's bits, one case at a time (kernels.h, narrow_f16).
#include <cstring>

#include "kernels/kernels.h"

namespace attn::kernels {

namespace {

std::uint16_t narrow_one(float value) {
  std::uint32_t f;
  std::memcpy(&f, &value, sizeof f);
  const std::uint32_t sign = (f >> 16) & 0x8000u;
  f &= 0x7fffffffu;
  if (f > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);  // NaN: quiet, its sign
  // 65520 = 0x477ff000 (the midpoint past 65504) and up: rounds away from every half, to inf.
  if (f >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (f < 0x38800000u) {  // below 2^-14: a subnormal half (or zero)
    // Value in units of 2^-24 (the subnormal step): mantissa with its implicit bit, shifted right by
    // (126 - exponent) - 10 ... done as a shift with round-to-nearest-even on the bits shifted out.
    const int exponent = static_cast<int>(f >> 23);
    if (exponent < 102) return static_cast<std::uint16_t>(sign);  // below 2^-25: rounds to zero
    const std::uint32_t mantissa = (f & 0x7fffffu) | 0x800000u;
    const int shift = 126 - exponent;  // 14 … 24 (exponent 102 … 112)
    std::uint32_t q = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1u), halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (q & 1u))) ++q;  // may carry into the smallest normal
    return static_cast<std::uint16_t>(sign | q);
  }
  // A normal half: rebias the exponent, keep 10 mantissa bits, round the 13 dropped ones to nearest
  // even (a carry out of the mantissa moves the exponent up, to inf at most: excluded above).
  std::uint32_t h = ((f >> 13) - (112u << 10));
  const std::uint32_t rest = f & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

}  // namespace

void narrow_f16_scalar(std::int64_t n, const float* x, std::uint16_t* y) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = narrow_one(x[i]);
}

}  // namespace attn::kernels
