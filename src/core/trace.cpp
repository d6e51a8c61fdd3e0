#include "core/trace.h"

namespace attn {

void Trace::record(std::string name, std::vector<std::string> axes, Tensor tensor) {
  steps_.push_back(TraceStep{std::move(name), std::move(axes), std::move(tensor)});
}

const TraceStep* Trace::find(const std::string& name) const {
  for (const auto& step : steps_) {
    if (step.name == name) return &step;
  }
  return nullptr;
}

}  // namespace attn
