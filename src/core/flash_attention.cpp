// The tiled (flash-attention style) path: for a block of query rows, walk the keys tile by tile,
// keeping per row a running max m, running sum l and running Σ exp(s - m)·v (online softmax).
// Memory: one (block, tile) score tile plus (block, dv) accumulators — O(Tq·dv) overall, never
// (Tq, Tk). Gives the same output as the full path up to float summation order.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/attention_engine.h"
#include "kernels/kernels.h"

namespace attn {

namespace {

constexpr int kQueryBlock = 32;  // query rows per block: the score tile stays in L1/L2
constexpr int kKeyTile = 256;    // keys per tile

struct TileScratch {
  std::vector<float> tile;           // tile: (kQueryBlock, kKeyTile)
  std::vector<float> scaled;         // scaled: (kKeyTile) one row segment
  std::vector<float> masked;         // masked: (kKeyTile) the same after masking
  std::vector<std::uint8_t> allowed; // (kKeyTile)
  std::vector<float> additive;       // (kKeyTile)
  std::vector<float> m, l;           // (kQueryBlock) running max and sum
};

// One block of query rows [i0, i0 + rows) of slice s; writes its context rows.
void attend_block(const AttentionProblem& p, std::int64_t s, int i0, int rows, TileScratch& sc,
                  float* context) {
  const int tk = p.masks.tk, dk = p.dk, dv = p.dv;
  const float* q = p.q + (s * p.masks.tq + i0) * dk;  // q block: (rows, dk)
  const float* k = p.k + s * tk * dk;                 // k: (Tk, dk)
  const float* v = p.v + s * tk * dv;                 // v: (Tk, dv)
  float* acc = context + (s * p.masks.tq + i0) * dv;  // acc: (rows, dv), finished in place
  std::fill(sc.m.begin(), sc.m.end(), -std::numeric_limits<float>::infinity());
  std::fill(sc.l.begin(), sc.l.end(), 0.0f);
  std::fill(acc, acc + static_cast<std::int64_t>(rows) * dv, 0.0f);
  const std::uint8_t* allowed = p.masks.has_bool() ? sc.allowed.data() : nullptr;
  const float* additive = p.masks.has_additive() ? sc.additive.data() : nullptr;
  for (int j0 = 0; j0 < tk; j0 += kKeyTile) {
    const int n = std::min(kKeyTile, tk - j0);
    // 1. tile (rows, n) = q_block · k_tileᵀ
    kernels::gemm_nt(rows, n, dk, q, dk, k + static_cast<std::int64_t>(j0) * dk, dk,
                     sc.tile.data(), kKeyTile, false);
    for (int r = 0; r < rows; ++r) {
      // 2. scale and mask the row segment, 3. fold it into the running softmax·V
      p.masks.fill_row(s, i0 + r, j0, n, sc.allowed.data(), sc.additive.data());
      kernels::scale_vec(n, sc.tile.data() + static_cast<std::int64_t>(r) * kKeyTile, p.scale,
                         sc.scaled.data());
      kernels::mask_row(n, sc.scaled.data(), additive, allowed, sc.masked.data());
      kernels::online_softmax_update(n, sc.masked.data(), v + static_cast<std::int64_t>(j0) * dv, dv, dv,
                                     &sc.m[r], &sc.l[r], acc + static_cast<std::int64_t>(r) * dv);
    }
  }
  // 4. normalise; a fully masked row (l == 0) stays zero
  for (int r = 0; r < rows; ++r) {
    if (!(sc.l[r] > 0.0f)) continue;
    const float inv = 1.0f / sc.l[r];
    for (int c = 0; c < dv; ++c) acc[static_cast<std::int64_t>(r) * dv + c] *= inv;
  }
}

}  // namespace

void run_attention_tiled(const AttentionProblem& p, float* context) {
  TileScratch sc;
  sc.tile.resize(static_cast<size_t>(kQueryBlock) * kKeyTile);
  sc.scaled.resize(kKeyTile);
  sc.masked.resize(kKeyTile);
  sc.allowed.resize(kKeyTile);
  sc.additive.resize(kKeyTile);
  sc.m.resize(kQueryBlock);
  sc.l.resize(kQueryBlock);
  const std::int64_t slices = p.masks.slices();
  for (std::int64_t s = 0; s < slices; ++s) {
    for (int i0 = 0; i0 < p.masks.tq; i0 += kQueryBlock) {
      attend_block(p, s, i0, std::min(kQueryBlock, p.masks.tq - i0), sc, context);
    }
  }
}

}  // namespace attn
