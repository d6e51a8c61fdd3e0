// Shared by the kernel tests (test_kernels*.cpp): the variants under test (the scalar twins always,
// the SIMD128 versions under __wasm_simd128__), deterministic inputs and comparison helpers.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/kernels.h"

namespace kernel_test {

namespace k = attn::kernels;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// ---- the variants under test ----------------------------------------------------------------
struct Variant {
  std::string name;
  decltype(&k::gemm_nn_scalar) gemm_nn, gemm_nt, gemm_tn;
  decltype(&k::linear_nt_scalar) linear_nt;
  decltype(&k::packed_weight_floats_scalar) packed_weight_floats;
  decltype(&k::pack_weight_scalar) pack_weight;
  decltype(&k::linear_nt_packed_scalar) linear_nt_packed;
  decltype(&k::pack_weight_in_place_scalar) pack_weight_in_place;
  decltype(&k::packed_weight_panel_rows_scalar) packed_weight_panel_rows;
  decltype(&k::packed_weight_row_scalar) packed_weight_row;
  decltype(&k::add_bias_rows_scalar) add_bias_rows;
  decltype(&k::scale_vec_scalar) scale_vec;
  decltype(&k::add_vec_scalar) add_vec;
  decltype(&k::mask_row_scalar) mask_row;
  decltype(&k::softmax_row_scalar) softmax_row;
  decltype(&k::scale_mask_softmax_row_scalar) scale_mask_softmax_row;
  decltype(&k::layer_norm_row_scalar) layer_norm_row;
  decltype(&k::online_softmax_row_scalar) online_softmax_row;
  decltype(&k::gelu_row_scalar) gelu_row;
  decltype(&k::gelu_backward_row_scalar) gelu_backward_row;
  decltype(&k::widen_half_scalar) widen_half;
  decltype(&k::linear_nt_half_scalar) linear_nt_half;
  decltype(&k::gelu_tanh_row_scalar) gelu_tanh_row;
  decltype(&k::silu_mul_row_scalar) silu_mul_row;
};

// clang-format off
#define ATTN_VARIANT(sfx, label)                                                               \
  Variant{label, k::gemm_nn_##sfx, k::gemm_nt_##sfx, k::gemm_tn_##sfx, k::linear_nt_##sfx,     \
          k::packed_weight_floats_##sfx, k::pack_weight_##sfx, k::linear_nt_packed_##sfx,       \
          k::pack_weight_in_place_##sfx, k::packed_weight_panel_rows_##sfx,                     \
          k::packed_weight_row_##sfx,                                                           \
          k::add_bias_rows_##sfx, k::scale_vec_##sfx,                                           \
          k::add_vec_##sfx, k::mask_row_##sfx, k::softmax_row_##sfx,                            \
          k::scale_mask_softmax_row_##sfx, k::layer_norm_row_##sfx,                              \
          k::online_softmax_row_##sfx, k::gelu_row_##sfx, k::gelu_backward_row_##sfx,           \
          k::widen_half_##sfx, k::linear_nt_half_##sfx, k::gelu_tanh_row_##sfx,                  \
          k::silu_mul_row_##sfx}
// clang-format on

// "relaxed-simd", "simd128" or "scalar": the variant the binary's kernels were built as
// (kernel_flavour.cpp), which the unsuffixed names must call.
const char* expected_variant();

inline const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = {
    ATTN_VARIANT(scalar, "scalar"),
#if defined(__wasm_simd128__)
    ATTN_VARIANT(simd128, expected_variant()),
#endif
  };
  return all;
}

// ---- deterministic inputs (portable LCG, same numbers on every platform) ---------------------
struct Rng {
  std::uint32_t s;
  float uniform(float lo, float hi) {
    s = s * 1664525u + 1013904223u;
    return lo + (hi - lo) * static_cast<float>(s >> 8) * (1.0f / 16777216.0f);
  }
};

inline std::vector<float> random_vec(size_t n, std::uint32_t seed, float lo = -1.f, float hi = 1.f) {
  Rng rng{seed};
  std::vector<float> v(n);
  for (auto& x : v) x = rng.uniform(lo, hi);
  return v;
}

inline const std::vector<int>& row_sizes() {  // 1 … 2·width+1, then odd and block-sized rows
  static const std::vector<int> n = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 16, 17, 33, 64, 100, 1000};
  return n;
}

inline bool bits_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

inline double max_abs_diff(const std::vector<float>& got, const std::vector<double>& want) {
  double e = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::fabs(got[i] - want[i]);
    e = (d > e || std::isnan(d)) ? d : e;  // a NaN fails every tolerance
  }
  return e;
}

}  // namespace kernel_test
