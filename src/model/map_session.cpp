// MapSession (map_session.h): the chunked prefill that keeps each asked layer's queries and keys in
// float16, and the layers' layouts. The maps computed from them are map_tiles.cpp.
#include "model/map_session.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "core/memory_limit.h"
#include "kernels/kernels.h"

namespace attn {

namespace {

Status invalid(const std::string& what) {
  return Status::Error(StatusCode::kInvalidArgument, what);
}

const char* mixer_name(int mixer) {
  return mixer == static_cast<int>(MixerKind::kShortConv)  ? "a short convolution (LFM2)"
         : mixer == static_cast<int>(MixerKind::kDeltaNet) ? "a gated DeltaNet (Qwen3.5)"
                                                           : "not softmax attention";
}

std::string hook(int layer, const char* point) {
  return "blocks." + std::to_string(layer) + ".attn." + point;
}

// Appends a captured (1, t, heads, d) float32 tensor to a float16 store.
void append_half(const Tensor& captured, std::vector<std::uint16_t>& store) {
  const std::size_t at = store.size();
  store.resize(at + captured.data.size());
  kernels::narrow_f16(static_cast<std::int64_t>(captured.data.size()), captured.data.data(),
                      store.data() + at);
}

}  // namespace

MapLayout PretrainedModel::map_layout(int l) const {
  const Layer& L = layers_[static_cast<std::size_t>(l)];
  MapLayout m;
  m.mixer = static_cast<int>(L.kind);
  if (L.kind != MixerKind::kAttention) return m;
  const MultiHeadAttention& a = L.mixer.attn;
  m.heads = a.config().num_heads;
  m.kv_heads = a.num_kv_heads();
  m.head_dim = a.head_dim();
  // The forward's scale: the family's, else 1/√d as float (multi_head.cpp)
  m.scale = L.mixer.options.scale ? *L.mixer.options.scale : 1.0f / std::sqrt(static_cast<float>(m.head_dim));
  m.softcap = L.mixer.options.softcap;
  m.window = L.mixer.options.positions.window.value_or(0);
  m.kv_from = L.kv_from >= 0 ? L.kv_from : l;
  return m;
}

std::uint64_t MapSession::state_bytes(const PretrainedModel& model, const std::vector<int>& layers,
                                      int total) {
  std::uint64_t values = 0;
  std::vector<int> key_layers;
  for (int l : layers) {
    const MapLayout m = model.map_layout(l);
    values += static_cast<std::uint64_t>(m.heads) * m.head_dim;
    if (std::find(key_layers.begin(), key_layers.end(), m.kv_from) == key_layers.end()) {
      key_layers.push_back(m.kv_from);
      values += static_cast<std::uint64_t>(m.kv_heads) * m.head_dim;
    }
  }
  return values * static_cast<std::uint64_t>(total) * 2;
}

Status MapSession::begin(const PretrainedModel& model, const std::vector<int>& layers, int total,
                         MapSession& out) {
  const PretrainedConfig& c = model.config();
  if (total < 1) return invalid("a prefill needs at least one token");
  if (total > c.max_positions)
    return Status::Error(StatusCode::kTooLarge, "a prefill of " + std::to_string(total) +
                                                    " tokens: the model takes 1 to " +
                                                    std::to_string(c.max_positions));
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const int l = layers[i];
    if (l < 0 || l >= c.layers)
      return invalid("maps: layer " + std::to_string(l) + " is outside [0, " + std::to_string(c.layers) +
                     ")");
    if (std::find(layers.begin(), layers.begin() + static_cast<std::ptrdiff_t>(i), l) !=
        layers.begin() + static_cast<std::ptrdiff_t>(i))
      return invalid("maps: layer " + std::to_string(l) + " is listed twice");
    const MapLayout m = model.map_layout(l);
    if (m.mixer != static_cast<int>(MixerKind::kAttention))
      return invalid("maps: layer " + std::to_string(l) + " is " + mixer_name(m.mixer) +
                     ", not softmax attention: it has no map of queries and keys");
  }
  const std::uint64_t bytes = state_bytes(model, layers, total);
  ATTN_RETURN_IF_ERROR(check_allocation((bytes + 3) / 4, "the attention maps' state"));
  MapSession s;
  ATTN_RETURN_IF_ERROR(model.create_caches(total, 1, s.caches_));
  for (int l : layers) {
    Layer L;
    L.layer = l;
    L.layout = model.map_layout(l);
    L.q.reserve(static_cast<std::size_t>(total) * L.layout.heads * L.layout.head_dim);
    auto found = std::find_if(s.keys_.begin(), s.keys_.end(),
                              [&](const Keys& k) { return k.layer == L.layout.kv_from; });
    if (found == s.keys_.end()) {
      Keys k{L.layout.kv_from, L.layout.kv_heads, L.layout.head_dim, {}};
      k.k.reserve(static_cast<std::size_t>(total) * k.kv_heads * k.head_dim);
      s.keys_.push_back(std::move(k));
      found = s.keys_.end() - 1;
    }
    L.key_slot = static_cast<int>(found - s.keys_.begin());
    s.layers_.push_back(std::move(L));
  }
  s.total_ = total;
  out = std::move(s);
  return Status::Ok();
}

Status MapSession::step(PretrainedModel& model, const std::vector<std::int32_t>& ids) {
  const int t = static_cast<int>(ids.size());
  if (caches_.empty()) return invalid("the prefill is complete: no rows may follow");
  if (t < 1 || t > total_ - length_)
    return invalid("a chunk of " + std::to_string(t) + " rows after " + std::to_string(length_) + " of " +
                   std::to_string(total_));
  HookRequest request;
  for (const Layer& L : layers_) request.capture.push_back(hook(L.layer, "hook_rot_q"));
  for (const Keys& k : keys_) request.capture.push_back(hook(k.layer, "hook_rot_k"));
  std::unique_ptr<HookRun> run;
  if (!request.empty())
    ATTN_RETURN_IF_ERROR(
        HookRun::create(request, model.hook_shapes(), 1, t, length_, model.config().max_positions, run));
  ForwardOptions o;
  o.hooks = run.get();
  o.logits_row = t - 1;  // (1, 1, V): a chunk's other rows' logits are never read
  ForwardResult r;
  ATTN_RETURN_IF_ERROR(model.forward(1, t, ids, o, r, &caches_));
  if (run) {
    std::vector<std::pair<std::string, Tensor>> captured = run->take_captures();
    for (std::size_t i = 0; i < layers_.size(); ++i) append_half(captured[i].second, layers_[i].q);
    for (std::size_t i = 0; i < keys_.size(); ++i)
      append_half(captured[layers_.size() + i].second, keys_[i].k);
  }
  length_ += t;
  if (length_ == total_) {  // what the maps need is kept; the caches and the forward's buffers go
    logits_ = std::move(r.logits.data);
    caches_.clear();
    model.release_workspace();
  }
  return Status::Ok();
}

std::uint64_t MapSession::bytes() const {
  std::uint64_t n = 0;
  for (const Layer& L : layers_) n += L.q.capacity() * 2;
  for (const Keys& k : keys_) n += k.k.capacity() * 2;
  return n;
}

}  // namespace attn
