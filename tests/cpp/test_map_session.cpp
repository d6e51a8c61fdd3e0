// MapSession (src/model/map_session.h) natively on every pretrained fixture: a chunked prefill's
// tiles, top-k and overview against the (H, T, T) weights of the model's own forward without caches
// (every softmax-attention layer; windows, soft-caps, GQA, shared keys as each family has them); the
// float16 conversion against every half value; refusals and a failed step that leaves the session
// as it was.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "model/map_session.h"
#include "model/pretrained.h"
#include "pretrained_fixture.h"

namespace {

namespace fx = pretrained_fixture;

// q and k are kept in float16 (2^-11 relative): a weight moves by about w·|s|·2^-10; the fixtures'
// scores stay below ~8.
constexpr double kMapAbs = 5e-3;

std::vector<std::int32_t> ids_of(int t, int vocab) {
  std::vector<std::int32_t> ids(static_cast<std::size_t>(t));
  for (int i = 0; i < t; ++i) ids[static_cast<std::size_t>(i)] = (i * 37 + 11) % vocab;
  return ids;
}

std::vector<int> attention_layers(const attn::PretrainedModel& model) {
  std::vector<int> out;
  for (int l = 0; l < model.config().layers; ++l)
    if (model.map_layout(l).mixer == 0) out.push_back(l);
  return out;
}

// A complete session over ids, in chunks of `chunk` rows.
void prefill(attn::PretrainedModel& model, const std::vector<int>& layers,
             const std::vector<std::int32_t>& ids, int chunk, attn::MapSession& s) {
  REQUIRE(attn::MapSession::begin(model, layers, static_cast<int>(ids.size()), s).ok());
  for (std::size_t at = 0; at < ids.size(); at += static_cast<std::size_t>(chunk)) {
    const std::vector<std::int32_t> part(
        ids.begin() + static_cast<std::ptrdiff_t>(at),
        ids.begin() + static_cast<std::ptrdiff_t>(std::min(ids.size(), at + chunk)));
    const attn::Status st = s.step(model, part);
    INFO(st.message);
    REQUIRE(st.ok());
  }
  REQUIRE(s.complete());
}

}  // namespace

TEST_CASE("map session: tiles, top-k and the overview equal every fixture's forward weights",
          "[maps][pretrained]") {
  for (const std::string& f : fx::list_fixtures()) {
    INFO(f);
    attn::PretrainedModel model;
    fx::load_model(f, "model.safetensors", model);
    const std::vector<int> layers = attention_layers(model);
    const int t = std::min(24, model.config().max_positions);
    const std::vector<std::int32_t> ids = ids_of(t, model.config().vocab_size);
    attn::ForwardOptions o;
    o.attention_layers = layers;
    attn::ForwardResult exact;
    REQUIRE(model.forward(1, t, ids, o, exact).ok());
    attn::MapSession s;
    prefill(model, layers, ids, 5, s);
    for (int l : layers) {
      const attn::Tensor& w = exact.attention[static_cast<std::size_t>(l)];  // (1, H, T, T)
      const int heads = static_cast<int>(w.shape[1]);
      for (int h = 0; h < heads; ++h) {
        INFO("layer " << l << " head " << h);
        std::vector<float> tile, cells;
        REQUIRE(s.tile(l, h, 0, t, 0, t, tile).ok());
        int n = 0;
        REQUIRE(s.overview(l, h, true, cells, n).ok());
        REQUIRE(n == t);  // T ≤ 512: one cell per weight, max and mean both the weight itself
        for (std::size_t i = 0; i < tile.size(); ++i) {
          const float want = w.data[static_cast<std::size_t>(h) * t * t + i];
          if (want == 0.0f) REQUIRE(tile[i] == 0.0f);  // masked: exactly 0
          REQUIRE(std::abs(tile[i] - want) <= kMapAbs);
          REQUIRE(cells[i] == tile[i]);
        }
        std::vector<int> index;
        std::vector<float> weight;
        REQUIRE(s.top_k(l, h, t - 1, 3, index, weight).ok());
        for (int i = 0; i < 3; ++i)  // a one-row block: the GEMM may sum in another order
          REQUIRE(std::abs(weight[i] - tile[static_cast<std::size_t>((t - 1) * t + index[i])]) <= 1e-6);
        REQUIRE((weight[0] >= weight[1] && weight[1] >= weight[2]));
      }
    }
  }
}

TEST_CASE("map session: refusals, and a failed step leaves the session as it was", "[maps]") {
  attn::PretrainedModel model;
  fx::load_model("llama-tiny", "model.safetensors", model);
  attn::MapSession s;
  REQUIRE(attn::MapSession::begin(model, {2}, 8, s).code == attn::StatusCode::kInvalidArgument);
  REQUIRE(attn::MapSession::begin(model, {0, 0}, 8, s).code == attn::StatusCode::kInvalidArgument);
  REQUIRE(attn::MapSession::begin(model, {0}, 65, s).code == attn::StatusCode::kTooLarge);
  REQUIRE(attn::MapSession::begin(model, {1}, 8, s).ok());
  std::vector<float> out;
  REQUIRE(!s.tile(1, 0, 0, 1, 0, 1, out).ok());  // not complete yet
  REQUIRE(!s.step(model, {1, 2, 999}).ok());     // an id outside the vocabulary
  REQUIRE(s.length() == 0);
  REQUIRE(s.step(model, {1, 2, 3, 4, 5}).ok());
  REQUIRE(!s.step(model, {1, 2, 3, 4}).ok());  // past the total
  REQUIRE(s.step(model, {6, 7, 8}).ok());
  REQUIRE(s.complete());
  REQUIRE(s.logits().size() == static_cast<std::size_t>(model.config().vocab_size));
  REQUIRE(s.bytes() == attn::MapSession::state_bytes(model, {1}, 8));
  REQUIRE(s.tile(0, 0, 0, 1, 0, 1, out).code == attn::StatusCode::kInvalidArgument);  // layer not asked
  REQUIRE(s.tile(1, 4, 0, 1, 0, 1, out).code == attn::StatusCode::kInvalidArgument);  // head
  REQUIRE(s.tile(1, 0, 0, 9, 0, 1, out).code == attn::StatusCode::kInvalidArgument);  // rows
  std::vector<int> index;
  REQUIRE(s.top_k(1, 0, 7, 0, index, out).code == attn::StatusCode::kInvalidArgument);
  REQUIRE(s.top_k(1, 0, 8, 1, index, out).code == attn::StatusCode::kInvalidArgument);
}
