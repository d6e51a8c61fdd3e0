// mul_add(a, b, acc) = a·b + acc per f32x4 lane, for the SIMD128 kernels (GEMM micro-kernel, exp).
// Only included under __wasm_simd128__.
//
// In the relaxed-SIMD build (ATTN_RELAXED_SIMD, -mrelaxed-simd) it is one fused multiply-add:
// SIMD128's mul + add is two instructions, and the 4×8 GEMM micro-kernel is limited by how many
// instructions the CPU can issue (~87% of the two-pipe peak), not by the pipes; with
// f32x4.relaxed_madd it runs at ~100% (53 GFLOP/s here, against 46). Relaxed SIMD lets the engine
// fuse or not (one rounding or two), so results may differ from the SIMD128 build in the last bits.
// Clang 14 (Debian's Emscripten 3.1.6) knows this instruction only under its prototype name
// `f32x4.fma` with the prototype opcode 0xfd 0xaf 0x01; scripts/patch-relaxed-simd.mjs rewrites each
// of them in the linked .wasm to the standardised f32x4.relaxed_madd (0xfd 0x85 0x02), which
// computes a·b + c from the same three operands in the same order (the kernel tests of that build
// check the results against the double reference).
#pragma once
#include <wasm_simd128.h>

namespace attn::kernels {

inline v128_t mul_add(v128_t a, v128_t b, v128_t acc) {
#if defined(ATTN_RELAXED_SIMD)
  typedef float f32x4_t __attribute__((vector_size(16)));
  return (v128_t)__builtin_wasm_fma_f32x4((f32x4_t)a, (f32x4_t)b, (f32x4_t)acc);
#else
  return wasm_f32x4_add(acc, wasm_f32x4_mul(a, b));
#endif
}

}  // namespace attn::kernels
