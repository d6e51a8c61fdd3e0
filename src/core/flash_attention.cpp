// The tiled (flash-attention style) path: for a block of query rows, walk the keys tile by tile,
// keeping per row a running max m and running sum l (online softmax), and the unnormalised output
// rows in place in the context: out = out · exp(m_old - m_new) + P_tile · V_tile, one GEMM per tile.
// Memory: one (block, tile) score tile plus m and l — never (Tq, Tk). Gives the same output as the
// full path up to float summation order.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/attention_engine.h"
#include "kernels/kernels.h"
#include "kernels/parallel.h"

namespace attn {

namespace {

// Blocks of kFlashQueryBlock (256) query rows, tiles of kFlashKeyTile (256) keys: K and V tiles are
// packed once per block, so taller blocks pack less; 256 × 256 scores (256 KB) and the block's
// output rows stay in L2. At T = 8192, blocks of 128 / 256 / 512 rows took 2.17 / 2.05 / 2.14 s.

struct TileScratch {
  float* q_scaled;        // q_scaled: (block, dk) the query block times the scale
  float* tile;            // tile: (block, width) scaled scores, then p, row stride width
  int width;              // min(kFlashKeyTile, Tk)
  float* m;               // (block) running max per row
  float* l;               // (block) running sum per row
  std::uint8_t* allowed;  // (width) one row segment of the mask plan
  float* additive;        // (width)
  float* k_copy;          // k_copy: (Tk, dk) this slice's keys, contiguous; null when not copied
  float* v_copy;          // v_copy: (Tk, dv)
  float* v_tile;          // v_tile: (width, dv) a float16 cache's values of one tile, widened; else null
};

struct KeyValues {  // one slice's keys (Tk, dk) and values (Tk, dv), with their row strides
  const float* k;
  int ldk;
  const float* v;
  int ldv;
  const std::uint16_t* k16 = nullptr;  // a float16 cache: its keys and values (k, v null), strides ldk, ldv
  const std::uint16_t* v16 = nullptr;
};

// The keys and values of slice s. When they are strided views into the projection buffers (rows of
// 3·E floats) and several query blocks will read them, they are first copied into contiguous
// buffers: every block then streams whole tiles instead of d-float pieces of long rows.
KeyValues slice_kv(const AttentionProblem& p, std::int64_t s, const TileScratch& sc) {
  const int ldk = p.k_stride(), ldv = p.v_stride();
  if (p.half_kv()) return KeyValues{nullptr, ldk, nullptr, ldv, p.k16_slice(s), p.v16_slice(s)};
  const KeyValues kv{p.k_slice(s), ldk, p.v_slice(s), ldv};
  if (!sc.k_copy) return kv;
  for (int j = 0; j < p.masks.tk; ++j) {
    std::memcpy(sc.k_copy + static_cast<std::int64_t>(j) * p.dk, kv.k + static_cast<std::int64_t>(j) * ldk,
                static_cast<std::size_t>(p.dk) * sizeof(float));
    std::memcpy(sc.v_copy + static_cast<std::int64_t>(j) * p.dv, kv.v + static_cast<std::int64_t>(j) * ldv,
                static_cast<std::size_t>(p.dv) * sizeof(float));
  }
  return KeyValues{sc.k_copy, p.dk, sc.v_copy, p.dv};
}

// Query heads per unit of the tiled path: a float16 cache's GQA group (each value tile is widened
// once for all its heads), else 1.
constexpr int kMaxGroupHeads = 16;
int group_heads(const AttentionProblem& p) {
  return p.half_kv() && p.kv_group > 1 && p.kv_group <= kMaxGroupHeads ? p.kv_group : 1;
}

struct KeyRange {
  int begin, end;
};

// The keys rows [i0, i0 + rows) can see under the causal mask and the window: tiles start at the
// first of them rather than at a multiple of the tile width (a window of 512 over 64-row blocks then
// computes 575 keys per row, not the 768 of three aligned tiles). Extra keys (past real_keys) are
// never masked: with any, the range runs to Tk.
KeyRange band_keys(const MaskPlan& m, int i0, int rows) {
  const std::int64_t first = m.position_offset + i0, last = first + rows - 1;
  std::int64_t begin = 0, end = m.real_keys;
  if (m.window > 0) begin = std::max<std::int64_t>(0, first - m.window + 1);
  if (m.causal)
    end = std::min<std::int64_t>(end, last + 1);
  else if (m.window > 0)
    end = std::min<std::int64_t>(end, last + m.window);
  if (m.real_keys < m.tk) end = m.tk;
  if (end < begin) end = begin;
  return KeyRange{static_cast<int>(begin), static_cast<int>(end)};
}

// 2. Online softmax of every row of the tile (times scale) into p; rescales the output rows whose
// max moved.
void softmax_tile(const AttentionProblem& p, std::int64_t s, int i0, int rows, int j0, int n, bool first,
                  float scale, const TileScratch& sc, float* out, int ldo) {
  const std::uint8_t* allowed = p.masks.has_bool() ? sc.allowed : nullptr;
  const float* additive = p.masks.has_additive() ? sc.additive : nullptr;
  const bool masked = allowed || additive;
  for (int r = 0; r < rows; ++r) {
    float* row = sc.tile + static_cast<std::int64_t>(r) * sc.width;
    if (masked) p.masks.fill_row(s, i0 + r, j0, n, sc.allowed, sc.additive);
    if (p.softcap > 0) softcap_row(n, row, scale, p.softcap);  // Gemma 2: the capped scores, scale already in
    const float factor = kernels::online_softmax_row(n, row, p.softcap > 0 ? 1.0f : scale, additive, allowed,
                                                     &sc.m[r], &sc.l[r], row);
    // Still no finite score although this segment allowed a key: q·k·scale overflowed to −∞. l = −1
    // marks it; the first finite score of a later segment clears it (l = −1 · 0 + Σ p), since
    // those keys' weights are then 0 exactly as in float64.
    if (sc.m[r] == -std::numeric_limits<float>::infinity() && has_allowed_key(n, allowed, additive))
      sc.l[r] = -1.0f;
    float* out_row = out + static_cast<std::int64_t>(r) * ldo;
    if (!first && factor != 1.0f) kernels::scale_vec(p.dv, out_row, factor, out_row);
  }
}

// out rows (rows, dv) /= l; a row with l == 0 (fully masked), or every row when l is null (no tile
// was computed), becomes zeros.
void normalise_rows(int rows, int dv, const float* l, float* out, int ldo) {
  for (int r = 0; r < rows; ++r) {
    float* out_row = out + static_cast<std::int64_t>(r) * ldo;
    if (l && (std::isnan(l[r]) || l[r] < 0.0f)) {  // an overflow (softmax_tile): NaN, for the result check
      std::fill(out_row, out_row + dv, std::numeric_limits<float>::quiet_NaN());
    } else if (!l || !(l[r] > 0.0f)) {
      std::memset(out_row, 0, static_cast<std::size_t>(dv) * sizeof(float));
    } else {
      kernels::scale_vec(dv, out_row, 1.0f / l[r], out_row);
    }
  }
}

// Context rows of slice s start at context + (s / heads)·Tq·ldo + (s % heads)·dv.
float* slice_out(const AttentionProblem& p, std::int64_t s, float* context, int ldo) {
  return context + (s / p.heads) * p.masks.tq * static_cast<std::int64_t>(ldo) + (s % p.heads) * p.dv;
}

// One block of query rows [i0, i0 + rows) of slices [s0, s0 + heads): query heads that read the
// same keys and values (a float16 cache's GQA group: each value tile is widened once for all of
// them; otherwise one slice), each with its own q block, running max and sum (sc's at h·block);
// into their context rows (slice_out + i0·ldo).
void attend_block(const AttentionProblem& p, std::int64_t s0, int heads, int i0, int rows, int block,
                  const TileScratch& sc, const KeyValues& kv, float* context, int ldo) {
  const int tk = p.masks.tk, dk = p.dk, dv = p.dv;
  const int ldq = p.row_stride(p.ldq, dk), ldk = kv.ldk, ldv = kv.ldv;
  const bool half = kv.k16 != nullptr;  // a float16 cache's keys and values
  // 0. With many more keys than dk, the scale goes on the query block once instead of on every
  //    score (exact when it is a power of two, as 1/√dk is for dk = 4^i; otherwise within rounding
  //    of the full path), and the softmax pass over the scores only reads them.
  const bool prescale = tk > 2 * dk;
  const float tile_scale = prescale ? 1.0f : p.scale;
  std::array<TileScratch, kMaxGroupHeads> head_sc;  // [0, heads): sc with head h's q block, m, l
  std::array<const float*, kMaxGroupHeads> q_tile;  // q block (rows, dk) of head h, row stride ldq_tile
  std::array<float*, kMaxGroupHeads> out;           // its context rows
  for (int h = 0; h < heads; ++h) {
    const std::int64_t at = static_cast<std::int64_t>(h) * block;
    head_sc[h] = sc;
    head_sc[h].q_scaled = sc.q_scaled + at * dk;
    head_sc[h].m = sc.m + at;
    head_sc[h].l = sc.l + at;
    const float* q = p.q_slice(s0 + h) + static_cast<std::int64_t>(i0) * ldq;  // q block: (rows, dk)
    for (int r = 0; r < rows && prescale; ++r) {
      kernels::scale_vec(dk, q + static_cast<std::int64_t>(r) * ldq, p.scale,
                         head_sc[h].q_scaled + static_cast<std::int64_t>(r) * dk);
    }
    q_tile[h] = prescale ? head_sc[h].q_scaled : q;
    out[h] = slice_out(p, s0 + h, context, ldo) + static_cast<std::int64_t>(i0) * ldo;
    std::fill(head_sc[h].m, head_sc[h].m + rows, -std::numeric_limits<float>::infinity());
    std::fill(head_sc[h].l, head_sc[h].l + rows, 0.0f);
  }
  const int ldq_tile = prescale ? dk : ldq;
  bool first = true;  // out holds nothing yet: the first tile's product overwrites it
  const KeyRange range = band_keys(p.masks, i0, rows);
  for (int j0 = range.begin; j0 < range.end; j0 += sc.width) {
    const int n = std::min(sc.width, range.end - j0);
    // A float16 cache: the keys are widened as the product packs them (linear_nt_half: the bits of
    // gemm_nt over the widened tile), the values into v_tile once for the group's heads.
    if (half) widen_rows(n, dv, kv.v16 + static_cast<std::int64_t>(j0) * ldv, ldv, sc.v_tile);
    const float* v_rows = half ? sc.v_tile : kv.v + static_cast<std::int64_t>(j0) * ldv;  // (n, dv)
    for (int h = 0; h < heads; ++h) {
      // 1. tile (rows, n) = q_block · k_tileᵀ (times the scale when prescaled)
      if (half)
        kernels::linear_nt_half(rows, n, dk, q_tile[h], ldq_tile,
                                kv.k16 + static_cast<std::int64_t>(j0) * ldk, ldk, kernels::HalfFormat::kF16,
                                nullptr, sc.tile, sc.width);
      else
        kernels::gemm_nt(rows, n, dk, q_tile[h], ldq_tile, kv.k + static_cast<std::int64_t>(j0) * ldk, ldk,
                         sc.tile, sc.width, false);
      // 2. p = exp(z - m) per row, rescaling earlier output rows; 3. out (+)= p · v_tile
      softmax_tile(p, s0 + h, i0, rows, j0, n, first, tile_scale, head_sc[h], out[h], ldo);
      kernels::gemm_nn(rows, dv, n, sc.tile, sc.width, v_rows, half ? dv : ldv, out[h], ldo, !first);
    }
    first = false;
  }
  // 4. normalise
  for (int h = 0; h < heads; ++h) normalise_rows(rows, dv, first ? nullptr : head_sc[h].l, out[h], ldo);
}

}  // namespace

void run_attention_tiled(const AttentionProblem& p, float* context, int ldo) {
  if (p.masks.tk <= kFlashKeyTile) {  // one tile per row: plain softmax, no online bookkeeping
    AttentionOutputs none;            // no weights, no trace: the full path keeps only a block
    return run_attention_full(p, false, context, ldo, none, nullptr);
  }
  ScratchScope scratch;
  // A sliding window narrower than the keys: shorter blocks see fewer keys each (a block of r rows
  // spans window + r − 1 keys), so fewer tiles are computed only to be masked.
  const bool narrow = p.masks.window > 0 && p.masks.window < p.masks.tk;
  const int tq = p.masks.tq, block = std::min(narrow ? kFlashWindowBlock : kFlashQueryBlock, tq);
  const bool strided = p.k_stride() != p.dk || p.v_stride() != p.dv;
  // Several blocks read each slice's keys and values (a float16 cache's are widened per tile instead).
  const bool copy_kv = strided && tq > block && !p.half_kv();
  const std::int64_t slices = p.masks.slices();
  // Units: one block of query rows of one slice, split over the thread pool (kernels/parallel.h);
  // each unit is run by one thread the same way at any thread count: the same bits. Each part has
  // its own scratch, allocated here on the calling thread.
  const int blocks = (tq + block - 1) / block;
  // A float16 cache: the query heads of a GQA group share a unit, so each tile is widened once.
  const int group = group_heads(p);
  const std::int64_t units = slices / group * blocks;
  const std::int64_t unit_work = static_cast<std::int64_t>(block) * p.masks.tk * (p.dk + p.dv) * group;
  const int parts = kernels::parallel_parts(units, kernels::min_items_for(unit_work));
  std::array<TileScratch, kernels::kMaxThreads> part_scratch;  // [0, parts) used
  for (int t = 0; t < parts; ++t) {
    TileScratch& sc = part_scratch[static_cast<std::size_t>(t)];
    sc.width = std::min(kFlashKeyTile, p.masks.tk);
    sc.q_scaled = scratch.floats(static_cast<std::size_t>(group) * block * p.dk);
    sc.tile = scratch.floats(static_cast<std::size_t>(block) * sc.width);
    sc.m = scratch.floats(static_cast<std::size_t>(group) * block);
    sc.l = scratch.floats(static_cast<std::size_t>(group) * block);
    sc.allowed = scratch.bytes(static_cast<std::size_t>(sc.width));
    sc.additive = scratch.floats(static_cast<std::size_t>(sc.width));
    sc.k_copy = copy_kv ? scratch.floats(static_cast<std::size_t>(p.masks.tk) * p.dk) : nullptr;
    sc.v_copy = copy_kv ? scratch.floats(static_cast<std::size_t>(p.masks.tk) * p.dv) : nullptr;
    sc.v_tile = p.half_kv() ? scratch.floats(static_cast<std::size_t>(sc.width) * p.dv) : nullptr;
  }
  kernels::parallel_for_parts(units, parts, [&](int part, std::int64_t u0, std::int64_t u1) {
    const TileScratch& sc = part_scratch[static_cast<std::size_t>(part)];
    KeyValues kv{};
    std::int64_t kv_of = -1;  // the slice whose keys and values kv holds
    for (std::int64_t u = u0; u < u1; ++u) {
      const std::int64_t s = u / blocks * group;  // the unit's first slice
      const int i0 = static_cast<int>(u % blocks) * block;
      // Query heads of one group read the same keys and values: copy them once per group.
      if (kv_of < 0 || p.kv_index(s) != p.kv_index(kv_of)) kv = slice_kv(p, s, sc);
      kv_of = s;
      attend_block(p, s, group, i0, std::min(block, tq - i0), block, sc, kv, context, ldo);
    }
  });
}

}  // namespace attn
