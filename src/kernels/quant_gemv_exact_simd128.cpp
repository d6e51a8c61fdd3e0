// The exact mode's fused GEMV (kernels.h gemv_quant_simd128): decoding multiplies each weight once
// per token, so dequantizing a panel of W into memory and packing it for the GEMM (the prefill's
// way, which pays off over many rows) is most of the work there. Here each block's quants go from
// its bytes into registers (the int8 GEMV's decodings, quant_simd128.h), are widened to float32 and
// scaled there — w = float(q)·scale (+ offset), the dequantizer's float operations, so each w has the
// dequantizer's bits — and meet the float32 activations in mul_add (one fused multiply-add in the
// relaxed-SIMD build). The summation order is the scalar twin's (kernels_scalar.cpp's
// gemv_quant_scalar): element k of a row goes to lane k mod 16 of four f32x4 accumulators, each lane
// summing its elements in k order, then ((a0 + a1) + (a2 + a3)) and the lanes (l0 + l2) + (l1 + l3).
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include <cstring>

#include "kernels/kernels.h"
#include "kernels/quant.h"
#include "kernels/quant_simd128.h"
#include "kernels/simd128_mul_add.h"

namespace attn::kernels {

namespace {

// Everything below is inlined into gemv_rows, so that the accumulators stay in registers (an
// accumulator in memory, loaded and stored per group of 16, tripled the time per weight).
#define ATTN_INLINE inline __attribute__((always_inline))

// float(i) for |i| < 2^22, exactly: 1.5·2^23 + i as float bits, minus 1.5·2^23. Not
// f32x4.convert_i32x4_s: clang 14 folds the widening into a convert from 16 bits, which it then
// does lane by lane (extract, scalar convert, replace: most of the kernel's time).
ATTN_INLINE v128_t small_int_to_float(v128_t i) {
  return wasm_f32x4_sub(wasm_i32x4_add(i, wasm_i32x4_splat(0x4B400000)), wasm_f32x4_splat(12582912.0f));
}

// R activation rows' accumulators: lane l of acc[r][v] sums row r's elements k ≡ 4v + l (mod 16).
template <int R>
struct Rows {
  const float* a[R];  // each row's elements of the current block
  v128_t acc[R][4];

  // 16 weights from the signed bytes q, at element e of the block: w = float(q)·scale (+ offset),
  // multiplied into every row's accumulators. Offsets: Q4_1 / Q5_1 add m; the K-quants with mins
  // add −(dmin·mn), which equals the dequantizer's subtraction of dmin·mn exactly.
  template <bool kOffset>
  ATTN_INLINE void group(v128_t q, float scale, float offset, int e) {
    const v128_t lo = wasm_i16x8_extend_low_i8x16(q), hi = wasm_i16x8_extend_high_i8x16(q);
    v128_t w[4] = {small_int_to_float(wasm_i32x4_extend_low_i16x8(lo)),
                   small_int_to_float(wasm_i32x4_extend_high_i16x8(lo)),
                   small_int_to_float(wasm_i32x4_extend_low_i16x8(hi)),
                   small_int_to_float(wasm_i32x4_extend_high_i16x8(hi))};
    const v128_t s = wasm_f32x4_splat(scale), o = wasm_f32x4_splat(offset);
    for (int v = 0; v < 4; ++v) {
      w[v] = wasm_f32x4_mul(w[v], s);  // not mul_add: the dequantizer rounds the product, then adds
      if constexpr (kOffset) w[v] = wasm_f32x4_add(w[v], o);
    }
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < 4; ++v) acc[r][v] = mul_add(w[v], wasm_v128_load(a[r] + e + 4 * v), acc[r][v]);
  }
};

// The 32-element types: quants with the offset removed (Q4_0, Q5_0), unsigned with m (Q4_1, Q5_1),
// IQ4_NL's levels, Q8_0's bytes.
template <GgmlType T, int R>
ATTN_INLINE void block_small(const std::uint8_t* blk, Rows<R>& rows) {
  constexpr bool with_min = T == GgmlType::kQ4_1 || T == GgmlType::kQ5_1;
  constexpr bool five = T == GgmlType::kQ5_0 || T == GgmlType::kQ5_1;
  std::uint16_t h[2];
  std::memcpy(h, blk, sizeof h);
  const float d = half_to_float(h[0]), m = with_min ? half_to_float(h[1]) : 0.0f;
  v128_t lo, hi;
  if constexpr (T == GgmlType::kQ8_0) {
    lo = wasm_v128_load(blk + 2);
    hi = wasm_v128_load(blk + 18);
  } else {
    small_block_quants(five, with_min, T == GgmlType::kIQ4_NL, blk + (with_min ? 4 : 2), &lo, &hi);
  }
  rows.template group<with_min>(lo, d, m, 0);
  rows.template group<with_min>(hi, d, m, 16);
}

// Q4_K and Q5_K: four 64-element chunks of 32 bytes, low nibbles group 2c (elements 64c …), high
// nibbles group 2c + 1 (64c + 32 …); Q5_K's fifth bits from qh (bit 2c, 2c + 1 of byte l).
template <bool kFifth, class Block, int R>
ATTN_INLINE void block_k_nibbles(const Block& b, Rows<R>& rows) {
  const float d = half_to_float(b.d), dmin = half_to_float(b.dmin);
  const v128_t low4 = wasm_i8x16_splat(0x0F), sixteen = wasm_i8x16_splat(16), zero = wasm_i8x16_splat(0);
  v128_t h0 = zero, h1 = zero;
  if constexpr (kFifth) {
    h0 = wasm_v128_load(b.qh);
    h1 = wasm_v128_load(b.qh + 16);
  }
  const auto with_fifth = [&](v128_t q, v128_t h, int bit) {
    if constexpr (!kFifth) return q;
    const v128_t mask = wasm_u8x16_splat(static_cast<std::uint8_t>(1u << bit));
    return wasm_v128_or(q, wasm_v128_and(wasm_i8x16_ne(wasm_v128_and(h, mask), zero), sixteen));
  };
#pragma clang loop unroll(full)
  for (int c = 0; c < 4; ++c) {
    std::uint8_t sc1, m1, sc2, m2;
    q4_k_scale_min(2 * c, b.scales, &sc1, &m1);
    q4_k_scale_min(2 * c + 1, b.scales, &sc2, &m2);
    const float d1 = d * sc1, o1 = -(dmin * m1), d2 = d * sc2, o2 = -(dmin * m2);
    const v128_t v0 = wasm_v128_load(b.qs + 32 * c), v1 = wasm_v128_load(b.qs + 32 * c + 16);
    rows.template group<true>(with_fifth(wasm_v128_and(v0, low4), h0, 2 * c), d1, o1, 64 * c);
    rows.template group<true>(with_fifth(wasm_v128_and(v1, low4), h1, 2 * c), d1, o1, 64 * c + 16);
    rows.template group<true>(with_fifth(wasm_u8x16_shr(v0, 4), h0, 2 * c + 1), d2, o2, 64 * c + 32);
    rows.template group<true>(with_fifth(wasm_u8x16_shr(v1, 4), h1, 2 * c + 1), d2, o2, 64 * c + 48);
  }
}

// Q6_K: per 128, quarter q's elements 16·half … are q6_k_quants' v[q] of that half, scale
// d·sc[half + 2q]; visited in element order (quarter, then half).
template <int R>
ATTN_INLINE void block_q6_k(const BlockQ6_K& b, Rows<R>& rows) {
  const float d = half_to_float(b.d);
  const v128_t bias = wasm_i8x16_splat(32);
#pragma clang loop unroll(full)
  for (int n = 0; n < 2; ++n) {
    const std::int8_t* sc = b.scales + 8 * n;
    v128_t v0[4], v1[4];
    q6_k_quants(b.ql + 64 * n, b.qh + 32 * n, 0, v0);
    q6_k_quants(b.ql + 64 * n, b.qh + 32 * n, 1, v1);
    for (int q = 0; q < 4; ++q) {
      rows.template group<false>(wasm_i8x16_sub(v0[q], bias), d * sc[2 * q], 0.0f, 128 * n + 32 * q);
      rows.template group<false>(wasm_i8x16_sub(v1[q], bias), d * sc[1 + 2 * q], 0.0f, 128 * n + 32 * q + 16);
    }
  }
}

// Q2_K and Q3_K: 16 groups of 16 in element order, 2-bit fields at shift 2j of 32 bytes per 128;
// Q3_K minus 4 where its hmask bit is clear, scale d·(sc − 32); Q2_K scale d·sc, offset −dmin·mn.
template <GgmlType T, int R>
ATTN_INLINE void block_q23_k(const std::uint8_t* blk, Rows<R>& rows) {
  constexpr bool q3 = T == GgmlType::kQ3_K;
  const auto& b3 = *reinterpret_cast<const BlockQ3_K*>(blk);
  const auto& b2 = *reinterpret_cast<const BlockQ2_K*>(blk);
  const float d = half_to_float(q3 ? b3.d : b2.d), dmin = q3 ? 0.0f : half_to_float(b2.dmin);
  int scales[16];
  if constexpr (q3) q3_k_scales(b3.scales, scales);
  const v128_t three = wasm_i8x16_splat(3), four = wasm_i8x16_splat(4), zero = wasm_i8x16_splat(0);
  int is = 0;
  for (int n = 0; n < 2; ++n) {
    const std::uint8_t* qs = (q3 ? b3.qs : b2.qs) + 32 * n;
    for (int j = 0; j < 4; ++j) {
      const v128_t bit = wasm_u8x16_splat(static_cast<std::uint8_t>(1u << (4 * n + j)));
      for (int half = 0; half < 2; ++half, ++is) {
        v128_t v = wasm_v128_and(wasm_u8x16_shr(wasm_v128_load(qs + 16 * half), 2 * j), three);
        const int e = 128 * n + 32 * j + 16 * half;
        if constexpr (q3) {
          const v128_t h = wasm_v128_load(b3.hmask + 16 * half);
          v = wasm_i8x16_sub(v, wasm_v128_and(wasm_i8x16_eq(wasm_v128_and(h, bit), zero), four));
          rows.template group<false>(v, d * scales[is], 0.0f, e);
        } else {
          const std::uint8_t sc = b2.scales[is];
          rows.template group<true>(v, d * (sc & 0xF), -(dmin * (sc >> 4)), e);
        }
      }
    }
  }
}

template <GgmlType T, int R>
ATTN_INLINE void block_of(const std::uint8_t* blk, Rows<R>& rows) {
  if constexpr (T == GgmlType::kQ4_K) {
    block_k_nibbles<false>(*reinterpret_cast<const BlockQ4_K*>(blk), rows);
  } else if constexpr (T == GgmlType::kQ5_K) {
    block_k_nibbles<true>(*reinterpret_cast<const BlockQ5_K*>(blk), rows);
  } else if constexpr (T == GgmlType::kQ6_K) {
    block_q6_k(*reinterpret_cast<const BlockQ6_K*>(blk), rows);
  } else if constexpr (T == GgmlType::kQ2_K || T == GgmlType::kQ3_K) {
    block_q23_k<T>(blk, rows);
  } else {
    block_small<T>(blk, rows);
  }
}

// ((a0 + a1) + (a2 + a3)), then lanes (l0 + l2) + (l1 + l3): the scalar twin's order.
ATTN_INLINE float reduce(const v128_t a[4]) {
  const v128_t s = wasm_f32x4_add(wasm_f32x4_add(a[0], a[1]), wasm_f32x4_add(a[2], a[3]));
  const v128_t t = wasm_f32x4_add(s, wasm_i32x4_shuffle(s, s, 2, 3, 0, 1));
  return wasm_f32x4_extract_lane(t, 0) + wasm_f32x4_extract_lane(t, 1);
}

// C's rows [0, R) × columns [0, N): each weight row's blocks decoded once for the R rows.
template <GgmlType T, int R>
void gemv_rows(int N, int K, const float* A, int lda, const std::uint8_t* W, std::size_t ldw_bytes,
               const float* bias, float* C, int ldc) {
  constexpr const GgmlTypeInfo* info = ggml_type_info(static_cast<int>(T));
  constexpr int block = info->block_elements, bytes = info->block_bytes;
  const int blocks = K / block;
  for (int j = 0; j < N; ++j) {
    const std::uint8_t* row = W + static_cast<std::ptrdiff_t>(j) * ldw_bytes;
    Rows<R> rows;
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < 4; ++v) rows.acc[r][v] = wasm_f32x4_splat(0.0f);
    for (int b = 0; b < blocks; ++b) {
      for (int r = 0; r < R; ++r) rows.a[r] = A + static_cast<std::ptrdiff_t>(r) * lda + b * block;
      block_of<T>(row + static_cast<std::ptrdiff_t>(b) * bytes, rows);
    }
    for (int r = 0; r < R; ++r) {
      const float sum = reduce(rows.acc[r]);
      C[static_cast<std::ptrdiff_t>(r) * ldc + j] = bias ? sum + bias[j] : sum;
    }
  }
}

// Rows two at a time (one weight decode feeds both), then the last one alone: each C element's
// arithmetic is the same whichever group its row falls in.
template <GgmlType T>
void gemv_type(int M, int N, int K, const float* A, int lda, const std::uint8_t* W, std::size_t ldw_bytes,
               const float* bias, float* C, int ldc) {
  int i = 0;
  for (; i + 2 <= M; i += 2)
    gemv_rows<T, 2>(N, K, A + static_cast<std::ptrdiff_t>(i) * lda, lda, W, ldw_bytes, bias,
                    C + static_cast<std::ptrdiff_t>(i) * ldc, ldc);
  if (i < M)
    gemv_rows<T, 1>(N, K, A + static_cast<std::ptrdiff_t>(i) * lda, lda, W, ldw_bytes, bias,
                    C + static_cast<std::ptrdiff_t>(i) * ldc, ldc);
}

}  // namespace

bool gemv_quant_simd128(int M, int N, int K, const float* A, int lda, const void* W, std::size_t ldw_bytes,
                        int type, const float* bias, float* C, int ldc) {
  if (M > kQuantGemvRows) return false;
  const auto* w = static_cast<const std::uint8_t*>(W);
  switch (static_cast<GgmlType>(type)) {
#define ATTN_GEMV_CASE(T)                                                \
  case GgmlType::T:                                                      \
    gemv_type<GgmlType::T>(M, N, K, A, lda, w, ldw_bytes, bias, C, ldc); \
    return true;
    ATTN_GEMV_CASE(kQ4_0)
    ATTN_GEMV_CASE(kQ4_1)
    ATTN_GEMV_CASE(kQ5_0)
    ATTN_GEMV_CASE(kQ5_1)
    ATTN_GEMV_CASE(kQ8_0)
    ATTN_GEMV_CASE(kIQ4_NL)
    ATTN_GEMV_CASE(kQ2_K)
    ATTN_GEMV_CASE(kQ3_K)
    ATTN_GEMV_CASE(kQ4_K)
    ATTN_GEMV_CASE(kQ5_K)
    ATTN_GEMV_CASE(kQ6_K)
#undef ATTN_GEMV_CASE
    default:
      return false;
  }
}

}  // namespace attn::kernels
#endif  // __wasm_simd128__
