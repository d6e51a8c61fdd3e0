// TinyTransformer: configuration, parameters, initialisation and input checks (the forward and
// backward passes are in tiny_transformer_pass.cpp).
#include "model/tiny_transformer.h"

#include <cmath>

#include "core/memory_limit.h"
#include "core/positional.h"
#include "core/rng.h"

namespace attn {

namespace {

constexpr int kMaxDim = 1 << 16;  // any one size (vocabulary, length, width): far past a toy model

Status check_config(const TinyConfig& c) {
  const struct {
    const char* name;
    int value, min;
  } sizes[] = {{"vocabSize", c.vocab_size, 2}, {"maxLength", c.max_length, 1},
               {"dModel", c.d_model, 1},       {"numHeads", c.num_heads, 1},
               {"numLayers", c.num_layers, 1}, {"mlpHidden", c.mlp_hidden, 0}};
  for (const auto& s : sizes) {
    if (s.value < s.min || s.value > kMaxDim) {
      return Status::Error(StatusCode::kInvalidArgument,
                           std::string(s.name) + " must be an integer in [" + std::to_string(s.min) + ", " +
                               std::to_string(kMaxDim) + "], got " + std::to_string(s.value));
    }
  }
  if (c.num_layers > 64) {
    return Status::Error(StatusCode::kInvalidArgument,
                         "numLayers must be at most 64, got " + std::to_string(c.num_layers));
  }
  if (c.d_model % c.num_heads != 0) {
    return Status::Error(
        StatusCode::kHeadsDoNotDivide,
        "numHeads " + std::to_string(c.num_heads) + " does not divide dModel " + std::to_string(c.d_model));
  }
  if (c.num_kv_heads < 0 || c.window < 0) {
    return Status::Error(StatusCode::kInvalidArgument,
                         "numKVHeads and window must be >= 0 (0 = default), got " +
                             std::to_string(c.num_kv_heads) + " and " + std::to_string(c.window));
  }
  if (c.num_kv_heads > 0 && c.num_heads % c.num_kv_heads != 0) {
    return Status::Error(StatusCode::kHeadsDoNotDivide, "numKVHeads " + std::to_string(c.num_kv_heads) +
                                                            " does not divide numHeads " +
                                                            std::to_string(c.num_heads));
  }
  if (c.positional == PositionalKind::kRope && (c.d_model / c.num_heads) % 2 != 0) {
    return Status::Error(StatusCode::kInvalidArgument,
                         "positional 'rope' needs an even head size dModel / numHeads, got " +
                             std::to_string(c.d_model / c.num_heads));
  }
  return Status::Ok();
}

// Floats of every parameter, for the memory check before anything is allocated.
std::uint64_t parameter_floats(const TinyConfig& c) {
  const std::uint64_t d = c.d_model, v = c.vocab_size, hid = c.mlp_hidden;
  std::uint64_t per_layer = 4 * d * d + 4 * d + 4 * d;  // attention (+ packed copies below), two LayerNorms
  if (c.mlp) per_layer += 2 * d * hid + hid + d;
  std::uint64_t n = v * d + c.max_length * d + c.num_layers * per_layer + 2 * d + v * d + v;
  return n + c.num_layers * 8 * d * d;  // the attention modules' own weights and packed copies
}

}  // namespace

void TinyTransformer::add_parameter(const std::string& name, Shape shape) {
  names_.push_back(name);
  params_.push_back(Tensor::zeros(std::move(shape)));
}

int TinyTransformer::index_of(const std::string& name) const {
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return static_cast<int>(i);
  return -1;
}

Status TinyTransformer::create(const TinyConfig& config, TinyTransformer& out) {
  TinyConfig c = config;
  if (c.mlp_hidden == 0) c.mlp_hidden = 4 * c.d_model;
  ATTN_RETURN_IF_ERROR(check_config(c));
  ATTN_RETURN_IF_ERROR(check_allocation(parameter_floats(c), "TinyTransformer parameters"));
  TinyTransformer m;
  m.config_ = c;
  const int d = c.d_model, v = c.vocab_size;
  const bool norm = c.norm != NormKind::kNone;
  m.add_parameter("tok_emb.weight", {v, d});
  if (c.positional == PositionalKind::kLearned) m.add_parameter("pos_emb.weight", {c.max_length, d});
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = "blocks." + std::to_string(i) + ".";
    if (norm) {
      m.add_parameter(p + "ln1.weight", {d});
      m.add_parameter(p + "ln1.bias", {d});
    }
    const int kv = c.num_kv_heads ? c.num_kv_heads : c.num_heads, kvw = kv * (d / c.num_heads);
    if (kv == c.num_heads) {
      m.add_parameter(p + "attn.in_proj_weight", {3 * d, d});
    } else {  // grouped-query heads: MultiHeadAttention's separate projections
      m.add_parameter(p + "attn.q_proj_weight", {d, d});
      m.add_parameter(p + "attn.k_proj_weight", {kvw, d});
      m.add_parameter(p + "attn.v_proj_weight", {kvw, d});
    }
    m.add_parameter(p + "attn.in_proj_bias", {d + 2 * kvw});
    m.add_parameter(p + "attn.out_proj.weight", {d, d});
    m.add_parameter(p + "attn.out_proj.bias", {d});
    if (!c.mlp) continue;
    if (norm) {
      m.add_parameter(p + "ln2.weight", {d});
      m.add_parameter(p + "ln2.bias", {d});
    }
    m.add_parameter(p + "mlp.fc1.weight", {c.mlp_hidden, d});
    m.add_parameter(p + "mlp.fc1.bias", {c.mlp_hidden});
    m.add_parameter(p + "mlp.fc2.weight", {d, c.mlp_hidden});
    m.add_parameter(p + "mlp.fc2.bias", {d});
  }
  if (c.norm == NormKind::kPre) {
    m.add_parameter("ln_f.weight", {d});
    m.add_parameter("ln_f.bias", {d});
  }
  m.add_parameter("head.weight", {v, d});
  m.add_parameter("head.bias", {v});
  // GPT-2's initialisation (header comment), one RNG stream per parameter.
  const float residual_std = 0.02f / std::sqrt(2.0f * static_cast<float>(c.num_layers));
  for (std::size_t k = 0; k < m.names_.size(); ++k) {
    const std::string& name = m.names_[k];
    Tensor& t = m.params_[k];
    const bool layer_norm_weight =
        name.find("ln") != std::string::npos && name.find(".weight") != std::string::npos;
    if (layer_norm_weight) {
      t.data.assign(t.data.size(), 1.0f);
      continue;
    }
    if (t.rank() != 2) continue;  // biases stay 0
    float std = 0.02f;
    if (name == "pos_emb.weight") std = 0.01f;
    if (name.find("out_proj.weight") != std::string::npos || name.find("fc2.weight") != std::string::npos)
      std = residual_std;
    const std::uint64_t stream = mix64(c.seed ^ mix64(k + 1));
    for (std::size_t e = 0; e < t.data.size(); ++e) t.data[e] = std * approx_normal(stream, e);
  }
  if (c.positional == PositionalKind::kSinusoidal)
    ATTN_RETURN_IF_ERROR(sinusoidal_encoding(c.max_length, d, 10000.0, m.sinusoid_));
  m.attn_.resize(static_cast<std::size_t>(c.num_layers));
  for (auto& a : m.attn_) {
    MhaConfig mc;
    mc.embed_dim = d;
    mc.num_heads = c.num_heads;
    mc.num_kv_heads = c.num_kv_heads;
    if (c.positional == PositionalKind::kRope) mc.rope = RotaryOptions{};
    ATTN_RETURN_IF_ERROR(MultiHeadAttention::create(mc, a));
  }
  m.attn_dirty_.assign(static_cast<std::size_t>(c.num_layers), true);
  m.workspace_ = make_workspace();
  m.sync_attention();
  out = std::move(m);
  return Status::Ok();
}

std::int64_t TinyTransformer::parameter_count() const {
  std::int64_t n = 0;
  for (const Tensor& t : params_) n += t.numel();
  return n;
}

void TinyTransformer::sync_attention() {
  for (int i = 0; i < config_.num_layers; ++i) {
    if (!attn_dirty_[i]) continue;
    for (const std::string& n : attn_[i].parameter_names()) {
      const int k = index_of("blocks." + std::to_string(i) + ".attn." + n);
      attn_[i].set_parameter(n, params_[k]);  // shapes and values were checked when they were set
    }
    attn_dirty_[i] = false;
  }
}

Status TinyTransformer::set_parameter(const std::string& name, const Tensor& value) {
  const int k = index_of(name);
  if (k < 0)
    return Status::Error(StatusCode::kUnknownParameter, "TinyTransformer has no parameter \"" + name + "\"");
  ATTN_RETURN_IF_ERROR(check_well_formed(value, name.c_str()));
  if (value.shape != params_[k].shape) {
    return Status::Error(StatusCode::kShapeMismatch, "parameter \"" + name + "\" must have shape " +
                                                         shape_to_string(params_[k].shape) + ", got " +
                                                         shape_to_string(value.shape));
  }
  ATTN_RETURN_IF_ERROR(check_finite(value, name.c_str()));
  params_[k].data = value.data;
  if (name.rfind("blocks.", 0) == 0 && name.find(".attn.") != std::string::npos) {
    int layer = 0;  // "blocks.<layer>.attn.…": the digits after "blocks."
    for (std::size_t i = 7; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i)
      layer = layer * 10 + (name[i] - '0');
    attn_dirty_[layer] = true;
  }
  return Status::Ok();
}

Status TinyTransformer::set_parameters(const std::vector<Tensor>& values) {
  if (values.size() != params_.size()) {
    return Status::Error(StatusCode::kShapeMismatch, "expected " + std::to_string(params_.size()) +
                                                         " parameters, got " + std::to_string(values.size()));
  }
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (values[k].shape != params_[k].shape || values[k].data.size() != params_[k].data.size()) {
      return Status::Error(StatusCode::kShapeMismatch, "parameter \"" + names_[k] + "\" must have shape " +
                                                           shape_to_string(params_[k].shape) + ", got " +
                                                           shape_to_string(values[k].shape));
    }
    ATTN_RETURN_IF_ERROR(check_finite(values[k], names_[k].c_str()));
  }
  for (std::size_t k = 0; k < values.size(); ++k) params_[k].data = values[k].data;
  attn_dirty_.assign(attn_dirty_.size(), true);
  return Status::Ok();
}

Status TinyTransformer::check_batch(const IdBatch& ids, const IdBatch* targets) const {
  if (ids.b < 1 || ids.t < 1 || ids.data.size() != static_cast<std::size_t>(ids.b) * ids.t) {
    return Status::Error(StatusCode::kEmptyInput,
                         "ids must be a non-empty (B, T) or (T) batch, got B = " + std::to_string(ids.b) +
                             ", T = " + std::to_string(ids.t));
  }
  if (ids.t > config_.max_length) {
    return Status::Error(StatusCode::kInvalidArgument, "sequence length T = " + std::to_string(ids.t) +
                                                           " exceeds maxLength " +
                                                           std::to_string(config_.max_length));
  }
  for (std::size_t i = 0; i < ids.data.size(); ++i) {
    if (ids.data[i] < 0 || ids.data[i] >= config_.vocab_size) {
      return Status::Error(StatusCode::kInvalidArgument,
                           "ids[" + std::to_string(i / ids.t) + "][" + std::to_string(i % ids.t) +
                               "] = " + std::to_string(ids.data[i]) +
                               " is outside [0, vocabSize = " + std::to_string(config_.vocab_size) + ")");
    }
  }
  if (!targets) return Status::Ok();
  if (targets->b != ids.b || targets->t != ids.t || targets->data.size() != ids.data.size()) {
    return Status::Error(StatusCode::kShapeMismatch,
                         "targets must have the shape of ids (" + std::to_string(ids.b) + ", " +
                             std::to_string(ids.t) + "), got (" + std::to_string(targets->b) + ", " +
                             std::to_string(targets->t) + ")");
  }
  bool any = false;
  for (std::size_t i = 0; i < targets->data.size(); ++i) {
    const std::int32_t y = targets->data[i];
    if (y != -100 && (y < 0 || y >= config_.vocab_size)) {
      return Status::Error(StatusCode::kInvalidArgument,
                           "targets[" + std::to_string(i / ids.t) + "][" + std::to_string(i % ids.t) +
                               "] = " + std::to_string(y) + " is outside [0, vocabSize = " +
                               std::to_string(config_.vocab_size) + ") and is not -100 (ignored)");
    }
    any = any || y != -100;
  }
  if (!any) {
    return Status::Error(StatusCode::kInvalidArgument,
                         "every target is -100: no position to score (PyTorch would return NaN)");
  }
  return Status::Ok();
}

HookShapes TinyTransformer::hook_shapes() const {
  const TinyConfig& c = config_;
  HookShapes s;
  s.width = c.d_model;
  s.pos_embed = c.positional == PositionalKind::kLearned || c.positional == PositionalKind::kSinusoidal;
  s.final_norm = c.norm == NormKind::kPre;
  const int kv = c.num_kv_heads > 0 ? c.num_kv_heads : c.num_heads;
  const int hidden = c.mlp ? (c.mlp_hidden > 0 ? c.mlp_hidden : 4 * c.d_model) : 0;
  s.layers.assign(static_cast<std::size_t>(c.num_layers),
                  HookShapes::Layer{c.num_heads, kv, c.d_model / c.num_heads, hidden, false});
  return s;
}

}  // namespace attn
