// MultiHeadAttention's hook points (activation_hooks.h): the views of q, k, v and z handed to the
// caller's hooks, shared by the forward (multi_head.cpp) and the cached forward (multi_head_cache.cpp).
#include "core/activation_hooks.h"
#include "core/multi_head_steps.h"

namespace attn {

// The hooks on q, k and v (rotated: on q and k after the q/k norm and RoPE), as strided views into
// the projections; the keys of an uncached call start at position 0.
void mha_steps::hook_projections(const AttentionHooks* hooks, bool rotated, const Projections& pr,
                                 const Dims& d, const Heads& hd, int tk_rows, std::int64_t q_first,
                                 std::int64_t k_first) {
  if (!hooks) return;
  const AttnPoint qp = rotated ? AttnPoint::kRotQ : AttnPoint::kQ,
                  kp = rotated ? AttnPoint::kRotK : AttnPoint::kK;
  if (hooks->wants(qp)) hooks->heads(qp, HeadsView{pr.q, d.b, d.tq, hd.h, hd.dk, pr.ldq, d.tq, q_first});
  if (hooks->wants(kp))
    hooks->heads(kp, HeadsView{pr.k, d.b, d.tk, hd.hkv, hd.dk, pr.ldkv, tk_rows, k_first});
  if (!rotated && hooks->wants(AttnPoint::kV))
    hooks->heads(AttnPoint::kV, HeadsView{pr.v, d.b, d.tk, hd.hkv, hd.dv, pr.ldkv, tk_rows, k_first});
}

void mha_steps::hook_queries(const AttentionHooks* hooks, bool rotated, const Projections& pr, const Dims& d,
                             const Heads& hd, std::int64_t q_first) {
  const AttnPoint qp = rotated ? AttnPoint::kRotQ : AttnPoint::kQ;
  if (hooks && hooks->wants(qp))
    hooks->heads(qp, HeadsView{pr.q, d.b, d.tq, hd.h, hd.dk, pr.ldq, d.tq, q_first});
}

// The hook on z: each head's context (B, Tq, H·dv), before the output projection.
void mha_steps::hook_context(const AttentionHooks* hooks, float* context, const Dims& d, const Heads& hd,
                             std::int64_t q_first) {
  if (hooks && hooks->wants(AttnPoint::kZ))
    hooks->heads(AttnPoint::kZ, HeadsView{context, d.b, d.tq, hd.h, hd.dv, hd.h * hd.dv, d.tq, q_first});
}

}  // namespace attn
