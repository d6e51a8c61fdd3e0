// WebAssembly SIMD128 versions of the kernels in kernels.h (f32x4, no FMA: wasm SIMD128 has none).
// Same contracts as the scalar twins in kernels_scalar.cpp; tested against the same double
// reference. Compiles to nothing unless the compiler targets SIMD128 (-msimd128).
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>

#include "kernels/kernels.h"

namespace attn::kernels {
namespace {

// ==== GEMM: packed panels + a register-blocked micro-kernel (Goto/BLIS structure) =============
// C (M, N) is cut into kMC×kNC blocks, K into kKC slices. For each (N block, K slice) the B slice
// is packed once into kNR-wide column panels; for each M block the A slice is packed into kMR-high
// row panels; the micro-kernel then multiplies one A panel by one B panel into a kMR×kNR tile held
// in registers. Packing turns both gemm_nn and gemm_nt into the same contiguous, zero-padded
// layout, so a single micro-kernel serves Q·Kᵀ, x·Wᵀ and weights·V.
constexpr int kMR = 4;    // micro-tile rows (one splat of A per row and k)
constexpr int kNR = 8;    // micro-tile columns (two f32x4 of B per k)
constexpr int kKC = 256;  // K slice: an A panel (4 KB) and a B panel (8 KB) stay in L1
constexpr int kMC = 128;  // M block: the packed A block (128 KB) stays in L2
constexpr int kNC = 512;  // N block: the packed B block (512 KB) stays in L2/L3
static_assert(kMR % 4 == 0 && kNR % 4 == 0, "panels are packed with 4x4 transposes");
static_assert(kMC % kMR == 0 && kNC % kNR == 0, "blocks hold whole panels");
// Measured in Node 20 on this machine (M=8192, N=K=512): 4×8 ≈ 45 GFLOP/s; 4×12, 5×8, 6×8 spill
// registers in V8 (≈ 29); unrolling k by 2 or 4 also spills (≈ 32); splatting A from one vector
// load with shuffles instead of load32_splat: ≈ 37. kKC 128…512 and kMC 64…256 are within 3%.

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
    for (int r = 0; r < R; r += 4) {
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

// The kMR×kNR tile C = a_panel (kc, kMR)ᵀ · b_panel (kc, kNR), added to C when `add`.
// 8 f32x4 accumulators + 2 B vectors + 1 A splat fit in the 16 xmm registers V8 uses.
void micro_kernel(int kc, const float* a, const float* b, float* c, int ldc, bool add) {
  v128_t acc[kMR][kNR / 4];
  for (auto& row : acc)
    for (auto& v : row) v = wasm_f32x4_splat(0.f);
  for (int k = 0; k < kc; ++k, a += kMR, b += kNR) {
    v128_t bv[kNR / 4];
    for (int q = 0; q < kNR / 4; ++q) bv[q] = wasm_v128_load(b + 4 * q);
    for (int r = 0; r < kMR; ++r) {
      const v128_t av = wasm_v128_load32_splat(a + r);
      for (int q = 0; q < kNR / 4; ++q) acc[r][q] = wasm_f32x4_add(acc[r][q], wasm_f32x4_mul(av, bv[q]));
    }
  }
  for (int r = 0; r < kMR; ++r) {
    for (int q = 0; q < kNR / 4; ++q) {
      float* p = c + static_cast<std::ptrdiff_t>(r) * ldc + 4 * q;
      wasm_v128_store(p, add ? wasm_f32x4_add(wasm_v128_load(p), acc[r][q]) : acc[r][q]);
    }
  }
}

// One packed A block (mc, kc) times one packed B block (kc, nc) into C (mc, nc).
// Edge tiles go through a local tile so no write leaves C's (mc, nc) range.
void macro_kernel(int mc, int nc, int kc, const float* pa, const float* pb, float* C, int ldc, bool add) {
  alignas(16) float tile[kMR * kNR];  // tile: (kMR, kNR) scratch for partial edge tiles
  for (int jr = 0; jr < nc; jr += kNR) {
    const int nr = std::min(kNR, nc - jr);
    for (int ir = 0; ir < mc; ir += kMR) {
      const int mr = std::min(kMR, mc - ir);
      const float* a = pa + ir * kc;
      const float* b = pb + jr * kc;
      float* c = C + static_cast<std::ptrdiff_t>(ir) * ldc + jr;
      if (mr == kMR && nr == kNR) {
        micro_kernel(kc, a, b, c, ldc, add);
        continue;
      }
      micro_kernel(kc, a, b, tile, kNR, false);
      for (int r = 0; r < mr; ++r)
        for (int j = 0; j < nr; ++j) {
          float& dst = c[static_cast<std::ptrdiff_t>(r) * ldc + j];
          dst = add ? dst + tile[r * kNR + j] : tile[r * kNR + j];
        }
    }
  }
}

// Shared driver: B_is_nk selects how B is read (false: (K, N) row-major; true: (N, K)).
void gemm_packed(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
                 bool accumulate, bool B_is_nk) {
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
      for (int jr = 0; jr < nc; jr += kNR) {
        const int cols = std::min(kNR, nc - jr);
        if (B_is_nk)
          pack_rows_transposed<kNR>(kc, cols, B + static_cast<std::ptrdiff_t>(jc + jr) * ldb + pc, ldb,
                                    g_pack_b + jr * kc);
        else
          pack_cols(kc, cols, B + static_cast<std::ptrdiff_t>(pc) * ldb + jc + jr, ldb, g_pack_b + jr * kc);
      }
      const bool add = accumulate || pc > 0;  // later K slices add onto the first
      for (int ic = 0; ic < M; ic += kMC) {
        const int mc = std::min(kMC, M - ic);
        for (int ir = 0; ir < mc; ir += kMR)
          pack_rows_transposed<kMR>(kc, std::min(kMR, mc - ir),
                                    A + static_cast<std::ptrdiff_t>(ic + ir) * lda + pc, lda,
                                    g_pack_a + ir * kc);
        macro_kernel(mc, nc, kc, g_pack_a, g_pack_b, C + static_cast<std::ptrdiff_t>(ic) * ldc + jc, ldc,
                     add);
      }
    }
  }
}

// ==== vector helpers ============================================================================

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// n < 4 floats into a vector, the missing lanes set to `fill`.
v128_t load_partial(const float* x, int n, float fill) {
  alignas(16) float t[4] = {fill, fill, fill, fill};
  std::memcpy(t, x, n * sizeof(float));
  return wasm_v128_load(t);
}

// The first n < 4 lanes of v to y.
void store_partial(float* y, int n, v128_t v) {
  alignas(16) float t[4];
  wasm_v128_store(t, v);
  std::memcpy(y, t, n * sizeof(float));
}

// Horizontal reductions in a fixed order (so every caller rounds the same way).
float hsum(v128_t v) {
  v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
  return wasm_f32x4_extract_lane(v, 0);
}
float hmax(v128_t v) {
  v = wasm_f32x4_pmax(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  v = wasm_f32x4_pmax(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
  return wasm_f32x4_extract_lane(v, 0);
}

// exp(x) per lane, for the x ≤ 0 every caller passes (x - max); also valid up to 88.
// 1. Clamp to [-88, 88]: -inf and anything below -88 land on n = -127 in step 2, whose 2^n bits
//    are all zero, so they return exactly 0 without a compare and select.
// 2. Range reduction x = n·ln2 + r, |r| ≤ ln2/2: adding 1.5·2^23 rounds x·log2e to the integer n
//    and leaves n + 127 in the low mantissa bits; ln2 is split in two (Cody–Waite) so n·ln2_hi is
//    exact without FMA.
// 3. e^r by Cephes' expf polynomial (degree 7 in r); 4. times 2^n: (n + 127) << 23 as a float.
// Measured against double exp on a third of all floats in [-87.34, 0] and of [0, 88]: ≤ 0.99 ulp
// (relative error ≤ 8.2e-8). Below -87.68 it returns 0, where the true value is < 1.2e-38.
// Tried and dropped: a compare + select for the underflow (+13% softmax time), nearest +
// trunc_sat for n (no faster), constants hoisted into a table (no faster: V8 keeps them).
v128_t exp_f32x4(v128_t x) {
  x = wasm_f32x4_pmin(wasm_f32x4_pmax(x, wasm_f32x4_splat(-88.0f)), wasm_f32x4_splat(88.0f));
  const v128_t magic = wasm_f32x4_splat(12582912.0f + 127.0f);  // 1.5·2^23 + exponent bias
  const v128_t t = wasm_f32x4_add(wasm_f32x4_mul(x, wasm_f32x4_splat(1.44269504088896341f)), magic);
  const v128_t n = wasm_f32x4_sub(t, magic);
  v128_t r = wasm_f32x4_sub(x, wasm_f32x4_mul(n, wasm_f32x4_splat(0.693359375f)));
  r = wasm_f32x4_sub(r, wasm_f32x4_mul(n, wasm_f32x4_splat(-2.12194440e-4f)));
  v128_t p = wasm_f32x4_splat(1.9875691500e-4f);
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.3981999507e-3f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(8.3334519073e-3f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(4.1665795894e-2f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.6666665459e-1f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(5.0000001201e-1f));
  p = wasm_f32x4_mul(p, wasm_f32x4_mul(r, r));
  p = wasm_f32x4_add(wasm_f32x4_add(p, r), wasm_f32x4_splat(1.0f));
  return wasm_f32x4_mul(p, wasm_i32x4_shl(t, 23));  // p · 2^n
}

// Lanes i..i+3 of mask_row: x + additive (or + 0), then -inf where allowed[j] == 0.
v128_t mask4(v128_t x, const float* additive, const std::uint8_t* allowed, int i) {
  x = wasm_f32x4_add(x, additive ? wasm_v128_load(additive + i) : wasm_f32x4_splat(0.f));
  if (!allowed) return x;
  const v128_t bytes = wasm_v128_load32_zero(allowed + i);  // 4 bytes in lanes 0..3 of u8x16
  const v128_t words = wasm_u32x4_extend_low_u16x8(wasm_u16x8_extend_low_u8x16(bytes));
  const v128_t masked = wasm_i32x4_eq(words, wasm_i32x4_splat(0));
  return wasm_v128_bitselect(wasm_f32x4_splat(kNegInf), x, masked);
}

// Largest entry (-inf when all are -inf). The tail is padded with -inf.
float row_max(int n, const float* x) {
  v128_t m = wasm_f32x4_splat(kNegInf);
  int i = 0;
  for (; i + 4 <= n; i += 4) m = wasm_f32x4_pmax(m, wasm_v128_load(x + i));
  if (i < n) m = wasm_f32x4_pmax(m, load_partial(x + i, n - i, kNegInf));
  return hmax(m);
}

// Steps 2–3 of softmax, shared by softmax_row and the fused kernel: y = exp(x - max) / Σ.
// Two independent exp chains per iteration (+12% over one); the normalisation multiplies by
// 1/Σ (≤ 1 ulp more than dividing, 7% faster).
void softmax_from_max(int n, const float* x, float max, float* y) {
  const v128_t vmax = wasm_f32x4_splat(max);
  v128_t vsum = wasm_f32x4_splat(0.f), vsum2 = wasm_f32x4_splat(0.f);
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const v128_t e0 = exp_f32x4(wasm_f32x4_sub(wasm_v128_load(x + i), vmax));
    const v128_t e1 = exp_f32x4(wasm_f32x4_sub(wasm_v128_load(x + i + 4), vmax));
    wasm_v128_store(y + i, e0);
    wasm_v128_store(y + i + 4, e1);
    vsum = wasm_f32x4_add(vsum, e0);
    vsum2 = wasm_f32x4_add(vsum2, e1);
  }
  vsum = wasm_f32x4_add(vsum, vsum2);
  for (; i < n; i += 4) {  // the tail is padded with -inf: exp gives 0, the sum is unchanged
    const int w = std::min(4, n - i);
    const v128_t xv = w == 4 ? wasm_v128_load(x + i) : load_partial(x + i, w, kNegInf);
    const v128_t e = exp_f32x4(wasm_f32x4_sub(xv, vmax));
    if (w == 4) {
      wasm_v128_store(y + i, e);
    } else {
      store_partial(y + i, w, e);
    }
    vsum = wasm_f32x4_add(vsum, e);
  }
  const float inv = 1.0f / hsum(vsum);
  const v128_t vinv = wasm_f32x4_splat(inv);
  for (i = 0; i + 4 <= n; i += 4) wasm_v128_store(y + i, wasm_f32x4_mul(wasm_v128_load(y + i), vinv));
  for (; i < n; ++i) y[i] = y[i] * inv;
}

void fill_zero(int n, float* y) {
  std::memset(y, 0, n * sizeof(float));
}

// acc (dv) += Σ_j p[j] · V[j] (cnt rows, stride ldv): 16 columns at a time kept in registers
// while the rows stream past, then 4 at a time, then single columns.
void accumulate_rows(int cnt, const float* p, const float* V, int ldv, int dv, float* acc) {
  int d = 0;
  for (; d + 16 <= dv; d += 16) {
    v128_t a0 = wasm_v128_load(acc + d), a1 = wasm_v128_load(acc + d + 4);
    v128_t a2 = wasm_v128_load(acc + d + 8), a3 = wasm_v128_load(acc + d + 12);
    for (int j = 0; j < cnt; ++j) {
      const v128_t pj = wasm_v128_load32_splat(p + j);
      const float* v = V + static_cast<std::ptrdiff_t>(j) * ldv + d;
      a0 = wasm_f32x4_add(a0, wasm_f32x4_mul(pj, wasm_v128_load(v)));
      a1 = wasm_f32x4_add(a1, wasm_f32x4_mul(pj, wasm_v128_load(v + 4)));
      a2 = wasm_f32x4_add(a2, wasm_f32x4_mul(pj, wasm_v128_load(v + 8)));
      a3 = wasm_f32x4_add(a3, wasm_f32x4_mul(pj, wasm_v128_load(v + 12)));
    }
    wasm_v128_store(acc + d, a0);
    wasm_v128_store(acc + d + 4, a1);
    wasm_v128_store(acc + d + 8, a2);
    wasm_v128_store(acc + d + 12, a3);
  }
  for (; d + 4 <= dv; d += 4) {
    v128_t a = wasm_v128_load(acc + d);
    for (int j = 0; j < cnt; ++j)
      a = wasm_f32x4_add(a, wasm_f32x4_mul(wasm_v128_load32_splat(p + j),
                                           wasm_v128_load(V + static_cast<std::ptrdiff_t>(j) * ldv + d)));
    wasm_v128_store(acc + d, a);
  }
  for (; d < dv; ++d)
    for (int j = 0; j < cnt; ++j) acc[d] += p[j] * V[static_cast<std::ptrdiff_t>(j) * ldv + d];
}

}  // namespace

void gemm_nn_simd128(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
                     bool accumulate) {
  gemm_packed(M, N, K, A, lda, B, ldb, C, ldc, accumulate, false);
}

void gemm_nt_simd128(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
                     bool accumulate) {
  gemm_packed(M, N, K, A, lda, B, ldb, C, ldc, accumulate, true);
}

// ---- element-wise and row-wise --------------------------------------------------------------

void add_bias_rows_simd128(int M, int N, const float* bias, float* C, int ldc) {
  for (int i = 0; i < M; ++i)
    add_vec_simd128(N, C + static_cast<std::ptrdiff_t>(i) * ldc, bias,
                    C + static_cast<std::ptrdiff_t>(i) * ldc);
}

void scale_vec_simd128(int n, const float* x, float scale, float* y) {
  const v128_t s = wasm_f32x4_splat(scale);
  int i = 0;
  for (; i + 4 <= n; i += 4) wasm_v128_store(y + i, wasm_f32x4_mul(wasm_v128_load(x + i), s));
  for (; i < n; ++i) y[i] = x[i] * scale;
}

void add_vec_simd128(int n, const float* a, const float* b, float* y) {
  int i = 0;
  for (; i + 4 <= n; i += 4)
    wasm_v128_store(y + i, wasm_f32x4_add(wasm_v128_load(a + i), wasm_v128_load(b + i)));
  for (; i < n; ++i) y[i] = a[i] + b[i];
}

void mask_row_simd128(int n, const float* x, const float* additive, const std::uint8_t* allowed, float* y) {
  int i = 0;
  for (; i + 4 <= n; i += 4) wasm_v128_store(y + i, mask4(wasm_v128_load(x + i), additive, allowed, i));
  for (; i < n; ++i) {
    const float add = additive ? additive[i] : 0.0f;
    y[i] = (allowed && !allowed[i]) ? kNegInf : x[i] + add;
  }
}

void softmax_row_simd128(int n, const float* x, float* y) {
  // 1. max for stability; 2. exponentials and their sum; 3. normalise.
  const float max = row_max(n, x);
  if (max == kNegInf) return fill_zero(n, y);  // fully masked (or empty) row
  softmax_from_max(n, x, max, y);
}

void scale_mask_softmax_row_simd128(int n, const float* x, float scale, const float* additive,
                                    const std::uint8_t* allowed, float* y) {
  // 1. The ops of scale_vec then mask_row, lane for lane, into y; the max is taken with the same
  //    pmax sequence as row_max, so it is the same float; 2–3. the same code as softmax_row.
  const v128_t s = wasm_f32x4_splat(scale);
  v128_t vmax = wasm_f32x4_splat(kNegInf);
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    const v128_t z = mask4(wasm_f32x4_mul(wasm_v128_load(x + i), s), additive, allowed, i);
    wasm_v128_store(y + i, z);
    vmax = wasm_f32x4_pmax(vmax, z);
  }
  if (i < n) {
    for (int j = i; j < n; ++j) {
      const float add = additive ? additive[j] : 0.0f;
      const float scaled = x[j] * scale;
      y[j] = (allowed && !allowed[j]) ? kNegInf : scaled + add;
    }
    vmax = wasm_f32x4_pmax(vmax, load_partial(y + i, n - i, kNegInf));
  }
  const float max = hmax(vmax);
  if (max == kNegInf) return fill_zero(n, y);
  softmax_from_max(n, y, max, y);
}

void layer_norm_row_simd128(int n, const float* x, const float* gamma, const float* beta, float eps,
                            float* y) {
  // 1. mean; 2. biased variance of the centred values; 3. normalise and apply gamma/beta.
  v128_t vs = wasm_f32x4_splat(0.f);
  int i = 0;
  for (; i + 4 <= n; i += 4) vs = wasm_f32x4_add(vs, wasm_v128_load(x + i));
  float sum = hsum(vs);
  for (; i < n; ++i) sum += x[i];
  const float mean = sum / static_cast<float>(n);
  const v128_t vmean = wasm_f32x4_splat(mean);
  vs = wasm_f32x4_splat(0.f);
  for (i = 0; i + 4 <= n; i += 4) {
    const v128_t d = wasm_f32x4_sub(wasm_v128_load(x + i), vmean);
    vs = wasm_f32x4_add(vs, wasm_f32x4_mul(d, d));
  }
  float sq = hsum(vs);
  for (; i < n; ++i) sq += (x[i] - mean) * (x[i] - mean);
  const float rstd = 1.0f / std::sqrt(sq / static_cast<float>(n) + eps);
  const v128_t vr = wasm_f32x4_splat(rstd);
  for (i = 0; i + 4 <= n; i += 4) {
    v128_t v = wasm_f32x4_mul(wasm_f32x4_sub(wasm_v128_load(x + i), vmean), vr);
    if (gamma) v = wasm_f32x4_mul(v, wasm_v128_load(gamma + i));
    if (beta) v = wasm_f32x4_add(v, wasm_v128_load(beta + i));
    wasm_v128_store(y + i, v);
  }
  for (; i < n; ++i) {
    float v = (x[i] - mean) * rstd;
    if (gamma) v = v * gamma[i];
    if (beta) v = v + beta[i];
    y[i] = v;
  }
}

// ---- online softmax -------------------------------------------------------------------------

void online_softmax_update_simd128(int n, const float* s, const float* V, int ldv, int dv, float* m, float* l,
                                   float* acc) {
  // 1. The tile's max; a tile with nothing allowed leaves the state untouched.
  const float tile_max = row_max(n, s);
  if (tile_max == kNegInf) return;
  // 2. Rescale the old state to the new max (exp(-inf) = 0 for the initial state m = -inf).
  const float new_max = tile_max > *m ? tile_max : *m;
  const float correction = wasm_f32x4_extract_lane(exp_f32x4(wasm_f32x4_splat(*m - new_max)), 0);
  if (correction != 1.0f) scale_vec_simd128(dv, acc, correction, acc);  // 1: the max did not move
  // 3. Blocks of keys: p = exp(s - m) into a stack block, l += Σp, acc += Σ p_j · v_j.
  constexpr int kBlock = 64;
  alignas(16) float p[kBlock];  // p: (kBlock) probabilities (unnormalised) of this key block
  const v128_t vmax = wasm_f32x4_splat(new_max);
  v128_t vsum = wasm_f32x4_splat(0.f);
  for (int jb = 0; jb < n; jb += kBlock) {
    const int cnt = std::min(kBlock, n - jb);
    for (int j = 0; j < cnt; j += 4) {
      const int w = std::min(4, cnt - j);
      const v128_t sv = w == 4 ? wasm_v128_load(s + jb + j) : load_partial(s + jb + j, w, kNegInf);
      const v128_t e = exp_f32x4(wasm_f32x4_sub(sv, vmax));
      wasm_v128_store(p + j, e);  // lanes past cnt are 0 and never read
      vsum = wasm_f32x4_add(vsum, e);
    }
    accumulate_rows(cnt, p, V + static_cast<std::ptrdiff_t>(jb) * ldv, ldv, dv, acc);
  }
  *m = new_max;
  *l = *l * correction + hsum(vsum);
}

}  // namespace attn::kernels
#endif  // __wasm_simd128__
