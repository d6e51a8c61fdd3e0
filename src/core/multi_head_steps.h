// Internal to the core: the pieces MultiHeadAttention's forward (multi_head.cpp) and backward
// (multi_head_backward.cpp) share, so the backward rebuilds exactly the forward's attention problem.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/attention_engine.h"
#include "core/multi_head.h"

namespace attn::mha_steps {

// Sizes of one forward call (B = 1 for unbatched input).
struct Dims {
  bool batched = true;
  int b = 0, tq = 0, tk = 0, e = 0;
};

// H query heads over hkv key/value heads, dk, dv, and the extra keys (bias_k / zero attention)
// appended per batch. kqk() and kvo() are the key and value rows' widths.
struct Heads {
  int h, dk, dv, extra;
  bool add_bias_kv, add_zero_attn;
  int hkv;
  int kqk() const { return hkv * dk; }
  int kvo() const { return hkv * dv; }
};

inline Heads heads_of(const MhaConfig& c, int head_dim, int value_head_dim) {
  return Heads{c.num_heads,
               head_dim,
               value_head_dim,
               (c.add_bias_kv ? 1 : 0) + (c.add_zero_attn ? 1 : 0),
               c.add_bias_kv,
               c.add_zero_attn,
               c.num_kv_heads ? c.num_kv_heads : c.num_heads};
}

// RoPE (config.rope) in place on q (B·Tq rows, H heads, row stride ldq) at positions q_first + r and
// on the first tk rows of each batch's keys (k: B blocks of tk_rows rows, H_kv heads, stride ldk) at
// k_first + c. inverse = true rotates gradients back (the backward). `table` is scratch (a reused one
// keeps its buffers: decoding's, KvCache::step_rotary).
void rotate_qk(const RotaryOptions& rope, const Heads& hd, int b, int tq, std::int64_t q_first, float* q,
               int ldq, int tk, int tk_rows, std::int64_t k_first, float* k, int ldk, bool inverse,
               RotaryTable& table);

// The attention problem over (B, H) slices; Tk' = Tk + the extra keys. q/k/v are left unset.
Status make_problem(const MhaForwardOptions& options, const Dims& d, const Heads& hd, bool tracing,
                    AttentionProblem& p);

// Where the projections live: q (B, Tq, H·dk) and k (B, Tk', H_kv·dk), v (B, Tk', H_kv·dv), each a
// column block of a bigger buffer with the given row stride.
struct Projections {
  float *q, *k, *v;
  int ldq, ldkv;
};

// ---- the forward's stages (multi_head.cpp), shared with the cached forward (multi_head_cache.cpp) ----

// A projection weight W (out, in) as nn.Linear keeps it, W in the GEMM's packed layout, and b (out);
// a frozen module's W is `view` instead (w and packed are then empty).
struct Linear {
  const Tensor& w;
  const std::vector<float>& packed;
  const Tensor& b;
  const WeightView& view;
};

// The parameters forward reads, by reference (the class's private members).
struct Weights {
  Linear q, k, v, o;
  const Tensor &bias_k, &bias_v, &ln_weight, &ln_bias;
};

// 0. Shapes of query/key/value; unbatched (T, E) input runs as B = 1.
Status resolve_dims(const Tensor& query, const Tensor* key, const Tensor* value, int e, int kdim, int vdim,
                    Dims& d);
// A trace step copied from data (nothing when trace is null). The axes and the shape are plain lists,
// so an untraced call (decoding) builds no vector or string.
void record(Trace* trace, const char* name, std::initializer_list<const char*> axes,
            std::initializer_list<int> shape, const float* data, std::size_t n);
// q (rows, H·dk) = x · W_qᵀ + b_q with row stride ld (a shared_kv module projects only q).
void project_q(const Weights& w, const float* x, std::int64_t rows, float* q, int ld);
// 2.–3. q, k, v projections (and the extra keys) in scratch.
Projections project(const Weights& w, const Heads& hd, const float* x, const float* key_src,
                    const float* value_src, bool self, const Dims& d, ScratchScope& scratch);
// (B, heads, T, d) copy of the heads of a (B, T, ld) buffer, for the trace.
void record_heads(Trace* trace, const char* name, const char* t_axis, const char* d_axis, const float* src,
                  int ld, int b, int h, int t, int dh);
// 5.–8. concat, output projection, [residual], [LayerNorm] into out.
void output_stage(const Weights& w, const MhaConfig& c, int vo, const float* context, const float* x,
                  const Dims& d, std::vector<float>& out, std::vector<float>* pre_norm, Trace* trace);
// The weights result's shape and the engine's destination for them.
void prepare_weights(const MhaForwardOptions& options, const Dims& d, int h, int tk, Tensor& weights,
                     AttentionOutputs& att);

// The hooks (options.hooks) on q, k, v (rotated: q and k after the q/k norm and RoPE) and on z, as
// strided views into the projections (k and v: tk_rows rows per batch) and the context; q_first and
// k_first: the absolute positions of the first query and key rows.
void hook_projections(const AttentionHooks* hooks, bool rotated, const Projections& pr, const Dims& d,
                      const Heads& hd, int tk_rows, std::int64_t q_first, std::int64_t k_first);
// The hooks on q alone (rotated: after the q norm and RoPE), for a module without key projections.
void hook_queries(const AttentionHooks* hooks, bool rotated, const Projections& pr, const Dims& d,
                  const Heads& hd, std::int64_t q_first);
void hook_context(const AttentionHooks* hooks, float* context, const Dims& d, const Heads& hd,
                  std::int64_t q_first);

// ---- forward_saving's copies (multi_head_backward.cpp) ----
// Float elements forward_saving keeps in MhaSaved (for the memory check before the forward).
std::uint64_t saved_elements(const Dims& d, const Heads& hd, const MhaConfig& c, int kdim, int vdim,
                             const Tensor* key, const Tensor* value, const MhaForwardOptions& options);
// 1. The inputs: x (B, Tq, E), key/value copies, masks and options; empties the rest of `saved`.
void save_inputs(const float* x, const Tensor* key, const Tensor* value, const MhaForwardOptions& options,
                 const Dims& d, MhaSaved& saved);
// 2.–3. q, k, v densely, whatever the forward's layout; raw: q and k only, before the q/k norm.
void save_projections(const Projections& pr, const Dims& d, const Heads& hd, MhaSaved& saved, bool raw);

}  // namespace attn::mha_steps
