#include "core/attention_engine.h"

#include <cstdint>

#include "core/rng.h"
#include "kernels/kernels.h"

namespace attn {

bool uses_tiled_path(const AttentionProblem& p, bool need_weights, bool tracing) {
  return !need_weights && !tracing && !(p.dropout.p > 0.0f);
}

std::uint64_t attention_scratch_elements(const AttentionProblem& p, bool need_weights,
                                         bool tracing) {
  const std::uint64_t s = static_cast<std::uint64_t>(p.masks.slices());
  const std::uint64_t scores = static_cast<std::uint64_t>(p.masks.tq) * p.masks.tk;  // one slice
  std::uint64_t n = s * p.masks.tq * static_cast<std::uint64_t>(p.dv);               // context
  if (uses_tiled_path(p, need_weights, tracing)) return n + 64ull * (p.dv + 2 * 256);
  n += 3 * scores;                                   // per-slice scratch: scores, weights, dropped
  if (need_weights || tracing) n += s * scores;      // weights of every slice
  if (tracing) n += 4 * s * scores + n;              // scores, scaled, masked, dropped + copies
  return n;
}

namespace {

struct Steps {  // per-step buffers of one slice: each (Tq, Tk)
  float* scores;
  float* scaled;   // only when tracing
  float* masked;   // only when tracing
  float* weights;
  float* dropped;  // only with dropout
};

// 2.–4. Scale, mask and softmax every row of one slice. The traced variant calls the three
// kernels the fused one is defined as, so both produce the same bits.
void softmax_rows(const AttentionProblem& p, std::int64_t slice, const Steps& st, bool tracing,
                  std::vector<std::uint8_t>& allowed, std::vector<float>& additive) {
  const int tq = p.masks.tq, tk = p.masks.tk;
  const std::uint8_t* allowed_ptr = p.masks.has_bool() ? allowed.data() : nullptr;
  const float* additive_ptr = p.masks.has_additive() ? additive.data() : nullptr;
  for (int i = 0; i < tq; ++i) {
    p.masks.fill_row(slice, i, 0, tk, allowed.data(), additive.data());
    const std::int64_t row = static_cast<std::int64_t>(i) * tk;
    if (tracing) {
      kernels::scale_vec(tk, st.scores + row, p.scale, st.scaled + row);
      kernels::mask_row(tk, st.scaled + row, additive_ptr, allowed_ptr, st.masked + row);
      kernels::softmax_row(tk, st.masked + row, st.weights + row);
    } else {
      kernels::scale_mask_softmax_row(tk, st.scores + row, p.scale, additive_ptr, allowed_ptr,
                                      st.weights + row);
    }
  }
}

// 5. Inverted dropout with a counter-based RNG: element (slice, i, j) is dropped iff
// uniform01(seed, flat index) < p, so the pattern does not depend on the path or the platform.
void apply_dropout(const AttentionProblem& p, std::int64_t slice, const float* weights,
                   float* dropped) {
  const std::int64_t n = static_cast<std::int64_t>(p.masks.tq) * p.masks.tk;
  const float keep_scale = 1.0f / (1.0f - p.dropout.p);
  for (std::int64_t e = 0; e < n; ++e) {
    const std::uint64_t counter = static_cast<std::uint64_t>(slice * n + e);
    dropped[e] = uniform01(p.dropout.seed, counter) < p.dropout.p ? 0.0f : weights[e] * keep_scale;
  }
}

void record_scores_step(Trace* trace, const AttentionProblem& p, const char* name,
                        std::vector<float>&& data) {
  std::vector<std::string> axes = p.lead_axes;
  axes.push_back("T_q");
  axes.push_back("T_k");
  Shape shape = p.masks.lead;
  shape.push_back(p.masks.tq);
  shape.push_back(p.masks.tk);
  trace->record(name, std::move(axes), Tensor(std::move(shape), std::move(data)));
}

}  // namespace

void run_attention(const AttentionProblem& p, bool need_weights, AttentionOutputs& out,
                   Trace* trace) {
  const bool tracing = trace != nullptr;
  const std::int64_t slices = p.masks.slices();
  const int tq = p.masks.tq, tk = p.masks.tk;
  const std::int64_t per_slice = static_cast<std::int64_t>(tq) * tk;
  out.context.assign(static_cast<size_t>(slices * tq * p.dv), 0.0f);  // context: (S, Tq, dv)
  if (uses_tiled_path(p, need_weights, tracing)) {
    run_attention_tiled(p, out.context.data());
    return;
  }
  const bool dropout = p.dropout.p > 0.0f;
  const bool keep_all = need_weights || tracing;
  const size_t all = static_cast<size_t>(slices * per_slice);
  // Whole-call buffers (S, Tq, Tk) when they must outlive a slice; else one slice reused.
  std::vector<float> scores(tracing ? all : per_slice), scaled(tracing ? all : 0),
      masked(tracing ? all : 0), weights(keep_all ? all : per_slice),
      dropped(dropout ? (tracing ? all : per_slice) : 0);
  std::vector<std::uint8_t> allowed(tk);
  std::vector<float> additive(tk);
  for (std::int64_t s = 0; s < slices; ++s) {
    const std::int64_t at = tracing ? s * per_slice : 0;
    const Steps st{scores.data() + at, tracing ? scaled.data() + at : nullptr,
                   tracing ? masked.data() + at : nullptr,
                   weights.data() + (keep_all ? s * per_slice : 0),
                   dropout ? dropped.data() + at : nullptr};
    // 1. scores (Tq, Tk) = q_s (Tq, dk) · k_sᵀ
    kernels::gemm_nt(tq, tk, p.dk, p.q + s * tq * p.dk, p.dk, p.k + s * tk * p.dk, p.dk,
                     st.scores, tk, false);
    // 2.–4. scale, mask, softmax
    softmax_rows(p, s, st, tracing, allowed, additive);
    // 5. dropout on the weights
    if (dropout) apply_dropout(p, s, st.weights, st.dropped);
    // 6. context (Tq, dv) = P (Tq, Tk) · v_s (Tk, dv)
    kernels::gemm_nn(tq, p.dv, tk, dropout ? st.dropped : st.weights, tk, p.v + s * tk * p.dv,
                     p.dv, out.context.data() + s * tq * p.dv, p.dv, false);
  }
  if (tracing) {
    record_scores_step(trace, p, "scores", std::move(scores));
    record_scores_step(trace, p, "scaled", std::move(scaled));
    record_scores_step(trace, p, "masked", std::move(masked));
    record_scores_step(trace, p, "weights", std::vector<float>(weights));
    if (dropout) record_scores_step(trace, p, "dropped", std::move(dropped));
    std::vector<std::string> axes = p.lead_axes;
    axes.push_back("T_q");
    axes.push_back("d_v");
    Shape shape = p.masks.lead;
    shape.push_back(tq);
    shape.push_back(p.dv);
    trace->record("context", std::move(axes), Tensor(std::move(shape), out.context));
  }
  if (need_weights) out.weights = std::move(weights);
}

}  // namespace attn
