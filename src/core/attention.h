// Scaled dot-product attention:  Attention(Q, K, V) = softmax(Q·Kᵀ · scale + mask) · V
//
// Shapes (row-major float32):
//   q (..., Tq, dk)   k (..., Tk, dk)   v (..., Tk, dv)      leading axes ("..."), if any, equal
//   output  (..., Tq, dv)
//   weights (..., Tq, Tk)   the softmax weights, before dropout
//
// Mask convention: a boolean mask is true (1) where a query MAY attend to a key, as
// torch.nn.functional.scaled_dot_product_attention. (nn.MultiheadAttention uses the opposite for its
// bool masks; multi_head.h converts nothing, callers do — see README.)
// Masked positions hold -inf. A fully masked row yields zero weights and a zero output row
// (PyTorch yields NaN there; the -1e9 fill of many tutorials silently attends uniformly).
#pragma once
#include <cstdint>
#include <optional>

#include "core/mask_plan.h"
#include "core/tensor.h"
#include "core/trace.h"

namespace attn {

struct DropoutOptions {
  float p = 0.0f;          // probability of zeroing a weight; 0 = off. Kept weights scale by 1/(1-p).
  std::uint64_t seed = 0;  // the same seed gives the same dropout pattern on every platform
};

struct SdpaOptions {
  // Multiplier applied to Q·Kᵀ. Unset = 1/sqrt(dk). A temperature t is scale = 1/t.
  std::optional<float> scale;
  // Boolean mask, broadcastable (numpy rules, trailing-aligned) to (..., Tq, Tk). 1 = may attend.
  const BoolTensor* mask = nullptr;
  // Additive float mask, broadcastable to (..., Tq, Tk); may contain -inf.
  const Tensor* additive_mask = nullptr;
  // Causal: query i may attend key j iff j <= i (top-left aligned also when Tq != Tk, like
  // PyTorch's is_causal). Combined with `mask` and `additive_mask` when several are given.
  bool causal = false;
  // Positions (query row r at i = offset + r, key c at j = c): bottom-right causal alignment
  // (offset Tk − Tq), a sliding window (0 <= i − j < w causal, |i − j| < w not) and ALiBi slopes
  // (bias −m_h·(i − j) causal, −m_h·|i − j| not, added to the scaled scores; one slope per head of
  // q's axis −3). See mask_plan.h.
  PositionOptions positions;
  // Grouped-query attention: k and v (..., H_kv, Tk, d) with H_kv dividing q's H (axis −3); query
  // head h uses key/value head h / (H / H_kv). Without it, differing head counts are SHAPE_MISMATCH.
  bool enable_gqa = false;
  DropoutOptions dropout;
  // When false the weights are not returned (result.weights stays empty) and, without a trace or
  // dropout, the memory-light tiled path (online softmax, O(Tq·dv) memory) may be used.
  bool need_weights = true;
};

struct SdpaResult {
  Tensor output;   // (..., Tq, dv)
  Tensor weights;  // (..., Tq, Tk), empty when !need_weights
};

// Records "scores", "scaled", "masked", "weights", ["dropped"], "context" into `trace` when given.
Status scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const SdpaOptions& options, SdpaResult& result, Trace* trace = nullptr);

}  // namespace attn
