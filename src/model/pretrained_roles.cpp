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
                                      "conv_in_proj",
                                      "conv_weight",
                                      "conv_out_proj",
                                      "linear_qkv",
                                      "linear_z",
                                      "linear_b",
                                      "linear_a",
                                      "linear_conv",
                                      "linear_decay",
                                      "linear_dt_bias",
                                      "linear_norm",
                                      "linear_out",
                                      "q_gate",
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
      if (i == 0 && c.attn_output_gate)  // q_proj holds the gate's rows too
        out.push_back({TensorRole::kQGate, {2 * qk, e}});
      else
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

// A short-convolution layer (LFM2): the Llama block's norms and MLP, the convolution's in_proj,
// kernel and out_proj instead of the attention's tensors.
Block short_conv_block(const PretrainedConfig& c) {
  const int e = c.hidden;
  Block out;
  for (const auto& entry : llama_block(c, -1)) {
    const TensorRole r = entry.first;
    const bool attention = r == TensorRole::kQ || r == TensorRole::kK || r == TensorRole::kV ||
                           r == TensorRole::kQkv || r == TensorRole::kQBias || r == TensorRole::kKBias ||
                           r == TensorRole::kVBias || r == TensorRole::kQNorm || r == TensorRole::kKNorm ||
                           r == TensorRole::kO;
    if (!attention) out.push_back(entry);
  }
  out.push_back({TensorRole::kConvInProj, {3 * e, e}});
  out.push_back({TensorRole::kConvWeight, {e, c.conv_kernel}});
  out.push_back({TensorRole::kConvOutProj, {e, e}});
  return out;
}

// A DeltaNet layer's block (delta_net.h): the Llama layout's norms and MLP around the mixer's tensors.
Block delta_block(const PretrainedConfig& c) {
  const int e = c.hidden, hv = c.linear_v_heads, vd = hv * c.linear_v_dim;
  const int ch = 2 * c.linear_k_heads * c.linear_k_dim + vd;
  Block out;
  for (const auto& role_shape : llama_block(c, -1)) {
    const TensorRole r = role_shape.first;
    const bool mixer = r == TensorRole::kQ || r == TensorRole::kK || r == TensorRole::kV ||
                       r == TensorRole::kQkv || r == TensorRole::kQBias || r == TensorRole::kKBias ||
                       r == TensorRole::kVBias || r == TensorRole::kQNorm || r == TensorRole::kKNorm ||
                       r == TensorRole::kO || r == TensorRole::kQGate;
    if (!mixer) out.push_back(role_shape);
  }
  const Block linear = {{TensorRole::kLinearQkv, {ch, e}},
                        {TensorRole::kLinearZ, {vd, e}},
                        {TensorRole::kLinearB, {hv, e}},
                        {TensorRole::kLinearA, {hv, e}},
                        {TensorRole::kLinearConv, {ch, c.linear_conv_kernel}},
                        {TensorRole::kLinearDecay, {hv}},
                        {TensorRole::kLinearDtBias, {hv}},
                        {TensorRole::kLinearNorm, {c.linear_v_dim}},
                        {TensorRole::kLinearOut, {e, vd}}};
  out.insert(out.end(), linear.begin(), linear.end());
  return out;
}

// A per-layer value, or the global one (no per-layer list, or l = -1: a block shared by layers).
int per_layer_or(const std::vector<int>& values, int l, int global) {
  return values.empty() || l < 0 ? global : values[static_cast<std::size_t>(l)];
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
  const Block conv = short_conv_block(c);
  const Block delta = c.linear_v_heads > 0 ? delta_block(c) : Block();
  for (int l = 0; l < c.layers; ++l) {
    const int kind = c.layer_mixer.empty() ? 0 : c.layer_mixer[l];
    const Block& chosen = kind == static_cast<int>(MixerKind::kShortConv)  ? conv
                          : kind == static_cast<int>(MixerKind::kDeltaNet) ? delta
                          : gpt2                                           ? gpt2_block(c)
                                                                           : llama_block(c, l);
    for (const auto& [role, shape] : chosen) out.push_back({{role, l}, shape});
  }
  out.push_back({{TensorRole::kFinalNorm, -1}, {c.hidden}});
  if (gpt2) out.push_back({{TensorRole::kFinalNormBias, -1}, {c.hidden}});
  if (!c.tie_embeddings) out.push_back({{TensorRole::kUnembed, -1}, {c.vocab_size, c.hidden}});
  return out;
}

}  // namespace attn
