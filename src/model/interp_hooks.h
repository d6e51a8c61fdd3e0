// One forward's options and outputs, shared by both model classes (TinyTransformer and PretrainedModel):
// the attention weights and traces a page shows, and the interpretability hooks (hidden states, the
// logit lens, each MLP's output, the patching hooks). The binding reads them from one JS object
// (src/wasm/bindings_interp.h); the JS adapters (src/js/interp/adapter.js) run attribution and patching
// over them, so neither model's math is written again in JS.
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
  // Interpretability, without KV caches. mlp_outputs: each block's MLP output (B, T, width), bias
  // included, before any post-norm (none without an MLP). start_residual (B, T, width), when not
  // empty: the stream entering block start_layer (hidden state start_layer), the embeddings and the
  // blocks before it not run. attn_delta (B, T, width), when delta_layer >= 0: added to that layer's
  // attention output (after the output projection, before the residual add or a post-norm): a head's
  // z patched is W_O[:, head] · Δz there. logits_row >= 0: the logits of that position only, (B, 1, V).
  bool mlp_outputs = false;
  // mlp_branch: each block's MLP branch as it is added to the stream (B, T, width): after the
  // post-norm where the family has one (OLMo 2, Gemma), the MLP output itself elsewhere (a post-norm
  // TinyTransformer adds it before its norm: x = norm(x + f(x))). mlp_delta (B, T, width), when
  // mlp_delta_layer >= 0: added to that layer's branch there (patching an MLP's output).
  bool mlp_branch = false;
  int mlp_delta_layer = -1;
  std::vector<float> mlp_delta;
  int start_layer = 0;
  std::vector<float> start_residual;
  int delta_layer = -1;
  std::vector<float> attn_delta;
  int logits_row = -1;
  // The logits before any final soft-capping (Gemma 2's final_logit_softcapping): what attribution
  // and patching explain (the same pre-cap logits everywhere). Nothing to do for a model without a cap.
  bool pre_cap_logits = false;

  // Whether a hook that needs a full, uncached run from the given ids or residual is set (logits_row
  // is not one: decoding asks for the last row's logits only).
  bool patching() const {
    return !start_residual.empty() || start_layer != 0 || delta_layer >= 0 || mlp_outputs || mlp_branch ||
           mlp_delta_layer >= 0;
  }
};

struct ForwardResult {
  Tensor logits;                       // (B, T, V), or (B, 1, V) with logits_row
  std::vector<Tensor> attention;       // one per layer; an empty Tensor for layers not requested
  std::vector<Trace> traces;           // one per layer; empty for layers not traced
  std::vector<Tensor> hidden_states;   // L + 1 of (B, T, width) with options.hidden_states
  std::vector<std::int32_t> lens_ids;  // (L + 1, B, T) with options.logit_lens; the last row the model's own
  std::vector<float> lens_probs;       // (L + 1, B, T)
  std::vector<Tensor> mlp_outputs;     // L of (B, T, width) with options.mlp_outputs (and an MLP)
  std::vector<Tensor> mlp_branch;      // L of (B, T, width) with options.mlp_branch (and an MLP)
};

// The names each model's header used before the two were one: the same types.
using TinyForwardOptions = ForwardOptions;
using TinyForwardResult = ForwardResult;
using PretrainedForwardOptions = ForwardOptions;
using PretrainedForwardResult = ForwardResult;

// The checks of the patching hooks against a pass of (b, t) rows of `width` values through `layers`
// blocks (`width_name` names the width in messages: "hidden", "d_model"); `cached`: a run continuing
// KV caches, which takes none of them. INVALID_ARGUMENT.
Status check_hooks(const ForwardOptions& o, int layers, int b, int t, int width, const char* width_name,
                   bool cached);

// Appends to the lens the top token of one position's logits (V) and its probability.
void lens_top(int v, const float* logits, ForwardResult& r);

// The row at position `row` of each of b sequences of t rows of `width` values: (b, width).
std::vector<float> rows_at(const float* x, int b, int t, int width, int row);
// The same into `picked` (resized: a reused buffer allocates nothing).
void rows_at(const float* x, int b, int t, int width, int row, std::vector<float>& picked);

}  // namespace attn
