#include "text_data.h"

#include <algorithm>
#include <fstream>
#include <iterator>

#include "core/rng.h"

namespace presets {

bool TextData::load(const std::string& path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read " + path;
    return false;
  }
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string clean;  // one char per code point: ASCII kept, anything else '?'
  for (const unsigned char c : raw) {
    if (c >= 0x80 && c < 0xc0) continue;  // UTF-8 continuation byte
    clean += (c == '\n' || (c >= 32 && c < 127)) ? static_cast<char>(c) : '?';
  }
  vocab_.assign(clean.begin(), clean.end());
  vocab_.push_back('?');
  std::sort(vocab_.begin(), vocab_.end());
  vocab_.erase(std::unique(vocab_.begin(), vocab_.end()), vocab_.end());
  unknown_ = id_of('?');
  text_.clear();
  for (char c : clean) text_.push_back(id_of(c));
  return true;
}

int TextData::id_of(char c) const {
  const auto it = std::lower_bound(vocab_.begin(), vocab_.end(), c);
  return it != vocab_.end() && *it == c ? static_cast<int>(it - vocab_.begin()) : unknown_;
}

void TextData::batch(bool held_out, std::uint64_t seed, std::uint64_t index, int n, int t,
                     std::vector<std::int32_t>& ids, std::vector<std::int32_t>& targets) const {
  const std::size_t split = text_.size() * 9 / 10;
  const std::size_t begin = held_out ? split : 0, end = held_out ? text_.size() : split;
  const std::size_t span = end - begin - static_cast<std::size_t>(t) - 1;
  ids.resize(static_cast<std::size_t>(n) * t);
  targets.resize(ids.size());
  for (int s = 0; s < n; ++s) {
    const std::uint64_t key =
        attn::mix64(seed * 0x9e3779b97f4a7c15ull + index * 1315423911ull + static_cast<std::uint64_t>(s) + 1);
    const std::size_t at = begin + static_cast<std::size_t>(key % span);
    for (int j = 0; j < t; ++j) {
      ids[static_cast<std::size_t>(s) * t + j] = text_[at + j];
      targets[static_cast<std::size_t>(s) * t + j] = text_[at + j + 1];
    }
  }
}

}  // namespace presets
