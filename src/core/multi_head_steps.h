// Internal to the core: the pieces MultiHeadAttention's forward (multi_head.cpp) and backward
// (multi_head_backward.cpp) share, so the backward rebuilds exactly the forward's attention problem.
#pragma once
#include <cstdint>
#include <vector>

#include "core/attention_engine.h"
#include "core/multi_head.h"

namespace attn::mha_steps {

// Sizes of one forward call (B = 1 for unbatched input).
struct Dims {
  bool batched = true;
  int b = 0, tq = 0, tk = 0, e = 0;
};

// H, dk, dv, and the extra keys (bias_k / zero attention) appended per batch.
struct Heads {
  int h, dk, dv, extra;
  bool add_bias_kv, add_zero_attn;
};

inline Heads heads_of(const MhaConfig& c, int head_dim, int value_head_dim) {
  return Heads{c.num_heads,    head_dim,
               value_head_dim, (c.add_bias_kv ? 1 : 0) + (c.add_zero_attn ? 1 : 0),
               c.add_bias_kv,  c.add_zero_attn};
}

// The attention problem over (B, H) slices; Tk' = Tk + the extra keys. q/k/v are left unset.
Status make_problem(const MhaForwardOptions& options, const Dims& d, const Heads& hd, bool tracing,
                    AttentionProblem& p);

// Where the projections live: q (B, Tq, H·dk) and k (B, Tk', H·dk), v (B, Tk', H·dv), each a column
// block of a bigger buffer with the given row stride.
struct Projections {
  const float *q, *k, *v;
  int ldq, ldkv;
};

// ---- forward_saving's copies (multi_head_backward.cpp) ----
// Float elements forward_saving keeps in MhaSaved (for the memory check before the forward).
std::uint64_t saved_elements(const Dims& d, const Heads& hd, const MhaConfig& c, int kdim, int vdim,
                             const Tensor* key, const Tensor* value, const MhaForwardOptions& options);
// 1. The inputs: x (B, Tq, E), key/value copies, masks and options; empties the rest of `saved`.
void save_inputs(const float* x, const Tensor* key, const Tensor* value, const MhaForwardOptions& options,
                 const Dims& d, MhaSaved& saved);
// 2.–3. q, k, v densely, whatever the forward's layout.
void save_projections(const Projections& pr, const Dims& d, const Heads& hd, MhaSaved& saved);

}  // namespace attn::mha_steps
