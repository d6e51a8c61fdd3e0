#include "core/attention.h"

#include <cmath>
#include <string>

#include "core/attention_engine.h"
#include "core/memory_limit.h"

namespace attn {

namespace {

// Axis −3 of q (H) against k's and v's (H_kv): equal, or under enable_gqa a divisor of H.
Status check_kv_heads(const Tensor& q, const Tensor& k, const Tensor& v, bool enable_gqa, int& kv_group) {
  const int a = q.rank() - 3;
  kv_group = 1;
  if (a < 0 || (k.shape[a] == q.shape[a] && v.shape[a] == q.shape[a])) return Status::Ok();
  const std::string shapes =
      "q " + shape_to_string(q.shape) + ", k " + shape_to_string(k.shape) + ", v " + shape_to_string(v.shape);
  if (!enable_gqa || k.shape[a] != v.shape[a] || k.shape[a] < 1) {
    return Status::Error(
        StatusCode::kShapeMismatch,
        "q, k and v must share their leading axes (grouped-query attention, k and v with fewer "
        "heads on axis −3 than q, needs enableGQA: true); got " +
            shapes);
  }
  if (q.shape[a] % k.shape[a] != 0) {
    return Status::Error(StatusCode::kHeadsDoNotDivide,
                         "grouped-query attention: k and v's " + std::to_string(k.shape[a]) +
                             " heads must divide q's " + std::to_string(q.shape[a]) + "; got " + shapes);
  }
  kv_group = static_cast<int>(q.shape[a] / k.shape[a]);
  return Status::Ok();
}

Status check_qkv(const Tensor& q, const Tensor& k, const Tensor& v) {
  ATTN_RETURN_IF_ERROR(check_well_formed(q, "q"));
  ATTN_RETURN_IF_ERROR(check_well_formed(k, "k"));
  ATTN_RETURN_IF_ERROR(check_well_formed(v, "v"));
  if (q.rank() < 2 || k.rank() != q.rank() || v.rank() != q.rank()) {
    return Status::Error(StatusCode::kShapeMismatch,
                         "q, k and v must have the same rank >= 2 ((..., T, d)); got q " +
                             shape_to_string(q.shape) + ", k " + shape_to_string(k.shape) + ", v " +
                             shape_to_string(v.shape));
  }
  for (int a = 0; a < q.rank() - 3; ++a) {  // axis −3 (heads): check_kv_heads
    if (k.shape[a] != q.shape[a] || v.shape[a] != q.shape[a]) {
      return Status::Error(StatusCode::kShapeMismatch,
                           "q, k and v must share their leading axes; got q " + shape_to_string(q.shape) +
                               ", k " + shape_to_string(k.shape) + ", v " + shape_to_string(v.shape));
    }
  }
  if (k.dim(-1) != q.dim(-1)) {
    return Status::Error(StatusCode::kShapeMismatch, "k has d_k " + std::to_string(k.dim(-1)) +
                                                         " but q has d_k " + std::to_string(q.dim(-1)));
  }
  if (v.dim(-2) != k.dim(-2)) {
    return Status::Error(
        StatusCode::kShapeMismatch,
        "v has " + std::to_string(v.dim(-2)) + " keys (T_k) but k has " + std::to_string(k.dim(-2)));
  }
  ATTN_RETURN_IF_ERROR(check_finite(q, "q"));
  ATTN_RETURN_IF_ERROR(check_finite(k, "k"));
  return check_finite(v, "v");
}

}  // namespace

Status check_scale_and_dropout(const std::optional<float>& scale, const DropoutOptions& dropout) {
  if (scale && !(std::isfinite(*scale) && *scale > 0.0f)) {
    return Status::Error(
        StatusCode::kInvalidArgument,
        "scale must be a finite number > 0 (temperature t means scale 1/t), got " + format_number(*scale));
  }
  if (!(dropout.p >= 0.0f && dropout.p < 1.0f)) {
    return Status::Error(StatusCode::kInvalidArgument,
                         "dropout p must be in [0, 1), got " + format_number(dropout.p));
  }
  return Status::Ok();
}

Status add_masks_to_plan(const BoolTensor* mask, const Tensor* additive, MaskPlan& plan) {
  if (mask) ATTN_RETURN_IF_ERROR(add_bool_mask(plan, *mask, mask->shape, "mask"));
  if (additive) ATTN_RETURN_IF_ERROR(add_additive_mask(plan, *additive, additive->shape, "additiveMask"));
  return Status::Ok();
}

Status make_sdpa_problem(const Tensor& q, const Tensor& k, const Tensor& v, const SdpaOptions& options,
                         AttentionProblem& p) {
  ATTN_RETURN_IF_ERROR(check_qkv(q, k, v));
  ATTN_RETURN_IF_ERROR(check_kv_heads(q, k, v, options.enable_gqa, p.kv_group));
  ATTN_RETURN_IF_ERROR(check_scale_and_dropout(options.scale, options.dropout));
  p.masks.lead.assign(q.shape.begin(), q.shape.end() - 2);
  p.masks.tq = q.dim(-2);
  p.masks.tk = p.masks.real_keys = k.dim(-2);
  p.group_axis = q.rank() >= 3 ? static_cast<int>(q.dim(-3)) : 1;
  ATTN_RETURN_IF_ERROR(set_positions(options.positions, options.causal, p.masks));
  ATTN_RETURN_IF_ERROR(add_masks_to_plan(options.mask, options.additive_mask, p.masks));
  p.dk = q.dim(-1);
  p.dv = v.dim(-1);
  p.q = q.data.data();
  p.k = k.data.data();
  p.v = v.data.data();
  p.scale = options.scale ? *options.scale : 1.0f / std::sqrt(static_cast<float>(p.dk));
  p.dropout = options.dropout;
  return Status::Ok();
}

Status scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const SdpaOptions& options, SdpaResult& result, Trace* trace) {
  AttentionProblem p;
  ATTN_RETURN_IF_ERROR(make_sdpa_problem(q, k, v, options, p));
  for (size_t a = 0; a < p.masks.lead.size(); ++a) p.lead_axes.push_back("N" + std::to_string(a));
  ATTN_RETURN_IF_ERROR(
      check_allocation(attention_scratch_elements(p, options.need_weights, trace != nullptr), "attention"));

  AttentionOutputs out;
  run_attention(p, options.need_weights, out, trace);
  // Finite inputs, so a non-finite value is an overflow: in the scores when the weights show it.
  if (options.need_weights)
    ATTN_RETURN_IF_ERROR(
        check_computed(out.weights.data(), out.weights.size(), "attention: the scores q·kᵀ·scale"));
  ATTN_RETURN_IF_ERROR(check_computed(out.context.data(), out.context.size(),
                                      options.need_weights
                                          ? "attention: the output weights·v"
                                          : "attention: the scores q·kᵀ·scale or the output weights·v"));
  Shape out_shape = p.masks.lead;  // output: (..., Tq, dv)
  out_shape.push_back(p.masks.tq);
  out_shape.push_back(p.dv);
  result.output = Tensor(std::move(out_shape), std::move(out.context));
  if (options.need_weights) {
    Shape w_shape = p.masks.lead;  // weights: (..., Tq, Tk)
    w_shape.push_back(p.masks.tq);
    w_shape.push_back(p.masks.tk);
    result.weights = Tensor(std::move(w_shape), std::move(out.weights));
  } else {
    result.weights = Tensor();
  }
  return Status::Ok();
}

}  // namespace attn
