// One forward's options and outputs (model/interp_hooks.h) between a JS object and the core, for both
// model bindings (bindings_model.cpp: TinyTransformer, bindings_pretrained.cpp: PretrainedModel): the
// wrappers (src/js/tiny/tiny-transformer.js, pretrained.js, interp/adapter.js) pass one object, read here
// once.
#pragma once
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/hooks.h"
#include "model/interp_hooks.h"
#include "wasm/binding_util.h"

namespace attn_js {

// A forward's options, the mask they point to and the hook points' request and run (kept together:
// options point into them).
struct JsForwardOptions {
  attn::ForwardOptions options;
  attn::BoolTensor mask;
  attn::HookRequest request;
  std::unique_ptr<attn::HookRun> hooks;
  JsForwardOptions() = default;
  JsForwardOptions(const JsForwardOptions&) = delete;
  JsForwardOptions& operator=(const JsForwardOptions&) = delete;
};

// edits: [{ hook, op: 'set' | 'add', value (Float32Array), shape (int[]), positions?, heads? }]
// (src/js/interp/hooks.js checked the op; the core checks the rest by the model's hooks).
inline std::vector<attn::HookEdit> read_hook_edits(const val& edits) {
  std::vector<attn::HookEdit> out;
  const int n = edits["length"].as<int>();
  for (int i = 0; i < n; ++i) {
    const val e = edits[i];
    attn::HookEdit edit;
    edit.hook = e["hook"].as<std::string>();
    edit.add = e["op"].as<std::string>() == "add";
    edit.value = emscripten::convertJSArrayToNumberVector<float>(e["value"]);
    for (int v : emscripten::convertJSArrayToNumberVector<int>(e["shape"])) edit.value_shape.push_back(v);
    if (has(e, "positions")) edit.positions = emscripten::convertJSArrayToNumberVector<int>(e["positions"]);
    if (has(e, "heads")) edit.heads = emscripten::convertJSArrayToNumberVector<int>(e["heads"]);
    out.push_back(std::move(edit));
  }
  return out;
}

// o: { attentionLayers, traceLayers (int[]), mask (a bool tensor object), hiddenStates, logitLens,
// capture (hook names), edits (read_hook_edits), startAt (a hook name), logitsRow (-1 all),
// preCapLogits }, each optional (absent or null: ForwardOptions' default).
inline void read_forward_options(const val& o, JsForwardOptions& out) {
  attn::ForwardOptions& p = out.options;
  const auto ints = [&](const char* key, std::vector<int>& to) {
    if (has(o, key)) to = emscripten::convertJSArrayToNumberVector<int>(o[key]);
  };
  const auto flag = [&](const char* key, bool& to) {
    if (has(o, key)) to = o[key].as<bool>();
  };
  ints("attentionLayers", p.attention_layers);
  ints("traceLayers", p.trace_layers);
  if (has(o, "mask")) {
    out.mask = bool_tensor_from_js(o["mask"]);
    p.mask = &out.mask;
  }
  flag("hiddenStates", p.hidden_states);
  flag("logitLens", p.logit_lens);
  if (has(o, "capture")) {
    const int n = o["capture"]["length"].as<int>();
    for (int i = 0; i < n; ++i) out.request.capture.push_back(o["capture"][i].as<std::string>());
  }
  if (has(o, "edits")) out.request.edits = read_hook_edits(o["edits"]);
  if (has(o, "startAt")) out.request.start_at = o["startAt"].as<std::string>();
  if (has(o, "logitsRow")) p.logits_row = o["logitsRow"].as<int>();
  flag("preCapLogits", p.pre_cap_logits);
}

// The hook run of a forward over (b, t) ids of a model with these hooks (nothing when none was asked).
inline attn::Status make_hooks(JsForwardOptions& o, const attn::HookShapes& shapes, int b, int t) {
  if (o.request.empty()) return attn::Status::Ok();
  ATTN_RETURN_IF_ERROR(attn::HookRun::create(o.request, shapes, b, t, 0, t, o.hooks));
  o.options.hooks = o.hooks.get();
  return attn::Status::Ok();
}

// [{ name, shape }] of a model's hooks, "B" and "T" for the batch and sequence axes.
inline val hook_names_array(const attn::HookShapes& shapes) {
  val out = val::array();
  const std::vector<attn::HookInfo> list = attn::hook_list(shapes);
  for (std::size_t i = 0; i < list.size(); ++i) {
    val shape = val::array();
    for (std::size_t k = 0; k < list[i].shape.size(); ++k) {
      const std::int64_t v = list[i].shape[k];
      shape.set(k, v == attn::kHookBatchAxis  ? val("B")
                   : v == attn::kHookTimeAxis ? val("T")
                                              : val(static_cast<double>(v)));
    }
    val entry = val::object();
    entry.set("name", list[i].name);
    entry.set("shape", shape);
    out.set(i, entry);
  }
  return out;
}

inline val tensors_array(const std::vector<attn::Tensor>& ts) {
  val out = val::array();
  for (std::size_t i = 0; i < ts.size(); ++i) out.set(i, tensor_object(ts[i]));
  return out;
}

// { code, message, logits, attention, traces, hiddenStates, activations, logitLens? } of a forward
// over (b, t) ids through `layers` blocks: attention and traces one entry per layer (null where not
// asked for); logitLens { ids, probs, shape (L + 1, B, T) } when asked for.
inline val forward_result_object(const attn::Status& st, const attn::ForwardResult& r, JsForwardOptions& js,
                                 int layers, int b, int t) {
  const attn::ForwardOptions& o = js.options;
  val out = status_object(st);
  if (!st.ok()) return out;
  val activations = val::object();
  if (js.hooks)
    for (auto& [name, tensor] : js.hooks->take_captures()) activations.set(name, tensor_object(tensor));
  out.set("activations", activations);
  out.set("logits", tensor_object(r.logits));
  val attention = val::array(), traces = val::array();
  for (std::size_t l = 0; l < r.attention.size(); ++l) {
    attention.set(l, r.attention[l].data.empty() ? val::null() : tensor_object(r.attention[l]));
    traces.set(l, r.traces[l].steps().empty() ? val::null() : trace_array(r.traces[l]));
  }
  out.set("attention", attention);
  out.set("traces", traces);
  out.set("hiddenStates", tensors_array(r.hidden_states));
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
