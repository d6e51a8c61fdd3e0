// The int8 activation mode of quantized weights (src/kernels/quant_int8.h): the activations'
// 8-bit blocks against ggml's definitions, every weight type's unpacked row against the exact
// dequantizer, the product against a double reference of its definition and against the exact
// mode within the activations' rounding, the scalar and SIMD128 twins bit for bit, and the same
// bits at every thread count.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/stored_weight.h"
#include "kernels/kernels.h"
#include "kernels/quant.h"
#include "kernels/quant_int8.h"
#include "parallel_check.h"
#include "quant_blocks.h"
#include "test_helpers.h"

namespace {

namespace k = attn::kernels;
using quant_test::Layout;

// The product's float part (a few roundings per block over K terms), relative to Σ|w||a|.
constexpr double kInt8RelTolerance = 1e-5;

using UnpackFn = bool (*)(int, const void*, int, k::UnpackedRow&);
using ProductFn = decltype(&k::linear_nt_int8_scalar);
struct Twin {
  const char* name;
  UnpackFn unpack;
  ProductFn product;
};
std::vector<Twin> twins() {
  std::vector<Twin> out = {{"scalar", k::unpack_row_scalar, k::linear_nt_int8_scalar}};
#if defined(__wasm_simd128__)
  out.push_back({"simd128", k::unpack_row_simd128, k::linear_nt_int8_simd128});
#endif
  return out;
}

// Element e of an unpacked row as the exact mode's value: d·q − m·mn (K-quants with mins),
// d·q + m (Q4_1, Q5_1) or d·q, in the dequantizer's float operations.
float unpacked_value(const Layout& t, const k::UnpackedRow& u, int e) {
  const int b = e / t.elements;
  const float dq = u.d[b] * static_cast<float>(u.q[e]);
  if (t.id == 3 || t.id == 7) return dq + u.m[b];
  if (t.id == 10 || t.id == 12 || t.id == 13) return dq - u.m[b] * u.mins[b * 16 + (e % 256) / 16];
  return dq;
}

// C's double reference of the definition: Σ over blocks of Σ_e w_e · (da · qa_e), w from the
// independent decoder (quant_reference.h); for Q4_1 / Q5_1 (Q8_1 activations) the part m · da · Σqa
// is m · s, s as the activation block stores it (ggml's product). `mag` gets Σ|terms| per element.
std::vector<double> reference_product(const Layout& t, int m, int n, int kk, const std::vector<double>& w,
                                      const std::vector<std::uint8_t>& blocks,
                                      const k::QuantizedActivations& a, const std::vector<float>& bias,
                                      std::vector<double>& mag) {
  std::vector<double> c(static_cast<std::size_t>(m) * n);
  mag.assign(c.size(), 0.0);
  const int per_row = kk / a.block;
  const std::size_t row_bytes = blocks.size() / n;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = bias.empty() ? 0.0 : bias[j], size = bias.empty() ? 0.0 : std::fabs(bias[j]);
      for (int b = 0; b < per_row; ++b) {
        const std::size_t ab = static_cast<std::size_t>(i) * per_row + b;
        double block_min = 0;  // Q4_1 / Q5_1: the block's m (the float16 at byte 2)
        if (a.kind == k::ActivationBlocks::kQ8_1) {
          std::uint16_t h;
          std::memcpy(&h, &blocks[j * row_bytes + b * t.bytes + 2], sizeof h);
          block_min = quant_test::half_value(h);
          sum += block_min * a.s[ab];
          size += std::fabs(block_min * a.s[ab]);
        }
        for (int e = b * a.block; e < (b + 1) * a.block; ++e) {
          const double term = (w[static_cast<std::size_t>(j) * kk + e] - block_min) * a.d[ab] *
                              a.q[static_cast<std::size_t>(i) * kk + e];
          sum += term;
          size += std::fabs(term);
        }
      }
      c[static_cast<std::size_t>(i) * n + j] = sum;
      mag[static_cast<std::size_t>(i) * n + j] = size;
    }
  return c;
}

}  // namespace

TEST_CASE("int8: activation blocks as ggml's reference quantizers define them", "[kernels][int8]") {
  const auto x = testutil::random_tensor({3, 512}, 41, 2.0f).data;
  for (const int type : {8, 3, 12}) {  // Q8_0 → Q8_0 blocks, Q4_1 → Q8_1, Q4_K → Q8_K
    k::QuantizedActivations a;
    REQUIRE(k::quantize_activations(type, 3, 512, x.data(), 512, a));
    const int block = a.block;
    INFO("type " << type << ", block " << block);
    for (int b = 0; b < 3 * 512 / block; ++b) {
      const float* xb = x.data() + b * block;
      const std::int16_t* q = a.q.data() + b * block;
      double amax = 0, signed_max = 0, sum = 0;
      for (int e = 0; e < block; ++e) {
        if (std::fabs(xb[e]) > amax) signed_max = xb[e];
        amax = std::max(amax, static_cast<double>(std::fabs(xb[e])));
        CHECK(std::abs(q[e]) <= 127);
        sum += q[e];
      }
      if (block == 256) {  // Q8_K: the largest |x| becomes −127 exactly; d = max / −127; bsums
        const int at =
            static_cast<int>(std::find_if(xb, xb + block, [&](float v) { return v == signed_max; }) - xb);
        CHECK(q[at] == -127);
        CHECK(a.d[b] == Approx(signed_max / -127.0).epsilon(1e-6));
        for (int g = 0; g < 16; ++g) {
          int gs = 0;
          for (int e = 0; e < 16; ++e) gs += q[g * 16 + e];
          CHECK(a.group_sum[b * 16 + g] == gs);
        }
      } else {  // Q8_0 / Q8_1: d = max|x| / 127 rounded to float16; q within half a step of x / d
        const float d32 = static_cast<float>(amax) / 127.0f;
        CHECK(a.d[b] == static_cast<float>(quant_test::half_value(quant_test::half_bits(d32))));
        for (int e = 0; e < block; ++e) CHECK(std::fabs(xb[e] / d32 - q[e]) <= 0.5 + 1e-5);
        if (a.kind == k::ActivationBlocks::kQ8_1)
          CHECK(a.s[b] == static_cast<float>(quant_test::half_value(quant_test::half_bits(sum * d32))));
      }
    }
  }
  std::vector<float> bad(32, 1.0f);
  bad[5] = NAN;  // a block holding NaN: scale NaN, quants 0 (the product is NaN, as exactly)
  k::QuantizedActivations a;
  REQUIRE(k::quantize_activations(8, 1, 32, bad.data(), 32, a));
  CHECK(std::isnan(a.d[0]));
  CHECK_FALSE(k::quantize_activations(8, 1, 48, bad.data(), 48, a));   // not whole blocks
  CHECK_FALSE(k::quantize_activations(30, 1, 32, bad.data(), 32, a));  // BF16: no int8 path
}

TEST_CASE("int8: every type's unpacked row is the exact dequantizer's row", "[kernels][int8]") {
  for (const Layout& t : quant_test::layouts()) {
    const int rows = 6, cols = 2 * 256;
    const auto blocks = quant_test::make_blocks(t, rows, cols, 700 + t.id);
    const std::size_t row_bytes = blocks.size() / rows;
    for (const Twin& twin : twins()) {
      INFO(t.name << " " << twin.name);
      k::UnpackedRow u;
      std::vector<float> want(cols);
      for (int r = 0; r < rows; ++r) {
        REQUIRE(twin.unpack(t.id, &blocks[r * row_bytes], cols, u));
        REQUIRE(k::dequantize_row(t.id, &blocks[r * row_bytes], want.data(), cols));
        int wrong = 0;
        for (int e = 0; e < cols; ++e) wrong += unpacked_value(t, u, e) != want[e];
        CHECK(wrong == 0);
      }
    }
  }
}

TEST_CASE("int8: the product is its definition, near the exact mode, the same in both twins",
          "[kernels][int8]") {
  for (const Layout& t : quant_test::layouts()) {
    const int n = 7, kk = 3 * 256;
    const auto blocks = quant_test::make_blocks(t, n, kk, 900 + t.id);
    const std::size_t row_bytes = blocks.size() / n;
    const std::vector<double> w = quant_test::reference_matrix(t, n, kk, blocks);
    for (const int m : {1, 3, 6}) {
      const auto x = testutil::random_tensor({m, kk}, 77 + m).data;
      const auto bias = testutil::random_tensor({n}, 78).data;
      k::QuantizedActivations a;
      REQUIRE(k::quantize_activations(t.id, m, kk, x.data(), kk, a));
      std::vector<double> mag;
      const std::vector<double> want = reference_product(t, m, n, kk, w, blocks, a, bias, mag);
      std::vector<float> exact(static_cast<std::size_t>(m) * n);
      k::linear_nt_quant(m, n, kk, x.data(), kk, blocks.data(), row_bytes, t.id, bias.data(), exact.data(),
                         n);
      std::vector<std::vector<float>> got;
      for (const Twin& twin : twins()) {
        INFO(t.name << " " << twin.name << " m " << m);
        std::vector<float> c(static_cast<std::size_t>(m) * n, -9.0f);
        twin.product(m, n, kk, a, 0, blocks.data(), row_bytes, t.id, bias.data(), c.data(), n);
        for (std::size_t e = 0; e < c.size(); ++e) {
          CHECK(std::fabs(c[e] - want[e]) <= kInt8RelTolerance * mag[e]);
          // From the exact mode by at most the activations' rounding: Σ_b (da_b / 2)·Σ_b|w| (+ float).
          const int i = static_cast<int>(e) / n, j = static_cast<int>(e) % n;
          double bound = 0;
          for (int q = 0; q < kk; ++q)
            bound +=
                0.5 * std::fabs(a.d[i * (kk / a.block) + q / a.block]) * 1.0001 * std::fabs(w[j * kk + q]);
          CHECK(std::fabs(c[e] - exact[e]) <= bound + 2 * kInt8RelTolerance * mag[e]);
        }
        got.push_back(c);
      }
      for (std::size_t v = 1; v < got.size(); ++v) CHECK(testutil::same_bits(got[v], got[0]));
    }
  }
}

TEST_CASE("int8: the dispatcher and a WeightView in int8 mode, the same bits at every thread count",
          "[kernels][int8][parallel]") {
  struct Size {
    int m, n;
  };
  // ≥ 524k multiply-adds: split over the pool by rows (the GEMM) and, at m = 1, by columns (the GEMV)
  for (const Size size : {Size{24, 48}, Size{1, 1100}})
    for (const Layout& t : quant_test::layouts()) {
      const int n = size.n, kk = 2 * 256, m = size.m;
      const auto blocks = quant_test::make_blocks(t, n, kk, 1100 + t.id);
      const auto x = testutil::random_tensor({m, kk}, 13).data;
      const auto bias = testutil::random_tensor({n}, 14).data;
      attn::WeightView v;
      for (int f = 0; f < attn::kWeightFormatCount; ++f)
        if (attn::format_ggml_type(static_cast<attn::WeightFormat>(f)) == t.id)
          v.format = static_cast<attn::WeightFormat>(f);
      v.rows = n;
      v.cols = kk;
      v.data = blocks.data();
      v.int8_activations = true;
      INFO(t.name << " m " << m);
      k::QuantizedActivations a;
      REQUIRE(k::quantize_activations(t.id, m, kk, x.data(), kk, a));
      std::vector<float> twin(static_cast<std::size_t>(m) * n);
      k::linear_nt_int8_scalar(m, n, kk, a, 0, blocks.data(), blocks.size() / n, t.id, bias.data(),
                               twin.data(), n);
      const auto run = [&] {
        std::vector<float> c(static_cast<std::size_t>(m) * n);
        v.linear(m, x.data(), kk, bias.data(), c.data(), n);
        return c;
      };
      CHECK(testutil::same_bits(run(), twin));  // the view dispatches to the int8 product
      testutil::require_same_at_every_count("linear_nt_int8", run);
    }
}
