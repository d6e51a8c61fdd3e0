#include "repeat_data.h"

#include "core/rng.h"

namespace presets {

void RepeatData::batch(std::uint64_t seed, std::uint64_t index, int n, std::vector<std::int32_t>& ids,
                       std::vector<std::int32_t>& targets) const {
  ids.assign(static_cast<std::size_t>(n) * length, 0);
  targets.assign(ids.size(), -100);
  for (int s = 0; s < n; ++s) {
    std::uint64_t key = attn::mix64(seed * 0x9e3779b97f4a7c15ull ^
                                    attn::mix64(index * 1000003ull + static_cast<std::uint64_t>(s)));
    auto next = [&key](std::uint64_t bound) {
      key = attn::mix64(key + 0x632be59bd9b4e019ull);
      return static_cast<int>(key % bound);
    };
    std::int32_t* x = ids.data() + static_cast<std::size_t>(s) * length;
    std::int32_t* y = targets.data() + static_cast<std::size_t>(s) * length;
    const int seg = min_segment + next(static_cast<std::uint64_t>(max_segment - min_segment + 1));
    std::vector<std::int32_t> pool(static_cast<std::size_t>(symbols));  // distinct symbols: a partial shuffle
    for (int i = 0; i < symbols; ++i) pool[i] = i;
    for (int i = 0; i < seg; ++i) std::swap(pool[i], pool[i + next(static_cast<std::uint64_t>(symbols - i))]);
    for (int i = 0; i < seg; ++i) x[i] = x[seg + i] = pool[i];
    for (int i = 2 * seg; i < length; ++i) x[i] = next(static_cast<std::uint64_t>(symbols));
    // ids are the whole sequence; position t predicts x[t + 1]: scored inside the repeat.
    for (int t = seg; t <= 2 * seg - 2; ++t) y[t] = x[t + 1];
  }
}

}  // namespace presets
