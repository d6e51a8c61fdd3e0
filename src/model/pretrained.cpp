// PretrainedModel (pretrained.h): the tensors a Hugging Face checkpoint holds, mapped onto the
// library's MultiHeadAttention and kernels, and the forward pass in numbered steps.
#include "model/pretrained.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "core/memory_limit.h"
#include "kernels/kernels.h"
#include "model/layers.h"

namespace attn {

namespace {

Status invalid(const std::string& what) { return Status::Error(StatusCode::kInvalidArgument, what); }

constexpr int kMaxSize = 1 << 20;  // any width, vocabulary or length above this is not a real checkpoint

Status check_config(const PretrainedConfig& c) {
  const struct {
    const char* name;
    int value;
  } sizes[] = {{"vocab_size", c.vocab_size},     {"hidden_size", c.hidden},          {"num_hidden_layers", c.layers},
               {"num_attention_heads", c.heads}, {"num_key_value_heads", c.kv_heads}, {"head_dim", c.head_dim},
               {"intermediate_size", c.intermediate}, {"max_position_embeddings", c.max_positions}};
  for (const auto& s : sizes)
    if (s.value < 1 || s.value > kMaxSize)
      return invalid(std::string("config ") + s.name + " must be in [1, " + std::to_string(kMaxSize) + "], got " +
                     std::to_string(s.value));
  if (c.layers > 1024) return invalid("config num_hidden_layers must be at most 1024, got " + std::to_string(c.layers));
  if (c.heads % c.kv_heads != 0) {
    return Status::Error(StatusCode::kHeadsDoNotDivide, "num_key_value_heads " + std::to_string(c.kv_heads) +
                                                            " does not divide num_attention_heads " + std::to_string(c.heads));
  }
  if (!(c.norm_eps > 0) || !std::isfinite(c.norm_eps)) return invalid("config norm epsilon must be a finite number > 0");
  if (c.arch == PretrainedArch::kLlama && (c.head_dim % 2 != 0 || !(c.rope_theta > 0)))
    return invalid("Llama-family models need an even head_dim and rope_theta > 0");
  if (c.arch == PretrainedArch::kGpt2 && c.head_dim * c.heads != c.hidden)
    return invalid("GPT-2: n_head must divide n_embd (head size n_embd / n_head)");
  return Status::Ok();
}

// Floats of every weight (for the memory limit before anything is allocated), the attention
// modules' packed copies included.
std::uint64_t weight_floats(const PretrainedConfig& c) {
  const std::uint64_t e = c.hidden, qk = static_cast<std::uint64_t>(c.heads) * c.head_dim,
                      kv = static_cast<std::uint64_t>(c.kv_heads) * c.head_dim, i = c.intermediate;
  const std::uint64_t attn = 2 * (e * qk + 2 * e * kv + qk * e) + 2 * (qk + 2 * kv + e);
  const std::uint64_t mlp = 3 * e * i + i + e, per_layer = attn + mlp + 4 * e;
  std::uint64_t n = static_cast<std::uint64_t>(c.vocab_size) * e * (c.tie_embeddings ? 1 : 2) + 2 * e;
  if (c.arch == PretrainedArch::kGpt2) n += static_cast<std::uint64_t>(c.max_positions) * e;
  return n + c.layers * per_layer;
}

Tensor transposed(const Tensor& t) {  // (r, c) → (c, r)
  const int r = t.dim(0), c = t.dim(1);
  Tensor out({c, r}, std::vector<float>(t.data.size()));
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j) out.data[static_cast<std::size_t>(j) * r + i] = t.data[static_cast<std::size_t>(i) * c + j];
  return out;
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
  ATTN_RETURN_IF_ERROR(check_allocation(weight_floats(config), "the pretrained model's weights"));
  PretrainedModel m;
  m.config_ = config;
  const PretrainedConfig& c = config;
  const int e = c.hidden, qk = c.heads * c.head_dim, kv = c.kv_heads * c.head_dim, in = c.intermediate;
  const bool gpt2 = c.arch == PretrainedArch::kGpt2;
  auto expect = [&](const std::string& name, Shape shape) { m.expected_.emplace_back(name, std::move(shape)); };
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
      expect(p + "input_layernorm.weight", {e});
      expect(p + "post_attention_layernorm.weight", {e});
      for (const auto& [n, rows] : {std::pair<const char*, int>{"q_proj", qk}, {"k_proj", kv}, {"v_proj", kv}}) {
        expect(p + "self_attn." + n + ".weight", {rows, e});
        if (c.qkv_bias) expect(p + "self_attn." + n + ".bias", {rows});
      }
      expect(p + "self_attn.o_proj.weight", {e, qk});
      expect(p + "mlp.gate_proj.weight", {in, e});
      expect(p + "mlp.up_proj.weight", {in, e});
      expect(p + "mlp.down_proj.weight", {e, in});
    }
    MhaConfig mc;
    mc.embed_dim = e;
    mc.num_heads = c.heads;
    mc.num_kv_heads = c.kv_heads;
    mc.head_dim = c.head_dim;
    mc.bias = gpt2 || c.qkv_bias;  // Qwen2's o_proj has none: its out_proj.bias stays zero
    if (!gpt2) {
      RotaryOptions r;
      r.base = c.rope_theta;
      r.inv_freq = c.rope_inv_freq;
      mc.rope = r;
    }
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

Status PretrainedModel::set_tensor(const std::string& given, const Tensor& value) {
  // GPT-2 checkpoints come with or without the "transformer." prefix.
  const std::string name = given.rfind("transformer.", 0) == 0 ? given.substr(12) : given;
  const auto it = std::find_if(expected_.begin(), expected_.end(), [&](const auto& e) { return e.first == name; });
  if (it == expected_.end())
    return Status::Error(StatusCode::kUnknownParameter, "this " + std::string(config_.arch == PretrainedArch::kGpt2 ? "GPT-2" : "Llama-family") +
                                                            " model has no tensor \"" + given + "\"");
  ATTN_RETURN_IF_ERROR(check_well_formed(value, name.c_str()));
  if (value.shape != it->second) {
    return Status::Error(StatusCode::kShapeMismatch, "tensor \"" + given + "\" must have shape " +
                                                         shape_to_string(it->second) + " for this config, got " +
                                                         shape_to_string(value.shape));
  }
  ATTN_RETURN_IF_ERROR(check_finite(value, name.c_str()));
  ATTN_RETURN_IF_ERROR(assign(name, value));
  set_[name] = true;
  return Status::Ok();
}

Status PretrainedModel::assign(const std::string& name, const Tensor& v) {
  int l = 0;
  std::string r;
  const bool gpt2 = config_.arch == PretrainedArch::kGpt2;
  if (name == "wte.weight" || name == "model.embed_tokens.weight") embed_ = v;
  else if (name == "wpe.weight") positions_ = v;
  else if (name == "ln_f.weight" || name == "model.norm.weight") final_w_ = v;
  else if (name == "ln_f.bias") final_b_ = v;
  else if (name == "lm_head.weight") head_ = v;
  else if (split_layer(name, gpt2 ? "h." : "model.layers.", l, r)) {
    Layer& L = layers_[l];
    MultiHeadAttention& a = L.attn;
    if (r == "ln_1.weight" || r == "input_layernorm.weight") L.norm1_w = v;
    else if (r == "ln_1.bias") L.norm1_b = v;
    else if (r == "ln_2.weight" || r == "post_attention_layernorm.weight") L.norm2_w = v;
    else if (r == "ln_2.bias") L.norm2_b = v;
    else if (r == "attn.c_attn.weight") return a.set_parameter("in_proj_weight", transposed(v));
    else if (r == "attn.c_attn.bias") return a.set_parameter("in_proj_bias", v);
    else if (r == "attn.c_proj.weight" || r == "self_attn.o_proj.weight")
      return a.set_parameter("out_proj.weight", gpt2 ? transposed(v) : v);
    else if (r == "attn.c_proj.bias") return a.set_parameter("out_proj.bias", v);
    else if (r == "mlp.c_fc.weight") L.fc1 = transposed(v);
    else if (r == "mlp.c_fc.bias") L.fc1_b = v;
    else if (r == "mlp.c_proj.weight") L.fc2 = transposed(v);
    else if (r == "mlp.c_proj.bias") L.fc2_b = v;
    else if (r == "mlp.gate_proj.weight") L.gate = v;
    else if (r == "mlp.up_proj.weight") L.up = v;
    else if (r == "mlp.down_proj.weight") L.down = v;
    else if (r == "self_attn.q_proj.weight") return a.set_parameter("q_proj_weight", v);
    else if (r == "self_attn.k_proj.weight") return a.set_parameter("k_proj_weight", v);
    else if (r == "self_attn.v_proj.weight") return a.set_parameter("v_proj_weight", v);
    else {  // q/k/v biases: their segment of in_proj_bias [b_q; b_k; b_v]
      Tensor bias;
      ATTN_RETURN_IF_ERROR(a.get_parameter("in_proj_bias", bias));
      const int qk = config_.heads * config_.head_dim, kv = config_.kv_heads * config_.head_dim;
      const int at = r == "self_attn.q_proj.bias" ? 0 : r == "self_attn.k_proj.bias" ? qk : qk + kv;
      std::copy(v.data.begin(), v.data.end(), bias.data.begin() + at);
      return a.set_parameter("in_proj_bias", bias);
    }
  }
  return Status::Ok();
}

// y (rows, E) = LayerNorm (GPT-2, weight and bias) or RMSNorm (Llama: x / rms(x) · w, in double).
void PretrainedModel::norm(const Tensor& w, const Tensor& b, std::int64_t rows, const float* x, float* y) const {
  const int e = config_.hidden;
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * e;
    float* yr = y + r * e;
    if (config_.arch == PretrainedArch::kGpt2) {
      kernels::layer_norm_row(e, xr, w.data.data(), b.data.data(), static_cast<float>(config_.norm_eps), yr);
      continue;
    }
    double ss = 0;
    for (int i = 0; i < e; ++i) ss += static_cast<double>(xr[i]) * xr[i];
    const double inv = 1.0 / std::sqrt(ss / e + config_.norm_eps);
    for (int i = 0; i < e; ++i) yr[i] = static_cast<float>(xr[i] * inv) * w.data[i];
  }
}

// y (rows, E) = GPT-2: c_proj(gelu_tanh(c_fc(x)));  Llama: down(silu(gate(x)) · up(x)).
void PretrainedModel::mlp(const Layer& L, std::int64_t rows, const float* x, float* y) const {
  const int e = config_.hidden, in = config_.intermediate, m = static_cast<int>(rows);
  std::vector<float> h(static_cast<std::size_t>(rows) * in);  // h: (rows, I)
  if (config_.arch == PretrainedArch::kGpt2) {
    kernels::linear_nt(m, in, e, x, e, L.fc1.data.data(), e, L.fc1_b.data.data(), h.data(), in);
    for (float& v : h) {  // "gelu_new": 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
      const double d = v;
      v = static_cast<float>(0.5 * d * (1.0 + std::tanh(0.7978845608028654 * (d + 0.044715 * d * d * d))));
    }
    kernels::linear_nt(m, e, in, h.data(), in, L.fc2.data.data(), in, L.fc2_b.data.data(), y, e);
    return;
  }
  std::vector<float> u(h.size());  // u: (rows, I)
  kernels::linear_nt(m, in, e, x, e, L.gate.data.data(), e, nullptr, h.data(), in);
  kernels::linear_nt(m, in, e, x, e, L.up.data.data(), e, nullptr, u.data(), in);
  for (std::size_t i = 0; i < h.size(); ++i) {
    const double g = h[i];
    h[i] = static_cast<float>(g / (1.0 + std::exp(-g))) * u[i];
  }
  kernels::linear_nt(m, e, in, h.data(), in, L.down.data.data(), in, nullptr, y, e);
}

void PretrainedModel::lens_row(std::int64_t rows, const float* normed, PretrainedForwardResult& r) const {
  const int v = config_.vocab_size, e = config_.hidden;
  const Tensor& head = config_.tie_embeddings ? embed_ : head_;
  std::vector<float> logits(static_cast<std::size_t>(v));  // one position's logits at a time: (V)
  for (std::int64_t i = 0; i < rows; ++i) {
    kernels::linear_nt(1, v, e, normed + i * e, e, head.data.data(), e, nullptr, logits.data(), v);
    const int top = static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    double z = 0;
    for (float x : logits) z += std::exp(static_cast<double>(x) - logits[top]);
    r.lens_ids.push_back(top);
    r.lens_probs.push_back(static_cast<float>(1.0 / z));
  }
}

Status PretrainedModel::create_caches(int max_length, int batch, std::vector<KvCache>& caches) const {
  if (max_length > config_.max_positions)
    return Status::Error(StatusCode::kTooLarge, "a cache of " + std::to_string(max_length) + " tokens is above the model's " +
                                                    std::to_string(config_.max_positions) + " positions");
  std::vector<KvCache> made(layers_.size());
  for (std::size_t l = 0; l < layers_.size(); ++l) ATTN_RETURN_IF_ERROR(layers_[l].attn.create_cache(max_length, batch, made[l]));
  caches = std::move(made);
  return Status::Ok();
}

Status PretrainedModel::forward(int b, int t, const std::vector<std::int32_t>& ids, const PretrainedForwardOptions& o,
                                PretrainedForwardResult& result, std::vector<KvCache>* caches) {
  const PretrainedConfig& c = config_;
  if (caches && caches->size() != layers_.size()) return invalid("one KV cache per layer is needed");
  const int p0 = caches ? (*caches)[0].length : 0;  // the position of row 0
  // A call that fails after some layers appended leaves every cache as it found it.
  struct Restore {
    std::vector<KvCache>* caches;
    int length;
    bool done = false;
    ~Restore() {
      if (caches && !done)
        for (KvCache& k : *caches) k.length = length;
    }
  } restore{caches, p0};
  const std::vector<std::string> missing = missing_tensors();
  if (!missing.empty()) return invalid("the checkpoint is missing tensor \"" + missing.front() + "\"");
  if (b < 1 || t < 1 || static_cast<std::int64_t>(b) * t != static_cast<std::int64_t>(ids.size()))
    return Status::Error(StatusCode::kShapeMismatch, "ids must be a non-empty (B, T) batch");
  if (p0 + t > c.max_positions)
    return Status::Error(StatusCode::kTooLarge, "T = " + std::to_string(p0 + t) + " is above the model's " +
                                                    std::to_string(c.max_positions) + " positions");
  for (std::int32_t id : ids)
    if (id < 0 || id >= c.vocab_size)
      return invalid("token id " + std::to_string(id) + " is outside [0, " + std::to_string(c.vocab_size) + ")");
  const std::int64_t n = static_cast<std::int64_t>(b) * t;
  const int e = c.hidden;
  std::uint64_t need = static_cast<std::uint64_t>(n) * (6 * e + 2 * c.intermediate + c.vocab_size);
  need += static_cast<std::uint64_t>(o.attention_layers.size()) * b * c.heads * t * t;
  if (o.hidden_states) need += static_cast<std::uint64_t>(n) * e * (c.layers + 1);
  if (o.logit_lens) need += static_cast<std::uint64_t>(n) * 2 * (c.layers + 1) + c.vocab_size;
  const Status mem = check_allocation(need, "the pretrained forward");
  if (!mem.ok()) return Status::Error(StatusCode::kTooLarge, mem.message + " (ask for fewer layers: attention: [layers])");
  // 1. x (N, E) = the token embeddings (+ the learned positions, GPT-2)
  std::vector<float> x(static_cast<std::size_t>(n) * e), h(x.size()), out(x.size());
  embedding_forward(n, ids.data(), embed_.data.data(), e, x.data());
  if (c.arch == PretrainedArch::kGpt2)
    for (std::int64_t r = 0; r < n; ++r)
      kernels::add_vec(e, x.data() + r * e, positions_.data.data() + (p0 + r % t) * e, x.data() + r * e);
  result.attention.assign(static_cast<std::size_t>(c.layers), Tensor());
  result.traces.assign(static_cast<std::size_t>(c.layers), Trace());
  result.hidden_states.clear();
  auto keep_hidden = [&](const std::vector<float>& v) {
    if (o.hidden_states) result.hidden_states.emplace_back(Shape{b, t, e}, v);
  };
  const auto lens = [&](const std::vector<float>& stream) {  // the stream through the final norm and the head
    if (!o.logit_lens) return;
    norm(final_w_, final_b_, n, stream.data(), h.data());
    lens_row(n, h.data(), result);
  };
  result.lens_ids.clear();
  result.lens_probs.clear();
  keep_hidden(x);
  lens(x);
  const auto wants = [](const std::vector<int>& list, int l) { return std::find(list.begin(), list.end(), l) != list.end(); };
  // 2. The blocks: x += attn(norm1(x)); x += mlp(norm2(x))
  for (int l = 0; l < c.layers; ++l) {
    Layer& L = layers_[l];
    norm(L.norm1_w, L.norm1_b, n, x.data(), h.data());
    MhaForwardOptions mo;
    mo.causal = true;
    mo.need_weights = wants(o.attention_layers, l);
    mo.average_weights = false;
    MhaResult r;
    const Tensor query({b, t, e}, h);
    Trace* trace = wants(o.trace_layers, l) ? &result.traces[l] : nullptr;
    ATTN_RETURN_IF_ERROR(caches ? L.attn.forward_cached(query, (*caches)[l], mo, r, trace)
                                : L.attn.forward(query, nullptr, nullptr, mo, r, trace));
    if (mo.need_weights) result.attention[l] = std::move(r.weights);
    kernels::add_vec(static_cast<int>(x.size()), x.data(), r.output.data.data(), x.data());
    norm(L.norm2_w, L.norm2_b, n, x.data(), h.data());
    mlp(L, n, h.data(), out.data());
    kernels::add_vec(static_cast<int>(x.size()), x.data(), out.data(), x.data());
    if (l + 1 < c.layers) {
      keep_hidden(x);
      lens(x);
    }
  }
  // 3. The final norm; logits (N, V) = x · W_headᵀ (the embedding when tied)
  norm(final_w_, final_b_, n, x.data(), h.data());
  keep_hidden(h);
  result.logits = Tensor({b, t, c.vocab_size}, std::vector<float>(static_cast<std::size_t>(n) * c.vocab_size));
  const Tensor& head = c.tie_embeddings ? embed_ : head_;
  kernels::linear_nt(static_cast<int>(n), c.vocab_size, e, h.data(), e, head.data.data(), e, nullptr,
                     result.logits.data.data(), c.vocab_size);
  if (o.logit_lens) lens_row(n, h.data(), result);  // the last row: the model's own prediction
  ATTN_RETURN_IF_ERROR(check_computed(result.logits.data.data(), result.logits.data.size(), "the pretrained forward: the logits"));
  restore.done = true;
  return Status::Ok();
}

}  // namespace attn
