// The int8 activation mode of quantized weights (docs/gguf.md, "Activations: exact or int8"): the
// matrix product x·Wᵀ computed as llama.cpp's CPU backend computes it. Each activation row is
// quantized per block to the 8-bit format ggml pairs with W's type (its vec_dot_type: Q8_0 for
// Q4_0, Q5_0, Q8_0 and IQ4_NL; Q8_1 for Q4_1 and Q5_1; Q8_K for the K-quants), each block's dot
// product is a sum of integer products (exact), and the blocks' float scales are applied after.
//
// A weight row is first unpacked (unpack_row) into 16-bit integers with each group's integer
// scale folded in, so that one dot-product routine serves every type:
//   Q4_0, Q5_0, Q8_0, IQ4_NL   x = d · q                      (q with its offset removed)
//   Q4_1, Q5_1                 x = d · q + m
//   Q2_K, Q4_K, Q5_K           x = d · (sc_g · q) − dmin · mn_g
//   Q3_K, Q6_K                 x = d · (sc_g · q)             (signed sc and q)
// and a block's term with an activation block (scale da, quants a) is, in this order of float
// operations,  (d·da)·Σq·a  [+ m·s  for Q8_1]  [− (dmin·da)·Σ_g mn_g·Σ_{g} a  for the K-quants].
// The integer sums are exact, so the scalar and SIMD128 twins give the same bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/weight_types.h"

namespace attn::kernels {

// ggml's vec_dot_type of each quantized weight type: how the activations are quantized (the
// `activations` of its row, weight_types.h).
ActivationBlocks activation_blocks_for(int type);      // kNone: not a type the int8 mode reads
int activation_block_elements(ActivationBlocks kind);  // 32, or 256 for Q8_K

// Activations (rows, cols) quantized as ggml's quantize_row_q8_0/q8_1/q8_K_ref do.
struct QuantizedActivations {
  ActivationBlocks kind = ActivationBlocks::kNone;
  int rows = 0, cols = 0, block = 0;
  std::vector<std::int16_t> q;          // (rows, cols): the 8-bit quants, widened once to 16 bits
  std::vector<std::int8_t> q8;          // (rows, cols): the same quants as bytes (the fused GEMV's)
  std::vector<float> d;                 // (rows, cols / block): scales (Q8_0/Q8_1: the float16's value)
  std::vector<float> s;                 // Q8_1 (rows, cols / 32): d · Σq as its float16 holds it
  std::vector<std::int32_t> group_sum;  // Q8_K (rows, cols / 16): Σq over each 16 (ggml's bsums)
  std::vector<std::int32_t> pair_sum;   // Q8_K (rows, cols / 32): Σq over each 32 (Q4_K's groups)
};

// Quantizes A (M, K), row stride lda, for weights of `type` into `out` (its vectors reused: no
// allocation once they are large enough). False for a type without an int8 path or a K that is
// not a whole number of the activation blocks.
bool quantize_activations(int type, int M, int K, const float* A, int lda, QuantizedActivations& out);

// One weight row unpacked (see above): q (K), and per block d and m (dmin / m; 0 when none), and
// the K-quants' group mins mn (per 16 for Q2_K, per 32 for Q4_K / Q5_K; 16 slots per block).
struct UnpackedRow {
  std::vector<std::int16_t> q;
  std::vector<float> d, m;
  std::vector<std::uint8_t> mins;
  void reserve(int K);  // room for K elements (no allocation after the first call of a size)
};
// False for a type without an int8 path. The scalar twin unpacks every type; the SIMD128 one
// unpacks Q4_0, Q5_0, Q8_0, IQ4_NL, Q4_K and Q6_K with vector operations and the rest as the scalar does.
bool unpack_row_scalar(int type, const void* row, int K, UnpackedRow& out);
bool unpack_row_simd128(int type, const void* row, int K, UnpackedRow& out);

// C (M, N), row stride ldc, = the int8-mode product of the quantized activations' rows [0, M) with
// W (N, K) of `type` (row j at W + j·ldw_bytes), plus bias (N, may be null); the threads split
// what the dispatcher (linear_nt_int8 in kernels.h) gives each.
void linear_nt_int8_scalar(int M, int N, int K, const QuantizedActivations& a, int first_row, const void* W,
                           std::size_t ldw_bytes, int type, const float* bias, float* C, int ldc);
void linear_nt_int8_simd128(int M, int N, int K, const QuantizedActivations& a, int first_row, const void* W,
                            std::size_t ldw_bytes, int type, const float* bias, float* C, int ldc);

// The float part of a block's term, shared by every path so their bits agree: `acc` plus block b of a
// weight row (its d and its m — dmin or m, 0 when none) against activation row `row`, given the
// block's exact integer sums: dot = Σq·a and, for the K-quants with mins, min_sum = Σ_g mn_g·Σa_g.
inline float add_block_term(float acc, float d, float m, std::int32_t min_sum, int b,
                            const QuantizedActivations& a, int row, std::int32_t dot) {
  const int blocks = a.cols / a.block;
  const float da = a.d[static_cast<std::size_t>(row) * blocks + b];
  acc += (d * da) * static_cast<float>(dot);
  if (a.kind == ActivationBlocks::kQ8_1)
    acc += m * a.s[static_cast<std::size_t>(row) * blocks + b];
  else if (a.kind == ActivationBlocks::kQ8_K && m != 0.0f)
    acc -= (m * da) * static_cast<float>(min_sum);
  return acc;
}
// The same for an unpacked row, its min_sum summed here over the 16 groups of 16 (the mins of
// Q4_K / Q5_K, per 32, stored twice).
inline float add_block_term(float acc, const UnpackedRow& u, int b, const QuantizedActivations& a, int row,
                            std::int32_t dot) {
  std::int32_t min_sum = 0;
  if (a.kind == ActivationBlocks::kQ8_K && u.m[b] != 0.0f) {
    const std::size_t block = static_cast<std::size_t>(row) * (a.cols / a.block) + b;
    const std::int32_t* gs = a.group_sum.data() + block * 16;
    const std::uint8_t* mn = u.mins.data() + static_cast<std::size_t>(b) * 16;
    for (int g = 0; g < 16; ++g) min_sum += mn[g] * gs[g];
  }
  return add_block_term(acc, u.d[b], u.m[b], min_sum, b, a, row, dot);
}

// The SIMD128 twin's fused GEMV (quant_gemv_simd128.cpp): C's rows [0, M) for M < 4 with W's blocks
// read straight into registers (no unpacked row), for every type with an int8 path. False (nothing
// written) for another type.
bool gemv_int8_simd128(int M, int N, int K, const QuantizedActivations& a, int first_row, const void* W,
                       std::size_t ldw_bytes, int type, const float* bias, float* C, int ldc);

}  // namespace attn::kernels
