// The induction preset's data: T random symbols in which a segment of n distinct symbols (n drawn
// from [min_segment, max_segment]) is immediately repeated, then random filler. After the first
// symbol of the repeat, each next one is predictable only by finding the current symbol's earlier
// occurrence and copying what followed it — and since n varies, no fixed offset does it. (The
// library's `induction` task marks both segments with a separator, which lets a model count from it
// instead: see docs/presets.md.) Scored targets: the repeat's positions n … 2n − 2.
#pragma once
#include <cstdint>
#include <vector>

namespace presets {

struct RepeatData {
  int symbols = 16, length = 24, min_segment = 6, max_segment = 11;
  // n sequences of `length` ids, targets = next ids (−100 where not scored).
  void batch(std::uint64_t seed, std::uint64_t index, int n, std::vector<std::int32_t>& ids,
             std::vector<std::int32_t>& targets) const;
};

}  // namespace presets
