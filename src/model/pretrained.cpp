// PretrainedModel (pretrained.h): the forward pass in numbered steps, the logit lens and the KV
// caches. Loading the checkpoint's tensors is pretrained_load.cpp.
#include "model/pretrained.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "core/attention_engine.h"
#include "core/memory_limit.h"
#include "kernels/kernels.h"
#include "kernels/parallel.h"

namespace attn {

namespace {

Status invalid(const std::string& what) {
  return Status::Error(StatusCode::kInvalidArgument, what);
}

}  // namespace

void PretrainedModel::lens_row(std::int64_t rows, const float* normed, PretrainedForwardResult& r) const {
  const int v = config_.vocab_size, e = config_.hidden;
  const WeightView& head = config_.tie_embeddings ? embed_ : head_;
  std::vector<float> logits(static_cast<std::size_t>(v));  // one position's logits at a time: (V)
  for (std::int64_t i = 0; i < rows; ++i) {
    head.linear(1, normed + i * e, e, nullptr, logits.data(), v);
    scale_logits(v, logits.data());
    if (config_.final_softcap > 0) softcap_row(v, logits.data(), 1.0f, config_.final_softcap);  // Gemma 2
    lens_top(v, logits.data(), r);
  }
}

HookShapes PretrainedModel::hook_shapes() const {
  const PretrainedConfig& c = config_;
  HookShapes s;
  s.width = c.hidden;
  s.pos_embed = learned_positions_;
  for (const Layer& L : layers_) {
    if (L.kind == MixerKind::kDeltaNet) {
      const DeltaNetShape& d = L.delta.shape();  // linear_attn.hook_* (delta_net.h)
      s.layers.push_back(HookShapes::Layer{d.v_heads, d.k_heads, d.k_dim, c.intermediate, L.mlp.gated(), 0,
                                           static_cast<int>(MixerKind::kDeltaNet), d.v_dim});
      continue;
    }
    const MultiHeadAttention& a = L.mixer.attn;  // its sizes: Gemma 4's differ per layer
    const int l = static_cast<int>(&L - layers_.data());
    HookShapes::Layer h{c.heads, a.num_kv_heads(), a.head_dim(), layer_intermediate(c, l), L.mlp.gated()};
    h.per_layer_input = per_layer_.present();
    h.shared_kv = L.kv_from >= 0;
    if (L.kind == MixerKind::kShortConv) {  // conv.hook_*, no attention heads
      h.heads = h.kv_heads = h.head_dim = 0;
      h.conv_channels = c.hidden;
    }
    s.layers.push_back(h);
  }
  return s;
}

Status PretrainedModel::create_caches(int max_length, int batch, DecodeCaches& caches, KvDtype kv) const {
  if (max_length > config_.max_positions)
    return Status::Error(StatusCode::kTooLarge, "a cache of " + std::to_string(max_length) +
                                                    " tokens is above the model's " +
                                                    std::to_string(config_.max_positions) + " positions");
  DecodeCaches made;
  made.max_length = max_length;
  made.batch = batch;
  made.layers.resize(layers_.size());
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const Layer& L = layers_[l];
    switch (L.kind) {
      case MixerKind::kAttention:  // a layer sharing an earlier one's keys and values keeps none
        if (L.kv_from < 0)
          ATTN_RETURN_IF_ERROR(L.mixer.attn.create_cache(max_length, batch, made.layers[l].kv, kv));
        break;
      case MixerKind::kShortConv:  // the last K − 1 rows of B ⊙ X: zeros before the first token
        made.layers[l].state.assign(L.conv.state_size(batch), 0.0f);
        made.layers[l].next_state.assign(L.conv.state_size(batch), 0.0f);
        break;
      case MixerKind::kDeltaNet:  // the conv's last inputs and S per sequence (delta_net.h), zero
        made.layers[l].state.assign(static_cast<std::size_t>(batch * L.delta.shape().state_floats()), 0.0f);
        made.layers[l].next_state = made.layers[l].state;
        break;
    }
  }
  caches = std::move(made);
  return Status::Ok();
}

// The checks of a forward's input and options, and its memory (TOO_LARGE before anything is allocated).
Status PretrainedModel::check_forward(const Pass& p, const std::vector<std::int32_t>& ids,
                                      const PretrainedForwardOptions& o, bool cached) const {
  const PretrainedConfig& c = config_;
  const std::vector<TensorKey> missing = this->missing();
  if (!missing.empty()) return invalid("the checkpoint is missing tensor " + missing.front().label());
  if (p.b < 1 || p.t < 1 || static_cast<std::int64_t>(p.b) * p.t != static_cast<std::int64_t>(ids.size()))
    return Status::Error(StatusCode::kShapeMismatch, "ids must be a non-empty (B, T) batch");
  if (p.p0 + p.t > c.max_positions)
    return Status::Error(StatusCode::kTooLarge, "T = " + std::to_string(p.p0 + p.t) +
                                                    " is above the model's " +
                                                    std::to_string(c.max_positions) + " positions");
  for (std::int32_t id : ids)
    if (id < 0 || id >= c.vocab_size)
      return invalid("token id " + std::to_string(id) + " is outside [0, " + std::to_string(c.vocab_size) +
                     ")");
  const std::int64_t n = p.n;
  const int e = c.hidden, b = p.b, t = p.t;
  if (o.mask) return invalid("a mask is TinyTransformer's option: a pretrained model runs its own masks");
  if (o.hooks && cached && o.from_stream()) return invalid("startAt runs without KV caches");
  ATTN_RETURN_IF_ERROR(check_hooks(o, t));
  const std::int64_t logit_rows = o.logits_row >= 0 ? b : n;  // logits_row: one position per sequence
  int widest = c.intermediate;
  for (int l = 0; l < c.layers; ++l) widest = std::max(widest, layer_intermediate(c, l));
  std::uint64_t need = static_cast<std::uint64_t>(n) * (6 * e + 2 * widest) +
                       static_cast<std::uint64_t>(logit_rows) * c.vocab_size;
  need += static_cast<std::uint64_t>(n) * 2 * c.layers * c.per_layer_width;  // Gemma 4's per-layer inputs
  need += static_cast<std::uint64_t>(o.attention_layers.size()) * b * c.heads * t * t;
  if (o.hidden_states) need += static_cast<std::uint64_t>(n) * e * (c.layers + 1);
  if (o.logit_lens) need += static_cast<std::uint64_t>(n) * 2 * (c.layers + 1) + c.vocab_size;
  if (c.conv_kernel > 0) need += static_cast<std::uint64_t>(n) * 5 * e;  // a short convolution's buffers
  const Status mem = check_allocation(need, "the pretrained forward");
  if (!mem.ok())
    return Status::Error(StatusCode::kTooLarge, mem.message + " (ask for fewer layers: attention: [layers])");
  return Status::Ok();
}

// 1. x (N, E) = the token embeddings (× embed_scale, Gemma) + the learned positions (GPT-2).
void PretrainedModel::embed(const Pass& p, const std::vector<std::int32_t>& ids, const HookRun* hooks,
                            std::vector<float>& x, std::vector<float>& positions) const {
  const PretrainedConfig& c = config_;
  const int e = c.hidden;
  for (std::int64_t r = 0; r < p.n; ++r) {
    embed_rows_.widen_row(ids[static_cast<std::size_t>(r)], x.data() + r * e);
    if (c.embed_scale != 1)
      kernels::scale_vec(e, x.data() + r * e, c.embed_scale, x.data() + r * e);  // Gemma 3: × √hidden
  }
  if (hooks) hooks->stream(HookKind::kEmbed, -1, x.data(), e);
  if (!learned_positions_) return;
  positions.resize(static_cast<std::size_t>(p.n) * e);  // the learned positions' rows: (N, E)
  for (std::int64_t r = 0; r < p.n; ++r)
    positions_.widen_row(static_cast<int>(p.p0 + r % p.t), positions.data() + r * e);
  if (hooks) hooks->stream(HookKind::kPosEmbed, -1, positions.data(), e);
  kernels::add_vec(static_cast<int>(p.n * e), x.data(), positions.data(), x.data());
}

// 2a. Layer l's token mixer on `in` (N, E), the attention's input as normed (or the stream itself):
//     softmax attention through its KV cache while decoding; its (B, H, T, T) weights where asked.
Status PretrainedModel::token_mixer(int l, const Pass& p, const PretrainedForwardOptions& o,
                                    const std::vector<float>& in, PretrainedForwardResult& result,
                                    DecodeCaches* caches) {
  const Layer& L = layers_[l];
  MhaResult& r = work_.attention;
  switch (L.kind) {
    case MixerKind::kAttention: {
      MhaForwardOptions mo = L.mixer.options;
      mo.need_weights =
          std::find(o.attention_layers.begin(), o.attention_layers.end(), l) != o.attention_layers.end();
      mo.hooks = o.hooks ? o.hooks->attention(l) : nullptr;
      Tensor& query = work_.query;  // (B, T, E): assign keeps its buffer
      query.shape.assign({p.b, p.t, config_.hidden});
      query.data.assign(in.begin(), in.end());
      const bool traced = std::find(o.trace_layers.begin(), o.trace_layers.end(), l) != o.trace_layers.end();
      Trace* trace = traced ? &result.traces[l] : nullptr;
      // Keys and values: an earlier layer's (Gemma 4's shared K/V), read from its cache; the caches'
      // while decoding; a forward without caches keeps those later layers read (make_shared_caches).
      std::vector<KvCache>& kept = work_.shared_kv;
      if (L.kv_from >= 0) {
        const KvCache& source = caches ? caches->layers[L.kv_from].kv : kept[L.kv_from];
        ATTN_RETURN_IF_ERROR(L.mixer.attn.forward_shared(query, source, mo, r, trace));
      } else if (caches || L.kv_kept) {
        ATTN_RETURN_IF_ERROR(
            L.mixer.attn.forward_cached(query, caches ? caches->layers[l].kv : kept[l], mo, r, trace));
      } else {
        ATTN_RETURN_IF_ERROR(L.mixer.attn.forward(query, nullptr, nullptr, mo, r, trace));
      }
      if (mo.need_weights) result.attention[l] = std::move(r.weights);
      return Status::Ok();
    }
    case MixerKind::kDeltaNet:
      return delta_mixer(l, p, o, in, result, caches);
    case MixerKind::kShortConv: {
      const bool map =
          std::find(o.attention_layers.begin(), o.attention_layers.end(), l) != o.attention_layers.end();
      if (map && caches)
        return invalid("layer " + std::to_string(l) +
                       " is a short convolution: its mixing map comes from a forward without caches");
      r.output.shape.assign({p.b, p.t, config_.hidden});
      r.output.data.resize(static_cast<std::size_t>(p.n) * config_.hidden);
      LayerCache* lc = caches ? &caches->layers[l] : nullptr;
      L.conv.forward(p.b, p.t, in.data(), r.output.data.data(), lc ? lc->state.data() : nullptr,
                     lc ? &lc->next_state : nullptr, work_.conv, map ? &result.attention[l] : nullptr,
                     o.hooks, l);
      return Status::Ok();
    }
  }
  return invalid("layer " + std::to_string(l) + ": unknown token mixer");
}

// 2. Block l: x += s · post_attn(mixer(norm1(x))); x += s · post_ff(mlp(norm2(x))), each norm where
//    the architecture has it (Llama: the pre-norms; OLMo 2: the post-norms; Gemma: both), s the
//    layer's branch scale (Granite's residual_multiplier, else 1).
Status PretrainedModel::block(int l, const Pass& p, const PretrainedForwardOptions& o,
                              PretrainedForwardResult& result, DecodeCaches* caches) {
  const PretrainedConfig& c = config_;
  std::vector<float>&x = work_.x, &h = work_.h, &out = work_.out;
  const std::int64_t n = p.n;
  const int e = c.hidden, xs = static_cast<int>(x.size());
  Layer& L = layers_[l];
  const HookRun* hooks = o.hooks;
  if (hooks) hooks->stream(HookKind::kResidPre, l, x.data(), e);
  if (L.attn_norm.present()) L.attn_norm.forward(n, x.data(), h.data());
  ATTN_RETURN_IF_ERROR(token_mixer(l, p, o, L.attn_norm.present() ? h : x, result, caches));
  float* attn_out = work_.attention.output.data.data();
  if (hooks)
    hooks->stream(L.kind == MixerKind::kShortConv ? HookKind::kConvResult : HookKind::kAttnResult, l,
                  attn_out, e);
  if (L.post_attn_norm.present()) {
    L.post_attn_norm.forward(n, attn_out, h.data());
    attn_out = h.data();
  }
  if (L.branch_scale != 1) kernels::scale_vec(xs, attn_out, L.branch_scale, attn_out);  // Granite
  if (hooks) hooks->stream(HookKind::kAttnOut, l, attn_out, e);
  kernels::add_vec(xs, x.data(), attn_out, x.data());
  if (hooks) hooks->stream(HookKind::kResidMid, l, x.data(), e);
  const float* mlp_in = x.data();
  if (L.mlp_norm.present()) {
    L.mlp_norm.forward(n, x.data(), h.data());
    mlp_in = h.data();
  }
  L.mlp.forward(n, mlp_in, out.data(), work_.mlp_a, work_.mlp_u, nullptr, nullptr, hooks, l);
  float* mlp_out = out.data();
  if (hooks) hooks->stream(HookKind::kMlpResult, l, mlp_out, e);
  if (L.post_mlp_norm.present()) {
    L.post_mlp_norm.forward(n, out.data(), h.data());
    mlp_out = h.data();
  }
  if (L.branch_scale != 1) kernels::scale_vec(xs, mlp_out, L.branch_scale, mlp_out);  // Granite
  if (hooks) hooks->stream(HookKind::kMlpOut, l, mlp_out, e);
  kernels::add_vec(xs, x.data(), mlp_out, x.data());
  if (per_layer_.present()) {  // Gemma 4: the per-layer input's branch, added after the MLP's
    per_layer_.branch(l, n, x.data(), work_.per_layer, work_.per_layer_g, work_.per_layer_y, out.data());
    if (hooks) hooks->stream(HookKind::kPerLayerOut, l, out.data(), e);
    kernels::add_vec(xs, x.data(), out.data(), x.data());
  }
  if (!L.output_scale.data.empty())  // Gemma 4's layer_output_scale: the whole stream
    kernels::scale_vec(xs, x.data(), L.output_scale.data[0], x.data());
  if (hooks) hooks->stream(HookKind::kResidPost, l, x.data(), e);
  return Status::Ok();
}

void PretrainedModel::scale_logits(int n, float* logits) const {
  const float s = config_.logits_scaling;
  if (s != 1)
    for (int i = 0; i < n; ++i) logits[i] /= s;
}

// 3. logits (N, V) = h · W_headᵀ (the embedding when tied) ÷ logits_scaling (Granite), h the final
//    norm's output; with logits_row, one position per sequence: (B, 1, V).
void PretrainedModel::head_logits(const Pass& p, const PretrainedForwardOptions& o,
                                  const std::vector<float>& h, std::vector<float>& picked,
                                  PretrainedForwardResult& result) const {
  const PretrainedConfig& c = config_;
  const int e = c.hidden, b = p.b, t = p.t;
  const WeightView& head = c.tie_embeddings ? embed_ : head_;
  Tensor& logits = result.logits;  // assign / resize keep the buffer of a result reused
  if (o.logits_row >= 0) {
    rows_at(h.data(), b, t, e, o.logits_row, picked);  // (B, E)
    logits.shape.assign({b, 1, c.vocab_size});
    logits.data.resize(static_cast<std::size_t>(b) * c.vocab_size);
    head.linear(b, picked.data(), e, nullptr, logits.data.data(), c.vocab_size);
  } else {
    logits.shape.assign({b, t, c.vocab_size});
    logits.data.resize(static_cast<std::size_t>(p.n) * c.vocab_size);
    head.linear(static_cast<int>(p.n), h.data(), e, nullptr, logits.data.data(), c.vocab_size);
  }
  scale_logits(static_cast<int>(logits.data.size()), logits.data.data());
  if (c.final_softcap > 0 && !o.pre_cap_logits)
    softcap_row(static_cast<int>(result.logits.data.size()), result.logits.data.data(), 1.0f,
                c.final_softcap);
}

Status PretrainedModel::forward(int b, int t, const std::vector<std::int32_t>& ids,
                                const PretrainedForwardOptions& o, PretrainedForwardResult& result,
                                DecodeCaches* caches) {
  const PretrainedConfig& c = config_;
  if (caches && caches->layers.size() != layers_.size()) return invalid("one cache per layer is needed");
  if (caches && b != caches->batch)
    return Status::Error(StatusCode::kShapeMismatch, "the caches hold " + std::to_string(caches->batch) +
                                                         " sequences, the ids " + std::to_string(b));
  if (caches && caches->length + t > caches->max_length)
    return Status::Error(StatusCode::kTooLarge, "the caches hold " + std::to_string(caches->max_length) +
                                                    " tokens: " + std::to_string(caches->length) + " + " +
                                                    std::to_string(t) + " do not fit");
  Pass p;
  p.b = b;
  p.t = t;
  p.p0 = caches ? caches->length : 0;  // the position of row 0
  p.n = static_cast<std::int64_t>(b) * t;
  p.from_residual = o.from_stream();
  // A call that fails after some layers appended leaves every cache as it found it (the recurrent
  // states are only swapped in when it succeeds).
  struct Restore {
    DecodeCaches* caches;
    int length;
    bool done = false;
    ~Restore() {
      if (!caches) return;
      if (done) {
        caches->length = length;
        for (LayerCache& c : caches->layers)
          if (!c.next_state.empty()) std::swap(c.state, c.next_state);
        return;
      }
      for (LayerCache& c : caches->layers) c.kv.length = length;
    }
  } restore{caches, p.p0};
  // The buffers are kept for the next step only while decoding (a whole-sequence forward frees them).
  struct Release {
    PretrainedModel* model;
    ~Release() {
      if (model) model->release_workspace();
    }
  } release{caches ? nullptr : this};
  ATTN_RETURN_IF_ERROR(check_forward(p, ids, o, caches != nullptr));
  const int e = c.hidden;
  std::vector<float>&x = work_.x, &h = work_.h;
  x.resize(static_cast<std::size_t>(p.n) * e);  // x, h, out: (N, E)
  h.resize(x.size());
  work_.out.resize(x.size());
  ATTN_RETURN_IF_ERROR(begin_stream(p, ids, o, caches != nullptr));
  result.attention.assign(static_cast<std::size_t>(c.layers), Tensor());
  result.traces.assign(static_cast<std::size_t>(c.layers), Trace());
  result.hidden_states.clear();
  result.lens_ids.clear();
  result.lens_probs.clear();
  // After the embeddings and each block but the last: the hidden state and the logit lens (the
  // stream through the final norm and the head).
  const auto keep = [&](const std::vector<float>& stream) {
    if (p.from_residual) return;
    if (o.hidden_states) result.hidden_states.emplace_back(Shape{b, t, e}, stream);
    if (!o.logit_lens) return;
    final_norm_.forward(p.n, stream.data(), h.data());
    lens_row(p.n, h.data(), result);
  };
  keep(x);
  for (int l = o.start_layer(); l < c.layers; ++l) {
    ATTN_RETURN_IF_ERROR(block(l, p, o, result, caches));
    if (l + 1 < c.layers) keep(x);
  }
  final_norm_.forward(p.n, x.data(), h.data());
  if (o.hooks) o.hooks->stream(HookKind::kFinalNormalized, -1, h.data(), e);
  if (o.hidden_states && !p.from_residual) result.hidden_states.emplace_back(Shape{b, t, e}, h);
  head_logits(p, o, h, work_.picked, result);
  if (o.logit_lens) lens_row(p.n, h.data(), result);  // the last row: the model's own prediction
  ATTN_RETURN_IF_ERROR(check_computed(result.logits.data.data(), result.logits.data.size(),
                                      "the pretrained forward: the logits"));
  restore.length = p.p0 + p.t;
  restore.done = true;
  return Status::Ok();
}

}  // namespace attn
