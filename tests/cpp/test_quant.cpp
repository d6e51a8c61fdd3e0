// The scalar dequantizers of ggml's block formats (src/kernels/quant.h) against the test's own
// double references (quant_reference.h, written from the block layouts): rows of several blocks
// from random bytes, from the test's quantizer (quant_quantizer.h) and hand-made edge blocks (zero
// scales, extreme quants, negative, huge and subnormal d / dmin); plus hand-computed values, the
// type table and the layouts' sizes and field offsets.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/quant.h"
#include "quant_quantizer.h"
#include "quant_reference.h"

using namespace quant_test;
namespace k = attn::kernels;

namespace {

// Every kernel value is one float rounding of the exact value (products of a float16 scale and a
// small integer are exact in float), so the kernel equals the reference rounded to float: 0 ulps.
constexpr double kMaxUlps = 0;

// Distance from the reference rounded to float, in units of its last place: |y - float(ref)| / ulp.
double ulps(float y, double ref) {
  const float r = static_cast<float>(ref);
  if (std::isnan(r) || std::isnan(y)) return std::isnan(r) && std::isnan(y) ? 0 : INFINITY;
  if (std::isinf(r) || std::isinf(y)) return r == y ? 0 : INFINITY;
  const double ulp = std::nextafter(std::fabs(r), INFINITY) - std::fabs(r);
  return std::fabs(static_cast<double>(y) - r) / ulp;
}

// The kernel's row of `blocks` (through dequantize_row) against the reference, element by element.
void check_row(const Layout& t, const std::vector<std::uint8_t>& blocks, const std::string& what) {
  const std::int64_t n = static_cast<std::int64_t>(blocks.size() / t.bytes) * t.elements;
  std::vector<float> y(static_cast<std::size_t>(n), -12345.0f);
  REQUIRE(k::dequantize_row(t.id, blocks.data(), y.data(), n));
  const std::vector<double> ref = reference_row(t, blocks);
  REQUIRE(ref.size() == y.size());
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (ulps(y[i], ref[i]) > kMaxUlps) {
      INFO(t.name << " " << what << ": element " << i << " (block " << i / t.elements << ") kernel " << y[i]
                  << " reference " << ref[i]);
      REQUIRE(ulps(y[i], ref[i]) <= kMaxUlps);
    }
  }
}

// `count` blocks of random bytes whose float16 fields are random finite values.
std::vector<std::uint8_t> random_blocks(const Layout& t, int count, std::mt19937& rng) {
  std::vector<std::uint8_t> b(static_cast<std::size_t>(count) * t.bytes);
  for (auto& v : b) v = static_cast<std::uint8_t>(rng());
  for (int i = 0; i < count; ++i)
    for (int h : t.halves) {
      std::uint8_t& hi = b[static_cast<std::size_t>(i) * t.bytes + h + 1];
      if ((hi & 0x7c) == 0x7c) hi &= 0xfb;  // exponent 31 (inf / NaN) → 30
    }
  return b;
}

void set_half(std::vector<std::uint8_t>& b, std::size_t at, std::uint16_t h) {
  b[at] = h & 0xff;
  b[at + 1] = h >> 8;
}

}  // namespace

TEST_CASE("quant: the type table matches ggml's sizes and the layouts", "[quant]") {
  REQUIRE(k::ggml_type_count() > 0);
  for (int i = 1; i < k::ggml_type_count(); ++i) REQUIRE(k::ggml_types()[i - 1].id < k::ggml_types()[i].id);
  for (const Layout& t : layouts()) {
    const k::GgmlTypeInfo* info = k::ggml_type_info(t.id);
    REQUIRE(info != nullptr);
    CHECK(std::string(info->name) == t.name);
    CHECK(info->block_elements == t.elements);
    CHECK(info->block_bytes == t.bytes);
    CHECK(info->dequantized);
  }
  CHECK(k::ggml_type_info(4) == nullptr);   // Q4_2, removed from ggml
  CHECK(k::ggml_type_info(99) == nullptr);  // not a type
  CHECK(std::string(k::ggml_type_info(16)->name) == "IQ2_XXS");
  CHECK_FALSE(k::ggml_type_info(16)->dequantized);
  CHECK(offsetof(k::BlockQ2_K, d) == 80);
  CHECK(offsetof(k::BlockQ3_K, d) == 108);
  CHECK(offsetof(k::BlockQ5_K, qs) == 48);
  CHECK(offsetof(k::BlockQ6_K, d) == 208);
}

TEST_CASE("quant: random blocks, rows of several blocks, equal the reference", "[quant]") {
  std::mt19937 rng(20240601);
  for (const Layout& t : layouts()) {
    for (int count : {1, 3, 7})
      check_row(t, random_blocks(t, count, rng), std::to_string(count) + " random blocks");
  }
}

TEST_CASE("quant: the test's quantizer round-trips rows, and the kernel reads its blocks", "[quant]") {
  std::mt19937 rng(7);    // its raw draws are the same in every standard library (distributions are not)
  auto normal = [&rng] {  // Box-Muller
    const double u = (rng() + 0.5) / 4294967296.0, v = (rng() + 0.5) / 4294967296.0;
    return static_cast<float>(std::sqrt(-2 * std::log(u)) * std::cos(6.283185307179586 * v));
  };
  // Largest |dequantized - x| as a fraction of the row's max |x| a, per type: half a quantization
  // step (Q4_0 a/7, Q4_1 2a/15, Q5_0 a/15, Q5_1 2a/31, Q8_0 a/127; IQ4_NL's widest gap is the top
  // level's 113 against 127), for the K-quants plus what the quantized scales add (each scale is
  // rounded up by at most d = max scale / 15, 31 or 63, each min off by half of dmin), with ~10%.
  const std::vector<std::pair<int, double>> kRoundTripTol = {{2, 0.08},   {3, 0.075},  {6, 0.036}, {7, 0.036},
                                                             {8, 0.0045}, {20, 0.12},  {10, 0.4},  {11, 0.19},
                                                             {12, 0.08},  {13, 0.045}, {14, 0.018}};
  for (const Layout& t : layouts()) {
    std::vector<float> x(static_cast<std::size_t>(3 * t.elements));
    for (float& v : x) v = normal() * 0.05f + 0.01f;
    const std::vector<std::uint8_t> blocks = quantize_row(t, x);
    check_row(t, blocks, "quantized");
    std::vector<float> y(x.size());
    REQUIRE(k::dequantize_row(t.id, blocks.data(), y.data(), static_cast<std::int64_t>(y.size())));
    double worst = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
      worst = std::max(worst, std::fabs(static_cast<double>(y[i]) - x[i]));
    double tol = 0;
    for (const auto& [id, v] : kRoundTripTol)
      if (id == t.id) tol = v;
    INFO(t.name << " worst error " << worst << " of max |x| " << amax(x.data(), static_cast<int>(x.size())));
    CHECK(worst <= tol * amax(x.data(), static_cast<int>(x.size())));
  }
}

TEST_CASE("quant: edge blocks (zero scales, extreme quants, negative / huge / subnormal d and dmin)",
          "[quant]") {
  std::mt19937 rng(99);
  // float16 patterns: +0, -0, -1.5, 65504, -65504, the smallest subnormal, -2^-14, ±inf.
  const std::vector<std::uint16_t> kScales = {0x0000, 0x8000, 0xbe00, 0x7bff, 0xfbff,
                                              0x0001, 0x8400, 0x7c00, 0xfc00};
  for (const Layout& t : layouts()) {
    for (std::uint8_t fill :
         {std::uint8_t{0x00}, std::uint8_t{0xff}, std::uint8_t{0x55}, std::uint8_t{0xaa}}) {
      for (std::uint16_t s : kScales) {
        // Two blocks: the edge pattern and a random one after it (the block boundary).
        std::vector<std::uint8_t> b(2 * static_cast<std::size_t>(t.bytes), fill);
        const std::vector<std::uint8_t> r = random_blocks(t, 1, rng);
        std::copy(r.begin(), r.end(), b.begin() + t.bytes);
        for (std::size_t i = 0; i < t.halves.size(); ++i)
          set_half(b, static_cast<std::size_t>(t.halves[i]),
                   i == 0 ? s : static_cast<std::uint16_t>(s ^ 0x8000));
        check_row(t, b, "fill " + std::to_string(fill) + " scale bits " + std::to_string(s));
      }
    }
  }
}

TEST_CASE("quant: hand-computed values", "[quant]") {
  auto row = [](int id, const std::vector<std::uint8_t>& b, std::int64_t n) {
    std::vector<float> y(static_cast<std::size_t>(n));
    REQUIRE(k::dequantize_row(id, b.data(), y.data(), n));
    return y;
  };
  // Q8_0, d = -2 (0xc000): q = -128 → 256, q = 127 → -254.
  std::vector<std::uint8_t> q8(34, 0);
  set_half(q8, 0, 0xc000);
  q8[2] = 0x80;
  q8[33] = 0x7f;
  const auto y8 = row(8, q8, 32);
  CHECK(y8[0] == 256.0f);
  CHECK(y8[31] == -254.0f);
  CHECK(y8[1] == 0.0f);
  // Q4_0, d = 0.5, qs[0] = 0x3f: element 0 = (15 - 8) / 2, element 16 = (3 - 8) / 2.
  std::vector<std::uint8_t> q4(18, 0x88);
  set_half(q4, 0, 0x3800);
  q4[2] = 0x3f;
  const auto y4 = row(2, q4, 32);
  CHECK(y4[0] == 3.5f);
  CHECK(y4[16] == -2.5f);
  CHECK(y4[5] == 0.0f);
  // IQ4_NL, d = 1: nibbles 0 and 15 are the table's ends.
  std::vector<std::uint8_t> nl(18, 0);
  set_half(nl, 0, 0x3c00);
  nl[2] = 0xf0;
  const auto ynl = row(20, nl, 32);
  CHECK(ynl[0] == -127.0f);
  CHECK(ynl[16] == 113.0f);
  // Q6_K, d = 1, every scale 2, every quant 0 (stored 32): 0; ql[0] low nibble 15 → (15 - 32)·2.
  std::vector<std::uint8_t> q6(210, 0);
  for (int i = 128; i < 192; ++i) q6[i] = 0xaa;  // top bits 2 for every element: q = 32 + low
  for (int i = 192; i < 208; ++i) q6[i] = 2;
  set_half(q6, 208, 0x3c00);
  q6[0] = 0x0f;
  const auto y6 = row(14, q6, 256);
  CHECK(y6[0] == 30.0f);  // (15 + 32 - 32) · 2
  CHECK(y6[1] == 0.0f);
}

TEST_CASE("quant: dequantize_row refuses other types and partial blocks, copies F32 and widens F16/BF16",
          "[quant]") {
  float y[64] = {};
  const std::vector<std::uint8_t> blocks(4 * 210, 0);
  CHECK_FALSE(k::dequantize_row(16, blocks.data(), y, 256));  // IQ2_XXS: not read
  CHECK_FALSE(k::dequantize_row(4, blocks.data(), y, 32));    // no such type
  CHECK_FALSE(k::dequantize_row(2, blocks.data(), y, 33));    // not a whole number of Q4_0 blocks
  CHECK_FALSE(k::dequantize_row(12, blocks.data(), y, 128));
  const float f[2] = {1.5f, -2.25f};
  REQUIRE(k::dequantize_row(0, f, y, 2));
  CHECK((y[0] == 1.5f && y[1] == -2.25f));
  const std::uint16_t h[2] = {0x3e00, 0xc010};  // F16 1.5; BF16 -2.25
  REQUIRE(k::dequantize_row(1, h, y, 1));
  CHECK(y[0] == 1.5f);
  REQUIRE(k::dequantize_row(30, h + 1, y, 1));
  CHECK(y[0] == -2.25f);
}
