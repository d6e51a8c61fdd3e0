#include "train/trainer.h"

#include <cmath>
#include <string>

namespace attn {

namespace {

// The first tensor of `ts` with a non-finite element: check_finite's message names it and the
// index ("… <name> …"); empty when all are finite. check_finite's scan vectorises.
std::string first_non_finite(const std::vector<Tensor>& ts, const std::vector<std::string>& names) {
  for (std::size_t k = 0; k < ts.size(); ++k) {
    const Status st = check_finite(ts[k], names[k].c_str());
    if (!st.ok()) return st.message;
  }
  return {};
}

std::vector<Tensor> zeros_like(const std::vector<Tensor>& ts) {
  std::vector<Tensor> out;
  for (const Tensor& t : ts) out.push_back(Tensor::zeros(t.shape));
  return out;
}

}  // namespace

Status Trainer::create(TinyTransformer* model, const AdamWOptions& options, Trainer& out) {
  ATTN_RETURN_IF_ERROR(check_adamw_options(options));
  Trainer t;
  t.model_ = model;
  t.options_ = options;
  t.exp_avg_ = zeros_like(model->parameters());
  t.exp_avg_sq_ = zeros_like(model->parameters());
  out = std::move(t);
  return Status::Ok();
}

Status Trainer::set_learning_rate(float lr) {
  AdamWOptions o = options_;
  o.lr = lr;
  ATTN_RETURN_IF_ERROR(check_adamw_options(o));
  options_ = o;
  return Status::Ok();
}

Status Trainer::step(const IdBatch& ids, const IdBatch& targets, TrainStepResult& result) {
  const std::string at = "training step " + std::to_string(steps_ + 1) + ": ";
  float loss = 0.0f;
  Status st = model_->gradients(ids, targets, loss, grads_);
  if (!st.ok())
    return Status::Error(st.code, st.code == StatusCode::kNonFinite ? at + st.message : st.message);
  const std::vector<std::string>& names = model_->parameter_names();
  if (!std::isfinite(loss)) return Status::Error(StatusCode::kNonFinite, at + "the loss is not finite");
  std::string bad = first_non_finite(grads_, names);
  if (!bad.empty()) return Status::Error(StatusCode::kNonFinite, at + "a gradient is not finite: " + bad);
  // 1. The update into spare buffers: copies of the weights and moments.
  std::vector<Tensor>& params = model_->parameters_for_update();
  next_value_ = params;
  next_avg_ = exp_avg_;
  next_avg_sq_ = exp_avg_sq_;
  std::vector<AdamWParam> refs;
  for (std::size_t k = 0; k < params.size(); ++k) {
    refs.push_back({next_value_[k].data.data(), grads_[k].data.data(), next_avg_[k].data.data(),
                    next_avg_sq_[k].data.data(), params[k].numel()});
  }
  const float norm = global_grad_norm(refs);
  if (!std::isfinite(norm))
    return Status::Error(StatusCode::kNonFinite, at + "the gradient norm overflowed float32");
  adamw_step(refs, options_, steps_ + 1, clip_factor(norm, options_.clip_grad_norm));
  // 2. Swapped in only when everything is finite.
  for (const auto* ts : {&next_value_, &next_avg_, &next_avg_sq_}) {
    bad = first_non_finite(*ts, names);
    if (!bad.empty()) {
      return Status::Error(StatusCode::kNonFinite,
                           at +
                               "the update would make a weight or moment non-finite (is "
                               "the learning rate too large?): " +
                               bad);
    }
  }
  for (std::size_t k = 0; k < params.size(); ++k) {
    params[k].data.swap(next_value_[k].data);
    exp_avg_[k].data.swap(next_avg_[k].data);
    exp_avg_sq_[k].data.swap(next_avg_sq_[k].data);
  }
  ++steps_;
  result.loss = loss;
  result.grad_norm = norm;
  return Status::Ok();
}

Status Trainer::set_state(std::int64_t step, const std::vector<Tensor>& exp_avg,
                          const std::vector<Tensor>& exp_avg_sq) {
  const std::vector<std::string>& names = model_->parameter_names();
  if (step < 0)
    return Status::Error(StatusCode::kInvalidArgument, "step must be >= 0, got " + std::to_string(step));
  for (const auto* ts : {&exp_avg, &exp_avg_sq}) {
    if (ts->size() != names.size()) {
      return Status::Error(StatusCode::kShapeMismatch, "expected moments for " +
                                                           std::to_string(names.size()) +
                                                           " parameters, got " + std::to_string(ts->size()));
    }
    for (std::size_t k = 0; k < names.size(); ++k) {
      if ((*ts)[k].shape != exp_avg_[k].shape || (*ts)[k].data.size() != exp_avg_[k].data.size()) {
        return Status::Error(StatusCode::kShapeMismatch, "moment of \"" + names[k] + "\" must have shape " +
                                                             shape_to_string(exp_avg_[k].shape) + ", got " +
                                                             shape_to_string((*ts)[k].shape));
      }
      ATTN_RETURN_IF_ERROR(check_finite((*ts)[k], names[k].c_str()));
    }
  }
  for (std::size_t k = 0; k < names.size(); ++k) {
    for (float v : exp_avg_sq[k].data)
      if (v < 0.0f)
        return Status::Error(StatusCode::kInvalidArgument,
                             "exp_avg_sq of \"" + names[k] + "\" has a negative value");
  }
  steps_ = step;
  exp_avg_ = exp_avg;
  exp_avg_sq_ = exp_avg_sq;
  return Status::Ok();
}

}  // namespace attn
