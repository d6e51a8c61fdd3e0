// One forward's options and outputs, shared by both model classes (TinyTransformer and PretrainedModel):
// the attention weights and traces a page shows, hidden states, the logit lens, and the hook points
// (hooks.h: captures and edits, the one mechanism of run(), steering and patching). The binding reads
// them from one JS object (src/wasm/bindings_interp.h); the JS adapters (src/js/interp/adapter.js) run
// attribution and patching over them, so neither model's math is written again in JS.
//
// hidden_states follow Hugging Face's output_hidden_states, L + 1 of (B, T, width) for both models:
// [0] the embedding output, [i] block i − 1's output (the stream entering block i), [L] the last block's
// output through the final norm (a TinyTransformer without ln_f: the stream itself).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "core/trace.h"
#include "model/hooks.h"

namespace attn {

struct ForwardOptions {
  std::vector<int> attention_layers;  // layers whose (B, H, T, T) weights are returned
  std::vector<int> trace_layers;      // layers whose attention steps are traced
  // Boolean mask, 1 = may attend, (T, T) or per head (B·H, T, T) as MultiHeadAttention's `mask`:
  // applied in every layer on top of the model's causal mask (it can only take keys away). For
  // exploring a trained model ("what if this token could not see that one"); training never uses it.
  // TinyTransformer only: PretrainedModel refuses it.
  const BoolTensor* mask = nullptr;
  bool hidden_states = false;  // L + 1 of (B, T, width), in Hugging Face's order (above)
  // The logit lens: each hidden state but the last through the final norm and the head, then the
  // model's own logits; the top token and its probability per position, (L + 1, B, T).
  bool logit_lens = false;
  // The hook points' captures and edits of this forward (hooks.h: made for this pass by
  // HookRun::create, which checked them); null = none. Patching is a run from a block's input
  // (startAt) with an edit; steering, an edit in every decoding step.
  const HookRun* hooks = nullptr;
  int logits_row = -1;  // >= 0: the logits of that position only, (B, 1, V) (decoding)
  // The logits before any final soft-capping (Gemma 2's final_logit_softcapping): what attribution
  // and patching explain (the same pre-cap logits everywhere). Nothing to do for a model without a cap.
  bool pre_cap_logits = false;

  // Whether the run starts at a block's input instead of the embeddings (no hidden states before it).
  bool from_stream() const { return hooks && hooks->start_stream() != nullptr; }
  int start_layer() const { return hooks ? hooks->start_layer() : 0; }
};

struct ForwardResult {
  Tensor logits;                       // (B, T, V), or (B, 1, V) with logits_row
  std::vector<Tensor> attention;       // one per layer; an empty Tensor for layers not requested
  std::vector<Trace> traces;           // one per layer; empty for layers not traced
  std::vector<Tensor> hidden_states;   // L + 1 of (B, T, width) with options.hidden_states
  std::vector<std::int32_t> lens_ids;  // (L + 1, B, T) with options.logit_lens; the last row the model's own
  std::vector<float> lens_probs;       // (L + 1, B, T)
};

// The names each model's header used before the two were one: the same types.
using TinyForwardOptions = ForwardOptions;
using TinyForwardResult = ForwardResult;
using PretrainedForwardOptions = ForwardOptions;
using PretrainedForwardResult = ForwardResult;

// The checks of a forward's options against a pass of t rows: logits_row in [0, t); a run from a
// block's input has no hidden states or logit lens. INVALID_ARGUMENT.
Status check_hooks(const ForwardOptions& o, int t);

// Appends to the lens the top token of one position's logits (V) and its probability.
void lens_top(int v, const float* logits, ForwardResult& r);

// The row at position `row` of each of b sequences of t rows of `width` values: (b, width).
std::vector<float> rows_at(const float* x, int b, int t, int width, int row);
// The same into `picked` (resized: a reused buffer allocates nothing).
void rows_at(const float* x, int b, int t, int width, int row, std::vector<float>& picked);

}  // namespace attn
