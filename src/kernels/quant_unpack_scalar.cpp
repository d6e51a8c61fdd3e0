// The scalar twin of the int8 mode (quant_int8.h): every weight type unpacked into 16-bit integers
// with its group scales folded in, in ggml's element order (that of quant_scalar.cpp's
// dequantizers, which a test holds the unpacked values to), and the plain-loop product.
#include <cstring>

#include "kernels/kernels.h"
#include "kernels/quant.h"
#include "kernels/quant_int8.h"

namespace attn::kernels {

namespace {

// The 32-element types: q (32) and the block's d, m.
void unpack_small(GgmlType t, const std::uint8_t* blk, std::int16_t* q, float* d, float* m) {
  std::uint16_t h[2];
  std::memcpy(h, blk, sizeof h);
  *d = half_to_float(h[0]);
  *m = 0.0f;
  if (t == GgmlType::kQ8_0) {
    for (int j = 0; j < kQK; ++j) q[j] = static_cast<std::int8_t>(blk[2 + j]);
    return;
  }
  const bool with_min = t == GgmlType::kQ4_1 || t == GgmlType::kQ5_1;
  if (with_min) *m = half_to_float(h[1]);
  const bool five = t == GgmlType::kQ5_0 || t == GgmlType::kQ5_1;
  const std::uint8_t* qs = blk + (with_min ? 4 : 2) + (five ? 4 : 0);
  std::uint32_t qh = 0;
  if (five) std::memcpy(&qh, blk + (with_min ? 4 : 2), sizeof qh);
  const int offset = t == GgmlType::kQ4_0 ? 8 : t == GgmlType::kQ5_0 ? 16 : 0;
  for (int j = 0; j < kQK / 2; ++j) {
    int lo = qs[j] & 0x0F, hi = qs[j] >> 4;
    if (t == GgmlType::kIQ4_NL) {
      q[j] = kIQ4NLValues[lo];
      q[j + kQK / 2] = kIQ4NLValues[hi];
      continue;
    }
    if (five) {
      lo |= ((qh >> j) << 4) & 0x10;
      hi |= (qh >> (j + 12)) & 0x10;
    }
    q[j] = static_cast<std::int16_t>(lo - offset);
    q[j + kQK / 2] = static_cast<std::int16_t>(hi - offset);
  }
}

void unpack_q2_k(const BlockQ2_K& x, std::int16_t* q, std::uint8_t* mins) {
  const std::uint8_t* qs = x.qs;
  int is = 0;
  for (int n = 0; n < kQK_K; n += 128, qs += 32)
    for (int shift = 0; shift < 8; shift += 2)
      for (int half = 0; half < 2; ++half, ++is) {
        const int sc = x.scales[is] & 0xF;
        mins[is] = x.scales[is] >> 4;
        for (int l = 0; l < 16; ++l)
          *q++ = static_cast<std::int16_t>(sc * ((qs[l + 16 * half] >> shift) & 3));
      }
}

void unpack_q3_k(const BlockQ3_K& x, std::int16_t* q) {
  int scales[16];
  q3_k_scales(x.scales, scales);
  const std::uint8_t* qs = x.qs;
  std::uint8_t bit = 1;
  int is = 0;
  for (int n = 0; n < kQK_K; n += 128, qs += 32)
    for (int shift = 0; shift < 8; shift += 2, bit <<= 1)
      for (int half = 0; half < 2; ++half, ++is)
        for (int l = 16 * half; l < 16 * half + 16; ++l)
          *q++ =
              static_cast<std::int16_t>(scales[is] * (((qs[l] >> shift) & 3) - ((x.hmask[l] & bit) ? 0 : 4)));
}

// Q4_K and Q5_K (qh null for Q4_K): groups of 32, each group's min stored for both of its 16s.
void unpack_q45_k(const std::uint8_t* scales, const std::uint8_t* qs, const std::uint8_t* qh, std::int16_t* q,
                  std::uint8_t* mins) {
  std::uint8_t u1 = 1, u2 = 2;
  for (int g = 0; g < 8; g += 2, qs += 32, u1 <<= 2, u2 <<= 2) {
    std::uint8_t sc1, m1, sc2, m2;
    q4_k_scale_min(g, scales, &sc1, &m1);
    q4_k_scale_min(g + 1, scales, &sc2, &m2);
    mins[2 * g] = mins[2 * g + 1] = m1;
    mins[2 * g + 2] = mins[2 * g + 3] = m2;
    for (int l = 0; l < 32; ++l)
      *q++ = static_cast<std::int16_t>(sc1 * ((qs[l] & 0xF) + (qh && (qh[l] & u1) ? 16 : 0)));
    for (int l = 0; l < 32; ++l)
      *q++ = static_cast<std::int16_t>(sc2 * ((qs[l] >> 4) + (qh && (qh[l] & u2) ? 16 : 0)));
  }
}

void unpack_q6_k(const BlockQ6_K& x, std::int16_t* q) {
  const std::uint8_t* ql = x.ql;
  const std::uint8_t* qh = x.qh;
  const std::int8_t* sc = x.scales;
  for (int n = 0; n < kQK_K; n += 128, q += 128, ql += 64, qh += 32, sc += 8)
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      q[l] = static_cast<std::int16_t>(sc[is] * (((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32));
      q[l + 32] =
          static_cast<std::int16_t>(sc[is + 2] * (((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32));
      q[l + 64] = static_cast<std::int16_t>(sc[is + 4] * (((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32));
      q[l + 96] =
          static_cast<std::int16_t>(sc[is + 6] * (((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32));
    }
}

// One K-quant super-block b of `type` into u.
void unpack_k_block(GgmlType t, const std::uint8_t* blk, int b, UnpackedRow& u) {
  std::int16_t* q = u.q.data() + static_cast<std::ptrdiff_t>(b) * kQK_K;
  std::uint8_t* mins = u.mins.data() + static_cast<std::ptrdiff_t>(b) * 16;
  u.m[b] = 0.0f;
  if (t == GgmlType::kQ2_K) {
    const auto& x = *reinterpret_cast<const BlockQ2_K*>(blk);
    unpack_q2_k(x, q, mins);
    u.d[b] = half_to_float(x.d);
    u.m[b] = half_to_float(x.dmin);
  } else if (t == GgmlType::kQ3_K) {
    const auto& x = *reinterpret_cast<const BlockQ3_K*>(blk);
    unpack_q3_k(x, q);
    u.d[b] = half_to_float(x.d);
  } else if (t == GgmlType::kQ6_K) {
    const auto& x = *reinterpret_cast<const BlockQ6_K*>(blk);
    unpack_q6_k(x, q);
    u.d[b] = half_to_float(x.d);
  } else if (t == GgmlType::kQ4_K) {
    const auto& x = *reinterpret_cast<const BlockQ4_K*>(blk);
    unpack_q45_k(x.scales, x.qs, nullptr, q, mins);
    u.d[b] = half_to_float(x.d);
    u.m[b] = half_to_float(x.dmin);
  } else {
    const auto& x = *reinterpret_cast<const BlockQ5_K*>(blk);
    unpack_q45_k(x.scales, x.qs, x.qh, q, mins);
    u.d[b] = half_to_float(x.d);
    u.m[b] = half_to_float(x.dmin);
  }
}

}  // namespace

bool unpack_row_scalar(int type, const void* row, int K, UnpackedRow& out) {
  const ActivationBlocks kind = activation_blocks_for(type);
  const GgmlTypeInfo* info = ggml_type_info(type);
  if (kind == ActivationBlocks::kNone || K % info->block_elements != 0) return false;
  out.reserve(K);
  const auto* bytes = static_cast<const std::uint8_t*>(row);
  const int blocks = K / info->block_elements;
  for (int b = 0; b < blocks; ++b) {
    const std::uint8_t* blk = bytes + static_cast<std::ptrdiff_t>(b) * info->block_bytes;
    if (kind == ActivationBlocks::kQ8_K)
      unpack_k_block(static_cast<GgmlType>(type), blk, b, out);
    else
      unpack_small(static_cast<GgmlType>(type), blk, out.q.data() + static_cast<std::ptrdiff_t>(b) * kQK,
                   &out.d[b], &out.m[b]);
  }
  return true;
}

void linear_nt_int8_scalar(int M, int N, int K, const QuantizedActivations& a, int first_row, const void* W,
                           std::size_t ldw_bytes, int type, const float* bias, float* C, int ldc) {
  thread_local UnpackedRow u;
  const int block = a.block, blocks = K / block;
  for (int j = 0; j < N; ++j) {
    unpack_row_scalar(type, static_cast<const char*>(W) + static_cast<std::ptrdiff_t>(j) * ldw_bytes, K, u);
    for (int i = 0; i < M; ++i) {
      const int row = first_row + i;
      const std::int16_t* x = a.q.data() + static_cast<std::ptrdiff_t>(row) * K;  // x: activation row (K)
      float acc = 0.0f;
      for (int b = 0; b < blocks; ++b) {
        std::int32_t dot = 0;
        for (int e = b * block; e < (b + 1) * block; ++e) dot += u.q[e] * x[e];
        acc = add_block_term(acc, u, b, a, row, dot);
      }
      C[static_cast<std::ptrdiff_t>(i) * ldc + j] = bias ? acc + bias[j] : acc;
    }
  }
}

}  // namespace attn::kernels
