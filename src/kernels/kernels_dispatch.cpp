// The unsuffixed kernel names the core calls, bound at build time: the SIMD128 versions when the
// compiler targets WebAssembly SIMD128 (-msimd128), the scalar twins otherwise (native builds,
// and the scalar wasm build the benchmark compares against). Plain forwarding calls: no function
// pointers, so the optimiser can inline them away.
//
// The matrix products split their output over the thread pool (parallel.h): blocks of rows of C,
// or, when C has too few rows, blocks of 8 columns (a whole number of the SIMD128 GEMM's packed
// panels). Each element of C is computed by one thread with the same k order as on one thread, so
// the result is bit-identical at every thread count (tests/cpp/test_parallel.cpp).
#include <algorithm>

#include "kernels/kernels.h"
#include "kernels/parallel.h"
#include "kernels/quant_int8.h"
#include "kernels/weight_types.h"

#if defined(__wasm_simd128__)
#define ATTN_KERNEL(name) name##_simd128
#else
#define ATTN_KERNEL(name) name##_scalar
#endif

namespace attn::kernels {

namespace {

constexpr int kColumnBlock = 8;     // columns per unit of a column split (a multiple of every panel width)
constexpr int kMinRowsPerPart = 4;  // fewer rows per thread than this: split the columns instead

// Calls product(i0, rows, j0, cols) over disjoint blocks of C (M, N) that cover it, in parallel
// when the product (M·N·K multiply-adds) is big enough; on the calling thread otherwise.
template <class F>
void split_product(int M, int N, int K, F&& product) {
  const std::int64_t row_work = static_cast<std::int64_t>(N) * std::max(K, 1);
  const std::int64_t total = row_work * M;
  if (M <= 0 || N <= 0 || thread_count() == 1 || total < 2 * kMinParallelWork) {
    product(0, M, 0, N);
    return;
  }
  const std::int64_t min_rows = std::max<std::int64_t>(min_items_for(row_work), kMinRowsPerPart);
  if (parallel_parts(M, min_rows) > 1) {
    parallel_for(M, min_rows, [&](std::int64_t b, std::int64_t e) {
      product(static_cast<int>(b), static_cast<int>(e - b), 0, N);
    });
    return;
  }
  const std::int64_t units = (N + kColumnBlock - 1) / kColumnBlock;
  const std::int64_t unit_work = static_cast<std::int64_t>(kColumnBlock) * M * std::max(K, 1);
  parallel_for(units, min_items_for(unit_work), [&](std::int64_t b, std::int64_t e) {
    const int j0 = static_cast<int>(b) * kColumnBlock;
    product(0, M, j0, std::min(N, static_cast<int>(e) * kColumnBlock) - j0);
  });
}

inline std::ptrdiff_t at(int row, int ld, int col) {
  return static_cast<std::ptrdiff_t>(row) * ld + col;
}

}  // namespace

void gemm_nn(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
             bool accumulate) {
  split_product(M, N, K, [&](int i0, int m, int j0, int n) {
    ATTN_KERNEL(gemm_nn)(m, n, K, A + at(i0, lda, 0), lda, B + j0, ldb, C + at(i0, ldc, j0), ldc, accumulate);
  });
}

void gemm_nt(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
             bool accumulate) {
  split_product(M, N, K, [&](int i0, int m, int j0, int n) {
    ATTN_KERNEL(gemm_nt)
    (m, n, K, A + at(i0, lda, 0), lda, B + at(j0, ldb, 0), ldb, C + at(i0, ldc, j0), ldc, accumulate);
  });
}

void gemm_tn(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
             bool accumulate) {
  // A is stored (K, M): rows [i0, i0 + m) of C read columns [i0, i0 + m) of A.
  split_product(M, N, K, [&](int i0, int m, int j0, int n) {
    ATTN_KERNEL(gemm_tn)(m, n, K, A + i0, lda, B + j0, ldb, C + at(i0, ldc, j0), ldc, accumulate);
  });
}

void linear_nt(int M, int N, int K, const float* A, int lda, const float* W, int ldw, const float* bias,
               float* C, int ldc) {
  split_product(M, N, K, [&](int i0, int m, int j0, int n) {
    ATTN_KERNEL(linear_nt)
    (m, n, K, A + at(i0, lda, 0), lda, W + at(j0, ldw, 0), ldw, bias ? bias + j0 : nullptr,
     C + at(i0, ldc, j0), ldc);
  });
}

void gelu_tanh_row(int n, const float* x, float* y) {
  ATTN_KERNEL(gelu_tanh_row)(n, x, y);
}

void silu_mul_row(int n, const float* g, const float* u, float* y) {
  ATTN_KERNEL(silu_mul_row)(n, g, u, y);
}

void widen_half(int n, const std::uint16_t* x, HalfFormat format, float* y) {
  ATTN_KERNEL(widen_half)(n, x, format, y);
}

void linear_nt_half(int M, int N, int K, const float* A, int lda, const std::uint16_t* W, int ldw,
                    HalfFormat format, const float* bias, float* C, int ldc) {
  split_product(M, N, K, [&](int i0, int m, int j0, int n) {
    ATTN_KERNEL(linear_nt_half)
    (m, n, K, A + at(i0, lda, 0), lda, W + at(j0, ldw, 0), ldw, format, bias ? bias + j0 : nullptr,
     C + at(i0, ldc, j0), ldc);
  });
}

void linear_nt_quant(int M, int N, int K, const float* A, int lda, const void* W, std::size_t ldw_bytes,
                     int type, const float* bias, float* C, int ldc) {
  // Decoding (few rows): the fused GEMV, chosen by the whole product's M so that every part of a
  // split takes the same path (the same bits at every thread count).
  const GgmlTypeInfo* info = ggml_type_info(type);
  if (M >= 1 && M <= kQuantGemvRows && info && info->dequantized && info->block_elements > 1) {
    split_product(M, N, K, [&](int i0, int m, int j0, int n) {
      ATTN_KERNEL(gemv_quant)
      (m, n, K, A + at(i0, lda, 0), lda,
       static_cast<const char*>(W) + static_cast<std::ptrdiff_t>(j0) * ldw_bytes, ldw_bytes, type,
       bias ? bias + j0 : nullptr, C + at(i0, ldc, j0), ldc);
    });
    return;
  }
  split_product(M, N, K, [&](int i0, int m, int j0, int n) {
    ATTN_KERNEL(linear_nt_quant)
    (m, n, K, A + at(i0, lda, 0), lda,
     static_cast<const char*>(W) + static_cast<std::ptrdiff_t>(j0) * ldw_bytes, ldw_bytes, type,
     bias ? bias + j0 : nullptr, C + at(i0, ldc, j0), ldc);
  });
}

bool linear_nt_int8(int M, int N, int K, const float* A, int lda, const void* W, std::size_t ldw_bytes,
                    int type, const float* bias, float* C, int ldc) {
  thread_local QuantizedActivations buffer;  // grows to the largest call, then is reused
  // The workers read the calling thread's buffer (a lambda naming a thread_local would read theirs).
  const QuantizedActivations& quantized = buffer;
  if (M <= 0 || N <= 0) return activation_blocks_for(type) != ActivationBlocks::kNone;
  if (!quantize_activations(type, M, K, A, lda, buffer)) return false;
  split_product(M, N, K, [&](int i0, int m, int j0, int n) {
    ATTN_KERNEL(linear_nt_int8)
    (m, n, K, quantized, i0, static_cast<const char*>(W) + static_cast<std::ptrdiff_t>(j0) * ldw_bytes,
     ldw_bytes, type, bias ? bias + j0 : nullptr, C + at(i0, ldc, j0), ldc);
  });
  return true;
}

namespace {

// Whether linear_nt_quant_group can run these products together (its contract).
bool groupable(int M, int K, const QuantProduct* products, int count, bool int8) {
  if (M < 1 || M > kQuantGemvRows || count < 1 || count > kMaxQuantGroup) return false;
  for (int p = 0; p < count; ++p) {
    const GgmlTypeInfo* info = ggml_type_info(products[p].type);
    if (info == nullptr || !info->dequantized || info->block_elements == 1 || K % info->block_elements != 0 ||
        products[p].N < 0)
      return false;
    if (int8 && (info->int8 == nullptr ||
                 activation_blocks_for(products[p].type) != activation_blocks_for(products[0].type)))
      return false;
  }
  return true;
}

}  // namespace

bool linear_nt_quant_group(int M, int K, const float* A, int lda, const QuantProduct* products, int count,
                           bool int8) {
  thread_local QuantizedActivations buffer;  // as linear_nt_int8's: the workers read the caller's
  const QuantizedActivations& quantized = buffer;
  if (!groupable(M, K, products, count, int8)) return false;
  if (int8 && !quantize_activations(products[0].type, M, K, A, lda, buffer)) return false;
  std::int64_t first[kMaxQuantGroup + 1] = {0};  // product p's columns are units [first[p], first[p + 1])
  for (int p = 0; p < count; ++p) first[p + 1] = first[p] + (products[p].N + kColumnBlock - 1) / kColumnBlock;
  const auto run = [&](std::int64_t begin, std::int64_t end) {
    for (int p = 0; p < count; ++p) {
      const std::int64_t lo = std::max(begin, first[p]), hi = std::min(end, first[p + 1]);
      if (lo >= hi) continue;
      const QuantProduct& q = products[p];
      const int j0 = static_cast<int>(lo - first[p]) * kColumnBlock;
      const int n = std::min(q.N, static_cast<int>(hi - first[p]) * kColumnBlock) - j0;
      const char* w = static_cast<const char*>(q.W) + static_cast<std::ptrdiff_t>(j0) * q.ldw_bytes;
      const float* bias = q.bias ? q.bias + j0 : nullptr;
      if (int8)
        ATTN_KERNEL(linear_nt_int8)(M, n, K, quantized, 0, w, q.ldw_bytes, q.type, bias, q.C + j0, q.ldc);
      else
        ATTN_KERNEL(gemv_quant)(M, n, K, A, lda, w, q.ldw_bytes, q.type, bias, q.C + j0, q.ldc);
    }
  };
  const std::int64_t unit_work = static_cast<std::int64_t>(kColumnBlock) * M * std::max(K, 1);
  if (thread_count() == 1 || first[count] * unit_work < 2 * kMinParallelWork)
    run(0, first[count]);
  else
    parallel_for(first[count], min_items_for(unit_work), run);
  return true;
}

std::int64_t packed_weight_floats(int N, int K) {
  return ATTN_KERNEL(packed_weight_floats)(N, K);
}

void pack_weight(int N, int K, const float* W, int ldw, float* packed) {
  ATTN_KERNEL(pack_weight)(N, K, W, ldw, packed);
}

void linear_nt_packed(int M, int N, int K, const float* A, int lda, const float* packed, const float* bias,
                      float* C, int ldc) {
  // Columns [j0, j0 + n) of a packed W with j0 a multiple of its panel rows (kColumnBlock is) are
  // the packed form of that block, at packed + j0·K (kernels.h, pack_weight_in_place).
  split_product(M, N, K, [&](int i0, int m, int j0, int n) {
    ATTN_KERNEL(linear_nt_packed)
    (m, n, K, A + at(i0, lda, 0), lda, packed + at(j0, K, 0), bias ? bias + j0 : nullptr, C + at(i0, ldc, j0),
     ldc);
  });
}

void pack_weight_in_place(int N, int K, float* W) {
  ATTN_KERNEL(pack_weight_in_place)(N, K, W);
}

int packed_weight_panel_rows() {
  return ATTN_KERNEL(packed_weight_panel_rows)();
}

void packed_weight_row(int K, const float* packed, int r, float* out) {
  ATTN_KERNEL(packed_weight_row)(K, packed, r, out);
}

void add_bias_rows(int M, int N, const float* bias, float* C, int ldc) {
  ATTN_KERNEL(add_bias_rows)(M, N, bias, C, ldc);
}

void scale_vec(int n, const float* x, float scale, float* y) {
  ATTN_KERNEL(scale_vec)(n, x, scale, y);
}

void add_vec(int n, const float* a, const float* b, float* y) {
  ATTN_KERNEL(add_vec)(n, a, b, y);
}

void mask_row(int n, const float* x, const float* additive, const std::uint8_t* allowed, float* y) {
  ATTN_KERNEL(mask_row)(n, x, additive, allowed, y);
}

void softmax_row(int n, const float* x, float* y) {
  ATTN_KERNEL(softmax_row)(n, x, y);
}

void scale_mask_softmax_row(int n, const float* x, float scale, const float* additive,
                            const std::uint8_t* allowed, float* y) {
  ATTN_KERNEL(scale_mask_softmax_row)(n, x, scale, additive, allowed, y);
}

void layer_norm_row(int n, const float* x, const float* gamma, const float* beta, float eps, float* y) {
  ATTN_KERNEL(layer_norm_row)(n, x, gamma, beta, eps, y);
}

float online_softmax_row(int n, const float* x, float scale, const float* additive,
                         const std::uint8_t* allowed, float* m, float* l, float* p) {
  return ATTN_KERNEL(online_softmax_row)(n, x, scale, additive, allowed, m, l, p);
}

void gelu_row(int n, const float* x, float* y, float* cdf) {
  ATTN_KERNEL(gelu_row)(n, x, y, cdf);
}

void gelu_backward_row(int n, const float* x, const float* cdf, const float* dy, float* dx) {
  ATTN_KERNEL(gelu_backward_row)(n, x, cdf, dy, dx);
}

void narrow_f16(std::int64_t n, const float* x, std::uint16_t* y) {
  ATTN_KERNEL(narrow_f16)(n, x, y);
}

const char* active_variant() {
#if defined(__wasm_simd128__) && defined(ATTN_RELAXED_SIMD)
  return "relaxed-simd";  // the SIMD128 kernels, GEMM with f32x4.relaxed_madd
#elif defined(__wasm_simd128__)
  return "simd128";
#else
  return "scalar";
#endif
}

}  // namespace attn::kernels
