// Bindings of the model and training API (src/model, src/train), with the conventions of
// bindings.cpp: tensors in as { data, shape } objects, token ids as Int32Array + (B, T), results
// out as copies, and a { code, message, ... } object per call. The JS side is
// src/js/tiny/tiny-transformer.js.
//
// Ownership: a TinyModelHandle holds its TinyTransformer through a shared_ptr, and a TrainerHandle
// holds another reference to the same model, because attn::Trainer keeps a raw pointer to it: the
// model's C++ object lives until both handles are deleted, whatever order JS disposes them in (the
// JS wrapper refuses to step a trainer whose model was disposed, with DISPOSED).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/tiny_transformer.h"
#include "train/evaluate.h"
#include "train/tasks.h"
#include "train/trainer.h"
#include "wasm/binding_util.h"
#include "wasm/bindings_gradients.h"
#include "wasm/bindings_interp.h"

namespace {

using namespace attn_js;

val int_array(const std::vector<std::int32_t>& data) {
  // Copy out of the heap, as float_array does.
  return val::global("Int32Array").new_(emscripten::typed_memory_view(data.size(), data.data()));
}

// ids: Int32Array of b·t values (the wrapper checks the typed array and the shape).
attn::IdBatch id_batch(const val& ids, int b, int t) {
  return attn::IdBatch{b, t, emscripten::convertJSArrayToNumberVector<std::int32_t>(ids)};
}

val tensor_list(const std::vector<attn::Tensor>& ts) {
  return tensors_array(ts);
}

std::vector<attn::Tensor> tensors_from_js(const val& list) {
  std::vector<attn::Tensor> out;
  const int n = list["length"].as<int>();
  out.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) out.push_back(tensor_from_js(list[i]));
  return out;
}

class TinyModelHandle {
 public:
  // c: { vocabSize, maxLength, dModel, numHeads, numLayers, mlp, mlpHidden, positional (0 none,
  //      1 learned, 2 sinusoidal, 3 rope, 4 alibi), norm (0 none, 1 pre, 2 post), causal, seed,
  //      numKVHeads, window (0 = none) }, all present.
  val init(val c) {
    attn::TinyConfig config;
    config.vocab_size = c["vocabSize"].as<int>();
    config.max_length = c["maxLength"].as<int>();
    config.d_model = c["dModel"].as<int>();
    config.num_heads = c["numHeads"].as<int>();
    config.num_layers = c["numLayers"].as<int>();
    config.mlp = c["mlp"].as<bool>();
    config.mlp_hidden = c["mlpHidden"].as<int>();
    config.positional = static_cast<attn::PositionalKind>(c["positional"].as<int>());
    config.norm = static_cast<attn::NormKind>(c["norm"].as<int>());
    config.causal = c["causal"].as<bool>();
    config.seed = seed_from_js(c["seed"]);
    config.num_kv_heads = c["numKVHeads"].as<int>();
    config.window = c["window"].as<int>();
    auto model = std::make_shared<attn::TinyTransformer>();
    const attn::Status st = attn::TinyTransformer::create(config, *model);
    if (st.ok()) model_ = std::move(model);
    return status_object(st);
  }

  const std::shared_ptr<attn::TinyTransformer>& model() const { return model_; }

  val parameter_names() const {
    val out = val::array();
    const auto& names = model_->parameter_names();
    for (std::size_t i = 0; i < names.size(); ++i) out.set(i, names[i]);
    return out;
  }
  double parameter_count() const { return static_cast<double>(model_->parameter_count()); }
  int mlp_hidden() const { return model_->config().mlp_hidden; }
  val parameters() const { return tensor_list(model_->parameters()); }
  // values: tensors in parameterNames() order; all checked before any is written.
  val set_parameters(val values) { return status_object(model_->set_parameters(tensors_from_js(values))); }

  // o: the forward's options (bindings_interp.h: attention and traced layers, a mask applied in every
  // layer, the interpretability hooks) → { code, message, logits, attention, traces, hiddenStates, … }.
  val forward(val ids, int b, int t, val o) {
    JsForwardOptions options;
    read_forward_options(o, options);
    attn::ForwardResult r;
    attn::Status st = make_hooks(options, model_->hook_shapes(), b, t);
    if (st.ok()) st = model_->forward(id_batch(ids, b, t), options.options, r);
    return forward_result_object(st, r, options, model_->config().num_layers, b, t);
  }
  val hook_names() const { return hook_names_array(model_->hook_shapes()); }

  // o: the metric and what to return (bindings_gradients.h) → { code, message, values, gradHidden,
  // gradZ, gradMlp, gradAttention, hidden, z, mlpBranch } (TinyTransformer::metric_gradients).
  val metric_gradients(val ids, int b, int t, val o) {
    attn::GradientResult r;
    const attn::Status st = model_->metric_gradients(id_batch(ids, b, t), read_gradient_options(o), r);
    return gradient_result_object(st, r);
  }

  val loss(val ids, val targets, int b, int t) {
    float loss = 0.0f;
    const attn::Status st = model_->loss(id_batch(ids, b, t), id_batch(targets, b, t), loss);
    val out = status_object(st);
    if (st.ok()) out.set("loss", loss);
    return out;
  }

  val gradients(val ids, val targets, int b, int t) {
    float loss = 0.0f;
    std::vector<attn::Tensor> grads;
    const attn::Status st = model_->gradients(id_batch(ids, b, t), id_batch(targets, b, t), loss, grads);
    val out = status_object(st);
    if (!st.ok()) return out;
    out.set("loss", loss);
    out.set("grads", tensor_list(grads));
    return out;
  }

 private:
  std::shared_ptr<attn::TinyTransformer> model_;
};

class TrainerHandle {
 public:
  // o: { lr, beta1, beta2, eps, weightDecay, clipGradNorm } (0 = no clipping), all present.
  val init(const TinyModelHandle& model, val o) {
    attn::AdamWOptions options;
    options.lr = o["lr"].as<float>();
    options.beta1 = o["beta1"].as<float>();
    options.beta2 = o["beta2"].as<float>();
    options.eps = o["eps"].as<float>();
    options.weight_decay = o["weightDecay"].as<float>();
    options.clip_grad_norm = o["clipGradNorm"].as<float>();
    const attn::Status st = attn::Trainer::create(model.model().get(), options, trainer_);
    if (st.ok()) model_ = model.model();
    return status_object(st);
  }

  // The whole training step in one call: forward, backward, clipping and the AdamW update.
  val step(val ids, val targets, int b, int t) {
    attn::TrainStepResult r;
    const attn::Status st = trainer_.step(id_batch(ids, b, t), id_batch(targets, b, t), r);
    val out = status_object(st);
    if (!st.ok()) return out;
    out.set("loss", r.loss);
    out.set("gradNorm", r.grad_norm);
    return out;
  }

  double steps() const { return static_cast<double>(trainer_.steps()); }
  val set_learning_rate(float lr) { return status_object(trainer_.set_learning_rate(lr)); }
  val exp_avg() const { return tensor_list(trainer_.exp_avg()); }
  val exp_avg_sq() const { return tensor_list(trainer_.exp_avg_sq()); }
  // step: a non-negative integer below 2^53 (checked by the wrapper).
  val set_state(double step, val exp_avg, val exp_avg_sq) {
    return status_object(trainer_.set_state(static_cast<std::int64_t>(step), tensors_from_js(exp_avg),
                                            tensors_from_js(exp_avg_sq)));
  }

 private:
  std::shared_ptr<attn::TinyTransformer> model_;  // keeps trainer_'s model pointer valid
  attn::Trainer trainer_;
};

class TaskHandle {
 public:
  val init(std::string name, int length, int num_symbols, val seed) {
    attn::TaskConfig config;
    config.name = std::move(name);
    config.length = length;
    config.num_symbols = num_symbols;
    config.seed = seed_from_js(seed);
    return status_object(attn::Task::create(config, task_));
  }
  int vocab_size() const { return task_.vocab_size(); }
  int sequence_length() const { return task_.sequence_length(); }
  val token_names() const {
    val out = val::array();
    const auto names = task_.token_names();
    for (std::size_t i = 0; i < names.size(); ++i) out.set(i, names[i]);
    return out;
  }
  const attn::Task& task() const { return task_; }

  val batch(int n) {
    std::vector<std::int32_t> ids, targets;
    const attn::Status st = task_.next_batch(n, ids, targets);
    val out = status_object(st);
    if (!st.ok()) return out;
    out.set("ids", int_array(ids));
    out.set("targets", int_array(targets));
    return out;
  }

 private:
  attn::Task task_;
};

val evaluate_js(TinyModelHandle& model, const TaskHandle& task, int batches, int batch_size, val seed) {
  attn::EvalResult r;
  const attn::Status st =
      attn::evaluate(*model.model(), task.task(), batches, batch_size, seed_from_js(seed), r);
  val out = status_object(st);
  if (!st.ok()) return out;
  out.set("loss", r.loss);
  out.set("tokenAccuracy", r.token_accuracy);
  out.set("sequenceAccuracy", r.sequence_accuracy);
  return out;
}

}  // namespace

EMSCRIPTEN_BINDINGS(attention_model) {
  emscripten::class_<TinyModelHandle>("TinyModelHandle")
      .constructor<>()
      .function("init", &TinyModelHandle::init)
      .function("parameterNames", &TinyModelHandle::parameter_names)
      .function("parameterCount", &TinyModelHandle::parameter_count)
      .function("mlpHidden", &TinyModelHandle::mlp_hidden)
      .function("parameters", &TinyModelHandle::parameters)
      .function("setParameters", &TinyModelHandle::set_parameters)
      .function("forward", &TinyModelHandle::forward)
      .function("hookNames", &TinyModelHandle::hook_names)
      .function("loss", &TinyModelHandle::loss)
      .function("gradients", &TinyModelHandle::gradients)
      .function("metricGradients", &TinyModelHandle::metric_gradients);
  emscripten::class_<TrainerHandle>("TrainerHandle")
      .constructor<>()
      .function("init", &TrainerHandle::init)
      .function("step", &TrainerHandle::step)
      .function("steps", &TrainerHandle::steps)
      .function("setLearningRate", &TrainerHandle::set_learning_rate)
      .function("expAvg", &TrainerHandle::exp_avg)
      .function("expAvgSq", &TrainerHandle::exp_avg_sq)
      .function("setState", &TrainerHandle::set_state);
  emscripten::class_<TaskHandle>("TaskHandle")
      .constructor<>()
      .function("init", &TaskHandle::init)
      .function("vocabSize", &TaskHandle::vocab_size)
      .function("sequenceLength", &TaskHandle::sequence_length)
      .function("tokenNames", &TaskHandle::token_names)
      .function("batch", &TaskHandle::batch);
  emscripten::function("_evaluate", &evaluate_js);
}
