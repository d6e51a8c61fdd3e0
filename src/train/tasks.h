// Seeded toy sequence tasks for training a small transformer: copy, reverse, sort and induction.
//
// Vocabulary (every task): the symbols 0 .. S-1 (S = num_symbols, shown as "0", "1", ...) and one
// separator SEP = S (shown as "|"), so vocab_size() = S + 1. A task draws whole sequences of N
// tokens; a model reads ids = sequence[:-1] and is scored on targets = sequence[1:], where every
// target that is not an answer token is -100 (kIgnoreTarget, PyTorch's ignore_index). T = N - 1.
//
// copy, reverse, sort (L = length):                                       N = 2L + 1, T = 2L
//     x1 .. xL  SEP  a1 .. aL
//   x: L symbols drawn uniformly with replacement. a: x itself (copy), x reversed (reverse), or
//   x sorted ascending (sort). Scored: a1 .. aL, i.e. the targets at t = L .. 2L-1 (whose ids are
//   SEP, a1 .. a(L-1)).
//   Example, reverse, L = 4: ids 3 1 4 1 | 1 4 1, targets -100 -100 -100 -100 1 4 1 3.
//
// induction (L = length, needs S > L):                                   N = 4L + 2, T = 4L + 1
//     f .. f (p)  SEP  s1 .. sL  f .. f (g)  SEP  s1 .. sL  f .. f (2L - p - g)
//   s: L distinct symbols (the segment). f: filler, each drawn uniformly from the S - L symbols
//   NOT in the segment. p and g: uniform in [0, L], so the repeat starts anywhere in
//   [L + 2, 3L + 2] and its distance from the segment varies: neither absolute nor relative
//   position can solve the task. Scored: the repeat s1 .. sL (the targets whose ids are the
//   second SEP, s1 .. s(L-1)). Each of those ids occurs exactly once before, so "find the previous
//   occurrence of the current token and copy its successor" is the unique rule, and SEP (which
//   occurs only twice) makes even s1 predictable. Filler is never scored.
//   Example, L = 3, S = 6, p = 1, g = 2: the sequence 5 | 2 0 4 1 5 | 2 0 4 3 1 3; scored are the
//   targets 2 0 4 at the ids | 2 0 of the repeat.
//
// Randomness: only attn::mix64 (core/rng.h), integer arithmetic, so the same seed gives the same
// sequences natively and in wasm. Every sequence is drawn from its own key: next_batch's stream
// numbers its sequences 0, 1, 2, ... (so next_batch(3) then next_batch(5) equals next_batch(8));
// batch_at's sequence i of batch `index` depends on (seed, index, i) only (so a larger n extends
// the same batch), and is salted apart from the training stream even when the seeds are equal.
//
// Limits: num_symbols in [2, kMaxTaskSymbols]; length >= 1; T <= kMaxTaskSequenceLength;
// induction needs num_symbols > length; batch n >= 1 and n * T <= kMaxTaskBatchTokens.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace attn {

constexpr std::int32_t kIgnoreTarget = -100;           // an unscored target
constexpr int kMaxTaskSymbols = 1 << 16;               // keeps the vocabulary a toy one
constexpr int kMaxTaskSequenceLength = 512;            // T
constexpr std::int64_t kMaxTaskBatchTokens = 1 << 22;  // n * T

enum class TaskKind { kCopy, kReverse, kSort, kInduction };

struct TaskConfig {
  std::string name;  // "copy" | "reverse" | "sort" | "induction"
  int length = 8;    // symbols in the input (segment length for induction)
  int num_symbols = 10;
  std::uint64_t seed = 0;
};

class Task {
 public:
  Task();  // a "copy" task with TaskConfig's default sizes; use create() for any other

  // kInvalidArgument on an unknown name (the message lists the known ones) or out-of-range sizes.
  static Status create(const TaskConfig& config, Task& out);

  const TaskConfig& config() const { return config_; }
  TaskKind kind() const { return kind_; }
  int vocab_size() const;                        // num_symbols + 1 (the separator)
  int sequence_length() const;                   // T of ids (= full sequence length - 1)
  std::vector<std::string> token_names() const;  // "0" .. "S-1", then "|" for SEP

  // The next n sequences of this task's own stream (deterministic from config().seed):
  // ids (n, T) = sequence[:-1], targets (n, T) = sequence[1:] with -100 where not scored.
  // On error nothing is written and the stream does not advance.
  Status next_batch(int n, std::vector<std::int32_t>& ids, std::vector<std::int32_t>& targets);

  // Batch number `index` of an independent stream with its own seed (for evaluation): the same
  // call gives the same result, and it does not touch next_batch's stream.
  Status batch_at(std::uint64_t seed, std::uint64_t index, int n, std::vector<std::int32_t>& ids,
                  std::vector<std::int32_t>& targets) const;

 private:
  // Writes sequence i of the batch from sequence_keys[i]; shared by both streams. Sizes are
  // checked (check_batch_size) before.
  void fill_batch(const std::vector<std::uint64_t>& sequence_keys, std::vector<std::int32_t>& ids,
                  std::vector<std::int32_t>& targets) const;
  Status check_batch_size(int n) const;

  TaskConfig config_;
  TaskKind kind_ = TaskKind::kCopy;
  std::uint64_t sequences_drawn_ = 0;  // next_batch's position in its stream
};

}  // namespace attn
