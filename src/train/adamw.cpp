#include "train/adamw.h"

#include <cmath>
#include <string>

#include "kernels/parallel.h"

namespace attn {

namespace {

Status invalid_option(const char* name, float value, const char* requirement) {
  return Status::Error(StatusCode::kInvalidArgument, std::string("AdamW option ") + name + " = " +
                                                         format_number(value) + " is invalid: it must be " +
                                                         requirement);
}

// Every option is a float: NaN fails each of these comparisons, so it is reported too.
bool finite_at_least_zero(float x) {
  return std::isfinite(x) && x >= 0.0f;
}
bool in_unit_interval(float x) {
  return x >= 0.0f && x < 1.0f;
}

// Per-element float32 constants of one step, derived the way torch derives them from Python
// floats: arithmetic in double, then cast to float32 where the tensor op consumes the scalar.
struct StepConstants {
  float decay;  // 1 - lr * weight_decay
  float beta1, one_minus_beta1;
  float beta2, one_minus_beta2;
  float bias_correction2_sqrt;  // sqrt(1 - beta2^step)
  float neg_step_size;          // -lr / (1 - beta1^step)
  float eps;
};

StepConstants step_constants(const AdamWOptions& o, std::int64_t step) {
  const double lr = o.lr, beta1 = o.beta1, beta2 = o.beta2;
  const double t = static_cast<double>(step);  // torch: step_t.item() is a Python float
  const double bias_correction1 = 1.0 - std::pow(beta1, t);
  const double bias_correction2 = 1.0 - std::pow(beta2, t);
  StepConstants c;
  c.decay = static_cast<float>(1.0 - lr * static_cast<double>(o.weight_decay));
  c.beta1 = o.beta1;
  c.one_minus_beta1 = static_cast<float>(1.0 - beta1);
  c.beta2 = o.beta2;
  c.one_minus_beta2 = static_cast<float>(1.0 - beta2);
  c.bias_correction2_sqrt = static_cast<float>(std::sqrt(bias_correction2));
  c.neg_step_size = static_cast<float>(-(lr / bias_correction1));
  c.eps = o.eps;
  return c;
}

// torch's _single_tensor_adamw for one tensor, one line per tensor op, each rounded to float32.
// (torch's vectorised add_(grad, alpha=...) may fuse into an FMA on AVX2; we never fuse, so that
// native and wasm agree: the two can differ in the last bit of exp_avg.)
// Elements in parallel (each is its own: docs/threads.md).
void adamw_update(const AdamWParam& p, const StepConstants& c) {
  kernels::parallel_items(p.n, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      const float g = p.grad[i];
      const float value = p.value[i] * c.decay;                               // param.mul_(1 - lr*wd)
      const float m = p.exp_avg[i] * c.beta1 + c.one_minus_beta1 * g;         // exp_avg.mul_.add_
      const float v = p.exp_avg_sq[i] * c.beta2 + c.one_minus_beta2 * g * g;  // .mul_.addcmul_
      const float denom = std::sqrt(v) / c.bias_correction2_sqrt + c.eps;     // (sqrt / bc2).add_(eps)
      p.value[i] = value + c.neg_step_size * m / denom;                       // addcdiv_(value=-step)
      p.exp_avg[i] = m;
      p.exp_avg_sq[i] = v;
    }
  });
}

}  // namespace

Status check_adamw_options(const AdamWOptions& o) {
  if (!finite_at_least_zero(o.lr)) return invalid_option("lr", o.lr, "finite and >= 0");
  if (!in_unit_interval(o.beta1)) return invalid_option("beta1", o.beta1, "in [0, 1)");
  if (!in_unit_interval(o.beta2)) return invalid_option("beta2", o.beta2, "in [0, 1)");
  if (!(std::isfinite(o.eps) && o.eps > 0.0f)) return invalid_option("eps", o.eps, "finite and > 0");
  if (!finite_at_least_zero(o.weight_decay)) {
    return invalid_option("weight_decay", o.weight_decay, "finite and >= 0");
  }
  if (!finite_at_least_zero(o.clip_grad_norm)) {
    return invalid_option("clip_grad_norm", o.clip_grad_norm, "finite and >= 0 (0 turns clipping off)");
  }
  return Status::Ok();
}

float global_grad_norm(const std::vector<AdamWParam>& params) {
  double sum_of_squared_norms = 0.0;
  for (const AdamWParam& p : params) {
    double sum_of_squares = 0.0;
    for (std::int64_t i = 0; i < p.n; ++i) {
      const double g = p.grad[i];
      sum_of_squares += g * g;
    }
    // torch.norm of one tensor is a float32; the total is the norm of those float32 norms.
    const double tensor_norm = static_cast<float>(std::sqrt(sum_of_squares));
    sum_of_squared_norms += tensor_norm * tensor_norm;
  }
  return static_cast<float>(std::sqrt(sum_of_squared_norms));
}

float clip_factor(float total_norm, float clip_grad_norm) {
  if (clip_grad_norm == 0.0f) return 1.0f;
  // torch: clip_coef = max_norm / (total_norm + 1e-6), where Python's `float / tensor` is
  // tensor.reciprocal() * float; then torch.clamp(clip_coef, max=1.0), which keeps NaN.
  const float reciprocal = 1.0f / (total_norm + 1e-6f);
  const float coef = reciprocal * clip_grad_norm;
  return coef > 1.0f ? 1.0f : coef;
}

void adamw_step(const std::vector<AdamWParam>& params, const AdamWOptions& o, std::int64_t step,
                float grad_scale) {
  const StepConstants constants = step_constants(o, step);
  for (const AdamWParam& p : params) {
    if (grad_scale != 1.0f) {  // clip_grad_norm_'s g.mul_(clip_coef_clamped)
      for (std::int64_t i = 0; i < p.n; ++i) p.grad[i] *= grad_scale;
    }
    adamw_update(p, constants);
  }
}

}  // namespace attn
