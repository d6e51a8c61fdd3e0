// One value head of the gated delta rule (Qwen3.5's linear attention; DeltaNetBlock, delta_net.h),
// on rows already projected, convolved and normalized:
//   S_t = e^{g_t} S_{t−1};  S_t = S_t + β_t k_t (v_t − S_tᵀ k_t)ᵀ;  o_t = S_tᵀ q_t
// S (d_k, d_v), q already × d_k^−1/2. Three ways to run it, all in double inside:
//   delta_rule_recurrent  the recurrence itself, one row at a time (a decoding step)
//   delta_rule_chunked    the chunked (WY) form: chunks of kDeltaChunk rows, each a triangular solve
//                         for the written values u_i = β_i (v_i − e^{G_i} S_0ᵀ k_i − Σ_{j<i} e^{G_i−G_j}
//                         (k_iᵀk_j) u_j), G the in-chunk cumulative decay, so that
//                         o_i = e^{G_i} S_0ᵀ q_i + Σ_{j≤i} e^{G_i−G_j} (q_iᵀk_j) u_j (the prefill)
//   delta_rule_attention  the exact effective attention from a zero state: o_t = Σ_s A[t,s] v_s with
//                         A[t,s] = β_s k_sᵀ M_{s+1} ⋯ M_t q_t, M_r = e^{g_r}(I − β_r k_r k_rᵀ)
//                         (symmetric), in O(T²·d_k) by walking each row back from s = t.
#pragma once
#include <cstdint>
#include <vector>

namespace attn {

constexpr int kDeltaChunk = 64;  // the rows of one chunk (transformers' and llama.cpp's size)

// One head's rows: q and k (T, d_k) with row stride qk_stride, v (T, d_v) with v_stride, β and g (T)
// with gate_stride.
struct DeltaHeadView {
  int t = 0, dk = 0, dv = 0;
  const float *q = nullptr, *k = nullptr, *v = nullptr, *beta = nullptr, *g = nullptr;
  std::int64_t qk_stride = 0, v_stride = 0, gate_stride = 0;
};

// state (d_k, d_v) row-major, updated in place; o (T, d_v) with row stride o_stride.
void delta_rule_recurrent(const DeltaHeadView& h, double* state, float* o, std::int64_t o_stride);
// The same result within rounding; `chunk` rows per chunk (tests pass other sizes).
void delta_rule_chunked(const DeltaHeadView& h, double* state, float* o, std::int64_t o_stride,
                        int chunk = kDeltaChunk);
// a (T, T) row-major: A[t, s] for s ≤ t, 0 above the diagonal (signed; rows need not sum to 1).
void delta_rule_attention(const DeltaHeadView& h, float* a);

// The backward (delta_rule_backward.cpp), from a zero state: the gradients of one head's inputs, each
// written (not added), rows contiguous: dq, dk (T, d_k), dv (T, d_v), dbeta, dg (T).
struct DeltaHeadGrads {
  double *dq = nullptr, *dk = nullptr, *dv = nullptr, *dbeta = nullptr, *dg = nullptr;
};
// o as delta_rule_chunked gives it from a zero state (the same bits as the block's forward), keeping
// the state at each chunk's start in starts (chunks · d_k · d_v), all the backward keeps.
void delta_rule_forward_keeping(const DeltaHeadView& h, float* o, std::int64_t o_stride,
                                std::vector<double>& starts, int chunk = kDeltaChunk);
// d_o (T, d_v) with row stride do_stride: ∂M/∂o; starts from delta_rule_forward_keeping (same chunk).
void delta_rule_backward(const DeltaHeadView& h, const std::vector<double>& starts, const float* d_o,
                         std::int64_t do_stride, const DeltaHeadGrads& g, int chunk = kDeltaChunk);

}  // namespace attn
