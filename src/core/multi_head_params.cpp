// MultiHeadAttention: configuration, initialisation and the PyTorch-named parameters.
#include <atomic>
#include <cmath>
#include <string>

#include "core/memory_limit.h"
#include "core/multi_head.h"
#include "core/multi_head_steps.h"
#include "core/rng.h"
#include "kernels/kernels.h"

namespace attn {

namespace {

std::string dims_message(const MhaConfig& c) {
  return "numHeads " + std::to_string(c.num_heads) + " does not divide embedDim " +
         std::to_string(c.embed_dim) + " (give headDim explicitly to use other head sizes)";
}

Status check_config(const MhaConfig& c) {
  if (c.embed_dim <= 0) {
    return Status::Error(StatusCode::kInvalidArgument,
                         "embedDim must be > 0, got " + std::to_string(c.embed_dim));
  }
  if (c.num_heads <= 0) {
    return Status::Error(StatusCode::kInvalidArgument,
                         "numHeads must be > 0, got " + std::to_string(c.num_heads));
  }
  if (c.head_dim == 0 && c.embed_dim % c.num_heads != 0) {
    return Status::Error(StatusCode::kHeadsDoNotDivide, dims_message(c));
  }
  for (auto [value, name] : {std::pair{c.kdim, "kdim"},
                             {c.vdim, "vdim"},
                             {c.head_dim, "headDim"},
                             {c.value_head_dim, "valueHeadDim"}}) {
    if (value < 0) {
      return Status::Error(StatusCode::kInvalidArgument,
                           std::string(name) + " must be >= 0 (0 = default), got " + std::to_string(value));
    }
  }
  const int kv = c.num_kv_heads ? c.num_kv_heads : c.num_heads;
  if (kv <= 0)
    return Status::Error(StatusCode::kInvalidArgument, "numKVHeads must be >= 1, got " + std::to_string(kv));
  if (c.num_heads % kv != 0) {
    return Status::Error(
        StatusCode::kHeadsDoNotDivide,
        "numKVHeads " + std::to_string(kv) + " does not divide numHeads " + std::to_string(c.num_heads));
  }
  if (c.rope && c.rope->offset != 0) {
    return Status::Error(
        StatusCode::kInvalidArgument,
        "rope has no offset of its own: positions come from the forward's positionOffset (or the KV cache)");
  }
  if (!(c.layer_norm_eps > 0.0f)) {
    return Status::Error(StatusCode::kInvalidArgument,
                         "layerNorm eps must be > 0, got " + format_number(c.layer_norm_eps));
  }
  return Status::Ok();
}

// Uniform(-a, a) weights, one independent stream per parameter (tag).
Tensor uniform_tensor(Shape shape, std::uint64_t seed, std::uint64_t tag, float a) {
  Tensor t = Tensor::zeros(std::move(shape));
  const std::uint64_t stream = mix64(seed ^ mix64(tag));
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = uniform_symmetric(stream, i, a);
  return t;
}

Tensor normal_tensor(Shape shape, std::uint64_t seed, std::uint64_t tag, float stddev) {
  Tensor t = Tensor::zeros(std::move(shape));
  const std::uint64_t stream = mix64(seed ^ mix64(tag));
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = stddev * approx_normal(stream, i);
  return t;
}

// A value no module has had: a MhaSaved from one module or weight set never matches another.
std::uint64_t next_parameter_version() {
  static std::atomic<std::uint64_t> counter{0};
  return ++counter;
}

float xavier_bound(int fan_in, int fan_out) {
  return std::sqrt(6.0f / static_cast<float>(fan_in + fan_out));
}

}  // namespace

Status MultiHeadAttention::create(const MhaConfig& config, MultiHeadAttention& out) {
  ATTN_RETURN_IF_ERROR(check_config(config));
  MultiHeadAttention m;
  m.config_ = config;
  const int e = config.embed_dim, h = config.num_heads;
  m.head_dim_ = config.head_dim ? config.head_dim : e / h;
  m.value_head_dim_ = config.value_head_dim ? config.value_head_dim : m.head_dim_;
  m.kdim_ = config.kdim ? config.kdim : e;
  m.vdim_ = config.vdim ? config.vdim : e;
  m.kv_heads_ = config.num_kv_heads ? config.num_kv_heads : h;
  if (config.rope) ATTN_RETURN_IF_ERROR(check_rotary(*config.rope, m.head_dim_));
  ATTN_RETURN_IF_ERROR(check_query_temperature(config.query_temperature));
  if (config.query_temperature.active() && !config.rope)
    return Status::Error(StatusCode::kInvalidArgument,
                         "the query temperature is applied after RoPE: set rope");
  if (config.qk_norm != MhaConfig::QkNorm::kNone && !config.frozen)
    return Status::Error(StatusCode::kInvalidArgument, "a q/k norm needs a frozen (inference-only) module");
  if (config.output_gate && !config.frozen)
    return Status::Error(StatusCode::kInvalidArgument,
                         "an output gate needs a frozen (inference-only) module");
  if (!(config.qk_norm_eps > 0) || !std::isfinite(config.qk_norm_eps))
    return Status::Error(StatusCode::kInvalidArgument, "the q/k norm epsilon must be a finite number > 0");
  if ((config.v_norm || config.shared_kv) && !config.frozen)
    return Status::Error(StatusCode::kInvalidArgument,
                         "a value norm or shared keys and values need a frozen (inference-only) module");
  const int qk = h * m.head_dim_, vo = h * m.value_head_dim_;
  const int kqk = m.kv_heads_ * m.head_dim_, kvo = m.kv_heads_ * m.value_head_dim_;  // key/value widths
  // All parameters and their packed copies, counted in 64 bits before anything is allocated.
  const std::uint64_t params =
      static_cast<std::uint64_t>(qk) * (e + 1) + static_cast<std::uint64_t>(kqk) * (m.kdim_ + 2) +
      static_cast<std::uint64_t>(kvo) * (m.vdim_ + 2) + static_cast<std::uint64_t>(vo) * e + 3ull * e;
  const std::uint64_t projections =
      static_cast<std::uint64_t>(qk) * e + static_cast<std::uint64_t>(kqk) * m.kdim_ +
      static_cast<std::uint64_t>(kvo) * m.vdim_ + static_cast<std::uint64_t>(vo) * e;
  ATTN_RETURN_IF_ERROR(check_allocation(config.frozen ? params - projections : params + m.packed_floats(),
                                        "multi-head attention parameters"));
  // Initialisation as PyTorch: xavier-uniform projections (over the packed matrix when packed),
  // zero biases, out_proj U(±1/sqrt(in)), bias_k/bias_v xavier-normal; portable RNG.
  const bool packed = m.packed_in_proj();
  const std::uint64_t seed = config.seed;
  const float packed_bound = xavier_bound(e, 2 * qk + vo);
  if (!config.frozen) {  // a frozen module's projections are views set later (set_weight_view)
    m.w_q_ = uniform_tensor({qk, e}, seed, 1, packed ? packed_bound : xavier_bound(e, qk));
    m.w_k_ = uniform_tensor({kqk, m.kdim_}, seed, 2, packed ? packed_bound : xavier_bound(m.kdim_, kqk));
    m.w_v_ = uniform_tensor({kvo, m.vdim_}, seed, 3, packed ? packed_bound : xavier_bound(m.vdim_, kvo));
    m.w_o_ = uniform_tensor({e, vo}, seed, 4, 1.0f / std::sqrt(static_cast<float>(vo)));
  }
  if (config.bias) {
    m.b_q_ = Tensor::zeros({qk});
    m.b_k_ = Tensor::zeros({kqk});
    m.b_v_ = Tensor::zeros({kvo});
    m.b_o_ = Tensor::zeros({e});
  }
  if (config.add_bias_kv) {
    m.bias_k_ = normal_tensor({1, 1, kqk}, seed, 5, 1.0f / std::sqrt(static_cast<float>(kqk)));
    m.bias_v_ = normal_tensor({1, 1, kvo}, seed, 6, 1.0f / std::sqrt(static_cast<float>(kvo)));
  }
  if (config.layer_norm) {
    m.ln_weight_ = Tensor({e}, std::vector<float>(e, 1.0f));
    m.ln_bias_ = Tensor::zeros({e});
  }
  if (!config.frozen) m.pack_weights();
  m.parameter_version_ = next_parameter_version();
  out = std::move(m);
  return Status::Ok();
}

std::uint64_t MultiHeadAttention::packed_floats() const {
  const int e = config_.embed_dim, qk = config_.num_heads * head_dim_,
            vo = config_.num_heads * value_head_dim_, kqk = kv_heads_ * head_dim_,
            kvo = kv_heads_ * value_head_dim_;
  return static_cast<std::uint64_t>(
      kernels::packed_weight_floats(qk, e) + kernels::packed_weight_floats(kqk, kdim_) +
      kernels::packed_weight_floats(kvo, vdim_) + kernels::packed_weight_floats(e, vo));
}

namespace {

// packed = W (N, K) in the GEMM's layout; same size as before when only W's values changed.
void pack_into(const Tensor& w, std::vector<float>& packed) {
  const int n = w.dim(0), k = w.dim(1);
  packed.resize(static_cast<std::size_t>(kernels::packed_weight_floats(n, k)));
  kernels::pack_weight(n, k, w.data.data(), k, packed.data());
}

}  // namespace

void MultiHeadAttention::pack_weights() {
  pack_into(w_q_, packed_q_);
  pack_into(w_k_, packed_k_);
  pack_into(w_v_, packed_v_);
  pack_into(w_o_, packed_o_);
}

std::vector<std::string> MultiHeadAttention::parameter_names() const {
  std::vector<std::string> names;
  if (packed_in_proj()) {
    names.push_back("in_proj_weight");
  } else {
    names.insert(names.end(), {"q_proj_weight", "k_proj_weight", "v_proj_weight"});
  }
  if (config_.bias) names.push_back("in_proj_bias");
  if (config_.add_bias_kv) names.insert(names.end(), {"bias_k", "bias_v"});
  names.push_back("out_proj.weight");
  if (config_.bias) names.push_back("out_proj.bias");
  if (config_.layer_norm) names.insert(names.end(), {"layer_norm.weight", "layer_norm.bias"});
  return names;
}

namespace {

Tensor concat_rows(std::initializer_list<const Tensor*> parts, Shape shape) {
  Tensor t;
  t.shape = std::move(shape);
  for (const Tensor* p : parts) t.data.insert(t.data.end(), p->data.begin(), p->data.end());
  return t;
}

// Copies value into target after checking it has target's shape (vectors may also come as the
// (1, 1, n) or (1, n) PyTorch uses for bias_k/bias_v).
Status assign_checked(const std::string& name, const Tensor& value, Tensor& target) {
  ATTN_RETURN_IF_ERROR(check_well_formed(value, name.c_str()));
  const bool same_numel = value.numel() == target.numel();
  const bool vector_like = target.rank() != 2 && value.dim(-1) == target.dim(-1);
  if (value.shape != target.shape && !(same_numel && vector_like)) {
    return Status::Error(
        StatusCode::kShapeMismatch,
        name + " must have shape " + shape_to_string(target.shape) + ", got " + shape_to_string(value.shape));
  }
  ATTN_RETURN_IF_ERROR(check_finite(value, name.c_str()));
  target.data = value.data;
  return Status::Ok();
}

Status frozen_error() {
  return Status::Error(
      StatusCode::kInvalidArgument,
      "a frozen (inference-only) module's projection weights are views: use set_weight_view");
}

}  // namespace

Status MultiHeadAttention::get_parameter(const std::string& name, Tensor& out) const {
  const int qk = config_.num_heads * head_dim_, kqk = kv_heads_ * head_dim_,
            kvo = kv_heads_ * value_head_dim_;
  const int rows = qk + kqk + kvo;  // H·dk + H_kv·dk + H_kv·dv
  if (config_.frozen && (name == "in_proj_weight" || name.find("proj_weight") != std::string::npos ||
                         name == "out_proj.weight")) {
    const WeightView* views[] = {&view_q_, &view_k_, &view_v_, &view_o_};
    const char* names[] = {"q_proj_weight", "k_proj_weight", "v_proj_weight", "out_proj.weight"};
    for (int i = 0; i < 4; ++i)
      if (name == names[i] || (name == "in_proj_weight" && packed_in_proj() && i < 3)) {
        if (views[i]->empty())
          return Status::Error(StatusCode::kInvalidArgument, std::string(names[i]) + " is not set");
      }
    if (name == "in_proj_weight" && packed_in_proj()) {
      const Tensor q = view_q_.widened(), k = view_k_.widened(), v = view_v_.widened();
      out = concat_rows({&q, &k, &v}, {rows, config_.embed_dim});
      return Status::Ok();
    }
    for (int i = 0; i < 4; ++i)
      if (name == names[i]) {
        out = views[i]->widened();
        return Status::Ok();
      }
  }
  if (name == "in_proj_weight" && packed_in_proj()) {
    out = concat_rows({&w_q_, &w_k_, &w_v_}, {rows, config_.embed_dim});
  } else if (name == "in_proj_bias" && config_.bias) {
    out = concat_rows({&b_q_, &b_k_, &b_v_}, {rows});
  } else if (name == "q_proj_weight") {
    out = w_q_;
  } else if (name == "k_proj_weight") {
    out = w_k_;
  } else if (name == "v_proj_weight") {
    out = w_v_;
  } else if (name == "out_proj.weight") {
    out = w_o_;
  } else if (name == "out_proj.bias" && config_.bias) {
    out = b_o_;
  } else if ((name == "bias_k" || name == "bias_v") && config_.add_bias_kv) {
    out = name == "bias_k" ? bias_k_ : bias_v_;
  } else if ((name == "layer_norm.weight" || name == "layer_norm.bias") && config_.layer_norm) {
    out = name == "layer_norm.weight" ? ln_weight_ : ln_bias_;
  } else {
    return Status::Error(StatusCode::kUnknownParameter,
                         "this MultiHeadAttention has no parameter '" + name + "'");
  }
  return Status::Ok();
}

Status MultiHeadAttention::set_weight_view(const std::string& name, const WeightView& w) {
  if (!config_.frozen)
    return Status::Error(StatusCode::kInvalidArgument, "set_weight_view needs a frozen module");
  const int e = config_.embed_dim, qk = config_.num_heads * head_dim_,
            vo = config_.num_heads * value_head_dim_;
  const struct {
    const char* name;
    WeightView* view;
    int rows, cols;
  } slots[] = {{"q_proj_weight", &view_q_, qk, e},
               {"k_proj_weight", &view_k_, kv_heads_ * head_dim_, kdim_},
               {"v_proj_weight", &view_v_, kv_heads_ * value_head_dim_, vdim_},
               {"out_proj.weight", &view_o_, e, vo},
               {"gate_proj_weight", config_.output_gate ? &view_gate_ : nullptr, vo, e}};
  for (const auto& s : slots) {
    if (s.view == nullptr) continue;  // no output gate: no gate_proj_weight
    if (name != s.name) continue;
    if (!w.empty() && (w.rows != s.rows || w.cols != s.cols)) {
      return Status::Error(StatusCode::kShapeMismatch, name + " must have shape " +
                                                           shape_to_string({s.rows, s.cols}) + ", got " +
                                                           shape_to_string({w.rows, w.cols}));
    }
    *s.view = w;
    parameter_version_ = next_parameter_version();  // a cache filled with the old weights is stale
    return Status::Ok();
  }
  return Status::Error(StatusCode::kUnknownParameter,
                       "a frozen MultiHeadAttention has no weight view '" + name + "'");
}

Status MultiHeadAttention::check_frozen_ready() const {
  const WeightView* views[] = {&view_q_, &view_k_, &view_v_, &view_o_};
  const char* names[] = {"q_proj_weight", "k_proj_weight", "v_proj_weight", "out_proj.weight"};
  for (int i = 0; i < 4; ++i)
    if (views[i]->empty() && !(config_.shared_kv && (i == 1 || i == 2)))  // shared: no k/v projections
      return Status::Error(StatusCode::kInvalidArgument,
                           std::string("the frozen module's ") + names[i] + " is not set");
  if (config_.qk_norm != MhaConfig::QkNorm::kNone &&
      (q_norm_.data.empty() || (k_norm_.data.empty() && !config_.shared_kv)))
    return Status::Error(StatusCode::kInvalidArgument, "the frozen module's q/k norm weights are not set");
  if (config_.output_gate && view_gate_.empty())
    return Status::Error(StatusCode::kInvalidArgument, "the frozen module's gate_proj_weight is not set");
  return Status::Ok();
}

Status MultiHeadAttention::set_qk_norm_weight(bool key, const Tensor& w) {
  if (config_.qk_norm == MhaConfig::QkNorm::kNone)
    return Status::Error(StatusCode::kInvalidArgument, "this MultiHeadAttention has no q/k norm");
  const bool per_head = config_.qk_norm == MhaConfig::QkNorm::kPerHead;
  const int width = per_head ? head_dim_ : (key ? kv_heads_ : config_.num_heads) * head_dim_;
  const char* name = key ? "k_norm.weight" : "q_norm.weight";
  if (w.shape != Shape{width})
    return Status::Error(StatusCode::kShapeMismatch, std::string(name) + " must have shape " +
                                                         shape_to_string({width}) + ", got " +
                                                         shape_to_string(w.shape));
  ATTN_RETURN_IF_ERROR(check_well_formed(w, name));
  ATTN_RETURN_IF_ERROR(check_finite(w, name));
  (key ? k_norm_ : q_norm_) = w;
  parameter_version_ = next_parameter_version();  // a cache filled with the old norm is stale
  return Status::Ok();
}

Status MultiHeadAttention::set_parameter(const std::string& name, const Tensor& value) {
  Status status = assign_parameter(name, value);
  if (status.ok()) parameter_version_ = next_parameter_version();
  return status;
}

Status MultiHeadAttention::assign_parameter(const std::string& name, const Tensor& value) {
  const int e = config_.embed_dim;
  if (name == "in_proj_weight" || name == "in_proj_bias") {
    const bool weight = name == "in_proj_weight";
    if (weight && !packed_in_proj()) {
      return Status::Error(StatusCode::kShapeMismatch,
                           "in_proj_weight needs kdim == vdim == embedDim and numKVHeads == numHeads; set "
                           "q_proj_weight, k_proj_weight and v_proj_weight instead");
    }
    Tensor current;
    ATTN_RETURN_IF_ERROR(get_parameter(name, current));  // also rejects in_proj_bias without bias
    ATTN_RETURN_IF_ERROR(assign_checked(name, value, current));
    Tensor* parts[3] = {weight ? &w_q_ : &b_q_, weight ? &w_k_ : &b_k_, weight ? &w_v_ : &b_v_};
    if (weight && config_.frozen) return frozen_error();
    const std::int64_t row = weight ? e : 1, nq = config_.num_heads * head_dim_, nk = kv_heads_ * head_dim_,
                       nv = kv_heads_ * value_head_dim_;
    const std::int64_t bounds[4] = {0, nq * row, (nq + nk) * row, (nq + nk + nv) * row};
    for (int i = 0; i < 3; ++i) {
      parts[i]->data.assign(current.data.begin() + bounds[i], current.data.begin() + bounds[i + 1]);
    }
    if (weight) {  // the three projections changed
      pack_into(w_q_, packed_q_);
      pack_into(w_k_, packed_k_);
      pack_into(w_v_, packed_v_);
    }
    return Status::Ok();
  }
  Tensor* targets[] = {&w_q_, &w_k_, &w_v_, &w_o_, &b_o_, &bias_k_, &bias_v_, &ln_weight_, &ln_bias_};
  std::vector<float>* packed[] = {&packed_q_, &packed_k_, &packed_v_, &packed_o_};  // of targets[0..3]
  const char* names[] = {"q_proj_weight",   "k_proj_weight",     "v_proj_weight",
                         "out_proj.weight", "out_proj.bias",     "bias_k",
                         "bias_v",          "layer_norm.weight", "layer_norm.bias"};
  for (size_t i = 0; i < std::size(names); ++i) {
    if (name == names[i]) {
      if (config_.frozen && i < std::size(packed)) return frozen_error();
      Tensor probe;
      ATTN_RETURN_IF_ERROR(get_parameter(name, probe));  // rejects names this config lacks
      ATTN_RETURN_IF_ERROR(assign_checked(name, value, *targets[i]));
      if (i < std::size(packed)) pack_into(*targets[i], *packed[i]);  // a projection weight changed
      return Status::Ok();
    }
  }
  return Status::Error(StatusCode::kUnknownParameter,
                       "this MultiHeadAttention has no parameter '" + name + "'");
}

mha_steps::Weights MultiHeadAttention::weights() const {
  return {{w_q_, packed_q_, b_q_, view_q_},
          {w_k_, packed_k_, b_k_, view_k_},
          {w_v_, packed_v_, b_v_, view_v_},
          {w_o_, packed_o_, b_o_, view_o_},
          bias_k_,
          bias_v_,
          ln_weight_,
          ln_bias_};
}

}  // namespace attn
