// Attention over a float16 KV cache (AttentionProblem::k16, v16): the keys and values are widened
// to float32 one key tile at a time, in or just before the product that reads them, so the cache stays
// half the bytes and no float32 copy of it (nor of one head's slice) is made. Widening is exact:
// the only rounding of the float16 cache is narrow_f16's when rows are appended.
#include <algorithm>

#include "core/attention_engine.h"
#include "kernels/kernels.h"

namespace attn {

void widen_rows(int rows, int d, const std::uint16_t* src, int ld, float* dst) {
  for (int r = 0; r < rows; ++r)
    kernels::widen_half(d, src + static_cast<std::int64_t>(r) * ld, kernels::HalfFormat::kF16,
                        dst + static_cast<std::int64_t>(r) * d);
}

// The keys are widened as the product packs them (linear_nt_half: gemm_nt's bits over the widened
// keys), a tile of them at a time.
void half_scores(const AttentionProblem& p, std::int64_t s, const float* q, int ldq, int rows, float* scores,
                 int lds) {
  const std::uint16_t* k = p.k16_slice(s);  // k: (Tk, dk), row stride k_stride()
  const int ldk = p.k_stride();
  for (int j0 = 0; j0 < p.masks.tk; j0 += kFlashKeyTile) {
    const int n = std::min(kFlashKeyTile, p.masks.tk - j0);
    kernels::linear_nt_half(rows, n, p.dk, q, ldq, k + static_cast<std::int64_t>(j0) * ldk, ldk,
                            kernels::HalfFormat::kF16, nullptr, scores + j0, lds);
  }
}

void half_context(const AttentionProblem& p, std::int64_t s, const float* w, int ldw, int rows,
                  float* context, int ldo, float* tile) {
  const std::uint16_t* v = p.v16_slice(s);  // v: (Tk, dv), row stride v_stride()
  const int ldv = p.v_stride();
  for (int j0 = 0; j0 < p.masks.tk; j0 += kFlashKeyTile) {
    const int n = std::min(kFlashKeyTile, p.masks.tk - j0);
    widen_rows(n, p.dv, v + static_cast<std::int64_t>(j0) * ldv, ldv, tile);  // tile: (n, dv)
    kernels::gemm_nn(rows, p.dv, n, w + j0, ldw, tile, p.dv, context, ldo, j0 > 0);
  }
}

}  // namespace attn
