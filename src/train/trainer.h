// Trainer: AdamW over every parameter of a TinyTransformer (one parameter group, decay on every
// parameter, as torch.optim.AdamW(model.parameters())), preceded when clip_grad_norm > 0 by
// torch.nn.utils.clip_grad_norm_. One step = forward, backward, clip, update: one call.
//
// A step is all or nothing: the update is computed into spare buffers and swapped in only when the
// loss, every gradient and every new weight and moment are finite; otherwise the step is kNonFinite
// naming the step and what went wrong, and the weights, moments and step count stay as they were.
#pragma once
#include <cstdint>
#include <vector>

#include "model/tiny_transformer.h"
#include "train/adamw.h"

namespace attn {

struct TrainStepResult {
  float loss = 0.0f;       // at the parameters before this step's update
  float grad_norm = 0.0f;  // total 2-norm of the gradients before clipping
};

class Trainer {
 public:
  // The model must outlive the trainer (the binding holds both).
  static Status create(TinyTransformer* model, const AdamWOptions& options, Trainer& out);

  Status step(const IdBatch& ids, const IdBatch& targets, TrainStepResult& result);
  std::int64_t steps() const { return steps_; }
  const AdamWOptions& options() const { return options_; }
  Status set_learning_rate(float lr);

  // Moments in the model's parameter_names() order (PyTorch's exp_avg / exp_avg_sq).
  const std::vector<Tensor>& exp_avg() const { return exp_avg_; }
  const std::vector<Tensor>& exp_avg_sq() const { return exp_avg_sq_; }
  // Restores a saved state; shapes and values are checked first (nothing changes on an error).
  Status set_state(std::int64_t step, const std::vector<Tensor>& exp_avg,
                   const std::vector<Tensor>& exp_avg_sq);

 private:
  TinyTransformer* model_ = nullptr;
  AdamWOptions options_;
  std::int64_t steps_ = 0;
  std::vector<Tensor> exp_avg_, exp_avg_sq_;
  std::vector<Tensor> grads_;                                // this step's gradients
  std::vector<Tensor> next_value_, next_avg_, next_avg_sq_;  // the update, before it is swapped in
};

}  // namespace attn
