// Quantized weights as llama.cpp stores them in GGUF files: ggml's block layouts and a scalar
// dequantizer per type read (docs/gguf.md); the table of every ggml type id (name, elements and
// bytes per block, entry points) is weight_types.h's. A block is a fixed number of consecutive
// elements of a row (32 or 256) stored as a few scales and packed small integers; a row of k
// elements is k / block elements blocks, one after another. Blocks hold 16-bit fields, so rows must
// be 2-byte aligned (GGUF aligns every tensor to 32 bytes and every block size here is even).
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/weight_types.h"

namespace attn::kernels {

// ---- block layouts (ggml-common.h); d, m, dmin are float16 bit patterns ----------------------
constexpr int kQK = 32;     // elements of a Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and IQ4_NL block
constexpr int kQK_K = 256;  // elements of a K-quant super-block

struct BlockQ4_0 {  // x = d · (q - 8), q 4 bits: element j in qs[j] low nibble, j + 16 high
  std::uint16_t d;
  std::uint8_t qs[kQK / 2];
};
struct BlockQ4_1 {  // x = d · q + m
  std::uint16_t d, m;
  std::uint8_t qs[kQK / 2];
};
struct BlockQ5_0 {  // x = d · (q - 16), q 5 bits: the 5th bit of element j is bit j of qh
  std::uint16_t d;
  std::uint8_t qh[4];
  std::uint8_t qs[kQK / 2];
};
struct BlockQ5_1 {  // x = d · q + m
  std::uint16_t d, m;
  std::uint8_t qh[4];
  std::uint8_t qs[kQK / 2];
};
struct BlockQ8_0 {  // x = d · q, q signed 8 bits
  std::uint16_t d;
  std::int8_t qs[kQK];
};
struct BlockIQ4NL {  // x = d · kIQ4NLValues[q], q 4 bits laid out as in Q4_0
  std::uint16_t d;
  std::uint8_t qs[kQK / 2];
};
struct BlockQ2_K {  // 16 groups of 16: x = d · sc · q - dmin · mn, sc and mn 4 bits, q 2 bits
  std::uint8_t scales[kQK_K / 16];
  std::uint8_t qs[kQK_K / 4];
  std::uint16_t d, dmin;
};
struct BlockQ3_K {  // 16 groups of 16: x = d · (sc - 32) · (q - 4), sc 6 bits, q 3 bits
  std::uint8_t hmask[kQK_K / 8];
  std::uint8_t qs[kQK_K / 4];
  std::uint8_t scales[12];
  std::uint16_t d;
};
struct BlockQ4_K {  // 8 groups of 32: x = d · sc · q - dmin · mn, sc and mn 6 bits, q 4 bits
  std::uint16_t d, dmin;
  std::uint8_t scales[12];
  std::uint8_t qs[kQK_K / 2];
};
struct BlockQ5_K {  // as Q4_K with q 5 bits
  std::uint16_t d, dmin;
  std::uint8_t scales[12];
  std::uint8_t qh[kQK_K / 8];
  std::uint8_t qs[kQK_K / 2];
};
struct BlockQ6_K {  // 16 groups of 16: x = d · sc · (q - 32), sc signed 8 bits, q 6 bits
  std::uint8_t ql[kQK_K / 2];
  std::uint8_t qh[kQK_K / 4];
  std::int8_t scales[kQK_K / 16];
  std::uint16_t d;
};
static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20 && sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24 && sizeof(BlockQ8_0) == 34 && sizeof(BlockIQ4NL) == 18);
static_assert(sizeof(BlockQ2_K) == 84 && sizeof(BlockQ3_K) == 110 && sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176 && sizeof(BlockQ6_K) == 210);

// IQ4_NL's 16 non-linear levels (ggml's kvalues_iq4nl).
extern const std::int8_t kIQ4NLValues[16];

// A float16 bit pattern's value, exactly (inline: every block reads one or two): exponent and
// mantissa shifted into a float32's place and multiplied by 2^112 (which also normalises
// subnormals), exponent 31 (inf, NaN) mapped to 255 — the arithmetic of kernels::widen_half.
inline float half_to_float(std::uint16_t h) {
  const std::uint32_t em = h & 0x7fffu, sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t bits;
  if (em >= 0x7c00u) {
    bits = sign | 0x7f800000u | ((em & 0x3ffu) << 13);
  } else {
    float scaled;
    const std::uint32_t shifted = em << 13;
    std::memcpy(&scaled, &shifted, sizeof scaled);
    scaled *= 5.192296858534828e33f;  // 2^112
    std::memcpy(&bits, &scaled, sizeof bits);
    bits |= sign;
  }
  float y;
  std::memcpy(&y, &bits, sizeof y);
  return y;
}

// The packed scale fields of the K-quants, as ggml unpacks them (shared by the dequantizers and the
// int8 mode's unpacking, quant_int8.h). Q4_K / Q5_K: the 6-bit scale and min of group j (0..7) from
// the 12 packed bytes (ggml's get_scale_min_k4): groups 0-3 in the low 6 bits of bytes j and j + 4;
// groups 4-7 in the nibbles of byte j + 4 with their top 2 bits in the top bits of bytes j - 4
// (scale) and j (min).
inline void q4_k_scale_min(int j, const std::uint8_t* q, std::uint8_t* sc, std::uint8_t* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = static_cast<std::uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<std::uint8_t>((q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4));
  }
}
void q3_k_scales(const std::uint8_t* packed, int* out);  // Q3_K's 16 scales, each minus 32

// ---- dequantizers: y (k) = the k elements the blocks at x hold; k a multiple of the block -----
// Each value is one float rounding of the exact x above (every product of a float16 scale and a
// small integer is exact in float32), so these equal ggml's dequantize_row_* bit for bit.
void dequantize_row_q4_0(const BlockQ4_0* x, float* y, std::int64_t k);
void dequantize_row_q4_1(const BlockQ4_1* x, float* y, std::int64_t k);
void dequantize_row_q5_0(const BlockQ5_0* x, float* y, std::int64_t k);
void dequantize_row_q5_1(const BlockQ5_1* x, float* y, std::int64_t k);
void dequantize_row_q8_0(const BlockQ8_0* x, float* y, std::int64_t k);
void dequantize_row_iq4_nl(const BlockIQ4NL* x, float* y, std::int64_t k);
void dequantize_row_q2_K(const BlockQ2_K* x, float* y, std::int64_t k);
void dequantize_row_q3_K(const BlockQ3_K* x, float* y, std::int64_t k);
void dequantize_row_q4_K(const BlockQ4_K* x, float* y, std::int64_t k);
void dequantize_row_q5_K(const BlockQ5_K* x, float* y, std::int64_t k);
void dequantize_row_q6_K(const BlockQ6_K* x, float* y, std::int64_t k);

// Any type with `dequantized` set (F32, F16 and BF16 included: copied or widened exactly): y (k)
// from the row at x, through its row's dequantizer (weight_types.h). False, writing nothing, for
// another type or a k that is not a whole number of blocks.
bool dequantize_row(int type, const void* x, float* y, std::int64_t k);

}  // namespace attn::kernels
