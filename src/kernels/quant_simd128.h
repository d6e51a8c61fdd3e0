// SIMD128 helpers the int8 mode's twins share (quant_int8_simd128.cpp, quant_gemv_simd128.cpp).
#pragma once
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include <cstdint>

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

// The sum of an i32x4's four lanes (exact).
inline std::int32_t sum_lanes(v128_t v) {
  const v128_t s = wasm_i32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  return wasm_i32x4_extract_lane(wasm_i32x4_add(s, wasm_i32x4_shuffle(s, s, 1, 0, 3, 2)), 0);
}

}  // namespace attn::kernels
#endif  // __wasm_simd128__
