// MultiHeadAttention's frozen mode (config.frozen, used by pretrained checkpoints): projections read
// through WeightViews in any format give exactly the output, weights and cached decoding of a normal
// module holding the widened weights; training entry points and weight setters are refused.
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "core/multi_head.h"
#include "core/stored_weight.h"
#include "test_helpers.h"

namespace {

attn::MhaConfig gqa_rope_config(bool frozen) {
  attn::MhaConfig c;
  c.embed_dim = 12;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = 4;
  c.bias = true;
  c.rope = attn::RotaryOptions{};
  c.frozen = frozen;
  return c;
}

// A stored (rows, cols) matrix in `format` whose values are random, and the same values widened.
attn::StoredWeight stored_matrix(int rows, int cols, attn::WeightFormat format, std::uint64_t seed,
                                 attn::Tensor& wide) {
  attn::StoredWeight w;
  REQUIRE(attn::StoredWeight::allocate({rows, cols}, format, "test", w).ok());
  const attn::Tensor values = testutil::random_tensor({rows, cols}, seed, 0.4f);
  if (format == attn::WeightFormat::kF32) {
    std::memcpy(w.bytes(), values.data.data(), values.data.size() * 4);
  } else {
    auto* bits = static_cast<std::uint16_t*>(w.bytes());
    for (std::size_t i = 0; i < values.data.size(); ++i) {  // bfloat16 by truncation; float16 from 1 + small
      std::uint32_t b;
      std::memcpy(&b, &values.data[i], 4);
      bits[i] = format == attn::WeightFormat::kBF16
                    ? static_cast<std::uint16_t>(b >> 16)
                    : static_cast<std::uint16_t>(0x3c00 + (b & 0x3ff) - (b >> 31) * 0x800);
    }
  }
  wide = w.widened();
  return w;
}

}  // namespace

TEST_CASE("frozen MultiHeadAttention equals the normal module over the widened weights, bit for bit",
          "[mha][frozen]") {
  for (const auto format : {attn::WeightFormat::kF32, attn::WeightFormat::kF16, attn::WeightFormat::kBF16}) {
    INFO(attn::format_name(format));
    attn::MultiHeadAttention frozen, normal;
    REQUIRE(attn::MultiHeadAttention::create(gqa_rope_config(true), frozen).ok());
    REQUIRE(attn::MultiHeadAttention::create(gqa_rope_config(false), normal).ok());
    const char* names[] = {"q_proj_weight", "k_proj_weight", "v_proj_weight", "out_proj.weight"};
    const int shapes[][2] = {{16, 12}, {8, 12}, {8, 12}, {12, 16}};
    std::vector<attn::StoredWeight> store;
    store.reserve(4);
    attn::MhaResult r;
    const attn::Tensor x = testutil::random_tensor({2, 5, 12}, 7);
    attn::MhaForwardOptions o;
    o.causal = true;
    for (int i = 0; i < 4; ++i) {
      REQUIRE(frozen.forward(x, nullptr, nullptr, o, r).code ==
              attn::StatusCode::kInvalidArgument);  // not all set
      attn::Tensor wide;
      store.push_back(stored_matrix(shapes[i][0], shapes[i][1], format, 40 + i, wide));
      REQUIRE(frozen.set_weight_view(names[i], store.back().view()).ok());
      REQUIRE(normal.set_parameter(names[i], wide).ok());
    }
    const attn::Tensor bias = testutil::random_tensor({32}, 3, 0.2f);
    REQUIRE(frozen.set_parameter("in_proj_bias", bias).ok());
    REQUIRE(normal.set_parameter("in_proj_bias", bias).ok());
    attn::MhaResult a, b;
    REQUIRE(frozen.forward(x, nullptr, nullptr, o, a).ok());
    REQUIRE(normal.forward(x, nullptr, nullptr, o, b).ok());
    REQUIRE(std::memcmp(a.output.data.data(), b.output.data.data(), a.output.data.size() * 4) == 0);
    REQUIRE(std::memcmp(a.weights.data.data(), b.weights.data.data(), a.weights.data.size() * 4) == 0);
    // Decoding through a cache reads the views too.
    attn::KvCache cache;
    REQUIRE(frozen.create_cache(5, 2, cache).ok());
    REQUIRE(frozen.forward_cached(x, cache, o, a).ok());
    testutil::require_close(a.output.data, b.output.data, 1e-6, "cached frozen forward");
    // get_parameter widens; the weights cannot be set as tensors, and backward gives no weight gradients.
    attn::Tensor got, want;
    REQUIRE(frozen.get_parameter("k_proj_weight", got).ok());
    REQUIRE(normal.get_parameter("k_proj_weight", want).ok());
    REQUIRE(got.data == want.data);
    REQUIRE(frozen.set_parameter("k_proj_weight", want).code == attn::StatusCode::kInvalidArgument);
    attn::MhaSaved saved;
    REQUIRE(frozen.forward_saving(x, nullptr, nullptr, o, a, saved).ok());
    attn::MhaGrads grads;
    const attn::Tensor ones(a.output.shape, std::vector<float>(a.output.data.size(), 1.0f));
    REQUIRE(frozen.backward(saved, ones, grads).code == attn::StatusCode::kInvalidArgument);
    REQUIRE(frozen.set_weight_view("k_proj_weight", store[0].view()).code ==
            attn::StatusCode::kShapeMismatch);
    REQUIRE(normal.set_weight_view("k_proj_weight", store[1].view()).code ==
            attn::StatusCode::kInvalidArgument);
    // A view change makes a filled cache stale, as a weight change does.
    REQUIRE(frozen.set_weight_view("k_proj_weight", store[1].view()).ok());
    REQUIRE(frozen.forward_cached(x, cache, o, a).code == attn::StatusCode::kInvalidArgument);
  }
}
