// The character model's data: a corpus (this project's docs, snapshotted in corpus.txt so the preset
// does not change when the README does) cut into a vocabulary of its ASCII characters, with every
// other character read as '?'. Batches are windows of T + 1 characters at seeded positions: the
// first 90% of the text for training, the rest held out for evaluation and the claims.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace presets {

class TextData {
 public:
  bool load(const std::string& path, std::string& error);
  const std::vector<char>& vocab() const { return vocab_; }
  int id_of(char c) const;
  // n windows of length t: ids (n, t) and targets (n, t) = the next characters.
  void batch(bool held_out, std::uint64_t seed, std::uint64_t index, int n, int t,
             std::vector<std::int32_t>& ids, std::vector<std::int32_t>& targets) const;

 private:
  std::vector<std::int32_t> text_;  // ids
  std::vector<char> vocab_;
  int unknown_ = 0;
};

}  // namespace presets
