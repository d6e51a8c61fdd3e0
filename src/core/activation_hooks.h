// Where a caller may read or change an activation inside one multi-head attention call (the model's
// hook points, src/model/hooks.h, reach the attention through this interface: the core knows no hook
// names, only the points of its own computation). A call with hooks runs exactly the computation it
// runs without them; a hook that writes back what it read leaves every bit of the result unchanged.
#pragma once
#include <cstdint>

namespace attn {

// The points, in the order the forward passes them: the projections after their bias (before any
// q/k norm and RoPE), q and k after the q/k norm and RoPE, the scaled and masked scores before the
// softmax, the softmax weights, and each head's context (the concat the output projection reads).
enum class AttnPoint { kQ, kK, kV, kRotQ, kRotK, kScores, kPattern, kZ, kCount };

// A strided (B, T, heads, d) activation: element (b, t, h, i) is at
// data[(b · rows_per_batch + t) · ld + h · d + i]; row t of batch b sits at absolute position t0 + t.
struct HeadsView {
  float* data = nullptr;
  int b = 0, t = 0, heads = 0, d = 0;
  int ld = 0;              // floats between consecutive rows
  int rows_per_batch = 0;  // rows between consecutive batch items (≥ t)
  std::int64_t t0 = 0;
};

// Rows [row0, row0 + rows) of one (batch, head) slice of the scores or weights, each row tk keys
// (row stride tk); row r is the query at absolute position t0 + r.
struct ScoresBlock {
  float* data = nullptr;
  int batch = 0, head = 0, row0 = 0, rows = 0, tk = 0;
  std::int64_t t0 = 0;
};

// The caller's side. heads() is called on the calling thread; scores() from the thread pool's
// workers, each block of rows once, disjoint blocks at once (an implementation writes only where
// the block says). Neither may allocate or fail: whatever can fail is checked before the call.
class AttentionHooks {
 public:
  virtual ~AttentionHooks() = default;
  // Whether anything reads or changes the point (the forward skips the work otherwise; kScores or
  // kPattern make the engine take its full path, which gives the tiled path's bits).
  virtual bool wants(AttnPoint point) const = 0;
  virtual void heads(AttnPoint point, const HeadsView& view) const = 0;
  virtual void scores(AttnPoint point, const ScoresBlock& block) const = 0;
};

}  // namespace attn
