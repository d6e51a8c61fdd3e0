// One forward's options and outputs (model/interp_hooks.h) between a JS object and the core, for both
// model bindings (bindings_model.cpp: TinyTransformer, bindings_pretrained.cpp: PretrainedModel): the
// wrappers (src/js/tiny/tiny-transformer.js, pretrained.js, interp/adapter.js) pass one object, read here
// once.
#pragma once
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <vector>

#include "model/interp_hooks.h"
#include "wasm/binding_util.h"

namespace attn_js {

// A forward's options and the mask they point to (kept together: options.mask points into mask).
struct JsForwardOptions {
  attn::ForwardOptions options;
  attn::BoolTensor mask;
  JsForwardOptions() = default;
  JsForwardOptions(const JsForwardOptions&) = delete;
  JsForwardOptions& operator=(const JsForwardOptions&) = delete;
};

// o: { attentionLayers, traceLayers (int[]), mask (a bool tensor object), hiddenStates, logitLens,
// mlpOutputs, mlpBranch, mlpDeltaLayer (-1 none), mlpDelta (Float32Array (B, T, width)), startLayer,
// startResidual (Float32Array (B, T, width)), deltaLayer (-1 none), attnDelta (Float32Array), logitsRow
// (-1 all), preCapLogits }, each optional (absent or null: ForwardOptions'
// default).
inline void read_forward_options(const val& o, JsForwardOptions& out) {
  attn::ForwardOptions& p = out.options;
  const auto ints = [&](const char* key, std::vector<int>& to) {
    if (has(o, key)) to = emscripten::convertJSArrayToNumberVector<int>(o[key]);
  };
  const auto floats = [&](const char* key, std::vector<float>& to) {
    if (has(o, key)) to = emscripten::convertJSArrayToNumberVector<float>(o[key]);
  };
  const auto flag = [&](const char* key, bool& to) {
    if (has(o, key)) to = o[key].as<bool>();
  };
  const auto number = [&](const char* key, int& to) {
    if (has(o, key)) to = o[key].as<int>();
  };
  ints("attentionLayers", p.attention_layers);
  ints("traceLayers", p.trace_layers);
  if (has(o, "mask")) {
    out.mask = bool_tensor_from_js(o["mask"]);
    p.mask = &out.mask;
  }
  flag("hiddenStates", p.hidden_states);
  flag("logitLens", p.logit_lens);
  flag("mlpOutputs", p.mlp_outputs);
  flag("mlpBranch", p.mlp_branch);
  number("mlpDeltaLayer", p.mlp_delta_layer);
  floats("mlpDelta", p.mlp_delta);
  number("startLayer", p.start_layer);
  floats("startResidual", p.start_residual);
  number("deltaLayer", p.delta_layer);
  floats("attnDelta", p.attn_delta);
  number("logitsRow", p.logits_row);
  flag("preCapLogits", p.pre_cap_logits);
}

inline val tensors_array(const std::vector<attn::Tensor>& ts) {
  val out = val::array();
  for (std::size_t i = 0; i < ts.size(); ++i) out.set(i, tensor_object(ts[i]));
  return out;
}

// { code, message, logits, attention, traces, hiddenStates, mlpOutputs, mlpBranch, logitLens? } of a forward
// over (b, t) ids through `layers` blocks: attention and traces one entry per layer (null where not
// asked for); logitLens { ids, probs, shape (L + 1, B, T) } when asked for.
inline val forward_result_object(const attn::Status& st, const attn::ForwardResult& r,
                                 const attn::ForwardOptions& o, int layers, int b, int t) {
  val out = status_object(st);
  if (!st.ok()) return out;
  out.set("logits", tensor_object(r.logits));
  val attention = val::array(), traces = val::array();
  for (std::size_t l = 0; l < r.attention.size(); ++l) {
    attention.set(l, r.attention[l].data.empty() ? val::null() : tensor_object(r.attention[l]));
    traces.set(l, r.traces[l].steps().empty() ? val::null() : trace_array(r.traces[l]));
  }
  out.set("attention", attention);
  out.set("traces", traces);
  out.set("hiddenStates", tensors_array(r.hidden_states));
  out.set("mlpOutputs", tensors_array(r.mlp_outputs));
  out.set("mlpBranch", tensors_array(r.mlp_branch));
  if (o.logit_lens) {
    val lens = val::object();
    lens.set(
        "ids",
        val::global("Int32Array").new_(emscripten::typed_memory_view(r.lens_ids.size(), r.lens_ids.data())));
    lens.set("probs", float_array(r.lens_probs));
    lens.set("shape", shape_array({layers + 1, b, t}));
    out.set("logitLens", lens);
  }
  return out;
}

}  // namespace attn_js
