// WebAssembly SIMD128 GEMM (gemm_nn_simd128, gemm_nt_simd128, gemm_tn_simd128; contracts in kernels.h):
// packed panels and a 4×8 register-blocked f32x4 micro-kernel. Same contract as the scalar twins in
// kernels_scalar.cpp; tested against the same double reference. Compiles to nothing unless the
// compiler targets SIMD128 (-msimd128).
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/quant.h"
#include "kernels/simd128_mul_add.h"

namespace attn::kernels {
namespace {

// ==== GEMM: packed panels + a register-blocked micro-kernel (Goto/BLIS structure) =============
// C (M, N) is cut into kMC×kNC blocks, K into kKC slices. For each (N block, K slice) the B slice
// is packed once into kNR-wide column panels; for each M block the A slice is packed into kMR-high
// row panels; the micro-kernel then multiplies one A panel by one B panel into a kMR×kNR tile held
// in registers. Packing turns gemm_nn, gemm_nt and gemm_tn into the same contiguous, zero-padded
// layout, so a single micro-kernel serves Q·Kᵀ, x·Wᵀ, weights·V and the backward's dyᵀ·x.
// Micro-tile rows. SIMD128 build: 4 (one load32_splat of A per row and k). Relaxed-SIMD build: 5,
// the fifth row's splat loaded and the first four shuffled out of one f32x4 load of A (see
// micro_kernel): 10 accumulators instead of 8 cover the FMA latency on both pipes (V8's own peak
// loop: 8 accumulators 58.7, 10: 63.8 GFLOP/s), and the GPT-2-small GEMMs at M = 128 went from
// ~49 to ~53 GFLOP/s. Without FMA each multiply-add needs a temporary register and 5×8 spills
// (36 against 42 GFLOP/s), so that build keeps 4×8. Each C element still sums its k in the same
// order: the tile height changes no result.
#if defined(ATTN_RELAXED_SIMD)
constexpr int kMR = 5;
#else
constexpr int kMR = 4;
#endif
constexpr int kNR = 8;         // micro-tile columns (two f32x4 of B per k)
constexpr int kKC = 768;       // K slice: an A panel (12–15 KB) and a B panel (24 KB) stay in L1
constexpr int kMC = 16 * kMR;  // M block: the packed A block (192–240 KB) stays in L2
constexpr int kNC = 256;       // N block: the packed B block (768 KB) stays in L2/L3
// kKC = 768 covers the K of GPT-2-small's projections in one slice: a C tile is stored once instead
// of once per 256-long slice, and a pre-packed weight's panels are then read as one sequential
// stream. With GPT-2-small's GEMMs (M = 128, every weight streamed from memory once per forward)
// 768 / 16·kMR / 256 ran ~7% faster than 256 / 32·kMR / 512 in both builds (Node 20, 2026-11-25;
// 512 gained nothing: K = 768 still took two slices); the MHA benchmark's shapes moved < 3%.
static_assert(kNR % 4 == 0, "B panels are packed with 4x4 transposes");
static_assert(kMC % kMR == 0 && kNC % kNR == 0, "blocks hold whole panels");
static_assert(kKC % kQK_K == 0, "a K slice of a quantized W holds whole blocks");
// Measured in Node 20 on this machine (M=8192, N=K=512), SIMD128 build: 4×8 ≈ 45 GFLOP/s; 4×12,
// 5×8, 6×8 spill registers in V8 (≈ 29: V8 moves every load of an iteration ahead of its
// arithmetic, so all A splats are live at once); unrolling k by 2 or 4 also spills (≈ 32);
// splatting A from one vector load with shuffles instead of load32_splat: ≈ 37. kKC 128…512 and
// kMC 64…256 are within 3%.

// Packing scratch, sized by the blocking constants above: fixed, so the GEMM never allocates.
// (Single-threaded wasm: thread_local costs nothing and keeps a future threaded build safe.)
alignas(16) thread_local float g_pack_a[kMC * kKC];  // A block: (mc/kMR panels, kc, kMR)
alignas(16) thread_local float g_pack_b[kKC * kNC];  // B block: (nc/kNR panels, kc, kNR)

// dst[k][r] = src[r][k] for r < rows (zero for rows ≤ r < R), k < kc: the panel of R rows of a
// row-major matrix, transposed so that each k is R consecutive floats. 4×4 SIMD transposes.
template <int R>
void pack_rows_transposed(int kc, int rows, const float* src, int ld, float* dst) {
  if (rows < R) {  // edge panel: plain copy with zero padding
    for (int k = 0; k < kc; ++k)
      for (int r = 0; r < R; ++r)
        dst[k * R + r] = r < rows ? src[static_cast<std::ptrdiff_t>(r) * ld + k] : 0.f;
    return;
  }
  int k = 0;
  for (; k + 4 <= kc; k += 4) {
    for (int r = R / 4 * 4; r < R; ++r)  // rows past the last group of 4 (R = 5): plain copies
      for (int kk = k; kk < k + 4; ++kk) dst[kk * R + r] = src[static_cast<std::ptrdiff_t>(r) * ld + kk];
    for (int r = 0; r + 4 <= R; r += 4) {
      const float* s = src + static_cast<std::ptrdiff_t>(r) * ld + k;
      const v128_t r0 = wasm_v128_load(s), r1 = wasm_v128_load(s + ld);
      const v128_t r2 = wasm_v128_load(s + 2 * ld), r3 = wasm_v128_load(s + 3 * ld);
      const v128_t t0 = wasm_i32x4_shuffle(r0, r1, 0, 4, 1, 5);  // r0[0] r1[0] r0[1] r1[1]
      const v128_t t1 = wasm_i32x4_shuffle(r2, r3, 0, 4, 1, 5);
      const v128_t t2 = wasm_i32x4_shuffle(r0, r1, 2, 6, 3, 7);
      const v128_t t3 = wasm_i32x4_shuffle(r2, r3, 2, 6, 3, 7);
      float* d = dst + k * R + r;
      wasm_v128_store(d, wasm_i64x2_shuffle(t0, t1, 0, 2));
      wasm_v128_store(d + R, wasm_i64x2_shuffle(t0, t1, 1, 3));
      wasm_v128_store(d + 2 * R, wasm_i64x2_shuffle(t2, t3, 0, 2));
      wasm_v128_store(d + 3 * R, wasm_i64x2_shuffle(t2, t3, 1, 3));
    }
  }
  for (; k < kc; ++k)
    for (int r = 0; r < R; ++r) dst[k * R + r] = src[static_cast<std::ptrdiff_t>(r) * ld + k];
}

// dst[k][c] = src[k][c] for c < cols (zero up to kNR): a kNR-wide column panel of row-major B.
void pack_cols(int kc, int cols, const float* src, int ld, float* dst) {
  for (int k = 0; k < kc; ++k) {
    const float* s = src + static_cast<std::ptrdiff_t>(k) * ld;
    float* d = dst + k * kNR;
    if (cols == kNR) {
      for (int c = 0; c < kNR; c += 4) wasm_v128_store(d + c, wasm_v128_load(s + c));
    } else {
      for (int c = 0; c < kNR; ++c) d[c] = c < cols ? s[c] : 0.f;
    }
  }
}

// dst[k][r] = src[k][r] for r < rows (zero up to kMR), k < kc: a kMR-row panel of Aᵀ when A is
// stored (K, M) — kMR consecutive columns of A, so one plain 4-float copy per k (gemm_tn).
void pack_a_columns(int kc, int rows, const float* src, int ld, float* dst) {
  for (int k = 0; k < kc; ++k) {
    const float* s = src + static_cast<std::ptrdiff_t>(k) * ld;
    float* d = dst + k * kMR;
    if (rows == kMR) {
      wasm_v128_store(d, wasm_v128_load(s));
      for (int r = 4; r < kMR; ++r) d[r] = s[r];
    } else {
      for (int r = 0; r < kMR; ++r) d[r] = r < rows ? s[r] : 0.f;
    }
  }
}

// Eight 16-bit values (u32 lanes of lo/hi) widened to float32. bfloat16 is the top half of a
// float32. float16: exponent and mantissa shifted into place and scaled by 2^112 (rebiasing 15 →
// 127; exact, and it normalises subnormals), ±inf/NaN (exponent 31) given exponent 255, then the sign.
v128_t widen4(v128_t h, HalfFormat format) {
  if (format == HalfFormat::kBF16) return wasm_i32x4_shl(h, 16);
  const v128_t sign = wasm_i32x4_shl(wasm_v128_and(h, wasm_i32x4_splat(0x8000)), 16);
  const v128_t em = wasm_i32x4_shl(wasm_v128_and(h, wasm_i32x4_splat(0x7fff)), 13);
  const v128_t scaled = wasm_f32x4_mul(em, wasm_f32x4_splat(0x1p112f));
  const v128_t special = wasm_v128_or(em, wasm_i32x4_splat(0x7f800000));
  const v128_t is_special = wasm_i32x4_ge(em, wasm_i32x4_splat(0x0f800000));
  return wasm_v128_or(wasm_v128_bitselect(special, scaled, is_special), sign);
}

// B (N, K) kept in a ggml type (16-bit or quantized blocks): row j at data + j·row_bytes.
struct StoredB {
  const void* data;
  std::size_t row_bytes;
  int type;         // quant.h GgmlType id
  HalfFormat half;  // the 16-bit format when type is F16 or BF16
  bool is_half;
};

// Rows [j, j + rows) and k slice [pc, pc + kc) of a stored W widened or dequantized into the
// (kNR, kKC) scratch, then packed as a float W panel would be: the micro-kernel never sees the
// stored data and its results match linear_nt over the widened W bit for bit.
alignas(16) thread_local float g_widened[kNR * kKC];  // (rows ≤ kNR, kc ≤ kKC), row stride kKC
void pack_stored_panel(int kc, int rows, const StoredB& w, int j, int pc, float* dst) {
  const GgmlTypeInfo* info = ggml_type_info(w.type);
  const std::size_t skip = static_cast<std::size_t>(pc / info->block_elements) * info->block_bytes;
  for (int r = 0; r < rows; ++r) {
    const char* row =
        static_cast<const char*>(w.data) + static_cast<std::ptrdiff_t>(j + r) * w.row_bytes + skip;
    if (w.is_half)
      widen_half_simd128(kc, reinterpret_cast<const std::uint16_t*>(row), w.half, g_widened + r * kKC);
    else
      dequantize_row(w.type, row, g_widened + r * kKC, kc);
  }
  pack_rows_transposed<kNR>(kc, rows, g_widened, kKC, dst);
}

// Packs the A block of rows [i0, i0 + mc) and k slice [pc, pc + kc) into kMR-row panels
// (mc/kMR panels, kc, kMR), reading A as (M, K) or, when A_is_km, as (K, M).
void pack_a_block(int i0, int mc, int pc, int kc, const float* A, int lda, bool A_is_km, float* dst) {
  for (int ir = 0; ir < mc; ir += kMR) {
    const int rows = std::min(kMR, mc - ir);
    if (A_is_km)
      pack_a_columns(kc, rows, A + static_cast<std::ptrdiff_t>(pc) * lda + i0 + ir, lda, dst + ir * kc);
    else
      pack_rows_transposed<kMR>(kc, rows, A + static_cast<std::ptrdiff_t>(i0 + ir) * lda + pc, lda,
                                dst + ir * kc);
  }
}

// The kMR×kNR tile C = a_panel (kc, kMR)ᵀ · b_panel (kc, kNR), added to C when `add`, then plus
// bias (kNR) when set: the same two roundings as a separate add_bias_rows pass, done while the
// tile is in registers (the separate pass over C cost ~4% of the demo's forward).
// kMR·2 f32x4 accumulators + 2 B vectors + A's splats fit in the 16 xmm registers V8 uses.
// (With FMA and one load32_splat per row, 5×8, 6×8 and 4×12 spill; 5×8 with A's rows 0–3 shuffled
// from one load does not: see kMR.)
void micro_kernel(int kc, const float* a, const float* b, float* c, int ldc, bool add, const float* bias) {
  v128_t acc[kMR][kNR / 4];
  for (auto& row : acc)
    for (auto& v : row) v = wasm_f32x4_splat(0.f);
  for (int k = 0; k < kc; ++k, a += kMR, b += kNR) {
    v128_t bv[kNR / 4];
    for (int q = 0; q < kNR / 4; ++q) bv[q] = wasm_v128_load(b + 4 * q);
    if constexpr (kMR == 5) {
      // a[0..3] in one register, each shuffled to a splat just before its use: with one
      // load32_splat per row V8 would hold five splats at once and spill accumulators.
      const v128_t a4 = wasm_v128_load(a);
      const v128_t av[5] = {wasm_i32x4_shuffle(a4, a4, 0, 0, 0, 0), wasm_i32x4_shuffle(a4, a4, 1, 1, 1, 1),
                            wasm_i32x4_shuffle(a4, a4, 2, 2, 2, 2), wasm_i32x4_shuffle(a4, a4, 3, 3, 3, 3),
                            wasm_v128_load32_splat(a + 4)};
      for (int r = 0; r < kMR; ++r)
        for (int q = 0; q < kNR / 4; ++q) acc[r][q] = mul_add(av[r], bv[q], acc[r][q]);
    } else {
      for (int r = 0; r < kMR; ++r) {
        const v128_t av = wasm_v128_load32_splat(a + r);
        for (int q = 0; q < kNR / 4; ++q) acc[r][q] = mul_add(av, bv[q], acc[r][q]);
      }
    }
  }
  for (int r = 0; r < kMR; ++r) {
    for (int q = 0; q < kNR / 4; ++q) {
      float* p = c + static_cast<std::ptrdiff_t>(r) * ldc + 4 * q;
      v128_t v = add ? wasm_f32x4_add(wasm_v128_load(p), acc[r][q]) : acc[r][q];
      if (bias) v = wasm_f32x4_add(v, wasm_v128_load(bias + 4 * q));
      wasm_v128_store(p, v);
    }
  }
}

// Row 0 of micro_kernel's tile alone (a one-row A panel: decoding's x·Wᵀ), the same multiply-adds
// in the same k order, so the same bits as that row of the full tile, at a fifth of the work.
void micro_kernel_one_row(int kc, const float* a, const float* b, float* tile) {
  v128_t acc[kNR / 4];
  for (auto& v : acc) v = wasm_f32x4_splat(0.f);
  for (int k = 0; k < kc; ++k, a += kMR, b += kNR) {
    const v128_t av = wasm_v128_load32_splat(a);
    for (int q = 0; q < kNR / 4; ++q) acc[q] = mul_add(av, wasm_v128_load(b + 4 * q), acc[q]);
  }
  for (int q = 0; q < kNR / 4; ++q) wasm_v128_store(tile + 4 * q, acc[q]);
}

// One packed A block (mc, kc) times one packed B block (kc, nc) into C (mc, nc), plus bias (nc)
// when set; B's kNR-wide panels start b_panel_stride floats apart (kc·kNR when packed per call,
// K·kNR when pre-packed). Edge tiles go through a local tile so no write leaves C's (mc, nc) range.
void macro_kernel(int mc, int nc, int kc, const float* pa, const float* pb, int b_panel_stride, float* C,
                  int ldc, bool add, const float* bias) {
  alignas(16) float tile[kMR * kNR];  // tile: (kMR, kNR) scratch for partial edge tiles
  for (int jr = 0; jr < nc; jr += kNR) {
    const int nr = std::min(kNR, nc - jr);
    for (int ir = 0; ir < mc; ir += kMR) {
      const int mr = std::min(kMR, mc - ir);
      const float* a = pa + ir * kc;
      const float* b = pb + static_cast<std::ptrdiff_t>(jr / kNR) * b_panel_stride;
      float* c = C + static_cast<std::ptrdiff_t>(ir) * ldc + jr;
      if (mr == kMR && nr == kNR) {
        micro_kernel(kc, a, b, c, ldc, add, bias ? bias + jr : nullptr);
        continue;
      }
      if (mr == 1)
        micro_kernel_one_row(kc, a, b, tile);
      else
        micro_kernel(kc, a, b, tile, kNR, false, nullptr);
      for (int r = 0; r < mr; ++r)
        for (int j = 0; j < nr; ++j) {
          float& dst = c[static_cast<std::ptrdiff_t>(r) * ldc + j];
          const float v = add ? dst + tile[r * kNR + j] : tile[r * kNR + j];
          dst = bias ? v + bias[jr + j] : v;
        }
    }
  }
}

// Shared driver: A_is_km selects how A is read (false: (M, K) row-major; true: (K, M), the product
// is then Aᵀ·B); B_is_nk selects how B is read (false: (K, N) row-major; true: (N, K)); prepacked,
// when set, is B (N, K) already in pack_weight_simd128's layout (B and ldb are then unused). bias (N),
// when set, is added to each tile of C as the last K slice stores it. stored, when set, is B (N, K)
// in a 16-bit or quantized ggml type, widened as each panel is packed (B is then unused).
void gemm_packed(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
                 bool accumulate, bool A_is_km, bool B_is_nk, const float* bias,
                 const float* prepacked = nullptr, const StoredB* stored = nullptr) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {  // empty sum: C = 0 (or unchanged when accumulating)
    if (!accumulate)
      for (int i = 0; i < M; ++i) std::memset(C + static_cast<std::ptrdiff_t>(i) * ldc, 0, N * sizeof(float));
    return;
  }
  // 1. N blocks; 2. K slices, packing B once per slice; 3. M blocks, packing A; 4. macro-kernel.
  for (int jc = 0; jc < N; jc += kNC) {
    const int nc = std::min(kNC, N - jc);
    for (int pc = 0; pc < K; pc += kKC) {
      const int kc = std::min(kKC, K - pc);
      const float* pb = prepacked ? prepacked + static_cast<std::ptrdiff_t>(jc) * K + pc * kNR : g_pack_b;
      const int b_panel_stride = prepacked ? K * kNR : kc * kNR;
      for (int jr = 0; jr < nc && !prepacked; jr += kNR) {
        const int cols = std::min(kNR, nc - jr);
        if (stored)
          pack_stored_panel(kc, cols, *stored, jc + jr, pc, g_pack_b + jr * kc);
        else if (B_is_nk)
          pack_rows_transposed<kNR>(kc, cols, B + static_cast<std::ptrdiff_t>(jc + jr) * ldb + pc, ldb,
                                    g_pack_b + jr * kc);
        else
          pack_cols(kc, cols, B + static_cast<std::ptrdiff_t>(pc) * ldb + jc + jr, ldb, g_pack_b + jr * kc);
      }
      const bool add = accumulate || pc > 0;  // later K slices add onto the first
      for (int ic = 0; ic < M; ic += kMC) {
        const int mc = std::min(kMC, M - ic);
        pack_a_block(ic, mc, pc, kc, A, lda, A_is_km, g_pack_a);
        float* c_block = C + static_cast<std::ptrdiff_t>(ic) * ldc + jc;  // (mc, nc)
        macro_kernel(mc, nc, kc, g_pack_a, pb, b_panel_stride, c_block, ldc, add,
                     bias && pc + kc == K ? bias + jc : nullptr);
      }
    }
  }
}

}  // namespace

void gemm_nn_simd128(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
                     bool accumulate) {
  gemm_packed(M, N, K, A, lda, B, ldb, C, ldc, accumulate, false, false, nullptr);
}

void gemm_nt_simd128(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
                     bool accumulate) {
  gemm_packed(M, N, K, A, lda, B, ldb, C, ldc, accumulate, false, true, nullptr);
}

// Aᵀ·B: only A's packing differs (pack_a_columns); the blocking, micro-kernel and k order are
// gemm_nn's, so the result equals gemm_nn_simd128 over an explicit Aᵀ bit for bit.
void gemm_tn_simd128(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
                     bool accumulate) {
  gemm_packed(M, N, K, A, lda, B, ldb, C, ldc, accumulate, true, false, nullptr);
}

void linear_nt_simd128(int M, int N, int K, const float* A, int lda, const float* W, int ldw,
                       const float* bias, float* C, int ldc) {
  if (K <= 0) {  // the empty product is 0: C = bias
    gemm_packed(M, N, K, A, lda, W, ldw, C, ldc, false, false, true, nullptr);
    if (bias) add_bias_rows_simd128(M, N, bias, C, ldc);
    return;
  }
  gemm_packed(M, N, K, A, lda, W, ldw, C, ldc, false, false, true, bias);
}

void widen_half_simd128(int n, const std::uint16_t* x, HalfFormat format, float* y) {
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const v128_t h = wasm_v128_load(x + i);
    wasm_v128_store(y + i, widen4(wasm_u32x4_extend_low_u16x8(h), format));
    wasm_v128_store(y + i + 4, widen4(wasm_u32x4_extend_high_u16x8(h), format));
  }
  if (i < n) {  // the tail through one zero-padded vector: the same arithmetic as the body
    alignas(16) std::uint16_t in[8] = {};
    alignas(16) float out[8];
    std::memcpy(in, x + i, (n - i) * sizeof(std::uint16_t));
    const v128_t h = wasm_v128_load(in);
    wasm_v128_store(out, widen4(wasm_u32x4_extend_low_u16x8(h), format));
    wasm_v128_store(out + 4, widen4(wasm_u32x4_extend_high_u16x8(h), format));
    std::memcpy(y + i, out, (n - i) * sizeof(float));
  }
}

void linear_nt_half_simd128(int M, int N, int K, const float* A, int lda, const std::uint16_t* W, int ldw,
                            HalfFormat format, const float* bias, float* C, int ldc) {
  if (K <= 0) return linear_nt_simd128(M, N, K, A, lda, nullptr, 0, bias, C, ldc);  // C = bias
  const StoredB stored{W, static_cast<std::size_t>(ldw) * 2, format == HalfFormat::kF16 ? 1 : 30, format,
                       true};
  gemm_packed(M, N, K, A, lda, nullptr, ldw, C, ldc, false, false, true, bias, nullptr, &stored);
}

void linear_nt_quant_simd128(int M, int N, int K, const float* A, int lda, const void* W,
                             std::size_t ldw_bytes, int type, const float* bias, float* C, int ldc) {
  if (K <= 0 || ggml_type_info(type) == nullptr)  // C = bias
    return linear_nt_simd128(M, N, 0, A, lda, nullptr, 0, bias, C, ldc);
  const StoredB stored{W, ldw_bytes, type, HalfFormat::kBF16, false};
  gemm_packed(M, N, K, A, lda, nullptr, 0, C, ldc, false, false, true, bias, nullptr, &stored);
}

std::int64_t packed_weight_floats_simd128(int N, int K) {
  return static_cast<std::int64_t>((N + kNR - 1) / kNR * kNR) * K;
}

// Pre-packed weights: panel-major, panel p = columns 8p … 8p+7 of W as (K, kNR), zero-padded to kNR
// columns, at p·K·kNR. The K slice [pc, pc + kc) of a panel is then the contiguous (kc, kNR) block
// the per-call packing writes, so the micro-kernel reads both alike.
void pack_weight_simd128(int N, int K, const float* W, int ldw, float* packed) {
  for (int j = 0; j < N; j += kNR)
    pack_rows_transposed<kNR>(K, std::min(kNR, N - j), W + static_cast<std::ptrdiff_t>(j) * ldw, ldw,
                              packed + static_cast<std::ptrdiff_t>(j) * K);
}

void linear_nt_packed_simd128(int M, int N, int K, const float* A, int lda, const float* packed,
                              const float* bias, float* C, int ldc) {
  if (K <= 0) return linear_nt_simd128(M, N, K, A, lda, packed, K, bias, C, ldc);  // C = bias
  gemm_packed(M, N, K, A, lda, nullptr, 0, C, ldc, false, false, true, bias, packed);
}

// Panel by panel: panel p (rows 8p … 8p+7) occupies floats [8p·K, 8(p+1)·K) in both
// layouts, so each is copied out (8·K floats of scratch) and packed back over itself; the last,
// partial panel's padding rows become zeros.
void pack_weight_in_place_simd128(int N, int K, float* W) {
  std::vector<float> panel(static_cast<std::size_t>(kNR) * K);
  for (int j = 0; j < N; j += kNR) {
    const int rows = std::min(kNR, N - j);
    float* at = W + static_cast<std::ptrdiff_t>(j) * K;
    std::memcpy(panel.data(), at, static_cast<std::size_t>(rows) * K * sizeof(float));
    pack_rows_transposed<kNR>(K, rows, panel.data(), K, at);
  }
}

int packed_weight_panel_rows_simd128() {
  return kNR;
}

void packed_weight_row_simd128(int K, const float* packed, int r, float* out) {
  const float* panel = packed + static_cast<std::ptrdiff_t>(r / kNR) * kNR * K + r % kNR;
  for (int k = 0; k < K; ++k) out[k] = panel[static_cast<std::ptrdiff_t>(k) * kNR];
}

}  // namespace attn::kernels
#endif  // __wasm_simd128__
