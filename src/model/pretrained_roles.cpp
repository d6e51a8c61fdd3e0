// PretrainedModel's tensors by role (pretrained.h): the registry's spelling of each role and the
// tensors a config needs, with the shapes the model keeps them in ((out, in) as nn.Linear). Which
// file name holds a role is the family registry's (src/js/architectures/), never the core's.
#include <string>

#include "model/pretrained.h"

namespace attn {

namespace {

// Indexed by TensorRole.
constexpr const char* kRoleNames[] = {"embed",
                                      "positions",
                                      "final_norm",
                                      "final_norm_bias",
                                      "unembed",
                                      "attn_norm",
                                      "attn_norm_bias",
                                      "mlp_norm",
                                      "mlp_norm_bias",
                                      "post_attn_norm",
                                      "post_mlp_norm",
                                      "q",
                                      "k",
                                      "v",
                                      "qkv",
                                      "q_bias",
                                      "k_bias",
                                      "v_bias",
                                      "qkv_bias",
                                      "o",
                                      "o_bias",
                                      "q_norm",
                                      "k_norm",
                                      "gate",
                                      "up",
                                      "gate_up",
                                      "down",
                                      "up_bias",
                                      "down_bias",
                                      "per_layer_embed",
                                      "per_layer_model_proj",
                                      "per_layer_proj_norm",
                                      "per_layer_gate",
                                      "per_layer_proj",
                                      "per_layer_post_norm",
                                      "layer_scale"};
static_assert(sizeof(kRoleNames) / sizeof(kRoleNames[0]) == static_cast<std::size_t>(TensorRole::kCount),
              "one name per TensorRole");

using Block = std::vector<std::pair<TensorRole, Shape>>;

// GPT-2's block: LayerNorms with biases, the fused [q; k; v] with its bias, an MLP up → GELU → down.
Block gpt2_block(const PretrainedConfig& c) {
  const int e = c.hidden, in = c.intermediate;
  return {{TensorRole::kAttnNorm, {e}},    {TensorRole::kAttnNormBias, {e}}, {TensorRole::kMlpNorm, {e}},
          {TensorRole::kMlpNormBias, {e}}, {TensorRole::kQkv, {3 * e, e}},   {TensorRole::kQkvBias, {3 * e}},
          {TensorRole::kO, {e, e}},        {TensorRole::kOBias, {e}},        {TensorRole::kUp, {in, e}},
          {TensorRole::kUpBias, {in}},     {TensorRole::kDown, {e, in}},     {TensorRole::kDownBias, {e}}};
}

// Layer l's block in the Llama layout with the config's variants: pre- and/or post-norms, fused
// projections, q/k/v biases, q/k norms per head or over all heads; Gemma 4's per-layer sizes, no k/v
// of a layer that shares another's, its per-layer input branch and output scale.
Block llama_block(const PretrainedConfig& c, int l) {
  const int d = layer_head_dim(c, l), e = c.hidden, qk = c.heads * d, kv = layer_kv_heads(c, l) * d,
            in = layer_intermediate(c, l);
  const bool own_kv = layer_kv_source(c, l) == l;
  Block out;
  if (c.pre_norms) out.push_back({TensorRole::kAttnNorm, {e}});
  if (c.post_norms) out.push_back({TensorRole::kPostAttnNorm, {e}});
  if (c.pre_norms) out.push_back({TensorRole::kMlpNorm, {e}});
  if (c.post_norms) out.push_back({TensorRole::kPostMlpNorm, {e}});
  if (c.fused_projections) {
    out.push_back({TensorRole::kQkv, {qk + 2 * kv, e}});
  } else {
    const TensorRole weights[] = {TensorRole::kQ, TensorRole::kK, TensorRole::kV};
    const TensorRole biases[] = {TensorRole::kQBias, TensorRole::kKBias, TensorRole::kVBias};
    for (int i = 0; i < 3; ++i) {
      if (i > 0 && !own_kv) continue;
      const int rows = i == 0 ? qk : kv;
      out.push_back({weights[i], {rows, e}});
      if (c.qkv_bias) out.push_back({biases[i], {rows}});
    }
  }
  if (c.qk_norm != MhaConfig::QkNorm::kNone) {
    const bool per_head = c.qk_norm == MhaConfig::QkNorm::kPerHead;
    out.push_back({TensorRole::kQNorm, {per_head ? d : qk}});
    if (own_kv) out.push_back({TensorRole::kKNorm, {per_head ? d : kv}});
  }
  out.push_back({TensorRole::kO, {e, qk}});
  if (c.fused_projections) {
    out.push_back({TensorRole::kGateUp, {2 * in, e}});
  } else {
    out.push_back({TensorRole::kGate, {in, e}});
    out.push_back({TensorRole::kUp, {in, e}});
  }
  out.push_back({TensorRole::kDown, {e, in}});
  if (c.per_layer_width > 0) {
    out.push_back({TensorRole::kPerLayerGate, {c.per_layer_width, e}});
    out.push_back({TensorRole::kPerLayerProj, {e, c.per_layer_width}});
    out.push_back({TensorRole::kPerLayerPostNorm, {e}});
  }
  if (c.layer_scale) out.push_back({TensorRole::kLayerScale, {1}});
  return out;
}

int per_layer_or(const std::vector<int>& values, int l, int global) {
  return values.empty() ? global : values[static_cast<std::size_t>(l)];
}

}  // namespace

int layer_head_dim(const PretrainedConfig& c, int l) {
  return per_layer_or(c.layer_head_dim, l, c.head_dim);
}
int layer_kv_heads(const PretrainedConfig& c, int l) {
  return per_layer_or(c.layer_kv_heads, l, c.kv_heads);
}
int layer_intermediate(const PretrainedConfig& c, int l) {
  return per_layer_or(c.layer_intermediate, l, c.intermediate);
}
int layer_kv_source(const PretrainedConfig& c, int l) {
  const int from = per_layer_or(c.layer_kv_from, l, -1);
  return from < 0 ? l : from;
}

const char* role_name(TensorRole role) {
  const int i = static_cast<int>(role);
  return i >= 0 && i < static_cast<int>(TensorRole::kCount) ? kRoleNames[i] : "?";
}

bool role_from_name(const std::string& name, TensorRole& role) {
  for (int i = 0; i < static_cast<int>(TensorRole::kCount); ++i) {
    if (name == kRoleNames[i]) {
      role = static_cast<TensorRole>(i);
      return true;
    }
  }
  return false;
}

std::string TensorKey::label() const {
  return layer < 0 ? role_name(role) : "layer " + std::to_string(layer) + " " + role_name(role);
}

std::vector<TensorSpec> pretrained_tensor_specs(const PretrainedConfig& c) {
  const bool gpt2 = c.arch == PretrainedArch::kGpt2;
  std::vector<TensorSpec> out;
  out.push_back({{TensorRole::kEmbed, -1}, {c.vocab_size, c.hidden}});
  if (gpt2) out.push_back({{TensorRole::kPositions, -1}, {c.max_positions, c.hidden}});
  if (c.per_layer_width > 0) {
    const int lp = c.layers * c.per_layer_width;
    out.push_back({{TensorRole::kPerLayerEmbed, -1}, {c.vocab_size, lp}});
    out.push_back({{TensorRole::kPerLayerModelProj, -1}, {lp, c.hidden}});
    out.push_back({{TensorRole::kPerLayerProjNorm, -1}, {c.per_layer_width}});
  }
  for (int l = 0; l < c.layers; ++l)
    for (const auto& [role, shape] : gpt2 ? gpt2_block(c) : llama_block(c, l))
      out.push_back({{role, l}, shape});
  out.push_back({{TensorRole::kFinalNorm, -1}, {c.hidden}});
  if (gpt2) out.push_back({{TensorRole::kFinalNormBias, -1}, {c.hidden}});
  if (!c.tie_embeddings) out.push_back({{TensorRole::kUnembed, -1}, {c.vocab_size, c.hidden}});
  return out;
}

}  // namespace attn
