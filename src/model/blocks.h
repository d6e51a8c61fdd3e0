// The block kinds a pretrained model is composed of (PretrainedModel, pretrained.h): norms and channel
// mixers (MLPs) here, the token mixer being the library's MultiHeadAttention with its per-layer
// options (AttentionBlock). Each kind is chosen once, when the model is made, from the family's config
// (which norm, which MLP, which norms a layer has); the forward and the backward run whatever a layer
// holds, with no per-family switch. A new kind (a linear-attention or convolution mixer) is a new
// class beside these, with its own hook points (hooks.h).
#pragma once
#include <cstdint>
#include <vector>

#include "core/multi_head.h"
#include "core/stored_weight.h"
#include "core/tensor.h"
#include "model/hooks.h"

namespace attn {

// LayerNorm (weight and bias: GPT-2) or RMSNorm (x / rms(x) · w in double: the Llama layout; Gemma's
// (1 + w) is folded into w when loaded), over rows of `width`. A default NormBlock is absent (a layer
// without that norm).
class NormBlock {
 public:
  enum class Kind { kLayer, kRms };
  NormBlock() = default;
  NormBlock(Kind kind, int width, double eps) : kind_(kind), width_(width), eps_(eps), present_(true) {}
  bool present() const { return present_; }
  Kind kind() const { return kind_; }
  // y (rows, width) = the norm of x; rows in parallel (each row is its own: docs/threads.md).
  void forward(std::int64_t rows, const float* x, float* y) const;
  // dx (rows, width) = the input gradient for dy, the weights fixed.
  void backward(std::int64_t rows, const float* x, const float* dy, float* dx) const;
  Tensor weight, bias;  // set by the loader; bias: LayerNorm's only

 private:
  Kind kind_ = Kind::kRms;
  int width_ = 0;
  double eps_ = 0;
  bool present_ = false;
};

// A channel mixer over rows of `width`: GPT-2's down(gelu_tanh(up(x) + b)) + b, SwiGLU
// down(silu(gate(x)) · up(x)) or GeGLU down(gelu_tanh(gate(x)) · up(x)) (Gemma), hidden width `hidden`.
class MlpBlock {
 public:
  enum class Kind { kGelu, kSwiGlu, kGeGlu };
  MlpBlock() = default;
  MlpBlock(Kind kind, int width, int hidden) : kind_(kind), width_(width), hidden_(hidden) {}
  Kind kind() const { return kind_; }
  bool gated() const { return kind_ != Kind::kGelu; }
  // y (rows, width) from x; a and u: the buffers of the activations (resized here); keep_a / keep_u,
  // when given: the pre-activations (GPT-2: up(x) + b; else gate(x)) and up(x); y null: only those.
  // hooks: mlp.hook_pre, hook_pre_linear and hook_post of `layer` (a forward's).
  void forward(std::int64_t rows, const float* x, float* y, std::vector<float>& a, std::vector<float>& u,
               std::vector<float>* keep_a, std::vector<float>* keep_u, const HookRun* hooks, int layer) const;
  // dx (rows, width) = the input gradient for dy from the kept pre-activations a and u.
  void backward(std::int64_t rows, const std::vector<float>& a, const std::vector<float>& u, const float* dy,
                float* dx) const;
  WeightView gate, up, down;  // set by the loader: (I, E), (I, E), (E, I); GPT-2 has no gate
  Tensor up_b, down_b;        // GPT-2's biases

 private:
  Kind kind_ = Kind::kSwiGlu;
  int width_ = 0, hidden_ = 0;
};

// Which token mixer a layer has (PretrainedModel::Layer::kind): the block the forward, the decoding
// state and the backward dispatch on. A recurrent mixer (a short convolution, a delta rule) is a
// new value with its block class beside AttentionBlock and its state in LayerCache::state.
// kShortConv: LFM2's short convolution; kDeltaNet: Qwen3.5's gated DeltaNet (delta_net.h).
enum class MixerKind { kAttention = 0, kShortConv = 1, kDeltaNet = 2 };

// A token mixer: softmax attention (frozen MultiHeadAttention, its projections views into the stored
// matrices) with the layer's options (causal, its window, the family's scale and soft-cap).
struct AttentionBlock {
  MultiHeadAttention attn;
  MhaForwardOptions options;  // need_weights and hooks are set per call
};

// One layer's decoding state (PretrainedModel::create_caches): an attention layer's KV cache, or a
// recurrent mixer's state (its block says the layout). A step reads `state` and writes the state
// after its rows into `next_state`; the model swaps the two only when the whole step has succeeded,
// so a refused or failed step leaves every layer's state as it found it (as KvCache::length is
// restored for attention layers).
struct LayerCache {
  KvCache kv;
  std::vector<float> state, next_state;
};

// A pretrained model's decoding state: the tokens each sequence has seen (the position of the next
// row), the sizes the caches were made for, and one LayerCache per layer.
struct DecodeCaches {
  int length = 0, max_length = 0, batch = 0;
  std::vector<LayerCache> layers;
  bool empty() const { return layers.empty(); }
  void clear() { *this = DecodeCaches(); }
  std::uint64_t kv_bytes() const {  // the bytes of every attention layer's keys and values
    std::uint64_t n = 0;
    for (const LayerCache& c : layers) n += c.kv.bytes();
    return n;
  }
};

}  // namespace attn
