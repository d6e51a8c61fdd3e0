// PretrainedModel (pretrained.h): what layers may hold of their own — per-layer head sizes, key/value
// heads and MLP widths, keys and values shared with an earlier layer, per-layer inputs
// (per_layer_input.h) and an output scale per layer (Gemma 4) — checked, loaded and prepared.
#include <cmath>
#include <string>

#include "core/memory_limit.h"
#include "model/pretrained.h"

namespace attn {

namespace {

Status invalid(const std::string& what) {
  return Status::Error(StatusCode::kInvalidArgument, what);
}

Status check_per_layer_list(const std::vector<int>& values, int layers, const char* what, int lo, int hi) {
  if (values.empty()) return Status::Ok();
  if (values.size() != static_cast<std::size_t>(layers))
    return invalid(std::string("config: one ") + what + " per layer is needed, got " +
                   std::to_string(values.size()));
  for (int v : values)
    if (v < lo || v > hi)
      return invalid(std::string("config: a layer's ") + what + " must be in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "], got " + std::to_string(v));
  return Status::Ok();
}

}  // namespace

Status check_layer_variants(const PretrainedConfig& c) {
  constexpr int kMax = 1 << 20;
  ATTN_RETURN_IF_ERROR(check_per_layer_list(c.layer_head_dim, c.layers, "head size", 2, kMax));
  ATTN_RETURN_IF_ERROR(check_per_layer_list(c.layer_kv_heads, c.layers, "key/value head count", 1, c.heads));
  ATTN_RETURN_IF_ERROR(check_per_layer_list(c.layer_intermediate, c.layers, "MLP width", 1, kMax));
  ATTN_RETURN_IF_ERROR(check_per_layer_list(c.layer_kv_from, c.layers, "key/value source", -1, c.layers));
  if (c.per_layer_width < 0 || c.per_layer_width > kMax)
    return invalid("config: the per-layer input width must be in [0, " + std::to_string(kMax) + "]");
  const bool variants = !c.layer_head_dim.empty() || !c.layer_kv_heads.empty() ||
                        !c.layer_intermediate.empty() || !c.layer_kv_from.empty() || c.v_norm ||
                        c.per_layer_width > 0 || c.layer_scale;
  if (variants && c.arch == PretrainedArch::kGpt2)
    return invalid("config: GPT-2 has none of the Llama-family variants");
  for (int l = 0; l < c.layers; ++l) {
    const int d = layer_head_dim(c, l), kv = layer_kv_heads(c, l), from = layer_kv_source(c, l);
    if (d % 2 != 0) return invalid("config: layer " + std::to_string(l) + "'s head size must be even");
    if (c.heads % kv != 0)
      return Status::Error(StatusCode::kHeadsDoNotDivide, "layer " + std::to_string(l) + "'s " +
                                                              std::to_string(kv) +
                                                              " key/value heads do not divide the heads");
    if (c.rotary_dims > d) return invalid("config: the rotated features exceed a layer's head size");
    if (from == l) continue;
    // A layer reads an earlier layer's keys and values, which keeps its own: same sizes, same window.
    const bool same_window =
        c.layer_window.empty() || c.layer_window[static_cast<std::size_t>(from)] == c.layer_window[l];
    if (from > l || layer_kv_source(c, from) != from || layer_head_dim(c, from) != d ||
        layer_kv_heads(c, from) != kv || !same_window || (!c.layer_mixer.empty() && c.layer_mixer[from] != 0))
      return invalid(
          "config: layer " + std::to_string(l) + " cannot share layer " + std::to_string(from) +
          "'s keys and values (an earlier attention layer with its own, of the same sizes and window)");
  }
  return Status::Ok();
}

std::uint64_t per_layer_input_values(const PretrainedConfig& c) {
  if (c.per_layer_width <= 0) return 0;
  const std::uint64_t lp = static_cast<std::uint64_t>(c.layers) * c.per_layer_width;
  return lp * (c.vocab_size + c.hidden) + c.per_layer_width + lp * 2 * c.hidden + c.layers * (c.hidden + 1);
}

bool PretrainedModel::is_per_layer_role(TensorRole r) {
  return r == TensorRole::kPerLayerEmbed || r == TensorRole::kPerLayerModelProj ||
         r == TensorRole::kPerLayerProjNorm || r == TensorRole::kPerLayerGate ||
         r == TensorRole::kPerLayerProj || r == TensorRole::kPerLayerPostNorm || r == TensorRole::kLayerScale;
}

const Tensor* PretrainedModel::per_layer_slot(const TensorKey& key) const {
  if (key.role == TensorRole::kPerLayerProjNorm) return &per_layer_.proj_norm.weight;
  if (key.layer < 0 || key.layer >= static_cast<int>(layers_.size())) return nullptr;
  if (key.role == TensorRole::kLayerScale) return &layers_[static_cast<std::size_t>(key.layer)].output_scale;
  if (key.role == TensorRole::kPerLayerPostNorm && per_layer_.present())
    return &per_layer_.layers[static_cast<std::size_t>(key.layer)].post_norm.weight;
  return nullptr;
}

// A vector into its float32 slot (Gemma's (1 + w) as use() folds it into every norm weight); a
// matrix as a view of the stored weight.
Status PretrainedModel::use_per_layer(const TensorKey& key, const StoredWeight& stored) {
  if (stored.shape().size() == 1) {
    Tensor v = stored.widened();
    if (config_.norm_weight_offset != 0 && key.role != TensorRole::kLayerScale)
      for (float& w : v.data) w += config_.norm_weight_offset;
    Tensor* slot = const_cast<Tensor*>(per_layer_slot(key));  // ours to change here
    if (!slot) return invalid("this model has no tensor " + key.label());
    *slot = std::move(v);
    stored_.erase(key);
    return Status::Ok();
  }
  WeightView w = stored.view();
  w.int8_activations = int8_activations_ && is_quantized(w.format);
  if (key.role == TensorRole::kPerLayerEmbed) per_layer_.table = LookupTable(w);
  if (key.role == TensorRole::kPerLayerModelProj) per_layer_.model_proj = w;
  if (key.layer >= 0 && key.role == TensorRole::kPerLayerGate) per_layer_.layers[key.layer].gate = w;
  if (key.layer >= 0 && key.role == TensorRole::kPerLayerProj) per_layer_.layers[key.layer].proj = w;
  return Status::Ok();
}

// The stored matrices and the float32 vectors, the per-layer ones included.
std::uint64_t PretrainedModel::weight_bytes() const {
  std::uint64_t bytes = 0;
  for (const auto& [key, w] : stored_) bytes += w.byte_size();
  for (const auto& [key, p] : pending_) bytes += p.weight.byte_size();
  const auto norm_floats = [](const NormBlock& n) { return n.weight.data.size() + n.bias.data.size(); };
  std::uint64_t vector_floats = norm_floats(final_norm_);
  for (const Layer& L : layers_)
    vector_floats += norm_floats(L.attn_norm) + norm_floats(L.mlp_norm) + norm_floats(L.post_attn_norm) +
                     norm_floats(L.post_mlp_norm) + L.mlp.up_b.data.size() + L.mlp.down_b.data.size();
  vector_floats += per_layer_.proj_norm.weight.data.size();
  for (const PerLayerInput::Layer& L : per_layer_.layers) vector_floats += L.post_norm.weight.data.size();
  for (const Layer& L : layers_) vector_floats += L.output_scale.data.size();
  return bytes + 4 * vector_floats;
}

// forward's step 1: the embeddings (or the stream a forward starts from, startAt); the per-layer
// inputs from the ids' scaled embeddings (computed here, without hooks, when it starts from a
// stream); without caches, a KvCache for this call's T rows of each layer whose keys and values
// later layers attend over (freed with the workspace).
Status PretrainedModel::begin_stream(const Pass& p, const std::vector<std::int32_t>& ids,
                                     const PretrainedForwardOptions& o, bool cached) {
  std::vector<float>& x = work_.x;
  if (p.from_residual)
    x = *o.hooks->start_stream();
  else
    embed(p, ids, o.hooks, x, work_.position);
  if (per_layer_.present()) {
    const float* scaled = x.data();
    if (p.from_residual) {
      embed(p, ids, nullptr, work_.out, work_.position);
      scaled = work_.out.data();
    }
    per_layer_.inputs(p.n, ids.data(), scaled, work_.per_layer, work_.per_layer_proj);
  }
  if (cached) return Status::Ok();
  work_.shared_kv.resize(layers_.size());
  for (std::size_t l = 0; l < layers_.size(); ++l)
    if (layers_[l].kv_kept)
      ATTN_RETURN_IF_ERROR(layers_[l].mixer.attn.create_cache(p.t, p.b, work_.shared_kv[l]));
  return Status::Ok();
}

}  // namespace attn
