// A metric gradient call's options and result (model/metric_gradients.h) between a JS object and the
// core, shared by both model bindings (bindings_model.cpp, bindings_pretrained.cpp); the wrappers
// (src/js/interp/gradients.js) check the options first and pass one object, read here once.
#pragma once
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <vector>

#include "model/metric_gradients.h"
#include "wasm/binding_util.h"
#include "wasm/bindings_interp.h"

namespace attn_js {

// o: { metric (0 logit-diff, 1 probability, 2 log-probability), position (-1 = T − 1), token,
// against (-1 none), startEmbedding (Float32Array (B, T, width)), attention, activations }, each
// optional (absent or null: GradientOptions' default).
inline attn::GradientOptions read_gradient_options(const val& o) {
  attn::GradientOptions p;
  if (has(o, "metric")) p.metric.kind = static_cast<attn::MetricKind>(o["metric"].as<int>());
  if (has(o, "position")) p.metric.position = o["position"].as<int>();
  if (has(o, "token")) p.metric.token = o["token"].as<int>();
  if (has(o, "against")) p.metric.against = o["against"].as<int>();
  if (has(o, "startEmbedding"))
    p.start_embedding = emscripten::convertJSArrayToNumberVector<float>(o["startEmbedding"]);
  if (has(o, "attention")) p.attention = o["attention"].as<bool>();
  if (has(o, "activations")) p.activations = o["activations"].as<bool>();
  return p;
}

// { code, message, values (number[] (B)), gradHidden, gradZ, gradMlp, gradAttention, hidden, z,
// mlpBranch (arrays of tensor objects, empty where not computed) }.
inline val gradient_result_object(const attn::Status& st, const attn::GradientResult& r) {
  val out = status_object(st);
  if (!st.ok()) return out;
  val values = val::array();
  for (std::size_t i = 0; i < r.values.size(); ++i) values.set(i, r.values[i]);
  out.set("values", values);
  out.set("gradHidden", tensors_array(r.grad_hidden));
  out.set("gradZ", tensors_array(r.grad_z));
  out.set("gradMlp", tensors_array(r.grad_mlp));
  out.set("gradAttention", tensors_array(r.grad_attention));
  out.set("hidden", tensors_array(r.hidden));
  out.set("z", tensors_array(r.z));
  out.set("mlpBranch", tensors_array(r.mlp_branch));
  return out;
}

}  // namespace attn_js
