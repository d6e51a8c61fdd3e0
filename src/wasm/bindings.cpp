// The forward API's bindings. With bindings_backward.cpp (the backward functions) and binding_util.h
// (their shared helpers), the only files in src/ that include Emscripten. They turn the core's
// Status-returning C++ API into raw `_`-prefixed functions and two handle classes for the
// hand-written JS wrapper (src/js/*.js), which is the only public JS surface.
//
// Conventions:
// - Tensors arrive as JS objects { data: Float32Array | Uint8Array, shape: number[] } and are copied
//   into core tensors (one memcpy each, convertJSArrayToNumberVector).
// - Every call returns a JS object { code, message, ... }; code 0 = OK, other codes are
//   attn::StatusCode values. No C++ exception crosses this boundary (the build has none).
// - Results are copied out of the wasm heap (new Float32Array(typed_memory_view(...))) before the
//   C++ buffers are freed, so JS never holds a view into memory that can move or be reused.
// - One exception to the val conventions, for speed: MhaHandle's lean forward path (forwardFast)
//   takes and returns numbers only; the wrapper writes inputs straight into the handle's buffers and
//   copies the results out itself (HEAPF32.slice), which saves ~5 µs of Embind conversions on a
//   small call. Masks, positional encodings, dropout and traces keep the general path.
#include <emscripten/bind.h>
#include <emscripten/emmalloc.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/attention.h"
#include "core/memory_limit.h"
#include "core/multi_head.h"
#include "core/positional.h"
#include "core/rng.h"
#include "core/softmax.h"
#include "kernels/kernels.h"
#include "wasm/binding_util.h"
#include "wasm/fast_path.h"

using emscripten::val;

namespace {

using namespace attn_js;  // binding_util.h: tensors, statuses, traces and options between JS and C++

// ---- functions -------------------------------------------------------------------------------

val softmax_js(val x) {
  attn::Tensor y;
  const attn::Status st = attn::softmax(tensor_from_js(x), y);
  val out = status_object(st);
  if (st.ok()) out.set("result", tensor_object(y));
  return out;
}

val layer_norm_js(val x, float eps, val weight, val bias) {
  attn::Tensor y;
  const attn::Status st = attn::layer_norm(tensor_from_js(x), layer_norm_options(eps, weight, bias), y);
  val out = status_object(st);
  if (st.ok()) out.set("result", tensor_object(y));
  return out;
}

// o: { mask?, additiveMask?, causal, scale?, dropoutP, dropoutSeed, needWeights, trace }
val sdpa_js(val q, val k, val v, val o) {
  MaskStorage masks;
  const attn::SdpaOptions options = read_sdpa_options(o, masks);
  attn::Trace trace;
  const bool tracing = has(o, "trace") && o["trace"].as<bool>();
  attn::SdpaResult result;
  const attn::Status st = attn::scaled_dot_product_attention(
      tensor_from_js(q), tensor_from_js(k), tensor_from_js(v), options, result, tracing ? &trace : nullptr);
  return attention_result(st, result, options.need_weights, tracing ? &trace : nullptr);
}

val seeded_normal_js(double count, val seed) {
  // count: a non-negative integer (the wrapper checks the shape); the limit is checked before the
  // vector is allocated, so a huge request is TOO_LARGE instead of a failed allocation.
  const attn::Status st =
      attn::check_allocation(count > 0 ? static_cast<std::uint64_t>(count) : 0, "seededNormal");
  val out = status_object(st);
  if (!st.ok()) return out;
  std::vector<float> data(count > 0 ? static_cast<size_t>(count) : 0);
  const std::uint64_t s = seed_from_js(seed);
  for (size_t i = 0; i < data.size(); ++i) data[i] = attn::approx_normal(s, i);
  out.set("result", float_array(data));
  return out;
}

void set_memory_limit_js(double bytes) {
  // The wrapper passes a whole number in [1, 2^53); the clamp keeps the conversion defined anyway.
  const double clamped = bytes > 0 ? std::min(bytes, 9007199254740992.0) : 0.0;
  attn::set_memory_limit_bytes(static_cast<std::uint64_t>(clamped));
}
double memory_limit_js() {
  return static_cast<double>(attn::memory_limit_bytes());
}
std::string kernel_variant_js() {
  return attn::kernels::active_variant();
}
// Bytes malloc has handed out and not freed (for leak checks).
double heap_used_bytes_js() {
  return static_cast<double>(emmalloc_dynamic_heap_size() - emmalloc_free_dynamic_memory());
}

// ---- handles ---------------------------------------------------------------------------------

// A MultiHeadAttention's KV cache (made by MhaHandle::create_cache).
struct KvCacheHandle {
  attn::KvCache cache;
  int length() const { return cache.length; }
  int max_length() const { return cache.max_length; }
  int batch() const { return cache.batch; }
  void reset() { cache.reset(); }
};

class MhaHandle {
 public:
  // config: { embedDim, numHeads, kdim, vdim, headDim, valueHeadDim, bias, addBiasKV, addZeroAttn,
  //           residual, layerNorm, layerNormEps, seed } — all present (the wrapper fills defaults).
  val init(val c) {
    attn::MhaConfig config;
    config.embed_dim = c["embedDim"].as<int>();
    config.num_heads = c["numHeads"].as<int>();
    config.kdim = c["kdim"].as<int>();
    config.vdim = c["vdim"].as<int>();
    config.head_dim = c["headDim"].as<int>();
    config.value_head_dim = c["valueHeadDim"].as<int>();
    config.bias = c["bias"].as<bool>();
    config.add_bias_kv = c["addBiasKV"].as<bool>();
    config.add_zero_attn = c["addZeroAttn"].as<bool>();
    config.residual = c["residual"].as<bool>();
    config.layer_norm = c["layerNorm"].as<bool>();
    config.layer_norm_eps = c["layerNormEps"].as<float>();
    config.seed = seed_from_js(c["seed"]);
    config.num_kv_heads = c["numKVHeads"].as<int>();
    if (has(c, "rope")) {  // { base, interleaved, dims }
      attn::RotaryOptions r;
      r.base = c["rope"]["base"].as<double>();
      r.style =
          c["rope"]["interleaved"].as<bool>() ? attn::RotaryStyle::kInterleaved : attn::RotaryStyle::kHalf;
      r.dims = c["rope"]["dims"].as<int>();
      config.rope = r;
    }
    return status_object(attn::MultiHeadAttention::create(config, mha_));
  }
  int head_dim() const { return mha_.head_dim(); }
  int num_kv_heads() const { return mha_.num_kv_heads(); }
  val create_cache(KvCacheHandle& out, int max_length, int batch) const {
    return status_object(mha_.create_cache(max_length, batch, out.cache));
  }
  // o as forward's (no masks, positional, dropout or requiresGrad: the core refuses them).
  val forward_cached(val x, KvCacheHandle& cache, val o) {
    attn::MhaForwardOptions options;
    read_common_options(o, options.scale, options.dropout, options.need_weights);
    options.causal = has(o, "causal") && o["causal"].as<bool>();
    options.positions = read_positions(o);
    options.average_weights = !has(o, "averageWeights") || o["averageWeights"].as<bool>();
    const bool tracing = has(o, "trace") && o["trace"].as<bool>();
    attn::Trace trace;
    attn::MhaResult result;
    const attn::Status st =
        mha_.forward_cached(tensor_from_js(x), cache.cache, options, result, tracing ? &trace : nullptr);
    return attention_result(st, result, options.need_weights, tracing ? &trace : nullptr);
  }
  int value_head_dim() const { return mha_.value_head_dim(); }
  val parameter_names() const {
    val out = val::array();
    const auto names = mha_.parameter_names();
    for (size_t i = 0; i < names.size(); ++i) out.set(i, names[i]);
    return out;
  }
  val set_parameter(std::string name, val t) {
    return status_object(mha_.set_parameter(name, tensor_from_js(t)));
  }
  val get_parameter(std::string name) const {
    attn::Tensor t;
    const attn::Status st = mha_.get_parameter(name, t);
    val out = status_object(st);
    if (st.ok()) out.set("result", tensor_object(t));
    return out;
  }
  // o: { mask?, additiveMask?, keyPaddingMask?, causal, needWeights, averageWeights, trace,
  //      scale?, dropoutP, dropoutSeed, positional?, requiresGrad? }. With requiresGrad the forward
  // runs as forward_saving into saved_, for backward.
  val forward(val query, val key, val value, val o);

  // ---- backward. saved_ holds what the latest requiresGrad forward kept. The wrapper calls
  // clearSaved at the start of every later forward (so a forward without requiresGrad, or one that
  // fails, leaves nothing behind and frees the memory); the lean path never touches saved_.
  void clear_saved() { saved_ = attn::MhaSaved{}; }
  // { code, message, query, key?, value?, params: { name: tensor } }: the gradients of
  // sum(output ⊙ gradOutput) for the forward that filled saved_ (INVALID_ARGUMENT when none did,
  // or a parameter was set since).
  val backward(val grad_output) const;

  // ---- the lean path: the common forward (no masks, positional, dropout or trace) with numbers
  // only. The wrapper writes inputs into this handle's buffers (HEAPF32.set at inputPtr) and shapes
  // into io_, calls forwardFast, and copies the results out (HEAPF32.slice) using the pointers
  // forwardFast leaves in io_. Buffers are kept for the next call and freed with the handle.
  double io_ptr() { return static_cast<double>(reinterpret_cast<std::uintptr_t>(io_)); }
  // Sizes input slot 0 (query), 1 (key) or 2 (value) to n floats; returns its address.
  // Exactly n floats are allocated (a new size re-allocates), so that the wrapper can put a slot
  // back to its earlier size after a refused call and malloc's bytes in use are what they were.
  double input_ptr(int slot, double n) {
    std::vector<float>& data = inputs_[slot < 0 || slot > 2 ? 0 : slot].data;
    const std::size_t size = n > 0 ? static_cast<std::size_t>(n) : 0;
    if (data.size() != size) std::vector<float>(size).swap(data);
    return static_cast<double>(reinterpret_cast<std::uintptr_t>(data.data()));
  }
  int forward_fast(int flags, float scale);
  // The message of the last refused forwardFast, handed over once (the handle keeps no copy, so a
  // refused call leaves malloc's bytes in use as they were).
  std::string last_message() {
    std::string m;
    m.swap(message_);
    return m;
  }

 private:
  // io_ layout (int32): wasm/fast_path.h FastIo (in [0, 12): rank, d0, d1, d2 of query, key, value;
  // out [12, 22): code, output ptr, output length, weights ptr, weights length, weights rank, 4 dims).
  attn::MultiHeadAttention mha_;
  std::int32_t io_[fast_io(FastIo::kSize)] = {};
  attn::Tensor inputs_[3];  // query, key, value: (rank ≤ 3) row-major
  attn::MhaResult result_;  // output (B, Tq, E), weights; kept so the wrapper can copy them out
  attn::MhaSaved saved_;    // of the latest requiresGrad forward (empty otherwise)
  std::string message_;     // of the last failed forward_fast
};

// flags: wasm/fast_path.h FastFlag (key, value, causal, needWeights, averageWeights, scale given).
// A result buffer put back to its capacity at the start of a refused call (its contents do not
// matter then): malloc's bytes in use are as before the call.
static void restore_capacity(std::vector<float>& v, std::size_t capacity) {
  if (v.capacity() == capacity) return;
  std::vector<float> back;
  back.reserve(capacity);
  v.swap(back);
}

int MhaHandle::forward_fast(int flags, float scale) {
  const std::size_t output_capacity = result_.output.data.capacity(),
                    weights_capacity = result_.weights.data.capacity();
  // The first call allocates the shape vectors: a refusal then gives them back.
  const bool shapes_unallocated = inputs_[0].shape.capacity() == 0 && result_.output.shape.capacity() == 0 &&
                                  result_.weights.shape.capacity() == 0;
  constexpr int stride = fast_io(FastIo::kInputStride);
  for (int t = 0; t < 3; ++t) {  // 1. shapes from io_
    const std::int32_t* in = io_ + stride * t;
    const int rank = in[0] < 0 ? 0 : (in[0] > 3 ? 3 : in[0]);
    inputs_[t].shape.assign(in + 1, in + 1 + rank);
  }
  attn::MhaForwardOptions options;  // 2. options
  options.causal = fast_flag(flags, FastFlag::kCausal);
  options.need_weights = fast_flag(flags, FastFlag::kNeedWeights);
  options.average_weights = fast_flag(flags, FastFlag::kAverageWeights);
  if (fast_flag(flags, FastFlag::kScale)) options.scale = scale;
  const attn::Status st =
      mha_.forward(inputs_[0], fast_flag(flags, FastFlag::kKey) ? &inputs_[1] : nullptr,
                   fast_flag(flags, FastFlag::kValue) ? &inputs_[2] : nullptr, options, result_);
  std::int32_t* out = io_ + fast_io(FastIo::kOut);  // 3. where the results are (out[i] = io_[kOut + i])
  out[0] = static_cast<std::int32_t>(st.code);
  if (!st.ok()) {
    message_ = st.message;
    restore_capacity(result_.output.data, output_capacity);
    restore_capacity(result_.weights.data, weights_capacity);
    if (shapes_unallocated) {
      for (auto& input : inputs_) attn::Shape().swap(input.shape);
      attn::Shape().swap(result_.output.shape);
      attn::Shape().swap(result_.weights.shape);
    }
    return out[0];
  }
  const auto address = [](const std::vector<float>& v) {
    return static_cast<std::int32_t>(reinterpret_cast<std::uintptr_t>(v.data()));
  };
  io_[fast_io(FastIo::kOutOutputPtr)] = address(result_.output.data);
  io_[fast_io(FastIo::kOutOutputLength)] = static_cast<std::int32_t>(result_.output.data.size());
  io_[fast_io(FastIo::kOutWeightsPtr)] = address(result_.weights.data);
  io_[fast_io(FastIo::kOutWeightsLength)] = static_cast<std::int32_t>(result_.weights.data.size());
  io_[fast_io(FastIo::kOutWeightsRank)] = static_cast<std::int32_t>(result_.weights.shape.size());
  constexpr std::size_t max_dims = fast_io(FastIo::kOutEnd) - fast_io(FastIo::kOutWeightsDims);
  for (std::size_t a = 0; a < result_.weights.shape.size() && a < max_dims; ++a)
    io_[fast_io(FastIo::kOutWeightsDims) + a] = result_.weights.shape[a];
  return out[0];
}

val MhaHandle::forward(val query, val key, val value, val o) {
  attn::MhaForwardOptions options;
  read_common_options(o, options.scale, options.dropout, options.need_weights);
  options.causal = has(o, "causal") && o["causal"].as<bool>();
  options.positions = read_positions(o);
  options.average_weights = !has(o, "averageWeights") || o["averageWeights"].as<bool>();
  attn::BoolTensor mask, padding;
  attn::Tensor additive, positional, key_t, value_t;
  if (has(o, "mask")) options.mask = &(mask = bool_tensor_from_js(o["mask"]));
  if (has(o, "additiveMask")) options.additive_mask = &(additive = tensor_from_js(o["additiveMask"]));
  if (has(o, "keyPaddingMask"))
    options.key_padding_mask = &(padding = bool_tensor_from_js(o["keyPaddingMask"]));
  if (has(o, "positional")) options.positional = &(positional = tensor_from_js(o["positional"]));
  const bool has_key = !key.isNull() && !key.isUndefined();
  const bool has_value = !value.isNull() && !value.isUndefined();
  if (has_key) key_t = tensor_from_js(key);
  if (has_value) value_t = tensor_from_js(value);
  attn::Trace trace;
  const bool tracing = has(o, "trace") && o["trace"].as<bool>();
  attn::MhaResult result;
  const attn::Tensor query_t = tensor_from_js(query);
  const attn::Tensor* k = has_key ? &key_t : nullptr;
  const attn::Tensor* v = has_value ? &value_t : nullptr;
  const bool saving = has(o, "requiresGrad") && o["requiresGrad"].as<bool>();
  const attn::Status st =
      saving ? mha_.forward_saving(query_t, k, v, options, result, saved_, tracing ? &trace : nullptr)
             : mha_.forward(query_t, k, v, options, result, tracing ? &trace : nullptr);
  if (saving && !st.ok()) saved_ = attn::MhaSaved{};  // nothing half-kept stays allocated
  return attention_result(st, result, options.need_weights, tracing ? &trace : nullptr);
}

val MhaHandle::backward(val grad_output) const {
  attn::MhaGrads grads;
  const attn::Status st = mha_.backward(saved_, tensor_from_js(grad_output), grads);
  val out = status_object(st);
  if (!st.ok()) return out;
  out.set("query", tensor_object(grads.query));
  if (!grads.key.shape.empty()) out.set("key", tensor_object(grads.key));  // empty = no key given
  if (!grads.value.shape.empty()) out.set("value", tensor_object(grads.value));
  val params = val::object();
  for (const auto& [name, grad] : grads.params) params.set(name, tensor_object(grad));
  out.set("params", params);
  return out;
}

}  // namespace

EMSCRIPTEN_BINDINGS(attention_wasm) {
  emscripten::function("_softmax", &softmax_js);
  emscripten::function("_layerNorm", &layer_norm_js);
  emscripten::function("_sdpa", &sdpa_js);
  emscripten::function("_seededNormal", &seeded_normal_js);
  emscripten::function("_setMemoryLimit", &set_memory_limit_js);
  emscripten::function("_memoryLimit", &memory_limit_js);
  emscripten::function("_kernelVariant", &kernel_variant_js);
  emscripten::function("_heapUsedBytes", &heap_used_bytes_js);
  emscripten::class_<MhaHandle>("MhaHandle")
      .constructor<>()
      .function("init", &MhaHandle::init)
      .function("headDim", &MhaHandle::head_dim)
      .function("valueHeadDim", &MhaHandle::value_head_dim)
      .function("parameterNames", &MhaHandle::parameter_names)
      .function("setParameter", &MhaHandle::set_parameter)
      .function("getParameter", &MhaHandle::get_parameter)
      .function("forward", &MhaHandle::forward)
      .function("clearSaved", &MhaHandle::clear_saved)
      .function("backward", &MhaHandle::backward)
      .function("ioPtr", &MhaHandle::io_ptr)
      .function("inputPtr", &MhaHandle::input_ptr)
      .function("forwardFast", &MhaHandle::forward_fast)
      .function("lastMessage", &MhaHandle::last_message)
      .function("numKVHeads", &MhaHandle::num_kv_heads)
      .function("createCache", &MhaHandle::create_cache)
      .function("forwardCached", &MhaHandle::forward_cached);
  emscripten::class_<KvCacheHandle>("KvCacheHandle")
      .constructor<>()
      .function("length", &KvCacheHandle::length)
      .function("maxLength", &KvCacheHandle::max_length)
      .function("batch", &KvCacheHandle::batch)
      .function("reset", &KvCacheHandle::reset);
}
