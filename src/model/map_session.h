// Attention maps of a long prompt without its (T, T) weights: a prefill in chunks over the model's
// decoding caches keeps, for each layer asked for, the post-RoPE (post-q/k-norm, × any query
// temperature) queries and keys in float16 — O(L·T·d) — and the last row's logits. Every map is
// computed afterwards from them in tiles with each row's log-sum-exp, under the layer's own masks
// (causal, its sliding window, the soft-cap, the scale, GQA's head groups, Gemma 4's per-layer head
// sizes and shared keys): an overview pooled to at most kMaxOverview² cells, an exact tile, a row's
// top k. Nothing of size T² or T·V is ever allocated.
//
// A query row i of head h reads key head h / (H / H_kv); its allowed keys are j ≤ i and, with a
// window w, j > i − w. Its weights are exp(s_ij − lse_i) with s = cap(scale · q·k) (cap(x) = c·tanh(x/c)
// where the layer has a soft-cap) and lse_i = log Σ_allowed exp(s_ij): the softmax of the forward.
// Short-convolution (LFM2) and DeltaNet (Qwen3.5) layers are refused by name: their mixing is not a
// softmax over scores of queries and keys.
#pragma once
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "model/pretrained.h"

namespace attn {

// Layer l's softmax attention as a map needs it (PretrainedModel::map_layout).
struct MapLayout {
  int mixer = 0;  // MixerKind's value: maps exist for 0 (softmax attention) only
  int heads = 0, kv_heads = 0, head_dim = 0;
  float scale = 1, softcap = 0;
  int window = 0;   // 0 = every earlier key
  int kv_from = 0;  // the layer whose keys it reads (itself unless Gemma 4 shares them)
};

class MapSession {
 public:
  static constexpr int kMaxOverview = 512;                 // cells on each side of an overview, at most
  static constexpr std::uint64_t kMaxTileCells = 1 << 22;  // weights of a tile, at most (2048 × 2048)
  // Checks `layers` (each an attention layer of the model, no repeats) and total (1 ≤ total ≤
  // max_positions), then the memory of the caches and the map state (TOO_LARGE) before allocating.
  static Status begin(const PretrainedModel& model, const std::vector<int>& layers, int total,
                      MapSession& out);
  // The bytes the map state of `layers` takes for `total` tokens (float16 queries and keys).
  static std::uint64_t state_bytes(const PretrainedModel& model, const std::vector<int>& layers, int total);
  // The next rows of the one sequence (ids.size() ≥ 1, not past total): a forward over the caches
  // capturing the rows' queries and keys. The last chunk keeps its last row's logits and drops the
  // caches. A failed step leaves the session as it was (the caches too).
  Status step(PretrainedModel& model, const std::vector<std::int32_t>& ids);
  int length() const { return length_; }
  int total() const { return total_; }
  bool complete() const { return length_ == total_ && total_ > 0; }
  const std::vector<float>& logits() const { return logits_; }  // (V), once complete
  std::uint64_t bytes() const;                                  // the map state held

  // The maps (a complete session; INVALID_ARGUMENT for a layer not asked for, a head or range out of
  // bounds). out is written whole.
  // Pooled overview of (layer, head): n = min(T, kMaxOverview) cells a side; cell (a, b) the max or
  // the mean of the weights of rows [⌊a·T/n⌋, ⌊(a+1)·T/n⌋) and columns [⌊b·T/n⌋, ⌊(b+1)·T/n⌋).
  Status overview(int layer, int head, bool max_pool, std::vector<float>& out, int& cells) const;
  // The exact weights of rows [r0, r1) × columns [c0, c1), row-major; TOO_LARGE past kMaxTileCells.
  Status tile(int layer, int head, int r0, int r1, int c0, int c1, std::vector<float>& out) const;
  // The k largest weights of query row `query` over every column (masked ones weigh 0), largest first
  // (ties: the smaller column first).
  Status top_k(int layer, int head, int query, int k, std::vector<int>& index,
               std::vector<float>& weight) const;

 private:
  struct Layer {
    int layer = 0, key_slot = 0;
    MapLayout layout;
    std::vector<std::uint16_t> q;  // (T, H, d) float16
  };
  struct Keys {
    int layer = 0, kv_heads = 0, head_dim = 0;
    std::vector<std::uint16_t> k;  // (T, H_kv, d) float16
  };
  // One head's view for the tiles (map_tiles.cpp).
  struct HeadView {
    const std::uint16_t* q = nullptr;  // row i at q + i · q_stride
    const std::uint16_t* k = nullptr;  // row j at k + j · k_stride
    int q_stride = 0, k_stride = 0, d = 0, window = 0;
    float scale = 1, softcap = 0;
  };
  Status head_view(int layer, int head, HeadView& v) const;
  // The weights of rows [r0, r1) over the keys [lo, r1), lo row r0's first key: (r1 − r0, r1 − lo)
  // in the scratch, 0 where masked (map_tiles.cpp).
  static float* weight_block(const HeadView& v, int r0, int r1, std::vector<float>& scratch);
  std::vector<Layer> layers_;
  std::vector<Keys> keys_;
  DecodeCaches caches_;
  std::vector<float> logits_;
  int length_ = 0, total_ = 0;
};

}  // namespace attn
