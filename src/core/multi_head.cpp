// MultiHeadAttention::forward — numbered steps, every buffer with its shape.
#include "core/multi_head.h"

#include <Eigen/Core>
#include <cmath>
#include <string>

#include "core/attention_engine.h"
#include "core/memory_limit.h"
#include "kernels/kernels.h"

namespace attn {

namespace {

using Dims = MultiHeadAttention::Dims;

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

// y (rows, out) = x (rows, in) · Wᵀ + b, with W (out, in) as nn.Linear stores it.
std::vector<float> linear(const float* x, std::int64_t rows, const Tensor& w, const Tensor& b) {
  const int out = w.dim(0), in = w.dim(1);
  std::vector<float> y(static_cast<size_t>(rows * out));  // y: (rows, out)
  kernels::gemm_nt(static_cast<int>(rows), out, in, x, in, w.data.data(), in, y.data(), out, false);
  if (!b.empty()) kernels::add_bias_rows(static_cast<int>(rows), out, b.data.data(), y.data(), out);
  return y;
}

// (B, T, H·d) → (B, H, T + extra, d); rows T.. are left for the extra keys.
std::vector<float> split_heads(const std::vector<float>& src, int b, int t, int h, int d, int extra) {
  const int tt = t + extra;
  std::vector<float> dst(static_cast<size_t>(b) * h * tt * d, 0.0f);  // dst: (B, H, T+extra, d)
  for (int bi = 0; bi < b; ++bi)
    for (int ti = 0; ti < t; ++ti)
      for (int hi = 0; hi < h; ++hi) {
        const float* from = src.data() + ((static_cast<size_t>(bi) * t + ti) * h + hi) * d;
        std::copy(from, from + d, dst.data() + ((static_cast<size_t>(bi) * h + hi) * tt + ti) * d);
      }
  return dst;
}

// (B, H, T, d) → (B, T, H·d)
std::vector<float> merge_heads(const std::vector<float>& src, int b, int h, int t, int d) {
  std::vector<float> dst(src.size());  // dst: (B, T, H·d)
  for (int bi = 0; bi < b; ++bi)
    for (int hi = 0; hi < h; ++hi)
      for (int ti = 0; ti < t; ++ti) {
        const float* from = src.data() + ((static_cast<size_t>(bi) * h + hi) * t + ti) * d;
        std::copy(from, from + d, dst.data() + ((static_cast<size_t>(bi) * t + ti) * h + hi) * d);
      }
  return dst;
}

// Writes bias (H·d) into row `row` of every (b, h) slice of heads (B, H, T', d).
void set_extra_row(std::vector<float>& heads, const float* bias, int b, int h, int tt, int d, int row) {
  for (int bi = 0; bi < b; ++bi)
    for (int hi = 0; hi < h; ++hi) {
      float* dst = heads.data() + ((static_cast<size_t>(bi) * h + hi) * tt + row) * d;
      if (bias) std::copy(bias + hi * d, bias + (hi + 1) * d, dst);
      else std::fill(dst, dst + d, 0.0f);
    }
}

void record(Trace* trace, const char* name, std::vector<std::string> axes, Shape shape,
            const std::vector<float>& data) {
  if (trace) trace->record(name, std::move(axes), Tensor(std::move(shape), data));
}

// 0. Shapes of query/key/value; unbatched (T, E) input runs as B = 1.
Status resolve_dims(const Tensor& query, const Tensor* key, const Tensor* value, int e, int kdim,
                    int vdim, Dims& d) {
  d.e = e;
  d.batched = query.rank() == 3;
  d.b = d.batched ? query.dim(0) : 1;
  ATTN_RETURN_IF_ERROR(check_sequence(query, "query", e, d.batched, d.b, d.tq));
  d.tk = d.tq;
  if (!key) return Status::Ok();
  int tv = 0;
  ATTN_RETURN_IF_ERROR(check_sequence(*key, "key", kdim, d.batched, d.b, d.tk));
  ATTN_RETURN_IF_ERROR(check_sequence(value ? *value : *key, "value", vdim, d.batched, d.b, tv));
  if (tv != d.tk) {
    return Status::Error(StatusCode::kShapeMismatch,
                         "key has " + std::to_string(d.tk) + " positions but value has " + std::to_string(tv));
  }
  return Status::Ok();
}

// 1. x (B, Tq, E) = query + positional[0:Tq]; records input, [positional, x].
Status encode_positions(const Tensor& query, const Tensor* pe, const Dims& d, std::vector<float>& x,
                        Trace* trace) {
  x = query.data;
  const std::int64_t n = static_cast<std::int64_t>(d.tq) * d.e;
  if (pe) {
    ATTN_RETURN_IF_ERROR(check_well_formed(*pe, "positional"));
    if (pe->rank() != 2 || pe->dim(0) < d.tq || pe->dim(1) != d.e) {
      return Status::Error(StatusCode::kShapeMismatch, "positional must have shape (T >= " + std::to_string(d.tq) +
                                                           ", " + std::to_string(d.e) + "), got " +
                                                           shape_to_string(pe->shape));
    }
    ATTN_RETURN_IF_ERROR(check_finite(*pe, "positional"));
    for (int bi = 0; bi < d.b; ++bi) {
      kernels::add_vec(static_cast<int>(n), x.data() + bi * n, pe->data.data(), x.data() + bi * n);
    }
  }
  const Shape bte = {d.b, d.tq, d.e};
  record(trace, "input", {"B", "T_q", "d_model"}, bte, query.data);
  if (pe && trace) {
    record(trace, "positional", {"T_q", "d_model"}, {d.tq, d.e},
           std::vector<float>(pe->data.begin(), pe->data.begin() + n));
    record(trace, "x", {"B", "T_q", "d_model"}, bte, x);
  }
  return Status::Ok();
}

// (B, Tq, Tk) = mean over heads of (B, H, Tq, Tk).
std::vector<float> average_heads(const std::vector<float>& heads, int b, int h, std::int64_t per_head) {
  std::vector<float> avg(static_cast<size_t>(b * per_head));
  for (int bi = 0; bi < b; ++bi) {
    Eigen::Map<const Eigen::MatrixXf> slices(heads.data() + bi * h * per_head, per_head, h);
    Eigen::Map<Eigen::VectorXf>(avg.data() + bi * per_head, per_head) = slices.rowwise().mean();
  }
  return avg;
}

}  // namespace

Status mha_masks_to_plan(const MhaForwardOptions& options, MaskPlan& plan, int b, int h);

Status MultiHeadAttention::forward(const Tensor& query, const Tensor* key, const Tensor* value,
                                   const MhaForwardOptions& options, MhaResult& result,
                                   Trace* trace) const {
  Dims d;
  ATTN_RETURN_IF_ERROR(resolve_dims(query, key, value, config_.embed_dim, kdim_, vdim_, d));
  ATTN_RETURN_IF_ERROR(check_scale_and_dropout(options.scale, options.dropout));
  const int h = config_.num_heads, dk = head_dim_, dv = value_head_dim_;
  const int extra = (config_.add_bias_kv ? 1 : 0) + (config_.add_zero_attn ? 1 : 0);
  const int tk = d.tk + extra;  // keys including the extra bias_k / zero-attention keys
  AttentionProblem p;
  p.masks.lead = {d.b, h};
  p.masks.tq = d.tq;
  p.masks.tk = tk;
  p.masks.real_keys = d.tk;
  p.masks.causal = options.causal;
  ATTN_RETURN_IF_ERROR(mha_masks_to_plan(options, p.masks, d.b, h));
  p.dk = dk;
  p.dv = dv;
  p.scale = options.scale ? *options.scale : 1.0f / std::sqrt(static_cast<float>(dk));
  p.dropout = options.dropout;
  p.lead_axes = {"B", "H"};
  const std::int64_t rows_q = static_cast<std::int64_t>(d.b) * d.tq, rows_k = static_cast<std::int64_t>(d.b) * tk;
  const std::uint64_t activations = rows_q * (3ull * d.e + 2ull * h * (dk + dv)) + rows_k * 2ull * h * (dk + dv);
  ATTN_RETURN_IF_ERROR(check_allocation(activations * (trace ? 2 : 1) +
                                            attention_scratch_elements(p, options.need_weights, trace != nullptr),
                                        "multi-head attention"));
  // 1. x (B, Tq, E) = query + positional encoding
  std::vector<float> x;
  ATTN_RETURN_IF_ERROR(encode_positions(query, options.positional, d, x, trace));
  // 2.–3. q (B, H, Tq, dk), k (B, H, Tk', dk), v (B, H, Tk', dv) with the extra keys
  std::vector<float> q_heads, k_heads, v_heads;
  project_heads(x, key ? key->data.data() : x.data(), key ? (value ? value : key)->data.data() : x.data(), d,
                q_heads, k_heads, v_heads, trace);
  // 4. per (b, h): scores → scaled → masked → weights → [dropped] → context (B, H, Tq, dv)
  p.q = q_heads.data();
  p.k = k_heads.data();
  p.v = v_heads.data();
  AttentionOutputs att;
  run_attention(p, options.need_weights, att, trace);
  // 5.–8. concat, output projection, [residual], [LayerNorm]
  result.output = Tensor(d.batched ? Shape{d.b, d.tq, d.e} : Shape{d.tq, d.e},
                         finish_output(att.context, x, d, trace));
  result.weights = Tensor();
  if (options.need_weights) {
    const Shape lead = d.batched ? Shape{d.b} : Shape{};
    Shape w_shape = lead;
    if (!options.average_weights) w_shape.push_back(h);
    w_shape.insert(w_shape.end(), {d.tq, tk});
    result.weights = Tensor(std::move(w_shape), options.average_weights
                                                    ? average_heads(att.weights, d.b, h, static_cast<std::int64_t>(d.tq) * tk)
                                                    : std::move(att.weights));
  }
  return Status::Ok();
}

// 2. Projections q = x·W_qᵀ + b_q, k, v; split into heads. 3. Extra keys: the bias_k/bias_v row,
// then the zero-attention row (PyTorch's order).
void MultiHeadAttention::project_heads(const std::vector<float>& x, const float* key_src, const float* value_src,
                                       const Dims& d, std::vector<float>& q_heads, std::vector<float>& k_heads,
                                       std::vector<float>& v_heads, Trace* trace) const {
  const int h = config_.num_heads, dk = head_dim_, dv = value_head_dim_;
  const int extra = (config_.add_bias_kv ? 1 : 0) + (config_.add_zero_attn ? 1 : 0);
  const int tk = d.tk + extra;
  const std::int64_t rows_k = static_cast<std::int64_t>(d.b) * d.tk;
  q_heads = split_heads(linear(x.data(), static_cast<std::int64_t>(d.b) * d.tq, w_q_, b_q_), d.b, d.tq, h, dk, 0);
  k_heads = split_heads(linear(key_src, rows_k, w_k_, b_k_), d.b, d.tk, h, dk, extra);
  v_heads = split_heads(linear(value_src, rows_k, w_v_, b_v_), d.b, d.tk, h, dv, extra);
  int row = d.tk;
  if (config_.add_bias_kv) {
    set_extra_row(k_heads, bias_k_.data.data(), d.b, h, tk, dk, row);
    set_extra_row(v_heads, bias_v_.data.data(), d.b, h, tk, dv, row++);
  }
  if (config_.add_zero_attn) {
    set_extra_row(k_heads, nullptr, d.b, h, tk, dk, row);
    set_extra_row(v_heads, nullptr, d.b, h, tk, dv, row++);
  }
  record(trace, "q", {"B", "H", "T_q", "d_k"}, {d.b, h, d.tq, dk}, q_heads);
  record(trace, "k", {"B", "H", "T_k", "d_k"}, {d.b, h, tk, dk}, k_heads);
  record(trace, "v", {"B", "H", "T_k", "d_v"}, {d.b, h, tk, dv}, v_heads);
}

// 5. concat (B, Tq, H·dv); 6. output (B, Tq, E) = concat·W_oᵀ + b_o; 7. residual = output + x;
// 8. normalized = LayerNorm(residual). Returns the last of these.
std::vector<float> MultiHeadAttention::finish_output(const std::vector<float>& context, const std::vector<float>& x,
                                                     const Dims& d, Trace* trace) const {
  const int h = config_.num_heads, dv = value_head_dim_;
  const Shape bte = {d.b, d.tq, d.e};
  const std::vector<float> concat = merge_heads(context, d.b, h, d.tq, dv);
  record(trace, "concat", {"B", "T_q", "H·d_v"}, {d.b, d.tq, h * dv}, concat);
  std::vector<float> out = linear(concat.data(), static_cast<std::int64_t>(d.b) * d.tq, w_o_, b_o_);
  record(trace, "output", {"B", "T_q", "d_model"}, bte, out);
  if (config_.residual) {
    kernels::add_vec(static_cast<int>(out.size()), out.data(), x.data(), out.data());
    record(trace, "residual", {"B", "T_q", "d_model"}, bte, out);
  }
  if (config_.layer_norm) {
    for (std::size_t r = 0; r < out.size(); r += d.e) {
      kernels::layer_norm_row(d.e, out.data() + r, ln_weight_.data.data(), ln_bias_.data.data(),
                              config_.layer_norm_eps, out.data() + r);  // in place (kernels.h)
    }
    record(trace, "normalized", {"B", "T_q", "d_model"}, bte, out);
  }
  return out;
}

}  // namespace attn
