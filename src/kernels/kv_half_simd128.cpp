// float32 → IEEE binary16 (the float16 KV cache), SIMD128: eight floats per step, branch-free, by
// another route than the scalar twin (kv_half_scalar.cpp) to the same bits. Normal halves round by
// adding 0xfff plus the lowest kept bit (ties to even) before the shift; subnormal ones by letting the
// float adder round: x + 0.5 puts x's value in units of 2^-24 in the sum's low mantissa bits, rounded
// to nearest even by the addition itself (wasm has no flush to zero).
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include "kernels/kernels.h"

namespace attn::kernels {

namespace {

// Four floats → four halves in the low 16 bits of each lane.
v128_t narrow4(v128_t f) {
  const v128_t sign = wasm_v128_and(f, wasm_i32x4_splat(static_cast<int>(0x80000000u)));
  f = wasm_v128_xor(f, sign);  // |x|'s bits
  // NaN → 0x7e00, inf and every magnitude from 65520 up → 0x7c00
  const v128_t is_nan = wasm_i32x4_gt(f, wasm_i32x4_splat(0x7f800000));
  const v128_t is_big = wasm_i32x4_ge(f, wasm_i32x4_splat(0x477ff000));
  const v128_t special = wasm_v128_bitselect(wasm_i32x4_splat(0x7e00), wasm_i32x4_splat(0x7c00), is_nan);
  // Below 2^-14: |x| + 0.5 (exponent of 2^-1, mantissa unit 2^-24) rounds |x| to the subnormal grid;
  // the sum's bits minus 0.5's are the half.
  const v128_t magic = wasm_i32x4_splat(0x3f000000);  // 0.5f
  const v128_t subnormal = wasm_i32x4_sub(wasm_f32x4_add(f, magic), magic);
  const v128_t is_small = wasm_i32x4_lt(f, wasm_i32x4_splat(0x38800000));
  // Normal: rebias (−112 in the exponent field), add 0xfff + the lowest kept bit, shift out 13 bits.
  const v128_t odd = wasm_v128_and(wasm_u32x4_shr(f, 13), wasm_i32x4_splat(1));
  const v128_t rounded =
      wasm_i32x4_add(wasm_i32x4_add(f, wasm_i32x4_splat(static_cast<int>(0xc8000fffu))), odd);
  const v128_t normal = wasm_u32x4_shr(rounded, 13);
  v128_t h = wasm_v128_bitselect(subnormal, normal, is_small);
  h = wasm_v128_bitselect(special, h, wasm_v128_or(is_nan, is_big));
  return wasm_v128_or(h, wasm_u32x4_shr(sign, 16));
}

}  // namespace

void narrow_f16_simd128(std::int64_t n, const float* x, std::uint16_t* y) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v128_t lo = narrow4(wasm_v128_load(x + i)), hi = narrow4(wasm_v128_load(x + i + 4));
    wasm_v128_store(y + i, wasm_u16x8_narrow_i32x4(lo, hi));  // every lane ≤ 0xfe00: no saturation
  }
  if (i < n) narrow_f16_scalar(n - i, x + i, y + i);
}

}  // namespace attn::kernels
#endif
