// Gradients of one prediction's metric through a whole model, for attribution (saliency, attribution
// patching, gradient × attention), shared by both model classes (TinyTransformer::metric_gradients,
// PretrainedModel::metric_gradients). The weights are frozen: no weight gradients are computed.
//
// The metric M of one sequence's logits at `position` (pre-cap: before any final soft-cap):
//   kLogitDiff:       logits[token] − logits[against] (the logit alone when against < 0);
//   kProbability:     softmax(capped)[token], capped = c · tanh(logits / c) with the model's final
//                     soft-cap c (the logits themselves without one): the model's output distribution;
//   kLogProbability:  log softmax(capped)[token].
// With a batch of B sequences the gradients are of Σ_b M_b, so each sequence's are its own (integrated
// gradients batches its steps this way).
#pragma once
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace attn {

enum class MetricKind { kLogitDiff = 0, kProbability = 1, kLogProbability = 2 };

struct MetricSpec {
  MetricKind kind = MetricKind::kLogitDiff;
  int position = -1;  // -1 = T − 1
  int token = 0;
  int against = -1;  // -1 = none (kLogitDiff only: the logit alone)
};

// INVALID_ARGUMENT naming the option: a kind that does not exist, position outside [0, T) (after
// −1 → T − 1), token or against outside [0, vocab), against with a probability metric.
Status check_metric(const MetricSpec& m, int t, int vocab);

// M of one row of pre-cap logits (vocab) and ∂M/∂logits into dlogits (vocab, written), in double
// inside; final_softcap 0 = none. The spec must have passed check_metric.
double metric_value_and_grad(const MetricSpec& m, int vocab, const float* logits, float final_softcap,
                             float* dlogits);

struct GradientOptions {
  MetricSpec metric;
  // (B, T, width), when not empty: hidden state 0 (block 0's input) replaces the embedding of the ids
  // (integrated gradients' interpolated inputs); the ids still give B and T.
  std::vector<float> start_embedding;
  bool attention = false;    // GradientResult::grad_attention
  bool activations = false;  // GradientResult::hidden, z, mlp_branch: the run's own values
};

struct GradientResult {
  std::vector<double> values;          // (B): M of each sequence
  std::vector<Tensor> grad_hidden;     // L + 1 of (B, T, width): ∂M/∂ each hidden state, Hugging
                                       // Face's order ([0] block 0's input, [L] after the final norm)
  std::vector<Tensor> grad_z;          // L of (B, T, H·d_head): ∂M/∂ each query head's z (the
                                       // attention-weighted values before the output projection)
  std::vector<Tensor> grad_mlp;        // L of (B, T, width): ∂M/∂ the MLP branch as it is added to
                                       // the stream (ForwardOptions::mlp_branch); empty without an MLP
  std::vector<Tensor> grad_attention;  // L of (B, H, T, T) with GradientOptions::attention
  // With GradientOptions::activations: the run's values at the same places.
  std::vector<Tensor> hidden;      // L + 1 of (B, T, width), as ForwardOptions::hidden_states
  std::vector<Tensor> z;           // L of (B, T, H·d_head)
  std::vector<Tensor> mlp_branch;  // L of (B, T, width)
};

}  // namespace attn
