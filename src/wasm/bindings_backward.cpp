// Bindings of the backward functions (gradients), with the conventions of bindings.cpp: tensors in
// as { data, shape } objects, results out as copies, and a { code, message, ... } object per call.
// The JS side is src/js/attention/backward.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include "core/attention_backward.h"
#include "core/softmax_backward.h"
#include "wasm/binding_util.h"

namespace {

using namespace attn_js;

// o: the forward's options object (read_sdpa_options); needWeights and trace are ignored.
val sdpa_backward_js(val q, val k, val v, val grad_output, val o) {
  MaskStorage masks;
  const attn::SdpaOptions options = read_sdpa_options(o, masks);
  attn::SdpaGrads grads;
  const attn::Status st = attn::scaled_dot_product_attention_backward(
      tensor_from_js(q), tensor_from_js(k), tensor_from_js(v), tensor_from_js(grad_output), options, grads);
  val out = status_object(st);
  if (!st.ok()) return out;
  out.set("q", tensor_object(grads.q));
  out.set("k", tensor_object(grads.k));
  out.set("v", tensor_object(grads.v));
  return out;
}

// ---- softmax and LayerNorm backward (core/softmax_backward.h, from the wt-ops branch) -----------

val softmax_backward_js(val y, val grad_y) {
  attn::Tensor grad_x;
  const attn::Status st = attn::softmax_backward(tensor_from_js(y), tensor_from_js(grad_y), grad_x);
  val out = status_object(st);
  if (st.ok()) out.set("result", tensor_object(grad_x));
  return out;
}

// weight, bias: Float32Array or null, as layerNorm's; the result has weight/bias grads only for those given.
val layer_norm_backward_js(val x, val grad_y, float eps, val weight, val bias) {
  const attn::LayerNormOptions options = layer_norm_options(eps, weight, bias);
  attn::LayerNormGrads grads;
  const attn::Status st =
      attn::layer_norm_backward(tensor_from_js(x), tensor_from_js(grad_y), options, grads);
  val out = status_object(st);
  if (!st.ok()) return out;
  out.set("x", tensor_object(grads.x));
  if (!options.weight.empty()) out.set("weight", tensor_object(grads.weight));
  if (!options.bias.empty()) out.set("bias", tensor_object(grads.bias));
  return out;
}

}  // namespace

EMSCRIPTEN_BINDINGS(attention_backward) {
  emscripten::function("_sdpaBackward", &sdpa_backward_js);
  emscripten::function("_softmaxBackward", &softmax_backward_js);
  emscripten::function("_layerNormBackward", &layer_norm_backward_js);
}
