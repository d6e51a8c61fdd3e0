// MultiHeadAttention::backward and what forward_saving keeps for it. The forward's steps 1.–8.
// (multi_head.cpp) run here in reverse, every buffer with its shape:
//   8. LayerNorm   7. residual   6. output projection   4. attention (the engine's backward, which
//   recomputes P and replays dropout)   3. extra keys (bias_k / bias_v / zero attention)
//   2. the q/k/v projections   1. positional encoding (the identity on the query's gradient).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "core/attention_backward.h"
#include "core/memory_limit.h"
#include "core/multi_head.h"
#include "core/multi_head_steps.h"
#include "core/softmax_backward.h"
#include "kernels/kernels.h"

namespace attn {

using mha_steps::Dims;
using mha_steps::Heads;
using mha_steps::Projections;

namespace {

// dst (rows, width) dense = src rows of width `width` at row stride ld.
void copy_rows(const float* src, int ld, std::int64_t rows, int width, std::vector<float>& dst) {
  dst.resize(static_cast<std::size_t>(rows) * width);
  for (std::int64_t r = 0; r < rows; ++r) {
    std::memcpy(dst.data() + r * width, src + r * ld, static_cast<std::size_t>(width) * sizeof(float));
  }
}

// For y (rows, out) = x (rows, in) · Wᵀ + b:  dW (out, in) = dyᵀ · x (written);  db (out) = Σ_rows dy
// (written; skipped when db is null).
void linear_param_grads(const float* dy, std::int64_t rows, int out, const float* x, int in, float* dw,
                        float* db) {
  if (dw) kernels::gemm_tn(out, in, static_cast<int>(rows), dy, out, x, in, dw, in, false);
  if (!db) return;
  // Row by row, so dy is read contiguously; each db[o] still sums its rows in order from 0.
  std::fill(db, db + out, 0.0f);
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* dy_row = dy + r * out;  // dy_row: (out)
    for (int o = 0; o < out; ++o) db[o] += dy_row[o];
  }
}

// A projection's W (out, in): the module's own tensor, or a frozen module's view of stored weights.
struct ProjectionWeight {
  const Tensor& w;
  const WeightView& view;
  bool frozen;
};

// The same for a projection whose input also gets a gradient: dx (rows, in) += dy · W (out, in).
void projection_backward(const float* dy, std::int64_t rows, int out, const float* x, int in,
                         const ProjectionWeight& w, float* dx, float* dw, float* db) {
  if (w.frozen)
    w.view.linear_backward_input(static_cast<int>(rows), dy, out, dx, in, true);
  else
    kernels::gemm_nn(static_cast<int>(rows), in, out, dy, out, w.w.data.data(), in, dx, in, true);
  linear_param_grads(dy, rows, out, x, in, dw, db);
}

// The q/k RMSNorm's input gradient, in place over dy (a row's groups of `group` features), from the
// norm's input x: y = x · r · w with r = (mean(x²) + eps)^−1/2, so
// dx_i = r · w_i · dy_i − x_i · r³ / n · Σ_j w_j · dy_j · x_j  (in double, as the forward).
void rms_groups_backward(const float* x, float* dy, int width, int group, const float* w, double eps) {
  for (int g = 0; g < width; g += group) {
    double ss = 0, dot = 0;
    for (int i = 0; i < group; ++i) {
      ss += static_cast<double>(x[g + i]) * x[g + i];
      dot += static_cast<double>(w[i]) * dy[g + i] * x[g + i];
    }
    const double r = 1.0 / std::sqrt(ss / group + eps), c = r * r * r / group * dot;
    for (int i = 0; i < group; ++i) dy[g + i] = static_cast<float>(r * w[i] * dy[g + i] - x[g + i] * c);
  }
}

// Where each parameter's gradient goes (null when the module lacks it), inside MhaGrads::params.
struct ParamGrads {
  float *w_q = nullptr, *w_k = nullptr, *w_v = nullptr, *b_q = nullptr, *b_k = nullptr, *b_v = nullptr;
  float *w_o = nullptr, *b_o = nullptr, *bias_k = nullptr, *bias_v = nullptr, *ln_w = nullptr,
        *ln_b = nullptr;
};

float* find_grad(MhaGrads& grads, const char* name) {
  for (auto& [n, t] : grads.params)
    if (n == name) return t.data.data();
  return nullptr;
}

ParamGrads locate_param_grads(MhaGrads& grads, int e, int qk, int kqk) {
  ParamGrads g;
  if (float* in_proj = find_grad(grads, "in_proj_weight")) {  // [W_q; W_k; W_v] stacked
    g.w_q = in_proj;
    g.w_k = in_proj + static_cast<std::int64_t>(qk) * e;
    g.w_v = in_proj + static_cast<std::int64_t>(2 * qk) * e;
  } else {
    g.w_q = find_grad(grads, "q_proj_weight");
    g.w_k = find_grad(grads, "k_proj_weight");
    g.w_v = find_grad(grads, "v_proj_weight");
  }
  if (float* in_bias = find_grad(grads, "in_proj_bias")) {
    g.b_q = in_bias;
    g.b_k = in_bias + qk;
    g.b_v = in_bias + qk + kqk;
  }
  g.w_o = find_grad(grads, "out_proj.weight");
  g.b_o = find_grad(grads, "out_proj.bias");
  g.bias_k = find_grad(grads, "bias_k");
  g.bias_v = find_grad(grads, "bias_v");
  g.ln_w = find_grad(grads, "layer_norm.weight");
  g.ln_b = find_grad(grads, "layer_norm.bias");
  return g;
}

// The forward's options again, its masks pointing into `saved`.
MhaForwardOptions options_of(const MhaSaved& saved) {
  MhaForwardOptions o;
  o.mask = saved.has_mask ? &saved.mask : nullptr;
  o.additive_mask = saved.has_additive_mask ? &saved.additive_mask : nullptr;
  o.key_padding_mask = saved.has_key_padding_mask ? &saved.key_padding_mask : nullptr;
  o.causal = saved.causal;
  o.positions = saved.positions;
  o.need_weights = false;
  o.scale = saved.scale;
  o.dropout = saved.dropout;
  o.softcap = saved.softcap;
  return o;
}

Shape sequence_shape(const MhaSaved& s, int t, int width) {
  return s.batched ? Shape{s.b, t, width} : Shape{t, width};
}

// 3. The extra keys of d (B, Tk', width): bias row gradient (width) = Σ_b of its row (when add_bias_kv);
// the zero-attention row's is dropped; then the real rows move together into (B·Tk, width).
void extra_keys_backward(float* d, const Heads& hd, int b, int tk, int width, float* d_bias) {
  const std::int64_t tkp = tk + hd.extra;
  if (hd.add_bias_kv && d_bias) {
    for (int c = 0; c < width; ++c) d_bias[c] = 0.0f;
    for (int bi = 0; bi < b; ++bi) kernels::add_vec(width, d_bias, d + (bi * tkp + tk) * width, d_bias);
  }
  for (int bi = 1; bi < b && hd.extra > 0; ++bi) {  // first batch first: rows only move down
    std::memmove(d + static_cast<std::int64_t>(bi) * tk * width, d + bi * tkp * width,
                 static_cast<std::size_t>(tk) * width * sizeof(float));
  }
}

}  // namespace

namespace mha_steps {

std::uint64_t saved_elements(const Dims& d, const Heads& hd, const MhaConfig& c, int kdim, int vdim,
                             const Tensor* key, const Tensor* value, const MhaForwardOptions& options) {
  const std::uint64_t rows_q = static_cast<std::uint64_t>(d.b) * d.tq,
                      rows_k = static_cast<std::uint64_t>(d.b) * d.tk;
  const std::uint64_t rows_kp = static_cast<std::uint64_t>(d.b) * (d.tk + hd.extra);
  std::uint64_t n = rows_q * d.e * (c.layer_norm ? 2 : 1);                 // x, [pre_norm]
  n += (key ? rows_k * kdim : 0) + (key && value ? rows_k * vdim : 0);     // key, value
  n += rows_q * hd.h * (hd.dk + hd.dv) + rows_kp * (hd.kqk() + hd.kvo());  // q, context; k, v
  if (c.qk_norm != MhaConfig::QkNorm::kNone) n += rows_q * hd.h * hd.dk + rows_kp * hd.kqk();  // raw q, k
  if (options.mask) n += static_cast<std::uint64_t>(options.mask->numel()) / 4 + 1;  // bytes, as floats
  if (options.key_padding_mask) n += static_cast<std::uint64_t>(options.key_padding_mask->numel()) / 4 + 1;
  if (options.additive_mask) n += static_cast<std::uint64_t>(options.additive_mask->numel());
  return n;
}

void save_inputs(const float* x, const Tensor* key, const Tensor* value, const MhaForwardOptions& options,
                 const Dims& d, MhaSaved& saved) {
  saved.filled = false;  // until the forward has finished
  saved.batched = d.batched;
  saved.b = d.b;
  saved.tq = d.tq;
  saved.tk = d.tk;
  saved.has_key = key != nullptr;
  saved.has_value = key && value;  // without a key the value is ignored, as in forward
  saved.x.assign(x, x + static_cast<std::int64_t>(d.b) * d.tq * d.e);
  if (saved.has_key)
    saved.key = key->data;
  else
    saved.key.clear();
  if (saved.has_value)
    saved.value = value->data;
  else
    saved.value.clear();
  saved.has_mask = options.mask != nullptr;
  saved.mask = options.mask ? *options.mask : BoolTensor{};
  saved.has_additive_mask = options.additive_mask != nullptr;
  saved.additive_mask = options.additive_mask ? *options.additive_mask : Tensor{};
  saved.has_key_padding_mask = options.key_padding_mask != nullptr;
  saved.key_padding_mask = options.key_padding_mask ? *options.key_padding_mask : BoolTensor{};
  saved.causal = options.causal;
  saved.positions = options.positions;
  saved.scale = options.scale;
  saved.dropout = options.dropout;
  saved.softcap = options.softcap;
  saved.pre_norm.clear();
  saved.q_raw.clear();
  saved.k_raw.clear();
}

void save_projections(const Projections& pr, const Dims& d, const Heads& hd, MhaSaved& saved, bool raw) {
  const std::int64_t rows_q = static_cast<std::int64_t>(d.b) * d.tq;
  const std::int64_t rows_kp = static_cast<std::int64_t>(d.b) * (d.tk + hd.extra);
  copy_rows(pr.q, pr.ldq, rows_q, hd.h * hd.dk, raw ? saved.q_raw : saved.q);
  copy_rows(pr.k, pr.ldkv, rows_kp, hd.kqk(), raw ? saved.k_raw : saved.k);
  if (raw) return;
  copy_rows(pr.v, pr.ldkv, rows_kp, hd.kvo(), saved.v);
}

}  // namespace mha_steps

namespace {

Status check_saved(const MhaSaved& saved, std::uint64_t parameter_version) {
  if (saved.empty()) {
    return Status::Error(StatusCode::kInvalidArgument,
                         "backward needs the MhaSaved of a forward_saving call; this one is empty");
  }
  if (saved.parameter_version != parameter_version) {
    return Status::Error(StatusCode::kInvalidArgument,
                         "a parameter was set after the forward that filled this MhaSaved (or it comes "
                         "from another module): run forward_saving again before backward");
  }
  return Status::Ok();
}

Status check_grad_output(const MhaSaved& saved, int e, const Tensor& grad_output) {
  ATTN_RETURN_IF_ERROR(check_well_formed(grad_output, "gradOutput"));
  const Shape want = sequence_shape(saved, saved.tq, e);
  if (grad_output.shape != want) {
    return Status::Error(StatusCode::kShapeMismatch, "gradOutput must have the output's shape " +
                                                         shape_to_string(want) + ", got " +
                                                         shape_to_string(grad_output.shape));
  }
  return check_finite(grad_output, "gradOutput");
}

// Float elements of backward's scratch buffers (d_out, d_context, dq, dk, dv).
std::uint64_t backward_scratch_elements(const Dims& d, const Heads& hd, bool layer_norm) {
  const std::uint64_t qk = static_cast<std::uint64_t>(hd.h) * hd.dk,
                      vo = static_cast<std::uint64_t>(hd.h) * hd.dv;
  const std::uint64_t rows_q = static_cast<std::uint64_t>(d.b) * d.tq;
  const std::uint64_t rows_kp = static_cast<std::uint64_t>(d.b) * (d.tk + hd.extra);
  return (layer_norm ? rows_q * d.e : 0) + rows_q * (vo + qk) + rows_kp * (hd.kqk() + hd.kvo());
}

// grads: zeros of the inputs' and parameters' shapes, after checking that they and `scratch` more
// floats fit the memory limit.
Status allocate_grads(const MultiHeadAttention& m, const MhaSaved& saved, std::uint64_t scratch,
                      const MhaBackwardOptions& o, MhaGrads& grads) {
  const std::vector<std::string> names = o.parameters ? m.parameter_names() : std::vector<std::string>{};
  std::vector<Tensor> params(names.size());
  std::uint64_t n = scratch + saved.x.size() + saved.key.size() + saved.value.size();
  if (o.context) n += saved.context.size();
  for (std::size_t i = 0; i < names.size(); ++i) {
    ATTN_RETURN_IF_ERROR(m.get_parameter(names[i], params[i]));  // a copy, for its shape
    n += 2 * static_cast<std::uint64_t>(params[i].numel());      // the copy and its gradient
  }
  ATTN_RETURN_IF_ERROR(check_allocation(n, "multi-head attention backward"));
  grads.params.clear();
  for (std::size_t i = 0; i < names.size(); ++i) {
    std::fill(params[i].data.begin(), params[i].data.end(), 0.0f);
    grads.params.emplace_back(names[i], std::move(params[i]));
  }
  const MhaConfig& c = m.config();
  grads.query = Tensor(sequence_shape(saved, saved.tq, c.embed_dim), std::vector<float>(saved.x.size()));
  grads.key = Tensor{};
  grads.value = Tensor{};
  if (saved.has_key) {
    grads.key = Tensor(sequence_shape(saved, saved.tk, c.kdim ? c.kdim : c.embed_dim),
                       std::vector<float>(saved.key.size()));
  }
  if (saved.has_value) {
    grads.value = Tensor(sequence_shape(saved, saved.tk, c.vdim ? c.vdim : c.embed_dim),
                         std::vector<float>(saved.value.size()));
  }
  return Status::Ok();
}

// 8. LayerNorm; 7. residual: d_x (B·Tq, E) = d_out, the query's gradient so far (x = query + pe);
// 6. output projection: d_context (B·Tq, H·dv) = d_out · W_o (returned, in scratch);
// dW_o (E, H·dv) = d_outᵀ · context;  db_o (E) = Σ d_out.
float* output_stage_backward(const MhaConfig& c, const ProjectionWeight& w_o, const Tensor& ln_weight,
                             const MhaSaved& saved, std::int64_t rows_q, const float* grad_output,
                             const ParamGrads& g, float* d_x, ScratchScope& scratch) {
  const int e = c.embed_dim, vo = static_cast<int>(saved.context.size() / std::max<std::int64_t>(rows_q, 1));
  const float* d_out = grad_output;  // d_out: (B·Tq, E) the gradient at the output projection's output
  if (c.layer_norm) {
    float* d_pre = scratch.floats(static_cast<std::size_t>(rows_q) * e);  // d_pre: (B·Tq, E)
    layer_norm_backward_rows(rows_q, e, saved.pre_norm.data(), ln_weight.data.data(), c.layer_norm_eps,
                             grad_output, d_pre, false, g.ln_w, g.ln_b);
    d_out = d_pre;
  }
  if (c.residual) std::memcpy(d_x, d_out, static_cast<std::size_t>(rows_q) * e * sizeof(float));
  float* d_context = scratch.floats(static_cast<std::size_t>(rows_q) * vo);  // d_context: (B·Tq, H·dv)
  if (w_o.frozen)
    w_o.view.linear_backward_input(static_cast<int>(rows_q), d_out, e, d_context, vo, false);
  else
    kernels::gemm_nn(static_cast<int>(rows_q), vo, e, d_out, e, w_o.w.data.data(), vo, d_context, vo, false);
  linear_param_grads(d_out, rows_q, e, saved.context.data(), vo, g.w_o, g.b_o);
  return d_context;
}

}  // namespace

namespace {
// The gradients of a finished backward: a non-finite one is an overflow (inputs were finite).
Status check_gradients_finite(const MhaGrads& grads) {
  for (const Tensor* t : {&grads.query, &grads.key, &grads.value})
    ATTN_RETURN_IF_ERROR(
        check_computed(t->data.data(), t->data.size(), "multi-head attention backward: the input gradients"));
  for (const auto& [name, t] : grads.params)
    ATTN_RETURN_IF_ERROR(check_computed(t.data.data(), t.data.size(),
                                        "multi-head attention backward: the gradient of " + name));
  return Status::Ok();
}

// 3a. The q/k RMSNorm (frozen weights): dq, dk (rows of the unrotated, normed q and k) become the
// gradients of the norm's inputs, read from saved.q_raw / k_raw.
void qk_norm_backward(const MhaConfig& c, const Heads& hd, const Dims& d, const MhaSaved& saved,
                      const AttentionGradTargets& t, const Tensor& q_norm, const Tensor& k_norm) {
  const bool per_head = c.qk_norm == MhaConfig::QkNorm::kPerHead;
  const int wq = hd.h * hd.dk, wk = hd.kqk(), tk_rows = d.tk + hd.extra;
  for (std::int64_t r = 0; r < static_cast<std::int64_t>(d.b) * d.tq; ++r)
    rms_groups_backward(saved.q_raw.data() + r * wq, t.dq + r * t.lddq, wq, per_head ? hd.dk : wq,
                        q_norm.data.data(), c.qk_norm_eps);
  for (int bi = 0; bi < d.b; ++bi)
    for (int j = 0; j < d.tk; ++j) {
      const std::int64_t r = static_cast<std::int64_t>(bi) * tk_rows + j;
      rms_groups_backward(saved.k_raw.data() + r * wk, t.dk + r * t.lddk, wk, per_head ? hd.dk : wk,
                          k_norm.data.data(), c.qk_norm_eps);
    }
}

// The asked-for extras of MhaBackwardOptions: the context's gradient and room for the weights'.
void fill_extras(const MhaBackwardOptions& o, const MhaSaved& saved, const Dims& d, const Heads& hd,
                 const float* d_context, MhaGrads& grads, AttentionGradTargets& t) {
  const int vo = hd.h * hd.dv, tkp = d.tk + hd.extra;
  grads.context = Tensor{};
  grads.attention = Tensor{};
  if (o.context)
    grads.context =
        Tensor(sequence_shape(saved, d.tq, vo),
               std::vector<float>(d_context, d_context + static_cast<std::int64_t>(d.b) * d.tq * vo));
  if (o.attention) {
    grads.attention = Tensor::zeros(saved.batched ? Shape{d.b, hd.h, d.tq, tkp} : Shape{hd.h, d.tq, tkp});
    t.dweights = grads.attention.data.data();
  }
}

}  // namespace

Status MultiHeadAttention::backward(const MhaSaved& saved, const Tensor& grad_output, MhaGrads& grads,
                                    const MhaBackwardOptions& options) const {
  ATTN_RETURN_IF_ERROR(check_saved(saved, parameter_version_));
  if (config_.output_gate && !config_.frozen)
    return Status::Error(StatusCode::kInvalidArgument,
                         "multi-head attention: the backward through an output gate needs a frozen module");
  if (config_.frozen && options.parameters)
    return Status::Error(StatusCode::kInvalidArgument,
                         "a frozen module's weights are fixed: backward needs parameters = false");
  const int e = config_.embed_dim;
  ATTN_RETURN_IF_ERROR(check_grad_output(saved, e, grad_output));
  const Dims d{saved.batched, saved.b, saved.tq, saved.tk, e};
  const Heads hd = mha_steps::heads_of(config_, head_dim_, value_head_dim_);
  const int qk = hd.h * hd.dk, vo = hd.h * hd.dv, kqk = hd.kqk(), kvo = hd.kvo();
  const MhaForwardOptions forward_options = options_of(saved);
  AttentionProblem p;
  ATTN_RETURN_IF_ERROR(mha_steps::make_problem(forward_options, d, hd, false, p));
  p.q = saved.q.data();  // q (B, Tq, H·dk), k (B, Tk', H_kv·dk), v (B, Tk', H_kv·dv), dense (rotated)
  p.k = saved.k.data();
  p.v = saved.v.data();
  p.ldq = qk;
  p.ldk = kqk;
  p.ldv = kvo;
  const std::uint64_t attention_grads =
      options.attention ? static_cast<std::uint64_t>(d.b) * hd.h * d.tq * (d.tk + hd.extra) : 0;
  ATTN_RETURN_IF_ERROR(allocate_grads(*this, saved,
                                      backward_scratch_elements(d, hd, config_.layer_norm) +
                                          attention_backward_scratch_elements(p) + attention_grads,
                                      options, grads));
  const ParamGrads g = locate_param_grads(grads, e, qk, kqk);
  const std::int64_t rows_q = static_cast<std::int64_t>(d.b) * d.tq,
                     rows_k = static_cast<std::int64_t>(d.b) * d.tk;
  ScratchScope scratch;
  // 8.–6. LayerNorm, residual, output projection → d_x (the query's gradient) and d_context
  float* d_x = grads.query.data.data();
  const bool frozen = config_.frozen;
  float* d_context = output_stage_backward(config_, {w_o_, view_o_, frozen}, ln_weight_, saved, rows_q,
                                           grad_output.data.data(), g, d_x, scratch);
  // 4. attention: dq (B·Tq, H·dk), dk (B, Tk', H_kv·dk), dv (B, Tk', H_kv·dv); the query heads of a
  //    group add into their key/value head's rows
  const std::int64_t rows_kp = static_cast<std::int64_t>(d.b) * (d.tk + hd.extra);
  AttentionGradTargets t{scratch.floats(static_cast<std::size_t>(rows_q) * qk),
                         scratch.floats(static_cast<std::size_t>(rows_kp) * kqk),
                         scratch.floats(static_cast<std::size_t>(rows_kp) * kvo),
                         qk,
                         kqk,
                         kvo};
  fill_extras(options, saved, d, hd, d_context, grads, t);
  if (config_.output_gate) gate_backward(saved, rows_q, d_context, d_x);  // then d_context is ungated
  run_attention_backward(p, d_context, vo, t);
  // 3b. RoPE: the gradients of the unrotated q and k are the rotated ones rotated back (dq × the
  //     query temperature first: a scalar per row)
  if (config_.rope) {
    temper_rows(t.dq, d.b, d.tq, qk, hd.h * hd.dk, config_.query_temperature, p.masks.position_offset);
    RotaryTable table;
    mha_steps::rotate_qk(*config_.rope, hd, d.b, d.tq, p.masks.position_offset, t.dq, qk, d.tk,
                         d.tk + hd.extra, 0, t.dk, kqk, true, table);
  }
  if (config_.qk_norm != MhaConfig::QkNorm::kNone)
    qk_norm_backward(config_, hd, d, saved, t, q_norm_, k_norm_);
  // 3. extra keys: bias_k / bias_v gradients; dk → (B·Tk, H_kv·dk), dv → (B·Tk, H_kv·dv)
  extra_keys_backward(t.dk, hd, d.b, d.tk, kqk, g.bias_k);
  extra_keys_backward(t.dv, hd, d.b, d.tk, kvo, g.bias_v);
  // 2. projections, into the input each read: x in self-attention, else key and value (value = key
  // when the forward had no separate value)
  const float* key_src = saved.has_key ? saved.key.data() : saved.x.data();
  const float* value_src = saved.has_value ? saved.value.data() : key_src;
  float* d_key = saved.has_key ? grads.key.data.data() : d_x;
  float* d_value = saved.has_value ? grads.value.data.data() : d_key;
  projection_backward(t.dq, rows_q, qk, saved.x.data(), e, {w_q_, view_q_, frozen}, d_x, g.w_q, g.b_q);
  projection_backward(t.dk, rows_k, kqk, key_src, kdim_, {w_k_, view_k_, frozen}, d_key, g.w_k, g.b_k);
  projection_backward(t.dv, rows_k, kvo, value_src, vdim_, {w_v_, view_v_, frozen}, d_value, g.w_v, g.b_v);
  // 1. positional encoding: x = query + pe, so the query's gradient is d_x itself (already in place)
  return check_gradients_finite(grads);
}

}  // namespace attn
