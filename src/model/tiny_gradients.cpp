// TinyTransformer::metric_gradients (tiny_transformer.h, metric_gradients.h): as the pretrained
// model's, the forward keeps the stream entering each block, then each block is recomputed from it and
// run backward in reverse (the attention through MultiHeadAttention::backward without its parameters'
// gradients), so the parameters are only read. The residual units (tiny_transformer_pass.cpp):
//   pre:  y = x + f(LN(x))     post: y = LN(x + f(x))     none: y = x + f(x)
// and the MLP branch "as added" is f's output in each (a post-norm unit adds it before its norm).
#include <algorithm>
#include <string>

#include "core/memory_limit.h"
#include "core/softmax_backward.h"
#include "kernels/kernels.h"
#include "model/layers.h"
#include "model/tiny_transformer.h"

namespace attn {

namespace {

constexpr float kEps = 1e-5f;  // every LayerNorm of the model

// One block's recomputed activations, rows (N, d) each: the attention unit's sublayer input u and
// sum s (pre: s = x + attn(LN1(x)); post: s = x + attn(x), the block's stream then LN1(s)), the MLP
// unit's the same, the MLP's fc1 output h (N, hidden), and what the attention's backward needs.
struct BlockRun {
  std::vector<float> u1, s1, x1, u2, s2, out2, h;
  MhaSaved saved;
};

}  // namespace

// The gradient pass: the model's parameters by name and the steps, over n rows of width d.
struct TinyGradPass {
  TinyTransformer& m;
  const TinyConfig& c;
  const IdBatch& ids;
  std::int64_t n;
  int d;

  const float* param(const std::string& name) const { return m.params_[m.index_of(name)].data.data(); }
  std::string block(int l) const { return "blocks." + std::to_string(l) + "."; }
  void layer_norm(const std::string& ln, const float* in, float* out) const {
    for (std::int64_t r = 0; r < n; ++r)
      kernels::layer_norm_row(d, in + r * d, param(ln + ".weight"), param(ln + ".bias"), kEps, out + r * d);
  }
  // dx (N, d) = LN'(in, dy) (or added to dx), the weights fixed.
  void layer_norm_backward(const std::string& ln, const float* in, const float* dy, float* dx,
                           bool add) const {
    layer_norm_backward_rows(n, d, in, param(ln + ".weight"), kEps, dy, dx, add, nullptr, nullptr);
  }

  // x (N, d) = tok_emb[ids] (+ the learned or sinusoidal positions).
  void embed(std::vector<float>& x) const {
    x.resize(static_cast<std::size_t>(n) * d);
    embedding_forward(n, ids.data.data(), param("tok_emb.weight"), d, x.data());
    const float* pos = c.positional == PositionalKind::kLearned      ? param("pos_emb.weight")
                       : c.positional == PositionalKind::kSinusoidal ? m.sinusoid_.data.data()
                                                                     : nullptr;
    for (int bi = 0; pos && bi < ids.b; ++bi) {
      float* rows = x.data() + static_cast<std::int64_t>(bi) * ids.t * d;
      kernels::add_vec(ids.t * d, rows, pos, rows);
    }
  }

  MhaForwardOptions attention_options() const {
    MhaForwardOptions o;
    o.causal = c.causal;
    o.positions.alibi_paper = c.positional == PositionalKind::kAlibi;
    if (c.window > 0) o.positions.window = c.window;
    o.need_weights = false;
    return o;
  }

  // out (N, d) = fc2(GELU(fc1(u))), h = fc1(u) kept.
  void mlp(int l, const float* u, std::vector<float>& h, float* out) const {
    const std::string p = block(l) + "mlp.";
    h.resize(static_cast<std::size_t>(n) * c.mlp_hidden);
    std::vector<float> g(h.size());
    kernels::linear_nt(static_cast<int>(n), c.mlp_hidden, d, u, d, param(p + "fc1.weight"), d,
                       param(p + "fc1.bias"), h.data(), c.mlp_hidden);
    gelu_forward(static_cast<std::int64_t>(h.size()), h.data(), g.data());
    kernels::linear_nt(static_cast<int>(n), d, c.mlp_hidden, g.data(), c.mlp_hidden, param(p + "fc2.weight"),
                       c.mlp_hidden, param(p + "fc2.bias"), out, d);
  }

  // du (N, d) = the MLP's input gradient at fc1 output h for dy.
  void mlp_backward(int l, const std::vector<float>& h, const float* dy, float* du) const {
    const std::string p = block(l) + "mlp.";
    const int hid = c.mlp_hidden;
    std::vector<float> dg(h.size());
    linear_backward(static_cast<int>(n), hid, d, nullptr, hid, param(p + "fc2.weight"), dy, d, dg.data(), hid,
                    false, nullptr, nullptr);
    gelu_backward(static_cast<std::int64_t>(dg.size()), h.data(), dg.data(), dg.data());
    linear_backward(static_cast<int>(n), d, hid, nullptr, d, param(p + "fc1.weight"), dg.data(), hid, du, d,
                    false, nullptr, nullptr);
  }

  // One residual unit forward from x: u (its sublayer input), s (the sum), the unit's output into y.
  template <class F>
  Status unit(const std::string& ln, const std::vector<float>& x, std::vector<float>& u,
              std::vector<float>& s, std::vector<float>& y, F&& f) const {
    u = x;
    if (c.norm == NormKind::kPre) layer_norm(ln, x.data(), u.data());
    std::vector<float> out(x.size());
    ATTN_RETURN_IF_ERROR(f(u, out));
    s.resize(x.size());
    kernels::add_vec(static_cast<int>(x.size()), x.data(), out.data(), s.data());
    y = s;
    if (c.norm == NormKind::kPost) layer_norm(ln, s.data(), y.data());
    return Status::Ok();
  }

  // Block l from its input x into y, keeping what its backward needs in `b` (saving: the attention's).
  Status block_forward(int l, const std::vector<float>& x, BlockRun& b, std::vector<float>& y) const {
    const std::string pre = block(l);
    ATTN_RETURN_IF_ERROR(
        unit(pre + "ln1", x, b.u1, b.s1, b.x1, [&](std::vector<float>& u, std::vector<float>& out) {
          MhaResult r;
          ATTN_RETURN_IF_ERROR(m.attn_[l].forward_saving(Tensor({ids.b, ids.t, d}, u), nullptr, nullptr,
                                                         attention_options(), r, b.saved));
          out.swap(r.output.data);
          return Status::Ok();
        }));
    if (!c.mlp) {
      y = b.x1;
      return Status::Ok();
    }
    return unit(pre + "ln2", b.x1, b.u2, b.s2, y, [&](std::vector<float>& u, std::vector<float>& out) {
      mlp(l, u.data(), b.h, out.data());
      b.out2 = out;
      return Status::Ok();
    });
  }

  // One unit backward: dy (N, d) the gradient of its output in, of its input out (in place); `branch`
  // receives ∂M/∂ f's output; fback(dbranch, du) the sublayer's input gradient.
  template <class F>
  Status unit_backward(const std::string& ln, const std::vector<float>& x, const std::vector<float>& s,
                       std::vector<float>& dy, Tensor* branch, F&& fback) const {
    const int size = static_cast<int>(dy.size());
    std::vector<float> ds(dy), du(dy.size());
    if (c.norm == NormKind::kPost) layer_norm_backward(ln, s.data(), dy.data(), ds.data(), false);
    if (branch) *branch = Tensor({ids.b, ids.t, d}, ds);
    ATTN_RETURN_IF_ERROR(fback(ds, du));
    if (c.norm == NormKind::kPre) {
      layer_norm_backward(ln, x.data(), du.data(), dy.data(), true);
      return Status::Ok();
    }
    kernels::add_vec(size, ds.data(), du.data(), dy.data());
    return Status::Ok();
  }

  // Block l backward: dx (N, d) from its output's gradient to its input's.
  Status block_backward(int l, const std::vector<float>& x, const GradientOptions& o, std::vector<float>& dx,
                        GradientResult& r) const {
    BlockRun b;
    std::vector<float> y;
    ATTN_RETURN_IF_ERROR(block_forward(l, x, b, y));
    const std::string pre = block(l);
    if (o.activations)
      r.z[l] = Tensor({ids.b, ids.t, static_cast<int>(b.saved.context.size() / n)}, b.saved.context);
    if (c.mlp) {
      if (o.activations) r.mlp_branch[l] = Tensor({ids.b, ids.t, d}, b.out2);
      ATTN_RETURN_IF_ERROR(unit_backward(pre + "ln2", b.x1, b.s2, dx, &r.grad_mlp[l],
                                         [&](const std::vector<float>& dy, std::vector<float>& du) {
                                           mlp_backward(l, b.h, dy.data(), du.data());
                                           return Status::Ok();
                                         }));
    }
    return unit_backward(
        pre + "ln1", x, b.s1, dx, nullptr, [&](const std::vector<float>& dy, std::vector<float>& du) {
          MhaBackwardOptions bo;
          bo.parameters = false;
          bo.context = true;
          bo.attention = o.attention;
          MhaGrads g;
          ATTN_RETURN_IF_ERROR(m.attn_[l].backward(b.saved, Tensor({ids.b, ids.t, d}, dy), g, bo));
          r.grad_z[l] = std::move(g.context);
          if (o.attention) r.grad_attention[l] = std::move(g.attention);
          du.swap(g.query.data);
          return Status::Ok();
        });
  }
};

Status TinyTransformer::metric_gradients(const IdBatch& ids, const GradientOptions& o,
                                         GradientResult& result) {
  ATTN_RETURN_IF_ERROR(check_batch(ids, nullptr));
  const TinyConfig& c = config_;
  ATTN_RETURN_IF_ERROR(check_metric(o.metric, ids.t, c.vocab_size));
  const std::int64_t n = static_cast<std::int64_t>(ids.b) * ids.t;
  const std::uint64_t nd = static_cast<std::uint64_t>(n) * c.d_model, layers = c.num_layers;
  if (!o.start_embedding.empty() && o.start_embedding.size() != nd)
    return Status::Error(StatusCode::kInvalidArgument, "start_embedding must be (B, T, d_model)");
  std::uint64_t need = (4 * layers + 8) * nd + static_cast<std::uint64_t>(n) * 2 * c.mlp_hidden;
  if (o.attention) need += layers * ids.b * c.num_heads * static_cast<std::uint64_t>(ids.t) * ids.t;
  if (o.activations) need += 3 * layers * nd;
  ATTN_RETURN_IF_ERROR(check_allocation(need, "TinyTransformer's metric gradients"));
  sync_attention();
  TinyGradPass pass{*this, c, ids, n, c.d_model};
  std::vector<std::vector<float>> inputs(static_cast<std::size_t>(c.num_layers) + 1);
  std::vector<float> x;
  if (o.start_embedding.empty())
    pass.embed(x);
  else
    x = o.start_embedding;
  for (int l = 0; l < c.num_layers; ++l) {  // the forward: each block's input kept
    inputs[l] = x;
    BlockRun b;
    ATTN_RETURN_IF_ERROR(pass.block_forward(l, inputs[l], b, x));
  }
  inputs.back() = x;
  std::vector<float> xf(x);  // after ln_f (pre-norm) or the stream itself
  if (c.norm == NormKind::kPre) pass.layer_norm("ln_f", x.data(), xf.data());
  GradientResult r;
  r.grad_hidden.resize(inputs.size());
  r.grad_z.resize(static_cast<std::size_t>(c.num_layers));
  r.grad_mlp.resize(c.mlp ? static_cast<std::size_t>(c.num_layers) : 0);
  if (o.attention) r.grad_attention.resize(static_cast<std::size_t>(c.num_layers));
  if (o.activations) {
    r.z.resize(static_cast<std::size_t>(c.num_layers));
    r.mlp_branch.resize(c.mlp ? static_cast<std::size_t>(c.num_layers) : 0);
  }
  // The head at `position` of each sequence: logits = xf·Wᵀ + b; ∂M/∂xf its rows of dlogits · W.
  const int v = c.vocab_size, d = c.d_model, pos = o.metric.position < 0 ? ids.t - 1 : o.metric.position;
  const std::vector<float> picked = rows_at(xf.data(), ids.b, ids.t, d, pos);
  std::vector<float> logits(static_cast<std::size_t>(ids.b) * v), dlogits(logits.size()),
      dpicked(picked.size());
  kernels::linear_nt(ids.b, v, d, picked.data(), d, pass.param("head.weight"), d, pass.param("head.bias"),
                     logits.data(), v);
  r.values.resize(static_cast<std::size_t>(ids.b));
  for (int i = 0; i < ids.b; ++i)
    r.values[i] = metric_value_and_grad(o.metric, v, logits.data() + i * v, 0.0f, dlogits.data() + i * v);
  linear_backward(ids.b, d, v, nullptr, d, pass.param("head.weight"), dlogits.data(), v, dpicked.data(), d,
                  false, nullptr, nullptr);
  std::vector<float> dx(x.size(), 0.0f);
  for (int i = 0; i < ids.b; ++i)
    std::copy_n(dpicked.data() + i * d, d, dx.data() + (static_cast<std::size_t>(i) * ids.t + pos) * d);
  r.grad_hidden.back() = Tensor({ids.b, ids.t, d}, dx);
  if (c.norm == NormKind::kPre)
    pass.layer_norm_backward("ln_f", x.data(), r.grad_hidden.back().data.data(), dx.data(), false);
  for (int l = c.num_layers - 1; l >= 0; --l) {
    ATTN_RETURN_IF_ERROR(pass.block_backward(l, inputs[l], o, dx, r));
    r.grad_hidden[l] = Tensor({ids.b, ids.t, d}, dx);
  }
  for (const Tensor& g : r.grad_hidden)
    ATTN_RETURN_IF_ERROR(check_computed(g.data.data(), g.data.size(), "TinyTransformer's metric gradients"));
  if (o.activations) {
    for (int l = 0; l < c.num_layers; ++l) r.hidden.emplace_back(Shape{ids.b, ids.t, d}, inputs[l]);
    r.hidden.emplace_back(Shape{ids.b, ids.t, d}, xf);
  }
  result = std::move(r);
  return Status::Ok();
}

}  // namespace attn
