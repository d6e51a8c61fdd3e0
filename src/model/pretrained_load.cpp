// PretrainedModel (pretrained.h), loading: the tensors a config needs, by role, checked, stored in
// their own format and mapped onto the library's MultiHeadAttention (frozen, reading its projections
// through views) and the model's MLP, embedding and head views.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "core/memory_limit.h"
#include "model/pretrained.h"

namespace attn {

namespace {

Status invalid(const std::string& what) {
  return Status::Error(StatusCode::kInvalidArgument, what);
}

constexpr int kMaxSize = 1 << 20;  // any width, vocabulary or length above this is not a real checkpoint

Status check_config(const PretrainedConfig& c) {
  const struct {
    const char* name;
    int value;
  } sizes[] = {{"vocab_size", c.vocab_size},          {"hidden_size", c.hidden},
               {"num_hidden_layers", c.layers},       {"num_attention_heads", c.heads},
               {"num_key_value_heads", c.kv_heads},   {"head_dim", c.head_dim},
               {"intermediate_size", c.intermediate}, {"max_position_embeddings", c.max_positions}};
  for (const auto& s : sizes)
    if (s.value < 1 || s.value > kMaxSize)
      return invalid(std::string("config ") + s.name + " must be in [1, " + std::to_string(kMaxSize) +
                     "], got " + std::to_string(s.value));
  if (c.layers > 1024)
    return invalid("config num_hidden_layers must be at most 1024, got " + std::to_string(c.layers));
  if (c.heads % c.kv_heads != 0) {
    return Status::Error(StatusCode::kHeadsDoNotDivide, "num_key_value_heads " + std::to_string(c.kv_heads) +
                                                            " does not divide num_attention_heads " +
                                                            std::to_string(c.heads));
  }
  if (!(c.norm_eps > 0) || !std::isfinite(c.norm_eps))
    return invalid("config norm epsilon must be a finite number > 0");
  if (c.arch == PretrainedArch::kLlama && (c.head_dim % 2 != 0 || !(c.rope_theta > 0)))
    return invalid("Llama-family models need an even head_dim and rope_theta > 0");
  if (c.arch == PretrainedArch::kGpt2 && c.head_dim * c.heads != c.hidden)
    return invalid("GPT-2: n_head must divide n_embd (head size n_embd / n_head)");
  const std::size_t layers = static_cast<std::size_t>(c.layers);
  if (!c.layer_window.empty() && c.layer_window.size() != layers)
    return invalid("config: one sliding window per layer is needed, got " +
                   std::to_string(c.layer_window.size()));
  for (int w : c.layer_window)
    if (w < 0) return invalid("config sliding_window must be >= 1 (or absent), got " + std::to_string(w));
  if (!c.layer_rope.empty() && c.layer_rope.size() != layers)
    return invalid("config: one no-RoPE flag per layer is needed, got " +
                   std::to_string(c.layer_rope.size()));
  if (!c.layer_mixer.empty() && c.layer_mixer.size() != layers)
    return invalid("config: one token-mixer kind per layer is needed, got " +
                   std::to_string(c.layer_mixer.size()));
  for (int kind : c.layer_mixer)
    if (kind != static_cast<int>(MixerKind::kAttention) && kind != static_cast<int>(MixerKind::kShortConv) &&
        kind != static_cast<int>(MixerKind::kDeltaNet))
      return invalid("config: token-mixer kind " + std::to_string(kind) + " does not exist");
  ATTN_RETURN_IF_ERROR(ShortConvBlock::check_config(c.layer_mixer, c.conv_kernel));
  ATTN_RETURN_IF_ERROR(check_delta_config(c));
  if (c.rotary_dims < 0 || c.rotary_dims > c.head_dim || c.rotary_dims % 2 != 0)
    return invalid(
        "config: the rotated features (partial_rotary_factor · head_dim) must be even and in [0, head_dim], "
        "got " +
        std::to_string(c.rotary_dims));
  const int qk_norm = static_cast<int>(c.qk_norm);
  if (qk_norm < 0 || qk_norm > 2)
    return invalid("config: q/k norm kind " + std::to_string(qk_norm) + " does not exist");
  if (!c.pre_norms && !c.post_norms) return invalid("config: a block needs its pre-norms or its post-norms");
  if (!(c.embed_scale > 0) || !std::isfinite(c.embed_scale) || !(c.attention_scale >= 0) ||
      !std::isfinite(c.attention_scale) || !(c.local_rope_theta >= 0) || !std::isfinite(c.local_rope_theta) ||
      !std::isfinite(c.norm_weight_offset) || !(c.attn_softcap >= 0) || !std::isfinite(c.attn_softcap) ||
      !(c.final_softcap >= 0) || !std::isfinite(c.final_softcap) || !(c.rope_attention_factor > 0) ||
      !std::isfinite(c.rope_attention_factor) || !(c.residual_scale > 0) ||
      !std::isfinite(c.residual_scale) || !(c.logits_scaling > 0) || !std::isfinite(c.logits_scaling))
    return invalid(
        "config: embedding scale, attention scale, RoPE attention factor, residual scale, logits scaling, "
        "local RoPE base and norm offset must be finite (scales > 0)");
  const bool variant = c.qk_norm != MhaConfig::QkNorm::kNone || c.post_norms || !c.pre_norms ||
                       c.fused_projections || c.rotary_dims || !c.layer_window.empty() ||
                       !c.layer_rope.empty() || !c.layer_mixer.empty() || c.norm_weight_offset != 0 ||
                       c.embed_scale != 1 || c.attention_scale != 0 || c.gelu_mlp ||
                       c.local_rope_theta != 0 || c.attn_softcap != 0 || c.final_softcap != 0 ||
                       c.rope_attention_factor != 1 || c.residual_scale != 1 || c.logits_scaling != 1 ||
                       c.query_temperature_beta != 0 || c.conv_kernel != 0 || c.attn_output_gate;
  if (c.attn_output_gate && c.fused_projections)
    return invalid("config: an output gate with fused projections does not exist");
  if (c.arch == PretrainedArch::kGpt2 && variant)
    return invalid("config: GPT-2 has none of the Llama-family variants");
  return check_layer_variants(c);
}

// Row blocks of a fused matrix ([q; k; v]: GPT-2's and Phi-3's qkv; [gate; up]), or empty.
std::vector<int> fused_blocks(const PretrainedConfig& c, TensorRole role) {
  const int qk = c.heads * c.head_dim, kv = c.kv_heads * c.head_dim;
  if (role == TensorRole::kQkv) return {qk, kv, kv};
  if (role == TensorRole::kGateUp) return {c.intermediate, c.intermediate};
  if (role == TensorRole::kQGate) return {qk, qk};
  return {};
}

// Values of every weight (norms and biases included), for the memory check before anything is allocated.
std::uint64_t weight_values(const PretrainedConfig& c) {
  const std::uint64_t e = c.hidden;
  std::uint64_t n = static_cast<std::uint64_t>(c.vocab_size) * e * (c.tie_embeddings ? 1 : 2) + 2 * e;
  if (c.arch == PretrainedArch::kGpt2) n += static_cast<std::uint64_t>(c.max_positions) * e;
  if (c.conv_kernel > 0)  // LFM2's conv layers, a bound
    n += c.layers * (4 * e * e + e * static_cast<std::uint64_t>(c.conv_kernel));
  const std::uint64_t delta = static_cast<std::uint64_t>(delta_shape(c).weight_values());
  for (int l = 0; l < c.layers; ++l) {  // each layer's sizes (Gemma 4's differ)
    const std::uint64_t d = layer_head_dim(c, l), qk = c.heads * d, kv = layer_kv_heads(c, l) * d,
                        i = layer_intermediate(c, l);
    const std::uint64_t attn = e * qk * (c.attn_output_gate ? 2 : 1) + 2 * e * kv + qk * e + qk + 2 * kv + e;
    // a DeltaNet layer has its block's weights instead of the attention's
    const bool linear = !c.layer_mixer.empty() && c.layer_mixer[l] == static_cast<int>(MixerKind::kDeltaNet);
    n += (linear ? delta : attn) + 3 * e * i + i + e + 4 * e;
  }
  return n + per_layer_input_values(c);
}

std::uint64_t as_floats(std::uint64_t bytes) {
  return (bytes + 3) / 4;
}  // the memory limit's unit

// The roles of norm weights: Gemma's RMSNorm scales by (1 + w), its q/k norms included.
bool is_norm_weight(TensorRole r) {
  return r == TensorRole::kFinalNorm || r == TensorRole::kAttnNorm || r == TensorRole::kMlpNorm ||
         r == TensorRole::kPostAttnNorm || r == TensorRole::kPostMlpNorm || r == TensorRole::kQNorm ||
         r == TensorRole::kKNorm || r == TensorRole::kPerLayerProjNorm || r == TensorRole::kPerLayerPostNorm;
}

// Layer l's attention (frozen: its projections are views into the stored matrices) with the config's
// RoPE, q/k norm and biases.
Status make_attention(const PretrainedConfig& c, int l, MultiHeadAttention& out) {
  const bool gpt2 = c.arch == PretrainedArch::kGpt2;
  MhaConfig mc;
  mc.embed_dim = c.hidden;
  mc.num_heads = c.heads;
  mc.num_kv_heads = layer_kv_heads(c, l);
  mc.head_dim = layer_head_dim(c, l);
  mc.frozen = true;              // projections: views into the stored checkpoint matrices
  mc.bias = gpt2 || c.qkv_bias;  // Qwen2's o has none: its out_proj.bias stays zero
  if (!gpt2 && (c.layer_rope.empty() || c.layer_rope[l])) {
    RotaryOptions r;
    const bool local = c.local_rope_theta > 0 && !c.layer_window.empty() && c.layer_window[l] > 0;
    r.base = local ? c.local_rope_theta : c.rope_theta;  // Gemma 3's sliding layers: their own base, unscaled
    if (!local) r.inv_freq = c.rope_inv_freq;
    if (!local) r.scale = c.rope_attention_factor;
    r.dims = c.rotary_dims;
    mc.rope = r;
    mc.query_temperature = {c.query_temperature_beta, c.query_temperature_floor};  // Ministral 3
  }
  mc.qk_norm = c.qk_norm;
  mc.qk_norm_eps = c.norm_eps;
  mc.output_gate = c.attn_output_gate;
  mc.v_norm = c.v_norm;                       // Gemma 4
  mc.shared_kv = layer_kv_source(c, l) != l;  // Gemma 4: attends over an earlier layer's keys and values
  return MultiHeadAttention::create(mc, out);
}

// Layer l's attention options: causal, its sliding window, the family's scale and soft-cap.
MhaForwardOptions attention_options(const PretrainedConfig& c, int l) {
  MhaForwardOptions mo;
  mo.causal = true;
  mo.need_weights = false;
  mo.average_weights = false;
  if (!c.layer_window.empty() && c.layer_window[l] > 0) mo.positions.window = c.layer_window[l];
  if (c.attention_scale > 0) mo.scale = static_cast<float>(c.attention_scale);
  mo.softcap = c.attn_softcap;
  return mo;
}

}  // namespace

// The family's composition of layer l from its config: the one place the architecture chooses block
// kinds (GPT-2: LayerNorms and the GELU MLP; the Llama layout: RMSNorms where the family has them —
// pre-norms, post-norms (OLMo 2, Gemma) — and SwiGLU or Gemma's GeGLU) and the scale of each branch
// as it is added to the stream (Granite's residual_multiplier).
Status PretrainedModel::compose_layer(const PretrainedConfig& c, int l, Layer& L) {
  const bool gpt2 = c.arch == PretrainedArch::kGpt2;
  const NormBlock norm(gpt2 ? NormBlock::Kind::kLayer : NormBlock::Kind::kRms, c.hidden, c.norm_eps);
  if (c.pre_norms) L.attn_norm = L.mlp_norm = norm;
  if (c.post_norms) L.post_attn_norm = L.post_mlp_norm = norm;
  const MlpBlock::Kind mlp = gpt2         ? MlpBlock::Kind::kGelu
                             : c.gelu_mlp ? MlpBlock::Kind::kGeGlu
                                          : MlpBlock::Kind::kSwiGlu;
  L.mlp = MlpBlock(mlp, c.hidden, layer_intermediate(c, l));
  L.kv_from = layer_kv_source(c, l) == l ? -1 : layer_kv_source(c, l);
  L.branch_scale = c.residual_scale;
  L.kind = c.layer_mixer.empty() ? MixerKind::kAttention : static_cast<MixerKind>(c.layer_mixer[l]);
  L.mixer.options = attention_options(c, l);
  if (L.kind == MixerKind::kShortConv) L.conv = ShortConvBlock(c.hidden, c.conv_kernel);
  if (L.kind == MixerKind::kDeltaNet) L.delta = DeltaNetBlock(delta_shape(c));
  return make_attention(c, l, L.mixer.attn);
}

Status PretrainedModel::create(const PretrainedConfig& config, PretrainedModel& out) {
  ATTN_RETURN_IF_ERROR(check_config(config));
  // The weights at the fewest bytes any WeightFormat stores a value in (Q2_K: 84 bytes per 256): a
  // config refused here is too large in every format; reserve() checks the file's real total before
  // the first tensor is allocated.
  // The tables only looked up by row are left out: they may stay outside memory (attach_table).
  ATTN_RETURN_IF_ERROR(
      check_allocation(as_floats((weight_values(config) - lookup_only_values(config)) * 84 / 256),
                       "the pretrained model's weights"));
  PretrainedModel m;
  m.config_ = config;
  m.specs_ = pretrained_tensor_specs(config);
  m.layers_.resize(static_cast<std::size_t>(config.layers));
  for (int l = 0; l < config.layers; ++l) ATTN_RETURN_IF_ERROR(compose_layer(config, l, m.layers_[l]));
  for (const Layer& L : m.layers_)
    if (L.kv_from >= 0) m.layers_[L.kv_from].kv_kept = true;
  if (config.per_layer_width > 0)
    m.per_layer_ = PerLayerInput(config.layers, config.per_layer_width, config.hidden, config.norm_eps);
  m.final_norm_ =
      NormBlock(config.arch == PretrainedArch::kGpt2 ? NormBlock::Kind::kLayer : NormBlock::Kind::kRms,
                config.hidden, config.norm_eps);
  m.learned_positions_ = std::any_of(m.specs_.begin(), m.specs_.end(), [](const TensorSpec& s) {
    return s.key.role == TensorRole::kPositions;
  });
  for (const TensorSpec& s : m.specs_) m.set_[s.key] = false;
  out = std::move(m);
  return Status::Ok();
}

std::vector<TensorKey> PretrainedModel::missing() const {
  std::vector<TensorKey> out;
  for (const TensorSpec& s : specs_)
    if (!set_.at(s.key)) out.push_back(s.key);
  return out;
}

Status PretrainedModel::reserve(std::uint64_t bytes) const {
  return check_allocation(as_floats(bytes), "the checkpoint's weights");
}

namespace {

// A format the core knows; quantized (ggml blocks) only for a matrix as the model keeps it: its
// blocks run along rows, so it cannot be transposed, and GGUF stores norms and biases as F32.
Status check_tensor_format(WeightFormat format, bool transposed, bool matrix, const std::string& label) {
  if (!known_format(format))
    return invalid("tensor \"" + label + "\" has an unknown weight format " +
                   std::to_string(static_cast<int>(format)));
  if (!is_quantized(format)) return Status::Ok();
  if (!matrix)
    return invalid("tensor \"" + label + "\" is a vector stored as " + format_name(format) +
                   ": norm weights and biases must be F32, F16 or BF16");
  if (transposed)
    return invalid("tensor \"" + label + "\" is " + format_name(format) +
                   ": a quantized matrix cannot be transposed");
  return Status::Ok();
}

}  // namespace

Status PretrainedModel::begin_tensor(const TensorKey& key, const Shape& stored_shape, WeightFormat format,
                                     bool transposed, const std::string& label, void*& data) {
  const auto it =
      std::find_if(specs_.begin(), specs_.end(), [&](const TensorSpec& s) { return s.key == key; });
  if (it == specs_.end())
    return Status::Error(StatusCode::kUnknownParameter, "this model has no tensor " + key.label());
  Shape want = it->shape;
  if (transposed && want.size() == 2) std::swap(want[0], want[1]);
  Shape squeezed = stored_shape;  // nn.Conv1d's (E, 1, K) kernel is the (E, K) the model keeps
  if (squeezed.size() == 3 && squeezed[1] == 1) squeezed.erase(squeezed.begin() + 1);
  if (squeezed != want) {
    return Status::Error(StatusCode::kShapeMismatch, "tensor \"" + label + "\" must have shape " +
                                                         shape_to_string(want) + " for this config, got " +
                                                         shape_to_string(stored_shape));
  }
  ATTN_RETURN_IF_ERROR(check_tensor_format(format, transposed, want.size() == 2, label));
  pending_.erase(key);
  const auto old = stored_.find(key);
  const std::uint64_t replaced = old == stored_.end() ? 0 : old->second.byte_size();
  const std::uint64_t need =
      weight_bytes() - replaced + stored_bytes(format, static_cast<std::uint64_t>(shape_numel(stored_shape)));
  ATTN_RETURN_IF_ERROR(check_allocation(as_floats(need), "the pretrained model's weights"));
  StoredWeight w;
  ATTN_RETURN_IF_ERROR(StoredWeight::allocate(stored_shape, format, "a checkpoint tensor", w));
  Pending& p = pending_[key];
  p = Pending{std::move(w), label, transposed};
  data = p.weight.bytes();
  return Status::Ok();
}

Status PretrainedModel::end_tensor(const TensorKey& key) {
  const auto it = pending_.find(key);
  if (it == pending_.end()) return invalid("tensor " + key.label() + " was not begun (begin_tensor first)");
  Pending p = std::move(it->second);
  pending_.erase(it);
  ATTN_RETURN_IF_ERROR(p.weight.check_finite(p.label.c_str()));
  if (p.transposed) ATTN_RETURN_IF_ERROR(p.weight.transpose());
  if (key.role == TensorRole::kQGate) split_q_gate_rows(p.weight, config_.heads);
  // float32 matrices into the GEMM's layout, unless a fused matrix's blocks would be cut mid-panel.
  const std::vector<int> blocks = fused_blocks(config_, key.role);
  if (std::all_of(blocks.begin(), blocks.end(), StoredWeight::packable)) p.weight.pack_for_linear();
  stored_[key] = std::move(p.weight);
  const Status st = use(key);
  set_[key] = st.ok();
  return st;
}

// A vector (norm weight or bias) widened into its float32 place; the stored copy is dropped.
// Matrices stay stored and are read through views.
Status PretrainedModel::use(const TensorKey& key) {
  const StoredWeight& stored = stored_.at(key);
  if (is_per_layer_role(key.role)) return use_per_layer(key, stored);
  if (stored.shape().size() == 1) {
    Tensor v = stored.widened();
    if (config_.norm_weight_offset != 0 &&
        is_norm_weight(key.role))  // Gemma: (1 + w), as its RMSNorm computes it in float32
      for (float& w : v.data) w += config_.norm_weight_offset;
    stored_.erase(key);
    if (key.role == TensorRole::kFinalNorm)
      final_norm_.weight = v;
    else if (key.role == TensorRole::kFinalNormBias)
      final_norm_.bias = v;
    else if (key.layer >= 0)
      return use_layer_vector(layers_[key.layer], key.role, v);
    return Status::Ok();
  }
  WeightView w = stored.view();
  w.int8_activations = int8_activations_ && is_quantized(w.format);
  if (key.role == TensorRole::kEmbed) {
    embed_ = w;
    embed_rows_ = LookupTable(w);
  } else if (key.role == TensorRole::kPositions)
    positions_ = w;
  else if (key.role == TensorRole::kUnembed)
    head_ = w;
  else if (key.layer >= 0)
    return use_layer_matrix(layers_[key.layer], key.role, w);
  return Status::Ok();
}

Status PretrainedModel::use_layer_matrix(Layer& L, TensorRole role, const WeightView& w) {
  if (use_delta_matrix(L, role, w)) return Status::Ok();
  MultiHeadAttention& a = L.mixer.attn;
  const int qk = config_.heads * a.head_dim(), kv = a.num_kv_heads() * a.head_dim();
  switch (role) {
    case TensorRole::kQkv:  // (H·d + 2·H_kv·d, E) = [W_q; W_k; W_v]
      ATTN_RETURN_IF_ERROR(a.set_weight_view("q_proj_weight", w.row_block(0, qk)));
      ATTN_RETURN_IF_ERROR(a.set_weight_view("k_proj_weight", w.row_block(qk, kv)));
      return a.set_weight_view("v_proj_weight", w.row_block(qk + kv, kv));
    case TensorRole::kGateUp:  // (2I, E) = [W_gate; W_up]
      L.mlp.gate = w.row_block(0, config_.intermediate);
      L.mlp.up = w.row_block(config_.intermediate, config_.intermediate);
      return Status::Ok();
    case TensorRole::kO:
      return a.set_weight_view("out_proj.weight", w);
    case TensorRole::kQ:
      return a.set_weight_view("q_proj_weight", w);
    case TensorRole::kQGate:  // [W_q; W_gate] once split_q_gate_rows has run
      ATTN_RETURN_IF_ERROR(a.set_weight_view("q_proj_weight", w.row_block(0, qk)));
      return a.set_weight_view("gate_proj_weight", w.row_block(qk, qk));
    case TensorRole::kK:
      return a.set_weight_view("k_proj_weight", w);
    case TensorRole::kV:
      return a.set_weight_view("v_proj_weight", w);
    case TensorRole::kGate:
      L.mlp.gate = w;
      return Status::Ok();
    case TensorRole::kUp:
      L.mlp.up = w;
      return Status::Ok();
    case TensorRole::kDown:
      L.mlp.down = w;
      return Status::Ok();
    case TensorRole::kConvInProj:
    case TensorRole::kConvOutProj:
      (role == TensorRole::kConvInProj ? L.conv.in_proj : L.conv.out_proj) = w;
      return Status::Ok();
    case TensorRole::kConvWeight:  // (E, K), read per value: kept widened beside the stored copy
      L.conv.weight = w.widened().data;
      return Status::Ok();
    default:
      return Status::Ok();
  }
}

const Tensor* PretrainedModel::vector_slot(const TensorKey& key) const {
  if (key.role == TensorRole::kFinalNorm) return &final_norm_.weight;
  if (key.role == TensorRole::kFinalNormBias) return &final_norm_.bias;
  if (key.layer < 0 || key.layer >= static_cast<int>(layers_.size())) return per_layer_slot(key);
  const Layer& L = layers_[static_cast<std::size_t>(key.layer)];
  if (const Tensor* delta = delta_slot(L, key.role)) return delta;
  switch (key.role) {
    case TensorRole::kAttnNorm:
      return &L.attn_norm.weight;
    case TensorRole::kAttnNormBias:
      return &L.attn_norm.bias;
    case TensorRole::kMlpNorm:
      return &L.mlp_norm.weight;
    case TensorRole::kMlpNormBias:
      return &L.mlp_norm.bias;
    case TensorRole::kPostAttnNorm:
      return &L.post_attn_norm.weight;
    case TensorRole::kPostMlpNorm:
      return &L.post_mlp_norm.weight;
    case TensorRole::kUpBias:
      return &L.mlp.up_b;
    case TensorRole::kDownBias:
      return &L.mlp.down_b;
    default:
      return per_layer_slot(key);
  }
}

Status PretrainedModel::use_layer_vector(Layer& L, TensorRole role, const Tensor& v) {
  MultiHeadAttention& a = L.mixer.attn;
  const int l = static_cast<int>(&L - layers_.data());
  if (const Tensor* slot = vector_slot({role, l})) {
    *const_cast<Tensor*>(slot) = v;  // L is ours to change here
    return Status::Ok();
  }
  if (role == TensorRole::kQNorm) return a.set_qk_norm_weight(false, v);
  if (role == TensorRole::kKNorm) return a.set_qk_norm_weight(true, v);
  if (role == TensorRole::kQkvBias) return a.set_parameter("in_proj_bias", v);
  if (role == TensorRole::kOBias) return a.set_parameter("out_proj.bias", v);
  // q/k/v biases (Qwen2): their segment of in_proj_bias [b_q; b_k; b_v]
  Tensor bias;
  ATTN_RETURN_IF_ERROR(a.get_parameter("in_proj_bias", bias));
  const int qk = config_.heads * a.head_dim(), kv = a.num_kv_heads() * a.head_dim();
  const int at = role == TensorRole::kQBias ? 0 : role == TensorRole::kKBias ? qk : qk + kv;
  std::copy(v.data.begin(), v.data.end(), bias.data.begin() + at);
  return a.set_parameter("in_proj_bias", bias);
}

}  // namespace attn
