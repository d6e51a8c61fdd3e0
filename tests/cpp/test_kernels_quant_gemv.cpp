// The exact mode's fused GEMV for decoding (kernels.h gemv_quant_*): every stored block type, one to
// four activation rows and row lengths of one to nine blocks (a block, 32 or 256 elements, is at
// least two of the 16-wide lane groups, so no row is shorter than the vector), against a double
// GEMM over the dequantized matrix within the rounding bound of its summation order; the SIMD128
// version against its scalar twin bit for bit (the relaxed-SIMD build fuses the multiply-adds: the
// bound instead); linear_nt_quant dispatching to it; the same bits at every thread count.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernel_variants.h"
#include "kernels/kernels.h"
#include "kernels/quant.h"
#include "parallel_check.h"
#include "quant_blocks.h"
#include "test_helpers.h"

namespace {

namespace k = attn::kernels;
using quant_test::Layout;

using GemvFn = decltype(&k::gemv_quant_scalar);
struct Twin {
  std::string name;
  GemvFn gemv;
};
std::vector<Twin> twins() {
  std::vector<Twin> out = {{"scalar", k::gemv_quant_scalar}};
#if defined(__wasm_simd128__)
  out.push_back({kernel_test::expected_variant(), k::gemv_quant_simd128});
#endif
  return out;
}

// Worst |c − ref| / (Σ|a||w| + |bias|) over C, from the double GEMM over the dequantized values.
double worst_error(int m, int n, int kk, const std::vector<float>& a, const std::vector<double>& w,
                   const float* bias, const std::vector<float>& c) {
  double worst = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = bias ? bias[j] : 0, scale = bias ? std::fabs(bias[j]) : 0;
      for (int q = 0; q < kk; ++q) {
        const double p = static_cast<double>(a[i * kk + q]) * w[static_cast<std::size_t>(j) * kk + q];
        sum += p;
        scale += std::fabs(p);
      }
      const double e = std::fabs(c[i * n + j] - sum) / (scale + 1e-30);
      if (!(e <= worst)) worst = e;
    }
  return worst;
}

// The rounding bound of the order: each w is the dequantizer's float (exact in the reference), each
// product rounds once, each lane sums K/16 terms, then four additions and the bias: the error is at
// most γ_n·(Σ|a||w| + |bias|) with n = K/16 + 6 roundings, u = 2^-24 (two more for slack).
double bound_for(int kk) {
  return (kk / 16 + 8) * std::ldexp(1.0, -24);
}

}  // namespace

TEST_CASE("gemv_quant: every type and row length against the double GEMM, the twins bit for bit",
          "[kernels][quant][gemv]") {
  for (const Layout& t : quant_test::layouts()) {
    for (const int blocks_per_row : {1, 2, 3, 9}) {
      const int n = 11, kk = blocks_per_row * t.elements;
      const auto blocks = quant_test::make_blocks(t, n, kk, 40 * t.id + blocks_per_row);
      const std::size_t row_bytes = blocks.size() / n;
      const std::vector<double> w = quant_test::reference_matrix(t, n, kk, blocks);
      for (int m = 1; m <= k::kQuantGemvRows; ++m) {
        const auto x = testutil::random_tensor({m, kk}, 500 + m).data;
        const auto bias = testutil::random_tensor({n}, 600 + m).data;
        const float* b = m % 2 ? bias.data() : nullptr;
        std::vector<std::vector<float>> got;
        for (const Twin& twin : twins()) {
          INFO(t.name << " " << twin.name << " K " << kk << " M " << m);
          std::vector<float> c(static_cast<std::size_t>(m) * n, -9.0f);
          REQUIRE(twin.gemv(m, n, kk, x.data(), kk, blocks.data(), row_bytes, t.id, b, c.data(), n));
          CHECK(worst_error(m, n, kk, x, w, b, c) <= bound_for(kk));
          got.push_back(c);
        }
        // The SIMD128 build's multiply and add round as the twin's do; relaxed SIMD may fuse them.
        if (got.size() > 1 && std::string(kernel_test::expected_variant()) == "simd128")
          CHECK(testutil::same_bits(got[1], got[0]));
        // The dispatcher takes this build's GEMV for these M.
        std::vector<float> c(static_cast<std::size_t>(m) * n);
        k::linear_nt_quant(m, n, kk, x.data(), kk, blocks.data(), row_bytes, t.id, b, c.data(), n);
        INFO(t.name << " dispatcher K " << kk << " M " << m);
        CHECK(testutil::same_bits(c, got.back()));
      }
    }
  }
}

TEST_CASE("gemv_quant: refuses types without blocks and more rows than it serves", "[kernels][quant][gemv]") {
  const std::vector<float> a(64 * 5, 1.0f), w(64 * 2, 1.0f);
  std::vector<float> c(10, -9.0f);
  for (const Twin& twin : twins()) {
    INFO(twin.name);
    CHECK_FALSE(twin.gemv(1, 2, 64, a.data(), 64, w.data(), 64 * 4, 0, nullptr, c.data(), 2));  // F32
    CHECK_FALSE(twin.gemv(1, 2, 64, a.data(), 64, w.data(), 64 * 2, 1, nullptr, c.data(), 2));  // F16
    CHECK_FALSE(twin.gemv(1, 2, 64, a.data(), 64, w.data(), 36 * 2, 9, nullptr, c.data(), 2));  // Q8_1
    const auto blocks = quant_test::make_blocks(quant_test::layouts()[0], 2, 64, 3);
    CHECK_FALSE(twin.gemv(k::kQuantGemvRows + 1, 2, 64, a.data(), 64, blocks.data(), blocks.size() / 2, 2,
                          nullptr, c.data(), 2));
    for (const float v : c) CHECK(v == -9.0f);  // nothing written
  }
}

TEST_CASE("gemv_quant: the same bits at every thread count", "[kernels][quant][gemv][parallel]") {
  for (const Layout& t : quant_test::layouts()) {
    // 1000 × 768 per row ≥ 2 · 2^18 multiply-adds: the columns are split over the pool.
    const int n = 1000, kk = 768;
    const auto blocks = quant_test::make_blocks(t, n, kk, 70 + t.id);
    for (const int m : {1, 3}) {
      const auto x = testutil::random_tensor({m, kk}, 71 + m).data;
      const auto bias = testutil::random_tensor({n}, 72).data;
      INFO(t.name << " M " << m);
      testutil::require_same_at_every_count("gemv_quant", [&] {
        std::vector<float> c(static_cast<std::size_t>(m) * n);
        k::linear_nt_quant(m, n, kk, x.data(), kk, blocks.data(), blocks.size() / n, t.id, bias.data(),
                           c.data(), n);
        return c;
      });
    }
  }
}

TEST_CASE("linear_nt_quant_group: each product's own bits, one pool job, at every thread count",
          "[kernels][quant][gemv][parallel]") {
  // Three products of one A (a layer's q, k, v): types with the same activation blocks (Q8_K), row
  // counts that are not multiples of the 8-column units, 1037 · 512 multiply-adds per row (split).
  const int kk = 512;
  const std::vector<int> types = {12, 14, 13}, rows = {300, 37, 700};
  std::vector<std::vector<std::uint8_t>> w;
  for (std::size_t p = 0; p < types.size(); ++p)
    for (const Layout& t : quant_test::layouts())
      if (t.id == types[p]) w.push_back(quant_test::make_blocks(t, rows[p], kk, 90 + p));
  REQUIRE(w.size() == types.size());
  for (const bool int8 : {false, true})
    for (const int m : {1, 2, 4}) {
      const auto x = testutil::random_tensor({m, kk}, 91 + m).data;
      const auto bias = testutil::random_tensor({700}, 92).data;
      const auto run = [&](bool grouped) {
        std::vector<float> c(static_cast<std::size_t>(m) * 1037, -9.0f);  // the three C side by side
        std::vector<k::QuantProduct> products;
        int col = 0;
        for (std::size_t p = 0; p < types.size(); ++p) {
          const k::QuantProduct q{
              rows[p],        w[p].data(), w[p].size() / rows[p], types[p], p == 1 ? nullptr : bias.data(),
              c.data() + col, 1037};
          products.push_back(q);
          col += rows[p];
          if (grouped) continue;
          if (int8)
            REQUIRE(
                k::linear_nt_int8(m, q.N, kk, x.data(), kk, q.W, q.ldw_bytes, q.type, q.bias, q.C, q.ldc));
          else
            k::linear_nt_quant(m, q.N, kk, x.data(), kk, q.W, q.ldw_bytes, q.type, q.bias, q.C, q.ldc);
        }
        if (grouped) REQUIRE(k::linear_nt_quant_group(m, kk, x.data(), kk, products.data(), 3, int8));
        return c;
      };
      INFO((int8 ? "int8" : "exact") << " M " << m);
      const std::vector<float> alone = run(false);
      CHECK(testutil::same_bits(run(true), alone));
      testutil::require_same_at_every_count("linear_nt_quant_group", [&] {
        const std::uint64_t jobs = k::pool_jobs();
        const std::vector<float> c = run(true);
        CHECK(k::pool_jobs() - jobs <= 1);  // one wake-up for the three products
        return c;
      });
    }
}

TEST_CASE("linear_nt_quant_group: refuses what it cannot run together", "[kernels][quant][gemv]") {
  const Layout& q8_0 = quant_test::layouts()[4];
  const Layout& q4_k = quant_test::layouts()[8];
  REQUIRE((q8_0.id == 8 && q4_k.id == 12));
  const auto a = quant_test::make_blocks(q8_0, 8, 256, 5), b = quant_test::make_blocks(q4_k, 8, 256, 6);
  const auto x = testutil::random_tensor({5, 256}, 7).data;
  std::vector<float> c(16, -9.0f);
  const k::QuantProduct mixed[] = {{8, a.data(), a.size() / 8, q8_0.id, nullptr, c.data(), 16},
                                   {8, b.data(), b.size() / 8, q4_k.id, nullptr, c.data() + 8, 16}};
  CHECK_FALSE(k::linear_nt_quant_group(1, 256, x.data(), 256, mixed, 2, true));   // Q8_0 and Q8_K blocks
  CHECK_FALSE(k::linear_nt_quant_group(5, 256, x.data(), 256, mixed, 2, false));  // more rows than decoding's
  for (const float v : c) CHECK(v == -9.0f);
  CHECK(k::linear_nt_quant_group(1, 256, x.data(), 256, mixed, 2, false));  // the exact mode takes both
  const k::QuantProduct f32[] = {{8, x.data(), 256 * 4, 0, nullptr, c.data(), 16}};
  CHECK_FALSE(k::linear_nt_quant_group(1, 256, x.data(), 256, f32, 1, false));
}
