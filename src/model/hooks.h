// Hook points: named places in a model's forward where a caller reads (captures) or changes (edits)
// an activation, the one mechanism behind run(), steering and the interpretability tools (patching
// starts a run at a block's input and adds a patched head's output there). Names and meanings follow
// TransformerLens where it has them:
//   hook_embed (B, T, E)                 the token embeddings (× the family's embedding scale)
//   hook_pos_embed (B, T, E)             the learned or sinusoidal positions added to them
//   blocks.{l}.hook_resid_pre (B, T, E)  the stream entering block l (Hugging Face's hidden state l)
//   blocks.{l}.attn.hook_q (B, T, H, d), hook_k / hook_v (B, T, H_kv, d)  after the projection and
//                                        its bias, before any q/k norm and RoPE
//   blocks.{l}.attn.hook_rot_q / hook_rot_k   after the q/k norm and RoPE (q also × Ministral 3's
//                                        query temperature)
//   blocks.{l}.attn.hook_attn_scores (B, H, T, T)  scaled (soft-capped) and masked, before the softmax
//   blocks.{l}.attn.hook_pattern (B, H, T, T)      the softmax weights
//   blocks.{l}.attn.hook_z (B, T, H, d)  each head's weighted values, before the output projection
//   blocks.{l}.attn.hook_out (B, T, E)   the attention's output projection (bias included), before
//                                        any post-norm
//   blocks.{l}.hook_attn_out (B, T, E)   the attention branch as it is added to the stream (after any
//                                        post-norm and the branch scale: Granite's residual_multiplier)
//   blocks.{l}.hook_resid_mid (B, T, E)  the stream between the attention and the MLP
//   blocks.{l}.mlp.hook_pre (B, T, I)    the MLP's first pre-activation (GPT-2: up(x) + b; gated: gate(x))
//   blocks.{l}.mlp.hook_pre_linear (B, T, I)  a gated MLP's up(x)
//   blocks.{l}.mlp.hook_post (B, T, I)   what the down projection reads (act(gate) · up, or act(up))
//   blocks.{l}.mlp.hook_out (B, T, E)    the MLP's output (bias included), before any post-norm
//   blocks.{l}.hook_mlp_out (B, T, E)    the MLP branch as it is added to the stream (as hook_attn_out)
//   blocks.{l}.hook_resid_post (B, T, E) the stream leaving block l
//   ln_final.hook_normalized (B, T, E)   the final norm's output (what the head reads)
// A short-convolution layer (LFM2, short_conv.h) has no attn.* hooks; its mixer's are
//   blocks.{l}.conv.hook_bcx (B, T, 3E)  in_proj's output [B | C | X]
//   blocks.{l}.conv.hook_in (B, T, E)    B ⊙ X, the convolution's input
//   blocks.{l}.conv.hook_out (B, T, E)   the causal convolution's output
//   blocks.{l}.conv.hook_gated (B, T, E) C ⊙ that, what out_proj reads
//   blocks.{l}.conv.hook_result (B, T, E)  out_proj's output, the block's output (as attn.hook_out);
// hook_attn_out, hook_resid_* are the stream's as in any layer.
//   blocks.{l}.linear_attn.hook_q / hook_k (B, T, H_k, d_k), hook_v (B, T, H_v, d_v)  a DeltaNet
//                                        layer's after the conv and its SiLU, before the L2 norm
//   blocks.{l}.linear_attn.hook_beta / hook_g (B, T, H_v)  its write strength β and log-decay g
//   blocks.{l}.linear_attn.hook_o (B, T, H_v, d_v)  the delta rule's read, before the gated norm
//   blocks.{l}.linear_attn.hook_gate (B, T, H_v, d_v)  the gate z as projected (silu(z) gates o)
//   blocks.{l}.linear_attn.hook_state (B, H_v, d_k, d_v)  the delta rule's state S after the last row
//                                        (no T axis: a state per position is too large); capture only
//   A DeltaNet layer has no attn.hook_q … attn.hook_z; its attn.hook_out is the mixer's output.
// A post-norm TinyTransformer (x = ln(x + f(x))) adds hook_attn_out / hook_mlp_out before its norm;
// hook_resid_mid / hook_resid_post are after it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/activation_hooks.h"
#include "core/status.h"
#include "core/tensor.h"

namespace attn {

enum class HookKind {
  kEmbed,
  kPosEmbed,
  kFinalNormalized,
  kResidPre,
  kQ,
  kK,
  kV,
  kRotQ,
  kRotK,
  kScores,
  kPattern,
  kZ,
  kAttnResult,  // attn.hook_out
  kAttnOut,
  kResidMid,
  kMlpPre,
  kMlpPreLinear,
  kMlpPost,
  kMlpResult,  // mlp.hook_out
  kMlpOut,
  kResidPost,
  kConvBcx,     // conv.hook_bcx (short-convolution layers)
  kConvIn,      // conv.hook_in
  kConvOut,     // conv.hook_out
  kConvGated,   // conv.hook_gated
  kConvResult,  // conv.hook_result
  kDeltaQ,      // a DeltaNet layer's (delta_net.h): linear_attn.hook_q …
  kDeltaK,
  kDeltaV,
  kDeltaBeta,
  kDeltaG,
  kDeltaO,
  kDeltaGate,
  kPerLayerOut,  // Gemma 4: the per-layer input's branch as added (before hook_resid_post)
  kDeltaState,   // linear_attn.hook_state: a DeltaNet layer's final state (B, H_v, d_k, d_v)
  kCount
};

// What a model's hooks look like: the stream's width and each layer's attention and MLP.
struct HookShapes {
  struct Layer {
    int heads = 0, kv_heads = 0, head_dim = 0;
    int mlp_width = 0;  // 0: no MLP
    bool gated_mlp = false;
    int conv_channels = 0;  // a short-convolution layer's E (its heads 0); 0: attention
    // The token mixer (MixerKind's value, blocks.h): 0 softmax attention (the attn.hook_* points);
    // 2 a DeltaNet (linear_attn.hook_*: heads = H_v, kv_heads = H_k, head_dim = d_k, value_dim = d_v).
    int mixer = 0;
    int value_dim = 0;
    bool per_layer_input = false;  // hook_per_layer_out (Gemma 4)
    bool shared_kv = false;  // its keys and values are an earlier layer's: no hook_k, hook_v, hook_rot_k
  };
  int width = 0;
  bool pos_embed = false;  // GPT-2, a learned or sinusoidal TinyTransformer
  bool final_norm = true;  // a TinyTransformer without ln_f has none
  std::vector<Layer> layers;
};

// One hook point: its kind and layer (-1 for hook_embed, hook_pos_embed, ln_final.hook_normalized).
struct HookId {
  HookKind kind = HookKind::kEmbed;
  int layer = -1;
  bool operator==(const HookId& o) const { return kind == o.kind && layer == o.layer; }
};

// Every hook a model has, with its shape: "B" and "T" as -1 and -2 (hook_pattern: (B, H, T, T)).
struct HookInfo {
  std::string name;
  Shape shape;
};
constexpr std::int64_t kHookBatchAxis = -1, kHookTimeAxis = -2;
std::vector<HookInfo> hook_list(const HookShapes& shapes);
std::string hook_name(const HookId& id);
// The point a name means; INVALID_ARGUMENT naming it when the model has no such hook.
Status parse_hook(const std::string& name, const HookShapes& shapes, HookId& out);

// One edit: set or add `value` at a hook. value_shape is the hook's whole shape for this pass, or a
// suffix of its shape at one position (the stream's (E), a head's (d) or (H, d), a pattern row's
// (T_k)), applied at every position in `positions` (absolute; empty = all) and, for the attention's
// hooks, the heads in `heads` (query heads for q, rot_q, z, scores and pattern; KV heads for k, rot_k
// and v; empty = all).
struct HookEdit {
  std::string hook;
  bool add = false;
  Shape value_shape;
  std::vector<float> value;
  std::vector<int> positions;
  std::vector<int> heads;
};

struct HookRequest {
  std::vector<std::string> capture;  // names; `blocks.*.…` means every layer
  std::vector<HookEdit> edits;
  // "blocks.{l}.hook_resid_pre" (with a whole `set` of it among the edits): run from block l with
  // that stream; empty = from the embeddings.
  std::string start_at;
  bool empty() const { return capture.empty() && edits.empty() && start_at.empty(); }
};

// One forward's hooks, checked before anything runs: the model calls stream() at each of its points
// and hands attention(l) to layer l's attention. Captures are allocated when it is made.
class HookRun {
 public:
  // A pass of b sequences of t rows from position t0 (t0 > 0: a decoding step on KV caches, which
  // takes only edits over a position's axes and captures of its own rows, not of scores or
  // weights); positions must be below
  // max_position. INVALID_ARGUMENT / SHAPE_MISMATCH naming the hook, TOO_LARGE for the captures.
  // The run reads the request's edit values where they are (none is copied): `request` must
  // outlive it.
  static Status create(const HookRequest& request, const HookShapes& shapes, int b, int t, std::int64_t t0,
                       std::int64_t max_position, std::unique_ptr<HookRun>& out);
  HookRun();
  ~HookRun();
  HookRun(const HookRun&) = delete;
  HookRun& operator=(const HookRun&) = delete;

  bool wants(HookKind kind, int layer) const;
  // Edits, then captures, a (B, T, width) activation of this pass at a point.
  void stream(HookKind kind, int layer, float* data, int width) const;
  // Captures an activation without a time axis whole (a DeltaNet layer's final state): no edit.
  void whole(HookKind kind, int layer, const float* data) const;
  // Layer l's attention hooks, or null when none touches layer l.
  const AttentionHooks* attention(int layer) const;
  // startAt's block (0 without) and its stream (B, T, E), or null.
  int start_layer() const { return start_layer_; }
  const std::vector<float>* start_stream() const { return start_stream_; }
  // The captured activations, by name, in the order asked for (moved out).
  std::vector<std::pair<std::string, Tensor>> take_captures();

 private:
  class LayerAttention;
  struct Point;  // the edits and the capture of one hook point
  HookShapes shapes_;
  int b_ = 0, t_ = 0;
  std::int64_t t0_ = 0;
  std::vector<Point> points_;  // (layers + 1) × kCount: [0] the global ones, [l + 1] layer l's
  std::vector<std::unique_ptr<LayerAttention>> attention_;
  // Written by const apply() at disjoint places (the scores from the pool's workers); allocated whole
  // by create().
  mutable std::vector<std::pair<std::string, Tensor>> captures_;
  int start_layer_ = 0;
  const std::vector<float>* start_stream_ = nullptr;
  const std::vector<HookEdit>* edits_ = nullptr;  // the request's (it outlives the run)

  const Point& point(HookKind kind, int layer) const;
  Point& point(HookKind kind, int layer);
  Status add_capture(const std::string& name);
  Status add_edit(std::size_t index, std::int64_t max_position);
  void apply(const Point& p, const HeadsView& v) const;
  void apply_scores(const Point& p, const ScoresBlock& s) const;
  friend class LayerAttention;
};

}  // namespace attn
