// Backward of scaled dot-product attention: the gradients of sum(output ⊙ grad_output) with respect
// to q, k and v, for exactly the forward's semantics (scale, boolean and additive masks, causal,
// fully masked rows, seeded dropout).
//
// Memory stays O(rows·Tk + T·d): the weights P are never kept from the forward. Each block of query
// rows recomputes its scores and softmax with the forward's own kernels (so P is bit-identical to
// what the forward used) and runs the three stages of llm.c's attention_backward on the block:
//   1. dV += P̃ᵀ·dO and dP̃ = dO·Vᵀ            (P̃ = P after dropout; dP = dP̃ through the dropout mask)
//   2. dS = P ⊙ (dP − Σ_j P·dP) · scale        (softmax backward; masked entries have P = 0, so dS = 0;
//      with Gemma 2's soft-cap c also · (1 − tanh²(scale·s / c)), the cap's derivative)
//   3. dQ = dS·K and dK += dSᵀ·Q
// A fully masked row has P = 0 everywhere: its dQ row is zero and it adds nothing to dK or dV.
#pragma once
#include "core/attention.h"
#include "core/attention_engine.h"

namespace attn {

struct SdpaGrads {
  Tensor q;  // (..., Tq, dk)
  Tensor k;  // (..., Tk, dk)
  Tensor v;  // (..., Tk, dv)
};

// grad_output (..., Tq, dv). `options` exactly as the forward's; need_weights is ignored.
Status scaled_dot_product_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v,
                                             const Tensor& grad_output, const SdpaOptions& options,
                                             SdpaGrads& grads);

// Gradient destinations in the problem's layout (slice s of each at base + (s / heads)·T·ld +
// (s % heads)·d, row stride ld; 0 = heads·d). dq is written; dk and dv are written too (each slice's
// rows are zeroed before the blocks add into them).
struct AttentionGradTargets {
  float* dq = nullptr;
  float* dk = nullptr;
  float* dv = nullptr;
  int lddq = 0, lddk = 0, lddv = 0;
  // When set: ∂/∂P, the gradient of the attention weights (after the softmax, before any dropout),
  // (slices, Tq, Tk) dense — what gradient × attention views read.
  float* dweights = nullptr;
};

// d_context: the gradient of the context, in the forward's context layout (row stride ldo, 0 =
// heads·dv). The problem's q/k/v must be the forward's.
void run_attention_backward(const AttentionProblem& p, const float* d_context, int ldo,
                            const AttentionGradTargets& g);

// Float elements run_attention_backward allocates (for the memory limit check).
std::uint64_t attention_backward_scratch_elements(const AttentionProblem& p);

}  // namespace attn
