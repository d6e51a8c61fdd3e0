// The int8 mode's fused GEMV (quant_int8.h gemv_int8_simd128): decoding multiplies each weight once
// per token (M = 1), so unpacking a row into 16-bit integers and reading it back (the GEMM's way,
// which pays off over many activation rows) would be most of the work. Here each block's quants go
// from its bytes into registers and meet the activation bytes in i16x8.extmul_{low,high}_i8x16_s:
// the 16-bit products of a few vectors are added in 16 bits (bounded below), widened pairwise to
// 32 bits, multiplied by the group's integer scale and accumulated. Every integer step is exact, so
// each block's Σq·a equals the scalar twin's, and its float term is the same add_block_term.
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include <cstring>

#include "kernels/quant.h"
#include "kernels/quant_int8.h"
#include "kernels/quant_simd128.h"

namespace attn::kernels {

namespace {

// Σ w·x over 16 signed bytes each, as four 32-bit lanes (products ≤ 128·127: two fit 16 bits).
inline v128_t dot16(v128_t w, v128_t x) {
  return wasm_i32x4_extadd_pairwise_i16x8(
      wasm_i16x8_add(wasm_i16x8_extmul_low_i8x16(w, x), wasm_i16x8_extmul_high_i8x16(w, x)));
}
// The same over 32 bytes (w0 w1, x0 x1) whose products are at most 63·127: four fit 16 bits.
inline v128_t dot32_small(v128_t w0, v128_t w1, v128_t x0, v128_t x1) {
  const v128_t p = wasm_i16x8_add(
      wasm_i16x8_add(wasm_i16x8_extmul_low_i8x16(w0, x0), wasm_i16x8_extmul_high_i8x16(w0, x0)),
      wasm_i16x8_add(wasm_i16x8_extmul_low_i8x16(w1, x1), wasm_i16x8_extmul_high_i8x16(w1, x1)));
  return wasm_i32x4_extadd_pairwise_i16x8(p);
}

struct BlockSum {
  std::int32_t dot;
  float d, m;
  std::int32_t min_sum;  // Q4_K: Σ_g mn_g · Σa over its 8 groups of 32
};

// Q4_0 / Q5_0 / Q8_0: 32 quants, offset removed (Q4_0 −8, Q5_0 −16: |q| ≤ 16).
BlockSum block_small(GgmlType t, const std::uint8_t* blk, const std::int8_t* x) {
  std::uint16_t h;
  std::memcpy(&h, blk, sizeof h);
  BlockSum s{0, half_to_float(h), 0.0f, 0};
  const v128_t x0 = wasm_v128_load(x), x1 = wasm_v128_load(x + 16);
  if (t == GgmlType::kQ8_0) {
    s.dot =
        sum_lanes(wasm_i32x4_add(dot16(wasm_v128_load(blk + 2), x0), dot16(wasm_v128_load(blk + 18), x1)));
    return s;
  }
  const v128_t qs = wasm_v128_load(blk + (t == GgmlType::kQ5_0 ? 6 : 2));
  v128_t lo = wasm_v128_and(qs, wasm_i8x16_splat(0x0F)), hi = wasm_u8x16_shr(qs, 4);
  if (t == GgmlType::kQ5_0) {
    v128_t high_lo, high_hi;
    fifth_bits(blk + 2, &high_lo, &high_hi);
    lo = wasm_v128_or(lo, high_lo);
    hi = wasm_v128_or(hi, high_hi);
  }
  const v128_t offset = wasm_i8x16_splat(t == GgmlType::kQ5_0 ? 16 : 8);
  s.dot = sum_lanes(dot32_small(wasm_i8x16_sub(lo, offset), wasm_i8x16_sub(hi, offset), x0, x1));
  return s;
}

// Σ w·x over 32 unsigned bytes w (two vectors) and 32 activations x widened to 16 bits: the bytes
// widened to 16 bits meet x in i32x4.dot_i16x8_s (one instruction per 8 products on x64).
inline v128_t dot32_u8_i16(v128_t w0, v128_t w1, const std::int16_t* x) {
  const v128_t a = wasm_i32x4_dot_i16x8(wasm_u16x8_extend_low_u8x16(w0), wasm_v128_load(x));
  const v128_t b = wasm_i32x4_dot_i16x8(wasm_u16x8_extend_high_u8x16(w0), wasm_v128_load(x + 8));
  const v128_t c = wasm_i32x4_dot_i16x8(wasm_u16x8_extend_low_u8x16(w1), wasm_v128_load(x + 16));
  const v128_t d = wasm_i32x4_dot_i16x8(wasm_u16x8_extend_high_u8x16(w1), wasm_v128_load(x + 24));
  return wasm_i32x4_add(wasm_i32x4_add(a, b), wasm_i32x4_add(c, d));
}

// Q4_K: four 64-element chunks, each 32 bytes: low nibbles group 2c, high nibbles group 2c + 1.
BlockSum block_q4_k(const BlockQ4_K& b, const std::int16_t* x, const std::int32_t* pair_sum) {
  BlockSum s{0, half_to_float(b.d), half_to_float(b.dmin), 0};
  v128_t acc = wasm_i32x4_splat(0);
  const v128_t low4 = wasm_i8x16_splat(0x0F);
  for (int c = 0; c < 4; ++c, x += 64) {
    std::uint8_t sc1, m1, sc2, m2;
    q4_k_scale_min(2 * c, b.scales, &sc1, &m1);
    q4_k_scale_min(2 * c + 1, b.scales, &sc2, &m2);
    s.min_sum += m1 * pair_sum[2 * c] + m2 * pair_sum[2 * c + 1];
    const v128_t v0 = wasm_v128_load(b.qs + 32 * c), v1 = wasm_v128_load(b.qs + 32 * c + 16);
    const v128_t lo = dot32_u8_i16(wasm_v128_and(v0, low4), wasm_v128_and(v1, low4), x);
    const v128_t hi = dot32_u8_i16(wasm_u8x16_shr(v0, 4), wasm_u8x16_shr(v1, 4), x + 32);
    acc = wasm_i32x4_add(acc, wasm_i32x4_mul(lo, wasm_i32x4_splat(sc1)));
    acc = wasm_i32x4_add(acc, wasm_i32x4_mul(hi, wasm_i32x4_splat(sc2)));
  }
  s.dot = sum_lanes(acc);
  return s;
}

// Q6_K: two halves of 128; in each, quarter q of elements l = 16·half … +15 has scale sc[half + 2q]
// (the layout of dequantize_row_q6_K), quants (6 bits) − 32.
BlockSum block_q6_k(const BlockQ6_K& b, const std::int8_t* x) {
  BlockSum s{0, half_to_float(b.d), 0.0f, 0};
  v128_t acc = wasm_i32x4_splat(0);
  const v128_t low4 = wasm_i8x16_splat(0x0F), two = wasm_i8x16_splat(3), bias = wasm_i8x16_splat(32);
  for (int n = 0; n < 2; ++n, x += 128) {
    const std::uint8_t* ql = b.ql + 64 * n;
    const std::uint8_t* qh = b.qh + 32 * n;
    const std::int8_t* sc = b.scales + 8 * n;
    for (int half = 0; half < 2; ++half) {
      const v128_t a = wasm_v128_load(ql + 16 * half), c = wasm_v128_load(ql + 32 + 16 * half);
      const v128_t h = wasm_v128_load(qh + 16 * half);
      const v128_t v[4] = {
          wasm_v128_or(wasm_v128_and(a, low4), wasm_i8x16_shl(wasm_v128_and(h, two), 4)),
          wasm_v128_or(wasm_v128_and(c, low4), wasm_i8x16_shl(wasm_v128_and(wasm_u8x16_shr(h, 2), two), 4)),
          wasm_v128_or(wasm_u8x16_shr(a, 4), wasm_i8x16_shl(wasm_v128_and(wasm_u8x16_shr(h, 4), two), 4)),
          wasm_v128_or(wasm_u8x16_shr(c, 4), wasm_i8x16_shl(wasm_u8x16_shr(h, 6), 4)),
      };
      for (int q = 0; q < 4; ++q) {
        const v128_t d = dot16(wasm_i8x16_sub(v[q], bias), wasm_v128_load(x + 32 * q + 16 * half));
        acc = wasm_i32x4_add(acc, wasm_i32x4_mul(d, wasm_i32x4_splat(sc[half + 2 * q])));
      }
    }
  }
  s.dot = sum_lanes(acc);
  return s;
}

BlockSum block_sum(GgmlType t, const std::uint8_t* blk, const std::int8_t* x, const std::int16_t* x16,
                   const std::int32_t* pair_sum) {
  if (t == GgmlType::kQ4_K) return block_q4_k(*reinterpret_cast<const BlockQ4_K*>(blk), x16, pair_sum);
  if (t == GgmlType::kQ6_K) return block_q6_k(*reinterpret_cast<const BlockQ6_K*>(blk), x);
  return block_small(t, blk, x);
}

}  // namespace

bool gemv_int8_simd128(int M, int N, int K, const QuantizedActivations& a, int first_row, const void* W,
                       std::size_t ldw_bytes, int type, const float* bias, float* C, int ldc) {
  const auto t = static_cast<GgmlType>(type);
  if (t != GgmlType::kQ4_0 && t != GgmlType::kQ5_0 && t != GgmlType::kQ8_0 && t != GgmlType::kQ4_K &&
      t != GgmlType::kQ6_K)
    return false;
  const GgmlTypeInfo* info = ggml_type_info(type);
  const int blocks = K / info->block_elements;
  for (int j = 0; j < N; ++j) {
    const auto* row = static_cast<const std::uint8_t*>(W) + static_cast<std::ptrdiff_t>(j) * ldw_bytes;
    for (int i = 0; i < M; ++i) {
      const std::int8_t* x = a.q8.data() + static_cast<std::ptrdiff_t>(first_row + i) * K;
      const std::int16_t* x16 = a.q.data() + static_cast<std::ptrdiff_t>(first_row + i) * K;
      const std::size_t row0 = static_cast<std::size_t>(first_row + i) * blocks;  // its first block
      float acc = 0.0f;
      for (int b = 0; b < blocks; ++b) {
        const BlockSum s = block_sum(t, row + static_cast<std::ptrdiff_t>(b) * info->block_bytes,
                                     x + static_cast<std::ptrdiff_t>(b) * info->block_elements,
                                     x16 + static_cast<std::ptrdiff_t>(b) * info->block_elements,
                                     t == GgmlType::kQ4_K ? a.pair_sum.data() + (row0 + b) * 8 : nullptr);
        acc = add_block_term(acc, s.d, s.m, s.min_sum, b, a, first_row + i, s.dot);
      }
      C[static_cast<std::ptrdiff_t>(i) * ldc + j] = bias ? acc + bias[j] : acc;
    }
  }
  return true;
}

}  // namespace attn::kernels
#endif  // __wasm_simd128__
