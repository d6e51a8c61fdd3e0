// The attention engine shared by scaled_dot_product_attention and MultiHeadAttention.
// Two paths over the same kernels:
//   full path  — scores (Tq, Tk) per slice, softmax, optional dropout, ·V. Gives weights and trace.
//   tiled path — flash-attention style online softmax over key tiles; O(Tq·dv + tile) memory,
//                used when neither weights, trace nor dropout are requested.
#pragma once
#include <string>
#include <vector>

#include "core/attention.h"
#include "core/mask_plan.h"
#include "core/trace.h"

namespace attn {

struct AttentionProblem {
  MaskPlan masks;       // lead (slices), tq, tk, masks
  int dk = 0, dv = 0;
  const float* q = nullptr;  // q: (S, Tq, dk) row-major, S = masks.slices()
  const float* k = nullptr;  // k: (S, Tk, dk)
  const float* v = nullptr;  // v: (S, Tk, dv)
  float scale = 1.0f;
  DropoutOptions dropout;
  std::vector<std::string> lead_axes;  // trace axis names of the lead axes, e.g. {"B", "H"}
};

struct AttentionOutputs {
  std::vector<float> context;  // (S, Tq, dv)
  std::vector<float> weights;  // (S, Tq, Tk), only when weights were requested
};

// Shared validation: scale finite and > 0; dropout p in [0, 1).
Status check_scale_and_dropout(const std::optional<float>& scale, const DropoutOptions& dropout);
// Adds a boolean and/or additive mask (either may be null) to plan, checking shape and values.
Status add_masks_to_plan(const BoolTensor* mask, const Tensor* additive, MaskPlan& plan);

// Float elements the chosen path will allocate (for the memory limit check).
std::uint64_t attention_scratch_elements(const AttentionProblem& p, bool need_weights, bool tracing);

// Records scores, scaled, masked, weights, [dropped], context when trace != nullptr.
void run_attention(const AttentionProblem& p, bool need_weights, AttentionOutputs& out,
                   Trace* trace);

// The tiled path alone (flash_attention.cpp); context: (S, Tq, dv).
void run_attention_tiled(const AttentionProblem& p, float* context);

// Whether run_attention would take the tiled path.
bool uses_tiled_path(const AttentionProblem& p, bool need_weights, bool tracing);

}  // namespace attn
