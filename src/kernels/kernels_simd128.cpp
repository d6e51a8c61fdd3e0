// WebAssembly SIMD128 versions of the row and element-wise kernels in kernels.h (f32x4; FMA only
// in exp of the relaxed-SIMD build, see simd128_mul_add.h); the GEMM is in gemm_simd128.cpp. Same contracts
// as the scalar twins in kernels_scalar.cpp; tested against the same double reference. Compiles to nothing
// unless the compiler targets SIMD128 (-msimd128).
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>

#include "kernels/kernels.h"
#include "kernels/layer_norm_stats.h"
#include "kernels/simd128_mul_add.h"

namespace attn::kernels {
namespace {

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

// exp(x) per lane, for the x ≤ 0 every caller passes (x - max, m - m'; no upper clamp: -7%).
// 1. Clamp below at -88: -inf and anything below -88 land on n = -127 in step 2, whose 2^n bits
//    are all zero, so they return exactly 0 without a compare and select.
// 2. Range reduction x = n·ln2 + r, |r| ≤ ln2/2: adding 1.5·2^23 rounds x·log2e to the integer n
//    and leaves n + 127 in the low mantissa bits; ln2 is split in two (Cody–Waite) so n·ln2_hi is
//    exact without FMA.
// 3. e^r by Cephes' expf polynomial (degree 7 in r); 4. times 2^n: (n + 127) << 23 as a float.
// Measured against double exp on a third of all floats in [-87.34, 0]: ≤ 0.99 ulp
// (relative error ≤ 8.2e-8). Below -87.68 it returns 0, where the true value is < 1.2e-38.
// Tried and dropped: a compare + select for the underflow (+13% softmax time), nearest +
// trunc_sat for n (no faster), constants hoisted into a table (no faster: V8 keeps them).
// Every a·b + c step is mul_add: in the relaxed-SIMD build one fused multiply-add (9 of the ~25
// operations fewer), in the SIMD128 build the same mul + add as before.
v128_t exp_f32x4(v128_t x) {
  x = wasm_f32x4_pmax(x, wasm_f32x4_splat(-88.0f));
  const v128_t magic = wasm_f32x4_splat(12582912.0f + 127.0f);  // 1.5·2^23 + exponent bias
  const v128_t t = mul_add(x, wasm_f32x4_splat(1.44269504088896341f), magic);
  const v128_t n = wasm_f32x4_sub(t, magic);
  v128_t r = mul_add(n, wasm_f32x4_splat(-0.693359375f), x);
  r = mul_add(n, wasm_f32x4_splat(2.12194440e-4f), r);
  v128_t p = wasm_f32x4_splat(1.9875691500e-4f);
  p = mul_add(p, r, wasm_f32x4_splat(1.3981999507e-3f));
  p = mul_add(p, r, wasm_f32x4_splat(8.3334519073e-3f));
  p = mul_add(p, r, wasm_f32x4_splat(4.1665795894e-2f));
  p = mul_add(p, r, wasm_f32x4_splat(1.6666665459e-1f));
  p = mul_add(p, r, wasm_f32x4_splat(5.0000001201e-1f));
  p = mul_add(p, wasm_f32x4_mul(r, r), r);
  p = wasm_f32x4_add(p, wasm_f32x4_splat(1.0f));
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

// Step 2 of softmax, shared by softmax_row, the fused kernel and the online kernel:
// y = exp(x - max), returns Σ y. Four independent exp chains per iteration: one exp is a ~20-deep
// dependency chain, and more chains in flight hide its latency (1.40 → 1.06 ns/element here).
float exp_sum(int n, const float* x, float max, float* y) {
  const v128_t vmax = wasm_f32x4_splat(max);
  v128_t vsum = wasm_f32x4_splat(0.f), vsum2 = wasm_f32x4_splat(0.f);
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    const v128_t e0 = exp_f32x4(wasm_f32x4_sub(wasm_v128_load(x + i), vmax));
    const v128_t e1 = exp_f32x4(wasm_f32x4_sub(wasm_v128_load(x + i + 4), vmax));
    const v128_t e2 = exp_f32x4(wasm_f32x4_sub(wasm_v128_load(x + i + 8), vmax));
    const v128_t e3 = exp_f32x4(wasm_f32x4_sub(wasm_v128_load(x + i + 12), vmax));
    wasm_v128_store(y + i, e0);
    wasm_v128_store(y + i + 4, e1);
    wasm_v128_store(y + i + 8, e2);
    wasm_v128_store(y + i + 12, e3);
    vsum = wasm_f32x4_add(vsum, wasm_f32x4_add(e0, e2));
    vsum2 = wasm_f32x4_add(vsum2, wasm_f32x4_add(e1, e3));
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
  return hsum(vsum);
}

// Steps 2–3 of softmax: y = exp(x - max) / Σ. The normalisation multiplies by 1/Σ (≤ 1 ulp more
// than dividing, 7% faster).
void softmax_from_max(int n, const float* x, float max, float* y) {
  const float inv = 1.0f / exp_sum(n, x, max, y);
  const v128_t vinv = wasm_f32x4_splat(inv);
  int i = 0;
  for (; i + 4 <= n; i += 4) wasm_v128_store(y + i, wasm_f32x4_mul(wasm_v128_load(y + i), vinv));
  for (; i < n; ++i) y[i] = y[i] * inv;
}

void fill_zero(int n, float* y) {
  std::memset(y, 0, n * sizeof(float));
}

// Step 1 of the fused kernels: y = mask_row(scale_vec(x)) with the same vector ops, lane for
// lane; returns max y, taken with the same pmax sequence as row_max, so it is the same float.
float scale_mask_max(int n, const float* x, float scale, const float* additive, const std::uint8_t* allowed,
                     float* y) {
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
  return hmax(vmax);
}

}  // namespace

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
  // 1. scale_vec then mask_row into y (and the max); 2–3. the same code as softmax_row.
  const float max = scale_mask_max(n, x, scale, additive, allowed, y);
  if (max == kNegInf) return fill_zero(n, y);
  softmax_from_max(n, y, max, y);
}

namespace {
// The high two lanes of a float vector as doubles.
v128_t promote_high(v128_t v) {
  return wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
}
}  // namespace

void layer_norm_row_simd128(int n, const float* x, const float* gamma, const float* beta, float eps,
                            float* y) {
  // layer_norm_stats.h's computation in f64x2 lanes (why double: see there). 1. mean; 2. biased
  // variance of the centred values; 3. normalise (rounded to float once), then gamma/beta in float.
  v128_t s_lo = wasm_f64x2_splat(0.0), s_hi = wasm_f64x2_splat(0.0);
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    const v128_t v = wasm_v128_load(x + i);
    s_lo = wasm_f64x2_add(s_lo, wasm_f64x2_promote_low_f32x4(v));
    s_hi = wasm_f64x2_add(s_hi, promote_high(v));
  }
  v128_t s = wasm_f64x2_add(s_lo, s_hi);
  double sum = wasm_f64x2_extract_lane(s, 0) + wasm_f64x2_extract_lane(s, 1);
  for (; i < n; ++i) sum += x[i];
  const double mean = sum / n;
  const v128_t vmean = wasm_f64x2_splat(mean);
  s_lo = s_hi = wasm_f64x2_splat(0.0);
  for (i = 0; i + 4 <= n; i += 4) {
    const v128_t v = wasm_v128_load(x + i);
    const v128_t d_lo = wasm_f64x2_sub(wasm_f64x2_promote_low_f32x4(v), vmean);
    const v128_t d_hi = wasm_f64x2_sub(promote_high(v), vmean);
    s_lo = wasm_f64x2_add(s_lo, wasm_f64x2_mul(d_lo, d_lo));
    s_hi = wasm_f64x2_add(s_hi, wasm_f64x2_mul(d_hi, d_hi));
  }
  s = wasm_f64x2_add(s_lo, s_hi);
  double sq = wasm_f64x2_extract_lane(s, 0) + wasm_f64x2_extract_lane(s, 1);
  for (; i < n; ++i) sq += (x[i] - mean) * (x[i] - mean);
  const LayerNormRowStats stats{mean, 1.0 / std::sqrt(sq / n + static_cast<double>(eps))};
  const v128_t vr = wasm_f64x2_splat(stats.rstd);
  for (i = 0; i + 4 <= n; i += 4) {
    const v128_t v = wasm_v128_load(x + i);
    const v128_t lo = wasm_f32x4_demote_f64x2_zero(
        wasm_f64x2_mul(wasm_f64x2_sub(wasm_f64x2_promote_low_f32x4(v), vmean), vr));
    const v128_t hi =
        wasm_f32x4_demote_f64x2_zero(wasm_f64x2_mul(wasm_f64x2_sub(promote_high(v), vmean), vr));
    v128_t out = wasm_i32x4_shuffle(lo, hi, 0, 1, 4, 5);
    if (gamma) out = wasm_f32x4_mul(out, wasm_v128_load(gamma + i));
    if (beta) out = wasm_f32x4_add(out, wasm_v128_load(beta + i));
    wasm_v128_store(y + i, out);
  }
  for (; i < n; ++i) {
    float v = layer_norm_normalised(x[i], stats);
    if (gamma) v = v * gamma[i];
    if (beta) v = v + beta[i];
    y[i] = v;
  }
}

// ---- online softmax -------------------------------------------------------------------------

float online_softmax_row_simd128(int n, const float* x, float scale, const float* additive,
                                 const std::uint8_t* allowed, float* m, float* l, float* p) {
  // 1. z = mask(x · scale) into p, and the segment's max; with nothing to scale or mask z is x
  //    itself (x · 1 + 0 = x), so this pass only reads; 2. the new running max.
  const bool plain = scale == 1.0f && !additive && !allowed;
  const float seg_max = plain ? row_max(n, x) : scale_mask_max(n, x, scale, additive, allowed, p);
  const float new_max = seg_max > *m ? seg_max : *m;
  if (new_max == kNegInf) {  // nothing allowed so far: the state stays empty
    fill_zero(n, p);
    return 1.0f;
  }
  // 3. The old state's factor exp(m - m') (0 from the empty state m = -inf, as the clamp gives);
  // 4. p = exp(z - m'), l = l · factor + Σ p.
  const float factor =
      *m == kNegInf ? 0.0f : wasm_f32x4_extract_lane(exp_f32x4(wasm_f32x4_splat(*m - new_max)), 0);
  *l = *l * factor + exp_sum(n, plain ? x : p, new_max, p);
  *m = new_max;
  return factor;
}

// ---- GELU ------------------------------------------------------------------------------------

namespace {

v128_t splat(float v) {
  return wasm_f32x4_splat(v);
}

// Φ(x) per lane. erfc(z) = t·exp(−z² − 1.26551223 + t·P(t)), t = 1/(1 + z/2), z = |x|/√2
// (Numerical Recipes' erfcc: relative error < 1.2e-7 for every z ≥ 0, so the tails stay accurate);
// Φ = ½·erfc(z) for x < 0, 1 − ½·erfc(z) otherwise. The exponent is ≤ 0 (exp_f32x4's range); huge
// |x| clamps it at −88, where ½·t·e^−88 is 0 to float precision.
v128_t normal_cdf_f32x4(v128_t x) {
  const v128_t z = wasm_f32x4_mul(wasm_f32x4_abs(x), splat(0.70710678118654752f));
  const v128_t t = wasm_f32x4_div(splat(1.0f), mul_add(z, splat(0.5f), splat(1.0f)));
  v128_t p = splat(0.17087277f);
  for (const float c : {-0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f, -0.18628806f, 0.09678418f,
                        0.37409196f, 1.00002368f, -1.26551223f})
    p = mul_add(p, t, splat(c));
  const v128_t half_erfc =
      wasm_f32x4_mul(wasm_f32x4_mul(t, exp_f32x4(wasm_f32x4_sub(p, wasm_f32x4_mul(z, z)))), splat(0.5f));
  return wasm_v128_bitselect(half_erfc, wasm_f32x4_sub(splat(1.0f), half_erfc),
                             wasm_f32x4_lt(x, splat(0.0f)));
}

// φ(x) per lane; 0 beyond |x| = 20, where e^(−x²/2) underflows (exp_f32x4 would clamp at e^−88).
v128_t normal_pdf_f32x4(v128_t x) {
  const v128_t e = exp_f32x4(wasm_f32x4_mul(wasm_f32x4_mul(x, x), splat(-0.5f)));
  const v128_t pdf = wasm_f32x4_mul(e, splat(0.39894228040143268f));
  return wasm_v128_andnot(pdf, wasm_f32x4_gt(wasm_f32x4_abs(x), splat(20.0f)));
}

}  // namespace

void gelu_row_simd128(int n, const float* x, float* y, float* cdf) {
  for (int i = 0; i < n; i += 4) {
    const int w = n - i < 4 ? n - i : 4;
    const v128_t xv = w == 4 ? wasm_v128_load(x + i) : load_partial(x + i, w, 0.0f);
    const v128_t phi = normal_cdf_f32x4(xv);
    const v128_t yv = wasm_f32x4_mul(xv, phi);
    if (w == 4) {
      if (cdf) wasm_v128_store(cdf + i, phi);
      wasm_v128_store(y + i, yv);
    } else {
      if (cdf) store_partial(cdf + i, w, phi);
      store_partial(y + i, w, yv);
    }
  }
}

namespace {

// σ(z) per lane from e = e^−|z| ≤ 1 (exp_f32x4's range; kernels.h explains the two forms).
v128_t logistic_f32x4(v128_t z) {
  const v128_t e = exp_f32x4(wasm_f32x4_neg(wasm_f32x4_abs(z)));
  const v128_t inv = wasm_f32x4_div(splat(1.0f), wasm_f32x4_add(splat(1.0f), e));
  return wasm_v128_bitselect(inv, wasm_f32x4_mul(e, inv), wasm_f32x4_ge(z, splat(0.0f)));
}

}  // namespace

void gelu_tanh_row_simd128(int n, const float* x, float* y) {
  for (int i = 0; i < n; i += 4) {
    const int w = n - i < 4 ? n - i : 4;
    const v128_t v = w == 4 ? wasm_v128_load(x + i) : load_partial(x + i, w, 0.0f);
    const v128_t cube = wasm_f32x4_mul(wasm_f32x4_mul(v, v), v);
    const v128_t u = wasm_f32x4_mul(splat(0.7978845608028654f), mul_add(cube, splat(0.044715f), v));
    const v128_t out = wasm_f32x4_mul(v, logistic_f32x4(wasm_f32x4_add(u, u)));
    if (w == 4)
      wasm_v128_store(y + i, out);
    else
      store_partial(y + i, w, out);
  }
}

void silu_mul_row_simd128(int n, const float* g, const float* u, float* y) {
  for (int i = 0; i < n; i += 4) {
    const int w = n - i < 4 ? n - i : 4;
    const v128_t gv = w == 4 ? wasm_v128_load(g + i) : load_partial(g + i, w, 0.0f);
    const v128_t uv = w == 4 ? wasm_v128_load(u + i) : load_partial(u + i, w, 0.0f);
    const v128_t out = wasm_f32x4_mul(wasm_f32x4_mul(gv, logistic_f32x4(gv)), uv);
    if (w == 4)
      wasm_v128_store(y + i, out);
    else
      store_partial(y + i, w, out);
  }
}

void gelu_backward_row_simd128(int n, const float* x, const float* cdf, const float* dy, float* dx) {
  for (int i = 0; i < n; i += 4) {
    const int w = n - i < 4 ? n - i : 4;
    const v128_t xv = w == 4 ? wasm_v128_load(x + i) : load_partial(x + i, w, 0.0f);
    const v128_t cv = w == 4 ? wasm_v128_load(cdf + i) : load_partial(cdf + i, w, 0.0f);
    const v128_t gv = w == 4 ? wasm_v128_load(dy + i) : load_partial(dy + i, w, 0.0f);
    const v128_t d = wasm_f32x4_mul(gv, mul_add(xv, normal_pdf_f32x4(xv), cv));
    if (w == 4)
      wasm_v128_store(dx + i, d);
    else
      store_partial(dx + i, w, d);
  }
}

}  // namespace attn::kernels
#endif  // __wasm_simd128__
