// MultiHeadAttention::forward — numbered steps, every buffer with its shape.
// The heads are never split or merged by copying: q/k/v stay in their projection buffers
// (B, T, H·d) with a row stride, the engine reads each head as a strided view, and writes the
// context straight into the concat layout (B, Tq, H·dv) the output projection reads.
#include "core/multi_head.h"

#include <cmath>
#include <cstring>
#include <string>

#include "core/attention_engine.h"
#include "core/memory_limit.h"
#include "core/multi_head_masks.h"
#include "core/multi_head_steps.h"
#include "kernels/kernels.h"

namespace attn {

using mha_steps::Dims;
using mha_steps::Heads;
using mha_steps::Projections;

namespace mha_steps {

Status check_sequence(const Tensor& t, const char* what, int width, bool batched, int b, int& length) {
  ATTN_RETURN_IF_ERROR(check_well_formed(t, what));
  const int want_rank = batched ? 3 : 2;
  if (t.rank() != want_rank || t.dim(-1) != width || (batched && t.dim(0) != b)) {
    const std::string want = batched ? "(B=" + std::to_string(b) + ", T, " + std::to_string(width) + ")"
                                     : "(T, " + std::to_string(width) + ")";
    return Status::Error(StatusCode::kShapeMismatch, std::string(what) + " must have shape " + want +
                                                         ", got " + shape_to_string(t.shape));
  }
  length = t.dim(-2);
  return check_finite(t, what);
}

// 0. Shapes of query/key/value; unbatched (T, E) input runs as B = 1.
Status resolve_dims(const Tensor& query, const Tensor* key, const Tensor* value, int e, int kdim, int vdim,
                    Dims& d) {
  d.e = e;
  ATTN_RETURN_IF_ERROR(check_well_formed(query, "query"));
  if (query.rank() != 2 && query.rank() != 3) {  // batched or not is read from the query's rank
    return Status::Error(StatusCode::kShapeMismatch, "query must have shape (B, T, " + std::to_string(e) +
                                                         ") or (T, " + std::to_string(e) + "), got " +
                                                         shape_to_string(query.shape));
  }
  d.batched = query.rank() == 3;
  d.b = d.batched ? query.dim(0) : 1;
  ATTN_RETURN_IF_ERROR(check_sequence(query, "query", e, d.batched, d.b, d.tq));
  d.tk = d.tq;
  if (!key) {
    if (kdim != e || vdim != e) {  // keys and values are projected from the query itself
      return Status::Error(StatusCode::kShapeMismatch,
                           "self-attention (no key) needs kdim == vdim == embedDim; got kdim " +
                               std::to_string(kdim) + ", vdim " + std::to_string(vdim) + ", embedDim " +
                               std::to_string(e) + ": pass key and value");
    }
    return Status::Ok();
  }
  int tv = 0;
  ATTN_RETURN_IF_ERROR(check_sequence(*key, "key", kdim, d.batched, d.b, d.tk));
  ATTN_RETURN_IF_ERROR(check_sequence(value ? *value : *key, "value", vdim, d.batched, d.b, tv));
  if (tv != d.tk) {
    return Status::Error(StatusCode::kShapeMismatch, "key has " + std::to_string(d.tk) +
                                                         " positions but value has " + std::to_string(tv));
  }
  return Status::Ok();
}

Status check_positional(const Tensor* pe, const Dims& d) {
  if (!pe) return Status::Ok();
  ATTN_RETURN_IF_ERROR(check_well_formed(*pe, "positional"));
  if (pe->rank() != 2 || pe->dim(0) < d.tq || pe->dim(1) != d.e) {
    return Status::Error(StatusCode::kShapeMismatch,
                         "positional must have shape (T >= " + std::to_string(d.tq) + ", " +
                             std::to_string(d.e) + "), got " + shape_to_string(pe->shape));
  }
  return check_finite(*pe, "positional");
}

void record(Trace* trace, const char* name, std::initializer_list<const char*> axes,
            std::initializer_list<int> shape, const float* data, std::size_t n) {
  if (trace)
    trace->record(name, std::vector<std::string>(axes.begin(), axes.end()),
                  Tensor(Shape(shape), std::vector<float>(data, data + n)));
}

// 1. x (B, Tq, E) = query + positional[0:Tq] into x_buf, or the query itself when there is no
// positional encoding (no copy). Records input, [positional, x].
const float* encode_positions(const Tensor& query, const Tensor* pe, const Dims& d, float* x_buf,
                              Trace* trace) {
  const std::int64_t n = static_cast<std::int64_t>(d.tq) * d.e;
  record(trace, "input", {"B", "T_q", "d_model"}, {d.b, d.tq, d.e}, query.data.data(), query.data.size());
  if (!pe) return query.data.data();
  for (int bi = 0; bi < d.b; ++bi) {
    kernels::add_vec(static_cast<int>(n), query.data.data() + bi * n, pe->data.data(), x_buf + bi * n);
  }
  record(trace, "positional", {"T_q", "d_model"}, {d.tq, d.e}, pe->data.data(), static_cast<std::size_t>(n));
  record(trace, "x", {"B", "T_q", "d_model"}, {d.b, d.tq, d.e}, x_buf, static_cast<std::size_t>(d.b * n));
  return x_buf;
}

// C columns [0, out) with row stride ldc (rows, out) = x (rows, in) · Wᵀ + b.
void linear_into(const float* x, std::int64_t rows, const Linear& l, float* c, int ldc) {
  if (!l.view.empty())
    return l.view.linear(static_cast<int>(rows), x, l.view.cols, l.b.empty() ? nullptr : l.b.data.data(), c,
                         ldc);
  const int out = l.w.dim(0), in = l.w.dim(1);
  kernels::linear_nt_packed(static_cast<int>(rows), out, in, x, in, l.packed.data(),
                            l.b.empty() ? nullptr : l.b.data.data(), c, ldc);
}

// 2. Projections. Self-attention without extra keys: one buffer qkv (B·T, 2·H·dk + H·dv), the
// three GEMMs writing their column blocks. Otherwise q (B·Tq, H·dk) and kv (B·Tk', H·(dk + dv)):
// the key rows of batch b move to rows b·Tk' … (memmove, last batch first), then
// 3. the extra keys: the bias_k / bias_v row, then the zero-attention row (PyTorch's order).
void project_q(const Weights& w, const float* x, std::int64_t rows, float* q, int ld) {
  linear_into(x, rows, w.q, q, ld);
}

Projections project(const Weights& w, const Heads& hd, const float* x, const float* key_src,
                    const float* value_src, bool self, const Dims& d, ScratchScope& scratch) {
  const int qk = hd.h * hd.dk, kqk = hd.kqk(), kvo = hd.kvo(), tk = d.tk + hd.extra;
  const std::int64_t rows_q = static_cast<std::int64_t>(d.b) * d.tq,
                     rows_k = static_cast<std::int64_t>(d.b) * d.tk;
  if (self && hd.extra == 0) {
    const int ld = qk + kqk + kvo;
    float* qkv = scratch.floats(static_cast<std::size_t>(rows_q * ld));  // qkv: (B·T, H·dk + H_kv·(dk + dv))
    if (!w.q.view.empty() && !w.k.view.empty() && !w.v.view.empty()) {  // stored weights: one job
      const auto bias = [](const Linear& l) { return l.b.empty() ? nullptr : l.b.data.data(); };
      const WeightView::Output out[] = {{&w.q.view, bias(w.q), qkv, ld},
                                        {&w.k.view, bias(w.k), qkv + qk, ld},
                                        {&w.v.view, bias(w.v), qkv + qk + kqk, ld}};
      WeightView::linear_many(static_cast<int>(rows_q), x, w.q.view.cols, out, 3);
    } else {
      linear_into(x, rows_q, w.q, qkv, ld);
      linear_into(x, rows_q, w.k, qkv + qk, ld);
      linear_into(x, rows_q, w.v, qkv + qk + kqk, ld);
    }
    return Projections{qkv, qkv + qk, qkv + qk + kqk, ld, ld};
  }
  const int ld = kqk + kvo;
  float* q = scratch.floats(static_cast<std::size_t>(rows_q * qk));  // q: (B·Tq, H·dk)
  float* kv = scratch.floats(static_cast<std::size_t>(d.b) * tk *
                             static_cast<std::size_t>(ld));  // kv: (B, Tk', H_kv·(dk+dv))
  linear_into(x, rows_q, w.q, q, qk);
  linear_into(key_src, rows_k, w.k, kv, ld);
  linear_into(value_src, rows_k, w.v, kv + kqk, ld);
  for (int bi = d.b - 1; bi > 0 && hd.extra > 0; --bi) {
    std::memmove(kv + static_cast<std::int64_t>(bi) * tk * ld, kv + static_cast<std::int64_t>(bi) * d.tk * ld,
                 static_cast<std::size_t>(d.tk) * ld * sizeof(float));
  }
  for (int bi = 0; bi < d.b; ++bi) {
    float* row = kv + (static_cast<std::int64_t>(bi) * tk + d.tk) * ld;  // the first extra key row
    if (hd.add_bias_kv) {
      std::memcpy(row, w.bias_k.data.data(), static_cast<std::size_t>(kqk) * sizeof(float));
      std::memcpy(row + kqk, w.bias_v.data.data(), static_cast<std::size_t>(kvo) * sizeof(float));
      row += ld;
    }
    if (hd.add_zero_attn) std::memset(row, 0, static_cast<std::size_t>(ld) * sizeof(float));
  }
  return Projections{q, kv, kv + kqk, qk, ld};
}

// (B, H, T, d) copy of the heads of a (B, T, ld) buffer, for the trace.
void record_heads(Trace* trace, const char* name, const char* t_axis, const char* d_axis, const float* src,
                  int ld, int b, int h, int t, int dh) {
  if (!trace) return;
  std::vector<float> heads(static_cast<std::size_t>(b) * h * t * dh);  // heads: (B, H, T, d)
  for (int bi = 0; bi < b; ++bi)
    for (int hi = 0; hi < h; ++hi)
      for (int ti = 0; ti < t; ++ti) {
        const float* from = src + (static_cast<std::int64_t>(bi) * t + ti) * ld + hi * dh;
        std::copy(from, from + dh, heads.data() + ((static_cast<std::size_t>(bi) * h + hi) * t + ti) * dh);
      }
  trace->record(name, {"B", "H", t_axis, d_axis}, Tensor({b, h, t, dh}, std::move(heads)));
}

// 5. concat (B, Tq, H·dv) = the context as the engine wrote it; 6. output (B, Tq, E) =
// concat·W_oᵀ + b_o; 7. residual = output + x; 8. normalized = LayerNorm(residual), in out.
// pre_norm (B, Tq, E), when not null, gets LayerNorm's input (for the backward).
void output_stage(const Weights& w, const MhaConfig& c, int vo, const float* context, const float* x,
                  const Dims& d, std::vector<float>& out, std::vector<float>* pre_norm, Trace* trace) {
  const std::int64_t rows = static_cast<std::int64_t>(d.b) * d.tq;
  const std::size_t n = static_cast<std::size_t>(rows) * d.e;
  record(trace, "concat", {"B", "T_q", "H·d_v"}, {d.b, d.tq, vo}, context,
         static_cast<std::size_t>(rows) * vo);
  out.resize(n);  // keeps the capacity of a result reused across calls
  linear_into(context, rows, w.o, out.data(), d.e);
  record(trace, "output", {"B", "T_q", "d_model"}, {d.b, d.tq, d.e}, out.data(), n);
  if (c.residual) {
    kernels::add_vec(static_cast<int>(n), out.data(), x, out.data());
    record(trace, "residual", {"B", "T_q", "d_model"}, {d.b, d.tq, d.e}, out.data(), n);
  }
  if (c.layer_norm) {
    if (pre_norm) pre_norm->assign(out.begin(), out.end());
    for (std::size_t r = 0; r < n; r += d.e) {
      kernels::layer_norm_row(d.e, out.data() + r, w.ln_weight.data.data(), w.ln_bias.data.data(),
                              c.layer_norm_eps, out.data() + r);  // in place (kernels.h)
    }
    record(trace, "normalized", {"B", "T_q", "d_model"}, {d.b, d.tq, d.e}, out.data(), n);
  }
}

}  // namespace mha_steps

void mha_steps::rotate_qk(const RotaryOptions& rope, const Heads& hd, int b, int tq, std::int64_t q_first,
                          float* q, int ldq, int tk, int tk_rows, std::int64_t k_first, float* k, int ldk,
                          bool inverse, RotaryTable& table) {
  make_rotary_table(rope, hd.dk, q_first, tq, table);
  rotate_rows(q, b, tq, ldq, hd.h, hd.dk, table, inverse);
  make_rotary_table(rope, hd.dk, k_first, tk, table);
  // Each batch's keys start every tk_rows rows (Tk' with the extra keys, which are not rotated).
  for (int bi = 0; bi < b; ++bi)
    rotate_rows(k + static_cast<std::int64_t>(bi) * tk_rows * ldk, 1, tk, ldk, hd.hkv, hd.dk, table, inverse);
}

namespace {

// x (width) in place: each group of `group` features / sqrt(mean(x²) + eps) · w (group), in double.
void rms_groups(float* x, int width, int group, const float* w, double eps) {
  for (int g = 0; g < width; g += group) {
    double ss = 0;
    for (int i = 0; i < group; ++i) ss += static_cast<double>(x[g + i]) * x[g + i];
    const double inv = 1.0 / std::sqrt(ss / group + eps);
    for (int i = 0; i < group; ++i) x[g + i] = static_cast<float>(x[g + i] * inv) * w[i];
  }
}

}  // namespace

void MultiHeadAttention::norm_qk(int b, int tq, float* q, int ldq, int tk, int tk_rows, float* k,
                                 int ldk) const {
  const bool per_head = config_.qk_norm == MhaConfig::QkNorm::kPerHead;
  const int wq = config_.num_heads * head_dim_, wk = kv_heads_ * head_dim_;
  for (std::int64_t r = 0; r < static_cast<std::int64_t>(b) * tq; ++r)
    rms_groups(q + r * ldq, wq, per_head ? head_dim_ : wq, q_norm_.data.data(), config_.qk_norm_eps);
  for (int bi = 0; bi < b; ++bi)
    for (int t = 0; t < tk; ++t)
      rms_groups(k + (static_cast<std::int64_t>(bi) * tk_rows + t) * ldk, wk, per_head ? head_dim_ : wk,
                 k_norm_.data.data(), config_.qk_norm_eps);
}

Status mha_steps::make_problem(const MhaForwardOptions& options, const Dims& d, const Heads& hd, bool tracing,
                               AttentionProblem& p) {
  p.masks.lead = {d.b, hd.h};
  p.masks.tq = d.tq;
  p.masks.tk = d.tk + hd.extra;
  p.masks.real_keys = d.tk;
  ATTN_RETURN_IF_ERROR(set_positions(options.positions, options.causal, p.masks));
  ATTN_RETURN_IF_ERROR(mha_masks_to_plan(options, p.masks, d.b, hd.h));
  p.dk = hd.dk;
  p.dv = hd.dv;
  p.heads = hd.h;
  p.kv_group = hd.h / hd.hkv;
  p.group_axis = hd.h;
  p.scale = options.scale ? *options.scale : 1.0f / std::sqrt(static_cast<float>(hd.dk));
  if (!(options.softcap >= 0) || !std::isfinite(options.softcap))
    return Status::Error(StatusCode::kInvalidArgument, "softcap must be a finite number >= 0 (0 = none)");
  p.softcap = options.softcap;
  p.dropout = options.dropout;
  p.hooks = options.hooks;
  if (tracing) p.lead_axes = {"B", "H"};  // only the trace names axes
  return Status::Ok();
}

namespace mha_steps {

// The weights result: (B, Tq, Tk') averaged or (B, H, Tq, Tk') per head (no B when unbatched),
// written by the engine in place; empty without need_weights. A result reused across calls keeps
// its buffer (resize to the same size neither allocates nor clears).
void prepare_weights(const MhaForwardOptions& options, const Dims& d, int h, int tk, Tensor& weights,
                     AttentionOutputs& att) {
  weights.shape.clear();
  if (!options.need_weights) {
    weights.data.clear();
    return;
  }
  if (d.batched) weights.shape.push_back(d.b);
  if (!options.average_weights) weights.shape.push_back(h);
  weights.shape.insert(weights.shape.end(), {d.tq, tk});
  weights.data.resize(static_cast<std::size_t>(shape_numel(weights.shape)));
  att.weights_out = weights.data.data();
  att.average_heads = options.average_weights;
}

// Float elements forward allocates besides the engine's own (see the steps in forward).
std::uint64_t forward_elements(const Dims& d, const Heads& hd, bool positional, bool need_weights,
                               bool average) {
  const std::uint64_t rows_q = static_cast<std::uint64_t>(d.b) * d.tq;
  const std::uint64_t rows_k = static_cast<std::uint64_t>(d.b) * (d.tk + hd.extra);
  std::uint64_t n = rows_q * d.e * (positional ? 2 : 1);                                   // [x], output
  n += rows_q * hd.h * hd.dk + rows_k * (hd.kqk() + hd.kvo());                             // projections
  if (need_weights && average) n += rows_q * static_cast<std::uint64_t>(d.tk + hd.extra);  // averaged weights
  return n;
}

}  // namespace mha_steps

using namespace mha_steps;

Status MultiHeadAttention::forward(const Tensor& query, const Tensor* key, const Tensor* value,
                                   const MhaForwardOptions& options, MhaResult& result, Trace* trace) const {
  return run_forward(query, key, value, options, result, nullptr, trace);
}

Status MultiHeadAttention::forward_saving(const Tensor& query, const Tensor* key, const Tensor* value,
                                          const MhaForwardOptions& options, MhaResult& result,
                                          MhaSaved& saved, Trace* trace) const {
  return run_forward(query, key, value, options, result, &saved, trace);
}

namespace {

// The query's heads as traced after a step that changes q and k in place (the q/k norm, RoPE).
void record_qk(Trace* trace, const char* q_name, const char* k_name, const Projections& pr, const Dims& d,
               const Heads& hd, int tk) {
  record_heads(trace, q_name, "T_q", "d_k", pr.q, pr.ldq, d.b, hd.h, d.tq, hd.dk);
  record_heads(trace, k_name, "T_k", "d_k", pr.k, pr.ldkv, d.b, hd.hkv, tk, hd.dk);
}

// The engine reads q, k and v as strided per-head views into the projections.
void bind_projections(const Projections& pr, AttentionProblem& p) {
  p.q = pr.q;
  p.k = pr.k;
  p.v = pr.v;
  p.ldq = pr.ldq;
  p.ldk = p.ldv = pr.ldkv;
}

void set_output_shape(const Dims& d, Tensor& output) {
  if (d.batched)
    output.shape.assign({d.b, d.tq, d.e});  // assign: no allocation when reused
  else
    output.shape.assign({d.tq, d.e});
}

// Inputs and weights are finite (checked on entry and on load), so a non-finite result is an
// overflow, and it reaches the output or the weights (an all −∞ score row becomes NaN in the
// engine). Only then are the intermediates, still in scratch, scanned to name the step.
Status check_forward_finite(const MhaForwardOptions& options, const Dims& d, const Heads& hd,
                            const Projections& pr, const AttentionProblem& p, const AttentionOutputs& att,
                            bool cross_or_extra, const MhaResult& result) {
  const bool finite = check_computed(result.output.data.data(), result.output.data.size(), "").ok() &&
                      (!options.need_weights ||
                       check_computed(result.weights.data.data(), result.weights.data.size(), "").ok());
  if (finite) return Status::Ok();
  const std::int64_t rows_q = static_cast<std::int64_t>(d.b) * d.tq;
  ATTN_RETURN_IF_ERROR(check_computed(pr.q, static_cast<std::size_t>(rows_q) * pr.ldq,
                                      "multi-head attention: the projections"));
  if (cross_or_extra) {
    ATTN_RETURN_IF_ERROR(check_computed(pr.k, static_cast<std::size_t>(d.b) * p.masks.tk * pr.ldkv,
                                        "multi-head attention: the key/value projections"));
  }
  ATTN_RETURN_IF_ERROR(
      check_computed(att.context_out, static_cast<std::size_t>(rows_q) * hd.h * hd.dv,
                     "multi-head attention: the scores q·kᵀ·scale or the context weights·v"));
  return Status::Error(
      StatusCode::kNonFinite,
      "multi-head attention: the output projection / residual / LayerNorm overflowed float32 "
      "(the inputs or weights are too large)");
}

}  // namespace

Status MultiHeadAttention::run_forward(const Tensor& query, const Tensor* key, const Tensor* value,
                                       const MhaForwardOptions& options, MhaResult& result, MhaSaved* saved,
                                       Trace* trace) const {
  if (saved) saved->filled = false;  // a failed forward_saving leaves nothing for backward to misuse
  if (config_.frozen) ATTN_RETURN_IF_ERROR(check_plain_call(saved != nullptr));
  Dims d;
  ATTN_RETURN_IF_ERROR(resolve_dims(query, key, value, config_.embed_dim, kdim_, vdim_, d));
  ATTN_RETURN_IF_ERROR(check_scale_and_dropout(options.scale, options.dropout));
  ATTN_RETURN_IF_ERROR(check_positional(options.positional, d));
  const Heads hd = mha_steps::heads_of(config_, head_dim_, value_head_dim_);
  AttentionProblem p;
  ATTN_RETURN_IF_ERROR(mha_steps::make_problem(options, d, hd, trace != nullptr, p));
  const std::uint64_t mine =  // + the output gate's pre-activations (B, Tq, H·dv)
      forward_elements(d, hd, options.positional != nullptr, options.need_weights, options.average_weights) +
      (config_.output_gate ? static_cast<std::uint64_t>(d.b) * d.tq * hd.h * hd.dv : 0);
  const std::uint64_t kept =  // what forward_saving copies into MhaSaved
      saved ? mha_steps::saved_elements(d, hd, config_, kdim_, vdim_, key, value, options) : 0;
  ATTN_RETURN_IF_ERROR(check_allocation(
      mine * (trace ? 2 : 1) + kept + attention_scratch_elements(p, options.need_weights, trace != nullptr),
      "multi-head attention"));
  ScratchScope scratch;
  // 1. x (B, Tq, E) = query + positional encoding
  const std::int64_t rows_q = static_cast<std::int64_t>(d.b) * d.tq;
  float* x_buf = options.positional ? scratch.floats(static_cast<std::size_t>(rows_q * d.e)) : nullptr;
  const float* x = encode_positions(query, options.positional, d, x_buf, trace);
  if (saved) mha_steps::save_inputs(x, key, value, options, d, *saved);
  // 2.–3. q (B, Tq, H·dk), k (B, Tk', H·dk), v (B, Tk', H·dv), read per head as strided views
  const mha_steps::Weights w = weights();
  const float* key_src = key ? key->data.data() : x;
  const float* value_src = key ? (value ? value : key)->data.data() : x;
  const Projections pr = project(w, hd, x, key_src, value_src, key == nullptr, d, scratch);
  const std::int64_t q_first = p.masks.position_offset;
  mha_steps::hook_projections(options.hooks, false, pr, d, hd, p.masks.tk, q_first, 0);
  record_qk(trace, "q", "k", pr, d, hd, p.masks.tk);
  record_heads(trace, "v", "T_k", "d_v", pr.v, pr.ldkv, d.b, hd.hkv, p.masks.tk, hd.dv);
  // 3a. q/k RMSNorm (Qwen3, OLMo 2), after the bias, before RoPE
  if (config_.qk_norm != MhaConfig::QkNorm::kNone) {
    if (saved) mha_steps::save_projections(pr, d, hd, *saved, true);
    norm_qk(d.b, d.tq, pr.q, pr.ldq, d.tk, p.masks.tk, pr.k, pr.ldkv);
    record_qk(trace, "q_normed", "k_normed", pr, d, hd, p.masks.tk);
  }
  if (config_.v_norm) norm_v(d.b, d.tk, p.masks.tk, pr.v, pr.ldkv);  // Gemma 4: weightless, per head
  // 3b. RoPE on q (positions offset + r) and the keys (c) after the bias; q × τ(offset + r) (Ministral 3)
  if (config_.rope) {
    RotaryTable table;
    mha_steps::rotate_qk(*config_.rope, hd, d.b, d.tq, p.masks.position_offset, pr.q, pr.ldq, d.tk,
                         p.masks.tk, 0, pr.k, pr.ldkv, false, table);
    temper_rows(pr.q, d.b, d.tq, pr.ldq, hd.h * hd.dk, config_.query_temperature, p.masks.position_offset);
    record_qk(trace, "q_rotated", "k_rotated", pr, d, hd, p.masks.tk);
  }
  mha_steps::hook_projections(options.hooks, true, pr, d, hd, p.masks.tk, q_first, 0);
  if (saved) mha_steps::save_projections(pr, d, hd, *saved, false);
  // 4. per (b, h): scores → scaled → masked → weights → [dropped] → context, into the concat layout
  bind_projections(pr, p);
  AttentionOutputs att;
  att.context_out = scratch.floats(static_cast<std::size_t>(rows_q) * hd.h * hd.dv);  // (B, Tq, H·dv)
  att.ldo = hd.h * hd.dv;
  prepare_weights(options, d, hd.h, p.masks.tk, result.weights, att);
  run_attention(p, options.need_weights, att, trace);
  if (config_.output_gate)  // z × σ(W_g x) (multi_head_gate.cpp): the z the hooks and out_proj see
    gate_context(d.b, d.tq, x, att.context_out, trace, saved ? &saved->ungated : nullptr);
  mha_steps::hook_context(options.hooks, att.context_out, d, hd, q_first);
  // 5.–8. concat, output projection, [residual], [LayerNorm]
  set_output_shape(d, result.output);
  if (saved) saved->context.assign(att.context_out, att.context_out + rows_q * hd.h * hd.dv);
  output_stage(w, config_, hd.h * hd.dv, att.context_out, x, d, result.output.data,
               saved ? &saved->pre_norm : nullptr, trace);
  ATTN_RETURN_IF_ERROR(
      check_forward_finite(options, d, hd, pr, p, att, key != nullptr || hd.extra > 0, result));
  if (saved) {
    saved->parameter_version = parameter_version_;
    saved->filled = true;
  }
  return Status::Ok();
}

}  // namespace attn
