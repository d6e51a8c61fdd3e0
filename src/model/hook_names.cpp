// The hook points' names and shapes (hooks.h): which a model has, and the point a name means.
#include <cstdlib>
#include <string>

#include "model/hooks.h"
#include "model/hooks_internal.h"

namespace attn {

namespace {

struct KindName {
  HookKind kind;
  const char* name;  // global: the whole name; per layer: after "blocks.{l}."
  bool per_layer;
};

// In the order a forward passes them (hook_list's order within a layer).
constexpr KindName kKinds[] = {
    {HookKind::kEmbed, "hook_embed", false},
    {HookKind::kPosEmbed, "hook_pos_embed", false},
    {HookKind::kResidPre, "hook_resid_pre", true},
    {HookKind::kQ, "attn.hook_q", true},
    {HookKind::kK, "attn.hook_k", true},
    {HookKind::kV, "attn.hook_v", true},
    {HookKind::kRotQ, "attn.hook_rot_q", true},
    {HookKind::kRotK, "attn.hook_rot_k", true},
    {HookKind::kScores, "attn.hook_attn_scores", true},
    {HookKind::kPattern, "attn.hook_pattern", true},
    {HookKind::kZ, "attn.hook_z", true},
    {HookKind::kDeltaGate, "linear_attn.hook_gate", true},
    {HookKind::kDeltaQ, "linear_attn.hook_q", true},
    {HookKind::kDeltaK, "linear_attn.hook_k", true},
    {HookKind::kDeltaV, "linear_attn.hook_v", true},
    {HookKind::kDeltaBeta, "linear_attn.hook_beta", true},
    {HookKind::kDeltaG, "linear_attn.hook_g", true},
    {HookKind::kDeltaO, "linear_attn.hook_o", true},
    {HookKind::kDeltaState, "linear_attn.hook_state", true},
    {HookKind::kAttnResult, "attn.hook_out", true},
    {HookKind::kConvBcx, "conv.hook_bcx", true},
    {HookKind::kConvIn, "conv.hook_in", true},
    {HookKind::kConvOut, "conv.hook_out", true},
    {HookKind::kConvGated, "conv.hook_gated", true},
    {HookKind::kConvResult, "conv.hook_result", true},
    {HookKind::kAttnOut, "hook_attn_out", true},
    {HookKind::kResidMid, "hook_resid_mid", true},
    {HookKind::kMlpPre, "mlp.hook_pre", true},
    {HookKind::kMlpPreLinear, "mlp.hook_pre_linear", true},
    {HookKind::kMlpPost, "mlp.hook_post", true},
    {HookKind::kMlpResult, "mlp.hook_out", true},
    {HookKind::kMlpOut, "hook_mlp_out", true},
    {HookKind::kPerLayerOut, "hook_per_layer_out", true},
    {HookKind::kResidPost, "hook_resid_post", true},
    {HookKind::kFinalNormalized, "ln_final.hook_normalized", false},
};

const KindName& kind_name(HookKind kind) {
  for (const KindName& k : kKinds)
    if (k.kind == kind) return k;
  return kKinds[0];  // unreachable: every kind is listed
}

Status invalid(const std::string& what) {
  return Status::Error(StatusCode::kInvalidArgument, what);
}

}  // namespace

bool is_delta_hook(HookKind k) {
  return (static_cast<int>(k) >= static_cast<int>(HookKind::kDeltaQ) &&
          static_cast<int>(k) <= static_cast<int>(HookKind::kDeltaGate)) ||
         k == HookKind::kDeltaState;
}

bool hook_exists(const HookShapes& s, const HookId& id) {
  constexpr int kDeltaMixer = 2;  // MixerKind::kDeltaNet (blocks.h)
  if (id.layer >= 0 && (is_head_hook(id.kind) || is_delta_hook(id.kind))) {
    const HookShapes::Layer& layer = s.layers[id.layer];  // attention heads: neither mixer's layers
    if (is_delta_hook(id.kind)) return layer.mixer == kDeltaMixer;
    const bool shared = id.kind == HookKind::kK || id.kind == HookKind::kV || id.kind == HookKind::kRotK;
    // a layer sharing an earlier one's keys and values: they are that layer's hooks
    return layer.mixer != kDeltaMixer && layer.conv_channels == 0 && !(shared && layer.shared_kv);
  }
  switch (id.kind) {
    case HookKind::kPosEmbed:
      return s.pos_embed;
    case HookKind::kFinalNormalized:
      return s.final_norm;
    case HookKind::kMlpPreLinear:
      return s.layers[id.layer].mlp_width > 0 && s.layers[id.layer].gated_mlp;
    case HookKind::kResidMid:
    case HookKind::kMlpPre:
    case HookKind::kMlpPost:
    case HookKind::kMlpResult:
    case HookKind::kMlpOut:
      return s.layers[id.layer].mlp_width > 0;
    case HookKind::kConvBcx:
    case HookKind::kConvIn:
    case HookKind::kConvOut:
    case HookKind::kConvGated:
    case HookKind::kConvResult:
      return s.layers[id.layer].conv_channels > 0;
    case HookKind::kPerLayerOut:
      return s.layers[id.layer].per_layer_input;
    default:  // a short-convolution layer has no attention hooks
      return !(is_head_hook(id.kind) || id.kind == HookKind::kAttnResult) ||
             s.layers[id.layer].conv_channels == 0;
  }
}

Shape hook_position_shape(const HookShapes& s, const HookId& id) {
  const HookShapes::Layer* l = id.layer >= 0 ? &s.layers[id.layer] : nullptr;
  switch (id.kind) {
    case HookKind::kQ:
    case HookKind::kRotQ:
    case HookKind::kZ:
      return {l->heads, l->head_dim};
    case HookKind::kK:
    case HookKind::kV:
    case HookKind::kRotK:
      return {l->kv_heads, l->head_dim};
    case HookKind::kScores:
    case HookKind::kPattern:
      return {l->heads, kHookTimeAxis};  // (B, H, T, T_k): see hook_list
    case HookKind::kMlpPre:
    case HookKind::kMlpPreLinear:
    case HookKind::kMlpPost:
      return {l->mlp_width};
    case HookKind::kConvBcx:
      return {3 * l->conv_channels};
    case HookKind::kDeltaQ:
    case HookKind::kDeltaK:
      return {l->kv_heads, l->head_dim};
    case HookKind::kDeltaV:
    case HookKind::kDeltaO:
    case HookKind::kDeltaGate:
      return {l->heads, l->value_dim};
    case HookKind::kDeltaBeta:
    case HookKind::kDeltaG:
      return {l->heads};
    case HookKind::kDeltaState:  // the whole shape but B: see hook_list
      return {l->heads, l->head_dim, l->value_dim};
    default:
      return {s.width};
  }
}

bool is_score_hook(HookKind k) {
  return k == HookKind::kScores || k == HookKind::kPattern;
}

bool is_head_hook(HookKind k) {
  return static_cast<int>(k) >= static_cast<int>(HookKind::kQ) &&
         static_cast<int>(k) <= static_cast<int>(HookKind::kZ);
}

std::string hook_name(const HookId& id) {
  const KindName& k = kind_name(id.kind);
  return k.per_layer ? "blocks." + std::to_string(id.layer) + "." + k.name : k.name;
}

std::vector<HookInfo> hook_list(const HookShapes& s) {
  std::vector<HookInfo> out;
  const auto add = [&](const HookId& id) {
    if (!hook_exists(s, id)) return;
    Shape p = hook_position_shape(s, id);
    Shape shape = is_score_hook(id.kind) ? Shape{kHookBatchAxis, p[0], kHookTimeAxis, kHookTimeAxis}
                  : id.kind == HookKind::kDeltaState ? Shape{kHookBatchAxis}  // no time axis
                                                     : Shape{kHookBatchAxis, kHookTimeAxis};
    if (!is_score_hook(id.kind)) shape.insert(shape.end(), p.begin(), p.end());
    out.push_back({hook_name(id), shape});
  };
  for (const KindName& k : kKinds)
    if (!k.per_layer && k.kind != HookKind::kFinalNormalized) add({k.kind, -1});
  for (int l = 0; l < static_cast<int>(s.layers.size()); ++l)
    for (const KindName& k : kKinds)
      if (k.per_layer) add({k.kind, l});
  add({HookKind::kFinalNormalized, -1});
  return out;
}

Status parse_hook(const std::string& name, const HookShapes& s, HookId& out) {
  const std::string unknown = "unknown hook \"" + name + "\" (model.hookNames() lists this model's)";
  for (const KindName& k : kKinds) {
    if (k.per_layer || name != k.name) continue;
    out = {k.kind, -1};
    return hook_exists(s, out) ? Status::Ok() : invalid("this model has no hook \"" + name + "\"");
  }
  const std::string prefix = "blocks.";
  if (name.compare(0, prefix.size(), prefix) != 0) return invalid(unknown);
  const std::size_t dot = name.find('.', prefix.size());
  if (dot == std::string::npos || dot == prefix.size()) return invalid(unknown);
  const std::string digits = name.substr(prefix.size(), dot - prefix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 6)
    return invalid(unknown);
  const int layer = std::atoi(digits.c_str());
  const std::string rest = name.substr(dot + 1);
  for (const KindName& k : kKinds) {
    if (!k.per_layer || rest != k.name) continue;
    if (layer >= static_cast<int>(s.layers.size()))
      return invalid("hook \"" + name + "\": layer " + digits + " is outside this model's " +
                     std::to_string(s.layers.size()) + " layers");
    out = {k.kind, layer};
    return hook_exists(s, out) ? Status::Ok() : invalid("this model has no hook \"" + name + "\"");
  }
  return invalid(unknown);
}

}  // namespace attn
