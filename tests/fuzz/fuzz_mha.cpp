// libFuzzer target: MultiHeadAttention with a fuzzer-chosen config (embed/k/v dims, heads, head
// dims, bias, bias_kv, zero attention, residual, LayerNorm and its eps), fuzzer-chosen parameter
// loads (right and wrong shapes, NaN), then forward_saving and backward with self or cross
// attention, batched or not, masks, key padding, causal, scale, dropout, a positional table and
// hostile values. Invariants: OK or a documented error; OK results and gradients are finite; a
// failed parameter load leaves the parameter unchanged; a non-finite query is always an error.
#include <algorithm>
#include <cstdint>
#include <string>

#include "core/multi_head.h"
#include "fuzz_input.h"

namespace {

// The KV cache: self-attention of the query fed in fuzzer-chosen chunks into a cache of a
// fuzzer-chosen size. Invariants: OK results are finite; an error (overflow included) leaves the
// cache's length unchanged; a finite call that fits is accepted whenever the plain forward accepts it.
int decode(fuzz::Input& in, const attn::MultiHeadAttention& mha, const attn::Tensor& x,
           const attn::MhaForwardOptions& o) {
  attn::KvCache cache;
  const attn::Status cs = mha.create_cache(in.in(0, 10), x.rank() == 3 ? x.dim(0) : 1, cache);
  fuzz::check_error(cs);
  if (!cs.ok() || x.rank() < 2) return 0;
  const int t = x.dim(-2), e = x.dim(-1), b = x.rank() == 3 ? x.dim(0) : 1;
  for (int t0 = 0; t0 < t;) {
    const int n = std::min(t - t0, in.in(1, 4));
    attn::Tensor chunk(x.rank() == 3 ? attn::Shape{b, n, e} : attn::Shape{n, e},
                       std::vector<float>(static_cast<std::size_t>(b) * n * e));
    for (int bi = 0; bi < b; ++bi)
      for (int r = 0; r < n; ++r)
        for (int c = 0; c < e; ++c) chunk.data[(bi * n + r) * e + c] = x.data[(bi * t + t0 + r) * e + c];
    const int before = cache.length;
    attn::MhaResult r;
    const attn::Status s = mha.forward_cached(chunk, cache, o, r);
    fuzz::check_error(s);
    if (!s.ok()) {
      if (cache.length != before) fuzz::fail("a refused cached forward changed the cache", s);
      return 0;
    }
    if (!fuzz::all_finite(r.output.data) || !fuzz::all_finite(r.weights.data))
      fuzz::fail("cached OK with a non-finite result", s);
    if (cache.length != before + n) fuzz::fail("the cache did not grow by the chunk", s);
    t0 += n;
  }
  return 0;
}

attn::MhaConfig config_from(fuzz::Input& in) {
  attn::MhaConfig c;
  c.embed_dim = in.in(0, 12);  // 0: an invalid config
  c.num_heads = in.in(0, 4);
  if (in.flag()) c.kdim = in.in(1, 6);
  if (in.flag()) c.vdim = in.in(1, 6);
  if (in.in(0, 3) == 0) c.head_dim = in.in(1, 5);
  if (in.in(0, 3) == 0) c.value_head_dim = in.in(1, 5);
  c.bias = !in.flag();
  c.add_bias_kv = in.flag();
  c.add_zero_attn = in.flag();
  c.residual = in.flag();
  c.layer_norm = in.flag();
  if (in.flag()) c.layer_norm_eps = in.value();
  c.seed = in.byte();
  if (in.flag()) c.num_kv_heads = in.in(0, 4);  // sometimes not a divisor: HEADS_DO_NOT_DIVIDE
  if (in.flag()) {
    attn::RotaryOptions r;
    r.base = in.flag() ? 10000.0 : in.value();
    r.style = in.flag() ? attn::RotaryStyle::kInterleaved : attn::RotaryStyle::kHalf;
    r.dims = in.in(0, 6);
    c.rope = r;
  }
  return c;
}

// Loads one parameter: the right shape with fuzzer values, or a wrong one. A failure must change nothing.
void load_parameter(fuzz::Input& in, attn::MultiHeadAttention& mha) {
  const auto names = mha.parameter_names();
  if (names.empty()) return;
  const std::string name = in.in(0, 9) == 0 ? "in_proj.weight" : names[in.byte() % names.size()];
  attn::Tensor before;
  const bool known = mha.get_parameter(name, before).ok();
  attn::Shape shape = known ? before.shape : attn::Shape{2, 2};
  if (in.in(0, 3) == 0) shape.back() += 1;
  const attn::Status s = mha.set_parameter(name, in.tensor(shape));
  fuzz::check_error(s);
  if (!s.ok() && known) {
    attn::Tensor after;
    if (!mha.get_parameter(name, after).ok() || after.data != before.data)
      fuzz::fail("a failed load changed the parameter", s);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  attn::MultiHeadAttention mha;
  const attn::MhaConfig c = config_from(in);
  const attn::Status created = attn::MultiHeadAttention::create(c, mha);
  fuzz::check_error(created);
  if (!created.ok()) return 0;
  for (int i = in.in(0, 2); i > 0; --i) load_parameter(in, mha);

  const bool batched = in.flag(), cross = in.flag();
  const int b = in.in(1, 3), tq = in.in(1, 7), tk = cross ? in.in(1, 7) : tq;
  const int kdim = c.kdim ? c.kdim : c.embed_dim, vdim = c.vdim ? c.vdim : c.embed_dim;
  auto shape = [&](int t, int e) { return batched ? attn::Shape{b, t, e} : attn::Shape{t, e}; };
  const attn::Tensor query = in.tensor(shape(tq, in.in(0, 15) == 0 ? c.embed_dim + 1 : c.embed_dim));
  const attn::Tensor key = in.tensor(shape(tk, kdim)), value = in.tensor(shape(tk, vdim));

  attn::MhaForwardOptions o;
  attn::BoolTensor mask, padding;
  attn::Tensor positional;
  if (in.flag()) {
    mask = in.mask({tq, tk});
    o.mask = &mask;
  }
  if (in.flag()) {
    padding = in.mask(batched ? attn::Shape{b, tk} : attn::Shape{tk});
    o.key_padding_mask = &padding;
  }
  o.causal = in.flag();
  o.need_weights = in.flag();
  o.average_weights = in.flag();
  if (in.flag()) o.scale = in.value();
  if (in.flag()) {
    o.dropout.p = 0.5f;
    o.dropout.seed = in.u64();
  }
  if (in.flag()) {
    positional = in.tensor({in.in(1, 8), c.embed_dim});
    o.positional = &positional;
  }
  if (in.flag()) o.positions.offset = in.in(-1, 9);
  o.positions.bottom_right = in.in(0, 3) == 0;
  if (in.flag()) o.positions.window = in.in(0, 6);
  o.positions.alibi_paper = in.flag();
  if (in.in(0, 3) == 0) return decode(in, mha, query, o);

  attn::MhaResult r;
  attn::MhaSaved saved;
  const attn::Status s =
      mha.forward_saving(query, cross ? &key : nullptr, cross ? &value : nullptr, o, r, saved);
  fuzz::check_error(s);
  if (!fuzz::all_finite(query.data) && s.ok()) fuzz::fail("a non-finite query gave OK", s);
  if (!s.ok()) return 0;
  if (!fuzz::all_finite(r.output.data) || !fuzz::all_finite(r.weights.data))
    fuzz::fail("OK with a non-finite result", s);

  if (in.in(0, 7) == 0)
    load_parameter(in, mha);  // may make `saved` stale: then an error, not a wrong gradient
  attn::MhaGrads g;
  const attn::Status bs = mha.backward(saved, in.tensor(r.output.shape), g);
  fuzz::check_error(bs);
  if (bs.ok()) {
    if (g.query.shape != query.shape) fuzz::fail("query gradient shape", bs);
    if (!fuzz::all_finite(g.query.data) || !fuzz::all_finite(g.key.data) || !fuzz::all_finite(g.value.data))
      fuzz::fail("non-finite gradient", bs);
    for (const auto& [name, t] : g.params)
      if (!fuzz::all_finite(t.data)) fuzz::fail("non-finite parameter gradient", bs);
  }
  return 0;
}
