// MhaConfig::output_gate: the context z (B, Tq, H·d_v) × σ(W_g x) feature by feature, before the
// output projection (multi_head.h). The gate is a projection of the same input rows as q.
#include <cmath>
#include <cstdint>

#include "core/attention_engine.h"
#include "core/multi_head.h"
#include "core/multi_head_steps.h"
#include "kernels/parallel.h"

namespace attn {

void MultiHeadAttention::gate_context(int b, int tq, const float* x, float* z, Trace* trace,
                                      std::vector<float>* ungated) const {
  const int e = config_.embed_dim, width = config_.num_heads * value_head_dim_;
  const std::int64_t rows = static_cast<std::int64_t>(b) * tq;
  ScratchScope scratch;  // nested in the forward's (counted in its memory check)
  float* g = scratch.floats(static_cast<std::size_t>(rows) * width);
  view_gate_.linear(static_cast<int>(rows), x, e, nullptr, g, width);
  mha_steps::record_heads(trace, "gate", "T_q", "d_v", g, width, b, config_.num_heads, tq, value_head_dim_);
  if (ungated) ungated->assign(z, z + rows * width);  // the backward's (gate_backward)
  kernels::parallel_items(rows, 4 * width, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t i = r0 * width; i < r1 * width; ++i)
      z[i] = static_cast<float>(z[i] / (1.0 + std::exp(-static_cast<double>(g[i]))));
  });
  // "z": the gated rows out_proj reads (the trace's "context" is the attention's, before the gate)
  mha_steps::record_heads(trace, "z", "T_q", "d_v", z, width, b, config_.num_heads, tq, value_head_dim_);
}

// With c the ungated context and s = σ(W_g x): ∂/∂c = d · s, ∂/∂(W_g x) = d · c · s(1 − s), in double;
// W_g x recomputed from saved.x (the rows the gate read).
void MultiHeadAttention::gate_backward(const MhaSaved& saved, std::int64_t rows, float* d_context,
                                       float* d_x) const {
  const int e = config_.embed_dim, width = config_.num_heads * value_head_dim_;
  ScratchScope scratch;  // nested in the backward's
  float* g = scratch.floats(static_cast<std::size_t>(rows) * width);
  view_gate_.linear(static_cast<int>(rows), saved.x.data(), e, nullptr, g, width);
  kernels::parallel_items(rows, 6 * width, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t i = r0 * width; i < r1 * width; ++i) {
      const double s = 1.0 / (1.0 + std::exp(-static_cast<double>(g[i]))), d = d_context[i];
      g[i] = static_cast<float>(d * saved.ungated[i] * s * (1 - s));
      d_context[i] = static_cast<float>(d * s);
    }
  });
  view_gate_.linear_backward_input(static_cast<int>(rows), g, width, d_x, e, true);
}

}  // namespace attn
