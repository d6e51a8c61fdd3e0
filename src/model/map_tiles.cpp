// MapSession's maps (map_session.h) from the float16 queries and keys, in tiles: a block of rows'
// scores over their allowed keys is a GEMM of the widened rows of Q and K (the keys widened a chunk
// at a time; at most kBlockScores floats of scores at once), and each row's weights the softmax
// kernel over its allowed keys (exp(s − lse), lse its log-sum-exp). Nothing of size T² is allocated: an
// overview holds its n² cells, a tile its window, a top-k one row.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "core/memory_limit.h"
#include "kernels/kernels.h"
#include "kernels/parallel.h"
#include "model/map_session.h"

namespace attn {

namespace {

constexpr int kTileRows = 64, kKeyChunk = 1024;
constexpr std::uint64_t kBlockScores = 1 << 21;  // a block of rows' scores, at most (floats)

Status invalid(const std::string& what) {
  return Status::Error(StatusCode::kInvalidArgument, what);
}

// The first key row i may read (its window's start, else 0).
int first_key(int i, int window) {
  return window > 0 ? std::max(0, i - window + 1) : 0;
}

// rows (n) of float16 values, each d wide, at stride `stride`, widened into out (n, d).
void widen_rows(const std::uint16_t* src, int stride, int first, int n, int d, float* out) {
  for (int r = 0; r < n; ++r)
    kernels::widen_half(d, src + static_cast<std::int64_t>(first + r) * stride, kernels::HalfFormat::kF16,
                        out + static_cast<std::int64_t>(r) * d);
}

}  // namespace

Status MapSession::head_view(int layer, int head, HeadView& v) const {
  if (!complete()) return invalid("the prefill has not finished: its maps are not ready");
  const auto found =
      std::find_if(layers_.begin(), layers_.end(), [&](const Layer& L) { return L.layer == layer; });
  if (found == layers_.end()) {
    std::string asked;
    for (const Layer& L : layers_) asked += (asked.empty() ? "" : ", ") + std::to_string(L.layer);
    return invalid("layer " + std::to_string(layer) + " was not asked for in prefill's maps.layers [" +
                   asked + "]");
  }
  const MapLayout& m = found->layout;
  if (head < 0 || head >= m.heads)
    return invalid("head " + std::to_string(head) + " is outside [0, " + std::to_string(m.heads) +
                   ") of layer " + std::to_string(layer));
  const Keys& keys = keys_[static_cast<std::size_t>(found->key_slot)];
  const int group = m.heads / m.kv_heads;  // GQA: query head h reads key head h / group
  v.q = found->q.data() + static_cast<std::int64_t>(head) * m.head_dim;
  v.k = keys.k.data() + static_cast<std::int64_t>(head / group) * m.head_dim;
  v.q_stride = m.heads * m.head_dim;
  v.k_stride = keys.kv_heads * m.head_dim;
  v.d = m.head_dim;
  v.window = m.window;
  v.scale = m.scale;
  v.softcap = m.softcap;
  return Status::Ok();
}

// scratch: [Q rows (R, d) | a chunk of K rows (kKeyChunk, d) | weights (R, C)], C = r1 − lo where lo
// is row r0's first key: each row's softmax over its allowed keys (the kernel the forward's softmax
// is), 0 elsewhere.
float* MapSession::weight_block(const HeadView& v, int r0, int r1, std::vector<float>& scratch) {
  const int d = v.d, lo = first_key(r0, v.window);
  const int rows = r1 - r0, cols = r1 - lo;
  scratch.resize(static_cast<std::size_t>(rows) * d + static_cast<std::size_t>(kKeyChunk) * d +
                 static_cast<std::size_t>(rows) * cols);
  float* qf = scratch.data();
  float* kf = qf + static_cast<std::int64_t>(rows) * d;
  float* s = kf + static_cast<std::int64_t>(kKeyChunk) * d;
  widen_rows(v.q, v.q_stride, r0, rows, d, qf);
  for (int k0 = 0; k0 < cols; k0 += kKeyChunk) {  // the keys widened a chunk at a time: O(d) scratch
    const int n = std::min(kKeyChunk, cols - k0);
    widen_rows(v.k, v.k_stride, lo + k0, n, d, kf);
    kernels::gemm_nt(rows, n, d, qf, d, kf, d, s + k0, cols, false);
  }
  for (int r = 0; r < rows; ++r) {
    const int i = r0 + r, first = first_key(i, v.window) - lo, last = i - lo;  // allowed: [first, last]
    float* row = s + static_cast<std::int64_t>(r) * cols;
    for (int c = first; c <= last; ++c) {
      const float x = row[c] * v.scale;
      row[c] = v.softcap > 0 ? v.softcap * std::tanh(x / v.softcap) : x;
    }
    kernels::softmax_row(last - first + 1, row + first, row + first);
    std::fill(row, row + first, 0.0f);
    std::fill(row + last + 1, row + cols, 0.0f);
  }
  return s;
}

// The floats a map's blocks take beside its result: the scores, the widened rows and the cells.
static std::uint64_t scratch_floats(int t, int d) {
  return kBlockScores + static_cast<std::uint64_t>(kTileRows + kKeyChunk) * d +
         2 * static_cast<std::uint64_t>(t);
}

// Rows per block: kTileRows, fewer for a long T so a block's scores stay near 2^21 floats.
static int block_rows(int t) {
  return std::max(1, std::min(kTileRows, static_cast<int>(kBlockScores) / std::max(1, t)));
}

Status MapSession::overview(int layer, int head, bool max_pool, std::vector<float>& out, int& cells) const {
  HeadView v;
  ATTN_RETURN_IF_ERROR(head_view(layer, head, v));
  const int t = length_, n = std::min(t, kMaxOverview);
  // Cell rows in parallel: a part owns whole cell rows (so their query rows), each row in order, and a
  // row's weights do not depend on its block: the same sums, the same bits, at any thread count.
  const auto edge = [&](std::int64_t a) { return static_cast<int>(a * t / n); };
  const std::int64_t work = (static_cast<std::int64_t>(t) / n + 1) * t * v.d;  // one cell row's products
  const int parts = kernels::parallel_parts(n, kernels::min_items_for(work));
  ATTN_RETURN_IF_ERROR(check_allocation(
      static_cast<std::uint64_t>(n) * n * 3 + scratch_floats(t, v.d) * parts, "an attention overview"));
  std::vector<int> cell(static_cast<std::size_t>(t));  // the cell of each position: ⌊a·T/n⌋ ≤ p
  for (int a = 0; a < n; ++a) std::fill(cell.begin() + edge(a), cell.begin() + edge(a + 1), a);
  std::vector<double> acc(static_cast<std::size_t>(n) * n, 0.0);
  kernels::parallel_for_parts(n, parts, [&](int, std::int64_t a0, std::int64_t a1) {
    std::vector<float> scratch;
    const int step = block_rows(t), end = edge(a1);
    for (int r0 = edge(a0); r0 < end; r0 += step) {
      const int r1 = std::min(end, r0 + step), lo = first_key(r0, v.window), cols = r1 - lo;
      const float* w = weight_block(v, r0, r1, scratch);
      for (int r = 0; r < r1 - r0; ++r) {
        const int i = r0 + r;
        double* arow = acc.data() + static_cast<std::int64_t>(cell[i]) * n;
        const float* wrow = w + static_cast<std::int64_t>(r) * cols;
        for (int j = first_key(i, v.window); j <= i; ++j) {  // a masked weight is 0: it changes no cell
          double& c = arow[cell[j]];
          c = max_pool ? std::max(c, static_cast<double>(wrow[j - lo])) : c + wrow[j - lo];
        }
      }
    }
  });
  out.resize(acc.size());
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      const double area = static_cast<double>(edge(a + 1) - edge(a)) * (edge(b + 1) - edge(b));
      const double x = acc[static_cast<std::size_t>(a) * n + b];
      out[static_cast<std::size_t>(a) * n + b] = static_cast<float>(max_pool ? x : x / area);
    }
  cells = n;
  return Status::Ok();
}

Status MapSession::tile(int layer, int head, int r0, int r1, int c0, int c1, std::vector<float>& out) const {
  HeadView v;
  ATTN_RETURN_IF_ERROR(head_view(layer, head, v));
  const int t = length_;
  if (r0 < 0 || r1 > t || r0 >= r1)
    return invalid("rows [" + std::to_string(r0) + ", " + std::to_string(r1) +
                   ") must be a non-empty range in [0, " + std::to_string(t) + ")");
  if (c0 < 0 || c1 > t || c0 >= c1)
    return invalid("cols [" + std::to_string(c0) + ", " + std::to_string(c1) +
                   ") must be a non-empty range in [0, " + std::to_string(t) + ")");
  const std::uint64_t cols = static_cast<std::uint64_t>(c1 - c0);
  if (static_cast<std::uint64_t>(r1 - r0) * cols > kMaxTileCells)  // a long prompt's maps stay in tiles
    return Status::Error(StatusCode::kTooLarge, "a tile of " + std::to_string(r1 - r0) + " × " +
                                                    std::to_string(cols) + " weights is above " +
                                                    std::to_string(kMaxTileCells) +
                                                    ": ask for a smaller window, or an overview");
  ATTN_RETURN_IF_ERROR(check_allocation(static_cast<std::uint64_t>(r1 - r0) * cols + scratch_floats(t, v.d),
                                        "an attention tile"));
  out.assign(static_cast<std::size_t>(r1 - r0) * cols, 0.0f);
  std::vector<float> scratch;
  for (int a = r0; a < r1; a += block_rows(t)) {
    const int b = std::min(r1, a + block_rows(t)), lo = first_key(a, v.window), width = b - lo;
    const float* w = weight_block(v, a, b, scratch);
    const int from = std::max(c0, lo), to = std::min(c1, b);  // the columns these rows may read
    for (int r = 0; r < b - a && from < to; ++r)
      std::copy(w + static_cast<std::int64_t>(r) * width + (from - lo),
                w + static_cast<std::int64_t>(r) * width + (to - lo),
                out.begin() + static_cast<std::int64_t>(a - r0 + r) * cols + (from - c0));
  }
  return Status::Ok();
}

Status MapSession::top_k(int layer, int head, int query, int k, std::vector<int>& index,
                         std::vector<float>& weight) const {
  HeadView v;
  ATTN_RETURN_IF_ERROR(head_view(layer, head, v));
  const int t = length_;
  if (query < 0 || query >= t)
    return invalid("query " + std::to_string(query) + " is outside [0, " + std::to_string(t) + ")");
  if (k < 1 || k > t) return invalid("k must be in [1, " + std::to_string(t) + "], got " + std::to_string(k));
  std::vector<float> scratch, row(static_cast<std::size_t>(t), 0.0f);
  const int lo = first_key(query, v.window);
  const float* w = weight_block(v, query, query + 1, scratch);
  std::copy(w, w + (query + 1 - lo), row.begin() + lo);
  std::vector<int> order(static_cast<std::size_t>(t));
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int a, int b) { return row[a] != row[b] ? row[a] > row[b] : a < b; });
  index.assign(order.begin(), order.begin() + k);
  weight.resize(static_cast<std::size_t>(k));
  for (int i = 0; i < k; ++i) weight[i] = row[static_cast<std::size_t>(index[i])];
  return Status::Ok();
}

}  // namespace attn
