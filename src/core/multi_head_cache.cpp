// MultiHeadAttention's KV cache: decoding one token (or a chunk) at a time, projecting only the new
// rows and attending over every cached key. The same stages as forward (multi_head.cpp), with the
// keys and values read from the cache (rows of H_kv·d floats, max_length rows per batch).
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "core/attention_engine.h"
#include "core/memory_limit.h"
#include "core/multi_head.h"
#include "core/multi_head_steps.h"
#include "kernels/kernels.h"

namespace attn {

using namespace mha_steps;

namespace {

Status invalid(const std::string& what) {
  return Status::Error(StatusCode::kInvalidArgument, what);
}

// What a cached forward cannot do, and a cache that does not fit this call.
Status check_cached_call(const MhaConfig& c, const KvCache& cache, int key_width, int value_width,
                         const MhaForwardOptions& o, std::uint64_t version) {
  if (cache.key_width != key_width || cache.value_width != value_width || !cache.made()) {
    return invalid(
        "this KV cache was made by another MultiHeadAttention (or is disposed): use this module's "
        "createCache");
  }
  if (o.mask || o.additive_mask || o.key_padding_mask) {
    return invalid(
        "masks and keyPaddingMask are not supported with a KV cache (causal, window and alibi are)");
  }
  if (o.positional)
    return invalid("a positional table is not supported with a KV cache: use the rope config");
  if (o.dropout.p > 0.0f) return invalid("dropout is not supported with a KV cache (decoding is inference)");
  if (c.add_bias_kv || c.add_zero_attn)
    return invalid("addBiasKV and addZeroAttn are not supported with a KV cache");
  if (cache.length > 0 && cache.parameter_version != version) {
    return invalid(
        "the weights changed after this KV cache was filled: reset() it and feed the sequence again");
  }
  if (o.positions.offset && *o.positions.offset != cache.length) {
    return invalid(
        "with a KV cache the queries sit at positions from cache.length = " + std::to_string(cache.length) +
        "; positionOffset " + std::to_string(*o.positions.offset) + " contradicts it");
  }
  return Status::Ok();
}

// Whether a row narrowed to float16 lost a finite value to ±inf (float16 ends at 65504).
bool overflowed(int n, const float* x, const std::uint16_t* h) {
  for (int i = 0; i < n; ++i)
    if ((h[i] & 0x7c00u) == 0x7c00u && std::isfinite(x[i])) return true;
  return false;
}

// Appends rows [0, T) of each batch's new keys and values (rows of stride ld) after the cached ones
// (rows past cache.length: invisible until the step succeeds). A float16 cache narrows them and
// refuses a step whose keys or values pass float16's range, which ±inf would silently turn into
// weights of 0 or NaN.
Status append(const Projections& pr, const Dims& d, KvCache& cache) {
  const bool half = cache.dtype == KvDtype::kF16;
  for (int bi = 0; bi < d.b; ++bi)
    for (int t = 0; t < d.tq; ++t) {
      const std::int64_t src = (static_cast<std::int64_t>(bi) * d.tq + t) * pr.ldkv;
      const std::int64_t row = static_cast<std::int64_t>(bi) * cache.max_length + cache.length + t;
      if (!half) {
        std::memcpy(cache.k.data() + row * cache.key_width, pr.k + src, sizeof(float) * cache.key_width);
        std::memcpy(cache.v.data() + row * cache.value_width, pr.v + src, sizeof(float) * cache.value_width);
        continue;
      }
      std::uint16_t* k = cache.k16.data() + row * cache.key_width;
      std::uint16_t* v = cache.v16.data() + row * cache.value_width;
      kernels::narrow_f16(cache.key_width, pr.k + src, k);
      kernels::narrow_f16(cache.value_width, pr.v + src, v);
      if (overflowed(cache.key_width, pr.k + src, k) || overflowed(cache.value_width, pr.v + src, v))
        return Status::Error(StatusCode::kNonFinite,
                             "a key or value of token " + std::to_string(cache.length + t) +
                                 " is beyond float16's range (±65504): the float16 KV cache cannot hold it "
                                 "(use kvCache 'f32'; the cache is unchanged)");
    }
  return Status::Ok();
}

// The trace step (B, H_kv, Tk, d) of the first tk rows of a cache's keys (key) or values, max_length
// rows per batch (a float16 cache's widened: the trace is a copy out by definition).
void record_cache(Trace* trace, const char* name, const char* d_axis, bool key, const KvCache& cache,
                  int heads, int dh, int tk) {
  if (!trace) return;
  std::vector<float> widened;
  const float* src = key ? cache.k.data() : cache.v.data();
  if (cache.dtype == KvDtype::kF16) {
    const std::vector<std::uint16_t>& h = key ? cache.k16 : cache.v16;
    widened.resize(h.size());
    kernels::widen_half(static_cast<int>(h.size()), h.data(), kernels::HalfFormat::kF16, widened.data());
    src = widened.data();
  }
  std::vector<float> out(static_cast<std::size_t>(cache.batch) * heads * tk * dh);  // (B, H_kv, Tk, d)
  const int width = heads * dh;
  for (int bi = 0; bi < cache.batch; ++bi)
    for (int h = 0; h < heads; ++h)
      for (int t = 0; t < tk; ++t) {
        const float* from = src + (static_cast<std::int64_t>(bi) * cache.max_length + t) * width + h * dh;
        std::memcpy(out.data() + ((static_cast<std::size_t>(bi) * heads + h) * tk + t) * dh, from,
                    sizeof(float) * dh);
      }
  trace->record(name, {"B", "H_kv", "T_k", d_axis}, Tensor({cache.batch, heads, tk, dh}, std::move(out)));
}

// The cache must hold this call's sequences and have room for its new rows.
Status check_cache_room(const Dims& d, const KvCache& cache) {
  if (d.b != cache.batch) {
    return Status::Error(StatusCode::kShapeMismatch, "the KV cache holds " + std::to_string(cache.batch) +
                                                         " sequences but x has a batch of " +
                                                         std::to_string(d.b));
  }
  if (cache.length + static_cast<std::int64_t>(d.tq) > cache.max_length) {
    return Status::Error(StatusCode::kTooLarge,
                         "the KV cache holds maxLength = " + std::to_string(cache.max_length) +
                             " tokens: " + std::to_string(cache.length) + " cached + " +
                             std::to_string(d.tq) + " new do not fit (the cache is unchanged)");
  }
  return Status::Ok();
}

// The engine reads the new rows' q from the projections and k, v from the cache: rows of H_kv·d
// floats, max_length rows per batch.
void bind_cache(const Projections& pr, const KvCache& cache, const Heads& hd, AttentionProblem& p) {
  p.q = pr.q;
  p.ldq = pr.ldq;
  if (cache.dtype == KvDtype::kF16) {
    p.k16 = cache.k16.data();
    p.v16 = cache.v16.data();
  } else {
    p.k = cache.k.data();
    p.v = cache.v.data();
  }
  p.ldk = hd.kqk();
  p.ldv = hd.kvo();
  p.kv_rows = cache.max_length;
}

void set_output_shape(const Dims& d, Tensor& output) {
  if (d.batched)
    output.shape.assign({d.b, d.tq, d.e});  // assign: no allocation when reused
  else
    output.shape.assign({d.tq, d.e});
}

}  // namespace

void MultiHeadAttention::norm_v(int b, int tk, int tk_rows, float* v, int ldv) const {
  const int wv = kv_heads_ * value_head_dim_;
  for (int bi = 0; bi < b; ++bi)
    for (int t = 0; t < tk; ++t) {
      float* row = v + (static_cast<std::int64_t>(bi) * tk_rows + t) * ldv;
      for (int g = 0; g < wv; g += value_head_dim_) {  // weightless: rms_groups without its × w
        double ss = 0;
        for (int i = 0; i < value_head_dim_; ++i) ss += static_cast<double>(row[g + i]) * row[g + i];
        const double inv = 1.0 / std::sqrt(ss / value_head_dim_ + config_.qk_norm_eps);
        for (int i = 0; i < value_head_dim_; ++i) row[g + i] = static_cast<float>(row[g + i] * inv);
      }
    }
}

Status MultiHeadAttention::check_plain_call(bool saving) const {
  if (config_.shared_kv) return invalid("this module shares another's keys and values: call forward_shared");
  if (saving && config_.v_norm) return invalid("the value norm has no backward yet");
  return check_frozen_ready();
}

Status MultiHeadAttention::create_cache(int max_length, int batch, KvCache& out, KvDtype dtype) const {
  if (max_length < 1 || batch < 1) {
    return invalid("a KV cache needs maxLength >= 1 and batch >= 1, got " + std::to_string(max_length) +
                   " and " + std::to_string(batch));
  }
  const int kw = kv_heads_ * head_dim_, vw = kv_heads_ * value_head_dim_;
  const std::uint64_t rows = static_cast<std::uint64_t>(max_length) * batch;
  const bool half = dtype == KvDtype::kF16;  // the limit counts float32 elements: a half is half of one
  ATTN_RETURN_IF_ERROR(check_allocation(half ? (rows * (kw + vw) + 1) / 2 : rows * (kw + vw),
                                        half ? "float16 KV cache" : "KV cache"));
  KvCache c;
  c.max_length = max_length;
  c.batch = batch;
  c.key_width = kw;
  c.value_width = vw;
  c.dtype = dtype;
  if (half) {
    c.k16.assign(rows * kw, 0);
    c.v16.assign(rows * vw, 0);
  } else {
    c.k.assign(rows * kw, 0.0f);
    c.v.assign(rows * vw, 0.0f);
  }
  out = std::move(c);
  return Status::Ok();
}

Status MultiHeadAttention::forward_cached(const Tensor& x, KvCache& cache, const MhaForwardOptions& options,
                                          MhaResult& result, Trace* trace) const {
  const Heads hd = heads_of(config_, head_dim_, value_head_dim_);
  if (config_.shared_kv) return invalid("this module shares another's keys and values: call forward_shared");
  ATTN_RETURN_IF_ERROR(check_cached_call(config_, cache, hd.kqk(), hd.kvo(), options, parameter_version_));
  if (config_.frozen) ATTN_RETURN_IF_ERROR(check_frozen_ready());
  Dims d;
  ATTN_RETURN_IF_ERROR(resolve_dims(x, nullptr, nullptr, config_.embed_dim, kdim_, vdim_, d));
  ATTN_RETURN_IF_ERROR(check_scale_and_dropout(options.scale, options.dropout));
  ATTN_RETURN_IF_ERROR(check_cache_room(d, cache));
  // 0. The problem over every cached key: query row r at cache.length + r, key c at c.
  MhaForwardOptions o = options;
  o.positions.offset = cache.length;
  o.positions.bottom_right = false;  // the same alignment, stated by the offset
  Dims all = d;
  all.tk = cache.length + d.tq;
  AttentionProblem p;
  p.masks.lead = std::move(cache.step_lead);  // its buffer (B, H) again: no allocation once warm
  ATTN_RETURN_IF_ERROR(make_problem(o, all, hd, trace != nullptr, p));
  const std::uint64_t rows_q = static_cast<std::uint64_t>(d.b) * d.tq;
  ATTN_RETURN_IF_ERROR(
      check_allocation(rows_q * (hd.h * (hd.dk + 2 * hd.dv) + hd.kqk() + hd.kvo() + d.e) * (trace ? 2 : 1) +
                           attention_scratch_elements(p, options.need_weights, trace != nullptr),
                       "multi-head attention with a KV cache"));
  ScratchScope scratch;
  const Weights w = weights();
  // 1.–3. the new rows' q, k, v; RoPE at positions cache.length + t; appended after the cached rows
  record(trace, "input", {"B", "T_q", "d_model"}, {d.b, d.tq, d.e}, x.data.data(), x.data.size());
  const Projections pr = project(w, hd, x.data.data(), x.data.data(), x.data.data(), true, d, scratch);
  hook_projections(options.hooks, false, pr, d, hd, d.tq, cache.length, cache.length);
  record_heads(trace, "q", "T_q", "d_k", pr.q, pr.ldq, d.b, hd.h, d.tq, hd.dk);
  if (config_.qk_norm != MhaConfig::QkNorm::kNone) {  // before RoPE, as in forward
    norm_qk(d.b, d.tq, pr.q, pr.ldq, d.tq, d.tq, pr.k, pr.ldkv);
    record_heads(trace, "q_normed", "T_q", "d_k", pr.q, pr.ldq, d.b, hd.h, d.tq, hd.dk);
  }
  if (config_.v_norm) norm_v(d.b, d.tq, d.tq, pr.v, pr.ldkv);  // as in forward
  if (config_.rope) {
    rotate_qk(*config_.rope, hd, d.b, d.tq, cache.length, pr.q, pr.ldq, d.tq, d.tq, cache.length, pr.k,
              pr.ldkv, false, cache.step_rotary);
    temper_rows(pr.q, d.b, d.tq, pr.ldq, hd.h * hd.dk, config_.query_temperature, cache.length);
    record_heads(trace, "q_rotated", "T_q", "d_k", pr.q, pr.ldq, d.b, hd.h, d.tq, hd.dk);
  }
  hook_projections(options.hooks, true, pr, d, hd, d.tq, cache.length, cache.length);
  ATTN_RETURN_IF_ERROR(append(pr, d, cache));  // rows past cache.length: invisible until length moves
  record_cache(trace, config_.rope ? "k_rotated" : "k", "d_k", true, cache, hd.hkv, hd.dk,
               cache.length + d.tq);
  record_cache(trace, "v", "d_v", false, cache, hd.hkv, hd.dv, cache.length + d.tq);
  // 4. attention over the cache: k and v rows of H_kv·d floats, max_length rows per batch
  bind_cache(pr, cache, hd, p);
  AttentionOutputs att;
  att.context_out = scratch.floats(static_cast<std::size_t>(rows_q) * hd.h * hd.dv);  // (B, Tq, H·dv)
  att.ldo = hd.h * hd.dv;
  prepare_weights(options, d, hd.h, p.masks.tk, result.weights, att);
  run_attention(p, options.need_weights, att, trace);
  if (config_.output_gate)  // as in forward
    gate_context(d.b, d.tq, x.data.data(), att.context_out, trace);
  hook_context(options.hooks, att.context_out, d, hd, cache.length);
  // 5.–8. concat, output projection, [residual], [LayerNorm]
  set_output_shape(d, result.output);
  output_stage(w, config_, hd.h * hd.dv, att.context_out, x.data.data(), d, result.output.data, nullptr,
               trace);
  ATTN_RETURN_IF_ERROR(check_computed(result.output.data.data(), result.output.data.size(),
                                      "multi-head attention with a KV cache: the output"));
  if (options.need_weights)
    ATTN_RETURN_IF_ERROR(check_computed(result.weights.data.data(), result.weights.data.size(),
                                        "multi-head attention with a KV cache: the scores"));
  cache.length += d.tq;
  cache.parameter_version = parameter_version_;
  cache.step_lead = std::move(p.masks.lead);
  return Status::Ok();
}

// Only q is projected (the module has no k/v projections); the keys and values are the source cache's
// first source.length rows, this call's T queries its last T positions.
Status MultiHeadAttention::forward_shared(const Tensor& x, const KvCache& source,
                                          const MhaForwardOptions& options, MhaResult& result,
                                          Trace* trace) const {
  const Heads hd = heads_of(config_, head_dim_, value_head_dim_);
  if (!config_.shared_kv) return invalid("forward_shared is for a module made with shared_kv");
  if (source.key_width != hd.kqk() || source.value_width != hd.kvo() || !source.made())
    return invalid("the shared KV cache has other key/value widths than this module's heads");
  if (options.mask || options.additive_mask || options.key_padding_mask || options.positional ||
      options.dropout.p > 0.0f)
    return invalid("masks, positional tables and dropout are not supported over shared keys and values");
  ATTN_RETURN_IF_ERROR(check_frozen_ready());
  Dims d;
  ATTN_RETURN_IF_ERROR(resolve_dims(x, nullptr, nullptr, config_.embed_dim, kdim_, vdim_, d));
  ATTN_RETURN_IF_ERROR(check_scale_and_dropout(options.scale, options.dropout));
  if (d.b != source.batch || d.tq > source.length)
    return Status::Error(StatusCode::kShapeMismatch, "the shared KV cache must hold this call's " +
                                                         std::to_string(d.tq) + " rows of " +
                                                         std::to_string(d.b) + " sequences");
  const int first = source.length - d.tq;  // the position of query row 0
  MhaForwardOptions o = options;
  o.positions.offset = first;
  o.positions.bottom_right = false;
  Dims all = d;
  all.tk = source.length;
  AttentionProblem p;
  ATTN_RETURN_IF_ERROR(make_problem(o, all, hd, trace != nullptr, p));
  const std::uint64_t rows_q = static_cast<std::uint64_t>(d.b) * d.tq;
  ATTN_RETURN_IF_ERROR(
      check_allocation(rows_q * (hd.h * (hd.dk + hd.dv) + d.e) * (trace ? 2 : 1) +
                           attention_scratch_elements(p, options.need_weights, trace != nullptr),
                       "multi-head attention over shared keys and values"));
  ScratchScope scratch;
  const Weights w = weights();
  record(trace, "input", {"B", "T_q", "d_model"}, {d.b, d.tq, d.e}, x.data.data(), x.data.size());
  // 1.–3. q only (B·T, H·dk); its norm and RoPE at positions first + r, as forward_cached's
  const int qk = hd.h * hd.dk;
  float* q = scratch.floats(static_cast<std::size_t>(rows_q) * qk);
  project_q(w, x.data.data(), static_cast<std::int64_t>(rows_q), q, qk);
  const Projections pr{q, nullptr, nullptr, qk, 0};
  hook_queries(options.hooks, false, pr, d, hd, first);
  if (config_.qk_norm != MhaConfig::QkNorm::kNone) norm_qk(d.b, d.tq, q, qk, 0, 0, nullptr, 0);
  if (config_.rope) {
    RotaryTable table;
    make_rotary_table(*config_.rope, hd.dk, first, d.tq, table);
    rotate_rows(q, d.b, d.tq, qk, hd.h, hd.dk, table, false);
    temper_rows(q, d.b, d.tq, qk, qk, config_.query_temperature, first);
  }
  hook_queries(options.hooks, true, pr, d, hd, first);
  record_heads(trace, "q_rotated", "T_q", "d_k", q, qk, d.b, hd.h, d.tq, hd.dk);
  record_cache(trace, "k_shared", "d_k", true, source, hd.hkv, hd.dk, source.length);
  record_cache(trace, "v_shared", "d_v", false, source, hd.hkv, hd.dv, source.length);
  // 4. attention over the source's rows
  bind_cache(pr, source, hd, p);
  AttentionOutputs att;
  att.context_out = scratch.floats(static_cast<std::size_t>(rows_q) * hd.h * hd.dv);  // (B, Tq, H·dv)
  att.ldo = hd.h * hd.dv;
  prepare_weights(options, d, hd.h, p.masks.tk, result.weights, att);
  run_attention(p, options.need_weights, att, trace);
  hook_context(options.hooks, att.context_out, d, hd, first);
  set_output_shape(d, result.output);
  output_stage(w, config_, hd.h * hd.dv, att.context_out, x.data.data(), d, result.output.data, nullptr,
               trace);
  return check_computed(result.output.data.data(), result.output.data.size(),
                        "multi-head attention over shared keys and values: the output");
}

}  // namespace attn
