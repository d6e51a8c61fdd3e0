// The gated DeltaNet token mixer (Qwen3.5's "linear attention" layers; MixerKind::kDeltaNet):
//   [q | k | v] = W_qkv x; z = W_z x; b = W_b x; a = W_a x           (the fused projection)
//   [q | k | v] ← silu(causal depthwise conv, kernel K, over time)    (no bias)
//   q, k ← per key head x / √(Σx² + eps) (L2), q × d_k^−1/2
//   β = σ(b), g = −exp(A_log) · softplus(a + dt_bias)                  (per value head)
//   o = the gated delta rule per value head (delta_rule.h), value head h reading key head
//       h / (H_v / H_k) (Hugging Face's grouped order) or h mod H_k (GGUF's "tiled" order:
//       llama.cpp's converter reorders the value heads so its broadcast can repeat the keys)
//   y = W_out (rms(o) · w · silu(z))                                   (per value head, plain w)
// The decoding state of one sequence (LayerCache::state): the conv's K − 1 last inputs (K − 1, C),
// C = 2·H_k·d_k + H_v·d_v, then S (H_v, d_k, d_v). Hook points (hooks.h): linear_attn.hook_q / hook_k
// (B, T, H_k, d_k), hook_v (B, T, H_v, d_v) after the conv and its SiLU (before the L2 norm),
// hook_beta / hook_g (B, T, H_v), hook_o (B, T, H_v, d_v) before the gated norm, hook_gate (B, T,
// H_v, d_v) the gate z as projected.
#pragma once
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "core/stored_weight.h"
#include "core/tensor.h"
#include "core/trace.h"
#include "model/hooks.h"

namespace attn {

struct DeltaNetShape {
  int hidden = 0, k_heads = 0, v_heads = 0, k_dim = 0, v_dim = 0, kernel = 0;
  double eps = 1e-6;   // the L2 norm's and the gated norm's (rms_norm_eps)
  bool tiled = false;  // GGUF's value-head order (above)
  bool a_log = true;   // `a` holds A_log (folders); false: −exp(A_log) already (GGUF's ssm_a)
  int channels() const { return 2 * k_heads * k_dim + v_heads * v_dim; }
  // Values of the block's weights.
  std::int64_t weight_values() const {
    const std::int64_t vd = static_cast<std::int64_t>(v_heads) * v_dim;
    return (channels() + 2 * vd + 2 * v_heads) * static_cast<std::int64_t>(hidden) +
           static_cast<std::int64_t>(channels()) * kernel + 2 * v_heads + v_dim;
  }
  // Floats of one sequence's decoding state.
  std::int64_t state_floats() const {
    return static_cast<std::int64_t>(kernel - 1) * channels() +
           static_cast<std::int64_t>(v_heads) * k_dim * v_dim;
  }
};

class DeltaNetBlock {
 public:
  DeltaNetBlock() = default;
  explicit DeltaNetBlock(const DeltaNetShape& s) : shape_(s) {}
  const DeltaNetShape& shape() const { return shape_; }
  // The key head value head h reads.
  int key_head(int h) const {
    return shape_.tiled ? h % shape_.k_heads : h / (shape_.v_heads / shape_.k_heads);
  }
  // y (B·T, E) from x (B·T, E). state: B × state_floats() to continue from, or null (a zero state:
  // position 0); next: where the state after these rows goes, or null. attention: (B, H_v, T, T) for
  // the effective attention (delta_rule.h; only from a zero state), or null. hooks: layer l's points.
  // trace, when given, gets one step "z" (B, H_v, T, d_v): each value head's gated-norm output, the
  // rows W_out reads (what attribution and patching per value head read).
  Status forward(int b, int t, const float* x, float* y, const float* state, float* next, float* attention,
                 const HookRun* hooks, int layer, Trace* trace = nullptr) const;
  // The backward of a whole-sequence forward from a zero state (delta_net_backward.cpp): dx (B·T, E)
  // = ∂M/∂x for dy = ∂M/∂y, the weights frozen, the forward recomputed from x. z_out, dz_out (B·T,
  // H_v·d_v), when given: each value head's gated-norm output (the rows W_out reads: the layer's z,
  // per value head) and its gradient. Memory: O(T·C) rows and, per head, its states at the chunks'
  // starts and one chunk's states (delta_rule_backward.cpp).
  Status backward(int b, int t, const float* x, const float* dy, float* dx, std::vector<float>* z_out,
                  std::vector<float>* dz_out) const;
  WeightView qkv, z, b_proj, a_proj;  // (C, E), (H_v·d_v, E), (H_v, E), (H_v, E)
  WeightView out;                     // (E, H_v·d_v)
  Tensor conv;                        // (C, K): channel c's taps, the oldest input first
  Tensor decay, dt_bias;              // (H_v): A_log (or −exp(A_log)), dt_bias
  Tensor norm;                        // (d_v): the gated norm's weight

 private:
  DeltaNetShape shape_;
  // The conv and its SiLU over (B, T, C) `mixed` in place, from the state's K − 1 inputs (or zeros);
  // the last K − 1 inputs into next.
  void convolve(int b, int t, std::vector<float>& mixed, const float* state, float* next) const;
  void rule(int b, int t, const std::vector<float>& q, const std::vector<float>& k,
            const std::vector<float>& v, const std::vector<float>& beta, const std::vector<float>& g,
            const float* state, float* next, float* attention, std::vector<float>& o,
            float* final_state = nullptr) const;
};

}  // namespace attn
