// Small layers the transformer model is built from: GELU, the backward of nn.Linear, token embeddings
// and the cross-entropy loss. Raw-pointer forms over buffers the model owns and has validated; only
// cross_entropy checks its inputs (its targets come from the user).
#pragma once
#include <cstdint>

#include "core/status.h"

namespace attn {

// GELU, exact erf form as torch.nn.functional.gelu(approximate='none'): y = x·Φ(x) = 0.5·x·(1 + erf(x/√2)).
// y may alias x.
// cdf (n), when non-null, receives Φ(x) for gelu_backward_from_cdf (training keeps it: erf is most
// of GELU's cost).
void gelu_forward(std::int64_t n, const float* x, float* y, float* cdf = nullptr);
// dx = dy · (Φ(x) + x·φ(x)), φ the standard normal density. dx may alias dy.
void gelu_backward(std::int64_t n, const float* x, const float* dy, float* dx);
// The same from the Φ(x) gelu_forward saved, bit-identical to gelu_backward: one exp per element, no erf.
void gelu_backward_from_cdf(std::int64_t n, const float* x, const float* cdf, const float* dy, float* dx);

// Backward of nn.Linear y (rows, out) = x (rows, in)·Wᵀ + b with W stored (out, in), row strides ldx, lddy:
//   dx (rows, in), row stride lddx  = dy·W     (written, or added when accumulate_dx; skipped when dx null)
//   dw (out, in)  += dyᵀ·x                     (skipped when dw null)
//   db (out)      += Σ_rows dy                 (skipped when db null)
void linear_backward(int rows, int in, int out, const float* x, int ldx, const float* w, const float* dy,
                     int lddy, float* dx, int lddx, bool accumulate_dx, float* dw, float* db);

// Embedding lookup: out (n, d) = table[ids[i]] rows. ids are already validated by the caller.
void embedding_forward(std::int64_t n, const std::int32_t* ids, const float* table, int d, float* out);
// dtable (vocab, d) += scatter-add of dout (n, d) rows into rows ids[i].
void embedding_backward(std::int64_t n, const std::int32_t* ids, const float* dout, int d, float* dtable);

constexpr std::int32_t kIgnoreIndex = -100;  // PyTorch's ignore_index
// Mean cross-entropy over the rows whose target is not kIgnoreIndex, as
// torch.nn.functional.cross_entropy(logits, targets, ignore_index=-100) (reduction 'mean').
// logits (n, V); targets (n). loss = mean over scored rows of (logsumexp(row) − row[target]), accumulated in
// double, returned as float. dlogits (n, V), when non-null, is written: (softmax(row) − onehot)/count on
// scored rows, 0 on ignored rows. *scored (when non-null) = number of scored rows.
// Errors (checked before writing anything): a target outside [0, V) that is not −100 → kInvalidArgument
// naming the flat index and value; every target −100 → kInvalidArgument ("no scored position: every
// target is -100"); a non-finite logit → kNonFinite naming the flat index.
Status cross_entropy(std::int64_t n, int V, const float* logits, const std::int32_t* targets, float& loss,
                     float* dlogits, std::int64_t* scored = nullptr);

}  // namespace attn
