// The shared checks and small steps of ForwardOptions' hooks (interp_hooks.h).
#include "model/interp_hooks.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace attn {

namespace {

Status invalid(const std::string& what) {
  return Status::Error(StatusCode::kInvalidArgument, what);
}

}  // namespace

Status check_hooks(const ForwardOptions& o, int layers, int b, int t, int width, const char* width_name,
                   bool cached) {
  if (o.logits_row >= t) return invalid("logits_row must be in [0, T)");
  if (!o.patching()) return Status::Ok();
  const bool from_residual = !o.start_residual.empty();
  const std::size_t rows_width = static_cast<std::size_t>(b) * t * width;
  const std::string shape = std::string("(B, T, ") + width_name + ")";
  if (cached) return invalid("the interpretability options run without KV caches");
  if (o.start_layer < 0 || o.start_layer >= layers || (o.start_layer > 0 && !from_residual))
    return invalid("start_layer must be in [0, layers) and needs start_residual");
  if (from_residual && o.start_residual.size() != rows_width)
    return invalid("start_residual must be " + shape);
  if (from_residual && (o.logit_lens || o.hidden_states))
    return invalid("a run from start_residual has no hidden states or logit lens");
  if (o.delta_layer >= layers ||
      (o.delta_layer >= 0 && (o.delta_layer < o.start_layer || o.attn_delta.size() != rows_width)))
    return invalid("attn_delta must be " + shape + " for a layer in [start_layer, layers)");
  if (o.mlp_delta_layer >= layers ||
      (o.mlp_delta_layer >= 0 && (o.mlp_delta_layer < o.start_layer || o.mlp_delta.size() != rows_width)))
    return invalid("mlp_delta must be " + shape + " for a layer in [start_layer, layers)");
  return Status::Ok();
}

void lens_top(int v, const float* logits, ForwardResult& r) {
  const int top = static_cast<int>(std::max_element(logits, logits + v) - logits);
  double z = 0;
  for (int i = 0; i < v; ++i) z += std::exp(static_cast<double>(logits[i]) - logits[top]);
  r.lens_ids.push_back(top);
  r.lens_probs.push_back(static_cast<float>(1.0 / z));
}

void rows_at(const float* x, int b, int t, int width, int row, std::vector<float>& picked) {
  picked.resize(static_cast<std::size_t>(b) * width);
  for (int i = 0; i < b; ++i)
    std::copy_n(x + (static_cast<std::size_t>(i) * t + row) * width, width,
                picked.data() + static_cast<std::size_t>(i) * width);
}

std::vector<float> rows_at(const float* x, int b, int t, int width, int row) {
  std::vector<float> picked;
  rows_at(x, b, t, width, row, picked);
  return picked;
}

}  // namespace attn
