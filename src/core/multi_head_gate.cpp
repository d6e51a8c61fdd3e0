// MhaConfig::output_gate: the context z (B, Tq, H·d_v) × σ(W_g x) feature by feature, before the
// output projection (multi_head.h). The gate is a projection of the same input rows as q.
#include <cmath>
#include <cstdint>

#include "core/attention_engine.h"
#include "core/multi_head.h"
#include "core/multi_head_steps.h"
#include "kernels/parallel.h"

namespace attn {

void MultiHeadAttention::gate_context(int b, int tq, const float* x, float* z, Trace* trace) const {
  const int e = config_.embed_dim, width = config_.num_heads * value_head_dim_;
  const std::int64_t rows = static_cast<std::int64_t>(b) * tq;
  ScratchScope scratch;  // nested in the forward's (counted in its memory check)
  float* g = scratch.floats(static_cast<std::size_t>(rows) * width);
  view_gate_.linear(static_cast<int>(rows), x, e, nullptr, g, width);
  mha_steps::record_heads(trace, "gate", "T_q", "d_v", g, width, b, config_.num_heads, tq, value_head_dim_);
  kernels::parallel_items(rows, 4 * width, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t i = r0 * width; i < r1 * width; ++i)
      z[i] = static_cast<float>(z[i] / (1.0 + std::exp(-static_cast<double>(g[i]))));
  });
}

}  // namespace attn
