#include "model/layers.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <string>

#include "kernels/kernels.h"
#include "kernels/parallel.h"

namespace attn {

namespace {

// Checks every target and logit; counts the scored rows. Nothing is written on failure.
Status check_cross_entropy_inputs(std::int64_t n, int V, const float* logits, const std::int32_t* targets,
                                  std::int64_t& count) {
  // n = 0 falls through to "no scored position" below, as PyTorch's mean over nothing is NaN too.
  if (n < 0 || V < 1) {
    return Status::Error(StatusCode::kInvalidArgument,
                         "cross_entropy needs n >= 0 rows and V >= 1 classes, got n = " + std::to_string(n) +
                             ", V = " + std::to_string(V));
  }
  count = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int32_t t = targets[i];
    if (t == kIgnoreIndex) continue;
    if (t < 0 || t >= V) {
      return Status::Error(StatusCode::kInvalidArgument, "cross_entropy target at flat index " +
                                                             std::to_string(i) + " is " + std::to_string(t) +
                                                             ", outside [0, " + std::to_string(V) +
                                                             ") and not the ignore index -100");
    }
    ++count;
  }
  if (count == 0) {
    return Status::Error(
        StatusCode::kInvalidArgument,
        "cross_entropy has no scored position: every target is -100 (the mean would be 0/0)");
  }
  const std::int64_t total = n * V;
  for (std::int64_t i = 0; i < total; ++i) {
    if (!std::isfinite(logits[i])) {
      return Status::Error(StatusCode::kNonFinite, std::string("cross_entropy logits contain ") +
                                                       (std::isnan(logits[i]) ? "NaN" : "Inf") +
                                                       " at flat index " + std::to_string(i));
    }
  }
  return Status::Ok();
}

// log Σ_j exp(row_j) in double, shifted by the row's max so no exp overflows.
double log_sum_exp(int V, const float* row) {
  float max = row[0];
  for (int j = 1; j < V; ++j) max = row[j] > max ? row[j] : max;
  double sum = 0.0;
  for (int j = 0; j < V; ++j) sum += std::exp(static_cast<double>(row[j]) - max);
  return max + std::log(sum);
}

}  // namespace

// The GELU kernels take an int count: long rows go through them in chunks. Each element's value
// depends on that element alone (the SIMD kernels compute a partial vector lane by lane the same
// way), so the parallel split (docs/threads.md) does not change a bit.
constexpr std::int64_t kGeluChunk = std::int64_t{1} << 20;
constexpr std::int64_t kGeluWork = 24;  // ~multiply-adds per element (Φ's exp polynomial)

void gelu_forward(std::int64_t n, const float* x, float* y, float* cdf) {
  kernels::parallel_items(n, kGeluWork, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; i += kGeluChunk) {
      const int m = static_cast<int>(std::min(kGeluChunk, end - i));
      kernels::gelu_row(m, x + i, y + i, cdf ? cdf + i : nullptr);
    }
  });
}

void gelu_backward(std::int64_t n, const float* x, const float* dy, float* dx) {
  kernels::parallel_items(n, 2 * kGeluWork, [&](std::int64_t begin, std::int64_t end) {
    constexpr int kBlock = 256;  // Φ(x) of one block at a time, on this thread's stack
    float y[kBlock], cdf[kBlock];
    for (std::int64_t i = begin; i < end; i += kBlock) {
      const int m = static_cast<int>(std::min<std::int64_t>(kBlock, end - i));
      kernels::gelu_row(m, x + i, y, cdf);
      kernels::gelu_backward_row(m, x + i, cdf, dy + i, dx + i);
    }
  });
}

void gelu_backward_from_cdf(std::int64_t n, const float* x, const float* cdf, const float* dy, float* dx) {
  kernels::parallel_items(n, kGeluWork, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; i += kGeluChunk) {
      const int m = static_cast<int>(std::min(kGeluChunk, end - i));
      kernels::gelu_backward_row(m, x + i, cdf + i, dy + i, dx + i);
    }
  });
}

void linear_backward(int rows, int in, int out, const float* x, int ldx, const float* w, const float* dy,
                     int lddy, float* dx, int lddx, bool accumulate_dx, float* dw, float* db) {
  if (rows < 1 || in < 1 || out < 1) return;  // nothing to write or add
  // 1. dx (rows, in) = dy (rows, out) · W (out, in).
  if (dx) kernels::gemm_nn(rows, in, out, dy, lddy, w, in, dx, lddx, accumulate_dx);
  // 2. dw (out, in) += dyᵀ (out, rows) · x (rows, in): gemm_tn reads dy (rows, out) as stored.
  if (dw) kernels::gemm_tn(out, in, rows, dy, lddy, x, ldx, dw, in, true);
  // 3. db (out) += column sums of dy, each column summed over the rows in order (split over columns:
  // the same additions in the same order at any thread count).
  if (db) {
    kernels::parallel_items(out, rows, [&](std::int64_t o0, std::int64_t o1) {
      for (int r = 0; r < rows; ++r) {
        const float* dy_row = dy + static_cast<std::ptrdiff_t>(r) * lddy;  // dy_row: (out)
        for (std::int64_t o = o0; o < o1; ++o) db[o] += dy_row[o];
      }
    });
  }
}

void embedding_forward(std::int64_t n, const std::int32_t* ids, const float* table, int d, float* out) {
  const std::size_t row_bytes = static_cast<std::size_t>(d) * sizeof(float);
  for (std::int64_t i = 0; i < n; ++i) {
    std::memcpy(out + i * d, table + static_cast<std::int64_t>(ids[i]) * d, row_bytes);
  }
}

void embedding_backward(std::int64_t n, const std::int32_t* ids, const float* dout, int d, float* dtable) {
  // Sequential over i, so repeated ids add up in order (deterministic).
  for (std::int64_t i = 0; i < n; ++i) {
    float* dst = dtable + static_cast<std::int64_t>(ids[i]) * d;  // dst: (d) row ids[i]
    const float* src = dout + i * d;                              // src: (d) row i
    for (int j = 0; j < d; ++j) dst[j] += src[j];
  }
}

Status cross_entropy(std::int64_t n, int V, const float* logits, const std::int32_t* targets, float& loss,
                     float* dlogits, std::int64_t* scored) {
  std::int64_t count = 0;
  ATTN_RETURN_IF_ERROR(check_cross_entropy_inputs(n, V, logits, targets, count));
  const double inv_count = 1.0 / static_cast<double>(count);
  double total = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    const float* row = logits + i * V;                  // row: (V)
    float* grad = dlogits ? dlogits + i * V : nullptr;  // grad: (V) or null
    const std::int32_t t = targets[i];
    if (t == kIgnoreIndex) {
      if (grad) std::memset(grad, 0, static_cast<std::size_t>(V) * sizeof(float));
      continue;
    }
    const double lse = log_sum_exp(V, row);
    total += lse - row[t];
    if (!grad) continue;
    // d(loss)/d(row_j) = (softmax_j − [j = t]) / count, with softmax_j = exp(row_j − lse).
    for (int j = 0; j < V; ++j) {
      const double p = std::exp(static_cast<double>(row[j]) - lse);
      grad[j] = static_cast<float>((p - (j == t ? 1.0 : 0.0)) * inv_count);
    }
  }
  loss = static_cast<float>(total * inv_count);
  if (scored) *scored = count;
  return Status::Ok();
}

}  // namespace attn
