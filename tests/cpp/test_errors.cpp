// Every error path returns its status and a message naming the problem; nothing crashes, and the
// objects stay usable afterwards.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "core/attention.h"
#include "core/memory_limit.h"
#include "core/multi_head.h"
#include "core/positional.h"
#include "core/softmax.h"
#include "test_helpers.h"

using attn::StatusCode;

namespace {

void require_error(const attn::Status& st, StatusCode code, const std::string& fragment) {
  INFO("message: " << st.message);
  REQUIRE(st.code == code);
  CHECK(st.message.find(fragment) != std::string::npos);
}

attn::MultiHeadAttention small_mha() {
  attn::MhaConfig config;
  config.embed_dim = 8;
  config.num_heads = 2;
  attn::MultiHeadAttention m;
  REQUIRE(attn::MultiHeadAttention::create(config, m).ok());
  return m;
}

}  // namespace

TEST_CASE("numHeads that does not divide embedDim is a named error", "[errors]") {
  attn::MhaConfig config;
  config.embed_dim = 64;
  config.num_heads = 3;
  attn::MultiHeadAttention m;
  require_error(attn::MultiHeadAttention::create(config, m), StatusCode::kHeadsDoNotDivide,
                "numHeads 3 does not divide embedDim 64");
  config.head_dim = 10;  // explicit head size: allowed
  CHECK(attn::MultiHeadAttention::create(config, m).ok());
  config.embed_dim = 0;
  require_error(attn::MultiHeadAttention::create(config, m), StatusCode::kInvalidArgument, "embedDim");
  config.embed_dim = 4;
  config.num_heads = 0;
  require_error(attn::MultiHeadAttention::create(config, m), StatusCode::kInvalidArgument, "numHeads");
}

TEST_CASE("wrong shapes are named errors", "[errors]") {
  const attn::MultiHeadAttention m = small_mha();
  attn::MhaResult r;
  require_error(m.forward(testutil::random_tensor({1, 3, 7}, 1), nullptr, nullptr, {}, r),
                StatusCode::kShapeMismatch, "query must have shape");
  require_error(m.forward(testutil::random_tensor({1, 2, 3, 8}, 1), nullptr, nullptr, {}, r),
                StatusCode::kShapeMismatch, "query must have shape (B, T, 8) or (T, 8), got (1, 2, 3, 8)");
  const attn::Tensor q = testutil::random_tensor({2, 3, 8}, 1);
  const attn::Tensor k = testutil::random_tensor({1, 4, 8}, 2);
  require_error(m.forward(q, &k, nullptr, {}, r), StatusCode::kShapeMismatch, "key must have shape (B=2");
  attn::SdpaResult s;
  require_error(attn::scaled_dot_product_attention(testutil::random_tensor({3, 4}, 1),
                                                   testutil::random_tensor({5, 3}, 2),
                                                   testutil::random_tensor({5, 2}, 3), {}, s),
                StatusCode::kShapeMismatch, "d_k");
  require_error(attn::scaled_dot_product_attention(testutil::random_tensor({3, 4}, 1),
                                                   testutil::random_tensor({5, 4}, 2),
                                                   testutil::random_tensor({6, 2}, 3), {}, s),
                StatusCode::kShapeMismatch, "T_k");
  attn::Tensor bad({2, 3}, {1, 2, 3});  // 3 values for 6
  attn::Tensor y;
  require_error(attn::softmax(bad, y), StatusCode::kShapeMismatch, "needs 6");
  // Still usable afterwards.
  CHECK(m.forward(q, nullptr, nullptr, {}, r).ok());
}

TEST_CASE("empty sequences are named errors", "[errors]") {
  const attn::MultiHeadAttention m = small_mha();
  attn::MhaResult r;
  require_error(m.forward(attn::Tensor({1, 0, 8}, {}), nullptr, nullptr, {}, r), StatusCode::kEmptyInput,
                "empty");
  attn::Tensor pe, y;
  require_error(attn::sinusoidal_encoding(0, 8, 10000, pe), StatusCode::kEmptyInput, "length");
  require_error(attn::softmax(attn::Tensor({0}, {}), y), StatusCode::kEmptyInput, "empty");
}

TEST_CASE("NaN and Inf inputs are rejected, -inf is allowed only in additive masks", "[errors]") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const attn::MultiHeadAttention m = small_mha();
  attn::Tensor q = testutil::random_tensor({1, 2, 8}, 1);
  q.data[5] = nan;
  attn::MhaResult r;
  require_error(m.forward(q, nullptr, nullptr, {}, r), StatusCode::kNonFinite,
                "query contains NaN at flat index 5");
  q.data[5] = inf;
  require_error(m.forward(q, nullptr, nullptr, {}, r), StatusCode::kNonFinite, "Inf");
  q.data[5] = 0.5f;
  attn::Tensor additive({2, 2}, {0, -inf, nan, 0});
  attn::MhaForwardOptions options;
  options.additive_mask = &additive;
  require_error(m.forward(q, nullptr, nullptr, options, r), StatusCode::kNonFinite,
                "additiveMask contains NaN");
  additive.data[2] = 0;
  CHECK(m.forward(q, nullptr, nullptr, options, r).ok());
  attn::MultiHeadAttention w = small_mha();
  attn::Tensor weight = testutil::random_tensor({8, 8}, 3);
  weight.data[0] = inf;
  require_error(w.set_parameter("out_proj.weight", weight), StatusCode::kNonFinite, "out_proj.weight");
}

TEST_CASE("sizes over the memory limit are TOO_LARGE, not an abort", "[errors]") {
  const std::uint64_t saved = attn::memory_limit_bytes();
  attn::set_memory_limit_bytes(1 << 20);  // 1 MiB
  const attn::MultiHeadAttention m = small_mha();
  attn::MhaResult r;
  require_error(m.forward(testutil::random_tensor({1, 600, 8}, 1), nullptr, nullptr, {}, r),
                StatusCode::kTooLarge, "over the memory limit");
  attn::Tensor pe;
  require_error(attn::sinusoidal_encoding(1 << 20, 512, 10000, pe), StatusCode::kTooLarge, "MiB");
  attn::set_memory_limit_bytes(saved);
  CHECK(m.forward(testutil::random_tensor({1, 600, 8}, 1), nullptr, nullptr, {}, r).ok());
  // A length whose T² scores could never fit: T = 60000 with weights at the default limit.
  attn::SdpaResult s;
  const attn::Tensor big = testutil::random_tensor({60000, 1}, 1);
  require_error(attn::scaled_dot_product_attention(big, big, big, {}, s), StatusCode::kTooLarge, "attention");
}

TEST_CASE("invalid options and masks are named errors", "[errors]") {
  const attn::Tensor q = testutil::random_tensor({3, 4}, 1);
  attn::SdpaResult s;
  attn::SdpaOptions options;
  options.dropout.p = 1.0f;
  require_error(attn::scaled_dot_product_attention(q, q, q, options, s), StatusCode::kInvalidArgument,
                "dropout p");
  options = {};
  options.scale = -1.0f;
  require_error(attn::scaled_dot_product_attention(q, q, q, options, s), StatusCode::kInvalidArgument,
                "scale");
  options = {};
  attn::BoolTensor mask{{2, 3}, std::vector<std::uint8_t>(6, 1)};
  options.mask = &mask;
  require_error(attn::scaled_dot_product_attention(q, q, q, options, s), StatusCode::kInvalidMask,
                "mask of shape (2, 3) does not broadcast");
  const attn::MultiHeadAttention m = small_mha();
  attn::MhaForwardOptions mo;
  attn::BoolTensor padding{{1, 2}, {1, 1}};
  mo.key_padding_mask = &padding;
  attn::MhaResult r;
  require_error(m.forward(testutil::random_tensor({1, 3, 8}, 2), nullptr, nullptr, mo, r),
                StatusCode::kInvalidMask, "keyPaddingMask");
  attn::Tensor y;
  attn::LayerNormOptions ln;
  ln.eps = 0.0f;
  require_error(attn::layer_norm(q, ln, y), StatusCode::kInvalidArgument, "eps");
}

TEST_CASE("unknown and unavailable parameters are named errors", "[errors]") {
  attn::MhaConfig config;
  config.embed_dim = 4;
  config.kdim = 3;
  config.bias = false;
  attn::MultiHeadAttention m;
  REQUIRE(attn::MultiHeadAttention::create(config, m).ok());
  require_error(m.set_parameter("weight", testutil::random_tensor({4, 4}, 1)), StatusCode::kUnknownParameter,
                "'weight'");
  require_error(m.set_parameter("in_proj_bias", testutil::random_tensor({12}, 1)),
                StatusCode::kUnknownParameter, "in_proj_bias");
  require_error(m.set_parameter("in_proj_weight", testutil::random_tensor({12, 4}, 1)),
                StatusCode::kShapeMismatch, "kdim == vdim == embedDim");
  require_error(m.set_parameter("k_proj_weight", testutil::random_tensor({4, 4}, 1)),
                StatusCode::kShapeMismatch, "(4, 3)");
}
