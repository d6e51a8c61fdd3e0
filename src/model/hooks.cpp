// HookRun (hooks.h): one forward's captures and edits, checked and allocated before the forward runs,
// applied where the model passes each point.
#include "model/hooks.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "core/memory_limit.h"
#include "model/hooks_internal.h"

namespace attn {

namespace {

Status invalid(const std::string& what) {
  return Status::Error(StatusCode::kInvalidArgument, what);
}

std::int64_t product(const Shape& s) {
  std::int64_t n = 1;
  for (std::int64_t v : s) n *= v;
  return n;
}

bool listed(const std::vector<int>& list, std::int64_t v) {
  return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
}

void write(bool add, int n, const float* src, float* dst) {
  if (!add) {
    std::memcpy(dst, src, sizeof(float) * static_cast<std::size_t>(n));
    return;
  }
  for (int i = 0; i < n; ++i) dst[i] += src[i];
}

}  // namespace

// One edit as it applies: whole (the pass's full shape) or a value repeated at each position.
struct Resolved {
  const HookEdit* edit;
  bool whole;
  std::int64_t size;  // values in the edit
};

struct HookRun::Point {
  std::vector<Resolved> edits;
  int capture = -1;  // index into captures_
  bool any() const { return capture >= 0 || !edits.empty(); }
};

class HookRun::LayerAttention : public AttentionHooks {
 public:
  LayerAttention(const HookRun* run, int layer) : run_(run), layer_(layer) {}
  bool wants(AttnPoint p) const override { return run_->point(kind(p), layer_).any(); }
  void heads(AttnPoint p, const HeadsView& v) const override { run_->apply(run_->point(kind(p), layer_), v); }
  void scores(AttnPoint p, const ScoresBlock& s) const override {
    run_->apply_scores(run_->point(kind(p), layer_), s);
  }

 private:
  // AttnPoint lists q … z in HookKind's order.
  static HookKind kind(AttnPoint p) {
    return static_cast<HookKind>(static_cast<int>(HookKind::kQ) + static_cast<int>(p));
  }
  const HookRun* run_;
  int layer_;
};

HookRun::HookRun() = default;
HookRun::~HookRun() = default;

const HookRun::Point& HookRun::point(HookKind kind, int layer) const {
  return points_[static_cast<std::size_t>(layer + 1) * static_cast<int>(HookKind::kCount) +
                 static_cast<int>(kind)];
}

HookRun::Point& HookRun::point(HookKind kind, int layer) {
  return points_[static_cast<std::size_t>(layer + 1) * static_cast<int>(HookKind::kCount) +
                 static_cast<int>(kind)];
}

bool HookRun::wants(HookKind kind, int layer) const {
  return point(kind, layer).any();
}

const AttentionHooks* HookRun::attention(int layer) const {
  for (int k = static_cast<int>(HookKind::kQ); k <= static_cast<int>(HookKind::kZ); ++k)
    if (point(static_cast<HookKind>(k), layer).any())
      return attention_[static_cast<std::size_t>(layer)].get();
  return nullptr;
}

void HookRun::stream(HookKind kind, int layer, float* data, int width) const {
  const Point& p = point(kind, layer);
  if (p.any()) apply(p, HeadsView{data, b_, t_, 1, width, width, t_, t0_});
}

void HookRun::whole(HookKind kind, int layer, const float* data) const {
  const Point& p = point(kind, layer);
  if (p.capture < 0) return;
  Tensor& c = captures_[static_cast<std::size_t>(p.capture)].second;
  std::copy_n(data, c.data.size(), c.data.data());
}

std::vector<std::pair<std::string, Tensor>> HookRun::take_captures() {
  return std::move(captures_);
}

// The whole shape of a hook over this pass: (B, T, …) or the scores' (B, H, T, T).
static Shape whole_shape(const HookShapes& s, const HookId& id, int b, int t) {
  const Shape p = hook_position_shape(s, id);
  if (is_score_hook(id.kind)) return {b, p[0], t, t};
  Shape out = id.kind == HookKind::kDeltaState ? Shape{b} : Shape{b, t};  // the state: no time axis
  out.insert(out.end(), p.begin(), p.end());
  return out;
}

Status HookRun::add_capture(const std::string& name) {
  std::vector<HookId> ids;
  const std::string star = "blocks.*.";
  if (name.compare(0, star.size(), star) == 0) {
    for (int l = 0; l < static_cast<int>(shapes_.layers.size()); ++l) {
      HookId id;
      if (parse_hook("blocks." + std::to_string(l) + "." + name.substr(star.size()), shapes_, id).ok())
        ids.push_back(id);
    }
    if (ids.empty()) return invalid("capture \"" + name + "\" matches no hook of this model");
  } else {
    HookId id;
    ATTN_RETURN_IF_ERROR(parse_hook(name, shapes_, id));
    ids.push_back(id);
  }
  for (const HookId& id : ids) {
    // A step on caches has the rows of its own positions only (the maps' prefill captures q and k
    // chunk by chunk); its scores and weights are not the whole (T, T) ones
    if (t0_ > 0 && is_score_hook(id.kind))
      return invalid("capture of \"" + hook_name(id) + "\": a step on caches captures no scores or weights");
    if (id.layer >= 0 && id.layer < start_layer_)
      return invalid("capture \"" + hook_name(id) + "\" comes before startAt");
    Point& p = point(id.kind, id.layer);
    if (p.capture >= 0) continue;  // asked for twice
    p.capture = static_cast<int>(captures_.size());
    const Shape shape = whole_shape(shapes_, id, b_, t_);
    captures_.emplace_back(hook_name(id), Tensor(shape, std::vector<float>()));
  }
  return Status::Ok();
}

Status HookRun::add_edit(std::size_t index, std::int64_t max_position) {
  const HookEdit& e = (*edits_)[index];
  HookId id;
  ATTN_RETURN_IF_ERROR(parse_hook(e.hook, shapes_, id));
  const std::string what = "edit of \"" + e.hook + "\"";
  if (static_cast<std::int64_t>(e.value.size()) != product(e.value_shape) || e.value.empty())
    return Status::Error(StatusCode::kShapeMismatch, what + ": value has " + std::to_string(e.value.size()) +
                                                         " values for shape " +
                                                         shape_to_string(e.value_shape));
  // The scores hold −∞ where the masks take a key away: a value of the scores may too.
  const bool scores = id.kind == HookKind::kScores;
  for (float v : e.value)
    if (!std::isfinite(v) && !(scores && v == -INFINITY))
      return Status::Error(StatusCode::kNonFinite, what + ": value holds NaN or Infinity");
  if (id.layer >= 0 && id.layer < start_layer_) return invalid(what + " comes before startAt");
  if (id.kind == HookKind::kDeltaState) return invalid(what + ": the final state is captured only");
  if (t0_ > 0 && is_score_hook(id.kind))
    return invalid(what + ": a decoding step takes no edit of the scores or the pattern (their keys grow)");
  const Shape whole = whole_shape(shapes_, id, b_, t_);
  const Shape per_position = hook_position_shape(shapes_, id);
  bool is_whole = e.value_shape == whole, suffix = false;
  if (is_score_hook(id.kind)) {
    suffix = e.value_shape == Shape{static_cast<int>(t0_ + t_)};  // one row of keys
  } else {
    for (std::size_t k = 0; k < per_position.size() && !suffix; ++k)
      suffix =
          e.value_shape == Shape(per_position.begin() + static_cast<std::ptrdiff_t>(k), per_position.end());
  }
  if (!is_whole && !suffix)
    return Status::Error(StatusCode::kShapeMismatch, what + ": value shape " +
                                                         shape_to_string(e.value_shape) +
                                                         " is neither the hook's " + shape_to_string(whole) +
                                                         " nor its shape at one position");
  if (t0_ > 0 && is_whole)
    return invalid(what + ": a decoding step takes edits over one position's axes only (a vector)");
  for (int pos : e.positions)
    if (pos < 0 || pos >= max_position)
      return invalid(what + ": position " + std::to_string(pos) + " is outside [0, " +
                     std::to_string(max_position) + ")");
  if (!e.heads.empty() && !is_head_hook(id.kind))
    return invalid(what + ": heads apply to attention hooks only");
  const int heads = per_position[0];
  for (int h : e.heads)
    if (h < 0 || h >= heads)
      return invalid(what + ": head " + std::to_string(h) + " is outside [0, " + std::to_string(heads) + ")");
  point(id.kind, id.layer).edits.push_back(Resolved{&e, is_whole, product(e.value_shape)});
  return Status::Ok();
}

Status HookRun::create(const HookRequest& r, const HookShapes& shapes, int b, int t, std::int64_t t0,
                       std::int64_t max_position, std::unique_ptr<HookRun>& out) {
  auto run = std::make_unique<HookRun>();
  HookRun& h = *run;
  h.shapes_ = shapes;
  h.b_ = b;
  h.t_ = t;
  h.t0_ = t0;
  const int layers = static_cast<int>(shapes.layers.size());
  h.points_.resize(static_cast<std::size_t>(layers + 1) * static_cast<int>(HookKind::kCount));
  h.edits_ = &r.edits;  // the points refer to the request's edits: no value is copied
  int start_edit = -1;
  if (!r.start_at.empty()) {
    HookId id;
    ATTN_RETURN_IF_ERROR(parse_hook(r.start_at, shapes, id));
    if (id.kind != HookKind::kResidPre)
      return invalid("startAt must be a blocks.{l}.hook_resid_pre, got \"" + r.start_at + "\"");
    if (t0 > 0) return invalid("startAt is run()'s: a decoding step starts at the embeddings");
    for (std::size_t i = 0; i < r.edits.size() && start_edit < 0; ++i) {
      const HookEdit& e = r.edits[i];
      if (e.hook == r.start_at && !e.add && e.value_shape == whole_shape(shapes, id, b, t) &&
          e.positions.empty())
        start_edit = static_cast<int>(i);
    }
    if (start_edit < 0)
      return invalid("startAt \"" + r.start_at + "\" needs a set of that hook with its whole shape " +
                     shape_to_string(whole_shape(shapes, id, b, t)) + " at every position");
    h.start_layer_ = id.layer;
  }
  for (const std::string& name : r.capture) ATTN_RETURN_IF_ERROR(h.add_capture(name));
  for (std::size_t i = 0; i < r.edits.size(); ++i)
    if (static_cast<int>(i) != start_edit) ATTN_RETURN_IF_ERROR(h.add_edit(i, max_position));
  if (start_edit >= 0) {
    const HookEdit& e = r.edits[static_cast<std::size_t>(start_edit)];
    if (static_cast<std::int64_t>(e.value.size()) != product(e.value_shape))
      return Status::Error(StatusCode::kShapeMismatch,
                           "edit of \"" + e.hook + "\": value has " + std::to_string(e.value.size()) +
                               " values for shape " + shape_to_string(e.value_shape));
    if (!std::all_of(e.value.begin(), e.value.end(), [](float v) { return std::isfinite(v); }))
      return Status::Error(StatusCode::kNonFinite, "edit of \"" + e.hook + "\": value holds NaN or Infinity");
    h.start_stream_ = &e.value;
  }
  std::uint64_t floats = 0;
  for (const auto& [name, tensor] : h.captures_) floats += static_cast<std::uint64_t>(product(tensor.shape));
  ATTN_RETURN_IF_ERROR(check_allocation(floats, "the captured activations"));
  for (auto& [name, tensor] : h.captures_)
    tensor.data.assign(static_cast<std::size_t>(product(tensor.shape)), 0.0f);
  for (int l = 0; l < layers; ++l) h.attention_.push_back(std::make_unique<LayerAttention>(&h, l));
  out = std::move(run);
  return Status::Ok();
}

// Edits in the order given, then the capture, over a (B, T, heads, d) view.
void HookRun::apply(const Point& p, const HeadsView& v) const {
  for (const Resolved& r : p.edits) {
    const HookEdit& e = *r.edit;
    for (int bi = 0; bi < v.b; ++bi)
      for (int t = 0; t < v.t; ++t) {
        if (!listed(e.positions, v.t0 + t)) continue;
        for (int h = 0; h < v.heads; ++h) {
          if (!listed(e.heads, h)) continue;
          float* dst = v.data + (static_cast<std::int64_t>(bi) * v.rows_per_batch + t) * v.ld +
                       static_cast<std::int64_t>(h) * v.d;
          const std::int64_t at = r.whole ? ((static_cast<std::int64_t>(bi) * v.t + t) * v.heads + h) * v.d
                                  : r.size == v.d ? 0
                                                  : static_cast<std::int64_t>(h) * v.d;
          write(e.add, v.d, e.value.data() + at, dst);
        }
      }
  }
  if (p.capture < 0) return;
  float* out = captures_[static_cast<std::size_t>(p.capture)].second.data.data();
  for (int bi = 0; bi < v.b; ++bi)
    for (int t = 0; t < v.t; ++t)
      for (int h = 0; h < v.heads; ++h)
        std::memcpy(out + ((static_cast<std::int64_t>(bi) * v.t + t) * v.heads + h) * v.d,
                    v.data + (static_cast<std::int64_t>(bi) * v.rows_per_batch + t) * v.ld +
                        static_cast<std::int64_t>(h) * v.d,
                    sizeof(float) * static_cast<std::size_t>(v.d));
}

// The same over a block of score rows of one (batch, head); a capture is (B, H, T, T_k).
void HookRun::apply_scores(const Point& p, const ScoresBlock& s) const {
  for (int r = 0; r < s.rows; ++r) {
    const int row = s.row0 + r;
    float* dst = s.data + static_cast<std::int64_t>(r) * s.tk;
    for (const Resolved& res : p.edits) {
      const HookEdit& e = *res.edit;
      if (!listed(e.positions, s.t0 + row) || !listed(e.heads, s.head)) continue;
      const int h = static_cast<int>(e.value_shape.size() == 4 ? e.value_shape[1] : 0);
      const std::int64_t at =
          res.whole ? ((static_cast<std::int64_t>(s.batch) * h + s.head) * t_ + row) * s.tk : 0;
      write(e.add, s.tk, e.value.data() + at, dst);
    }
    if (p.capture < 0) continue;
    Tensor& c = captures_[static_cast<std::size_t>(p.capture)].second;
    float* out =
        c.data.data() + ((static_cast<std::int64_t>(s.batch) * c.shape[1] + s.head) * t_ + row) * s.tk;
    std::memcpy(out, dst, sizeof(float) * static_cast<std::size_t>(s.tk));
  }
}

}  // namespace attn
