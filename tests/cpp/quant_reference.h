// Double-precision references of ggml's block formats, written from the block layouts
// (ggml-common.h) independently of src/kernels/quant_scalar.cpp: each element is located by the bit
// address of its fields in the block's bytes (bit b of a field array = bit b % 8 of byte b / 8) and
// its value computed in double. Also the layout facts the tests need (block sizes, where the
// float16 scales sit) and float16 encoding and decoding.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace quant_test {

// One type's layout: ggml id, elements and bytes per block, byte offsets of its float16 fields.
struct Layout {
  int id;
  const char* name;
  int elements;
  int bytes;
  std::vector<int> halves;
};

// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K.
inline const std::vector<Layout>& layouts() {
  static const std::vector<Layout> all = {
      {2, "Q4_0", 32, 18, {0}},        {3, "Q4_1", 32, 20, {0, 2}},   {6, "Q5_0", 32, 22, {0}},
      {7, "Q5_1", 32, 24, {0, 2}},     {8, "Q8_0", 32, 34, {0}},      {20, "IQ4_NL", 32, 18, {0}},
      {10, "Q2_K", 256, 84, {80, 82}}, {11, "Q3_K", 256, 110, {108}}, {12, "Q4_K", 256, 144, {0, 2}},
      {13, "Q5_K", 256, 176, {0, 2}},  {14, "Q6_K", 256, 210, {208}},
  };
  return all;
}

// The value of a float16 bit pattern from its fields: (-1)^s 2^(e-15) (1 + m/1024), subnormals
// 2^-14 m/1024, exponent 31 ±inf / NaN.
inline double half_value(std::uint16_t h) {
  const int e = (h >> 10) & 31, m = h & 1023;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 31) return m ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
  return sign * (e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25));
}

// The float16 nearest to v (ties to even; overflow to ±inf), by search over the finite patterns'
// values: slow, obviously right, and only used to make test blocks.
inline std::uint16_t half_bits(double v) {
  const std::uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  if (!(a < 65520.0)) return sign | 0x7c00;  // ≥ 65504 + half an ulp rounds to inf
  std::uint16_t lo = 0, hi = 0x7bff;         // largest pattern with value ≤ a, by bisection
  while (lo < hi) {
    const std::uint16_t mid = static_cast<std::uint16_t>((lo + hi + 1) / 2);
    if (half_value(mid) <= a)
      lo = mid;
    else
      hi = static_cast<std::uint16_t>(mid - 1);
  }
  std::uint16_t best = lo;
  if (lo < 0x7bff) {
    const double below = a - half_value(lo), above = half_value(lo + 1) - a;
    if (above < below || (above == below && (lo & 1))) best = static_cast<std::uint16_t>(lo + 1);
  }
  return sign | best;
}

// `count` bits starting at bit address `first` of p, least significant first.
inline unsigned bits(const std::uint8_t* p, int first, int count) {
  unsigned v = 0;
  for (int b = 0; b < count; ++b) v |= ((p[(first + b) / 8] >> ((first + b) % 8)) & 1u) << b;
  return v;
}

inline double half_at(const std::uint8_t* block, int offset) {
  return half_value(static_cast<std::uint16_t>(block[offset] | (block[offset + 1] << 8)));
}

// IQ4_NL's levels, ggml's kvalues_iq4nl.
constexpr int kIQ4NL[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// Types with 32-element blocks: the 4 low bits of element i are the low nibble of quant byte i for
// i < 16, the high nibble of byte i - 16 after; Q5's 5th bit is bit i of the 32 qh bits.
inline double ref_small(int id, const std::uint8_t* b, int i) {
  const int nib_addr = 8 * (i % 16) + 4 * (i / 16);
  switch (id) {
    case 2:
      return half_at(b, 0) * (static_cast<int>(bits(b + 2, nib_addr, 4)) - 8);
    case 3:
      return half_at(b, 0) * bits(b + 4, nib_addr, 4) + half_at(b, 2);
    case 6:
      return half_at(b, 0) * (static_cast<int>(bits(b + 6, nib_addr, 4) + 16 * bits(b + 2, i, 1)) - 16);
    case 7:
      return half_at(b, 0) * (bits(b + 8, nib_addr, 4) + 16 * bits(b + 4, i, 1)) + half_at(b, 2);
    case 8:
      return half_at(b, 0) * static_cast<std::int8_t>(b[2 + i]);
    case 20:
      return half_at(b, 0) * kIQ4NL[bits(b + 2, nib_addr, 4)];
  }
  return NAN;
}

// Q3_K's 6-bit scale of group g (0..15): low nibble at bit 8 (g % 8) + 4 (g / 8) of the 12 scale
// bytes, top 2 bits at bit 64 + 8 (g % 4) + 2 (g / 4).
inline int q3k_scale(const std::uint8_t* s, int g) {
  return static_cast<int>(bits(s, 8 * (g % 8) + 4 * (g / 8), 4) |
                          (bits(s, 64 + 8 * (g % 4) + 2 * (g / 4), 2) << 4));
}

// Q4_K / Q5_K's 6-bit scale (which 0) or min (which 1) of group g (0..7) in the 12 scale bytes:
// groups 0-3 whole in bytes g (scale) and g + 4 (min); groups 4-7 a nibble of byte g + 4 (low:
// scale, high: min) and 2 top bits at the top of byte g - 4 (scale) or g (min).
inline int k4_field(const std::uint8_t* s, int g, int which) {
  if (g < 4) return static_cast<int>(bits(s, 8 * (g + 4 * which), 6));
  const int top = which == 0 ? g - 4 : g;
  return static_cast<int>(bits(s, 8 * (g + 4) + 4 * which, 4) | (bits(s, 8 * top + 6, 2) << 4));
}

// Element i of a K-quant super-block. Within each half (128 elements) of the block, Q2_K and Q3_K
// put element 32 j + l in bits 2 j of byte l of that half's 32 quant bytes; Q4_K / Q5_K put
// element 64 c + 32 h + l in nibble h of byte 32 c + l; Q6_K puts quarter r of a half in nibble
// r / 2 of byte l + 32 (r % 2) of that half's 64 low bytes and its top 2 bits at 2 r of byte l.
inline double ref_k(int id, const std::uint8_t* b, int i) {
  const int half = i / 128, r = (i % 128) / 32, l = i % 32, g16 = i / 16, g32 = i / 32;
  switch (id) {
    case 10: {  // scales[16] qs[64] d dmin
      const unsigned q = bits(b + 16, 8 * (32 * half + l) + 2 * r, 2);
      return half_at(b, 80) * (b[g16] & 15) * q - half_at(b, 82) * (b[g16] >> 4);
    }
    case 11: {  // hmask[32] qs[64] scales[12] d; the high bit of element i: bit 4 half + r of hmask[l]
      const int low = static_cast<int>(bits(b + 32, 8 * (32 * half + l) + 2 * r, 2));
      const int high = static_cast<int>(bits(b, 8 * l + 4 * half + r, 1));
      return half_at(b, 108) * (q3k_scale(b + 96, g16) - 32) * (low + 4 * high - 4);
    }
    case 12:
    case 13: {  // d dmin scales[12] (qh[32]) qs[128]; Q5_K's 5th bit: bit g32 of qh[l]
      const int qs = id == 12 ? 16 : 48;
      const unsigned q = bits(b + qs, 8 * (32 * (i / 64) + l) + 4 * (g32 % 2), 4) +
                         (id == 13 ? 16 * bits(b + 16, 8 * l + g32, 1) : 0);
      return half_at(b, 0) * k4_field(b + 4, g32, 0) * q - half_at(b, 2) * k4_field(b + 4, g32, 1);
    }
    case 14: {  // ql[128] qh[64] scales[16] d
      const unsigned low = bits(b, 8 * (64 * half + l + 32 * (r % 2)) + 4 * (r / 2), 4);
      const unsigned high = bits(b + 128, 8 * (32 * half + l) + 2 * r, 2);
      return half_at(b, 208) * static_cast<std::int8_t>(b[192 + g16]) *
             (static_cast<int>(low + 16 * high) - 32);
    }
  }
  return NAN;
}

// The reference row of `blocks` bytes of type `t`: every element of every block.
inline std::vector<double> reference_row(const Layout& t, const std::vector<std::uint8_t>& blocks) {
  std::vector<double> y;
  for (std::size_t at = 0; at + t.bytes <= blocks.size(); at += t.bytes)
    for (int i = 0; i < t.elements; ++i)
      y.push_back(t.elements == 256 ? ref_k(t.id, &blocks[at], i) : ref_small(t.id, &blocks[at], i));
  return y;
}

}  // namespace quant_test
