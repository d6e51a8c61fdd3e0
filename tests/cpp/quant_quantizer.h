// A small quantizer of the test's own for every block format of quant_reference.h: plain
// max-abs / min-max rounding (not ggml's search for the best scales), writing each field at the
// bit address quant_reference.h reads it from. Its blocks are realistic (scales that fit the
// data, every quant used) and round-trip a row to within a few quantization steps.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "quant_reference.h"

namespace quant_test {

// Writes the `count` low bits of v at bit address `first` of p (the bits there must be 0).
inline void put_bits(std::uint8_t* p, int first, int count, unsigned v) {
  for (int b = 0; b < count; ++b)
    p[(first + b) / 8] |= static_cast<std::uint8_t>(((v >> b) & 1u) << ((first + b) % 8));
}

inline void put_half(std::uint8_t* block, int offset, double v) {
  const std::uint16_t h = half_bits(v);
  block[offset] = h & 0xff;
  block[offset + 1] = h >> 8;
}

inline int clamp_round(double v, int lo, int hi) {
  if (!(v == v)) return lo;  // NaN (a zero scale): the smallest quant
  return static_cast<int>(std::min<double>(hi, std::max<double>(lo, std::nearbyint(v))));
}

inline double amax(const float* x, int n) {
  double m = 0;
  for (int i = 0; i < n; ++i) m = std::max(m, std::fabs(static_cast<double>(x[i])));
  return m;
}

// 32-element formats: scale (and min) from the block's range, then each quant.
inline void quantize_small(int id, const float* x, std::uint8_t* b) {
  const double lo = *std::min_element(x, x + 32), hi = *std::max_element(x, x + 32), a = amax(x, 32);
  for (int i = 0; i < 32; ++i) {
    const int addr = 8 * (i % 16) + 4 * (i / 16);
    if (id == 2 || id == 6 || id == 8 || id == 20) {  // symmetric: x ≈ d · q
      const double dd = a / (id == 2 ? 7 : id == 6 ? 15 : 127);
      if (i == 0) put_half(b, 0, dd);
      const double d = half_at(b, 0), v = x[i] / d;
      if (id == 2) put_bits(b + 2, addr, 4, static_cast<unsigned>(clamp_round(v, -8, 7) + 8));
      if (id == 6) {
        const unsigned q = static_cast<unsigned>(clamp_round(v, -16, 15) + 16);
        put_bits(b + 6, addr, 4, q & 15);
        put_bits(b + 2, i, 1, q >> 4);
      }
      if (id == 8) b[2 + i] = static_cast<std::uint8_t>(static_cast<std::int8_t>(clamp_round(v, -127, 127)));
      if (id == 20) {
        int best = 0;
        for (int k = 1; k < 16; ++k)
          if (std::fabs(kIQ4NL[k] - v) < std::fabs(kIQ4NL[best] - v)) best = k;
        put_bits(b + 2, addr, 4, static_cast<unsigned>(best));
      }
    } else {  // Q4_1, Q5_1: x ≈ d · q + m
      const int qmax = id == 3 ? 15 : 31;
      if (i == 0) {
        put_half(b, 0, (hi - lo) / qmax);
        put_half(b, 2, lo);
      }
      const unsigned q = static_cast<unsigned>(clamp_round((x[i] - half_at(b, 2)) / half_at(b, 0), 0, qmax));
      put_bits(b + (id == 3 ? 4 : 8), addr, 4, q & 15);
      if (id == 7) put_bits(b + 4, i, 1, q >> 4);
    }
  }
}

// The super-block scale of `n` group values quantized to `levels` steps: d = max / levels.
inline double super_scale(const std::vector<double>& v, int levels) {
  double m = 0;
  for (double s : v) m = std::max(m, std::fabs(s));
  return m / levels;
}

// Q2_K, Q4_K, Q5_K: x ≈ d sc q - dmin mn per group, sc and mn quantized against d and dmin.
inline void quantize_k_min(int id, const float* x, std::uint8_t* b) {
  const int group = id == 10 ? 16 : 32, groups = 256 / group;
  const int qmax = id == 10 ? 3 : id == 12 ? 15 : 31, smax = id == 10 ? 15 : 63;
  std::vector<double> scale(groups), neg_min(groups);
  for (int g = 0; g < groups; ++g) {
    const float* xg = x + g * group;
    const double lo = std::min(0.0, static_cast<double>(*std::min_element(xg, xg + group)));
    neg_min[g] = -lo;
    scale[g] = (*std::max_element(xg, xg + group) - lo) / qmax;
  }
  const int dpos = id == 10 ? 80 : 0;
  put_half(b, dpos, super_scale(scale, smax));
  put_half(b, dpos + 2, super_scale(neg_min, smax));
  const double d = half_at(b, dpos), dmin = half_at(b, dpos + 2);
  for (int g = 0; g < groups; ++g) {
    const int sc = clamp_round(std::ceil(scale[g] / d), 0, smax),
              mn = clamp_round(neg_min[g] / dmin, 0, smax);
    if (id == 10) {
      b[g] = static_cast<std::uint8_t>(sc | (mn << 4));
    } else if (g < 4) {
      put_bits(b + 4, 8 * g, 6, static_cast<unsigned>(sc));
      put_bits(b + 4, 8 * (g + 4), 6, static_cast<unsigned>(mn));
    } else {
      put_bits(b + 4, 8 * (g + 4), 4, static_cast<unsigned>(sc & 15));
      put_bits(b + 4, 8 * (g + 4) + 4, 4, static_cast<unsigned>(mn & 15));
      put_bits(b + 4, 8 * (g - 4) + 6, 2, static_cast<unsigned>(sc >> 4));
      put_bits(b + 4, 8 * g + 6, 2, static_cast<unsigned>(mn >> 4));
    }
    for (int e = 0; e < group; ++e) {
      const int i = g * group + e, l = i % 32, half = i / 128, r = (i % 128) / 32;
      const unsigned q = static_cast<unsigned>(clamp_round((x[i] + dmin * mn) / (d * sc), 0, qmax));
      if (id == 10)
        put_bits(b + 16, 8 * (32 * half + l) + 2 * r, 2, q);
      else
        put_bits(b + (id == 12 ? 16 : 48), 8 * (32 * (i / 64) + l) + 4 * (g % 2), 4, q & 15);
      if (id == 13) put_bits(b + 16, 8 * l + g, 1, q >> 4);
    }
  }
}

// Q3_K and Q6_K: x ≈ d sc q per group of 16, sc signed (6 bits minus 32, or int8).
inline void quantize_k_signed(int id, const float* x, std::uint8_t* b) {
  const int qlo = id == 11 ? -4 : -32, qhi = id == 11 ? 3 : 31, smax = id == 11 ? 31 : 127;
  std::vector<double> scale(16);
  for (int g = 0; g < 16; ++g) scale[g] = amax(x + 16 * g, 16) / qhi;
  const int dpos = id == 11 ? 108 : 208;
  put_half(b, dpos, super_scale(scale, smax));
  const double d = half_at(b, dpos);
  for (int g = 0; g < 16; ++g) {
    const int sc = clamp_round(std::ceil(scale[g] / d), 0, smax);
    if (id == 11) {
      const unsigned s = static_cast<unsigned>(sc + 32);
      put_bits(b + 96, 8 * (g % 8) + 4 * (g / 8), 4, s & 15);
      put_bits(b + 96, 64 + 8 * (g % 4) + 2 * (g / 4), 2, s >> 4);
    } else {
      b[192 + g] = static_cast<std::uint8_t>(static_cast<std::int8_t>(sc));
    }
    for (int e = 0; e < 16; ++e) {
      const int i = 16 * g + e, l = i % 32, half = i / 128, r = (i % 128) / 32;
      const unsigned q = static_cast<unsigned>(clamp_round(x[i] / (d * sc), qlo, qhi) - qlo);
      if (id == 11) {
        put_bits(b + 32, 8 * (32 * half + l) + 2 * r, 2, q & 3);
        put_bits(b, 8 * l + 4 * half + r, 1, q >> 2);
      } else {
        put_bits(b, 8 * (64 * half + l + 32 * (r % 2)) + 4 * (r / 2), 4, q & 15);
        put_bits(b + 128, 8 * (32 * half + l) + 2 * r, 2, q >> 4);
      }
    }
  }
}

// The blocks of a row x (a whole number of blocks of t).
inline std::vector<std::uint8_t> quantize_row(const Layout& t, const std::vector<float>& x) {
  std::vector<std::uint8_t> out(x.size() / t.elements * t.bytes, 0);
  for (std::size_t k = 0; k < x.size() / t.elements; ++k) {
    const float* xb = &x[k * t.elements];
    std::uint8_t* b = &out[k * t.bytes];
    if (t.elements == 32)
      quantize_small(t.id, xb, b);
    else if (t.id == 11 || t.id == 14)
      quantize_k_signed(t.id, xb, b);
    else
      quantize_k_min(t.id, xb, b);
  }
  return out;
}

}  // namespace quant_test
