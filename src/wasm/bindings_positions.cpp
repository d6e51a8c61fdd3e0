// Bindings of the positional encodings: the sinusoidal table and the learned one
// (core/positional.h), and today's rotary embeddings (forward and backward) and the ALiBi paper's
// slopes (core/rotary.h). Conventions of bindings.cpp: tensors in as
// { data, shape }, results out as copies, one { code, message, ... } object per call. The JS side
// is applyRotary / applyRotaryBackward / alibiSlopes in src/js/attention/positions.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include "core/positional.h"
#include "core/rotary.h"
#include "wasm/binding_util.h"

namespace {

using namespace attn_js;

attn::RotaryOptions rotary_options(double base, bool interleaved, int dims, double offset) {
  attn::RotaryOptions o;
  o.base = base;
  o.style = interleaved ? attn::RotaryStyle::kInterleaved : attn::RotaryStyle::kHalf;
  o.dims = dims;
  o.offset = static_cast<std::int64_t>(offset);
  return o;
}

// backward = false: rotate x; true: the gradient of x from the rotated output's gradient.
val rotary_js(val x, double base, bool interleaved, int dims, double offset, bool backward) {
  const attn::RotaryOptions o = rotary_options(base, interleaved, dims, offset);
  attn::Tensor out;
  const attn::Tensor in = tensor_from_js(x);
  const attn::Status st = backward ? attn::apply_rotary_backward(in, o, out) : attn::apply_rotary(in, o, out);
  val result = status_object(st);
  if (st.ok()) result.set("result", tensor_object(out));
  return result;
}

val alibi_slopes_js(int num_heads) {
  std::vector<float> slopes;
  const attn::Status st = attn::alibi_slopes(num_heads, slopes);
  val out = status_object(st);
  if (st.ok()) out.set("result", float_array(slopes));
  return out;
}

val sinusoidal_js(int length, int d_model, double base) {
  attn::Tensor pe;
  const attn::Status st = attn::sinusoidal_encoding(length, d_model, base, pe);
  val out = status_object(st);
  if (st.ok()) out.set("result", tensor_object(pe));
  return out;
}

class LearnedPEHandle {
 public:
  val init(int max_length, int d_model, val seed) {
    return status_object(
        attn::LearnedPositionalEncoding::create(max_length, d_model, seed_from_js(seed), pe_));
  }
  val encode(int length) const {
    attn::Tensor t;
    const attn::Status st = pe_.encode(length, t);
    val out = status_object(st);
    if (st.ok()) out.set("result", tensor_object(t));
    return out;
  }
  val table() const { return tensor_object(pe_.table()); }
  val set_table(val t) { return status_object(pe_.set_table(tensor_from_js(t))); }

 private:
  attn::LearnedPositionalEncoding pe_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(attention_positions) {
  emscripten::function("_sinusoidal", &sinusoidal_js);
  emscripten::class_<LearnedPEHandle>("LearnedPEHandle")
      .constructor<>()
      .function("init", &LearnedPEHandle::init)
      .function("encode", &LearnedPEHandle::encode)
      .function("table", &LearnedPEHandle::table)
      .function("setTable", &LearnedPEHandle::set_table);

  emscripten::function("_rotary", &rotary_js);
  emscripten::function("_alibiSlopes", &alibi_slopes_js);
}
