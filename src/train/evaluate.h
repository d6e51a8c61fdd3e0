// evaluate: a model's loss and greedy accuracy on batches of a task, teacher-forced.
#pragma once
#include <cstdint>

#include "model/tiny_transformer.h"
#include "train/tasks.h"

namespace attn {

struct EvalResult {
  float loss = 0.0f;               // mean cross-entropy over every scored position of every batch
  double token_accuracy = 0.0;     // scored positions whose argmax logit is the target
  double sequence_accuracy = 0.0;  // sequences whose every scored position is right
};

// Batches index 0 … batches−1 of the task's evaluation stream `seed` (Task::batch_at), batch_size
// sequences each; the task's vocabulary must fit the model's and its length its maxLength.
Status evaluate(TinyTransformer& model, const Task& task, int batches, int batch_size, std::uint64_t seed,
                EvalResult& out);

}  // namespace attn
