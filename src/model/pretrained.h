// Pretrained decoder-only transformers in Hugging Face's layouts, run on the library's own kernels
// and MultiHeadAttention: GPT-2 (GPT2LMHeadModel) and the Llama family (LlamaForCausalLM;
// Qwen2ForCausalLM is Llama with biases on q/k/v). Weights are set by role (TensorRole): which file
// name holds a role is the family registry's (src/js/architectures/).
//
// In roles:
//   GPT-2:  x = embed[ids] + positions[t]; block: x += o(attn(attn_norm(x))) (the fused qkv);
//           x += down(gelu_tanh(up(mlp_norm(x)))); final_norm; logits = x · embedᵀ (tied). Its files
//           store qkv, o, up and down (in, out) (Conv1D): transposed on load.
//   Llama:  x = embed[ids]; block: x += o(attn(rms(x))) with RoPE (rotate_half) and H_kv heads;
//           x += down(silu(gate(rms(x))) · up(rms(x))); final_norm; logits = x · unembedᵀ (or tied).
//           Mistral, Qwen3, SmolLM3, OLMo 2, Phi-3, Gemma 3 and Granite are Llama with the variants
//           PretrainedConfig lists (sliding windows, q/k norms, no-RoPE layers, post-norms, fused
//           projections, GeGLU, branch and logit scales, a query temperature, …).
// Each layer is composed of block kinds (blocks.h: norms, an MLP, the attention token mixer) once, when
// the model is made (compose_layer, pretrained_load.cpp): the only place the family's config chooses
// them; the forward, the loader's tensor placement and the backward run whatever a layer holds.
// forward's options and outputs are interp_hooks.h's (ForwardOptions, shared with TinyTransformer).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/multi_head.h"
#include "core/stored_weight.h"
#include "core/tensor.h"
#include "core/trace.h"
#include "model/blocks.h"
#include "model/delta_net.h"
#include "model/interp_hooks.h"
#include "model/lookup_table.h"
#include "model/metric_gradients.h"
#include "model/per_layer_input.h"
#include "model/short_conv.h"

namespace attn {

// What a tensor is to the model, whatever a file calls it: the global ones (token embedding, learned
// positions, final norm and its bias, unembedding) and each layer's (its norms, q/k/v projections or
// the fused [q; k; v], their biases, q/k norms, output projection, MLP gate/up/down or the fused
// [gate; up], the MLP biases). role_name gives the registry's spelling ("embed", "q", "gate_up", …).
enum class TensorRole {
  kEmbed,
  kPositions,
  kFinalNorm,
  kFinalNormBias,
  kUnembed,
  kAttnNorm,
  kAttnNormBias,
  kMlpNorm,
  kMlpNormBias,
  kPostAttnNorm,
  kPostMlpNorm,
  kQ,
  kK,
  kV,
  kQkv,
  kQBias,
  kKBias,
  kVBias,
  kQkvBias,
  kO,
  kOBias,
  kQNorm,
  kKNorm,
  kGate,
  kUp,
  kGateUp,
  kDown,
  kUpBias,
  kDownBias,
  kConvInProj,         // LFM2's short convolution: in_proj (3E, E) = [B; C; X]
  kConvWeight,         // its depthwise kernel (E, K) (folders: (E, 1, K))
  kConvOutProj,        // its out_proj (E, E)
  kLinearQkv,          // a DeltaNet layer's (delta_net.h): [q; k; v] (C, E)
  kLinearZ,            // the gate z (H_v·d_v, E)
  kLinearB,            // β's projection (H_v, E)
  kLinearA,            // the decay's projection (H_v, E)
  kLinearConv,         // the depthwise conv (C, K)
  kLinearDecay,        // A_log (folders) or −exp(A_log) (GGUF) (H_v)
  kLinearDtBias,       // dt_bias (H_v)
  kLinearNorm,         // the gated norm's weight (d_v)
  kLinearOut,          // the output projection (E, H_v·d_v)
  kQGate,              // attn_output_gate: q_proj as files store it, per head [q_h; gate_h] (2·H·d, E)
  kPerLayerEmbed,      // Gemma 4: the per-layer table (V, L·P), global
  kPerLayerModelProj,  // (L·P, E), global
  kPerLayerProjNorm,   // (P), global
  kPerLayerGate,       // (P, E) per layer
  kPerLayerProj,       // (E, P) per layer
  kPerLayerPostNorm,   // (E) per layer
  kLayerScale,         // (1) per layer: layer_output_scale
  kCount
};
const char* role_name(TensorRole role);
// The role of a registry spelling; false when there is none.
bool role_from_name(const std::string& name, TensorRole& role);

struct TensorKey {
  TensorRole role = TensorRole::kEmbed;
  int layer = -1;  // -1: a global tensor
  bool operator<(const TensorKey& o) const { return role != o.role ? role < o.role : layer < o.layer; }
  bool operator==(const TensorKey& o) const { return role == o.role && layer == o.layer; }
  std::string label() const;  // "embed", "layer 3 q"
};

// A tensor the model needs: its role and its shape as the model keeps it ((out, in) as nn.Linear).
struct TensorSpec {
  TensorKey key;
  Shape shape;
};

struct PretrainedConfig;
struct MapLayout;  // map_session.h
// Every tensor a (checked) config needs, in load order: the list PretrainedModel::tensors() gives.
std::vector<TensorSpec> pretrained_tensor_specs(const PretrainedConfig& c);

enum class PretrainedArch { kGpt2 = 0, kLlama = 1 };

struct PretrainedConfig {
  PretrainedArch arch = PretrainedArch::kGpt2;
  int vocab_size = 0, hidden = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0;
  int max_positions = 0;
  double norm_eps = 1e-5;     // layer_norm_epsilon (GPT-2) or rms_norm_eps (Llama)
  double rope_theta = 10000;  // Llama
  bool qkv_bias = false;      // Qwen2: biases on q, k and v
  bool tie_embeddings = true;
  std::vector<double> rope_inv_freq;  // Llama 3 scaled frequencies (head_dim / 2), or empty
  double rope_attention_factor = 1;   // Phi-3 LongRoPE: cos and sin × it (the rotated features only)
  // Llama-family variants, each named by the architecture that needs it:
  MhaConfig::QkNorm qk_norm = MhaConfig::QkNorm::kNone;  // Qwen3 (per head), OLMo 2 (over all heads)
  bool pre_norms = true;  // a norm before the attention and before the MLP (all but OLMo 2)
  bool post_norms =
      false;  // OLMo 2, Gemma 3: a norm on the attention's and the MLP's output, before the residual add
  float norm_weight_offset =
      0;                  // Gemma 3: RMSNorm scales by (1 + w) (the 1 is added to every norm weight at load)
  float embed_scale = 1;  // Gemma 3: the token embeddings × √hidden_size (a float32 constant)
  double attention_scale = 0;  // Gemma 3: query_pre_attn_scalar^−1/2; 0 = head_dim^−1/2
  bool gelu_mlp = false;       // Gemma 3: down(gelu_tanh(gate(x)) · up(x)) (GeGLU) instead of SwiGLU
  double local_rope_theta =
      0;  // Gemma 3: the sliding layers' RoPE base (default frequencies); 0 = every layer's is rope_theta
  float attn_softcap = 0;    // Gemma 2: scaled scores → c · tanh(s / c) before the mask; 0 = none
  float final_softcap = 0;   // Gemma 2: logits → c · tanh(logits / c); 0 = none
  float residual_scale = 1;  // Granite: residual_multiplier, each branch × it before its residual add
  float logits_scaling = 1;  // Granite: logits ÷ it (before any final soft-cap)
  // Ministral 3 (llama_4_scaling_beta): q at position p × (1 + beta · ln(1 + ⌊p / floor⌋)) after RoPE,
  // floor = original_max_position_embeddings; beta 0 = none
  double query_temperature_beta = 0;
  int query_temperature_floor = 0;
  bool fused_projections = false;  // Phi-3: qkv [q; k; v] and gate_up [gate; up]
  int rotary_dims = 0;             // Phi-3: partial_rotary_factor · head_dim features rotated (0 = all)
  std::vector<int> layer_window;   // per layer: 0 = full, w = the w most recent keys, itself included
                                   // (Mistral, Qwen2, Phi-3)
  std::vector<int>
      layer_rope;  // per layer: 1 = RoPE, 0 = none (SmolLM3's no-RoPE layers); empty = every layer
  // per layer: its token mixer, MixerKind's value (blocks.h; 0 = softmax attention); empty = attention
  // in every layer
  std::vector<int> layer_mixer;
  int conv_kernel = 0;  // LFM2: the short convolution's kernel (conv_L_cache), ≥ 2 where a layer has one
  // Qwen3.5's DeltaNet layers (MixerKind::kDeltaNet, delta_net.h): linear_num_key_heads,
  // linear_num_value_heads, linear_key_head_dim, linear_value_head_dim, linear_conv_kernel_dim;
  // linear_layout 0: a folder's (grouped value heads, A_log), 1: GGUF's (tiled, −exp(A_log))
  int linear_k_heads = 0, linear_v_heads = 0, linear_k_dim = 0, linear_v_dim = 0, linear_conv_kernel = 0;
  int linear_layout = 0;
  // Qwen3.5's full layers: the attention's output × σ(W_gate x) before o_proj (MhaConfig::output_gate),
  // W_gate read from q_proj (TensorRole::kQGate)
  bool attn_output_gate = false;
  // Gemma 4. Per layer (empty = the global value in every layer): its head size, key/value heads,
  // MLP width (the double-wide MLP of shared layers) and the layer whose keys and values it attends
  // over (-1 or itself = its own; an earlier layer = K/V shared: no k/v projections of its own).
  std::vector<int> layer_head_dim, layer_kv_heads, layer_intermediate, layer_kv_from;
  bool v_norm = false;       // a weightless RMSNorm of each value head (eps norm_eps)
  int per_layer_width = 0;   // P of the per-layer inputs (per_layer_input.h); 0 = none
  bool layer_scale = false;  // a layer_output_scale scalar per layer: the stream × it after each block
};

// The DeltaNet layers' sizes (pretrained_delta.cpp): their checks, and the block's shape.
Status check_delta_config(const PretrainedConfig& c);
DeltaNetShape delta_shape(const PretrainedConfig& c);
// TensorRole::kQGate's rows as the files store them (per head h: its d rows of W_q, then its d rows
// of W_gate) reordered in place into [W_q; W_gate], the row blocks the attention reads
// (pretrained_gate.cpp). Any format: a row is whole blocks.
void split_q_gate_rows(StoredWeight& w, int heads);

// A layer's sizes where the config gives them per layer (else the global ones).
int layer_head_dim(const PretrainedConfig& c, int l);
int layer_kv_heads(const PretrainedConfig& c, int l);
int layer_intermediate(const PretrainedConfig& c, int l);
// The layer whose keys and values layer l attends over (l itself unless shared).
int layer_kv_source(const PretrainedConfig& c, int l);
// The per-layer fields' checks (pretrained_per_layer.cpp): sizes, sources, widths.
Status check_layer_variants(const PretrainedConfig& c);
// Values of the per-layer input tensors (0 without them), for the memory check.
std::uint64_t per_layer_input_values(const PretrainedConfig& c);
// Values of the tables only looked up by row (PretrainedModel::lookup_only), which may stay outside memory.
std::uint64_t lookup_only_values(const PretrainedConfig& c);

// Every PretrainedConfig field with its name in the wrapper's config object (src/js/architectures/
// builds it): the one list the binding reads a config through and writes it back with, so no
// field is copied by hand. X(member, "jsName").
#define ATTN_PRETRAINED_CONFIG_FIELDS(X)              \
  X(arch, "arch")                                     \
  X(vocab_size, "vocabSize")                          \
  X(hidden, "hidden")                                 \
  X(layers, "layers")                                 \
  X(heads, "heads")                                   \
  X(kv_heads, "kvHeads")                              \
  X(head_dim, "headDim")                              \
  X(intermediate, "intermediate")                     \
  X(max_positions, "maxPositions")                    \
  X(norm_eps, "normEps")                              \
  X(rope_theta, "ropeTheta")                          \
  X(qkv_bias, "qkvBias")                              \
  X(tie_embeddings, "tieEmbeddings")                  \
  X(rope_inv_freq, "ropeInvFreq")                     \
  X(rope_attention_factor, "ropeAttentionFactor")     \
  X(qk_norm, "qkNorm")                                \
  X(pre_norms, "preNorms")                            \
  X(post_norms, "postNorms")                          \
  X(norm_weight_offset, "normWeightOffset")           \
  X(embed_scale, "embedScale")                        \
  X(attention_scale, "attentionScale")                \
  X(gelu_mlp, "geluMlp")                              \
  X(local_rope_theta, "localRopeTheta")               \
  X(attn_softcap, "attnSoftcap")                      \
  X(final_softcap, "finalSoftcap")                    \
  X(residual_scale, "residualScale")                  \
  X(logits_scaling, "logitsScaling")                  \
  X(query_temperature_beta, "queryTemperatureBeta")   \
  X(query_temperature_floor, "queryTemperatureFloor") \
  X(fused_projections, "fusedProjections")            \
  X(rotary_dims, "rotaryDims")                        \
  X(layer_window, "layerWindow")                      \
  X(layer_rope, "layerRope")                          \
  X(layer_mixer, "layerMixer")                        \
  X(conv_kernel, "convKernel")                        \
  X(linear_k_heads, "linearKHeads")                   \
  X(linear_v_heads, "linearVHeads")                   \
  X(linear_k_dim, "linearKDim")                       \
  X(linear_v_dim, "linearVDim")                       \
  X(linear_conv_kernel, "linearConvKernel")           \
  X(linear_layout, "linearLayout")                    \
  X(attn_output_gate, "attnOutputGate")               \
  X(layer_head_dim, "layerHeadDim")                   \
  X(layer_kv_heads, "layerKvHeads")                   \
  X(layer_intermediate, "layerIntermediate")          \
  X(layer_kv_from, "layerKvFrom")                     \
  X(v_norm, "vNorm")                                  \
  X(per_layer_width, "perLayerWidth")                 \
  X(layer_scale, "layerScale")

// Weights: every matrix (embeddings, projections, MLP, head) is kept once, in its checkpoint's own
// format (F32, F16 or BF16: a 16-bit file stays 16-bit in memory, widened inside the GEMM; a GGUF
// quantized format keeps its ggml blocks, dequantized panel by panel inside the GEMM); norms and
// biases are widened to float32. The attention projections are views into those matrices
// (MultiHeadAttention's frozen mode), so nothing is packed or copied twice.
class PretrainedModel {
 public:
  // Checks the sizes (INVALID_ARGUMENT / HEADS_DO_NOT_DIVIDE / TOO_LARGE before allocating; the
  // weights are counted at the fewest bytes any format stores a value in, Q2_K's 84 per 256;
  // reserve() checks the real total).
  static Status create(const PretrainedConfig& config, PretrainedModel& out);
  const PretrainedConfig& config() const { return config_; }

  // Every tensor the config needs, by role, in load order (the global ones first, then each layer's,
  // the final norm and the unembedding last).
  const std::vector<TensorSpec>& tensors() const { return specs_; }
  // TOO_LARGE when `bytes` (the checkpoint's tensors as stored) pass the memory limit: the caller
  // knows the total from the file headers and asks before loading the first tensor.
  Status reserve(std::uint64_t bytes) const;
  // Loading one tensor in two steps, so its bytes go from the file straight to their final place:
  // begin_tensor checks the key, the shape as stored (`transposed`: the file holds (in, out), as
  // GPT-2's Conv1D) and the memory, and returns room for the values (`format`, little-endian, the
  // file's row-major layout); end_tensor checks them (NON_FINITE, naming `label`, the file's name)
  // and puts them in use. A failed end_tensor leaves the tensor as it was before begin_tensor.
  // A quantized `format` only for a matrix, not `transposed`; its byte size is the blocks' (the
  // rows a whole number of blocks). UNKNOWN_PARAMETER / SHAPE_MISMATCH / INVALID_ARGUMENT (an unknown
  // format, a quantized vector or transposed matrix) / TOO_LARGE / NON_FINITE.
  Status begin_tensor(const TensorKey& key, const Shape& stored_shape, WeightFormat format, bool transposed,
                      const std::string& label, void*& data);
  Status end_tensor(const TensorKey& key);
  // The keys tensors() lists that were never set (empty when the model is complete).
  std::vector<TensorKey> missing() const;
  // `count` rows from row `first` of a tensor, float32, row-major: matrices as the model keeps them
  // ((out, in)); a vector (norm weight, bias) is one row. INVALID_ARGUMENT for an unknown or unset
  // key or rows out of range.
  Status read_rows(const TensorKey& key, int first, int count, std::vector<float>& out) const;

  // The int8 activation mode (kernels/quant_int8.h) for the quantized matrices loaded after this
  // call (so: before the first tensor); the exact mode, the default, otherwise. The backward
  // (metric_gradients) reads the weights exactly in either mode.
  void set_int8_activations(bool on) { int8_activations_ = on; }
  bool int8_activations() const { return int8_activations_; }

  // Bytes the weights take (the stored matrices and the float32 vectors).
  std::uint64_t weight_bytes() const;
  // Lookup-only tables (lookup_table.h): whether `role`'s tensor is only read by row (an untied token
  // embedding, Gemma 4's per-layer table), and one attached instead of begin/end_tensor, kept outside
  // memory by `rows` (read through once here: NON_FINITE). UNKNOWN_PARAMETER / SHAPE_MISMATCH /
  // INVALID_ARGUMENT (not lookup-only, an unknown format) / NON_FINITE; off_heap_bytes: theirs.
  static bool lookup_only(const PretrainedConfig& c, TensorRole role);
  Status attach_table(const TensorKey& key, const Shape& shape, WeightFormat format, const std::string& label,
                      std::shared_ptr<const TableRows> rows);
  std::uint64_t off_heap_bytes() const;

  // ids (B, T) row-major; T ≤ max_positions, ids in [0, vocab). With `caches` (from create_caches)
  // the rows continue the cached sequences: positions from caches->length, only the new rows computed
  // (decoding); without, the whole sequence from position 0. A failed call leaves the caches as it
  // found them.
  Status forward(int b, int t, const std::vector<std::int32_t>& ids, const PretrainedForwardOptions& options,
                 PretrainedForwardResult& result, DecodeCaches* caches = nullptr);
  // Its hook points' shapes (hooks.h): HookRun::create checks a forward's captures and edits by them.
  HookShapes hook_shapes() const;
  // Frees the buffers a forward with caches keeps for the next step (when a generation ends).
  void release_workspace() { work_ = Workspace(); }
  // The decoding state of every layer for `batch` sequences of up to max_length tokens (≤ max_positions);
  // `kv`: how the attention layers store keys and values (float16: half the bytes, MultiHeadAttention).
  Status create_caches(int max_length, int batch, DecodeCaches& caches, KvDtype kv = KvDtype::kF32) const;
  // Layer l's softmax attention as the maps on demand read it (map_session.cpp): its sizes, scale,
  // soft-cap, window and key source; only `mixer` for a layer of another kind.
  MapLayout map_layout(int l) const;
  // ids (B, T) as forward: M's value per sequence and its gradients (metric_gradients.h), by a backward
  // through every block (recomputing each block's activations from its saved input, so only the L + 1
  // hidden states are kept), on the thread pool with the same bits at any thread count. Checks as
  // forward's and check_metric's; TOO_LARGE before allocating past the memory limit.
  Status metric_gradients(int b, int t, const std::vector<std::int32_t>& ids, const GradientOptions& options,
                          GradientResult& result);

 private:
  // One block, composed from the family's config when the model is made (pretrained_load.cpp:
  // compose_layer): x += s · post_attn(mixer(attn_norm(x))); x += s · post_mlp(mlp(mlp_norm(x))), each
  // norm present where the family has it (Llama: the pre-norms; OLMo 2: the post-norms; Gemma: both),
  // s the branch scale (Granite's residual_multiplier; 1 elsewhere). hook_attn_out / hook_mlp_out hold
  // each branch as added (after s); attn.hook_out / mlp.hook_out, before the post-norm and s.
  struct Layer {
    MixerKind kind = MixerKind::kAttention;  // which token mixer below the layer runs
    AttentionBlock mixer;                    // frozen: its projections are views into stored_
    ShortConvBlock conv;                     // MixerKind::kShortConv's (views into stored_)
    DeltaNetBlock delta;                     // a DeltaNet layer's (pretrained_delta.cpp)
    NormBlock attn_norm, post_attn_norm, mlp_norm, post_mlp_norm;
    MlpBlock mlp;
    float branch_scale = 1;
    int kv_from = -1;      // Gemma 4: attends over this earlier layer's keys and values (-1: its own)
    bool kv_kept = false;  // a later layer attends over its keys and values
    Tensor output_scale;   // Gemma 4's layer_output_scale (1): the stream × it after the block; or empty
  };
  static Status compose_layer(const PretrainedConfig& c, int l, Layer& out);
  // The DeltaNet layers' part (pretrained_delta.cpp): a layer's and vectors as loaded (false / null: not a
  // DeltaNet role); delta_mixer: its forward step.
  static bool use_delta_matrix(Layer& L, TensorRole role, const WeightView& w);
  static const Tensor* delta_slot(const Layer& L, TensorRole role);
  struct Pending {
    StoredWeight weight;
    std::string label;
    bool transposed = false;
  };
  // One forward's sizes and where it starts (forward's helpers share them).
  struct Pass {
    int b = 0, t = 0, p0 = 0;
    std::int64_t n = 0;
    bool from_residual = false;
  };
  // A forward's buffers, kept between calls (resized, never shrunk): a decoding step, whose sizes
  // repeat, allocates nothing once the first step has run (a result reused by the caller keeps its
  // own buffers too; tests/cpp/test_decode_allocations.cpp counts).
  struct Workspace {
    std::vector<float> x, h, out;         // the stream, a norm's output, the MLP's output: (N, E)
    std::vector<float> mlp_a, mlp_u;      // the MLP's gate (or up) and up activations: (N, I)
    std::vector<float> picked, position;  // logits_row's rows (B, E); the learned positions (N, E)
    Tensor query;                         // the attention's input (B, T, E)
    MhaResult attention;                  // its output
    ShortConvWork conv;                   // a short-convolution layer's buffers
    // Gemma 4: the per-layer inputs (N, L·P) and their scratch; in a forward without caches, the
    // keys and values of the layers others share (one KvCache per layer, empty where none is kept)
    std::vector<float> per_layer, per_layer_proj, per_layer_g, per_layer_y;
    std::vector<KvCache> shared_kv;
  };
  PretrainedConfig config_;
  std::vector<TensorSpec> specs_;
  Workspace work_;
  bool int8_activations_ = false;
  std::map<TensorKey, bool> set_;
  // Every matrix as loaded, in its format (vectors until they are widened), by key. Views point into
  // these: map nodes and vector buffers stay in place when the model is moved.
  std::map<TensorKey, StoredWeight> stored_;
  std::map<TensorKey, Pending> pending_;
  WeightView embed_, positions_, head_;
  LookupTable embed_rows_;  // the embedding as embed() reads it: embed_, or rows kept outside (attach_table)
  bool learned_positions_ = false;  // GPT-2: a positions tensor added to the embeddings
  NormBlock final_norm_;
  std::vector<Layer> layers_;
  PerLayerInput per_layer_;  // Gemma 4's per-layer inputs (absent elsewhere)
  // pretrained_per_layer.cpp: the per-layer input tensors and layer scales put in use, their slots,
  // the caches of shared keys and values of a forward without caches, and the
  // per-layer inputs of a forward.
  static bool is_per_layer_role(TensorRole role);
  Status use_per_layer(const TensorKey& key, const StoredWeight& stored);
  const Tensor* per_layer_slot(const TensorKey& key) const;
  // forward's start: x = the embeddings (or the stream it starts from), Gemma 4's per-layer inputs
  // and, without caches, the caches of the keys and values later layers share.
  Status begin_stream(const Pass& p, const std::vector<std::int32_t>& ids, const PretrainedForwardOptions& o,
                      bool cached);
  Status use(const TensorKey& key);  // puts stored_[key] in use (views, widened vectors)
  Status use_layer_matrix(Layer& l, TensorRole role, const WeightView& w);
  Status use_layer_vector(Layer& l, TensorRole role, const Tensor& v);
  // The float32 slot of a vector role (norm weights and biases), or nullptr.
  const Tensor* vector_slot(const TensorKey& key) const;
  // logits (n) ÷ logits_scaling (Granite; transformers divides), where it is not 1.
  void scale_logits(int n, float* logits) const;
  // Appends to the lens the top token and its probability of each row of `normed` (rows, E).
  void lens_row(std::int64_t rows, const float* normed, PretrainedForwardResult& r) const;
  // forward's steps: the checks and the memory, the embeddings, one block, the head.
  Status check_forward(const Pass& p, const std::vector<std::int32_t>& ids, const PretrainedForwardOptions& o,
                       bool cached) const;
  // positions: scratch for the learned positions' rows (N, E).
  void embed(const Pass& p, const std::vector<std::int32_t>& ids, const HookRun* hooks, std::vector<float>& x,
             std::vector<float>& positions) const;
  // metric_gradients' steps (pretrained_gradients.cpp).
  struct GradRun;
  Status check_gradients(const Pass& p, const std::vector<std::int32_t>& ids, const GradientOptions& o) const;
  void head_backward(const GradRun& run, const Pass& p, const GradientOptions& o, GradientResult& r,
                     std::vector<float>& dx) const;
  struct BlockState;
  Status block_state(int l, const Pass& p, const GradientOptions& o, const std::vector<float>& x,
                     BlockState& s, std::vector<float>* y) const;
  Status block_backward(int l, const Pass& p, const GradientOptions& o, const std::vector<float>& x,
                        BlockState& s, std::vector<float>& dx, GradientResult& r) const;
  // On work_'s buffers: the stream x, h and out.
  Status block(int l, const Pass& p, const PretrainedForwardOptions& o, PretrainedForwardResult& result,
               DecodeCaches* caches);
  // Layer l's token mixer on its normed input `in` (N, E): its output (N, E) in work_.attention.output.
  Status token_mixer(int l, const Pass& p, const PretrainedForwardOptions& o, const std::vector<float>& in,
                     PretrainedForwardResult& result, DecodeCaches* caches);
  Status delta_mixer(int l, const Pass& p, const PretrainedForwardOptions& o, const std::vector<float>& in,
                     PretrainedForwardResult& result, DecodeCaches* caches);
  void head_logits(const Pass& p, const PretrainedForwardOptions& o, const std::vector<float>& h,
                   std::vector<float>& picked, PretrainedForwardResult& result) const;
};

}  // namespace attn
