// PretrainedModel (pretrained.h), loading: the tensors a Hugging Face checkpoint holds, checked,
// stored in their own format and mapped onto the library's MultiHeadAttention (frozen, reading its
// projections through views) and the model's MLP, embedding and head views.
#include <algorithm>
#include <cctype>
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

bool ends_with(const std::string& name, const std::string& end) {
  return name.size() >= end.size() && name.compare(name.size() - end.size(), end.size(), end) == 0;
}

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
      !(c.final_softcap >= 0) || !std::isfinite(c.final_softcap))
    return invalid(
        "config: embedding scale, attention scale, local RoPE base and norm offset must be finite (scales > "
        "0)");
  const bool variant = c.qk_norm != MhaConfig::QkNorm::kNone || c.post_norms || !c.pre_norms ||
                       c.fused_projections || c.rotary_dims || !c.layer_window.empty() ||
                       !c.layer_rope.empty() || c.norm_weight_offset != 0 || c.embed_scale != 1 ||
                       c.attention_scale != 0 || c.gelu_mlp || c.local_rope_theta != 0 ||
                       c.attn_softcap != 0 || c.final_softcap != 0;
  if (c.arch == PretrainedArch::kGpt2 && variant)
    return invalid("config: GPT-2 has none of the Llama-family variants");
  return Status::Ok();
}

// The Llama-family tensors of one layer (prefix "model.layers.<l>."), in the checkpoint's layout.
void expect_llama_layer(const PretrainedConfig& c, const std::string& p,
                        std::vector<std::pair<std::string, Shape>>& out) {
  const int e = c.hidden, qk = c.heads * c.head_dim, kv = c.kv_heads * c.head_dim, in = c.intermediate;
  auto expect = [&](const std::string& name, Shape shape) { out.emplace_back(p + name, std::move(shape)); };
  // Llama: input_ (pre-attention) and post_attention_ (pre-MLP!); OLMo 2: post_attention_ and
  // post_feedforward_ (outputs); Gemma 3 all four, its pre-MLP norm named pre_feedforward_.
  if (c.pre_norms) expect("input_layernorm.weight", {e});
  if (c.post_norms) expect("post_attention_layernorm.weight", {e});
  if (c.pre_norms)
    expect(c.post_norms ? "pre_feedforward_layernorm.weight" : "post_attention_layernorm.weight", {e});
  if (c.post_norms) expect("post_feedforward_layernorm.weight", {e});
  if (c.fused_projections) {
    expect("self_attn.qkv_proj.weight", {qk + 2 * kv, e});
  } else {
    for (const auto& [n, rows] :
         {std::pair<const char*, int>{"q_proj", qk}, {"k_proj", kv}, {"v_proj", kv}}) {
      expect(std::string("self_attn.") + n + ".weight", {rows, e});
      if (c.qkv_bias) expect(std::string("self_attn.") + n + ".bias", {rows});
    }
  }
  if (c.qk_norm != MhaConfig::QkNorm::kNone) {
    const bool per_head = c.qk_norm == MhaConfig::QkNorm::kPerHead;
    expect("self_attn.q_norm.weight", {per_head ? c.head_dim : qk});
    expect("self_attn.k_norm.weight", {per_head ? c.head_dim : kv});
  }
  expect("self_attn.o_proj.weight", {e, qk});
  if (c.fused_projections) {
    expect("mlp.gate_up_proj.weight", {2 * in, e});
  } else {
    expect("mlp.gate_proj.weight", {in, e});
    expect("mlp.up_proj.weight", {in, e});
  }
  expect("mlp.down_proj.weight", {e, in});
}

// Row blocks of a fused matrix (GPT-2's c_attn, Phi-3's qkv_proj and gate_up_proj), or empty.
std::vector<int> fused_blocks(const PretrainedConfig& c, const std::string& name) {
  const int qk = c.heads * c.head_dim, kv = c.kv_heads * c.head_dim;
  if (c.arch == PretrainedArch::kGpt2 && ends_with(name, "attn.c_attn.weight"))
    return {c.hidden, c.hidden, c.hidden};
  if (c.fused_projections && ends_with(name, "self_attn.qkv_proj.weight")) return {qk, kv, kv};
  if (c.fused_projections && ends_with(name, "mlp.gate_up_proj.weight"))
    return {c.intermediate, c.intermediate};
  return {};
}

// Values of every weight (norms and biases included), for the memory check before anything is allocated.
std::uint64_t weight_values(const PretrainedConfig& c) {
  const std::uint64_t e = c.hidden, qk = static_cast<std::uint64_t>(c.heads) * c.head_dim,
                      kv = static_cast<std::uint64_t>(c.kv_heads) * c.head_dim, i = c.intermediate;
  const std::uint64_t attn = e * qk + 2 * e * kv + qk * e + qk + 2 * kv + e;
  const std::uint64_t mlp = 3 * e * i + i + e, per_layer = attn + mlp + 4 * e;
  std::uint64_t n = static_cast<std::uint64_t>(c.vocab_size) * e * (c.tie_embeddings ? 1 : 2) + 2 * e;
  if (c.arch == PretrainedArch::kGpt2) n += static_cast<std::uint64_t>(c.max_positions) * e;
  return n + c.layers * per_layer;
}

std::uint64_t as_floats(std::uint64_t bytes) {
  return (bytes + 3) / 4;
}  // the memory limit's unit

// GPT-2's Conv1D weights are stored (in, out); the model keeps them (out, in) as nn.Linear does.
bool is_conv1d(const std::string& name) {
  for (const char* end : {"attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight"})
    if (ends_with(name, end)) return true;
  return false;
}

// GPT-2 checkpoints come with or without the "transformer." prefix.
std::string canonical(const std::string& given) {
  return given.rfind("transformer.", 0) == 0 ? given.substr(12) : given;
}

// The layer index and the rest of a per-layer name ("h.3.attn.c_attn.weight" → 3, "attn.c_attn.weight").
bool split_layer(const std::string& name, const std::string& prefix, int& layer, std::string& rest) {
  if (name.rfind(prefix, 0) != 0) return false;
  std::size_t i = prefix.size(), j = i;
  while (j < name.size() && std::isdigit(static_cast<unsigned char>(name[j]))) ++j;
  if (j == i || j - i > 6 || j >= name.size() || name[j] != '.') return false;
  layer = std::stoi(name.substr(i, j - i));
  rest = name.substr(j + 1);
  return true;
}

}  // namespace

Status PretrainedModel::create(const PretrainedConfig& config, PretrainedModel& out) {
  ATTN_RETURN_IF_ERROR(check_config(config));
  ATTN_RETURN_IF_ERROR(
      check_allocation(as_floats(2 * weight_values(config)), "the pretrained model's weights"));
  PretrainedModel m;
  m.config_ = config;
  const PretrainedConfig& c = config;
  const int e = c.hidden, in = c.intermediate;
  const bool gpt2 = c.arch == PretrainedArch::kGpt2;
  auto expect = [&](const std::string& name, Shape shape) {
    m.expected_.emplace_back(name, std::move(shape));
  };
  expect(gpt2 ? "wte.weight" : "model.embed_tokens.weight", {c.vocab_size, e});
  if (gpt2) expect("wpe.weight", {c.max_positions, e});
  m.layers_.resize(static_cast<std::size_t>(c.layers));
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = (gpt2 ? "h." : "model.layers.") + std::to_string(l) + ".";
    if (gpt2) {
      for (const char* n : {"ln_1", "ln_2"}) {
        expect(p + n + ".weight", {e});
        expect(p + n + ".bias", {e});
      }
      expect(p + "attn.c_attn.weight", {e, 3 * e});
      expect(p + "attn.c_attn.bias", {3 * e});
      expect(p + "attn.c_proj.weight", {e, e});
      expect(p + "attn.c_proj.bias", {e});
      expect(p + "mlp.c_fc.weight", {e, in});
      expect(p + "mlp.c_fc.bias", {in});
      expect(p + "mlp.c_proj.weight", {in, e});
      expect(p + "mlp.c_proj.bias", {e});
    } else {
      expect_llama_layer(c, p, m.expected_);
    }
    MhaConfig mc;
    mc.embed_dim = e;
    mc.num_heads = c.heads;
    mc.num_kv_heads = c.kv_heads;
    mc.head_dim = c.head_dim;
    mc.frozen = true;              // projections: views into the stored checkpoint matrices
    mc.bias = gpt2 || c.qkv_bias;  // Qwen2's o_proj has none: its out_proj.bias stays zero
    if (!gpt2 && (c.layer_rope.empty() || c.layer_rope[l])) {
      RotaryOptions r;
      const bool local = c.local_rope_theta > 0 && !c.layer_window.empty() && c.layer_window[l] > 0;
      r.base =
          local ? c.local_rope_theta : c.rope_theta;  // Gemma 3's sliding layers: their own base, unscaled
      if (!local) r.inv_freq = c.rope_inv_freq;
      r.dims = c.rotary_dims;
      mc.rope = r;
    }
    mc.qk_norm = c.qk_norm;
    mc.qk_norm_eps = c.norm_eps;
    ATTN_RETURN_IF_ERROR(MultiHeadAttention::create(mc, m.layers_[l].attn));
  }
  expect(gpt2 ? "ln_f.weight" : "model.norm.weight", {e});
  if (gpt2) expect("ln_f.bias", {e});
  if (!c.tie_embeddings) expect("lm_head.weight", {c.vocab_size, e});
  for (const auto& [name, shape] : m.expected_) m.set_[name] = false;
  out = std::move(m);
  return Status::Ok();
}

std::vector<std::string> PretrainedModel::missing_tensors() const {
  std::vector<std::string> missing;
  for (const auto& [name, shape] : expected_)
    if (!set_.at(name)) missing.push_back(name);
  return missing;
}

Status PretrainedModel::reserve(std::uint64_t bytes) const {
  return check_allocation(as_floats(bytes), "the checkpoint's weights");
}

std::uint64_t PretrainedModel::weight_bytes() const {
  std::uint64_t bytes = 0;
  for (const auto& [name, w] : stored_) bytes += w.byte_size();
  for (const auto& [name, w] : pending_) bytes += w.byte_size();
  std::uint64_t vector_floats = final_w_.data.size() + final_b_.data.size();
  for (const Layer& L : layers_)
    vector_floats += L.norm1_w.data.size() + L.norm1_b.data.size() + L.norm2_w.data.size() +
                     L.norm2_b.data.size() + L.post_attn_w.data.size() + L.post_ff_w.data.size() +
                     L.fc1_b.data.size() + L.fc2_b.data.size();
  return bytes + 4 * vector_floats;
}

Status PretrainedModel::begin_tensor(const std::string& given, const Shape& shape, WeightFormat format,
                                     void*& data) {
  const std::string name = canonical(given);
  const auto it =
      std::find_if(expected_.begin(), expected_.end(), [&](const auto& e) { return e.first == name; });
  if (it == expected_.end())
    return Status::Error(StatusCode::kUnknownParameter,
                         "this " +
                             std::string(config_.arch == PretrainedArch::kGpt2 ? "GPT-2" : "Llama-family") +
                             " model has no tensor \"" + given + "\"");
  if (shape != it->second) {
    return Status::Error(StatusCode::kShapeMismatch, "tensor \"" + given + "\" must have shape " +
                                                         shape_to_string(it->second) +
                                                         " for this config, got " + shape_to_string(shape));
  }
  pending_.erase(name);
  const auto old = stored_.find(name);
  const std::uint64_t replaced = old == stored_.end() ? 0 : old->second.byte_size();
  const std::uint64_t need =
      weight_bytes() - replaced + static_cast<std::uint64_t>(shape_numel(shape)) * format_bytes(format);
  ATTN_RETURN_IF_ERROR(check_allocation(as_floats(need), "the pretrained model's weights"));
  StoredWeight w;
  ATTN_RETURN_IF_ERROR(StoredWeight::allocate(shape, format, "a checkpoint tensor", w));
  data = (pending_[name] = std::move(w)).bytes();
  return Status::Ok();
}

Status PretrainedModel::end_tensor(const std::string& given) {
  const std::string name = canonical(given);
  const auto it = pending_.find(name);
  if (it == pending_.end()) return invalid("tensor \"" + given + "\" was not begun (begin_tensor first)");
  StoredWeight w = std::move(it->second);
  pending_.erase(it);
  ATTN_RETURN_IF_ERROR(w.check_finite(given.c_str()));
  if (config_.arch == PretrainedArch::kGpt2 && is_conv1d(name)) ATTN_RETURN_IF_ERROR(w.transpose());
  // float32 matrices into the GEMM's layout, unless a fused matrix's blocks would be cut mid-panel.
  const std::vector<int> blocks = fused_blocks(config_, name);
  if (std::all_of(blocks.begin(), blocks.end(), StoredWeight::packable)) w.pack_for_linear();
  stored_[name] = std::move(w);
  const Status st = use(name);
  set_[name] = st.ok();
  return st;
}

Status PretrainedModel::set_tensor(const std::string& name, const Tensor& value) {
  ATTN_RETURN_IF_ERROR(check_well_formed(value, name.c_str()));
  void* data = nullptr;
  ATTN_RETURN_IF_ERROR(begin_tensor(name, value.shape, WeightFormat::kF32, data));
  std::memcpy(data, value.data.data(), value.data.size() * sizeof(float));
  return end_tensor(name);
}

// A vector (norm weight or bias) widened into its float32 place; the stored copy is dropped.
// Matrices stay stored and are read through views.
Status PretrainedModel::use(const std::string& name) {
  const StoredWeight& stored = stored_.at(name);
  const bool gpt2 = config_.arch == PretrainedArch::kGpt2;
  int l = 0;
  std::string r;
  const bool in_layer = split_layer(name, gpt2 ? "h." : "model.layers.", l, r);
  if (stored.shape().size() == 1) {
    Tensor v = stored.widened();
    if (config_.norm_weight_offset != 0 &&
        ends_with(name, "norm.weight"))  // Gemma 3: (1 + w), as its RMSNorm computes it in float32
      for (float& w : v.data) w += config_.norm_weight_offset;
    stored_.erase(name);
    if (name == "ln_f.weight" || name == "model.norm.weight")
      final_w_ = v;
    else if (name == "ln_f.bias")
      final_b_ = v;
    else if (in_layer)
      return use_layer_vector(layers_[l], r, v);
    return Status::Ok();
  }
  const WeightView w = stored.view();
  if (name == "wte.weight" || name == "model.embed_tokens.weight")
    embed_ = w;
  else if (name == "wpe.weight")
    positions_ = w;
  else if (name == "lm_head.weight")
    head_ = w;
  else if (in_layer)
    return use_layer_matrix(layers_[l], r, w);
  return Status::Ok();
}

Status PretrainedModel::use_layer_matrix(Layer& L, const std::string& r, const WeightView& w) {
  MultiHeadAttention& a = L.attn;
  if (r == "attn.c_attn.weight") {  // (3E, E) after the transpose: [W_q; W_k; W_v]
    const int e = config_.hidden;
    ATTN_RETURN_IF_ERROR(a.set_weight_view("q_proj_weight", w.row_block(0, e)));
    ATTN_RETURN_IF_ERROR(a.set_weight_view("k_proj_weight", w.row_block(e, e)));
    return a.set_weight_view("v_proj_weight", w.row_block(2 * e, e));
  }
  if (r == "self_attn.qkv_proj.weight") {  // Phi-3: (H·d + 2·H_kv·d, E) = [W_q; W_k; W_v]
    const int qk = config_.heads * config_.head_dim, kv = config_.kv_heads * config_.head_dim;
    ATTN_RETURN_IF_ERROR(a.set_weight_view("q_proj_weight", w.row_block(0, qk)));
    ATTN_RETURN_IF_ERROR(a.set_weight_view("k_proj_weight", w.row_block(qk, kv)));
    return a.set_weight_view("v_proj_weight", w.row_block(qk + kv, kv));
  }
  if (r == "mlp.gate_up_proj.weight") {  // Phi-3: (2I, E) = [W_gate; W_up]
    L.gate = w.row_block(0, config_.intermediate);
    L.up = w.row_block(config_.intermediate, config_.intermediate);
    return Status::Ok();
  }
  if (r == "attn.c_proj.weight" || r == "self_attn.o_proj.weight")
    return a.set_weight_view("out_proj.weight", w);
  if (r == "self_attn.q_proj.weight") return a.set_weight_view("q_proj_weight", w);
  if (r == "self_attn.k_proj.weight") return a.set_weight_view("k_proj_weight", w);
  if (r == "self_attn.v_proj.weight") return a.set_weight_view("v_proj_weight", w);
  if (r == "mlp.c_fc.weight")
    L.fc1 = w;
  else if (r == "mlp.c_proj.weight")
    L.fc2 = w;
  else if (r == "mlp.gate_proj.weight")
    L.gate = w;
  else if (r == "mlp.up_proj.weight")
    L.up = w;
  else if (r == "mlp.down_proj.weight")
    L.down = w;
  return Status::Ok();
}

const Tensor* PretrainedModel::layer_norm_slot(const Layer& L, const std::string& r) const {
  if (r == "ln_1.weight" || r == "input_layernorm.weight") return &L.norm1_w;
  if (r == "ln_1.bias") return &L.norm1_b;
  if (r == "ln_2.weight" || r == "pre_feedforward_layernorm.weight") return &L.norm2_w;
  if (r == "ln_2.bias") return &L.norm2_b;
  // Llama's post_attention_layernorm is the norm before its MLP; with post-norms it is the attention's output
  // norm.
  if (r == "post_attention_layernorm.weight") return config_.post_norms ? &L.post_attn_w : &L.norm2_w;
  if (r == "post_feedforward_layernorm.weight") return &L.post_ff_w;
  return nullptr;
}

Status PretrainedModel::use_layer_vector(Layer& L, const std::string& r, const Tensor& v) {
  MultiHeadAttention& a = L.attn;
  if (const Tensor* slot = layer_norm_slot(L, r))
    *const_cast<Tensor*>(slot) = v;  // L is ours to change here
  else if (r == "self_attn.q_norm.weight")
    return a.set_qk_norm_weight(false, v);
  else if (r == "self_attn.k_norm.weight")
    return a.set_qk_norm_weight(true, v);
  else if (r == "mlp.c_fc.bias")
    L.fc1_b = v;
  else if (r == "mlp.c_proj.bias")
    L.fc2_b = v;
  else if (r == "attn.c_attn.bias")
    return a.set_parameter("in_proj_bias", v);
  else if (r == "attn.c_proj.bias")
    return a.set_parameter("out_proj.bias", v);
  else {  // q/k/v biases (Qwen2): their segment of in_proj_bias [b_q; b_k; b_v]
    Tensor bias;
    ATTN_RETURN_IF_ERROR(a.get_parameter("in_proj_bias", bias));
    const int qk = config_.heads * config_.head_dim, kv = config_.kv_heads * config_.head_dim;
    const int at = r == "self_attn.q_proj.bias" ? 0 : r == "self_attn.k_proj.bias" ? qk : qk + kv;
    std::copy(v.data.begin(), v.data.end(), bias.data.begin() + at);
    return a.set_parameter("in_proj_bias", bias);
  }
  return Status::Ok();
}

}  // namespace attn

namespace attn {

Status PretrainedModel::read_rows(const std::string& given, int first, int count,
                                  std::vector<float>& out) const {
  const std::string name = canonical(given);
  const auto known = set_.find(name);
  if (known == set_.end()) return invalid("this model has no tensor \"" + given + "\"");
  if (!known->second) return invalid("tensor \"" + given + "\" was never set");
  const Shape* shape = nullptr;
  for (const auto& [n, s] : expected_)
    if (n == name) shape = &s;
  const bool matrix = shape->size() == 2;
  const int rows = matrix ? static_cast<int>((*shape)[0]) : 1;
  const int cols = matrix ? static_cast<int>((*shape)[1]) : static_cast<int>((*shape)[0]);
  if (first < 0 || count < 0 || first > rows || count > rows - first)
    return invalid("rows [" + std::to_string(first) + ", " + std::to_string(first + count) +
                   ") are outside tensor \"" + given + "\"'s " + std::to_string(rows) + " rows");
  if (matrix) {
    const WeightView w = stored_.at(name).view();  // GPT-2's Conv1D weights already transposed: (out, in)
    out.assign(static_cast<std::size_t>(count) * w.cols, 0.0f);
    for (int r = 0; r < count; ++r) w.widen_row(first + r, out.data() + static_cast<std::size_t>(r) * w.cols);
    return Status::Ok();
  }
  // A vector: widened into its place by use().
  Tensor v;
  const bool gpt2 = config_.arch == PretrainedArch::kGpt2;
  int l = 0;
  std::string r;
  if (name == "ln_f.weight" || name == "model.norm.weight")
    v = final_w_;
  else if (name == "ln_f.bias")
    v = final_b_;
  else if (split_layer(name, gpt2 ? "h." : "model.layers.", l, r)) {
    const Layer& L = layers_[static_cast<std::size_t>(l)];
    if (const Tensor* slot = layer_norm_slot(L, r))
      v = *slot;
    else if (r == "mlp.c_fc.bias")
      v = L.fc1_b;
    else if (r == "mlp.c_proj.bias")
      v = L.fc2_b;
    else if (r == "attn.c_proj.bias")
      ATTN_RETURN_IF_ERROR(L.attn.get_parameter("out_proj.bias", v));
    else if (r == "attn.c_attn.bias")
      ATTN_RETURN_IF_ERROR(L.attn.get_parameter("in_proj_bias", v));
    else
      return invalid("tensor \"" + given + "\" cannot be read back");
  } else {
    return invalid("tensor \"" + given + "\" cannot be read back");
  }
  if (static_cast<int>(v.data.size()) != cols) return invalid("tensor \"" + given + "\" cannot be read back");
  out = v.data;
  return Status::Ok();
}

}  // namespace attn
