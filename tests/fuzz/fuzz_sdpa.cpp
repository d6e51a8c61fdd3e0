// libFuzzer target: scaled_dot_product_attention forward and backward with fuzzer-chosen shapes
// (rank 2–4, sometimes mismatched), boolean / additive masks of fuzzer-chosen (often broadcast)
// shapes, causal (top-left or bottom-right), positions, windows, ALiBi, grouped-query heads, scale,
// dropout, need_weights, a trace, and values that include NaN, ±∞, huge and
// denormal numbers. Invariants: every call returns OK or a documented error with a message; an OK
// result is finite; a non-finite input is always an error (never a quiet NaN); the forward's trace
// holds the returned weights exactly; the backward accepts what the forward accepted.
#include <cstdint>

#include "core/attention.h"
#include "core/attention_backward.h"
#include "core/memory_limit.h"
#include "fuzz_input.h"

namespace {

attn::Shape batch_shape(fuzz::Input& in, int rank_extra) {
  attn::Shape s;
  for (int i = 0; i < rank_extra; ++i) s.push_back(in.in(1, 3));
  return s;
}

// A mask shape broadcastable to (batch..., Tq, Tk) most of the time, and not always.
attn::Shape mask_shape(fuzz::Input& in, const attn::Shape& batch, int tq, int tk) {
  attn::Shape s;
  const int lead = in.in(0, static_cast<int>(batch.size()));
  for (int i = static_cast<int>(batch.size()) - lead; i < static_cast<int>(batch.size()); ++i)
    s.push_back(in.flag() ? 1 : batch[i]);
  s.push_back(in.flag() ? 1 : tq);
  s.push_back(in.in(0, 7) == 0 ? tk + 1 : tk);  // sometimes wrong
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const attn::Shape batch = batch_shape(in, in.in(0, 2));
  const int tq = in.in(1, 9), tk = in.in(1, 9), dk = in.in(1, 8), dv = in.in(1, 8);
  auto with = [&](attn::Shape s, int a, int b) {
    s.push_back(a);
    s.push_back(b);
    return s;
  };
  const bool mismatch = in.in(0, 15) == 0;
  // Grouped-query attention: k and v with another (often dividing) head count on axis −3.
  attn::Shape kv_batch = batch;
  const bool gqa = !batch.empty() && in.in(0, 3) == 0;
  if (gqa) kv_batch.back() = in.in(1, 3);
  const attn::Tensor q = in.tensor(with(batch, tq, dk));
  const attn::Tensor k = in.tensor(with(kv_batch, tk, mismatch ? dk + 1 : dk));
  const attn::Tensor v = in.tensor(with(kv_batch, tk, dv));

  attn::SdpaOptions o;
  o.enable_gqa = gqa && in.flag();
  attn::BoolTensor mask;
  attn::Tensor additive;
  if (in.flag()) {
    mask = in.mask(mask_shape(in, batch, tq, tk));
    o.mask = &mask;
  }
  if (in.flag()) {
    additive = in.tensor(mask_shape(in, batch, tq, tk));
    for (auto& x : additive.data)
      if (in.in(0, 3) == 0) x = -std::numeric_limits<float>::infinity();
    o.additive_mask = &additive;
  }
  o.causal = in.flag();
  if (in.flag()) o.scale = in.value();
  if (in.flag()) {
    o.dropout.p = in.flag() ? in.value() : 0.25f;
    o.dropout.seed = in.u64();
  }
  o.need_weights = in.flag();
  const bool traced = in.flag();
  // Positions, bottom-right causal, a window and ALiBi (paper slopes or fuzzer-chosen ones, of any count).
  if (in.flag()) o.positions.offset = in.in(-1, 12);
  o.positions.bottom_right = in.in(0, 3) == 0;
  if (in.flag()) o.positions.window = in.in(-1, 10);
  if (in.flag()) {
    if (in.flag()) {
      o.positions.alibi_paper = true;
    } else {
      o.positions.alibi_slopes.resize(static_cast<std::size_t>(in.in(0, 4)));
      for (float& m : o.positions.alibi_slopes) m = in.value();
    }
  }

  fuzz::context().clear();
  fuzz::note("q " + attn::shape_to_string(q.shape) + " " + fuzz::range(q.data) + "; k " +
             attn::shape_to_string(k.shape) + " " + fuzz::range(k.data) + "; v " + fuzz::range(v.data));
  fuzz::note(
      std::string("mask ") + (o.mask ? attn::shape_to_string(mask.shape) : "-") + " additive " +
      (o.additive_mask ? attn::shape_to_string(additive.shape) + " " + fuzz::range(additive.data) : "-") +
      " causal " + std::to_string(o.causal) + " scale " + (o.scale ? attn::format_number(*o.scale) : "-") +
      " dropout " + attn::format_number(o.dropout.p) + " weights " + std::to_string(o.need_weights) +
      " gqa " + std::to_string(o.enable_gqa) + " offset " +
      (o.positions.offset ? std::to_string(*o.positions.offset) : "-") + " bottom-right " +
      std::to_string(o.positions.bottom_right) + " window " +
      (o.positions.window ? std::to_string(*o.positions.window) : "-") + " alibi " +
      (o.positions.alibi_paper ? "paper" : std::to_string(o.positions.alibi_slopes.size())));
  attn::Trace trace;
  attn::SdpaResult r;
  const attn::Status s = attn::scaled_dot_product_attention(q, k, v, o, r, traced ? &trace : nullptr);
  fuzz::check_error(s);
  const bool finite_in = fuzz::all_finite(q.data) && fuzz::all_finite(k.data) && fuzz::all_finite(v.data);
  if (!finite_in && s.ok()) fuzz::fail("a non-finite input gave OK", s);
  if (!s.ok()) return 0;
  fuzz::note("output " + fuzz::range(r.output.data) + "; weights " + fuzz::range(r.weights.data));
  if (!fuzz::all_finite(r.output.data) || !fuzz::all_finite(r.weights.data))
    fuzz::fail("OK with a non-finite result", s);

  const attn::Tensor grad = in.tensor(r.output.shape);
  attn::SdpaGrads g;
  const attn::Status b = attn::scaled_dot_product_attention_backward(q, k, v, grad, o, g);
  fuzz::check_error(b);
  if (b.ok()) {
    if (g.q.shape != q.shape || g.k.shape != k.shape || g.v.shape != v.shape)
      fuzz::fail("gradient shapes", b);
    if (!fuzz::all_finite(g.q.data) || !fuzz::all_finite(g.k.data) || !fuzz::all_finite(g.v.data))
      fuzz::fail("backward OK with a non-finite gradient", b);
  } else if (fuzz::all_finite(grad.data) && b.code != attn::StatusCode::kNonFinite &&
             b.code != attn::StatusCode::kTooLarge) {
    fuzz::fail("the backward refused what the forward accepted", b);
  }
  return 0;
}
