#include "core/attention_engine.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "core/rng.h"
#include "kernels/kernels.h"
#include "kernels/parallel.h"

namespace attn {

namespace {

// Query rows per block of the full path: one block's scores (rows, Tk) stay in L2 (2 MB here)
// while softmax and ·V read them again.
constexpr std::int64_t kFullBlockFloats = std::int64_t{1} << 18;  // 1 MB

int full_block_rows(int tq, int tk) {
  const std::int64_t rows = std::max<std::int64_t>(16, kFullBlockFloats / std::max(tk, 1));
  return static_cast<int>(std::min<std::int64_t>(rows, tq));
}

}  // namespace

bool uses_tiled_path(const AttentionProblem& p, bool need_weights, bool tracing) {
  return !need_weights && !tracing && !(p.dropout.p > 0.0f) && !p.hooks_scores();
}

std::uint64_t attention_scratch_elements(const AttentionProblem& p, bool need_weights, bool tracing) {
  const std::uint64_t s = static_cast<std::uint64_t>(p.masks.slices());
  const std::uint64_t scores = static_cast<std::uint64_t>(p.masks.tq) * p.masks.tk;  // one slice
  std::uint64_t n = s * p.masks.tq * static_cast<std::uint64_t>(p.dv);               // context
  // Each part of the parallel loop has its own block scratch: at most thread_count() parts.
  const std::uint64_t parts = static_cast<std::uint64_t>(kernels::thread_count());
  // A float16 cache: each part's widened key and value tiles, and the q blocks, running maxima and
  // sums of a GQA group's heads (flash_attention.cpp).
  if (p.half_kv())
    n += parts * (static_cast<std::uint64_t>(kFlashKeyTile) * p.dv +
                  static_cast<std::uint64_t>(p.kv_group) * kFlashQueryBlock * (p.dk + 2));
  if (uses_tiled_path(p, need_weights, tracing) && p.masks.tk > kFlashKeyTile) {
    // q_scaled, tile, m, l (per block row); the mask row segment; a slice's keys and values
    return n + parts * (static_cast<std::uint64_t>(kFlashQueryBlock) * (p.dk + kFlashKeyTile + 2) +
                        2 * kFlashKeyTile + static_cast<std::uint64_t>(p.masks.tk) * (p.dk + p.dv));
  }
  const std::uint64_t rows = full_block_rows(p.masks.tq, p.masks.tk);
  n += parts * (2 * rows * p.masks.tk + 2 * p.masks.tk);   // block scratch: scores, dropped; mask row
  if (need_weights || tracing) n += s * scores;            // weights of every slice
  if (tracing) n += 4 * s * scores + n;                    // scores, scaled, masked, dropped + copies
  if (tracing && !p.masks.alibi.empty()) n += s * scores;  // the ALiBi bias step
  return n;
}

// ---- ScratchScope ------------------------------------------------------------------------------

namespace {

// Trivially destructible on purpose: the block lives as long as the module (freed with it), and a
// thread_local with a destructor would pull in thread-exit machinery the single-threaded build
// does not need.
struct ScratchCache {
  float* block = nullptr;  // block: (capacity) floats, handed out front to back
  std::size_t capacity = 0;
  std::size_t used = 0;           // floats held by live scopes
  std::size_t overflow_live = 0;  // floats in live buffers that did not fit
  std::size_t peak = 0;           // the most a call held at once (used + overflow_live)
};
thread_local ScratchCache g_scratch;

constexpr std::size_t kScratchAlign = 4;  // floats: every buffer starts 16-byte aligned

}  // namespace

ScratchScope::ScratchScope() : mark_(g_scratch.used) {
  // Between calls (nothing handed out), grow the block to what the biggest call needed, capped.
  const std::size_t want = std::min(g_scratch.peak, kScratchCacheFloats);
  if (mark_ == 0 && g_scratch.overflow_live == 0 && want > g_scratch.capacity) {
    delete[] g_scratch.block;
    g_scratch.block = new float[want];
    g_scratch.capacity = want;
  }
}

ScratchScope::~ScratchScope() {
  g_scratch.used = mark_;
  g_scratch.overflow_live -= owned_floats_;  // owned_ frees them
}

float* ScratchScope::floats(std::size_t n) {
  const std::size_t need = (n + kScratchAlign - 1) / kScratchAlign * kScratchAlign;
  float* out;
  if (g_scratch.used + need <= g_scratch.capacity) {
    out = g_scratch.block + g_scratch.used;
    g_scratch.used += need;
  } else {
    owned_.emplace_back(new float[need]);
    out = owned_.back().get();
    owned_floats_ += need;
    g_scratch.overflow_live += need;
  }
  g_scratch.peak = std::max(g_scratch.peak, g_scratch.used + g_scratch.overflow_live);
  return out;
}

std::uint8_t* ScratchScope::bytes(std::size_t n) {
  return reinterpret_cast<std::uint8_t*>(floats((n + sizeof(float) - 1) / sizeof(float)));
}

// ---- the full path -------------------------------------------------------------------------------

namespace {

struct Steps {  // per-step rows of one block: each (rows, Tk), row stride Tk
  float* scores;
  float* scaled;   // only when tracing
  float* masked;   // only when tracing
  float* weights;  // may be scores itself (softmax in place) when weights are not kept
  float* dropped;  // only with dropout
};

struct MaskRow {          // one row of the mask plan, filled per query row
  std::uint8_t* allowed;  // (Tk)
  float* additive;        // (Tk)
};

// A weights row of zeros is a fully masked row, unless its masks allowed a key: then every score
// was −∞ by overflow, and the row becomes NaN (has_allowed_key). Checks w[0] first: a row whose
// first weight is positive is not all zeros.
void mark_overflowed_row(int tk, float* w, const std::uint8_t* allowed, const float* additive) {
  if (w[0] != 0.0f) return;
  for (int j = 1; j < tk; ++j)
    if (w[j] != 0.0f) return;
  if (has_allowed_key(tk, allowed, additive)) w[0] = std::numeric_limits<float>::quiet_NaN();
}

// Scale (Gemma 2: and cap) one row of scores into `scaled`, then mask it into `masked` (either may
// be the other, or the weights row: the kernels run in place).
void scale_mask_row(const AttentionProblem& p, int tk, const float* scores, float* scaled, float* masked,
                    const float* additive, const std::uint8_t* allowed) {
  if (p.softcap > 0) {  // the trace's "scaled" holds the capped scores
    std::copy(scores, scores + tk, scaled);
    softcap_row(tk, scaled, p.scale, p.softcap);
  } else {
    kernels::scale_vec(tk, scores, p.scale, scaled);
  }
  kernels::mask_row(tk, scaled, additive, allowed, masked);
}

// 2.–4. Scale, mask and softmax rows [i0, i0 + rows) of one slice. The traced variant calls the
// three kernels the fused one is defined as, so both produce the same bits; so does the hooked one,
// which masks every row of the block, shows them to the hook on the scores, then takes the softmax.
void softmax_rows(const AttentionProblem& p, std::int64_t slice, int i0, int rows, const Steps& st,
                  bool tracing, const MaskRow& mr) {
  const int tk = p.masks.tk;
  const std::uint8_t* allowed_ptr = p.masks.has_bool() ? mr.allowed : nullptr;
  const float* additive_ptr = p.masks.has_additive() ? mr.additive : nullptr;
  const bool masked = allowed_ptr || additive_ptr;
  const bool hooked = p.hooks && p.hooks->wants(AttnPoint::kScores);
  float* masked_rows = tracing ? st.masked : st.weights;  // the softmax's input, (rows, Tk)
  const auto row_steps = [&](int r, bool softmax) {
    // Without masks there is no mask row to fill.
    if (masked) p.masks.fill_row(slice, i0 + r, 0, tk, mr.allowed, mr.additive);
    const std::int64_t row = static_cast<std::int64_t>(r) * tk;
    if (!softmax) {
      scale_mask_row(p, tk, st.scores + row, tracing ? st.scaled + row : st.weights + row, masked_rows + row,
                     additive_ptr, allowed_ptr);
      return;
    }
    if (hooked) {
      kernels::softmax_row(tk, masked_rows + row, st.weights + row);
    } else if (p.softcap > 0 || tracing) {
      scale_mask_row(p, tk, st.scores + row, tracing ? st.scaled + row : st.weights + row, masked_rows + row,
                     additive_ptr, allowed_ptr);
      kernels::softmax_row(tk, masked_rows + row, st.weights + row);
    } else {
      kernels::scale_mask_softmax_row(tk, st.scores + row, p.scale, additive_ptr, allowed_ptr,
                                      st.weights + row);
    }
    mark_overflowed_row(tk, st.weights + row, allowed_ptr, additive_ptr);
  };
  if (hooked) {
    for (int r = 0; r < rows; ++r) row_steps(r, false);
    p.hooks->scores(AttnPoint::kScores,
                    ScoresBlock{masked_rows, static_cast<int>(slice / p.heads),
                                static_cast<int>(slice % p.heads), i0, rows, tk, p.masks.position_offset});
  }
  for (int r = 0; r < rows; ++r) row_steps(r, true);
}

// 7. The head average of weights rows (rows, Tk) of slice s into avg (N, Tq, Tk): the first head
// copies, the others add, the last divides by the number of heads.
void average_into(const AttentionProblem& p, std::int64_t s, int i0, int rows, const float* w, float* avg) {
  const int tk = p.masks.tk, head = static_cast<int>(s % p.heads);
  const std::int64_t n = static_cast<std::int64_t>(rows) * tk;
  float* dst = avg + ((s / p.heads) * p.masks.tq + i0) * static_cast<std::int64_t>(tk);
  if (head == 0)
    std::memcpy(dst, w, static_cast<std::size_t>(n) * sizeof(float));
  else
    kernels::add_vec(static_cast<int>(n), dst, w, dst);
  if (head == p.heads - 1 && p.heads > 1) {
    kernels::scale_vec(static_cast<int>(n), dst, 1.0f / static_cast<float>(p.heads), dst);
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

// The context (lead..., Tq, dv) gathered from its strided destination, for the trace.
void record_context(Trace* trace, const AttentionProblem& p, const float* context, int ldo) {
  const std::int64_t slices = p.masks.slices();
  const int tq = p.masks.tq, dv = p.dv;
  std::vector<float> data(static_cast<std::size_t>(slices * tq * dv));  // (S, Tq, dv)
  for (std::int64_t s = 0; s < slices; ++s) {
    const float* src = context + (s / p.heads) * tq * static_cast<std::int64_t>(ldo) + (s % p.heads) * dv;
    for (int i = 0; i < tq; ++i) {
      std::memcpy(data.data() + (s * tq + i) * dv, src + static_cast<std::int64_t>(i) * ldo,
                  static_cast<std::size_t>(dv) * sizeof(float));
    }
  }
  std::vector<std::string> axes = p.lead_axes;
  axes.push_back("T_q");
  axes.push_back("d_v");
  Shape shape = p.masks.lead;
  shape.push_back(tq);
  shape.push_back(dv);
  trace->record("context", std::move(axes), Tensor(std::move(shape), std::move(data)));
}

// Where one block's steps go: into the whole-call trace buffers (S, Tq, Tk), or per-block scratch.
struct FullBuffers {
  std::vector<float> scores, scaled, masked, weights, dropped;  // trace only: (S, Tq, Tk) each
  float* block_scores = nullptr;                                // (rows, Tk) when not tracing
  float* block_dropped = nullptr;                               // (rows, Tk) when not tracing, with dropout
  float* kept_weights = nullptr;  // (S, Tq, Tk) weights kept outside the trace, or null
};

Steps block_steps(FullBuffers& b, bool tracing, std::int64_t at) {
  if (tracing) {
    return Steps{b.scores.data() + at, b.scaled.data() + at, b.masked.data() + at, b.weights.data() + at,
                 b.dropped.empty() ? nullptr : b.dropped.data() + at};
  }
  // Weights not kept: softmax in place over the scores.
  return Steps{b.block_scores, nullptr, nullptr, b.kept_weights ? b.kept_weights + at : b.block_scores,
               b.block_dropped};
}

// Steps 1.–7. for query rows [i0, i0 + rows) of slice s; kv_tile: a float16 cache's widened value
// tile (kFlashKeyTile · dv floats), else unused.
void full_block(const AttentionProblem& p, std::int64_t s, int i0, int rows, const Steps& st,
                const MaskRow& mr, float* kv_tile, bool tracing, float* context, int ldo,
                const AttentionOutputs& out) {
  const int tk = p.masks.tk;
  const int ldq = p.row_stride(p.ldq, p.dk), ldk = p.k_stride(), ldv = p.v_stride();
  // 1. scores (rows, Tk) = q rows (rows, dk) · k_sᵀ
  const float* q = p.q_slice(s) + static_cast<std::int64_t>(i0) * ldq;
  if (p.half_kv())
    half_scores(p, s, q, ldq, rows, st.scores, tk);
  else
    kernels::gemm_nt(rows, tk, p.dk, q, ldq, p.k_slice(s), ldk, st.scores, tk, false);
  // 2.–4. scale, mask, softmax
  softmax_rows(p, s, i0, rows, st, tracing, mr);
  if (p.hooks && p.hooks->wants(AttnPoint::kPattern)) {
    p.hooks->scores(AttnPoint::kPattern,
                    ScoresBlock{st.weights, static_cast<int>(s / p.heads), static_cast<int>(s % p.heads), i0,
                                rows, tk, p.masks.position_offset});
  }
  // 5. dropout on the weights
  const bool dropout = p.dropout.p > 0.0f;
  if (dropout) apply_dropout(p, s, i0, rows, st.weights, st.dropped);
  // 6. context rows (rows, dv) = P (rows, Tk) · v_s (Tk, dv)
  float* ctx = context + (s / p.heads) * p.masks.tq * static_cast<std::int64_t>(ldo) + (s % p.heads) * p.dv;
  if (p.half_kv())
    half_context(p, s, dropout ? st.dropped : st.weights, tk, rows, ctx + static_cast<std::int64_t>(i0) * ldo,
                 ldo, kv_tile);
  else
    kernels::gemm_nn(rows, p.dv, tk, dropout ? st.dropped : st.weights, tk, p.v_slice(s), ldv,
                     ctx + static_cast<std::int64_t>(i0) * ldo, ldo, false);
  // 7. the head average of the weights
  if (out.weights_out && out.average_heads) average_into(p, s, i0, rows, st.weights, out.weights_out);
}

// The ALiBi bias alone (S, Tq, Tk), for the trace: "masked" = "scaled" + this + the other masks.
std::vector<float> alibi_bias(const AttentionProblem& p) {
  const int tq = p.masks.tq, tk = p.masks.tk;
  std::vector<float> bias(static_cast<std::size_t>(p.masks.slices()) * tq * tk, 0.0f);
  for (std::int64_t s = 0; s < p.masks.slices(); ++s)
    for (int i = 0; i < tq; ++i)
      p.masks.add_alibi(s, i, 0, p.masks.real_keys, bias.data() + (s * tq + i) * tk);
  return bias;
}

void record_full_trace(Trace* trace, const AttentionProblem& p, FullBuffers& b, bool need_weights,
                       AttentionOutputs& out) {
  if (need_weights && !out.weights_out) out.weights = b.weights;
  if (need_weights && out.weights_out && !out.average_heads) {
    std::memcpy(out.weights_out, b.weights.data(), b.weights.size() * sizeof(float));
  }
  record_scores_step(trace, p, "scores", std::move(b.scores));
  record_scores_step(trace, p, "scaled", std::move(b.scaled));
  if (!p.masks.alibi.empty()) record_scores_step(trace, p, "alibi", alibi_bias(p));
  record_scores_step(trace, p, "masked", std::move(b.masked));
  record_scores_step(trace, p, "weights", std::move(b.weights));
  if (!b.dropped.empty()) record_scores_step(trace, p, "dropped", std::move(b.dropped));
}

}  // namespace

// 5. Inverted dropout with a counter-based RNG (attention_engine.h): the pattern does not depend on
// the path or the platform.
void apply_dropout(const AttentionProblem& p, std::int64_t slice, int i0, int rows, const float* weights,
                   float* dropped) {
  const std::int64_t per_slice = static_cast<std::int64_t>(p.masks.tq) * p.masks.tk;
  const std::int64_t first = slice * per_slice + static_cast<std::int64_t>(i0) * p.masks.tk;
  const std::int64_t n = static_cast<std::int64_t>(rows) * p.masks.tk;
  const float keep_scale = 1.0f / (1.0f - p.dropout.p);
  for (std::int64_t e = 0; e < n; ++e) {
    const std::uint64_t counter = static_cast<std::uint64_t>(first + e);
    dropped[e] = uniform01(p.dropout.seed, counter) < p.dropout.p ? 0.0f : weights[e] * keep_scale;
  }
}

void run_attention_full(const AttentionProblem& p, bool need_weights, float* context, int ldo,
                        AttentionOutputs& out, Trace* trace) {
  ScratchScope scratch;
  const bool tracing = trace != nullptr, dropout = p.dropout.p > 0.0f;
  const std::int64_t slices = p.masks.slices();
  const int tq = p.masks.tq, tk = p.masks.tk, block = full_block_rows(tq, tk);
  const std::int64_t per_slice = static_cast<std::int64_t>(tq) * tk;
  const std::size_t all = static_cast<std::size_t>(slices * per_slice);
  // 1. Buffers: the whole call's steps when tracing; else one block's, with the weights kept where
  //    the caller wants them (or softmax in place when only their head average is wanted).
  FullBuffers b;
  if (tracing) {
    for (auto* v : {&b.scores, &b.scaled, &b.masked, &b.weights}) v->resize(all);
    if (dropout) b.dropped.resize(all);
  } else {
    if (need_weights && out.weights_out && !out.average_heads) b.kept_weights = out.weights_out;
    if (need_weights && !out.weights_out) {
      out.weights.resize(all);
      b.kept_weights = out.weights.data();
    }
  }
  // 2. Every block of every slice, split over the thread pool (kernels/parallel.h). A unit is one
  //    block of query rows of one slice; with the head average, one block of rows of one batch item
  //    over all its heads in head order (the average adds the heads one after another). Each unit
  //    is run by one thread, the same way at any thread count: the same bits. Each part's buffers
  //    are taken here, on the calling thread, before the parallel section (workers never allocate).
  const int blocks = (tq + block - 1) / block;
  const bool by_batch = out.weights_out && out.average_heads;
  const int heads_per_unit = by_batch ? p.heads : 1;
  const std::int64_t units = slices / heads_per_unit * blocks;
  const std::int64_t unit_work =
      static_cast<std::int64_t>(std::min(block, tq)) * tk * (p.dk + p.dv) * heads_per_unit;
  const std::int64_t min_units = kernels::min_items_for(unit_work);
  const int parts = kernels::parallel_parts(units, min_units);
  struct PartBuffers {
    float* scores;
    float* dropped;
    MaskRow mask_row;
    float* kv_tile;  // a float16 cache's widened tile
  };
  std::array<PartBuffers, kernels::kMaxThreads> part_buffers;  // [0, parts) used
  for (int t = 0; t < parts; ++t) {
    PartBuffers& pb = part_buffers[static_cast<std::size_t>(t)];
    pb.scores = tracing ? nullptr : scratch.floats(static_cast<std::size_t>(block) * tk);
    pb.dropped = !tracing && dropout ? scratch.floats(static_cast<std::size_t>(block) * tk) : nullptr;
    pb.mask_row =
        MaskRow{scratch.bytes(static_cast<std::size_t>(tk)), scratch.floats(static_cast<std::size_t>(tk))};
    pb.kv_tile = p.half_kv() ? scratch.floats(static_cast<std::size_t>(kFlashKeyTile) * p.dv) : nullptr;
  }
  kernels::parallel_for_parts(units, parts, [&](int part, std::int64_t u0, std::int64_t u1) {
    const PartBuffers& mine = part_buffers[static_cast<std::size_t>(part)];
    FullBuffers local;  // not tracing: this part's block buffers
    local.block_scores = mine.scores;
    local.block_dropped = mine.dropped;
    local.kept_weights = b.kept_weights;
    FullBuffers& buffers = tracing ? b : local;  // tracing: disjoint ranges of the whole-call buffers
    for (std::int64_t u = u0; u < u1; ++u) {
      const int i0 = static_cast<int>(u % blocks) * block, rows = std::min(block, tq - i0);
      const std::int64_t first = u / blocks * heads_per_unit;
      for (std::int64_t s = first; s < first + heads_per_unit; ++s) {
        const Steps st = block_steps(buffers, tracing, s * per_slice + static_cast<std::int64_t>(i0) * tk);
        full_block(p, s, i0, rows, st, mine.mask_row, mine.kv_tile, tracing, context, ldo, out);
      }
    }
  });
  // 3. The trace, and the weights out of it.
  if (tracing) {
    record_full_trace(trace, p, b, need_weights, out);
    record_context(trace, p, context, ldo);
  }
}

void run_attention(const AttentionProblem& p, bool need_weights, AttentionOutputs& out, Trace* trace) {
  const std::int64_t slices = p.masks.slices();
  // 0. The context destination: the caller's, or out.context laid out like q.
  const int ldo = out.context_out ? (out.ldo > 0 ? out.ldo : p.heads * p.dv) : p.heads * p.dv;
  if (!out.context_out) out.context.resize(static_cast<std::size_t>(slices * p.masks.tq * p.dv));
  float* context = out.context_out ? out.context_out : out.context.data();
  if (uses_tiled_path(p, need_weights, trace != nullptr)) return run_attention_tiled(p, context, ldo);
  run_attention_full(p, need_weights, context, ldo, out, trace);
}

}  // namespace attn
