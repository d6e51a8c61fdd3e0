// MultiHeadAttention::backward for frozen modules (pretrained checkpoints) and the backward's extras
// (MhaBackwardOptions: the context's and the attention weights' gradients): a frozen module reading
// F32, BF16 or Q8_0 views gives the trainable module's input gradients over the widened weights; the
// q/k norms and the soft-cap against central finite differences of the forward; the extras against
// their definitions in double; WeightView::linear_backward_input in every format against a double
// GEMM; the same bits at every thread count.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/multi_head.h"
#include "core/stored_weight.h"
#include "parallel_check.h"
#include "quant_quantizer.h"
#include "quant_reference.h"
#include "test_helpers.h"

namespace {

using attn::WeightFormat;

constexpr double kSameTol = 1e-5;    // frozen vs trainable: the same math, GEMM panels grouped alike
constexpr double kDoubleTol = 2e-5;  // float32 result vs a double sum of O(1) products, K ≤ 64
// Central differences of a float32 forward, step kStep: truncation O(h²) ≈ 1e-3 of the gradient and
// rounding ≈ 1e-7 · |loss| / h; relative to the largest gradient entry.
constexpr float kStep = 2e-2f;
constexpr double kFdTol = 5e-3;

constexpr int kE = 32, kH = 4, kKv = 2, kD = 8;  // every matrix's columns a whole Q8_0 block (32)

attn::MhaConfig config(bool frozen, attn::MhaConfig::QkNorm qk_norm = attn::MhaConfig::QkNorm::kNone,
                       attn::QueryTemperature temperature = {}) {
  attn::MhaConfig c;
  c.query_temperature = temperature;
  c.embed_dim = kE;
  c.num_heads = kH;
  c.num_kv_heads = kKv;
  c.head_dim = kD;
  c.bias = !frozen;
  c.rope = attn::RotaryOptions{};
  c.frozen = frozen;
  c.qk_norm = qk_norm;
  c.seed = 3;
  return c;
}

// A stored (rows, cols) matrix in `format` (random values; Q8_0 from the test's quantizer).
attn::StoredWeight stored_matrix(int rows, int cols, WeightFormat format, std::uint64_t seed) {
  attn::StoredWeight w;
  REQUIRE(attn::StoredWeight::allocate({rows, cols}, format, "test", w).ok());
  const attn::Tensor values = testutil::random_tensor({rows, cols}, seed, 0.3f);
  if (format == WeightFormat::kF32) {
    std::memcpy(w.bytes(), values.data.data(), values.data.size() * 4);
  } else if (format == WeightFormat::kBF16) {
    auto* bits = static_cast<std::uint16_t*>(w.bytes());
    for (std::size_t i = 0; i < values.data.size(); ++i) {
      std::uint32_t b;
      std::memcpy(&b, &values.data[i], 4);
      bits[i] = static_cast<std::uint16_t>(b >> 16);
    }
  } else {
    const quant_test::Layout* layout = nullptr;
    for (const auto& l : quant_test::layouts())
      if (l.id == attn::format_ggml_type(format)) layout = &l;
    REQUIRE(layout);
    auto* out = static_cast<std::uint8_t*>(w.bytes());
    for (int r = 0; r < rows; ++r) {
      const std::vector<float> row(values.data.begin() + r * cols, values.data.begin() + (r + 1) * cols);
      const std::vector<std::uint8_t> blocks = quant_test::quantize_row(*layout, row);
      std::memcpy(out, blocks.data(), blocks.size());
      out += blocks.size();
    }
  }
  return w;
}

// A frozen module over views of `store` (q, k, v, o in `format`) and, with trainable, the normal
// module holding the same widened weights.
void make_pair(WeightFormat format, attn::MhaConfig::QkNorm qk_norm, std::vector<attn::StoredWeight>& store,
               attn::MultiHeadAttention& frozen, attn::MultiHeadAttention* trainable,
               attn::QueryTemperature temperature = {}) {
  REQUIRE(attn::MultiHeadAttention::create(config(true, qk_norm, temperature), frozen).ok());
  if (trainable) REQUIRE(attn::MultiHeadAttention::create(config(false), *trainable).ok());
  const char* names[] = {"q_proj_weight", "k_proj_weight", "v_proj_weight", "out_proj.weight"};
  const int shapes[][2] = {{kH * kD, kE}, {kKv * kD, kE}, {kKv * kD, kE}, {kE, kH * kD}};
  store.clear();
  store.reserve(4);
  for (int i = 0; i < 4; ++i) {
    store.push_back(stored_matrix(shapes[i][0], shapes[i][1], format, 40 + i));
    REQUIRE(frozen.set_weight_view(names[i], store.back().view()).ok());
    if (trainable) REQUIRE(trainable->set_parameter(names[i], store.back().widened()).ok());
  }
  if (trainable) {  // the trainable module's biases zero, as the frozen one has none
    REQUIRE(trainable->set_parameter("in_proj_bias", attn::Tensor::zeros({(kH + 2 * kKv) * kD})).ok());
    REQUIRE(trainable->set_parameter("out_proj.bias", attn::Tensor::zeros({kE})).ok());
  }
  if (qk_norm == attn::MhaConfig::QkNorm::kNone) return;
  const bool per_head = qk_norm == attn::MhaConfig::QkNorm::kPerHead;
  attn::Tensor wq = testutil::random_tensor({per_head ? kD : kH * kD}, 7, 0.5f);
  attn::Tensor wk = testutil::random_tensor({per_head ? kD : kKv * kD}, 8, 0.5f);
  for (float& w : wq.data) w += 1.0f;
  for (float& w : wk.data) w += 1.0f;
  REQUIRE(frozen.set_qk_norm_weight(false, wq).ok());
  REQUIRE(frozen.set_qk_norm_weight(true, wk).ok());
}

attn::MhaForwardOptions options(float softcap) {
  attn::MhaForwardOptions o;
  o.causal = true;
  o.positions.window = 4;
  o.need_weights = false;
  o.softcap = softcap;
  return o;
}

// Σ output ⊙ g in double.
double loss(const attn::MultiHeadAttention& m, const attn::Tensor& x, const attn::MhaForwardOptions& o,
            const attn::Tensor& g) {
  attn::MhaResult r;
  REQUIRE(m.forward(x, nullptr, nullptr, o, r).ok());
  double s = 0;
  for (std::size_t i = 0; i < g.data.size(); ++i) s += static_cast<double>(r.output.data[i]) * g.data[i];
  return s;
}

attn::MhaGrads input_grads(const attn::MultiHeadAttention& m, const attn::Tensor& x,
                           const attn::MhaForwardOptions& o, const attn::Tensor& g, bool parameters,
                           attn::Trace* trace = nullptr) {
  attn::MhaResult r;
  attn::MhaSaved saved;
  REQUIRE(m.forward_saving(x, nullptr, nullptr, o, r, saved, trace).ok());
  attn::MhaBackwardOptions bo;
  bo.parameters = parameters;
  bo.context = true;
  bo.attention = true;
  attn::MhaGrads grads;
  const attn::Status st = m.backward(saved, g, grads, bo);
  INFO(st.message);
  REQUIRE(st.ok());
  return grads;
}

// The input gradient for g against central finite differences of the loss, every element of x.
void require_query_gradient(const attn::MultiHeadAttention& m, const attn::Tensor& x,
                            const attn::MhaForwardOptions& o, const attn::Tensor& g) {
  const attn::MhaGrads grads = input_grads(m, x, o, g, false);
  double largest = 0, worst = 0;
  for (std::size_t i = 0; i < x.data.size(); ++i) {
    attn::Tensor plus = x, minus = x;
    plus.data[i] += kStep;
    minus.data[i] -= kStep;
    const double fd = (loss(m, plus, o, g) - loss(m, minus, o, g)) / (2.0 * kStep);
    worst = std::max(worst, std::abs(fd - grads.query.data[i]));
    largest = std::max(largest, std::abs(fd));
  }
  INFO("max |finite difference − gradient| " << worst << ", largest gradient " << largest);
  REQUIRE(largest > 0.1);
  REQUIRE(worst <= kFdTol * largest);
}

}  // namespace

TEST_CASE("frozen backward: the trainable module's gradients over the widened weights (F32, BF16, Q8_0)",
          "[mha][frozen][backward]") {
  const attn::Tensor x = testutil::random_tensor({2, 6, kE}, 11, 1.0f);
  const attn::Tensor g = testutil::random_tensor({2, 6, kE}, 12, 1.0f);
  for (const auto format : {WeightFormat::kF32, WeightFormat::kBF16, WeightFormat::kQ8_0}) {
    for (const float cap : {0.0f, 1.5f}) {
      INFO(attn::format_name(format) << ", softcap " << cap);
      std::vector<attn::StoredWeight> store;
      attn::MultiHeadAttention frozen, trainable;
      make_pair(format, attn::MhaConfig::QkNorm::kNone, store, frozen, &trainable);
      const attn::MhaGrads a = input_grads(frozen, x, options(cap), g, false);
      const attn::MhaGrads b = input_grads(trainable, x, options(cap), g, true);
      REQUIRE(a.params.empty());
      testutil::require_close(a.query.data, b.query.data, kSameTol, "the query's gradient");
      testutil::require_close(a.context.data, b.context.data, kSameTol, "the context's gradient");
      testutil::require_close(a.attention.data, b.attention.data, kSameTol, "the weights' gradient");
      REQUIRE(a.attention.shape == attn::Shape{2, kH, 6, 6});
      attn::MhaGrads refused;
      attn::MhaResult r;
      attn::MhaSaved saved;
      REQUIRE(frozen.forward_saving(x, nullptr, nullptr, options(cap), r, saved).ok());
      REQUIRE(frozen.backward(saved, g, refused).code == attn::StatusCode::kInvalidArgument);
    }
  }
}

TEST_CASE("frozen backward through the q/k norms and the soft-cap: central finite differences",
          "[mha][frozen][backward]") {
  const attn::Tensor x = testutil::random_tensor({1, 5, kE}, 21, 1.0f);
  const attn::Tensor g = testutil::random_tensor({1, 5, kE}, 22, 1.0f);
  using QkNorm = attn::MhaConfig::QkNorm;
  for (const QkNorm kind : {QkNorm::kNone, QkNorm::kPerHead, QkNorm::kAllHeads}) {
    INFO("q/k norm kind " << static_cast<int>(kind));
    std::vector<attn::StoredWeight> store;
    attn::MultiHeadAttention m;
    make_pair(WeightFormat::kF32, kind, store, m, nullptr);
    const attn::MhaForwardOptions o = options(2.0f);
    require_query_gradient(m, x, o, g);
  }
}

TEST_CASE("the query temperature (Ministral 3): q_rotated × τ(p), backward by finite differences, cached",
          "[mha][frozen][backward][rotary]") {
  const attn::QueryTemperature temperature{0.5, 3};  // τ = 1, 1 + 0.5 ln 2, 1 + 0.5 ln 3 over 9 rows
  const attn::Tensor x = testutil::random_tensor({1, 9, kE}, 31, 1.0f);
  const attn::Tensor g = testutil::random_tensor({1, 9, kE}, 32, 1.0f);
  std::vector<attn::StoredWeight> store, plain_store;
  attn::MultiHeadAttention m, plain;
  make_pair(WeightFormat::kF32, attn::MhaConfig::QkNorm::kNone, store, m, nullptr, temperature);
  make_pair(WeightFormat::kF32, attn::MhaConfig::QkNorm::kNone, plain_store, plain, nullptr);
  const attn::MhaForwardOptions o = options(0.0f);
  attn::Trace with, without;
  attn::MhaResult r;
  REQUIRE(m.forward(x, nullptr, nullptr, o, r, &with).ok());
  REQUIRE(plain.forward(x, nullptr, nullptr, o, r, &without).ok());
  const auto q_rotated = [](const attn::Trace& t) {
    const attn::TraceStep* step = t.find("q_rotated");
    return step ? step->tensor.data : std::vector<float>{};
  };
  const std::vector<float> a = q_rotated(with), b = q_rotated(without);  // (B, H, T, d)
  REQUIRE((a.size() == b.size() && !a.empty()));
  for (std::size_t i = 0; i < a.size(); ++i) {
    const int t = static_cast<int>(i / kD % 9);
    REQUIRE(a[i] == b[i] * static_cast<float>(1 + 0.5 * std::log(1.0 + t / 3)));
  }
  require_query_gradient(m, x, o, g);
  // decoding in chunks of 4, 1 and 4 rows: positions from the cache's length, as the full forward's
  attn::MhaResult full;
  REQUIRE(m.forward(x, nullptr, nullptr, o, full).ok());
  attn::KvCache cache;
  REQUIRE(m.create_cache(9, 1, cache).ok());
  int at = 0;
  for (const int n : {4, 1, 4}) {
    attn::Tensor chunk = attn::Tensor::zeros({1, n, kE});
    std::copy_n(x.data.begin() + at * kE, n * kE, chunk.data.begin());
    attn::MhaResult step;
    REQUIRE(m.forward_cached(chunk, cache, o, step).ok());
    for (int i = 0; i < n * kE; ++i)
      REQUIRE(std::abs(step.output.data[i] - full.output.data[at * kE + i]) <= 1e-5);
    at += n;
  }
}

TEST_CASE("backward's extras: ∂/∂context = g · W_o and ∂/∂A = ∂/∂context · Vᵀ per head, in double",
          "[mha][frozen][backward]") {
  std::vector<attn::StoredWeight> store;
  attn::MultiHeadAttention m;
  make_pair(WeightFormat::kBF16, attn::MhaConfig::QkNorm::kPerHead, store, m, nullptr);
  const int t = 5;
  const attn::Tensor x = testutil::random_tensor({1, t, kE}, 31, 1.0f);
  const attn::Tensor g = testutil::random_tensor({1, t, kE}, 32, 1.0f);
  attn::Trace trace;
  const attn::MhaGrads grads = input_grads(m, x, options(0.0f), g, false, &trace);
  const attn::Tensor w_o = store[3].widened();  // (E, H·d)
  std::vector<double> context(static_cast<std::size_t>(t) * kH * kD, 0.0);
  for (int i = 0; i < t; ++i)
    for (int c = 0; c < kH * kD; ++c)
      for (int r = 0; r < kE; ++r)
        context[i * kH * kD + c] += double{g.data[i * kE + r]} * w_o.data[r * kH * kD + c];
  testutil::require_close(grads.context.data, context, kDoubleTol, "∂/∂context");
  const attn::Tensor& v = trace.find("v")->tensor;  // (1, H_kv, T, d)
  std::vector<double> dweights(static_cast<std::size_t>(kH) * t * t, 0.0);
  for (int h = 0; h < kH; ++h)
    for (int i = 0; i < t; ++i)
      for (int j = 0; j < t; ++j)
        for (int k = 0; k < kD; ++k)
          dweights[(h * t + i) * t + j] +=
              context[i * kH * kD + h * kD + k] * v.data[((h / (kH / kKv)) * t + j) * kD + k];
  testutil::require_close(grads.attention.data, dweights, kDoubleTol, "∂/∂A");
}

TEST_CASE("WeightView::linear_backward_input in every format: dy · W against a double GEMM",
          "[mha][frozen][backward][quant]") {
  const int rows = 70, cols = 256, m = 3;  // 70 rows: two panels of kBackwardPanelRows
  const attn::Tensor dy = testutil::random_tensor({m, rows}, 51, 1.0f);
  for (const auto format :
       {WeightFormat::kF32, WeightFormat::kBF16, WeightFormat::kQ8_0, WeightFormat::kQ4_K}) {
    INFO(attn::format_name(format));
    attn::StoredWeight w = stored_matrix(rows, cols, format, 52);
    const attn::Tensor wide = w.widened();
    for (const bool packed : {false, true}) {
      if (packed && format != WeightFormat::kF32) continue;
      if (packed) w.pack_for_linear();
      std::vector<float> dx(static_cast<std::size_t>(m) * cols, 1.0f);
      w.view().linear_backward_input(m, dy.data.data(), rows, dx.data(), cols, true);  // added to 1
      std::vector<double> want(dx.size(), 1.0);
      for (int i = 0; i < m; ++i)
        for (int c = 0; c < cols; ++c)
          for (int r = 0; r < rows; ++r)
            want[i * cols + c] += double{dy.data[i * rows + r]} * wide.data[r * cols + c];
      testutil::require_close(dx, want, 1e-4, "dx");
    }
  }
}

TEST_CASE("frozen backward: the same bits at every thread count", "[mha][frozen][backward][parallel]") {
  std::vector<attn::StoredWeight> store;
  attn::MultiHeadAttention m;
  make_pair(WeightFormat::kQ8_0, attn::MhaConfig::QkNorm::kAllHeads, store, m, nullptr);
  const attn::Tensor x = testutil::random_tensor({2, 48, kE}, 61, 1.0f);
  const attn::Tensor g = testutil::random_tensor({2, 48, kE}, 62, 1.0f);
  testutil::require_same_at_every_count("frozen MHA backward", [&] {
    const attn::MhaGrads grads = input_grads(m, x, options(1.5f), g, false);
    std::vector<float> all = grads.query.data;
    all.insert(all.end(), grads.context.data.begin(), grads.context.data.end());
    all.insert(all.end(), grads.attention.data.begin(), grads.attention.data.end());
    return all;
  });
}
