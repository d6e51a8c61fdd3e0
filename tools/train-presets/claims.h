// The patterns a preset's heads are claimed to show, measured on attention weights (B, H, T, T) of
// fresh sequences: for each query row that the claim covers, which key gets the most weight. The
// JS test (tests/js/presets.test.mjs) re-measures every claim with its own code.
//
//   mirror          reverse: answer row t (t ≥ L) attends to key 2L − 1 − t, the input it outputs
//   same-value      sort: answer row t attends to an input position holding the symbol it outputs
//   offset          copy: answer row t attends to key t − L (the input L positions back)
//   previous-token  every row t ≥ 1 attends to key t − 1
//   previous-token-in-segment  the same, over the first segment (rows 1 … n − 1, induction data): the
//                   rows whose keys the induction head reads
//   induction       induction: scored row t attends to key p + 1, p < t the earlier occurrence of ids[t]
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace presets {

struct Claim {
  int layer = 0, head = 0;
  std::string kind;
  double fraction = 0.0;      // measured: rows where the argmax key is the claimed one
  double min_fraction = 0.0;  // what the preset claims (written into the file)
};

// Fraction of covered rows of head `head` whose argmax key matches the claim `kind`.
// attention: (B, H, T, T); ids, targets: (B, T); length: the task's L.
double measure_claim(const std::string& kind, const std::vector<float>& attention, int b, int h, int t,
                     int head, const std::vector<std::int32_t>& ids, const std::vector<std::int32_t>& targets,
                     int length);

}  // namespace presets
