// The attention engine shared by scaled_dot_product_attention and MultiHeadAttention.
// Two paths over the same kernels, both walking each slice in blocks of query rows:
//   full path  — scores (rows, Tk), softmax, optional dropout, ·V. Gives weights and trace.
//   tiled path — flash-attention style online softmax over key tiles; O(rows·(Tk tile + dv))
//                scratch, used when neither weights, trace nor dropout are requested. Rows of at
//                most one key tile (256) take the full path's code without keeping weights: a
//                single tile needs no online rescaling, and its blocks are as small.
// Operands may be strided views into bigger buffers (MHA reads q/k/v straight from its projection
// buffers and writes the context straight into the concat layout, so no head split/merge copies).
#pragma once
#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/activation_hooks.h"
#include "core/attention.h"
#include "core/mask_plan.h"
#include "core/trace.h"

namespace attn {

// Keys per tile of the tiled path; rows of at most this many keys take the full path's code.
constexpr int kFlashKeyTile = 256;
// Query rows per block of the tiled path.
constexpr int kFlashQueryBlock = 256;
// Query rows per block of the tiled path under a sliding window narrower than the keys.
constexpr int kFlashWindowBlock = 64;

struct AttentionProblem {
  MaskPlan masks;  // lead (slices), tq, tk, masks
  int dk = 0, dv = 0;
  // Layout: slice s is (outer, head) = (s / heads, s % heads) of a (N, T, heads·d) buffer with row
  // stride ld; its (T, d) rows start at base + outer·T·ld + head·d. The default (heads = 1,
  // ld = 0 meaning d) is the contiguous (S, T, d) of SDPA.
  const float* q = nullptr;  // q: (S, Tq, dk), S = masks.slices()
  const float* k = nullptr;  // k: (S, Tk, dk)
  const float* v = nullptr;  // v: (S, Tk, dv)
  int heads = 1;
  int ldq = 0, ldk = 0, ldv = 0;
  float scale = 1.0f;
  // Gemma 2's attention-logit soft-capping: the scaled scores s become softcap · tanh(s / softcap)
  // before the masks (softcap_row); 0 = none. Set by MultiHeadAttention for frozen (inference) modules.
  float softcap = 0.0f;
  DropoutOptions dropout;
  std::vector<std::string> lead_axes;  // trace axis names of the lead axes, e.g. {"B", "H"}
  // Grouped-query attention: kv_group query heads share one key/value head. The query heads are the
  // innermost lead axis (group_axis of them); query head h reads key/value head h / kv_group (the
  // order of Hugging Face's repeat_kv). In the strided layout the k/v rows hold heads / kv_group heads.
  int kv_group = 1;
  int group_axis = 1;
  // Rows per outer index of the k and v buffers: 0 = Tk. A KV cache holds maxLength rows per batch.
  int kv_rows = 0;
  // A float16 KV cache: the keys and values as IEEE float16 bits in k's and v's layout (k and v
  // null). Both paths widen them a key tile at a time (attention_half.cpp).
  const std::uint16_t* k16 = nullptr;
  const std::uint16_t* v16 = nullptr;
  bool half_kv() const { return k16 != nullptr; }
  // Hooks on the scores and weights (MultiHeadAttention's, lead = {B, H}); null = none.
  const AttentionHooks* hooks = nullptr;
  bool hooks_scores() const {
    return hooks && (hooks->wants(AttnPoint::kScores) || hooks->wants(AttnPoint::kPattern));
  }

  const float* q_slice(std::int64_t s) const {
    return q + (s / heads) * masks.tq * static_cast<std::int64_t>(row_stride(ldq, dk)) + (s % heads) * dk;
  }
  const float* k_slice(std::int64_t s) const { return k + kv_offset(s, dk, k_stride(), kv_rows); }
  const float* v_slice(std::int64_t s) const { return v + kv_offset(s, dv, v_stride(), kv_rows); }
  const std::uint16_t* k16_slice(std::int64_t s) const { return k16 + kv_offset(s, dk, k_stride(), kv_rows); }
  const std::uint16_t* v16_slice(std::int64_t s) const { return v16 + kv_offset(s, dv, v_stride(), kv_rows); }
  int row_stride(int ld, int d) const { return ld > 0 ? ld : heads * d; }
  int kv_heads() const { return heads == 1 ? 1 : heads / kv_group; }  // heads per row of the k/v layout
  int k_stride() const { return ldk > 0 ? ldk : kv_heads() * dk; }
  int v_stride() const { return ldv > 0 ? ldv : kv_heads() * dv; }
  // The key/value slice that slice s (a query head) reads.
  std::int64_t kv_index(std::int64_t s) const {
    if (kv_group == 1) return s;
    return (s / group_axis) * (group_axis / kv_group) + (s % group_axis) / kv_group;
  }
  // Offset of slice s's keys (or values, or their gradients) in a buffer of row stride ld, `rows`
  // rows per outer index (0 = Tk).
  std::int64_t kv_offset(std::int64_t s, int d, int ld, int rows) const {
    const std::int64_t i = kv_index(s);
    const int hl = kv_heads();
    return (i / hl) * (rows > 0 ? rows : masks.tk) * static_cast<std::int64_t>(ld) + (i % hl) * d;
  }
};

struct AttentionOutputs {
  // Caller-provided destinations (MHA); when null the engine fills the vectors below instead.
  float* context_out = nullptr;  // context: slice s as q's layout, rows of stride ldo (0 = heads·dv)
  int ldo = 0;
  float* weights_out = nullptr;  // (S, Tq, Tk), or (N, Tq, Tk) with average_heads
  bool average_heads = false;    // weights_out gets the mean over the `heads` slices of each outer

  std::vector<float> context;  // (S, Tq, dv) when context_out is null
  std::vector<float> weights;  // (S, Tq, Tk) when weights are requested and weights_out is null
};

// Shared validation: scale finite and > 0; dropout p in [0, 1).
Status check_scale_and_dropout(const std::optional<float>& scale, const DropoutOptions& dropout);
// Adds a boolean and/or additive mask (either may be null) to plan, checking shape and values.
Status add_masks_to_plan(const BoolTensor* mask, const Tensor* additive, MaskPlan& plan);

// The problem of scaled_dot_product_attention(q, k, v, options): shapes, scale, dropout and masks
// checked; q/k/v point into the tensors (contiguous (..., T, d)). Shared by the forward and backward.
Status make_sdpa_problem(const Tensor& q, const Tensor& k, const Tensor& v, const SdpaOptions& options,
                         AttentionProblem& p);

// Float elements the chosen path will allocate (for the memory limit check), outputs included.
std::uint64_t attention_scratch_elements(const AttentionProblem& p, bool need_weights, bool tracing);

// Records scores, scaled, masked, weights, [dropped], context when trace != nullptr.
void run_attention(const AttentionProblem& p, bool need_weights, AttentionOutputs& out, Trace* trace);

// Inverted dropout of weight rows [i0, i0 + rows) of slice s (rows, Tk) into dropped: element
// (slice, i, j) is dropped iff uniform01(seed, flat index over (S, Tq, Tk)) < p, kept ones scale by
// 1/(1 - p). dropped may alias weights: the backward replays it in place on dP to get exactly the
// forward's mask.
void apply_dropout(const AttentionProblem& p, std::int64_t slice, int i0, int rows, const float* weights,
                   float* dropped);

// The tiled path alone (flash_attention.cpp): context rows of slice s at
// context + (s / heads)·Tq·ldo + (s % heads)·dv, row stride ldo.
void run_attention_tiled(const AttentionProblem& p, float* context, int ldo);

// The full path alone: weights, dropout and the trace; context as for run_attention_tiled.
void run_attention_full(const AttentionProblem& p, bool need_weights, float* context, int ldo,
                        AttentionOutputs& out, Trace* trace);

// Whether run_attention would take the tiled path.
bool uses_tiled_path(const AttentionProblem& p, bool need_weights, bool tracing);

// Per-thread scratch memory for the temporary buffers of one call: no zero fill, and no malloc for
// calls whose buffers fit the cached block (small calls, e.g. a 16-token forward, allocate nothing).
// Buffers taken from a ScratchScope live until the scope ends; scopes nest (MHA → attention). The
// cached block grows to the largest total a call needed, but never beyond kScratchCacheFloats;
// bigger buffers are allocated for their scope alone and freed at its end.
// Whether a row segment of n keys has a key its masks allow (allowed[j] != 0 and additive[j] > −∞;
// a null mask allows all). A segment whose scores all came out −∞ although a key was allowed has
// overflowed (q·k·scale beyond float32, the inputs being finite): the engine then writes NaN, which
// the finiteness check on the result reports as NON_FINITE, instead of the zeros of a masked row.
inline bool has_allowed_key(int n, const std::uint8_t* allowed, const float* additive) {
  for (int j = 0; j < n; ++j)
    if ((!allowed || allowed[j]) && (!additive || additive[j] > -std::numeric_limits<float>::infinity()))
      return true;
  return false;
}

class ScratchScope {
 public:
  static constexpr std::size_t kScratchCacheFloats = std::size_t{1} << 16;  // 256 KB

  ScratchScope();
  ~ScratchScope();
  ScratchScope(const ScratchScope&) = delete;
  ScratchScope& operator=(const ScratchScope&) = delete;

  float* floats(std::size_t n);        // uninitialised
  std::uint8_t* bytes(std::size_t n);  // uninitialised

 private:
  std::size_t mark_;                             // the cached block's fill level at entry
  std::size_t owned_floats_ = 0;                 // total size of owned_
  std::vector<std::unique_ptr<float[]>> owned_;  // buffers that did not fit the cached block
};

// ---- float16 keys and values (AttentionProblem::k16, attention_half.cpp) ---------------------
// dst (rows, d) contiguous = rows of d float16 values at src, row stride ld, widened exactly.
void widen_rows(int rows, int d, const std::uint16_t* src, int ld, float* dst);
// scores (rows, Tk), row stride lds = q rows (rows, dk; stride ldq) · k_sᵀ over slice s's float16
// keys, one key tile (kFlashKeyTile rows) at a time, widened inside the product (linear_nt_half).
void half_scores(const AttentionProblem& p, std::int64_t s, const float* q, int ldq, int rows, float* scores,
                 int lds);
// context (rows, dv), row stride ldo = w (rows, Tk; stride ldw) · v_s over slice s's float16 values,
// a tile at a time (tile: kFlashKeyTile·dv floats); the tiles' products are summed in key order.
void half_context(const AttentionProblem& p, std::int64_t s, const float* w, int ldw, int rows,
                  float* context, int ldo, float* tile);

// x (n) in place: each score times `scale`, then capped smoothly to (−cap, cap) as cap · tanh(x / cap)
// (in double, as transformers' float32 division, tanh and product round once each in float32).
inline void softcap_row(int n, float* x, float scale, float cap) {
  for (int j = 0; j < n; ++j)
    x[j] = static_cast<float>(cap * std::tanh(static_cast<double>(x[j] * scale) / cap));
}

}  // namespace attn
