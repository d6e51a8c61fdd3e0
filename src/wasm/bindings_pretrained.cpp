// Bindings of pretrained checkpoints (model/pretrained.h): the model is made from the wrapper's
// parsed config; each tensor's room is allocated in its file format (beginTensor returns its address
// in the heap), the wrapper copies the file's bytes there chunk by chunk and endTensor checks them,
// so no second copy of a tensor, let alone of the file, is made. forward returns logits, attention,
// traces and hidden states as copies. Every call runs under the model's own memory limit (given at
// init). Conventions of bindings.cpp. The JS side is src/js/pretrained.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include "core/memory_limit.h"
#include "model/pretrained.h"
#include "wasm/binding_util.h"

namespace {

using namespace attn_js;

std::vector<int> int_list(const val& v) {
  return emscripten::convertJSArrayToNumberVector<int>(v);
}

// The model's memory limit in force for one call, the library's restored after it.
class LimitScope {
 public:
  explicit LimitScope(std::uint64_t limit) : saved_(attn::memory_limit_bytes()) {
    attn::set_memory_limit_bytes(limit);
  }
  ~LimitScope() { attn::set_memory_limit_bytes(saved_); }
  LimitScope(const LimitScope&) = delete;
  LimitScope& operator=(const LimitScope&) = delete;

 private:
  std::uint64_t saved_;
};

class PretrainedHandle {
 public:
  // c: { arch (0 GPT-2, 1 Llama), vocabSize, hidden, layers, heads, kvHeads, headDim, intermediate,
  //      maxPositions, normEps, ropeTheta, qkvBias, tieEmbeddings, ropeInvFreq (number[] or null),
  //      memoryLimit (bytes); optional: qkNorm (0 none, 1 per head, 2 all heads), preNorms, postNorms,
  //      normWeightOffset, embedScale, attentionScale, geluMlp, localRopeTheta,
  //      fusedProjections, rotaryDims, layerWindow (int per layer, 0 = full), layerRope (0/1 per layer) }
  val init(val c) {
    limit_ = static_cast<std::uint64_t>(c["memoryLimit"].as<double>());
    LimitScope scope(limit_);
    attn::PretrainedConfig p;
    p.arch = static_cast<attn::PretrainedArch>(c["arch"].as<int>());
    p.vocab_size = c["vocabSize"].as<int>();
    p.hidden = c["hidden"].as<int>();
    p.layers = c["layers"].as<int>();
    p.heads = c["heads"].as<int>();
    p.kv_heads = c["kvHeads"].as<int>();
    p.head_dim = c["headDim"].as<int>();
    p.intermediate = c["intermediate"].as<int>();
    p.max_positions = c["maxPositions"].as<int>();
    p.norm_eps = c["normEps"].as<double>();
    p.rope_theta = c["ropeTheta"].as<double>();
    p.qkv_bias = c["qkvBias"].as<bool>();
    p.tie_embeddings = c["tieEmbeddings"].as<bool>();
    if (has(c, "ropeInvFreq"))
      p.rope_inv_freq = emscripten::convertJSArrayToNumberVector<double>(c["ropeInvFreq"]);
    // Llama-family variants (pretrained.h), each optional.
    if (has(c, "qkNorm")) p.qk_norm = static_cast<attn::MhaConfig::QkNorm>(c["qkNorm"].as<int>());
    if (has(c, "postNorms")) p.post_norms = c["postNorms"].as<bool>();
    if (has(c, "preNorms")) p.pre_norms = c["preNorms"].as<bool>();
    if (has(c, "normWeightOffset")) p.norm_weight_offset = c["normWeightOffset"].as<float>();
    if (has(c, "embedScale")) p.embed_scale = c["embedScale"].as<float>();
    if (has(c, "attentionScale")) p.attention_scale = c["attentionScale"].as<double>();
    if (has(c, "geluMlp")) p.gelu_mlp = c["geluMlp"].as<bool>();
    if (has(c, "localRopeTheta")) p.local_rope_theta = c["localRopeTheta"].as<double>();
    if (has(c, "attnSoftcap")) p.attn_softcap = c["attnSoftcap"].as<float>();
    if (has(c, "finalSoftcap")) p.final_softcap = c["finalSoftcap"].as<float>();
    if (has(c, "fusedProjections")) p.fused_projections = c["fusedProjections"].as<bool>();
    if (has(c, "rotaryDims")) p.rotary_dims = c["rotaryDims"].as<int>();
    if (has(c, "layerWindow"))
      p.layer_window = emscripten::convertJSArrayToNumberVector<int>(c["layerWindow"]);
    if (has(c, "layerRope")) p.layer_rope = emscripten::convertJSArrayToNumberVector<int>(c["layerRope"]);
    return status_object(attn::PretrainedModel::create(p, model_));
  }
  // [{ name, shape }] of every tensor the checkpoint must hold.
  val expected() const {
    val out = val::array();
    int i = 0;
    for (const auto& [name, shape] : model_.expected_tensors()) {
      val e = val::object();
      e.set("name", name);
      e.set("shape", shape_array(shape));
      out.set(i++, e);
    }
    return out;
  }
  // TOO_LARGE when the checkpoint's `bytes` (its tensors as stored) pass the model's limit.
  val reserve(double bytes) const {
    LimitScope scope(limit_);
    return status_object(model_.reserve(static_cast<std::uint64_t>(bytes)));
  }
  // Room for one tensor in `format` (0 F32, 1 F16, 2 BF16): { ok, address } — its byte offset in the
  // heap, valid until endTensor (the wrapper re-reads HEAPU8 after this call: the heap may have grown).
  val begin_tensor(std::string name, val shape, int format) {
    LimitScope scope(limit_);
    void* data = nullptr;
    const attn::Status st =
        model_.begin_tensor(name, int_list(shape), static_cast<attn::WeightFormat>(format), data);
    val out = status_object(st);
    if (st.ok()) out.set("address", static_cast<double>(reinterpret_cast<std::uintptr_t>(data)));
    return out;
  }
  val end_tensor(std::string name) { return status_object(model_.end_tensor(name)); }
  val set_tensor(std::string name, val t) {
    LimitScope scope(limit_);
    return status_object(model_.set_tensor(name, tensor_from_js(t)));
  }
  double weight_bytes() const { return static_cast<double>(model_.weight_bytes()); }
  double memory_limit() const { return static_cast<double>(limit_); }
  val missing() const {
    val out = val::array();
    const auto names = model_.missing_tensors();
    for (std::size_t i = 0; i < names.size(); ++i) out.set(i, names[i]);
    return out;
  }
  // Decoding: caches for `batch` sequences of up to max_length tokens, replacing earlier ones.
  val create_caches(int max_length, int batch) {
    LimitScope scope(limit_);
    return status_object(model_.create_caches(max_length, batch, caches_));
  }
  // The logits (B, T, V) of ids continuing the cached sequences (positions from the caches' length).
  val forward_cached(val ids, int b, int t) {
    LimitScope scope(limit_);
    attn::PretrainedForwardResult r;
    const attn::Status st =
        caches_.empty()
            ? attn::Status::Error(attn::StatusCode::kInvalidArgument, "no caches: call createCaches first")
            : model_.forward(b, t, emscripten::convertJSArrayToNumberVector<std::int32_t>(ids), {}, r,
                             &caches_);
    val out = status_object(st);
    if (st.ok()) out.set("logits", tensor_object(r.logits));
    return out;
  }
  void drop_caches() { caches_.clear(); }
  val forward(val ids, int b, int t, val attention_layers, val trace_layers, bool hidden_states,
              bool logit_lens) {
    LimitScope scope(limit_);
    attn::PretrainedForwardOptions o;
    o.logit_lens = logit_lens;
    o.attention_layers = int_list(attention_layers);
    o.trace_layers = int_list(trace_layers);
    o.hidden_states = hidden_states;
    attn::PretrainedForwardResult r;
    const attn::Status st =
        model_.forward(b, t, emscripten::convertJSArrayToNumberVector<std::int32_t>(ids), o, r);
    val out = status_object(st);
    if (!st.ok()) return out;
    out.set("logits", tensor_object(r.logits));
    val attention = val::array(), traces = val::array(), hidden = val::array();
    for (std::size_t l = 0; l < r.attention.size(); ++l) {
      attention.set(l, r.attention[l].data.empty() ? val::null() : tensor_object(r.attention[l]));
      traces.set(l, r.traces[l].steps().empty() ? val::null() : trace_array(r.traces[l]));
    }
    for (std::size_t i = 0; i < r.hidden_states.size(); ++i) hidden.set(i, tensor_object(r.hidden_states[i]));
    out.set("attention", attention);
    out.set("traces", traces);
    out.set("hiddenStates", hidden);
    if (logit_lens) {
      const int rows = model_.config().layers + 1;  // the embeddings, every block, the head
      val lens = val::object();
      lens.set("ids", val::global("Int32Array")
                          .new_(emscripten::typed_memory_view(r.lens_ids.size(), r.lens_ids.data())));
      lens.set("probs", float_array(r.lens_probs));
      lens.set("shape", shape_array({rows, b, t}));
      out.set("logitLens", lens);
    }
    return out;
  }
  // Interpretability (#27): a forward without caches under PretrainedForwardOptions' patching options.
  // o: { traceLayers (int[]), hiddenStates, mlpOutputs, startLayer, startResidual (Float32Array (B, T, E)
  // or null), deltaLayer (-1 none), attnDelta (Float32Array or null), logitsRow (-1 all) } →
  // { ok, logits, traces, hiddenStates, mlpOutputs }.
  val interp_forward(val ids, int b, int t, val o) {
    LimitScope scope(limit_);
    attn::PretrainedForwardOptions p;
    p.trace_layers = int_list(o["traceLayers"]);
    p.hidden_states = o["hiddenStates"].as<bool>();
    p.mlp_outputs = o["mlpOutputs"].as<bool>();
    p.start_layer = o["startLayer"].as<int>();
    if (!o["startResidual"].isNull())
      p.start_residual = emscripten::convertJSArrayToNumberVector<float>(o["startResidual"]);
    p.delta_layer = o["deltaLayer"].as<int>();
    if (!o["attnDelta"].isNull())
      p.attn_delta = emscripten::convertJSArrayToNumberVector<float>(o["attnDelta"]);
    p.logits_row = o["logitsRow"].as<int>();
    p.pre_cap_logits = true;  // attribution and patching explain the logits before final soft-capping
    attn::PretrainedForwardResult r;
    const attn::Status st =
        model_.forward(b, t, emscripten::convertJSArrayToNumberVector<std::int32_t>(ids), p, r);
    val out = status_object(st);
    if (!st.ok()) return out;
    out.set("logits", tensor_object(r.logits));
    val traces = val::array(), hidden = val::array(), mlp = val::array();
    for (std::size_t l = 0; l < r.traces.size(); ++l)
      traces.set(l, r.traces[l].steps().empty() ? val::null() : trace_array(r.traces[l]));
    for (std::size_t i = 0; i < r.hidden_states.size(); ++i) hidden.set(i, tensor_object(r.hidden_states[i]));
    for (std::size_t i = 0; i < r.mlp_outputs.size(); ++i) mlp.set(i, tensor_object(r.mlp_outputs[i]));
    out.set("traces", traces);
    out.set("hiddenStates", hidden);
    out.set("mlpOutputs", mlp);
    return out;
  }
  // { ok, data: Float32Array (count · cols) } of a weight's rows (PretrainedModel::read_rows).
  val read_rows(std::string name, int first, int count) const {
    std::vector<float> rows;
    const attn::Status st = model_.read_rows(name, first, count, rows);
    val out = status_object(st);
    if (st.ok()) out.set("data", float_array(rows));
    return out;
  }

 private:
  attn::PretrainedModel model_;
  std::vector<attn::KvCache> caches_;
  std::uint64_t limit_ = attn::kDefaultMemoryLimitBytes;
};

}  // namespace

EMSCRIPTEN_BINDINGS(attention_pretrained) {
  emscripten::class_<PretrainedHandle>("PretrainedHandle")
      .constructor<>()
      .function("init", &PretrainedHandle::init)
      .function("expected", &PretrainedHandle::expected)
      .function("setTensor", &PretrainedHandle::set_tensor)
      .function("reserve", &PretrainedHandle::reserve)
      .function("beginTensor", &PretrainedHandle::begin_tensor)
      .function("endTensor", &PretrainedHandle::end_tensor)
      .function("weightBytes", &PretrainedHandle::weight_bytes)
      .function("memoryLimit", &PretrainedHandle::memory_limit)
      .function("missing", &PretrainedHandle::missing)
      .function("forward", &PretrainedHandle::forward)
      .function("interpForward", &PretrainedHandle::interp_forward)
      .function("readRows", &PretrainedHandle::read_rows)
      .function("createCaches", &PretrainedHandle::create_caches)
      .function("forwardCached", &PretrainedHandle::forward_cached)
      .function("dropCaches", &PretrainedHandle::drop_caches);
}
