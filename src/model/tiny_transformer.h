// TinyTransformer: a small decoder-style language model built from the library's own
// MultiHeadAttention and kernels, with its full backward pass. The computation (a PyTorch module
// written from this text reproduces it; state-dict names in backticks):
//
//   x (B, T, d) = `tok_emb.weight`[ids] (+ `pos_emb.weight`[t] (maxLength, d) when learned;
//                 + the sinusoidal table, base 10000, when sinusoidal: not a parameter)
//   layer i:  attn = nn.MultiheadAttention(d, H, bias=True, batch_first=True) under `blocks.{i}.attn.`,
//             self-attention, causal when config.causal; with num_kv_heads < H grouped-query heads
//             (`q_proj_weight`, `k_proj_weight`, `v_proj_weight` of H_kv heads, `in_proj_bias`);
//             RoPE on q and k or ALiBi on the scores when positional says so; a sliding window;
//             mlp(h) = `blocks.{i}.mlp.fc2`(GELU_erf(`blocks.{i}.mlp.fc1`(h)));
//             LayerNorms `blocks.{i}.ln1`, `blocks.{i}.ln2`, `ln_f` (eps 1e-5)
//     pre:  x = x + attn(ln1(x)); x = x + mlp(ln2(x)); after the last layer x = ln_f(x)
//     post: x = ln1(x + attn(x)); x = ln2(x + mlp(x)); no ln_f
//     none: x = x + attn(x); x = x + mlp(x); no LayerNorm
//     mlp = false drops mlp and ln2.
//   logits (B, T, V) = `head`(x), `head.weight` (V, d), `head.bias` (V); not tied to tok_emb.
//   loss = mean cross-entropy over positions whose target is not −100.
// forward's options and outputs are interp_hooks.h's (ForwardOptions, shared with PretrainedModel):
// hidden states in Hugging Face's order, L + 1 ([L] after ln_f, or the stream itself without one).
//
// Initialisation (GPT-2's scheme, from `seed` with the portable RNG, identical native and wasm):
// every weight matrix and embedding ~ N(0, 0.02²), except the two projections that write into the
// residual stream (`attn.out_proj.weight`, `mlp.fc2.weight`) ~ N(0, (0.02/√(2·numLayers))²) and
// `pos_emb.weight` ~ N(0, 0.01²); biases 0; LayerNorm weights 1, biases 0.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/multi_head.h"
#include "core/tensor.h"
#include "core/trace.h"
#include "model/interp_hooks.h"
#include "model/metric_gradients.h"

namespace attn {

struct TinyWorkspace;  // tiny_transformer_pass.cpp
std::shared_ptr<TinyWorkspace> make_workspace();

// kRope: rotary embedding of every head's q and k (base 10000, 'half', all head dimensions);
// kAlibi: the ALiBi paper's slopes on the scores. Neither adds anything to the embeddings.
enum class PositionalKind { kNone = 0, kLearned = 1, kSinusoidal = 2, kRope = 3, kAlibi = 4 };
enum class NormKind { kNone = 0, kPre = 1, kPost = 2 };

struct TinyConfig {
  int vocab_size = 0;
  int max_length = 0;
  int d_model = 0;
  int num_heads = 1;
  int num_layers = 1;
  bool mlp = true;
  int mlp_hidden = 0;  // 0 = 4·d_model
  PositionalKind positional = PositionalKind::kLearned;
  NormKind norm = NormKind::kPre;
  bool causal = true;
  std::uint64_t seed = 0;
  int num_kv_heads = 0;  // 0 = num_heads; grouped-query attention in every layer (divides num_heads)
  int window = 0;        // 0 = none; a sliding window of this many keys in every layer
};

// A batch of token ids (B, T), row-major.
struct IdBatch {
  int b = 0, t = 0;
  std::vector<std::int32_t> data;
};

class TinyTransformer {
 public:
  static Status create(const TinyConfig& config, TinyTransformer& out);
  const TinyConfig& config() const { return config_; }

  // State-dict names in module order, and the matching tensors.
  const std::vector<std::string>& parameter_names() const { return names_; }
  const std::vector<Tensor>& parameters() const { return params_; }
  std::int64_t parameter_count() const;
  // kUnknownParameter / kShapeMismatch / kNonFinite naming the parameter.
  Status set_parameter(const std::string& name, const Tensor& value);
  // Writes every parameter from `values` (parameter_names() order) after checking them all: on an error
  // nothing changes.
  Status set_parameters(const std::vector<Tensor>& values);

  // For an optimiser: the parameters to update in place (every attention module is re-synced from
  // them before the next pass).
  std::vector<Tensor>& parameters_for_update() {
    attn_dirty_.assign(attn_dirty_.size(), true);
    return params_;
  }

  // Its hook points' shapes (hooks.h): HookRun::create checks a forward's captures and edits by them.
  HookShapes hook_shapes() const;

  // Checks ids (and targets when given) without running anything.
  Status check_batch(const IdBatch& ids, const IdBatch* targets) const;
  Status forward(const IdBatch& ids, const ForwardOptions& options, ForwardResult& result);
  Status loss(const IdBatch& ids, const IdBatch& targets, float& loss);
  // loss and d loss / d parameter for every parameter (parameter_names() order, zeros included).
  Status gradients(const IdBatch& ids, const IdBatch& targets, float& loss, std::vector<Tensor>& grads);
  // M's value per sequence and its gradients with respect to the activations (metric_gradients.h);
  // the parameters are not touched and get no gradients (gradients() is training's).
  Status metric_gradients(const IdBatch& ids, const GradientOptions& options, GradientResult& result);

 private:
  struct Layer;
  TinyConfig config_;
  std::vector<std::string> names_;
  std::vector<Tensor> params_;
  std::vector<MultiHeadAttention> attn_;  // one per layer; its weights mirror params_ (sync_attention)
  std::vector<bool> attn_dirty_;
  Tensor sinusoid_;  // (max_length, d) when sinusoidal
  // The pass's buffers, reused from call to call (copies of a model share them: single-threaded).
  std::shared_ptr<TinyWorkspace> workspace_;

  int index_of(const std::string& name) const;
  void add_parameter(const std::string& name, Shape shape);
  void sync_attention();
  void zero_gradients(std::vector<Tensor>& grads) const;
  Status run(const IdBatch& ids, const IdBatch* targets, const ForwardOptions* options, ForwardResult* result,
             float* loss, std::vector<Tensor>* grads);
  friend struct TinyPass;
  friend struct TinyGradPass;  // tiny_gradients.cpp
};

}  // namespace attn
