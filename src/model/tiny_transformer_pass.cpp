// TinyTransformer's forward and backward passes (tiny_transformer.h has the computation).
// Every sublayer is a residual unit: pre: y = x + f(LN(x)); post: y = LN(x + f(x)); none: y = x + f(x).
// The forward keeps, per unit, its input x, the sublayer's input u and the sum s, which is all the
// backward needs:  pre:  du = f'(dy), dx = dy + LN'(x, du);  post: ds = LN'(s, dy), dx = ds + f'(ds);
//                  none: dx = dy + f'(dy).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/memory_limit.h"
#include "core/softmax_backward.h"
#include "kernels/kernels.h"
#include "kernels/parallel.h"
#include "model/layers.h"
#include "model/tiny_transformer.h"

namespace attn {

namespace {
constexpr float kLayerNormEps = 1e-5f;
}  // namespace

// The buffers of one pass, kept by the model between calls so that a training step reuses them
// instead of allocating (and zero-filling) a few MB every step. Sizes follow the batch.
struct TinyWorkspace {
  struct Unit {                  // one residual unit, rows (N, d) each
    std::vector<float> x, u, s;  // unit input, sublayer input, residual sum
    int ln = -1;                 // index of its LayerNorm weight (bias at ln + 1), -1 without
  };
  struct LayerState {
    Unit attn, mlp;
    MhaSaved saved;           // what the attention's backward needs
    std::vector<float> h, g;  // (N, hidden) fc1 output and its GELU
    std::vector<float> cdf;   // (N, hidden) Φ(h), kept for the backward when training
  };
  std::vector<LayerState> layers;
  std::vector<float> x;                // (N, d) the residual stream
  std::vector<float> xf;               // (N, d) after ln_f (pre) or the stream itself
  std::vector<float> u, out, ds, du;   // (N, d) one unit's temporaries
  std::vector<float> dg;               // (N, hidden) the MLP's backward temporary
  std::vector<float> logits, dlogits;  // (N, V)
  std::vector<float> dx, dy;           // (N, d) the backward's stream gradient
};

std::shared_ptr<TinyWorkspace> make_workspace() {
  return std::make_shared<TinyWorkspace>();
}

struct TinyPass {
  using Unit = TinyWorkspace::Unit;
  using LayerState = TinyWorkspace::LayerState;

  TinyTransformer& m;
  const TinyConfig& c;
  const IdBatch& ids;
  bool grads;  // keep what the backward needs
  std::int64_t n;
  int d;
  TinyWorkspace& ws;
  std::vector<LayerState>& layers;
  std::vector<float>& x;
  std::vector<float>& xf;

  TinyPass(TinyTransformer& model, const IdBatch& batch, bool keep)
      : m(model),
        c(model.config_),
        ids(batch),
        grads(keep),
        n(std::int64_t{batch.b} * batch.t),
        d(c.d_model),
        ws(*model.workspace_),
        layers(ws.layers),
        x(ws.x),
        xf(ws.xf) {
    layers.resize(static_cast<std::size_t>(c.num_layers));
  }

  const float* param(const std::string& name) const { return m.params_[m.index_of(name)].data.data(); }
  std::string block(int l) const { return "blocks." + std::to_string(l) + "."; }

  void layer_norm(int ln, const float* in, float* out) const {
    const float* w = m.params_[ln].data.data();
    const float* b = m.params_[ln + 1].data.data();
    kernels::parallel_items(n, 8 * d, [&](std::int64_t r0, std::int64_t r1) {  // rows are independent
      for (std::int64_t r = r0; r < r1; ++r)
        kernels::layer_norm_row(d, in + r * d, w, b, kLayerNormEps, out + r * d);
    });
  }

  // 1. x (N, d) = tok_emb[ids] (+ pos_emb[t] or the sinusoidal table); hook_embed, hook_pos_embed
  void embed(const HookRun* hooks) {
    x.resize(static_cast<std::size_t>(n) * d);
    embedding_forward(n, ids.data.data(), param("tok_emb.weight"), d, x.data());
    if (hooks) hooks->stream(HookKind::kEmbed, -1, x.data(), d);
    const float* pos = c.positional == PositionalKind::kLearned      ? param("pos_emb.weight")
                       : c.positional == PositionalKind::kSinusoidal ? m.sinusoid_.data.data()
                                                                     : nullptr;
    if (!pos) return;
    if (hooks && hooks->wants(HookKind::kPosEmbed, -1)) {  // the positions of every row, (N, d)
      std::vector<float>& rows = ws.out;
      rows.resize(x.size());
      for (int bi = 0; bi < ids.b; ++bi)
        std::copy(pos, pos + static_cast<std::int64_t>(ids.t) * d,
                  rows.begin() + static_cast<std::int64_t>(bi) * ids.t * d);
      hooks->stream(HookKind::kPosEmbed, -1, rows.data(), d);
      kernels::add_vec(static_cast<int>(x.size()), x.data(), rows.data(), x.data());
      return;
    }
    for (int bi = 0; bi < ids.b; ++bi) {
      float* rows = x.data() + static_cast<std::int64_t>(bi) * ids.t * d;
      kernels::add_vec(ids.t * d, rows, pos, rows);
    }
  }

  // 2. One residual unit around f(u (N, d), out (N, d)), updating the stream x in place; `branch`
  //    and `after`: the hooks on the branch as added and on the stream after the unit (layer l).
  template <class F>
  Status unit_forward(Unit& unit, F&& f, const HookRun* hooks = nullptr, int l = -1,
                      HookKind branch = HookKind::kAttnOut, HookKind after = HookKind::kResidMid) {
    std::vector<float>& u = grads ? unit.u : ws.u;  // kept for the backward only when it runs
    u = x;
    if (c.norm == NormKind::kPre) layer_norm(unit.ln, x.data(), u.data());
    ws.out.resize(x.size());
    ATTN_RETURN_IF_ERROR(f(u, ws.out));
    if (hooks) hooks->stream(branch, l, ws.out.data(), d);
    if (grads) unit.x = x;
    kernels::add_vec(static_cast<int>(x.size()), x.data(), ws.out.data(), x.data());
    if (grads) unit.s = x;
    if (c.norm == NormKind::kPost) layer_norm(unit.ln, x.data(), x.data());
    if (hooks) hooks->stream(after, l, x.data(), d);
    return Status::Ok();
  }

  Status attention(int l, std::vector<float>& u, std::vector<float>& out, const ForwardOptions* o,
                   ForwardResult* result) {
    // The query borrows u's buffer for the call (no copy) and hands it back.
    Tensor query({ids.b, ids.t, d}, std::move(u));
    const Status st = attention_of(l, query, out, o, result);
    u = std::move(query.data);
    return st;
  }

  Status attention_of(int l, const Tensor& query, std::vector<float>& out, const ForwardOptions* o,
                      ForwardResult* result) {
    MhaForwardOptions options;
    options.causal = c.causal;
    options.positions.alibi_paper = c.positional == PositionalKind::kAlibi;
    if (c.window > 0) options.positions.window = c.window;
    options.need_weights = false;
    MhaResult r;
    if (grads) {
      ATTN_RETURN_IF_ERROR(m.attn_[l].forward_saving(query, nullptr, nullptr, options, r, layers[l].saved));
    } else {
      const auto wants = [l](const std::vector<int>& list) {
        return std::find(list.begin(), list.end(), l) != list.end();
      };
      options.need_weights = o && wants(o->attention_layers);
      options.mask = o ? o->mask : nullptr;
      options.average_weights = false;
      options.hooks = o && o->hooks ? o->hooks->attention(l) : nullptr;
      Trace* trace = o && wants(o->trace_layers) ? &result->traces[l] : nullptr;
      ATTN_RETURN_IF_ERROR(m.attn_[l].forward(query, nullptr, nullptr, options, r, trace));
      if (options.need_weights) result->attention[l] = std::move(r.weights);
      if (o && o->hooks) o->hooks->stream(HookKind::kAttnResult, l, r.output.data.data(), d);
    }
    out.swap(r.output.data);
    return Status::Ok();
  }

  // mlp(u) = fc2(GELU(fc1(u))): h (N, hidden), g (N, hidden)
  Status mlp(int l, const std::vector<float>& u, std::vector<float>& out, const HookRun* hooks = nullptr) {
    const int hid = c.mlp_hidden;
    LayerState& L = layers[l];
    L.h.resize(static_cast<std::size_t>(n) * hid);
    L.g.resize(L.h.size());
    const std::string p = block(l) + "mlp.";
    kernels::linear_nt(static_cast<int>(n), hid, d, u.data(), d, param(p + "fc1.weight"), d,
                       param(p + "fc1.bias"), L.h.data(), hid);
    if (hooks) hooks->stream(HookKind::kMlpPre, l, L.h.data(), hid);
    if (grads) L.cdf.resize(L.h.size());
    gelu_forward(static_cast<std::int64_t>(L.h.size()), L.h.data(), L.g.data(),
                 grads ? L.cdf.data() : nullptr);
    if (hooks) hooks->stream(HookKind::kMlpPost, l, L.g.data(), hid);
    kernels::linear_nt(static_cast<int>(n), d, hid, L.g.data(), hid, param(p + "fc2.weight"), hid,
                       param(p + "fc2.bias"), out.data(), d);
    return Status::Ok();
  }

  // The stream through ln_f (pre-norm) or as it is (post-norm, none): out (N, d).
  void final_norm(const std::vector<float>& stream, std::vector<float>& out) const {
    out = stream;
    if (c.norm == NormKind::kPre) layer_norm(m.index_of("ln_f.weight"), stream.data(), out.data());
  }

  // The head's logits (rows, V) of `rows` rows of normed (rows, d).
  void head(int rows, const float* normed, float* logits) const {
    kernels::linear_nt(rows, c.vocab_size, d, normed, d, param("head.weight"), d, param("head.bias"), logits,
                       c.vocab_size);
  }

  // The logit lens of normed rows (N, d): each row's top token and its probability.
  void lens(const std::vector<float>& normed, ForwardResult& r) const {
    std::vector<float> row(static_cast<std::size_t>(c.vocab_size));  // one position's logits: (V)
    for (std::int64_t i = 0; i < n; ++i) {
      head(1, normed.data() + i * d, row.data());
      lens_top(c.vocab_size, row.data(), r);
    }
  }

  // After the embeddings and each block but the last: the hidden state and the logit lens.
  void keep(const ForwardOptions* o, ForwardResult* result) {
    if (!o || o->from_stream()) return;
    if (o->hidden_states) result->hidden_states.emplace_back(Shape{ids.b, ids.t, d}, x);
    if (!o->logit_lens) return;
    final_norm(x, ws.u);
    lens(ws.u, *result);
  }

  // One block: the attention unit, then the MLP unit, with their hook points.
  Status block_forward(int l, const ForwardOptions* o, ForwardResult* result) {
    LayerState& L = layers[l];
    const HookRun* hooks = o ? o->hooks : nullptr;
    if (hooks) hooks->stream(HookKind::kResidPre, l, x.data(), d);
    const bool norm = c.norm != NormKind::kNone;
    L.attn.ln = norm ? m.index_of(block(l) + "ln1.weight") : -1;
    ATTN_RETURN_IF_ERROR(unit_forward(
        L.attn,
        [&](std::vector<float>& u, std::vector<float>& out) { return attention(l, u, out, o, result); },
        hooks, l, HookKind::kAttnOut, c.mlp ? HookKind::kResidMid : HookKind::kResidPost));
    if (!c.mlp) return Status::Ok();
    L.mlp.ln = norm ? m.index_of(block(l) + "ln2.weight") : -1;
    return unit_forward(
        L.mlp,
        [&](const std::vector<float>& u, std::vector<float>& out) {
          ATTN_RETURN_IF_ERROR(mlp(l, u, out, hooks));
          if (hooks) hooks->stream(HookKind::kMlpResult, l, out.data(), d);
          return Status::Ok();
        },
        hooks, l, HookKind::kMlpOut, HookKind::kResidPost);
  }

  // 1.–4. embeddings (or startAt's stream), layers, ln_f, head → logits (N, V), or (B, V)
  //       with logits_row.
  Status forward(std::vector<float>& logits, const ForwardOptions* o, ForwardResult* result) {
    m.sync_attention();
    if (o) ATTN_RETURN_IF_ERROR(check_hooks(*o, ids.t));
    if (o && o->from_stream())
      x = *o->hooks->start_stream();
    else
      embed(o ? o->hooks : nullptr);
    if (result) {
      result->hidden_states.clear();
      result->lens_ids.clear();
      result->lens_probs.clear();
    }
    keep(o, result);
    for (int l = o ? o->start_layer() : 0; l < c.num_layers; ++l) {
      ATTN_RETURN_IF_ERROR(block_forward(l, o, result));
      if (l + 1 < c.num_layers) keep(o, result);
    }
    final_norm(x, xf);
    if (o && o->hooks && c.norm == NormKind::kPre)
      o->hooks->stream(HookKind::kFinalNormalized, -1, xf.data(), d);
    if (o && o->hidden_states) result->hidden_states.emplace_back(Shape{ids.b, ids.t, d}, xf);
    if (o && o->logit_lens) lens(xf, *result);  // the last row: the model's own prediction
    if (o && o->logits_row >= 0) {
      const std::vector<float> picked = rows_at(xf.data(), ids.b, ids.t, d, o->logits_row);
      logits.resize(static_cast<std::size_t>(ids.b) * c.vocab_size);
      head(ids.b, picked.data(), logits.data());
      return Status::Ok();
    }
    logits.resize(static_cast<std::size_t>(n) * c.vocab_size);
    head(static_cast<int>(n), xf.data(), logits.data());
    return Status::Ok();
  }

  float* grad(std::vector<Tensor>& g, const std::string& name) const {
    return g[m.index_of(name)].data.data();
  }

  // LN' of rows `in` at LayerNorm `ln`: dx (N, d) += or = LN'(in, dy); its parameter grads added.
  void layer_norm_backward(std::vector<Tensor>& g, int ln, const float* in, const float* dy, float* dx,
                           bool accumulate) const {
    layer_norm_backward_rows(n, d, in, m.params_[ln].data.data(), kLayerNormEps, dy, dx, accumulate,
                             g[ln].data.data(), g[ln + 1].data.data());
  }

  // The unit's backward (header comment): dy (N, d) in, dx (N, d) out, in place.
  template <class FBack>
  Status unit_backward(const Unit& unit, std::vector<float>& dy, std::vector<Tensor>& g, FBack&& fback) {
    std::vector<float>& du = ws.du;
    if (c.norm == NormKind::kPost) {
      std::vector<float>& ds = ws.ds;
      ds.resize(dy.size());
      layer_norm_backward(g, unit.ln, unit.s.data(), dy.data(), ds.data(), false);
      ATTN_RETURN_IF_ERROR(fback(unit.u, ds, du));
      kernels::add_vec(static_cast<int>(dy.size()), ds.data(), du.data(), dy.data());
      return Status::Ok();
    }
    ATTN_RETURN_IF_ERROR(fback(unit.u, dy, du));
    if (c.norm == NormKind::kPre)
      layer_norm_backward(g, unit.ln, unit.x.data(), du.data(), dy.data(), true);
    else
      kernels::add_vec(static_cast<int>(dy.size()), dy.data(), du.data(), dy.data());
    return Status::Ok();
  }

  Status attention_backward(int l, const std::vector<float>& dy, std::vector<float>& du,
                            std::vector<Tensor>& g) {
    MhaGrads mg;
    Tensor grad_out({ids.b, ids.t, d}, std::move(ws.dy));  // a reused buffer, handed back below
    grad_out.data.assign(dy.begin(), dy.end());
    const Status st = m.attn_[l].backward(layers[l].saved, grad_out, mg);
    ws.dy = std::move(grad_out.data);
    ATTN_RETURN_IF_ERROR(st);
    for (const auto& [name, t] : mg.params) {
      float* to = grad(g, block(l) + "attn." + name);
      kernels::add_vec(static_cast<int>(t.data.size()), to, t.data.data(), to);
    }
    du.swap(mg.query.data);
    return Status::Ok();
  }

  void mlp_backward(int l, const std::vector<float>& u, const std::vector<float>& dy, std::vector<float>& du,
                    std::vector<Tensor>& g) {
    const int hid = c.mlp_hidden;
    const LayerState& L = layers[l];
    const std::string p = block(l) + "mlp.";
    std::vector<float>& dg = ws.dg;  // (N, hidden): dg, then dh in place
    dg.resize(L.h.size());
    linear_backward(static_cast<int>(n), hid, d, L.g.data(), hid, param(p + "fc2.weight"), dy.data(), d,
                    dg.data(), hid, false, grad(g, p + "fc2.weight"), grad(g, p + "fc2.bias"));
    gelu_backward_from_cdf(static_cast<std::int64_t>(dg.size()), L.h.data(), L.cdf.data(), dg.data(),
                           dg.data());
    du.resize(dy.size());
    linear_backward(static_cast<int>(n), d, hid, u.data(), d, param(p + "fc1.weight"), dg.data(), hid,
                    du.data(), d, false, grad(g, p + "fc1.weight"), grad(g, p + "fc1.bias"));
  }

  // 5.–8. head, ln_f, layers in reverse, embeddings: every parameter's gradient into g.
  Status backward(const std::vector<float>& dlogits, std::vector<Tensor>& g) {
    std::vector<float>& dx = ws.dx;  // (N, d) d loss / d stream
    dx.resize(static_cast<std::size_t>(n) * d);
    linear_backward(static_cast<int>(n), d, c.vocab_size, xf.data(), d, param("head.weight"), dlogits.data(),
                    c.vocab_size, dx.data(), d, false, grad(g, "head.weight"), grad(g, "head.bias"));
    if (c.norm == NormKind::kPre) {
      ws.ds = dx;
      layer_norm_backward(g, m.index_of("ln_f.weight"), x.data(), ws.ds.data(), dx.data(), false);
    }
    for (int l = c.num_layers - 1; l >= 0; --l) {
      if (c.mlp) {
        ATTN_RETURN_IF_ERROR(unit_backward(
            layers[l].mlp, dx, g,
            [&](const std::vector<float>& u, const std::vector<float>& dy, std::vector<float>& du) {
              mlp_backward(l, u, dy, du, g);
              return Status::Ok();
            }));
      }
      ATTN_RETURN_IF_ERROR(
          unit_backward(layers[l].attn, dx, g,
                        [&](const std::vector<float>&, const std::vector<float>& dy, std::vector<float>& du) {
                          return attention_backward(l, dy, du, g);
                        }));
    }
    embedding_backward(n, ids.data.data(), dx.data(), d, grad(g, "tok_emb.weight"));
    if (c.positional == PositionalKind::kLearned) {
      float* dpos = grad(g, "pos_emb.weight");
      for (int bi = 0; bi < ids.b; ++bi)
        kernels::add_vec(ids.t * d, dpos, dx.data() + static_cast<std::int64_t>(bi) * ids.t * d, dpos);
    }
    return Status::Ok();
  }
};

Status TinyTransformer::run(const IdBatch& ids, const IdBatch* targets, const ForwardOptions* options,
                            ForwardResult* result, float* loss, std::vector<Tensor>* grads) {
  ATTN_RETURN_IF_ERROR(check_batch(ids, targets));
  const std::uint64_t rows = static_cast<std::uint64_t>(ids.b) * ids.t, d = config_.d_model;
  const std::uint64_t tt = static_cast<std::uint64_t>(ids.t) * ids.t * config_.num_heads;
  const std::uint64_t per_layer = rows * d * 12 + rows * config_.mlp_hidden * 3 + ids.b * tt * 2;
  ATTN_RETURN_IF_ERROR(check_allocation(rows * d * 4 + config_.num_layers * per_layer +
                                            rows * config_.vocab_size * 2 + (grads ? parameter_count() : 0),
                                        "TinyTransformer"));
  TinyPass pass(*this, ids, grads != nullptr);
  if (result) {
    result->attention.assign(static_cast<std::size_t>(config_.num_layers), Tensor());
    result->traces.assign(static_cast<std::size_t>(config_.num_layers), Trace());
  }
  std::vector<float>& logits = workspace_->logits;  // (N, V)
  ATTN_RETURN_IF_ERROR(pass.forward(logits, options, result));
  ATTN_RETURN_IF_ERROR(check_computed(logits.data(), logits.size(), "TinyTransformer: the logits"));
  const int logit_rows = options && options->logits_row >= 0 ? 1 : ids.t;  // logits_row: one per sequence
  if (result) result->logits = Tensor({ids.b, logit_rows, config_.vocab_size}, logits);
  if (!targets) return Status::Ok();
  std::vector<float>& dlogits = workspace_->dlogits;
  dlogits.resize(grads ? logits.size() : 0);
  ATTN_RETURN_IF_ERROR(cross_entropy(pass.n, config_.vocab_size, logits.data(), targets->data.data(), *loss,
                                     grads ? dlogits.data() : nullptr));
  // Finite logits can still give an infinite loss (logsumexp − logit beyond float32): refuse it.
  if (!std::isfinite(*loss))
    return Status::Error(StatusCode::kNonFinite, "TinyTransformer: the loss overflowed float32");
  if (!grads) return Status::Ok();
  zero_gradients(*grads);
  return pass.backward(dlogits, *grads);
}

// grads: one zero tensor per parameter, reusing the caller's buffers when they already fit.
void TinyTransformer::zero_gradients(std::vector<Tensor>& grads) const {
  bool fits = grads.size() == params_.size();
  for (std::size_t k = 0; fits && k < grads.size(); ++k) fits = grads[k].shape == params_[k].shape;
  if (!fits) {
    grads.clear();
    for (const Tensor& p : params_) grads.push_back(Tensor::zeros(p.shape));
    return;
  }
  for (Tensor& t : grads) std::fill(t.data.begin(), t.data.end(), 0.0f);
}

Status TinyTransformer::forward(const IdBatch& ids, const ForwardOptions& options, ForwardResult& result) {
  return run(ids, nullptr, &options, &result, nullptr, nullptr);
}

Status TinyTransformer::loss(const IdBatch& ids, const IdBatch& targets, float& loss) {
  return run(ids, &targets, nullptr, nullptr, &loss, nullptr);
}

Status TinyTransformer::gradients(const IdBatch& ids, const IdBatch& targets, float& loss,
                                  std::vector<Tensor>& grads) {
  return run(ids, &targets, nullptr, nullptr, &loss, &grads);
}

}  // namespace attn
