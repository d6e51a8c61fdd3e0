// Bindings of the positional helpers of today's attention (core/rotary.h): rotary embeddings
// (forward and backward) and the ALiBi paper's slopes. Conventions of bindings.cpp: tensors in as
// { data, shape }, results out as copies, one { code, message, ... } object per call. The JS side
// is applyRotary / applyRotaryBackward / alibiSlopes in src/js/positions.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

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

}  // namespace

EMSCRIPTEN_BINDINGS(attention_positions) {
  emscripten::function("_rotary", &rotary_js);
  emscripten::function("_alibiSlopes", &alibi_slopes_js);
}
