// PretrainedModel's DeltaNet layers (Qwen3.5's linear attention; delta_net.h): the config's checks,
// the block's tensors as they are loaded, and its step of the forward (decoding from
// LayerCache::state, the effective attention where asked).
#include <algorithm>
#include <string>

#include "model/pretrained.h"

namespace attn {

namespace {

Status invalid(const std::string& what) {
  return Status::Error(StatusCode::kInvalidArgument, what);
}

bool has_delta_layers(const PretrainedConfig& c) {
  return std::find(c.layer_mixer.begin(), c.layer_mixer.end(), static_cast<int>(MixerKind::kDeltaNet)) !=
         c.layer_mixer.end();
}

}  // namespace

Status check_delta_config(const PretrainedConfig& c) {
  if (!has_delta_layers(c)) return Status::Ok();
  const struct {
    const char* name;
    int value, most;
  } sizes[] = {{"linear_num_key_heads", c.linear_k_heads, 1 << 12},
               {"linear_num_value_heads", c.linear_v_heads, 1 << 12},
               {"linear_key_head_dim", c.linear_k_dim, 1 << 12},
               {"linear_value_head_dim", c.linear_v_dim, 1 << 12},
               {"linear_conv_kernel_dim", c.linear_conv_kernel, 64}};
  for (const auto& s : sizes)
    if (s.value < 1 || s.value > s.most)
      return invalid(std::string("config ") + s.name + " must be in [1, " + std::to_string(s.most) +
                     "], got " + std::to_string(s.value));
  if (c.linear_v_heads % c.linear_k_heads != 0)
    return Status::Error(StatusCode::kHeadsDoNotDivide,
                         "linear_num_key_heads " + std::to_string(c.linear_k_heads) +
                             " does not divide linear_num_value_heads " + std::to_string(c.linear_v_heads));
  if (c.linear_layout != 0 && c.linear_layout != 1)
    return invalid("config: DeltaNet layout " + std::to_string(c.linear_layout) + " does not exist");
  if (c.arch != PretrainedArch::kLlama) return invalid("config: DeltaNet layers are the Llama layout's only");
  return Status::Ok();
}

DeltaNetShape delta_shape(const PretrainedConfig& c) {
  DeltaNetShape s;
  s.hidden = c.hidden;
  s.k_heads = c.linear_k_heads;
  s.v_heads = c.linear_v_heads;
  s.k_dim = c.linear_k_dim;
  s.v_dim = c.linear_v_dim;
  s.kernel = c.linear_conv_kernel;
  s.eps = c.norm_eps;
  s.tiled = c.linear_layout == 1;
  s.a_log = c.linear_layout == 0;
  return s;
}

bool PretrainedModel::use_delta_matrix(Layer& L, TensorRole role, const WeightView& w) {
  DeltaNetBlock& d = L.delta;
  switch (role) {
    case TensorRole::kLinearQkv:
      d.qkv = w;
      return true;
    case TensorRole::kLinearZ:
      d.z = w;
      return true;
    case TensorRole::kLinearB:
      d.b_proj = w;
      return true;
    case TensorRole::kLinearA:
      d.a_proj = w;
      return true;
    case TensorRole::kLinearOut:
      d.out = w;
      return true;
    case TensorRole::kLinearConv:  // read per tap by the conv: widened once
      d.conv = Tensor::zeros({w.rows, w.cols});
      for (int r = 0; r < w.rows; ++r)
        w.widen_row(r, d.conv.data.data() + static_cast<std::size_t>(r) * w.cols);
      return true;
    default:
      return false;
  }
}

const Tensor* PretrainedModel::delta_slot(const Layer& L, TensorRole role) {
  switch (role) {
    case TensorRole::kLinearDecay:
      return &L.delta.decay;
    case TensorRole::kLinearDtBias:
      return &L.delta.dt_bias;
    case TensorRole::kLinearNorm:
      return &L.delta.norm;
    default:
      return nullptr;
  }
}

// Layer l's DeltaNet on its normed input `in` (N, E), into work_.attention.output: from the layer's
// state while decoding (its state after these rows into next_state, swapped in by forward on
// success); its effective attention (B, H_v, T, T) where asked (from position 0 only).
Status PretrainedModel::delta_mixer(int l, const Pass& p, const PretrainedForwardOptions& o,
                                    const std::vector<float>& in, PretrainedForwardResult& result,
                                    DecodeCaches* caches) {
  const Layer& L = layers_[l];
  const DeltaNetShape& s = L.delta.shape();
  const bool want =
      std::find(o.attention_layers.begin(), o.attention_layers.end(), l) != o.attention_layers.end();
  // a trace holds its value heads' z only: no softmax attention
  const bool traced = std::find(o.trace_layers.begin(), o.trace_layers.end(), l) != o.trace_layers.end();
  if (want && p.p0 > 0)
    return invalid("layer " + std::to_string(l) +
                   ": a DeltaNet layer's effective attention is a whole sequence's, from position 0");
  Tensor& y = work_.attention.output;
  y.shape.assign({p.b, p.t, config_.hidden});
  y.data.resize(static_cast<std::size_t>(p.n) * config_.hidden);
  Tensor a;
  if (want) a = Tensor::zeros({p.b, s.v_heads, p.t, p.t});
  LayerCache* cache = caches ? &caches->layers[l] : nullptr;
  const float* state = cache && p.p0 > 0 ? cache->state.data() : nullptr;
  float* next = cache ? cache->next_state.data() : nullptr;
  ATTN_RETURN_IF_ERROR(L.delta.forward(p.b, p.t, in.data(), y.data.data(), state, next,
                                       want ? a.data.data() : nullptr, o.hooks, l,
                                       traced ? &result.traces[l] : nullptr));
  if (want) result.attention[l] = std::move(a);
  return Status::Ok();
}

}  // namespace attn
