// scaled_dot_product_attention_backward and the engine's backward (attention_backward.h): numbered
// stages per block of query rows, every buffer with its shape.
#include "core/attention_backward.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "core/memory_limit.h"
#include "core/softmax_backward.h"
#include "kernels/kernels.h"
#include "kernels/parallel.h"

namespace attn {

namespace {

// Query rows per block: a block's four (rows, Tk) buffers stay around 1 MB.
constexpr std::int64_t kBackwardBlockFloats = std::int64_t{1} << 16;

int backward_block_rows(int tq, int tk) {
  const std::int64_t rows = std::max<std::int64_t>(8, kBackwardBlockFloats / std::max(tk, 1));
  return static_cast<int>(std::min<std::int64_t>(rows, tq));
}

// Zeroes `rows` rows of width `width` at row stride ld.
void zero_rows(float* base, int rows, int width, int ld) {
  for (int r = 0; r < rows; ++r)
    std::memset(base + static_cast<std::int64_t>(r) * ld, 0, static_cast<std::size_t>(width) * sizeof(float));
}

struct BlockBuffers {
  float* probs;           // (rows, Tk) P, recomputed
  float* dropped;         // (rows, Tk) P̃ with dropout, else null
  float* dprobs;          // (rows, Tk) dP̃ → dP → dS
  float* cap_slope;       // (rows, Tk) 1 − tanh²(scale·s / c) with a soft-cap, else null
  std::uint8_t* allowed;  // (Tk) one mask row
  float* additive;        // (Tk)
};

// 0. P rows [i0, i0 + rows) of slice s, exactly as the forward computes them.
void recompute_probs(const AttentionProblem& p, std::int64_t s, int i0, int rows, const BlockBuffers& b) {
  const int tk = p.masks.tk;
  const int ldq = p.row_stride(p.ldq, p.dk), ldk = p.k_stride();
  kernels::gemm_nt(rows, tk, p.dk, p.q_slice(s) + static_cast<std::int64_t>(i0) * ldq, ldq, p.k_slice(s), ldk,
                   b.probs, tk, false);  // scores (rows, Tk)
  const std::uint8_t* allowed = p.masks.has_bool() ? b.allowed : nullptr;
  const float* additive = p.masks.has_additive() ? b.additive : nullptr;
  for (int r = 0; r < rows; ++r) {
    if (allowed || additive) p.masks.fill_row(s, i0 + r, 0, tk, b.allowed, b.additive);
    float* row = b.probs + static_cast<std::int64_t>(r) * tk;
    if (p.softcap > 0) {  // as the engine's forward: scale, cap, mask, softmax
      float* slope = b.cap_slope + static_cast<std::int64_t>(r) * tk;
      softcap_row(tk, row, p.scale, p.softcap);
      for (int j = 0; j < tk; ++j) {
        const double th = static_cast<double>(row[j]) / p.softcap;  // tanh(scale·s / c)
        slope[j] = static_cast<float>(1.0 - th * th);
      }
      kernels::mask_row(tk, row, additive, allowed, row);
      kernels::softmax_row(tk, row, row);
      continue;
    }
    kernels::scale_mask_softmax_row(tk, row, p.scale, additive, allowed, row);
  }
}

// ∂/∂P rows [i0, i0 + rows) of slice s copied out (dense (slices, Tq, Tk)).
void copy_dweights(const AttentionProblem& p, std::int64_t s, int i0, int rows, const float* dprobs,
                   float* dweights) {
  const std::int64_t tk = p.masks.tk;
  std::memcpy(dweights + (s * p.masks.tq + i0) * tk, dprobs,
              static_cast<std::size_t>(rows * tk) * sizeof(float));
}

void backward_block(const AttentionProblem& p, std::int64_t s, int i0, int rows, const float* d_context,
                    int ldo, const AttentionGradTargets& g, const BlockBuffers& b) {
  const int tk = p.masks.tk, dk = p.dk, dv = p.dv;
  const int ldq = p.row_stride(p.ldq, dk), ldk = p.k_stride(), ldv = p.v_stride();
  const std::int64_t outer = s / p.heads, head = s % p.heads;
  const float* q_rows = p.q_slice(s) + static_cast<std::int64_t>(i0) * ldq;  // (rows, dk)
  const float* d_out = d_context + (outer * p.masks.tq + i0) * static_cast<std::int64_t>(ldo) + head * dv;
  float* dq_rows = g.dq + (outer * p.masks.tq + i0) * static_cast<std::int64_t>(g.lddq) + head * dk;
  float* dk_slice = g.dk + p.kv_offset(s, dk, g.lddk, tk);  // (Tk, dk), shared by the group's query heads
  float* dv_slice = g.dv + p.kv_offset(s, dv, g.lddv, tk);  // (Tk, dv)
  recompute_probs(p, s, i0, rows, b);
  const bool dropout = p.dropout.p > 0.0f;
  if (dropout) apply_dropout(p, s, i0, rows, b.probs, b.dropped);
  // 1. dV (Tk, dv) += P̃ᵀ (Tk, rows) · dO (rows, dv);  dP̃ (rows, Tk) = dO · Vᵀ
  kernels::gemm_tn(tk, dv, rows, dropout ? b.dropped : b.probs, tk, d_out, ldo, dv_slice, g.lddv, true);
  kernels::gemm_nt(rows, tk, dv, d_out, ldo, p.v_slice(s), ldv, b.dprobs, tk, false);
  // dP = dP̃ through the forward's dropout: apply_dropout's own draw (in place), so exactly its mask.
  if (dropout) apply_dropout(p, s, i0, rows, b.dprobs, b.dprobs);
  if (g.dweights) copy_dweights(p, s, i0, rows, b.dprobs, g.dweights);
  // 2. dS (rows, Tk) = softmax backward of each row, [through the soft-cap,] times the scale the
  //    scores were multiplied by
  for (int r = 0; r < rows; ++r) {
    const std::int64_t at = static_cast<std::int64_t>(r) * tk;
    softmax_backward_row(tk, b.probs + at, b.dprobs + at, b.dprobs + at);
  }
  if (b.cap_slope)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(rows) * tk; ++i) b.dprobs[i] *= b.cap_slope[i];
  kernels::scale_vec(rows * tk, b.dprobs, p.scale, b.dprobs);
  // 3. dQ rows (rows, dk) = dS · K (Tk, dk);  dK (Tk, dk) += dSᵀ (Tk, rows) · Q rows (rows, dk)
  kernels::gemm_nn(rows, dk, tk, b.dprobs, tk, p.k_slice(s), ldk, dq_rows, g.lddq, false);
  kernels::gemm_tn(tk, dk, rows, b.dprobs, tk, q_rows, ldq, dk_slice, g.lddk, true);
}

}  // namespace

std::uint64_t attention_backward_scratch_elements(const AttentionProblem& p) {
  const std::uint64_t block = backward_block_rows(p.masks.tq, p.masks.tk);
  const std::uint64_t parts = static_cast<std::uint64_t>(kernels::thread_count());  // each has its buffers
  return parts *
         (4 * block * static_cast<std::uint64_t>(p.masks.tk) + 2 * static_cast<std::uint64_t>(p.masks.tk));
}

void run_attention_backward(const AttentionProblem& p, const float* d_context, int ldo,
                            const AttentionGradTargets& targets) {
  AttentionGradTargets g = targets;
  g.lddq = g.lddq > 0 ? g.lddq : p.heads * p.dk;
  g.lddk = g.lddk > 0 ? g.lddk : p.kv_heads() * p.dk;
  g.lddv = g.lddv > 0 ? g.lddv : p.kv_heads() * p.dv;
  ldo = ldo > 0 ? ldo : p.heads * p.dv;
  const int tq = p.masks.tq, tk = p.masks.tk, block = backward_block_rows(tq, tk);
  ScratchScope scratch;
  const std::size_t block_floats = static_cast<std::size_t>(block) * tk;
  // dK and dV first zeroed for every key/value slice: the query heads of a group add into the same one.
  for (std::int64_t s = 0; s < p.masks.slices(); ++s) {
    zero_rows(g.dk + p.kv_offset(s, p.dk, g.lddk, tk), tk, p.dk, g.lddk);
    zero_rows(g.dv + p.kv_offset(s, p.dv, g.lddv, tk), tk, p.dv, g.lddv);
  }
  // Units: one key/value slice = the run of kv_group consecutive query slices that read it (and add
  // into its dK, dV), all their blocks in order — the serial loop's order for that slice's sums —
  // split over the thread pool (kernels/parallel.h): the same bits at any thread count. Each part's
  // buffers are taken here, on the calling thread.
  const int group = p.kv_group;
  const std::int64_t units = p.masks.slices() / group;
  const std::int64_t unit_work = static_cast<std::int64_t>(group) * tq * tk * 2 * (p.dk + p.dv);
  const int parts = kernels::parallel_parts(units, kernels::min_items_for(unit_work));
  std::array<BlockBuffers, kernels::kMaxThreads> part_buffers;  // [0, parts) used
  for (int t = 0; t < parts; ++t) {
    part_buffers[static_cast<std::size_t>(t)] =
        BlockBuffers{scratch.floats(block_floats),
                     p.dropout.p > 0.0f ? scratch.floats(block_floats) : nullptr,
                     scratch.floats(block_floats),
                     p.softcap > 0 ? scratch.floats(block_floats) : nullptr,
                     scratch.bytes(static_cast<std::size_t>(tk)),
                     scratch.floats(static_cast<std::size_t>(tk))};
  }
  kernels::parallel_for_parts(units, parts, [&](int part, std::int64_t u0, std::int64_t u1) {
    const BlockBuffers& b = part_buffers[static_cast<std::size_t>(part)];
    for (std::int64_t s = u0 * group; s < u1 * group; ++s) {
      for (int i0 = 0; i0 < tq; i0 += block) {
        backward_block(p, s, i0, std::min(block, tq - i0), d_context, ldo, g, b);
      }
    }
  });
}

Status scaled_dot_product_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v,
                                             const Tensor& grad_output, const SdpaOptions& options,
                                             SdpaGrads& grads) {
  AttentionProblem p;
  ATTN_RETURN_IF_ERROR(make_sdpa_problem(q, k, v, options, p));
  ATTN_RETURN_IF_ERROR(check_well_formed(grad_output, "gradOutput"));
  Shape want = p.masks.lead;  // gradOutput: (..., Tq, dv), the output's shape
  want.push_back(p.masks.tq);
  want.push_back(p.dv);
  if (grad_output.shape != want) {
    return Status::Error(StatusCode::kShapeMismatch, "gradOutput must have the output's shape " +
                                                         shape_to_string(want) + ", got " +
                                                         shape_to_string(grad_output.shape));
  }
  ATTN_RETURN_IF_ERROR(check_finite(grad_output, "gradOutput"));
  const std::uint64_t outputs = static_cast<std::uint64_t>(q.numel() + k.numel() + v.numel());
  ATTN_RETURN_IF_ERROR(
      check_allocation(outputs + attention_backward_scratch_elements(p), "attention backward"));
  grads.q = Tensor(q.shape, std::vector<float>(q.data.size()));
  grads.k = Tensor(k.shape, std::vector<float>(k.data.size()));
  grads.v = Tensor(v.shape, std::vector<float>(v.data.size()));
  AttentionGradTargets g;
  g.dq = grads.q.data.data();
  g.dk = grads.k.data.data();
  g.dv = grads.v.data.data();
  run_attention_backward(p, grad_output.data.data(), 0, g);
  // Finite inputs: a non-finite gradient is an overflow (nothing is returned then).
  for (const Tensor* t : {&grads.q, &grads.k, &grads.v}) {
    ATTN_RETURN_IF_ERROR(check_computed(t->data.data(), t->data.size(), "attention backward: the gradients"));
  }
  return Status::Ok();
}

}  // namespace attn
