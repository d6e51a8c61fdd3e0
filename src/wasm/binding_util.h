// Helpers shared by the binding files (bindings.cpp, bindings_backward.cpp): tensors between JS
// objects and core tensors, status objects, traces, and the option objects the wrapper passes.
// Conventions: see bindings.cpp.
#pragma once
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "core/attention.h"
#include "core/softmax.h"
#include "core/tensor.h"
#include "core/trace.h"

namespace attn_js {

using emscripten::val;

inline val status_object(const attn::Status& status) {
  val out = val::object();
  out.set("code", static_cast<int>(status.code));
  out.set("message", status.message);
  return out;
}

inline val float_array(const std::vector<float>& data) {
  // Copy: the typed_memory_view is only valid until the vector dies or the heap grows.
  return val::global("Float32Array").new_(emscripten::typed_memory_view(data.size(), data.data()));
}

inline val shape_array(const attn::Shape& shape) {
  val out = val::array();
  for (size_t i = 0; i < shape.size(); ++i) out.set(i, shape[i]);
  return out;
}

inline val tensor_object(const attn::Tensor& t) {
  val out = val::object();
  out.set("data", float_array(t.data));
  out.set("shape", shape_array(t.shape));
  return out;
}

inline attn::Shape shape_from_js(const val& t) {
  return emscripten::vecFromJSArray<int>(t["shape"]);
}

inline attn::Tensor tensor_from_js(const val& t) {
  return attn::Tensor(shape_from_js(t), emscripten::convertJSArrayToNumberVector<float>(t["data"]));
}

inline attn::BoolTensor bool_tensor_from_js(const val& t) {
  attn::BoolTensor b;
  b.shape = shape_from_js(t);
  b.data = emscripten::convertJSArrayToNumberVector<std::uint8_t>(t["data"]);
  return b;
}

inline bool has(const val& obj, const char* key) {
  const val v = obj[key];
  return !v.isUndefined() && !v.isNull();
}

inline std::uint64_t seed_from_js(const val& v) {
  // Seeds are integers below 2^53 on the JS side; negative or fractional input is truncated.
  const double d = v.as<double>();
  return d > 0 ? static_cast<std::uint64_t>(d) : 0;
}

inline val trace_array(const attn::Trace& trace) {
  val steps = val::array();
  int i = 0;
  for (const auto& step : trace.steps()) {
    val s = tensor_object(step.tensor);
    s.set("name", step.name);
    val axes = val::array();
    for (size_t a = 0; a < step.axes.size(); ++a) axes.set(a, step.axes[a]);
    s.set("axes", axes);
    steps.set(i++, s);
  }
  return steps;
}

// Options shared by SDPA and MHA forward: { scale?, dropoutP, dropoutSeed, needWeights }.
inline void read_common_options(const val& o, std::optional<float>& scale, attn::DropoutOptions& dropout,
                                bool& need_weights) {
  if (has(o, "scale")) scale = o["scale"].as<float>();
  dropout.p = has(o, "dropoutP") ? o["dropoutP"].as<float>() : 0.0f;
  dropout.seed = has(o, "dropoutSeed") ? seed_from_js(o["dropoutSeed"]) : 0;
  need_weights = has(o, "needWeights") ? o["needWeights"].as<bool>() : true;
}

// Positions from the wrapper's { bottomRight, positionOffset?, window?, alibi? (Float32Array),
// alibiPaper? (the paper's slopes for the call's head count) }.
inline attn::PositionOptions read_positions(const val& o) {
  attn::PositionOptions p;
  p.bottom_right = has(o, "bottomRight") && o["bottomRight"].as<bool>();
  if (has(o, "positionOffset")) p.offset = static_cast<std::int64_t>(o["positionOffset"].as<double>());
  if (has(o, "window")) p.window = o["window"].as<int>();
  if (has(o, "alibi")) p.alibi_slopes = emscripten::convertJSArrayToNumberVector<float>(o["alibi"]);
  p.alibi_paper = has(o, "alibiPaper") && o["alibiPaper"].as<bool>();
  return p;
}

// { code, message, output, weights?, trace? } of an attention call (SDPA or MHA result types).
template <class Result>
val attention_result(const attn::Status& st, const Result& result, bool need_weights,
                     const attn::Trace* trace) {
  val out = status_object(st);
  if (!st.ok()) return out;
  out.set("output", tensor_object(result.output));
  if (need_weights) out.set("weights", tensor_object(result.weights));
  if (trace) out.set("trace", trace_array(*trace));
  return out;
}

// The masks an SdpaOptions points at; must outlive the call that uses the options.
struct MaskStorage {
  attn::BoolTensor mask;
  attn::Tensor additive;
};

// SDPA options (forward and backward) from the wrapper's
// { mask?, additiveMask?, causal, scale?, dropoutP, dropoutSeed, needWeights }.
inline attn::SdpaOptions read_sdpa_options(const val& o, MaskStorage& masks) {
  attn::SdpaOptions options;
  read_common_options(o, options.scale, options.dropout, options.need_weights);
  options.causal = has(o, "causal") && o["causal"].as<bool>();
  options.positions = read_positions(o);
  options.enable_gqa = has(o, "enableGQA") && o["enableGQA"].as<bool>();
  if (has(o, "mask")) options.mask = &(masks.mask = bool_tensor_from_js(o["mask"]));
  if (has(o, "additiveMask")) options.additive_mask = &(masks.additive = tensor_from_js(o["additiveMask"]));
  return options;
}

// LayerNorm options (forward and backward); weight and bias: Float32Array, or null for none.
inline attn::LayerNormOptions layer_norm_options(float eps, const val& weight, const val& bias) {
  attn::LayerNormOptions options;
  options.eps = eps;
  if (!weight.isNull() && !weight.isUndefined())
    options.weight = emscripten::convertJSArrayToNumberVector<float>(weight);
  if (!bias.isNull() && !bias.isUndefined())
    options.bias = emscripten::convertJSArrayToNumberVector<float>(bias);
  return options;
}

}  // namespace attn_js
