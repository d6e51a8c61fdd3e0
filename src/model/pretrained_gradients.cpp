// PretrainedModel::metric_gradients (pretrained.h, metric_gradients.h): the forward keeping only the
// stream entering each block, then the backward block by block in reverse, each block's activations
// recomputed from its saved input (MultiHeadAttention::forward_saving on the frozen views), so the
// memory is the L + 1 streams and one block's activations. Every product with a weight (Wᵀ·g) reads
// the stored matrix in its own format (WeightView::linear_backward_input); the element-wise steps run
// in double, serially; the GEMMs and the attention backward split over the pool with the same bits at
// any thread count.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/memory_limit.h"
#include "core/softmax_backward.h"
#include "kernels/kernels.h"
#include "model/pretrained.h"

namespace attn {

// The streams the forward kept: inputs[l] (N, E) entering block l, inputs[L] after the last block;
// final the last block's output through the final norm (hidden state L).
struct PretrainedModel::GradRun {
  std::vector<std::vector<float>> inputs;
  std::vector<float> final;
};

// One block's activations, rows (N, ·): what the attention's backward needs, its output (kept only
// for a post-norm), x1 = the stream after the attention branch, the MLP's input and pre-activations
// a (GPT-2: up(x) + b; else gate(x)) and u (up(x)), (N, I), and its output m_out (post-norm or
// activations only).
struct PretrainedModel::BlockState {
  MhaSaved saved;
  ShortConvWork conv;           // a short-convolution layer's buffers (its bcx and B ⊙ X)
  std::vector<float> delta_in;  // a DeltaNet layer's input (its backward recomputes the rest)
  std::vector<float> attn_out, x1, m_in, a, u, m_out;
  std::vector<float> m_out_branch_for_activations;  // the branch as added, with activations
};

namespace {

Status invalid(const std::string& what) {
  return Status::Error(StatusCode::kInvalidArgument, what);
}

}  // namespace

namespace {

// Floats a metric_gradients call needs beyond the weights: the streams and their gradients, z, the MLP
// branches, one block's activations, the attention gradients and activations asked for.
std::uint64_t gradient_floats(const PretrainedConfig& c, int b, int t, const GradientOptions& o) {
  const std::uint64_t n = static_cast<std::uint64_t>(b) * t, ne = n * c.hidden;
  const std::uint64_t zw = n * c.heads * c.head_dim, layers = static_cast<std::uint64_t>(c.layers);
  std::uint64_t need = 2 * (layers + 2) * ne + layers * (zw + ne);
  need += n * (8 * static_cast<std::uint64_t>(c.hidden) + 4 * static_cast<std::uint64_t>(c.intermediate)) +
          4 * zw;
  if (o.attention) need += layers * b * c.heads * static_cast<std::uint64_t>(t) * t;
  // a DeltaNet layer's backward: its recomputed rows and their gradients (delta_net_backward.cpp)
  const std::uint64_t dc =
      2ull * c.linear_k_heads * c.linear_k_dim + 1ull * c.linear_v_heads * c.linear_v_dim;
  need += n * (6 * dc + 2ull * c.linear_v_heads * c.linear_k_dim);
  if (o.activations) need += (2 * layers + 1) * ne + layers * zw;
  return need;
}

// Floats one block's kept activations take (BlockState).
std::uint64_t block_state_floats(const PretrainedConfig& c, std::int64_t n) {
  const std::uint64_t qk = static_cast<std::uint64_t>(c.heads) * c.head_dim,
                      kv = static_cast<std::uint64_t>(c.kv_heads) * c.head_dim;
  return static_cast<std::uint64_t>(n) * (8 * static_cast<std::uint64_t>(c.hidden) + 3 * qk + 3 * kv +
                                          2 * static_cast<std::uint64_t>(c.intermediate));
}

}  // namespace

Status PretrainedModel::check_gradients(const Pass& p, const std::vector<std::int32_t>& ids,
                                        const GradientOptions& o) const {
  const PretrainedConfig& c = config_;
  if (c.per_layer_width > 0 || c.layer_scale || c.v_norm || !c.layer_head_dim.empty() ||
      !c.layer_kv_heads.empty() || !c.layer_intermediate.empty() ||
      std::any_of(c.layer_kv_from.begin(), c.layer_kv_from.end(), [](int from) { return from >= 0; }))
    return invalid(
        "metric gradients: the backward does not yet cover per-layer inputs, shared keys and values, the "
        "value "
        "norm, layer output scales or per-layer head sizes (Gemma 4)");
  ATTN_RETURN_IF_ERROR(check_forward(p, ids, ForwardOptions{}, false));
  ATTN_RETURN_IF_ERROR(check_metric(o.metric, p.t, c.vocab_size));
  if (!o.start_embedding.empty() && o.start_embedding.size() != static_cast<std::uint64_t>(p.n) * c.hidden)
    return invalid("start_embedding must be (B, T, hidden)");
  return check_allocation(gradient_floats(c, p.b, p.t, o), "the pretrained model's metric gradients");
}

// 3′. The head: M's value per sequence and dx (N, E), the gradient of the final norm's input
// (only each sequence's `position` row is non-zero); grad_hidden[L] = ∂M/∂ the final norm's output.
void PretrainedModel::head_backward(const GradRun& run, const Pass& p, const GradientOptions& o,
                                    GradientResult& r, std::vector<float>& dx) const {
  const PretrainedConfig& c = config_;
  const int e = c.hidden, v = c.vocab_size, pos = o.metric.position < 0 ? p.t - 1 : o.metric.position;
  const WeightView& head = c.tie_embeddings ? embed_ : head_;
  const std::vector<float> picked = rows_at(run.final.data(), p.b, p.t, e, pos);  // (B, E)
  std::vector<float> logits(static_cast<std::size_t>(p.b) * v), dlogits(logits.size());
  head.linear(p.b, picked.data(), e, nullptr, logits.data(), v);
  scale_logits(static_cast<int>(logits.size()), logits.data());  // ÷ logits_scaling (Granite)
  r.values.resize(static_cast<std::size_t>(p.b));
  for (int i = 0; i < p.b; ++i)
    r.values[i] = metric_value_and_grad(o.metric, v, logits.data() + static_cast<std::size_t>(i) * v,
                                        c.final_softcap, dlogits.data() + static_cast<std::size_t>(i) * v);
  scale_logits(static_cast<int>(dlogits.size()), dlogits.data());  // ∂M/∂(h · W_headᵀ)
  std::vector<float> dpicked(picked.size());                       // (B, E) = dlogits · W_head
  head.linear_backward_input(p.b, dlogits.data(), v, dpicked.data(), e, false);
  Tensor& last = r.grad_hidden[static_cast<std::size_t>(c.layers)];
  last = Tensor::zeros({p.b, p.t, e});
  for (int i = 0; i < p.b; ++i)
    std::copy_n(dpicked.data() + static_cast<std::size_t>(i) * e, e,
                last.data.data() + (static_cast<std::size_t>(i) * p.t + pos) * e);
  dx.assign(last.data.size(), 0.0f);
  final_norm_.backward(p.n, run.inputs.back().data(), last.data.data(), dx.data());
}

// 2. Block l's activations from its input x (block()'s computation, keeping what the backward
// needs); with y, the block's output too.
Status PretrainedModel::block_state(int l, const Pass& p, const GradientOptions& o,
                                    const std::vector<float>& x, BlockState& s, std::vector<float>* y) const {
  const PretrainedConfig& c = config_;
  const Layer& L = layers_[static_cast<std::size_t>(l)];
  const int e = c.hidden, xs = static_cast<int>(x.size());
  const bool post_attn = L.post_attn_norm.present(), post_mlp = L.post_mlp_norm.present();
  std::vector<float> a_in(x), tmp(post_attn ? x.size() : 0);
  if (L.attn_norm.present()) L.attn_norm.forward(p.n, x.data(), a_in.data());
  MhaResult ar;
  if (L.kind == MixerKind::kShortConv) {
    ar.output.data.resize(x.size());
    L.conv.forward(p.b, p.t, a_in.data(), ar.output.data.data(), nullptr, nullptr, s.conv, nullptr, nullptr,
                   l);
  } else if (L.kind == MixerKind::kDeltaNet) {
    ar.output.data.resize(x.size());
    ATTN_RETURN_IF_ERROR(
        L.delta.forward(p.b, p.t, a_in.data(), ar.output.data.data(), nullptr, nullptr, nullptr, nullptr, l));
    s.delta_in = std::move(a_in);
  } else {
    ATTN_RETURN_IF_ERROR(L.mixer.attn.forward_saving(Tensor({p.b, p.t, e}, std::move(a_in)), nullptr, nullptr,
                                                     L.mixer.options, ar, s.saved));
  }
  float* attn_add = ar.output.data.data();
  if (post_attn) {
    L.post_attn_norm.forward(p.n, ar.output.data.data(), tmp.data());
    attn_add = tmp.data();
  }
  s.x1.resize(x.size());
  if (L.branch_scale != 1) kernels::scale_vec(xs, attn_add, L.branch_scale, attn_add);  // Granite
  kernels::add_vec(xs, x.data(), attn_add, s.x1.data());
  if (post_attn) s.attn_out = std::move(ar.output.data);  // attn_add is tmp then
  s.m_in = s.x1;
  if (L.mlp_norm.present()) L.mlp_norm.forward(p.n, s.x1.data(), s.m_in.data());
  const bool out = y || post_mlp || o.activations;
  std::vector<float> m_out(out ? x.size() : 0);
  std::vector<float> a, u;  // the MLP's working buffers (s.a and s.u keep its pre-activations)
  L.mlp.forward(p.n, s.m_in.data(), out ? m_out.data() : nullptr, a, u, &s.a, &s.u, nullptr, l);
  if (!out) return Status::Ok();
  std::vector<float> branch(m_out);
  if (post_mlp) L.post_mlp_norm.forward(p.n, m_out.data(), branch.data());
  if (L.branch_scale != 1) kernels::scale_vec(xs, branch.data(), L.branch_scale, branch.data());
  if (y) {
    y->resize(x.size());
    kernels::add_vec(xs, s.x1.data(), branch.data(), y->data());
  }
  if (post_mlp) s.m_out = std::move(m_out);
  if (o.activations) s.m_out_branch_for_activations = std::move(branch);
  return Status::Ok();
}

// 2′. Block l backward from its state: dx (N, E) enters as ∂M/∂ the block's output and leaves as
// ∂M/∂ its input x.
Status PretrainedModel::block_backward(int l, const Pass& p, const GradientOptions& o,
                                       const std::vector<float>& x, BlockState& s, std::vector<float>& dx,
                                       GradientResult& r) const {
  const PretrainedConfig& c = config_;
  const Layer& L = layers_[static_cast<std::size_t>(l)];
  const int e = c.hidden, xs = static_cast<int>(dx.size());
  const bool conv = L.kind == MixerKind::kShortConv;  // no heads: its z and weights stay empty
  const bool delta = L.kind == MixerKind::kDeltaNet;  // z per value head: from its backward
  if (o.activations) {
    if (!conv && !delta) r.z[l] = Tensor({p.b, p.t, c.heads * c.head_dim}, s.saved.context);
    r.mlp_branch[l] = Tensor({p.b, p.t, e}, std::move(s.m_out_branch_for_activations));
  }
  // The MLP branch: ∂M/∂(branch as added) = dx; through the branch scale (Granite), [post_ff], the
  // MLP, [norm2] into dx1 = dx + ….
  r.grad_mlp[l] = Tensor({p.b, p.t, e}, dx);
  std::vector<float> d_scaled(dx), d_in(dx.size()), tmp(dx.size());
  if (L.branch_scale != 1) kernels::scale_vec(xs, d_scaled.data(), L.branch_scale, d_scaled.data());
  std::vector<float> d_branch(d_scaled);
  if (L.post_mlp_norm.present())
    L.post_mlp_norm.backward(p.n, s.m_out.data(), d_scaled.data(), d_branch.data());
  L.mlp.backward(p.n, s.a, s.u, d_branch.data(), d_in.data());
  if (L.mlp_norm.present()) {
    L.mlp_norm.backward(p.n, s.x1.data(), d_in.data(), tmp.data());
    std::swap(d_in, tmp);
  }
  kernels::add_vec(xs, dx.data(), d_in.data(), dx.data());  // dx is now ∂M/∂x1
  // The attention branch: through the branch scale, [post_attn], the attention (frozen: input
  // gradients only), [norm1].
  d_scaled = dx;
  if (L.branch_scale != 1) kernels::scale_vec(xs, d_scaled.data(), L.branch_scale, d_scaled.data());
  std::vector<float> d_attn(d_scaled);
  if (L.post_attn_norm.present())
    L.post_attn_norm.backward(p.n, s.attn_out.data(), d_scaled.data(), d_attn.data());
  MhaGrads g;
  if (conv) {
    g.query.data.resize(dx.size());
    L.conv.backward(p.b, p.t, s.conv, d_attn.data(), g.query.data.data());
  } else if (delta) {
    g.query.data.resize(dx.size());
    std::vector<float> z, dz;
    ATTN_RETURN_IF_ERROR(L.delta.backward(p.b, p.t, s.delta_in.data(), d_attn.data(), g.query.data.data(),
                                          o.activations ? &z : nullptr, &dz));
    const int vd = L.delta.shape().v_heads * L.delta.shape().v_dim;
    r.grad_z[l] = Tensor({p.b, p.t, vd}, std::move(dz));
    if (o.activations) r.z[l] = Tensor({p.b, p.t, vd}, std::move(z));
  } else {
    MhaBackwardOptions bo;
    bo.parameters = false;
    bo.context = true;
    bo.attention = o.attention;
    ATTN_RETURN_IF_ERROR(L.mixer.attn.backward(s.saved, Tensor({p.b, p.t, e}, std::move(d_attn)), g, bo));
    r.grad_z[l] = std::move(g.context);
    if (o.attention) r.grad_attention[l] = std::move(g.attention);
  }
  if (L.attn_norm.present()) {
    L.attn_norm.backward(p.n, x.data(), g.query.data.data(), tmp.data());
    kernels::add_vec(xs, dx.data(), tmp.data(), dx.data());
  } else {
    kernels::add_vec(xs, dx.data(), g.query.data.data(), dx.data());
  }
  return Status::Ok();
}

Status PretrainedModel::metric_gradients(int b, int t, const std::vector<std::int32_t>& ids,
                                         const GradientOptions& o, GradientResult& result) {
  const PretrainedConfig& c = config_;
  Pass p;
  p.b = b;
  p.t = t;
  p.n = static_cast<std::int64_t>(b) * t;
  ATTN_RETURN_IF_ERROR(check_gradients(p, ids, o));
  const int e = c.hidden, layers = c.layers;
  GradRun run;
  run.inputs.resize(static_cast<std::size_t>(layers) + 1);
  std::vector<float> x(static_cast<std::size_t>(p.n) * e);
  std::vector<float> position;  // embed's scratch
  if (o.start_embedding.empty())
    embed(p, ids, nullptr, x, position);
  else
    x = o.start_embedding;
  // Every block's activations kept from the forward when they fit the memory limit beside the rest
  // (the backward then reads them); else only the streams, each block recomputed in the backward.
  const bool keep =
      check_allocation(gradient_floats(c, b, t, o) + block_state_floats(c, p.n) * layers, "").ok();
  std::vector<BlockState> states(keep ? static_cast<std::size_t>(layers) : 0);
  for (int l = 0; l < layers; ++l) {
    run.inputs[static_cast<std::size_t>(l)] = x;
    BlockState s;
    ATTN_RETURN_IF_ERROR(block_state(l, p, o, run.inputs[static_cast<std::size_t>(l)], s, &x));
    if (keep) states[static_cast<std::size_t>(l)] = std::move(s);
  }
  run.inputs.back() = x;
  run.final.resize(x.size());
  final_norm_.forward(p.n, x.data(), run.final.data());
  GradientResult r;
  r.grad_hidden.resize(static_cast<std::size_t>(layers) + 1);
  r.grad_z.resize(static_cast<std::size_t>(layers));
  r.grad_mlp.resize(static_cast<std::size_t>(layers));
  if (o.attention) r.grad_attention.resize(static_cast<std::size_t>(layers));
  if (o.activations) {
    r.z.resize(static_cast<std::size_t>(layers));
    r.mlp_branch.resize(static_cast<std::size_t>(layers));
  }
  std::vector<float> dx;
  head_backward(run, p, o, r, dx);
  for (int l = layers - 1; l >= 0; --l) {
    const std::vector<float>& in = run.inputs[static_cast<std::size_t>(l)];
    BlockState recomputed;
    if (!keep) ATTN_RETURN_IF_ERROR(block_state(l, p, o, in, recomputed, nullptr));
    ATTN_RETURN_IF_ERROR(
        block_backward(l, p, o, in, keep ? states[static_cast<std::size_t>(l)] : recomputed, dx, r));
    if (keep) states[static_cast<std::size_t>(l)] = BlockState{};  // freed as soon as it is used
    r.grad_hidden[static_cast<std::size_t>(l)] = Tensor({b, t, e}, dx);
  }
  for (const Tensor& g : r.grad_hidden)
    ATTN_RETURN_IF_ERROR(check_computed(g.data.data(), g.data.size(), "the metric's gradients"));
  if (o.activations) {
    for (int l = 0; l < layers; ++l)
      r.hidden.emplace_back(Shape{b, t, e}, run.inputs[static_cast<std::size_t>(l)]);
    r.hidden.emplace_back(Shape{b, t, e}, run.final);
  }
  result = std::move(r);
  return Status::Ok();
}

}  // namespace attn
