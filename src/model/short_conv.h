// LFM2's short-convolution token mixer (MixerKind::kShortConv): [B | C | X] = in_proj(x) (one
// (3E, E) matrix in its stored format), y = out_proj(C ⊙ conv(B ⊙ X)), conv a causal depthwise
// convolution over the last K rows (K = conv_L_cache; weight (E, K), w[c][K − 1] on the current
// row), no bias, no activation. A decoding step continues from the last K − 1 rows of B ⊙ X of each
// sequence (LayerCache::state, (B, K − 1, E), oldest first); a whole-sequence forward starts from
// zeros, which is the causal padding. Its token mixing is exact and banded:
//   y_pre[t, c] = C[t, c] · Σ_{s = t−K+1..t} w[c][K − 1 − (t − s)] · B[s, c] · X[s, c],
// and the map the forward returns as its "attention" is that coefficient averaged over channels:
//   A[t, s] = mean_c C[t, c] · w[c][K − 1 − (t − s)] · B[s, c]   (signed; 0 outside the band).
#pragma once
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "core/stored_weight.h"
#include "core/tensor.h"
#include "model/hooks.h"

namespace attn {

// The buffers of one call (kept by the model between decoding steps).
struct ShortConvWork {
  std::vector<float> bcx;   // in_proj's output (N, 3E): [B | C | X] per row
  std::vector<float> bx;    // B ⊙ X (N, E): the convolution's input
  std::vector<float> conv;  // conv(B ⊙ X) (N, E), then C ⊙ it
};

class ShortConvBlock {
 public:
  ShortConvBlock() = default;
  ShortConvBlock(int channels, int kernel) : channels_(channels), kernel_(kernel) {}
  int channels() const { return channels_; }
  int kernel() const { return kernel_; }
  // INVALID_ARGUMENT unless a config whose layers' mixers are `kinds` (MixerKind values) has a
  // kernel in [2, 64] where a layer is a short convolution.
  static Status check_config(const std::vector<int>& kinds, int kernel);
  // Floats of one batch's decoding state: (B, K − 1, E).
  std::size_t state_size(int batch) const {
    return static_cast<std::size_t>(batch) * (kernel_ - 1) * channels_;
  }
  // y (b·t, E) for in (b, t, E). state: the K − 1 rows before row 0 of each sequence, or null
  // (zeros); next_state, when given, is resized and gets the last K − 1 rows of B ⊙ X after these
  // rows (the state of the next step). map, when given: the (b, 1, t, t) channel-mean mixing above
  // (a whole-sequence call only). hooks: conv.hook_bcx, conv.hook_in, conv.hook_out, conv.hook_gated
  // of `layer`. Rows in parallel; each output value is computed by one thread in a fixed order, so
  // the bits do not depend on the thread count.
  void forward(int b, int t, const float* in, float* y, const float* state, std::vector<float>* next_state,
               ShortConvWork& work, Tensor* map, const HookRun* hooks, int layer) const;
  // dx (b·t, E) = ∂M/∂in for dy = ∂M/∂y of a whole-sequence forward (no state) whose `work` it kept
  // (bcx and bx): input gradients only, the weights frozen. Rows in parallel, each value by one thread
  // in a fixed order.
  void backward(int b, int t, const ShortConvWork& work, const float* dy, float* dx) const;
  WeightView in_proj, out_proj;  // (3E, E), (E, E): set by the loader
  std::vector<float> weight;     // (E, K) float32, w[c][k]

 private:
  void mixing_map(int b, int t, const ShortConvWork& work, Tensor& map) const;
  int channels_ = 0, kernel_ = 0;
};

}  // namespace attn
