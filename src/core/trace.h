// Trace: the intermediate tensors of one forward pass, as named, shaped data in execution order.
// It is data, not logging: the widgets render it, and tests check that the traced and the fast
// path give identical outputs (both call the same kernels).
#pragma once
#include <string>
#include <vector>

#include "core/tensor.h"

namespace attn {

struct TraceStep {
  std::string name;               // "input", "positional", "x", "q", "k", "v", "scores", ...
  std::vector<std::string> axes;  // axis names beside shape: {"B", "H", "T_q", "d_k"}
  Tensor tensor;                  // a copy of the values at that step
};

class Trace {
 public:
  void record(std::string name, std::vector<std::string> axes, Tensor tensor);
  const std::vector<TraceStep>& steps() const { return steps_; }
  // nullptr when no step has that name.
  const TraceStep* find(const std::string& name) const;
  void clear() { steps_.clear(); }

 private:
  std::vector<TraceStep> steps_;
};

}  // namespace attn
