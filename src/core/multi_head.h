// Multi-head attention with torch.nn.MultiheadAttention semantics and weight layout (batch_first):
// nn.Linear weights are (out, in) and y = x·Wᵀ + b; in_proj_weight = [W_q; W_k; W_v].
//
// Shapes (E = embed_dim, H = num_heads, dk = head_dim, dv = value_head_dim):
//   query (B, Tq, E) or (Tq, E)     key (B, Tk, kdim)     value (B, Tk, vdim)
//   q_proj_weight (H·dk, E)   k_proj_weight (H·dk, kdim)   v_proj_weight (H·dv, vdim)
//   in_proj_weight (2·H·dk + H·dv, E), only when kdim == vdim == E (and no grouped-query heads)
//   in_proj_bias (2·H·dk + H·dv)   out_proj.weight (E, H·dv)   out_proj.bias (E)
//   bias_k (1, 1, H·dk)   bias_v (1, 1, H·dv)   layer_norm.weight (E)   layer_norm.bias (E)
//   output (B, Tq, E); weights (B, H, Tq, Tk') per head or (B, Tq, Tk') averaged, where
//   Tk' = Tk + add_bias_kv + add_zero_attn (the extra keys are never masked, as PyTorch pads).
//
// Masks (true = may attend — the OPPOSITE of nn.MultiheadAttention's bool masks):
//   mask / additive_mask (Tq, Tk) or (B·H, Tq, Tk);  key_padding_mask (B, Tk), true = real token.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/activation_hooks.h"
#include "core/attention.h"
#include "core/rotary.h"
#include "core/stored_weight.h"
#include "core/tensor.h"
#include "core/trace.h"

namespace attn {

namespace mha_steps {
struct Weights;
}  // namespace mha_steps

struct MhaConfig {
  int embed_dim = 0;
  int num_heads = 1;
  int kdim = 0;            // 0 = embed_dim
  int vdim = 0;            // 0 = embed_dim
  int head_dim = 0;        // 0 = embed_dim / num_heads (must divide then)
  int value_head_dim = 0;  // 0 = head_dim
  bool bias = true;        // in_proj_bias and out_proj.bias
  bool add_bias_kv = false;
  bool add_zero_attn = false;
  bool residual = false;    // output + x (the query after positional encoding), post-LN style
  bool layer_norm = false;  // LayerNorm after the (residual) output
  float layer_norm_eps = 1e-5f;
  std::uint64_t seed = 0;  // initialisation seed (xavier-uniform like PyTorch, portable RNG)
  // Grouped-query attention: key/value heads (0 = num_heads; 1 = multi-query), dividing num_heads.
  // Query head h uses key/value head h / (num_heads / num_kv_heads) (Hugging Face's repeat_kv).
  // When it differs from num_heads: k_proj_weight (H_kv·dk, kdim), v_proj_weight (H_kv·dv, vdim),
  // in_proj_bias (H·dk + H_kv·dk + H_kv·dv), bias_k/bias_v (1, 1, H_kv·d); never in_proj_weight.
  int num_kv_heads = 0;
  // Rotary embedding of each head's q and k after the projection and its bias, before the scaling:
  // query row r at positionOffset + r, key row c at c (+ the length already in a KV cache).
  // `offset` must stay 0 (positions come from the forward). Unset = no RoPE.
  std::optional<RotaryOptions> rope;
  // Llama 4's attention temperature (rotary.h): q at position p × τ(p) after RoPE (Ministral 3);
  // beta 0 = none. Positions as RoPE's.
  QueryTemperature query_temperature;
  // Inference only, for pretrained checkpoints: q/k/v/out projection weights are not allocated here
  // but read through views set by set_weight_view (16-bit stays 16-bit, widened inside the GEMM).
  // forward, forward_cached and traces work; forward_saving and backward give the inputs' gradients
  // (the weights fixed: MhaBackwardOptions::parameters must be false).
  bool frozen = false;
  // RMSNorm of q and k after the projections (and their biases), before RoPE, as Qwen3, Gemma 3 and
  // OLMo 2 do: x / sqrt(mean(x²) + qk_norm_eps) · w over groups of a row's features: each head's
  // d_k (kPerHead: weights (d_k), shared by the heads) or the whole row (kAllHeads: weights (H·d_k)
  // for q and (H_kv·d_k) for k). Frozen modules only; the weights are set by set_qk_norm_weight.
  enum class QkNorm { kNone, kPerHead, kAllHeads };
  QkNorm qk_norm = QkNorm::kNone;
  double qk_norm_eps = 1e-6;
  // An output gate: each head's context z (before the output projection) × σ(W_g x), feature by
  // feature, W_g (H·d_v, E) a view set by set_weight_view("gate_proj_weight") (Qwen3.5's full
  // layers). Frozen modules only; backward refuses it (the gate's gradient is not implemented).
  bool output_gate = false;
  // Gemma 4: a weightless RMSNorm of each value head, v / sqrt(mean(v²) + qk_norm_eps), after the
  // projection. Frozen modules only (the backward refuses it).
  bool v_norm = false;
  // Gemma 4's K/V sharing: the module has no key/value projections (nor k norm) and attends with its
  // own queries over the keys and values another module of the same sizes put in a KvCache
  // (forward_shared only; forward and forward_cached refuse it). Frozen modules only.
  bool shared_kv = false;
};

struct MhaForwardOptions {
  const BoolTensor* mask = nullptr;
  const Tensor* additive_mask = nullptr;
  const BoolTensor* key_padding_mask = nullptr;
  bool causal = false;
  // Positions, bottom-right causal, sliding window and ALiBi, as SdpaOptions::positions (the heads
  // are the module's; query row r at positionOffset + r, key c at c).
  PositionOptions positions;
  bool need_weights = true;
  bool average_weights = true;
  DropoutOptions dropout;
  std::optional<float> scale;  // unset = 1/sqrt(head_dim)
  // Attention-logit soft-capping (Gemma 2): scaled scores → softcap · tanh(s / softcap) before the
  // masks; 0 = none. backward goes through it (ds = dc · (1 − tanh²(s / softcap))).
  float softcap = 0.0f;
  // Positional encoding (T ≥ Tq, E) added to the query before the projections (trace "positional",
  // "x"). In self-attention (key == nullptr) keys and values use the encoded x too; in
  // cross-attention the memory (key/value) is taken as already encoded, as in a Transformer decoder.
  const Tensor* positional = nullptr;
  // Reads or changes q, k, v, the scores, the weights and z during this call (activation_hooks.h);
  // null = none. The cached forward takes the hooks on q, k, v and z.
  const AttentionHooks* hooks = nullptr;
};

struct MhaResult {
  Tensor output;   // (B, Tq, E), or (Tq, E) for unbatched input
  Tensor weights;  // see header comment; empty when !need_weights
};

// What forward_saving keeps for backward. Callers only create, move and pass it; the members are
// the core's (multi_head_backward.cpp) and may change. Copies, not pointers, so the caller's tensors
// may die between forward and backward.
struct MhaSaved {
  bool empty() const { return !filled; }

  // ---- internal ----
  bool filled = false;
  std::uint64_t parameter_version = 0;  // the module's, at the forward
  bool batched = true, has_key = false, has_value = false;
  int b = 0, tq = 0, tk = 0;        // tk: real keys (without bias_k / zero attention)
  std::vector<float> x;             // (B, Tq, E) query + positional
  std::vector<float> key, value;    // (B, Tk, kdim), (B, Tk, vdim) when given
  std::vector<float> q, k, v;       // (B, Tq, H·dk), (B, Tk', H·dk), (B, Tk', H·dv) dense
  std::vector<float> context;       // (B, Tq, H·dv) the concat the output projection read: each query
                                    // head's z (a model's attribution may read it)
  std::vector<float> pre_norm;      // (B, Tq, E) LayerNorm's input, with layer_norm only
  std::vector<float> q_raw, k_raw;  // q, k before the q/k norm (dense as q, k), with qk_norm only
  std::vector<float> ungated;       // (B, Tq, H·dv) the context before config.output_gate, with it only
  float softcap = 0.0f;
  bool has_mask = false, has_additive_mask = false, has_key_padding_mask = false;
  BoolTensor mask, key_padding_mask;
  Tensor additive_mask;
  bool causal = false;
  PositionOptions positions;
  std::optional<float> scale;
  DropoutOptions dropout;
};

// What backward computes beyond the inputs' gradients.
struct MhaBackwardOptions {
  // The parameters' gradients (MhaGrads::params). A frozen module has none to give: it needs false.
  bool parameters = true;
  // MhaGrads::context: the gradient of the context, each query head's z (the attention-weighted
  // values before the output projection), (B, Tq, H·dv) — what attribution per head reads.
  bool context = false;
  // MhaGrads::attention: the gradient of the attention weights A (after the softmax, before any
  // dropout), (B, H, Tq, Tk') — what gradient × attention views read.
  bool attention = false;
};

struct MhaGrads {
  Tensor query;  // shape of the query given to the forward
  Tensor key;    // present (non-empty) only when the forward was given a key
  Tensor value;  // present only when the forward was given a separate value; with value == nullptr
                 // the value path's gradient is ADDED into `key` (key served as both)
  std::vector<std::pair<std::string, Tensor>> params;  // parameter_names(), in order, get_parameter's shapes
                                                       // (empty without MhaBackwardOptions::parameters)
  Tensor context;    // (B, Tq, H·dv) with MhaBackwardOptions::context, else empty
  Tensor attention;  // (B, H, Tq, Tk') with MhaBackwardOptions::attention, else empty
};

// How a KvCache stores its rows: float32, or IEEE float16 (llama.cpp's default cache type: half the
// bytes). A float16 cache narrows the rows it appends (kernels::narrow_f16, round to nearest even)
// and the attention widens them back key tile by key tile (attention_half.cpp): no float32 copy of
// the cache is ever made.
enum class KvDtype { kF32 = 0, kF16 = 1 };

// The keys and values of every token decoded so far, for MultiHeadAttention::forward_cached: per
// batch row, rows [0, length) of the rotated keys and the values. Made by create_cache; only its
// module appends to it.
struct KvCache {
  int max_length = 0, batch = 0, length = 0;
  int key_width = 0, value_width = 0;   // H_kv·dk, H_kv·dv of the module that made it
  std::vector<float> k;                 // (batch, max_length, H_kv·dk)
  std::vector<float> v;                 // (batch, max_length, H_kv·dv)
  std::uint64_t parameter_version = 0;  // the module's when rows were appended
  // A step's scratch, kept with the cache so that decoding allocates nothing once a step has run:
  // the attention problem's lead axes (B, H) and the rotary table of the new rows' positions.
  Shape step_lead;
  RotaryTable step_rotary;
  void reset() { length = 0; }
  KvDtype dtype = KvDtype::kF32;
  std::vector<std::uint16_t> k16, v16;  // kF16: k's and v's layouts as float16 bits (k, v stay empty)
  bool made() const { return !k.empty() || !k16.empty(); }
  std::uint64_t bytes() const {  // what its keys and values hold
    return k.size() * sizeof(float) + v.size() * sizeof(float) + (k16.size() + v16.size()) * 2;
  }
};

class MultiHeadAttention {
 public:
  // Validates the config and initialises the weights from config.seed.
  static Status create(const MhaConfig& config, MultiHeadAttention& out);

  const MhaConfig& config() const { return config_; }
  int head_dim() const { return head_dim_; }
  int value_head_dim() const { return value_head_dim_; }
  int num_kv_heads() const { return kv_heads_; }

  // PyTorch state-dict names present for this config, in PyTorch's order.
  std::vector<std::string> parameter_names() const;
  // Sets one parameter by PyTorch name (copying); in_proj_weight/q_proj_weight/... are accepted
  // whenever the shapes allow. kShapeMismatch / kUnknownParameter / kNonFinite otherwise.
  Status set_parameter(const std::string& name, const Tensor& value);
  Status get_parameter(const std::string& name, Tensor& out) const;
  // Frozen modules (config.frozen): q_proj_weight, k_proj_weight, v_proj_weight, out_proj.weight
  // (or gate_proj_weight, config.output_gate's (H·d_v, E)) as
  // a view of weights the caller owns and keeps alive (shapes as above, any WeightFormat). A view
  // with data == nullptr unsets it. INVALID_ARGUMENT on a module that is not frozen.
  Status set_weight_view(const std::string& name, const WeightView& w);
  // config.qk_norm: the q (key == false) or k norm's weights, shapes as MhaConfig says.
  // SHAPE_MISMATCH / NON_FINITE; INVALID_ARGUMENT when the module has no q/k norm.
  Status set_qk_norm_weight(bool key, const Tensor& w);
  // The q (key == false) or k norm's weights as set (empty before set_qk_norm_weight).
  const Tensor& qk_norm_weight(bool key) const { return key ? k_norm_ : q_norm_; }

  // key == nullptr: self-attention (key = value = query after positional encoding).
  // value == nullptr: value = key.
  Status forward(const Tensor& query, const Tensor* key, const Tensor* value,
                 const MhaForwardOptions& options, MhaResult& result, Trace* trace = nullptr) const;

  // The same computation as forward (same output, bit for bit), keeping in `saved` what backward needs.
  Status forward_saving(const Tensor& query, const Tensor* key, const Tensor* value,
                        const MhaForwardOptions& options, MhaResult& result, MhaSaved& saved,
                        Trace* trace = nullptr) const;
  // A cache for up to max_length tokens of `batch` sequences (multi_head_cache.cpp), its rows stored
  // as `dtype` says. TOO_LARGE past the memory limit (counting the bytes of that type);
  // INVALID_ARGUMENT for sizes < 1.
  Status create_cache(int max_length, int batch, KvCache& out, KvDtype dtype = KvDtype::kF32) const;
  // Decoding: self-attention of x (B, T, E) (B = cache.batch) whose keys are every cached row plus
  // x's own. Projects only x's rows, rotates q and k at positions cache.length + t (RoPE), appends
  // the keys and values, and attends with query row r at position cache.length + r (causal = the
  // bottom-right mask over the cache). The output equals the last T rows of one forward over the
  // whole sequence. Past max_length: TOO_LARGE, and the cache is unchanged (as on every error).
  // A float16 cache refuses (NON_FINITE) a step whose keys or values pass float16's range (±65504).
  // Masks, key padding, positional tables, dropout and extra keys (bias_k, zero attention) are
  // INVALID_ARGUMENT with a cache, as is a cache filled before the weights last changed.
  Status forward_cached(const Tensor& x, KvCache& cache, const MhaForwardOptions& options, MhaResult& result,
                        Trace* trace = nullptr) const;
  // A shared_kv module: x (B, T, E)'s queries at positions source.length − T + r attend over rows
  // [0, source.length) of `source` (a KvCache of a module with the same key/value widths, which has
  // just appended these T rows), causal and windowed as the options say; nothing is appended. The
  // hooks and traces on q and z as forward_cached's (the shared keys and values are not this call's).
  // INVALID_ARGUMENT for a module that is not shared_kv, a cache of other widths or shorter than T.
  Status forward_shared(const Tensor& x, const KvCache& source, const MhaForwardOptions& options,
                        MhaResult& result, Trace* trace = nullptr) const;
  // Gradients of sum(output ⊙ grad_output) for the forward that filled `saved` (multi_head_backward.cpp).
  // kInvalidArgument when `saved` is empty or a parameter was set after that forward, or when a frozen
  // module is asked for its parameters' gradients; kShapeMismatch / kNonFinite for grad_output.
  // Frozen modules (pretrained checkpoints) run the same steps through their weight views (any
  // WeightFormat: Wᵀ·g reads the stored matrix), their q/k norms and the soft-cap, with the weights
  // fixed: forward_saving accepts them (and a softcap) and saves what this needs.
  Status backward(const MhaSaved& saved, const Tensor& grad_output, MhaGrads& grads,
                  const MhaBackwardOptions& options = {}) const;

 private:
  MhaConfig config_;
  int head_dim_ = 0, value_head_dim_ = 0, kdim_ = 0, vdim_ = 0, kv_heads_ = 0;
  bool packed_in_proj() const {  // in_proj_weight exists: kdim == vdim == E, as many kv heads as heads
    return kdim_ == config_.embed_dim && vdim_ == config_.embed_dim && kv_heads_ == config_.num_heads;
  }
  // Weights, shapes as in the header comment.
  Tensor w_q_, w_k_, w_v_, b_q_, b_k_, b_v_, w_o_, b_o_, bias_k_, bias_v_, ln_weight_, ln_bias_;
  // w_q_, w_k_, w_v_, w_o_ in the GEMM's packed layout (kernels::pack_weight), refreshed whenever a
  // weight is set: forward's projections skip packing W on every call.
  std::vector<float> packed_q_, packed_k_, packed_v_, packed_o_;
  // config.frozen: the projections, read in place of w_q_ … w_o_ (which stay empty).
  WeightView view_q_, view_k_, view_v_, view_o_;
  WeightView view_gate_;  // config.output_gate's W_g
  // The parameters above by reference, as every forward's steps read them.
  mha_steps::Weights weights() const;
  // config.output_gate on the b·tq rows of z (H·d_v each) from the inputs x (E each), in place (the
  // gate's pre-activations traced as "gate").
  void gate_context(int b, int tq, const float* x, float* z, Trace* trace,
                    std::vector<float>* ungated = nullptr) const;
  // Its backward (frozen W_g): d_context (rows, H·d_v) at the gated context becomes the gradient at
  // the ungated one (saved.ungated); W_gᵀ · the gate's pre-activation gradient is added into d_x.
  void gate_backward(const MhaSaved& saved, std::int64_t rows, float* d_context, float* d_x) const;
  Tensor q_norm_, k_norm_;            // config.qk_norm's weights
  Status check_frozen_ready() const;  // every view set (and the q/k norm weights)
  // forward / forward_saving (`saving`) of a frozen module: not shared_kv, no value norm to save.
  Status check_plain_call(bool saving) const;
  // config.qk_norm on the b·tq query rows at q (stride ldq) and the tk key rows of each batch at k
  // (batch bi's first row at bi·tk_rows·ldk), in place.
  void norm_qk(int b, int tq, float* q, int ldq, int tk, int tk_rows, float* k, int ldk) const;
  // config.v_norm on the first tk value rows of each batch (tk_rows rows per batch, stride ldv).
  void norm_v(int b, int tk, int tk_rows, float* v, int ldv) const;
  // Floats the packed copies take, for the memory check before they are allocated.
  std::uint64_t packed_floats() const;
  void pack_weights();
  // Bumped (from a process-wide counter, so no two modules share a value) by create and every
  // successful set_parameter: backward refuses a MhaSaved from before the last change.
  std::uint64_t parameter_version_ = 0;
  Status assign_parameter(const std::string& name, const Tensor& value);
  // forward and forward_saving: saved == nullptr for the plain forward.
  Status run_forward(const Tensor& query, const Tensor* key, const Tensor* value,
                     const MhaForwardOptions& options, MhaResult& result, MhaSaved* saved,
                     Trace* trace) const;
};

}  // namespace attn
