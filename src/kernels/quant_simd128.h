// SIMD128 helpers the int8 mode's twins share (quant_int8_simd128.cpp, quant_gemv_simd128.cpp): the
// block decodings both read, so the unpacked rows and the fused GEMV see the same quants.
#pragma once
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include <cstdint>

#include "kernels/quant.h"

namespace attn::kernels {

// Q5_0's fifth bits as 0x10 in the bytes of two vectors: byte j of `lo` where bit j of the 32-bit
// qh (little-endian at p) is set, byte j of `hi` where bit j + 16 is. One splat of the word, one
// shuffle per half (byte j ← the qh byte holding bit j), then a per-lane bit test.
inline void fifth_bits(const std::uint8_t* p, v128_t* lo, v128_t* hi) {
  const v128_t word = wasm_v128_load32_splat(p);
  const v128_t select = wasm_u8x16_make(1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128);
  const v128_t bit = wasm_i8x16_splat(0x10);
  const v128_t b0 = wasm_i8x16_shuffle(word, word, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
  const v128_t b1 = wasm_i8x16_shuffle(word, word, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
  *lo = wasm_v128_and(wasm_i8x16_eq(wasm_v128_and(b0, select), select), bit);
  *hi = wasm_v128_and(wasm_i8x16_eq(wasm_v128_and(b1, select), select), bit);
}

// The 32 quants of a Q4_0, Q4_1, Q5_0, Q5_1 or IQ4_NL block (after its float16 fields) as two
// vectors of bytes, elements 0–15 in lo and 16–31 in hi: signed with the offset removed (Q4_0 −8,
// Q5_0 −16), IQ4_NL's levels looked up, Q4_1 / Q5_1 unsigned (|q| ≤ 127 in every case).
inline void small_block_quants(bool five, bool offset_free, bool iq4_nl, const std::uint8_t* after_scales,
                               v128_t* lo, v128_t* hi) {
  const v128_t qs = wasm_v128_load(after_scales + (five ? 4 : 0));
  *lo = wasm_v128_and(qs, wasm_i8x16_splat(0x0F));
  *hi = wasm_u8x16_shr(qs, 4);
  if (iq4_nl) {
    const v128_t table = wasm_v128_load(kIQ4NLValues);
    *lo = wasm_i8x16_swizzle(table, *lo);
    *hi = wasm_i8x16_swizzle(table, *hi);
    return;
  }
  if (five) {
    v128_t high_lo, high_hi;
    fifth_bits(after_scales, &high_lo, &high_hi);
    *lo = wasm_v128_or(*lo, high_lo);
    *hi = wasm_v128_or(*hi, high_hi);
  }
  if (!offset_free) {
    const v128_t offset = wasm_i8x16_splat(five ? 16 : 8);
    *lo = wasm_i8x16_sub(*lo, offset);
    *hi = wasm_i8x16_sub(*hi, offset);
  }
}

// Q6_K: the unsigned 6-bit quants of elements l = 16·half … 16·half + 15 of each quarter of a 128
// (ql: that 128's 64 low-nibble bytes, qh: its 32 high-bit bytes), quarter q in v[q], in the layout
// of dequantize_row_q6_K (quarter q's scale is sc[half + 2q]; the value is sc · (q − 32)).
inline void q6_k_quants(const std::uint8_t* ql, const std::uint8_t* qh, int half, v128_t v[4]) {
  const v128_t low4 = wasm_i8x16_splat(0x0F), two = wasm_i8x16_splat(3);
  const v128_t a = wasm_v128_load(ql + 16 * half), c = wasm_v128_load(ql + 32 + 16 * half);
  const v128_t h = wasm_v128_load(qh + 16 * half);
  v[0] = wasm_v128_or(wasm_v128_and(a, low4), wasm_i8x16_shl(wasm_v128_and(h, two), 4));
  v[1] = wasm_v128_or(wasm_v128_and(c, low4), wasm_i8x16_shl(wasm_v128_and(wasm_u8x16_shr(h, 2), two), 4));
  v[2] = wasm_v128_or(wasm_u8x16_shr(a, 4), wasm_i8x16_shl(wasm_v128_and(wasm_u8x16_shr(h, 4), two), 4));
  v[3] = wasm_v128_or(wasm_u8x16_shr(c, 4), wasm_i8x16_shl(wasm_u8x16_shr(h, 6), 4));
}

// The sum of an i32x4's four lanes (exact).
inline std::int32_t sum_lanes(v128_t v) {
  const v128_t s = wasm_i32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  return wasm_i32x4_extract_lane(wasm_i32x4_add(s, wasm_i32x4_shuffle(s, s, 1, 0, 3, 2)), 0);
}

}  // namespace attn::kernels
#endif  // __wasm_simd128__
