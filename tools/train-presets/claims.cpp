#include "claims.h"

#include <cstddef>

namespace presets {
namespace {

int argmax_key(const float* row, int keys) {
  int best = 0;
  for (int j = 1; j < keys; ++j)
    if (row[j] > row[best]) best = j;
  return best;
}

// The key the claim names for row `r` of sequence `s`, or −2 when the row is not covered.
int wanted_key(const std::string& kind, int s, int r, int t, const std::vector<std::int32_t>& ids,
               const std::vector<std::int32_t>& targets, int length, int argmax) {
  const std::int32_t* x = ids.data() + static_cast<std::size_t>(s) * t;
  const std::int32_t target = targets[static_cast<std::size_t>(s) * t + r];
  if (kind == "previous-token") return r >= 1 ? r - 1 : -2;
  if (kind == "previous-token-in-segment") {  // rows 1 … n − 1 of the first segment (n: where x[0] recurs)
    int seg = 1;
    while (seg < t && x[seg] != x[0]) ++seg;
    return r >= 1 && r < seg ? r - 1 : -2;
  }
  if (kind == "mirror") return r >= length && target != -100 ? 2 * length - 1 - r : -2;
  if (kind == "offset") return r >= length && target != -100 ? r - length : -2;
  if (kind == "same-value") {  // any input position holding the output symbol
    if (r < length || target == -100) return -2;
    return argmax < length && x[argmax] == target ? argmax : -1;
  }
  if (kind == "induction") {
    if (target == -100) return -2;
    for (int p = r - 1; p >= 0; --p)
      if (x[p] == x[r]) return p + 1;
    return -2;
  }
  return -2;
}

}  // namespace

double measure_claim(const std::string& kind, const std::vector<float>& attention, int b, int h, int t,
                     int head, const std::vector<std::int32_t>& ids, const std::vector<std::int32_t>& targets,
                     int length) {
  long covered = 0, hits = 0;
  for (int s = 0; s < b; ++s)
    for (int r = 0; r < t; ++r) {
      const float* row = attention.data() + ((static_cast<std::size_t>(s) * h + head) * t + r) * t;
      const int best = argmax_key(row, r + 1);  // causal: keys 0 … r
      const int want = wanted_key(kind, s, r, t, ids, targets, length, best);
      if (want == -2) continue;
      ++covered;
      if (best == want) ++hits;
    }
  return covered ? static_cast<double>(hits) / covered : 0.0;
}

}  // namespace presets
