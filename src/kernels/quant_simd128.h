// SIMD128 helpers the int8 mode's twins share (quant_int8_simd128.cpp, quant_gemv_simd128.cpp).
#pragma once
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include <cstdint>

namespace attn::kernels {

// 0x10 in byte j of the result where bit j of the 16-bit mask `bits` is set (Q5_0's fifth bits).
inline v128_t fifth_bits(std::uint16_t bits) {
  const v128_t spread = wasm_i8x16_make(static_cast<std::int8_t>(bits & 0xFF), 0, 0, 0, 0, 0, 0, 0,
                                        static_cast<std::int8_t>(bits >> 8), 0, 0, 0, 0, 0, 0, 0);
  const v128_t bytes = wasm_i8x16_shuffle(spread, spread, 0, 0, 0, 0, 0, 0, 0, 0, 8, 8, 8, 8, 8, 8, 8, 8);
  const v128_t select = wasm_u8x16_make(1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128);
  const v128_t set = wasm_i8x16_ne(wasm_v128_and(bytes, select), wasm_i8x16_splat(0));
  return wasm_v128_and(set, wasm_i8x16_splat(0x10));
}

// The sum of an i32x4's four lanes (exact).
inline std::int32_t sum_lanes(v128_t v) {
  const v128_t s = wasm_i32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  return wasm_i32x4_extract_lane(wasm_i32x4_add(s, wasm_i32x4_shuffle(s, s, 1, 0, 3, 2)), 0);
}

}  // namespace attn::kernels
#endif  // __wasm_simd128__
