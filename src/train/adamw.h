// AdamW with optional global gradient-norm clipping, written to match PyTorch 1.13 operation by
// operation in float32:
//   torch.nn.utils.clip_grad_norm_(params, clip_grad_norm)      (when clip_grad_norm > 0)
//   torch.optim.AdamW(params, lr, (beta1, beta2), eps, weight_decay,
//                     amsgrad=False, maximize=False, foreach=False).step()
// The optimiser state lives in caller-owned buffers (AdamWParam), so a model can keep its
// parameters, gradients and moments wherever it likes (e.g. one flat wasm-heap allocation).
//
// A training step is:
//   const float norm = global_grad_norm(params);                      // before clipping
//   adamw_step(params, options, ++step, clip_factor(norm, options.clip_grad_norm));
#pragma once
#include <cstdint>
#include <vector>

#include "core/status.h"

namespace attn {

struct AdamWOptions {
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.01f;
  // 0 = no clipping; else torch.nn.utils.clip_grad_norm_(params, clip_grad_norm)
  float clip_grad_norm = 0.0f;
};

// lr ≥ 0 and finite, beta1 and beta2 in [0, 1), eps > 0 and finite, weight_decay ≥ 0 and finite,
// clip_grad_norm ≥ 0 and finite: otherwise kInvalidArgument naming the option and its value.
Status check_adamw_options(const AdamWOptions& o);

// One parameter tensor of n elements and its optimiser state. The four pointers each address n
// floats; exp_avg and exp_avg_sq start at zero (PyTorch's state initialisation).
struct AdamWParam {
  float* value;       // (n,) updated in place
  float* grad;        // (n,) may be scaled in place by the clip factor
  float* exp_avg;     // (n,) first moment, PyTorch's name
  float* exp_avg_sq;  // (n,) second moment, PyTorch's name
  std::int64_t n;
};

// Total 2-norm of every grad as torch.nn.utils.clip_grad_norm_ computes it: the norm of the
// per-tensor norms (each rounded to float32, as torch stacks float32 norms), as a float32. Sums of
// squares are accumulated in double, so no intermediate overflows for finite float gradients.
// 0 for an empty list; NaN or Inf when a gradient holds one (torch's error_if_nonfinite=False).
float global_grad_norm(const std::vector<AdamWParam>& params);

// PyTorch's clip coefficient, in float32: min(clip_grad_norm / (total_norm + 1e-6), 1); exactly 1
// when clip_grad_norm == 0 (clipping off). A NaN total_norm gives NaN, as in torch.
float clip_factor(float total_norm, float clip_grad_norm);

// One AdamW step over every parameter, exactly torch's _single_tensor_adamw for one param group:
// `step` is the 1-based step count AFTER the increment (1 on the first call; must be ≥ 1). Each
// grad is first multiplied in place by `grad_scale` (the clip factor; skipped when exactly 1,
// which is what multiplying by 1 gives anyway). Options are assumed checked (check_adamw_options).
void adamw_step(const std::vector<AdamWParam>& params, const AdamWOptions& o, std::int64_t step,
                float grad_scale);

}  // namespace attn
