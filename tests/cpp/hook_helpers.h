// Test helpers for the hook points (model/hooks.h): a forward's options with the hook run made for
// them, and edits built in one line.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/hooks.h"
#include "model/interp_hooks.h"

namespace testutil {

// ForwardOptions and the HookRun they point to, made by make() for a pass of (b, t).
struct Hooked {
  attn::ForwardOptions options;
  attn::HookRequest request;
  std::unique_ptr<attn::HookRun> run;
  attn::Status make(const attn::HookShapes& shapes, int b, int t) {
    const attn::Status st = attn::HookRun::create(request, shapes, b, t, 0, t, run);
    options.hooks = run.get();
    return st;
  }
  // A run from block l with the stream `x` (B, T, E).
  void start_at(int l, std::vector<float> x, attn::Shape shape) {
    request.start_at = "blocks." + std::to_string(l) + ".hook_resid_pre";
    request.edits.push_back({request.start_at, false, std::move(shape), std::move(x), {}, {}});
  }
  void edit(const std::string& hook, bool add, attn::Shape shape, std::vector<float> value,
            std::vector<int> positions = {}, std::vector<int> heads = {}) {
    request.edits.push_back(
        {hook, add, std::move(shape), std::move(value), std::move(positions), std::move(heads)});
  }
  // The captured tensor of a hook (after a forward), or an empty one.
  attn::Tensor captured(const std::string& name) {
    if (taken.empty()) taken = run->take_captures();
    for (auto& [n, t] : taken)
      if (n == name) return t;
    return attn::Tensor();
  }
  std::vector<std::pair<std::string, attn::Tensor>> taken;
};

}  // namespace testutil
