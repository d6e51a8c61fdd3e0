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
  std::int32_t min_sum;  // Q2_K, Q4_K, Q5_K: Σ_g mn_g · Σa over their groups
};

// The 32-element types: Q8_0; Q4_0 / Q5_0 (offset removed: −8, −16); Q4_1 / Q5_1 (unsigned, with
// m); IQ4_NL (its 16 levels looked up by swizzle, |level| ≤ 127: two products per 16-bit lane).
BlockSum block_small(GgmlType t, const std::uint8_t* blk, const std::int8_t* x) {
  std::uint16_t h[2];
  std::memcpy(h, blk, sizeof h);
  const bool with_min = t == GgmlType::kQ4_1 || t == GgmlType::kQ5_1;
  const bool five = t == GgmlType::kQ5_0 || t == GgmlType::kQ5_1;
  BlockSum s{0, half_to_float(h[0]), with_min ? half_to_float(h[1]) : 0.0f, 0};
  const v128_t x0 = wasm_v128_load(x), x1 = wasm_v128_load(x + 16);
  if (t == GgmlType::kQ8_0) {
    s.dot =
        sum_lanes(wasm_i32x4_add(dot16(wasm_v128_load(blk + 2), x0), dot16(wasm_v128_load(blk + 18), x1)));
    return s;
  }
  v128_t lo, hi;
  small_block_quants(five, with_min, t == GgmlType::kIQ4_NL, blk + (with_min ? 4 : 2), &lo, &hi);
  if (t == GgmlType::kIQ4_NL) {  // levels up to 127: two products per 16-bit lane
    s.dot = sum_lanes(wasm_i32x4_add(dot16(lo, x0), dot16(hi, x1)));
    return s;
  }
  s.dot = sum_lanes(dot32_small(lo, hi, x0, x1));  // |q| ≤ 31: four products per 16-bit lane
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

// Q4_K and Q5_K: four 64-element chunks, each 32 bytes: low nibbles group 2c, high nibbles group
// 2c + 1. Q5_K (kFifth) adds each quant's fifth bit (16) from qh[l]: bit 2c for chunk c's low
// group, 2c + 1 for its high group.
template <bool kFifth, class Block>
BlockSum block_k_nibbles(const Block& b, const std::int16_t* x, const std::int32_t* pair_sum) {
  BlockSum s{0, half_to_float(b.d), half_to_float(b.dmin), 0};
  v128_t acc = wasm_i32x4_splat(0);
  const v128_t low4 = wasm_i8x16_splat(0x0F), sixteen = wasm_i8x16_splat(16), zero = wasm_i8x16_splat(0);
  v128_t h0 = zero, h1 = zero;
  if constexpr (kFifth) {
    h0 = wasm_v128_load(b.qh);
    h1 = wasm_v128_load(b.qh + 16);
  }
  const auto with_fifth = [&](v128_t q, v128_t h, int bit) {  // q, plus 16 where qh has `bit`
    if constexpr (!kFifth) return q;
    const v128_t mask = wasm_u8x16_splat(static_cast<std::uint8_t>(1u << bit));
    return wasm_v128_or(q, wasm_v128_and(wasm_i8x16_ne(wasm_v128_and(h, mask), zero), sixteen));
  };
  for (int c = 0; c < 4; ++c, x += 64) {
    std::uint8_t sc1, m1, sc2, m2;
    q4_k_scale_min(2 * c, b.scales, &sc1, &m1);
    q4_k_scale_min(2 * c + 1, b.scales, &sc2, &m2);
    s.min_sum += m1 * pair_sum[2 * c] + m2 * pair_sum[2 * c + 1];
    const v128_t v0 = wasm_v128_load(b.qs + 32 * c), v1 = wasm_v128_load(b.qs + 32 * c + 16);
    const v128_t lo = dot32_u8_i16(with_fifth(wasm_v128_and(v0, low4), h0, 2 * c),
                                   with_fifth(wasm_v128_and(v1, low4), h1, 2 * c), x);
    const v128_t hi = dot32_u8_i16(with_fifth(wasm_u8x16_shr(v0, 4), h0, 2 * c + 1),
                                   with_fifth(wasm_u8x16_shr(v1, 4), h1, 2 * c + 1), x + 32);
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
  const v128_t bias = wasm_i8x16_splat(32);
  for (int n = 0; n < 2; ++n, x += 128) {
    const std::int8_t* sc = b.scales + 8 * n;
    for (int half = 0; half < 2; ++half) {
      v128_t v[4];
      q6_k_quants(b.ql + 64 * n, b.qh + 32 * n, half, v);
      for (int q = 0; q < 4; ++q) {
        const v128_t d = dot16(wasm_i8x16_sub(v[q], bias), wasm_v128_load(x + 32 * q + 16 * half));
        acc = wasm_i32x4_add(acc, wasm_i32x4_mul(d, wasm_i32x4_splat(sc[half + 2 * q])));
      }
    }
  }
  s.dot = sum_lanes(acc);
  return s;
}

// Q3_K and Q2_K: 16 groups of 16 in dequantize_row's order — per 128: 2-bit fields at shift 0, 2,
// 4, 6 of the 32 quant bytes, each as two halves of 16. Q3_K: minus 4 where its hmask bit is clear
// (the bit moves on with each shift), signed 6-bit scales; Q2_K: 4-bit scales, 4-bit mins.
BlockSum block_q23_k(GgmlType t, const std::uint8_t* blk, const std::int8_t* x,
                     const std::int32_t* group_sum) {
  const bool q3 = t == GgmlType::kQ3_K;
  const auto& b3 = *reinterpret_cast<const BlockQ3_K*>(blk);
  const auto& b2 = *reinterpret_cast<const BlockQ2_K*>(blk);
  BlockSum s{0, half_to_float(q3 ? b3.d : b2.d), q3 ? 0.0f : half_to_float(b2.dmin), 0};
  int scales[16];
  if (q3) {
    q3_k_scales(b3.scales, scales);
  } else {
    for (int g = 0; g < 16; ++g) {
      scales[g] = b2.scales[g] & 0xF;
      s.min_sum += (b2.scales[g] >> 4) * group_sum[g];
    }
  }
  const v128_t three = wasm_i8x16_splat(3), four = wasm_i8x16_splat(4), zero = wasm_i8x16_splat(0);
  const v128_t h[2] = {wasm_v128_load(b3.hmask), wasm_v128_load(b3.hmask + 16)};
  v128_t acc = wasm_i32x4_splat(0);
  int is = 0;
  for (int n = 0; n < 2; ++n) {
    const std::uint8_t* qs = (q3 ? b3.qs : b2.qs) + 32 * n;
    const v128_t qv[2] = {wasm_v128_load(qs), wasm_v128_load(qs + 16)};
    for (int j = 0; j < 4; ++j) {
      const v128_t bit = wasm_u8x16_splat(static_cast<std::uint8_t>(1u << (4 * n + j)));
      for (int half = 0; half < 2; ++half, x += 16) {
        v128_t v = wasm_v128_and(wasm_u8x16_shr(qv[half], 2 * j), three);
        if (q3) v = wasm_i8x16_sub(v, wasm_v128_and(wasm_i8x16_eq(wasm_v128_and(h[half], bit), zero), four));
        acc =
            wasm_i32x4_add(acc, wasm_i32x4_mul(dot16(v, wasm_v128_load(x)), wasm_i32x4_splat(scales[is++])));
      }
    }
  }
  s.dot = sum_lanes(acc);
  return s;
}

// Where a block's activations are: their bytes, the same widened to 16 bits, and (Q8_K) their sums
// per 32 and per 16.
struct BlockInput {
  const std::int8_t* x;
  const std::int16_t* x16;
  const std::int32_t* pair_sum;
  const std::int32_t* group_sum;
};

BlockSum block_sum(GgmlType t, const std::uint8_t* blk, const BlockInput& in) {
  switch (t) {
    case GgmlType::kQ4_K:
      return block_k_nibbles<false>(*reinterpret_cast<const BlockQ4_K*>(blk), in.x16, in.pair_sum);
    case GgmlType::kQ5_K:
      return block_k_nibbles<true>(*reinterpret_cast<const BlockQ5_K*>(blk), in.x16, in.pair_sum);
    case GgmlType::kQ6_K:
      return block_q6_k(*reinterpret_cast<const BlockQ6_K*>(blk), in.x);
    case GgmlType::kQ2_K:
    case GgmlType::kQ3_K:
      return block_q23_k(t, blk, in.x, in.group_sum);
    default:
      return block_small(t, blk, in.x);
  }
}

}  // namespace

bool gemv_int8_simd128(int M, int N, int K, const QuantizedActivations& a, int first_row, const void* W,
                       std::size_t ldw_bytes, int type, const float* bias, float* C, int ldc) {
  const auto t = static_cast<GgmlType>(type);
  if (activation_blocks_for(type) == ActivationBlocks::kNone) return false;
  const GgmlTypeInfo* info = ggml_type_info(type);
  const int blocks = K / info->block_elements;
  for (int j = 0; j < N; ++j) {
    const auto* row = static_cast<const std::uint8_t*>(W) + static_cast<std::ptrdiff_t>(j) * ldw_bytes;
    for (int i = 0; i < M; ++i) {
      const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(first_row + i) * K;   // its first element
      const std::size_t row0 = static_cast<std::size_t>(first_row + i) * blocks;  // its first block
      const bool k_quant = a.kind == ActivationBlocks::kQ8_K;
      float acc = 0.0f;
      for (int b = 0; b < blocks; ++b) {
        const std::ptrdiff_t e = at + static_cast<std::ptrdiff_t>(b) * info->block_elements;
        const BlockInput in{a.q8.data() + e, a.q.data() + e,
                            k_quant ? a.pair_sum.data() + (row0 + b) * 8 : nullptr,
                            k_quant ? a.group_sum.data() + (row0 + b) * 16 : nullptr};
        const BlockSum s = block_sum(t, row + static_cast<std::ptrdiff_t>(b) * info->block_bytes, in);
        acc = add_block_term(acc, s.d, s.m, s.min_sum, b, a, first_row + i, s.dot);
      }
      C[static_cast<std::ptrdiff_t>(i) * ldc + j] = bias ? acc + bias[j] : acc;
    }
  }
  return true;
}

}  // namespace attn::kernels
#endif  // __wasm_simd128__
