// Bindings of pretrained checkpoints (model/pretrained.h): the model is made from the wrapper's
// parsed config; each tensor's room is allocated in its file format (beginTensor returns its address
// in the heap), the wrapper copies the file's bytes there chunk by chunk and endTensor checks them,
// so no second copy of a tensor, let alone of the file, is made. A table only looked up by row may
// instead stay in the wrapper's ArrayBuffers (attachTable: JsTableRows copies a row in per use). forward
// returns logits, attention, traces, hidden states and the interpretability outputs as copies
// (bindings_interp.h). Every call runs under the model's own memory limit (given at init). Conventions of
// bindings.cpp. The JS side is src/js/pretrained/pretrained.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <memory>
#include <type_traits>
#include <utility>

#include "core/memory_limit.h"
#include "model/pretrained.h"
#include "wasm/binding_util.h"
#include "wasm/bindings_gradients.h"
#include "wasm/bindings_interp.h"
#include "wasm/bindings_maps.h"

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

// One config field from / to the wrapper's object, by its C++ type (ATTN_PRETRAINED_CONFIG_FIELDS
// lists the fields; an absent or null field keeps PretrainedConfig's default).
template <typename T>
void read_field(const val& v, T& out) {
  if constexpr (std::is_enum_v<T>)
    out = static_cast<T>(v.as<int>());
  else
    out = v.as<T>();
}
template <typename T>
void read_field(const val& v, std::vector<T>& out) {
  out = emscripten::convertJSArrayToNumberVector<T>(v);
}
template <typename T>
val write_field(const T& value) {
  if constexpr (std::is_enum_v<T>)
    return val(static_cast<int>(value));
  else
    return val(value);
}
template <typename T>
val write_field(const std::vector<T>& values) {
  val out = val::array();
  for (std::size_t i = 0; i < values.size(); ++i) out.set(i, values[i]);
  return out;
}

attn::PretrainedConfig config_from_js(const val& c) {
  attn::PretrainedConfig p;
#define ATTN_READ_FIELD(member, name) \
  if (has(c, name)) read_field(c[name], p.member);
  ATTN_PRETRAINED_CONFIG_FIELDS(ATTN_READ_FIELD)
#undef ATTN_READ_FIELD
  return p;
}

val config_to_js(const attn::PretrainedConfig& p) {
  val c = val::object();
#define ATTN_WRITE_FIELD(member, name) c.set(name, write_field(p.member));
  ATTN_PRETRAINED_CONFIG_FIELDS(ATTN_WRITE_FIELD)
#undef ATTN_WRITE_FIELD
  return c;
}

// A lookup-only table's rows in the wrapper's memory (model/lookup_table.h): `source.copy(r, address,
// bytes)` writes row r's stored bytes into the heap at `address`. The model looks rows up on the
// thread running its call, the one this JS object belongs to (pool workers never call it).
class JsTableRows : public attn::TableRows {
 public:
  explicit JsTableRows(val source) : source_(std::move(source)) {}
  void copy_row(int r, void* dst, std::size_t bytes) const override {
    source_.call<void>("copy", r, static_cast<double>(reinterpret_cast<std::uintptr_t>(dst)),
                       static_cast<double>(bytes));
  }

 private:
  val source_;
};

class PretrainedHandle {
 public:
  // c: the core config (src/js/architectures/: ATTN_PRETRAINED_CONFIG_FIELDS' names, each optional)
  // and memoryLimit (bytes).
  val init(val c) {
    limit_ = static_cast<std::uint64_t>(c["memoryLimit"].as<double>());
    LimitScope scope(limit_);
    const attn::Status st = attn::PretrainedModel::create(config_from_js(c), model_);
    if (st.ok() && has(c, "int8Activations")) model_.set_int8_activations(c["int8Activations"].as<bool>());
    return status_object(st);
  }
  // The model's config, by the same names (what init read).
  val config() const { return config_to_js(model_.config()); }
  // [{ role, layer, shape }] of every tensor the config needs, in load order: the role's registry
  // spelling ("embed", "q", …), layer -1 for a global one, the shape as the model keeps it (out, in).
  val expected() const {
    val out = val::array();
    int i = 0;
    for (const attn::TensorSpec& s : model_.tensors()) {
      val e = val::object();
      e.set("role", std::string(attn::role_name(s.key.role)));
      e.set("layer", s.key.layer);
      e.set("shape", shape_array(s.shape));
      out.set(i++, e);
    }
    return out;
  }
  // TOO_LARGE when the checkpoint's `bytes` (its tensors as stored) pass the model's limit.
  val reserve(double bytes) const {
    LimitScope scope(limit_);
    return status_object(model_.reserve(static_cast<std::uint64_t>(bytes)));
  }
  // Room for one tensor in `format` (WEIGHT_FORMAT: a ggml type id), `shape` as the file stores it
  // (`transposed`: (in, out)), `label` its file name for messages: { ok, address } — its byte
  // offset in the heap, valid until endTensor (the wrapper re-reads HEAPU8 after this call: the heap
  // may have grown).
  val begin_tensor(std::string role, int layer, val shape, int format, bool transposed, std::string label) {
    LimitScope scope(limit_);
    attn::TensorKey key;
    if (!key_of(role, layer, key)) return status_object(unknown(role));
    void* data = nullptr;
    const attn::Status st = model_.begin_tensor(key, int_list(shape), static_cast<attn::WeightFormat>(format),
                                                transposed, label, data);
    val out = status_object(st);
    if (st.ok()) out.set("address", static_cast<double>(reinterpret_cast<std::uintptr_t>(data)));
    return out;
  }
  val end_tensor(std::string role, int layer) {
    attn::TensorKey key;
    if (!key_of(role, layer, key)) return status_object(unknown(role));
    return status_object(model_.end_tensor(key));
  }
  double weight_bytes() const { return static_cast<double>(model_.weight_bytes()); }
  // Whether role's tensor may stay outside the heap (PretrainedModel::lookup_only), and its
  // attaching: `source` { copy(row, address, bytes) } (JsTableRows), `shape` as the model keeps it.
  bool lookup_only(std::string role) const {
    attn::TensorKey key;
    return key_of(role, -1, key) && attn::PretrainedModel::lookup_only(model_.config(), key.role);
  }
  val attach_table(std::string role, int layer, val shape, int format, std::string label, val source) {
    LimitScope scope(limit_);
    attn::TensorKey key;
    if (!key_of(role, layer, key)) return status_object(unknown(role));
    return status_object(model_.attach_table(key, int_list(shape), static_cast<attn::WeightFormat>(format),
                                             label, std::make_shared<JsTableRows>(std::move(source))));
  }
  double off_heap_bytes() const { return static_cast<double>(model_.off_heap_bytes()); }
  double memory_limit() const { return static_cast<double>(limit_); }
  // Decoding: caches for `batch` sequences of up to max_length tokens, replacing earlier ones; half:
  // float16 keys and values. { code, message, kvBytes } (kvBytes: what the attention layers' caches hold).
  val create_caches(int max_length, int batch, bool half) {
    LimitScope scope(limit_);
    caches_.clear();  // the earlier caches go first: both never need to fit at once
    const attn::Status st =
        model_.create_caches(max_length, batch, caches_, half ? attn::KvDtype::kF16 : attn::KvDtype::kF32);
    val out = status_object(st);
    if (st.ok()) out.set("kvBytes", static_cast<double>(caches_.kv_bytes()));
    return out;
  }
  val create_caches_f32(int max_length, int batch) { return create_caches(max_length, batch, false); }
  // The logits (B, T, V) of ids continuing the cached sequences (positions from the caches' length);
  // last_only: only each sequence's last row, (B, 1, V) (decoding reads nothing else: the head is
  // T·V·E multiply-adds and T·V floats otherwise). The ids and the result live in the handle, so a
  // decoding step allocates nothing on the wasm heap once the first has run (the logits are copied
  // out into a new Float32Array).
  val forward_cached(val ids, int b, int t, bool last_only) {
    LimitScope scope(limit_);
    attn::ForwardOptions o;
    if (last_only) o.logits_row = t - 1;
    // The ids as convertJSArrayToNumberVector reads them (Int32Array's set), into the kept buffer.
    step_ids_.resize(ids["length"].as<std::size_t>());
    val(emscripten::typed_memory_view(step_ids_.size(), step_ids_.data())).call<void>("set", ids);
    attn::Status st = caches_.empty() ? attn::Status::Error(attn::StatusCode::kInvalidArgument,
                                                            "no caches: call createCaches first")
                                      : attn::Status::Ok();
    std::unique_ptr<attn::HookRun> hooks;  // steering: the same edits at every step's positions
    if (st.ok() && !decode_edits_.empty()) {
      st = attn::HookRun::create(decode_edits_, model_.hook_shapes(), b, t, caches_.length,
                                 model_.config().max_positions, hooks);
      o.hooks = hooks.get();
    }
    if (st.ok()) st = model_.forward(b, t, step_ids_, o, step_result_, &caches_);
    val out = status_object(st);
    if (st.ok()) out.set("logits", tensor_object(step_result_.logits));
    return out;
  }
  // The caches and the decoding buffers go (a finished generation keeps no memory).
  void drop_caches() {
    caches_.clear();
    step_ids_ = {};
    step_result_ = {};
    model_.release_workspace();
  }
  // A forward without caches: o the forward's options (bindings_interp.h: attention and traced
  // layers, hidden states, the logit lens, the interpretability hooks) → { code, message, logits,
  // attention, traces, hiddenStates, mlpOutputs, logitLens? }.
  val forward(val ids, int b, int t, val o) {
    LimitScope scope(limit_);
    JsForwardOptions options;
    read_forward_options(o, options);
    attn::ForwardResult r;
    attn::Status st = make_hooks(options, model_.hook_shapes(), b, t);
    if (st.ok())
      st = model_.forward(b, t, emscripten::convertJSArrayToNumberVector<std::int32_t>(ids), options.options,
                          r);
    return forward_result_object(st, r, options, model_.config().layers, b, t);
  }
  val hook_names() const { return hook_names_array(model_.hook_shapes()); }
  // The edits every decoding step applies (steering: generate's `edits`), checked now as a decoding
  // step takes them; null or [] = none.
  val set_decode_edits(val edits) {
    attn::HookRequest request;
    if (!edits.isNull() && !edits.isUndefined()) request.edits = read_hook_edits(edits);
    if (!request.empty()) {
      std::unique_ptr<attn::HookRun> check;
      const attn::Status st =
          attn::HookRun::create(request, model_.hook_shapes(), 1, 1, 1, model_.config().max_positions, check);
      if (!st.ok()) return status_object(st);
    }
    decode_edits_ = std::move(request);
    return status_object(attn::Status::Ok());
  }
  // o: the metric and what to return (bindings_gradients.h) → { code, message, values, gradHidden,
  // gradZ, gradMlp, gradAttention, hidden, z, mlpBranch } (PretrainedModel::metric_gradients).
  val metric_gradients(val ids, int b, int t, val o) {
    LimitScope scope(limit_);
    attn::GradientResult r;
    const attn::Status st = model_.metric_gradients(
        b, t, emscripten::convertJSArrayToNumberVector<std::int32_t>(ids), read_gradient_options(o), r);
    return gradient_result_object(st, r);
  }
  // { ok, data: Float32Array (count · cols) } of a tensor's rows by role (PretrainedModel::read_rows).
  val read_rows(std::string role, int layer, int first, int count) const {
    attn::TensorKey key;
    if (!key_of(role, layer, key)) return status_object(unknown(role));
    std::vector<float> rows;
    const attn::Status st = model_.read_rows(key, first, count, rows);
    val out = status_object(st);
    if (st.ok()) out.set("data", float_array(rows));
    return out;
  }
  // A prefill with maps (bindings_maps.h), in one call per step: { layers, total } begins it (the
  // session's layers and length checked, its caches and map state allocated: MapSession::begin),
  // { ids } runs its next chunk (MapSession::step).
  val prefill(MapSessionHandle& s, val o) {
    LimitScope scope(limit_);
    if (has(o, "layers"))
      return status_object(
          attn::MapSession::begin(model_, int_list(o["layers"]), o["total"].as<int>(), s.session));
    return status_object(
        s.session.step(model_, emscripten::convertJSArrayToNumberVector<std::int32_t>(o["ids"])));
  }

 private:
  static bool key_of(const std::string& role, int layer, attn::TensorKey& key) {
    key.layer = layer;
    return attn::role_from_name(role, key.role);
  }
  static attn::Status unknown(const std::string& role) {
    return attn::Status::Error(attn::StatusCode::kUnknownParameter, "no tensor role \"" + role + "\"");
  }
  attn::PretrainedModel model_;
  attn::DecodeCaches caches_;
  std::vector<std::int32_t> step_ids_;         // forward_cached's ids (B·T)
  attn::PretrainedForwardResult step_result_;  // forward_cached's result, its buffers kept between steps
  attn::HookRequest decode_edits_;             // set_decode_edits': steering
  std::uint64_t limit_ = attn::kDefaultMemoryLimitBytes;
};

}  // namespace

EMSCRIPTEN_BINDINGS(attention_pretrained) {
  emscripten::class_<PretrainedHandle>("PretrainedHandle")
      .constructor<>()
      .function("init", &PretrainedHandle::init)
      .function("config", &PretrainedHandle::config)
      .function("expected", &PretrainedHandle::expected)
      .function("reserve", &PretrainedHandle::reserve)
      .function("beginTensor", &PretrainedHandle::begin_tensor)
      .function("endTensor", &PretrainedHandle::end_tensor)
      .function("weightBytes", &PretrainedHandle::weight_bytes)
      .function("lookupOnly", &PretrainedHandle::lookup_only)
      .function("attachTable", &PretrainedHandle::attach_table)
      .function("offHeapBytes", &PretrainedHandle::off_heap_bytes)
      .function("memoryLimit", &PretrainedHandle::memory_limit)
      .function("forward", &PretrainedHandle::forward)
      .function("hookNames", &PretrainedHandle::hook_names)
      .function("setDecodeEdits", &PretrainedHandle::set_decode_edits)
      .function("metricGradients", &PretrainedHandle::metric_gradients)
      .function("readRows", &PretrainedHandle::read_rows)
      .function("createCaches", &PretrainedHandle::create_caches)      // (maxLength, batch, half)
      .function("createCaches", &PretrainedHandle::create_caches_f32)  // (maxLength, batch): float32
      .function("forwardCached", &PretrainedHandle::forward_cached)
      .function("dropCaches", &PretrainedHandle::drop_caches)
      .function("prefill", &PretrainedHandle::prefill);
}
