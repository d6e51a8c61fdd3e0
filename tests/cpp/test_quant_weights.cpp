// Quantized weights kept as stored (src/core/stored_weight.h, kernels::linear_nt_quant): for every
// ggml block format, StoredWeight keeps the blocks as the file has them and WeightView computes
// with them exactly: linear against a double GEMM over the dequantized matrix (quant_reference.h's
// values) and bit for bit against linear_nt over the dequantized matrix, at every thread count;
// row blocks, widened rows, NON_FINITE scales and refusals; and a PretrainedModel loaded with Q8_0
// matrices against the same model loaded with the dequantized values as F32.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/stored_weight.h"
#include "kernels/kernels.h"
#include "kernels/quant.h"
#include "model/pretrained.h"
#include "parallel_check.h"
#include "quant_blocks.h"
#include "quant_quantizer.h"
#include "quant_reference.h"
#include "test_helpers.h"

namespace {

using attn::WeightFormat;
using quant_test::Layout;
using quant_test::make_blocks;
using quant_test::reference_matrix;

// A float tolerance for float32 GEMMs of K terms against a double reference: relative to Σ|a||w|.
constexpr double kRelTolerance = 1e-5;

WeightFormat format_of(const Layout& t) {
  for (int f = 0; f < attn::kWeightFormatCount; ++f)
    if (attn::format_ggml_type(static_cast<WeightFormat>(f)) == t.id) return static_cast<WeightFormat>(f);
  FAIL("no WeightFormat for ggml type " << t.name);
  return WeightFormat::kF32;
}

attn::StoredWeight stored(WeightFormat f, int rows, int cols, const std::vector<std::uint8_t>& blocks) {
  attn::StoredWeight w;
  const attn::Status st = attn::StoredWeight::allocate({rows, cols}, f, "test", w);
  INFO(st.message);
  REQUIRE(st.ok());
  REQUIRE(w.byte_size() == blocks.size());
  std::memcpy(w.bytes(), blocks.data(), blocks.size());
  REQUIRE(w.check_finite("test").ok());
  return w;
}

std::vector<float> linear_of(const attn::WeightView& v, int m, const std::vector<float>& a,
                             const std::vector<float>& bias) {
  std::vector<float> c(static_cast<std::size_t>(m) * v.rows, -7.0f);
  v.linear(m, a.data(), v.cols, bias.empty() ? nullptr : bias.data(), c.data(), v.rows);
  return c;
}

// Worst |c - ref| / (Σ|a||w| + |bias|) of C = A · Wᵀ + bias against the double GEMM.
double worst_error(int m, int n, int k, const std::vector<float>& a, const std::vector<double>& w,
                   const std::vector<float>& bias, const std::vector<float>& c) {
  double worst = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = bias.empty() ? 0 : bias[j], scale = bias.empty() ? 0 : std::fabs(bias[j]);
      for (int q = 0; q < k; ++q) {
        sum += static_cast<double>(a[i * k + q]) * w[static_cast<std::size_t>(j) * k + q];
        scale += std::fabs(static_cast<double>(a[i * k + q]) * w[static_cast<std::size_t>(j) * k + q]);
      }
      const double e = std::fabs(c[i * n + j] - sum) / (scale + 1e-30);
      if (!(e <= worst)) worst = e;
    }
  return worst;
}

}  // namespace

TEST_CASE("quantized weights: linear equals the double GEMM and linear_nt over the dequantized W",
          "[quant][quant_weights]") {
  for (const Layout& t : quant_test::layouts()) {
    const WeightFormat f = format_of(t);
    REQUIRE(std::string(attn::format_name(f)) == t.name);
    for (int blocks_per_row : {2, 3}) {
      const int rows = 11, cols = blocks_per_row * t.elements, m = 5;
      const auto blocks = make_blocks(t, rows, cols, 100 + t.id);
      const attn::StoredWeight w = stored(f, rows, cols, blocks);
      const attn::WeightView v = w.view();
      REQUIRE(v.format == f);
      const std::vector<double> ref = reference_matrix(t, rows, cols, blocks);
      const auto a = testutil::random_tensor({m, cols}, 7).data;
      const auto bias = testutil::random_tensor({rows}, 8).data;
      for (const bool with_bias : {false, true}) {
        const std::vector<float> b = with_bias ? bias : std::vector<float>{};
        const std::vector<float> c = linear_of(v, m, a, b);
        INFO(t.name << " cols " << cols << (with_bias ? " with bias" : ""));
        CHECK(worst_error(m, rows, cols, a, ref, b, c) <= kRelTolerance);
        // The dequantized W (exact: test_quant.cpp) through the float32 GEMM: the same bits.
        const attn::Tensor wide = w.widened();
        for (std::size_t i = 0; i < ref.size(); ++i) REQUIRE(static_cast<double>(wide.data[i]) == ref[i]);
        std::vector<float> c32(c.size());
        attn::kernels::linear_nt(m, rows, cols, a.data(), cols, wide.data.data(), cols,
                                 with_bias ? b.data() : nullptr, c32.data(), rows);
        CHECK(testutil::same_bits(c, c32));
      }
    }
  }
}

TEST_CASE("quantized weights: the scalar and SIMD twins and the K slices", "[quant][quant_weights]") {
  // K = 2560 crosses the scalar twin's 2048-column slice and the SIMD128 GEMM's 768-column slice.
  namespace k = attn::kernels;
  for (const Layout& t : quant_test::layouts()) {
    const int rows = 9, cols = 10 * 256, m = 3;
    const auto blocks = make_blocks(t, rows, cols, 300 + t.id);
    const std::size_t row_bytes = blocks.size() / rows;
    const attn::StoredWeight w = stored(format_of(t), rows, cols, blocks);
    const attn::Tensor wide = w.widened();
    const auto a = testutil::random_tensor({m, cols}, 9).data;
    const auto bias = testutil::random_tensor({rows}, 10).data;
    INFO(t.name);
    std::vector<float> want(static_cast<std::size_t>(m) * rows), got(want.size());
    k::linear_nt_scalar(m, rows, cols, a.data(), cols, wide.data.data(), cols, bias.data(), want.data(),
                        rows);
    k::linear_nt_quant_scalar(m, rows, cols, a.data(), cols, blocks.data(), row_bytes, t.id, bias.data(),
                              got.data(), rows);
    CHECK(testutil::same_bits(got, want));
    CHECK(worst_error(m, rows, cols, a, reference_matrix(t, rows, cols, blocks), bias, got) <= kRelTolerance);
#if defined(__wasm_simd128__)
    k::linear_nt_simd128(m, rows, cols, a.data(), cols, wide.data.data(), cols, bias.data(), want.data(),
                         rows);
    k::linear_nt_quant_simd128(m, rows, cols, a.data(), cols, blocks.data(), row_bytes, t.id, bias.data(),
                               got.data(), rows);
    CHECK(testutil::same_bits(got, want));
#endif
  }
}

TEST_CASE("quantized weights: the same bits at every thread count", "[quant][quant_weights][parallel]") {
  for (const Layout& t : quant_test::layouts()) {
    const int rows = 24, cols = 2 * 256, m = 64;  // 786k multiply-adds: split over the pool
    const auto blocks = make_blocks(t, rows, cols, 500 + t.id);
    const attn::StoredWeight w = stored(format_of(t), rows, cols, blocks);
    const auto a = testutil::random_tensor({m, cols}, 11).data;
    const auto bias = testutil::random_tensor({rows}, 12).data;
    INFO(t.name);
    testutil::require_same_at_every_count("linear_nt_quant", [&] { return linear_of(w.view(), m, a, bias); });
  }
}

TEST_CASE("quantized weights: row blocks and widened rows", "[quant][quant_weights]") {
  for (const Layout& t : quant_test::layouts()) {
    const int rows = 7, cols = 3 * t.elements, m = 2;
    const auto blocks = make_blocks(t, rows, cols, 700 + t.id);
    const attn::StoredWeight w = stored(format_of(t), rows, cols, blocks);
    const attn::WeightView v = w.view();
    const std::vector<double> ref = reference_matrix(t, rows, cols, blocks);
    INFO(t.name);
    REQUIRE(v.row_bytes() == blocks.size() / rows);
    std::vector<float> row(cols);
    for (int r = 0; r < rows; ++r) {
      v.widen_row(r, row.data());
      for (int c = 0; c < cols; ++c) REQUIRE(static_cast<double>(row[c]) == ref[r * cols + c]);
    }
    // Rows [2, 5) as a matrix of their own: its product is those columns of the whole one.
    const auto a = testutil::random_tensor({m, cols}, 13).data;
    const std::vector<float> whole = linear_of(v, m, a, {});
    const attn::WeightView block = v.row_block(2, 3);
    REQUIRE(block.rows == 3);
    REQUIRE(block.data == static_cast<const char*>(v.data) + 2 * v.row_bytes());
    const std::vector<float> part = linear_of(block, m, a, {});
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < 3; ++j) REQUIRE(part[i * 3 + j] == whole[i * rows + 2 + j]);
    block.widen_row(1, row.data());
    for (int c = 0; c < cols; ++c) REQUIRE(static_cast<double>(row[c]) == ref[3 * cols + c]);
    const attn::Tensor wide = block.widened();
    REQUIRE(wide.shape == attn::Shape{3, cols});
  }
}

TEST_CASE("quantized weights: non-finite scales, partial blocks and transposing are refused",
          "[quant][quant_weights]") {
  for (const Layout& t : quant_test::layouts()) {
    const WeightFormat f = format_of(t);
    INFO(t.name);
    const int rows = 3, cols = 2 * t.elements;
    auto blocks = make_blocks(t, rows, cols, 900 + t.id);
    for (int h : t.halves) {  // an infinite, then a NaN, scale in row 2's second block
      for (const std::uint16_t bad : {std::uint16_t{0x7c00}, std::uint16_t{0xfe01}}) {
        auto broken = blocks;
        const std::size_t at = blocks.size() / rows * 2 + t.bytes + h;
        broken[at] = bad & 0xff;
        broken[at + 1] = bad >> 8;
        attn::StoredWeight w;
        REQUIRE(attn::StoredWeight::allocate({rows, cols}, f, "test", w).ok());
        std::memcpy(w.bytes(), broken.data(), broken.size());
        const attn::Status st = w.check_finite("blk.0.attn_q.weight");
        REQUIRE(st.code == attn::StatusCode::kNonFinite);
        CHECK(st.message.find("blk.0.attn_q.weight") != std::string::npos);
        CHECK(st.message.find(t.name) != std::string::npos);
        CHECK(st.message.find("flat index " + std::to_string(2 * cols + t.elements)) != std::string::npos);
      }
    }
    attn::StoredWeight w;
    attn::Status st = attn::StoredWeight::allocate({rows, t.elements + 1}, f, "a tensor", w);
    REQUIRE(st.code == attn::StatusCode::kInvalidArgument);
    CHECK(st.message.find(t.name) != std::string::npos);
    st = attn::StoredWeight::allocate({rows, t.elements / 2}, f, "a tensor", w);
    REQUIRE(st.code == attn::StatusCode::kInvalidArgument);
    attn::StoredWeight ok = stored(f, rows, cols, blocks);
    st = ok.transpose();
    REQUIRE(st.code == attn::StatusCode::kInvalidArgument);
    CHECK(st.message.find(t.name) != std::string::npos);
    ok.pack_for_linear();  // left as it is
    REQUIRE(std::memcmp(ok.bytes(), blocks.data(), blocks.size()) == 0);
  }
  attn::StoredWeight w;
  REQUIRE(attn::StoredWeight::allocate({2, 32}, static_cast<WeightFormat>(99), "x", w).code ==
          attn::StatusCode::kInvalidArgument);
  REQUIRE(std::string(attn::format_name(static_cast<WeightFormat>(99))) == "?");
  REQUIRE(attn::StoredWeight::allocate({1 << 20, 1 << 20}, WeightFormat::kQ4_K, "huge", w).code ==
          attn::StatusCode::kTooLarge);
}

namespace {

attn::PretrainedConfig tiny_llama() {  // every matrix's rows a whole number of Q8_0 blocks
  attn::PretrainedConfig c;
  c.arch = attn::PretrainedArch::kLlama;
  c.vocab_size = 11;
  c.hidden = 32;
  c.layers = 2;
  c.heads = 2;
  c.kv_heads = 1;
  c.head_dim = 16;
  c.intermediate = 64;
  c.max_positions = 6;
  return c;
}

attn::Status load(attn::PretrainedModel& m, const attn::TensorSpec& s, WeightFormat f, const void* bytes,
                  std::size_t size) {
  void* data = nullptr;
  const attn::Status st = m.begin_tensor(s.key, s.shape, f, false, s.key.label(), data);
  if (!st.ok()) return st;
  std::memcpy(data, bytes, size);
  return m.end_tensor(s.key);
}

}  // namespace

TEST_CASE("quantized weights: a PretrainedModel with Q8_0 matrices equals F32 with their values",
          "[quant][quant_weights][pretrained]") {
  const Layout& q8 = quant_test::layouts()[4];
  REQUIRE(std::string(q8.name) == "Q8_0");
  attn::PretrainedModel quant, plain;
  REQUIRE(attn::PretrainedModel::create(tiny_llama(), quant).ok());
  REQUIRE(attn::PretrainedModel::create(tiny_llama(), plain).ok());
  std::uint64_t seed = 40, quant_bytes = 0;
  for (const attn::TensorSpec& s : quant.tensors()) {
    attn::Tensor v = testutil::random_tensor(s.shape, ++seed, 0.3f);
    INFO(s.key.label());
    if (s.shape.size() == 1) {  // norm weights stay F32 in both
      for (float& x : v.data) x = 1.0f + 0.1f * x;
      REQUIRE(load(quant, s, WeightFormat::kF32, v.data.data(), v.data.size() * 4).ok());
      REQUIRE(load(plain, s, WeightFormat::kF32, v.data.data(), v.data.size() * 4).ok());
      quant_bytes += v.data.size() * 4;
      continue;
    }
    const auto blocks = quant_test::quantize_row(q8, v.data);  // the rows back to back
    std::vector<float> values(v.data.size());
    REQUIRE(attn::kernels::dequantize_row(q8.id, blocks.data(), values.data(), values.size()));
    REQUIRE(load(quant, s, WeightFormat::kQ8_0, blocks.data(), blocks.size()).ok());
    REQUIRE(load(plain, s, WeightFormat::kF32, values.data(), values.size() * 4).ok());
    quant_bytes += blocks.size();
    std::vector<float> back;  // read_rows dequantizes
    REQUIRE(quant.read_rows(s.key, 1, 2, back).ok());
    const std::size_t cols = static_cast<std::size_t>(s.shape[1]);
    REQUIRE(std::memcmp(back.data(), values.data() + cols, 2 * cols * sizeof(float)) == 0);
  }
  REQUIRE(quant.missing().empty());
  CHECK(quant.weight_bytes() == quant_bytes);
  CHECK(quant.weight_bytes() < plain.weight_bytes() / 3);
  const std::vector<std::int32_t> ids = {3, 1, 4, 1, 5, 9, 2, 6};
  attn::PretrainedForwardResult rq, rp;
  REQUIRE(quant.forward(2, 4, ids, {}, rq).ok());
  REQUIRE(plain.forward(2, 4, ids, {}, rp).ok());
  REQUIRE(rq.logits.shape == rp.logits.shape);
  double worst = 0;
  for (std::size_t i = 0; i < rq.logits.data.size(); ++i)
    worst = std::max(worst, std::fabs(rq.logits.data[i] - rp.logits.data[i]) /
                                std::max(1.0, std::fabs(static_cast<double>(rp.logits.data[i]))));
  CHECK(worst <= 1e-5);
}

TEST_CASE("quantized weights: PretrainedModel refuses quantized vectors and transposed matrices",
          "[quant][quant_weights][pretrained]") {
  attn::PretrainedModel m;
  REQUIRE(attn::PretrainedModel::create(tiny_llama(), m).ok());
  void* data = nullptr;
  const attn::TensorKey embed{attn::TensorRole::kEmbed, -1};
  attn::Status st = m.begin_tensor(embed, {32, 11}, WeightFormat::kQ8_0, true, "token_embd.weight", data);
  REQUIRE(st.code == attn::StatusCode::kInvalidArgument);
  CHECK(st.message.find("token_embd.weight") != std::string::npos);
  const attn::TensorKey norm{attn::TensorRole::kFinalNorm, -1};
  st = m.begin_tensor(norm, {32}, WeightFormat::kQ8_0, false, "output_norm.weight", data);
  REQUIRE(st.code == attn::StatusCode::kInvalidArgument);
  CHECK(st.message.find("output_norm.weight") != std::string::npos);
  CHECK(st.message.find("Q8_0") != std::string::npos);
  st = m.begin_tensor(embed, {11, 32}, static_cast<WeightFormat>(42), false, "token_embd.weight", data);
  REQUIRE(st.code == attn::StatusCode::kInvalidArgument);
  REQUIRE(m.weight_bytes() == 0);
  REQUIRE(m.begin_tensor(embed, {11, 32}, WeightFormat::kQ4_K, false, "token_embd.weight", data).code ==
          attn::StatusCode::kInvalidArgument);  // 32 columns: not a whole 256-element block
  REQUIRE(m.begin_tensor(embed, {11, 32}, WeightFormat::kQ4_0, false, "token_embd.weight", data).ok());
  REQUIRE(m.weight_bytes() == 11 * 18);
}
