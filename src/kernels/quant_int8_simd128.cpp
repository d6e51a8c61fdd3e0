// The SIMD128 twin of the int8 mode (quant_int8.h). Unpacking: Q4_0, Q5_0, Q8_0, IQ4_NL, Q4_K and
// Q6_K with vector bit operations (16 quants at a time, group scales multiplied in 16-bit lanes);
// Q4_1, Q5_1, Q2_K, Q3_K and Q5_K through the scalar unpacker. The product: i32x4.dot_i16x8_s over
// the unpacked row and up to four activation rows at once (each weight vector loaded once for four
// rows), each block's integer sum reduced exactly and its float term added as the scalar twin does.
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include <cstring>

#include "kernels/kernels.h"
#include "kernels/quant.h"
#include "kernels/quant_int8.h"
#include "kernels/quant_simd128.h"

namespace attn::kernels {

namespace {

// 16 unsigned bytes v, widened to 16 bits, minus `offset`, times `scale`, stored at q (16 values).
inline void store_scaled_u8(v128_t v, int offset, int scale, std::int16_t* q) {
  const v128_t off = wasm_i16x8_splat(static_cast<std::int16_t>(offset));
  const v128_t sc = wasm_i16x8_splat(static_cast<std::int16_t>(scale));
  wasm_v128_store(q, wasm_i16x8_mul(wasm_i16x8_sub(wasm_u16x8_extend_low_u8x16(v), off), sc));
  wasm_v128_store(q + 8, wasm_i16x8_mul(wasm_i16x8_sub(wasm_u16x8_extend_high_u8x16(v), off), sc));
}

inline void store_i8(v128_t v, std::int16_t* q) {  // 16 signed bytes, widened
  wasm_v128_store(q, wasm_i16x8_extend_low_i8x16(v));
  wasm_v128_store(q + 8, wasm_i16x8_extend_high_i8x16(v));
}

// A 32-element block of Q4_0, Q5_0, Q8_0 or IQ4_NL (the types unpacked here).
void unpack_small_simd(GgmlType t, const std::uint8_t* blk, std::int16_t* q, float* d) {
  std::uint16_t h;
  std::memcpy(&h, blk, sizeof h);
  *d = half_to_float(h);
  if (t == GgmlType::kQ8_0) {
    store_i8(wasm_v128_load(blk + 2), q);
    store_i8(wasm_v128_load(blk + 18), q + 16);
    return;
  }
  v128_t lo, hi;
  small_block_quants(t == GgmlType::kQ5_0, false, t == GgmlType::kIQ4_NL, blk + 2, &lo, &hi);
  store_i8(lo, q);
  store_i8(hi, q + 16);
}

void unpack_q4_k_simd(const BlockQ4_K& x, std::int16_t* q, std::uint8_t* mins) {
  const std::uint8_t* qs = x.qs;
  for (int g = 0; g < 8; g += 2, qs += 32, q += 64) {
    std::uint8_t sc1, m1, sc2, m2;
    q4_k_scale_min(g, x.scales, &sc1, &m1);
    q4_k_scale_min(g + 1, x.scales, &sc2, &m2);
    mins[2 * g] = mins[2 * g + 1] = m1;
    mins[2 * g + 2] = mins[2 * g + 3] = m2;
    for (int half = 0; half < 2; ++half) {
      const v128_t v = wasm_v128_load(qs + 16 * half);
      store_scaled_u8(wasm_v128_and(v, wasm_i8x16_splat(0x0F)), 0, sc1, q + 16 * half);
      store_scaled_u8(wasm_u8x16_shr(v, 4), 0, sc2, q + 32 + 16 * half);
    }
  }
}

void unpack_q6_k_simd(const BlockQ6_K& x, std::int16_t* q) {
  for (int n = 0; n < 2; ++n, q += 128) {
    const std::int8_t* sc = x.scales + 8 * n;
    for (int half = 0; half < 2; ++half) {
      v128_t v[4];
      q6_k_quants(x.ql + 64 * n, x.qh + 32 * n, half, v);
      for (int quarter = 0; quarter < 4; ++quarter)
        store_scaled_u8(v[quarter], 32, sc[half + 2 * quarter], q + 32 * quarter + 16 * half);
    }
  }
}

// Σ over `vectors` 8-lane groups of w·x for up to four activation rows, each reduced exactly.
template <int R>
inline void block_dots(const std::int16_t* w, const std::int16_t* const* x, int offset, int vectors,
                       std::int32_t* out) {
  v128_t acc[R];
  for (int r = 0; r < R; ++r) acc[r] = wasm_i32x4_splat(0);
  for (int v = 0; v < vectors; ++v) {
    const v128_t wv = wasm_v128_load(w + offset + 8 * v);
    for (int r = 0; r < R; ++r)
      acc[r] = wasm_i32x4_add(acc[r], wasm_i32x4_dot_i16x8(wv, wasm_v128_load(x[r] + offset + 8 * v)));
  }
  for (int r = 0; r < R; ++r) out[r] = sum_lanes(acc[r]);
}

// C's rows [i0, i0 + R) of column j from the unpacked weight row u.
template <int R>
void rows_of_column(int K, const QuantizedActivations& a, int row0, const UnpackedRow& u, float bias,
                    bool has_bias, float* c, int ldc) {
  const int block = a.block, blocks = K / block;
  const std::int16_t* x[R];
  float acc[R];
  for (int r = 0; r < R; ++r) {
    x[r] = a.q.data() + static_cast<std::ptrdiff_t>(row0 + r) * K;
    acc[r] = 0.0f;
  }
  std::int32_t dots[R];
  for (int b = 0; b < blocks; ++b) {
    block_dots<R>(u.q.data(), x, b * block, block / 8, dots);
    for (int r = 0; r < R; ++r) acc[r] = add_block_term(acc[r], u, b, a, row0 + r, dots[r]);
  }
  for (int r = 0; r < R; ++r) c[static_cast<std::ptrdiff_t>(r) * ldc] = has_bias ? acc[r] + bias : acc[r];
}

}  // namespace

bool unpack_row_simd128(int type, const void* row, int K, UnpackedRow& out) {
  const auto t = static_cast<GgmlType>(type);
  const bool small =
      t == GgmlType::kQ4_0 || t == GgmlType::kQ5_0 || t == GgmlType::kQ8_0 || t == GgmlType::kIQ4_NL;
  if (!small && t != GgmlType::kQ4_K && t != GgmlType::kQ6_K) return unpack_row_scalar(type, row, K, out);
  const GgmlTypeInfo* info = ggml_type_info(type);
  if (K % info->block_elements != 0) return false;
  out.reserve(K);
  const auto* bytes = static_cast<const std::uint8_t*>(row);
  for (int b = 0; b < K / info->block_elements; ++b) {
    const std::uint8_t* blk = bytes + static_cast<std::ptrdiff_t>(b) * info->block_bytes;
    std::int16_t* q = out.q.data() + static_cast<std::ptrdiff_t>(b) * info->block_elements;
    out.m[b] = 0.0f;
    if (small) {
      unpack_small_simd(t, blk, q, &out.d[b]);
    } else if (t == GgmlType::kQ4_K) {
      const auto& x = *reinterpret_cast<const BlockQ4_K*>(blk);
      unpack_q4_k_simd(x, q, out.mins.data() + static_cast<std::ptrdiff_t>(b) * 16);
      out.d[b] = half_to_float(x.d);
      out.m[b] = half_to_float(x.dmin);
    } else {
      const auto& x = *reinterpret_cast<const BlockQ6_K*>(blk);
      unpack_q6_k_simd(x, q);
      out.d[b] = half_to_float(x.d);
    }
  }
  return true;
}

void linear_nt_int8_simd128(int M, int N, int K, const QuantizedActivations& a, int first_row, const void* W,
                            std::size_t ldw_bytes, int type, const float* bias, float* C, int ldc) {
  if (M < 4 && gemv_int8_simd128(M, N, K, a, first_row, W, ldw_bytes, type, bias, C, ldc)) return;
  thread_local UnpackedRow u;
  for (int j = 0; j < N; ++j) {
    unpack_row_simd128(type, static_cast<const char*>(W) + static_cast<std::ptrdiff_t>(j) * ldw_bytes, K, u);
    const float bj = bias ? bias[j] : 0.0f;
    int i = 0;
    for (; i + 4 <= M; i += 4)
      rows_of_column<4>(K, a, first_row + i, u, bj, bias != nullptr,
                        C + static_cast<std::ptrdiff_t>(i) * ldc + j, ldc);
    for (; i < M; ++i)
      rows_of_column<1>(K, a, first_row + i, u, bj, bias != nullptr,
                        C + static_cast<std::ptrdiff_t>(i) * ldc + j, ldc);
  }
}

}  // namespace attn::kernels
#endif  // __wasm_simd128__
