// Kernel contracts. Every kernel has a scalar twin (`*_scalar`, kernels_scalar.cpp, always built)
// and, under WebAssembly SIMD128, a vector version (`*_simd128`: gemm_simd128.cpp for the products,
// kernels_simd128.cpp for the rest, built only when __wasm_simd128__ is defined). The unsuffixed name
// is the one the core calls; CMake picks the implementation (kernels_dispatch.cpp). Both variants have
// exactly the same signature and are tested against a double-precision reference
// (tests/cpp/test_kernels.cpp, test_kernels_softmax.cpp).
//
// All matrices are row-major float32 with an explicit leading dimension (row stride, in floats).
// No kernel allocates on the heap unless its comment says so; none reads or writes outside the
// ranges given. Element-wise and row kernels (scale_vec, add_vec, mask_row, softmax_row,
// scale_mask_softmax_row, layer_norm_row, add_bias_rows) allow the output to alias the input (in place).
#pragma once
#include <cstddef>
#include <cstdint>

namespace attn::kernels {

// ---- matrix products ------------------------------------------------------------------------
// C (M, N) = A (M, K) · B (K, N)            [C += ... when accumulate]
void gemm_nn(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
             bool accumulate);
// C (M, N) = A (M, K) · Bᵀ, B stored (N, K)  [C += ... when accumulate]
// Used for Q·Kᵀ and for x·Wᵀ with nn.Linear weights stored (out, in).
void gemm_nt(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
             bool accumulate);
// C (M, N) = Aᵀ · B, A stored (K, M) with row stride lda, B (K, N) row stride ldb  [C += ... when accumulate]
// Used for the backward products dW = dyᵀ·x, dV = P̃ᵀ·dO and dK = dSᵀ·Q without a transposed copy.
// Each C[i][j] sums its products in k order, as gemm_nn over an explicit Aᵀ does, so replacing
// transpose + gemm_nn by gemm_tn gives the same floats.
void gemm_tn(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
             bool accumulate);

// C (M, N) = A (M, K) · Wᵀ + bias, W stored (N, K) as nn.Linear keeps it; bias (N) may be null.
// Bit-identical to gemm_nt then add_bias_rows; the SIMD128 version adds the bias to each block of C
// while it is still in cache (a separate pass over a large C cost ~3% of the product here).
void linear_nt(int M, int N, int K, const float* A, int lda, const float* W, int ldw, const float* bias,
               float* C, int ldc);

// ---- pre-packed weights --------------------------------------------------------------------
// A module's projection weights are packed for the GEMM once, when they are set, instead of on
// every call (for the demo's 16×64×64 projections packing W was ~12% of the product). The packed
// layout is the variant's own: only the same variant's linear_nt_packed reads it.
// Floats the packed form of a W (N, K) takes.
std::int64_t packed_weight_floats(int N, int K);
// packed (packed_weight_floats(N, K)) = W (N, K), row stride ldw, in the variant's GEMM layout.
void pack_weight(int N, int K, const float* W, int ldw, float* packed);
// linear_nt with W given by pack_weight(N, K, W, ...): the same result, bit for bit.
void linear_nt_packed(int M, int N, int K, const float* A, int lda, const float* packed, const float* bias,
                      float* C, int ldc);
// A checkpoint's float32 matrices are packed where they lie (no second copy of a model): W holds
// packed_weight_floats(N, K) floats, the first N·K of them W (N, K) row-major (row stride K);
// afterwards W is pack_weight's layout of that matrix. The layout groups packed_weight_panel_rows()
// consecutive rows (8 for SIMD128, 1 for the scalar twin, whose packed layout is W itself), so the
// rows [r0, r0 + n) of a packed matrix with r0 a multiple of it are the packed form of that block,
// starting at packed + r0·K (a fused q/k/v weight's blocks are each a packed matrix).
void pack_weight_in_place(int N, int K, float* W);
int packed_weight_panel_rows();
// out (K) = row r of the matrix a packed W (rows ≥ r + 1, K columns) holds.
void packed_weight_row(int K, const float* packed, int r, float* out);

// ---- 16-bit weights (checkpoints stored as float16 or bfloat16) ----------------------------
// A pretrained model keeps its matrices in the file's 16-bit format (half the bytes of float32) and
// widens them only inside the GEMM, as each panel of W is packed.
enum class HalfFormat : int { kF16 = 1, kBF16 = 2 };
// y (n) = x (n) widened to float32. Exact: every float16 and bfloat16 value (subnormals, ±inf, NaN
// included) is a float32; a NaN keeps its sign and payload bits.
void widen_half(int n, const std::uint16_t* x, HalfFormat format, float* y);
// C (M, N) = A (M, K) · widen(W)ᵀ + bias, W (N, K) 16-bit with row stride ldw; bias (N) may be null.
// No widened copy of W is made; the result equals linear_nt over widen_half(W), bit for bit.
void linear_nt_half(int M, int N, int K, const float* A, int lda, const std::uint16_t* W, int ldw,
                    HalfFormat format, const float* bias, float* C, int ldc);
// y (n) = x (n) narrowed to IEEE binary16, rounded to nearest, ties to even (the float16 KV cache,
// widened back by widen_half). Subnormal halves are kept (no flush to zero); a magnitude from
// 65520 up (past the largest half, 65504, by half an ulp or more) and ±inf become ±inf, as
// llama.cpp's ggml_fp32_to_fp16 stores them; NaN becomes a quiet NaN of its sign (payload dropped).
// Scalar twin narrow_f16_scalar (kv_half_scalar.cpp), vector one narrow_f16_simd128
// (kv_half_simd128.cpp); the same bits.
void narrow_f16(std::int64_t n, const float* x, std::uint16_t* y);
void narrow_f16_scalar(std::int64_t n, const float* x, std::uint16_t* y);
#if defined(__wasm_simd128__)
void narrow_f16_simd128(std::int64_t n, const float* x, std::uint16_t* y);
#endif

// ---- quantized weights (ggml blocks, quant.h) ------------------------------------------------
// C (M, N) = A (M, K) · dequantize(W)ᵀ + bias, W (N, K) in ggml type `type` (any type quant.h's
// dequantize_row reads; K a whole number of its blocks), row j at W + j·ldw_bytes; bias (N) may be
// null. For M > kQuantGemvRows (prefill) each panel of W is dequantized (dequantize_row, exact) into
// a bounded per-thread scratch and multiplied by the float32 GEMM, so the result equals linear_nt
// over the dequantized W, bit for bit, and no dequantized copy of W is made. For a block type and
// 1 ≤ M ≤ kQuantGemvRows (decoding) it is gemv_quant: the same products of the same dequantized
// values summed in another order (within float32 rounding of the GEMM's result, not its bits).
void linear_nt_quant(int M, int N, int K, const float* A, int lda, const void* W, std::size_t ldw_bytes,
                     int type, const float* bias, float* C, int ldc);
// The exact mode's fused GEMV for a block type (block_elements > 1) and M ≤ kQuantGemvRows: each
// block dequantized into registers (SIMD128) or a block-sized stack buffer (scalar), with the
// dequantizer's bits, and multiplied into sixteen partial sums per row: element k into sum k mod 16
// in k order, then t_l = (s_l + s_{4+l}) + (s_{8+l} + s_{12+l}), (t_0 + t_2) + (t_1 + t_3), + bias.
// The SIMD128 version equals the scalar twin bit for bit; the relaxed-SIMD build fuses each
// multiply-add (within float32 rounding). False, writing nothing, for another type or a larger M.
constexpr int kQuantGemvRows = 4;
bool gemv_quant_scalar(int M, int N, int K, const float* A, int lda, const void* W, std::size_t ldw_bytes,
                       int type, const float* bias, float* C, int ldc);
bool gemv_quant_simd128(int M, int N, int K, const float* A, int lda, const void* W, std::size_t ldw_bytes,
                        int type, const float* bias, float* C, int ldc);
// The same product in the int8 activation mode (quant_int8.h): A's rows quantized per block as
// llama.cpp's CPU backend quantizes them for `type`, integer dot products, the block scales applied
// after. The activations are quantized once on the calling thread into a per-thread buffer that
// only grows; the threads split C's rows or columns (the same bits at every thread count). False,
// writing nothing, for a type without an int8 path (quant_int8.h activation_blocks_for).
bool linear_nt_int8(int M, int N, int K, const float* A, int lda, const void* W, std::size_t ldw_bytes,
                    int type, const float* bias, float* C, int ldc);

// One of several products over the same activations (linear_nt_quant_group): C (M, N), row stride
// ldc, = A · Wᵀ + bias, W (N, K) of ggml type `type`, row j at W + j·ldw_bytes; bias may be null.
struct QuantProduct {
  int N;
  const void* W;
  std::size_t ldw_bytes;
  int type;
  const float* bias;
  float* C;
  int ldc;
};
constexpr int kMaxQuantGroup = 8;
// A layer's products of one A (M ≤ kQuantGemvRows rows: decoding), such as its q, k and v, or gate
// and up, as one job of the pool: their output columns are concatenated and dealt to the threads
// in contiguous runs of 8, so each thread streams contiguous weight rows and the pool wakes once
// for all of them; in the int8 mode (`int8`) the activations are quantized once. Every element gets
// the bits linear_nt_quant (or linear_nt_int8) gives it alone, at every thread count. False,
// computing nothing, where they cannot go together: M out of range, more than kMaxQuantGroup
// products, a type without blocks, or (int8) one without an int8 product or with other activation
// blocks than the first's; the caller then runs them one by one.
bool linear_nt_quant_group(int M, int K, const float* A, int lda, const QuantProduct* products, int count,
                           bool int8);

// ---- element-wise and row-wise --------------------------------------------------------------
// C (M, N) += bias (N) broadcast over rows.
void add_bias_rows(int M, int N, const float* bias, float* C, int ldc);
// y (n) = x (n) * scale
void scale_vec(int n, const float* x, float scale, float* y);
// y (n) = a (n) + b (n)
void add_vec(int n, const float* a, const float* b, float* y);
// Masking of one row of scaled scores (n):
//   y[j] = allowed && !allowed[j] ? -inf : x[j] + (additive ? additive[j] : 0)
// `allowed` and `additive` may each be null. Adding 0 when additive is null keeps the fused and the
// step-by-step (trace) paths bit-identical.
void mask_row(int n, const float* x, const float* additive, const std::uint8_t* allowed, float* y);
// Numerically stable softmax of one row (n): y = exp(x - max) / sum.
// A row whose entries are all -inf (fully masked) yields all zeros — defined behaviour, never NaN.
void softmax_row(int n, const float* x, float* y);
// Fused fast path: softmax_row(mask_row(scale_vec(x))) in one pass over the row, bit-identical to
// calling the three kernels in sequence (the trace path does that and a test compares them).
void scale_mask_softmax_row(int n, const float* x, float scale, const float* additive,
                            const std::uint8_t* allowed, float* y);
// LayerNorm of one row (n): y = (x - mean) / sqrt(var + eps) * gamma + beta (biased variance, as
// PyTorch). gamma/beta may be null (identity / zero).
void layer_norm_row(int n, const float* x, const float* gamma, const float* beta, float eps, float* y);

// ---- GELU, exact erf form: y = x·Φ(x), Φ(x) = ½(1 + erf(x/√2)) ----------------------------------
// y (n) = GELU(x); cdf (n), when non-null, receives Φ(x) for gelu_backward_row. y may alias x.
// The scalar twin calls std::erf. The SIMD128 version evaluates erfc with Numerical Recipes'
// Chebyshev fit (relative error < 1.2e-7 for every argument) and the vector exp: one exp per
// element, no libm call (erf was a fifth of a small training step).
void gelu_row(int n, const float* x, float* y, float* cdf);
// dx (n) = dy · (Φ(x) + x·φ(x)), φ the standard normal density, from the cdf gelu_row saved.
// dx may alias dy.
void gelu_backward_row(int n, const float* x, const float* cdf, const float* dy, float* dx);

// ---- the activations of pretrained MLPs ----------------------------------------------------------
// Both through the logistic σ(z) = 1/(1 + e^−z), evaluated as 1/(1 + e) for z ≥ 0 and e/(1 + e) for
// z < 0 with e = e^−|z| ≤ 1: no overflow and no cancellation at either tail. y may alias the inputs.
// GPT-2's "gelu_new": y = 0.5·x·(1 + tanh(u)) = x·σ(2u), u = √(2/π)·(x + 0.044715·x³).
void gelu_tanh_row(int n, const float* x, float* y);
// Llama's SwiGLU gate: y = silu(g)·u = g·σ(g)·u.
void silu_mul_row(int n, const float* g, const float* u, float* y);

// ---- online softmax (flash-attention tiles) -------------------------------------------------
// One row segment of a score tile (keys j0 … j0+n) folded into the running softmax state of its
// query row: z = mask_row(scale_vec(x)) (the same operations), m' = max(*m, max z),
// p = exp(z - m') (0 where z = -inf), *l = *l · exp(*m - m') + Σ p, *m = m'. Returns exp(*m - m'),
// the factor the caller multiplies its unnormalised output row by before adding p · V (exactly 1
// when the max did not move, 0 from the empty state). Start from m = -inf, l = 0; finish with
// out / l, or zeros when l == 0 (nothing allowed: then p = 0 and the return value is 1).
// p may alias x.
float online_softmax_row(int n, const float* x, float scale, const float* additive,
                         const std::uint8_t* allowed, float* m, float* l, float* p);

// ---- the two twins, always declared; *_simd128 exist only when __wasm_simd128__ ---------------
#define ATTN_DECLARE_KERNELS(suffix)                                                                     \
  void gemm_nn_##suffix(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, \
                        int ldc, bool accumulate);                                                       \
  void gemm_nt_##suffix(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, \
                        int ldc, bool accumulate);                                                       \
  void gemm_tn_##suffix(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, \
                        int ldc, bool accumulate);                                                       \
  void linear_nt_##suffix(int M, int N, int K, const float* A, int lda, const float* W, int ldw,         \
                          const float* bias, float* C, int ldc);                                         \
  std::int64_t packed_weight_floats_##suffix(int N, int K);                                              \
  void pack_weight_##suffix(int N, int K, const float* W, int ldw, float* packed);                       \
  void linear_nt_packed_##suffix(int M, int N, int K, const float* A, int lda, const float* packed,      \
                                 const float* bias, float* C, int ldc);                                  \
  void pack_weight_in_place_##suffix(int N, int K, float* W);                                            \
  int packed_weight_panel_rows_##suffix();                                                               \
  void packed_weight_row_##suffix(int K, const float* packed, int r, float* out);                        \
  void add_bias_rows_##suffix(int M, int N, const float* bias, float* C, int ldc);                       \
  void widen_half_##suffix(int n, const std::uint16_t* x, HalfFormat format, float* y);                  \
  void linear_nt_half_##suffix(int M, int N, int K, const float* A, int lda, const std::uint16_t* W,     \
                               int ldw, HalfFormat format, const float* bias, float* C, int ldc);        \
  void linear_nt_quant_##suffix(int M, int N, int K, const float* A, int lda, const void* W,             \
                                std::size_t ldw_bytes, int type, const float* bias, float* C, int ldc);  \
  void scale_vec_##suffix(int n, const float* x, float scale, float* y);                                 \
  void add_vec_##suffix(int n, const float* a, const float* b, float* y);                                \
  void mask_row_##suffix(int n, const float* x, const float* additive, const std::uint8_t* allowed,      \
                         float* y);                                                                      \
  void softmax_row_##suffix(int n, const float* x, float* y);                                            \
  void scale_mask_softmax_row_##suffix(int n, const float* x, float scale, const float* additive,        \
                                       const std::uint8_t* allowed, float* y);                           \
  void layer_norm_row_##suffix(int n, const float* x, const float* gamma, const float* beta, float eps,  \
                               float* y);                                                                \
  float online_softmax_row_##suffix(int n, const float* x, float scale, const float* additive,           \
                                    const std::uint8_t* allowed, float* m, float* l, float* p);          \
  void gelu_row_##suffix(int n, const float* x, float* y, float* cdf);                                   \
  void gelu_backward_row_##suffix(int n, const float* x, const float* cdf, const float* dy, float* dx);  \
  void gelu_tanh_row_##suffix(int n, const float* x, float* y);                                          \
  void silu_mul_row_##suffix(int n, const float* g, const float* u, float* y);

ATTN_DECLARE_KERNELS(scalar)
#if defined(__wasm_simd128__)
ATTN_DECLARE_KERNELS(simd128)
#endif

// "relaxed-simd", "simd128" or "scalar": which variant the unsuffixed names call in this build.
// "relaxed-simd" is the SIMD128 variant built with -mrelaxed-simd (ATTN_RELAXED_SIMD): the same
// kernels, with the GEMM's multiply + add fused into f32x4.relaxed_madd (gemm_simd128.cpp).
const char* active_variant();

}  // namespace attn::kernels
