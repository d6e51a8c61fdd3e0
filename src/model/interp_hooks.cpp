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

Status check_hooks(const ForwardOptions& o, int t) {
  if (o.logits_row >= t) return invalid("logits_row must be in [0, T)");
  if (o.from_stream() && (o.logit_lens || o.hidden_states))
    return invalid("a run from startAt has no hidden states or logit lens");
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
