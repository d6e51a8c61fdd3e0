#include "train/tasks.h"

#include <algorithm>
#include <numeric>

#include "core/memory_limit.h"
#include "core/rng.h"

namespace attn {

namespace {

// Salts that keep next_batch's stream and batch_at's streams apart even for equal seeds.
constexpr std::uint64_t kTrainStreamSalt = 0x747261696E000001ull;
constexpr std::uint64_t kEvalStreamSalt = 0x6576616C00000002ull;
constexpr std::uint64_t kSplitMixGamma = 0x9E3779B97F4A7C15ull;

// One hash step: combines a running key with one more integer.
std::uint64_t chain(std::uint64_t key, std::uint64_t x) {
  return mix64(key ^ mix64(x));
}

// Integers for one sequence: SplitMix64 started at the sequence's key. Modulo bias is below
// 2^-47 for the sizes allowed here.
class SequenceRng {
 public:
  explicit SequenceRng(std::uint64_t key) : key_(key) {}
  int below(int m) {
    const std::uint64_t bits = mix64(key_ + kSplitMixGamma * counter_++);
    return static_cast<int>(bits % static_cast<std::uint64_t>(m));
  }

 private:
  std::uint64_t key_;
  std::uint64_t counter_ = 0;
};

struct NamedTask {
  const char* name;
  TaskKind kind;
};
constexpr NamedTask kTaskNames[] = {{"copy", TaskKind::kCopy},
                                    {"reverse", TaskKind::kReverse},
                                    {"sort", TaskKind::kSort},
                                    {"induction", TaskKind::kInduction}};

bool parse_task_name(const std::string& name, TaskKind& kind) {
  for (const NamedTask& known : kTaskNames) {
    if (name == known.name) {
      kind = known.kind;
      return true;
    }
  }
  return false;
}

std::string known_task_names() {
  std::string list;
  for (const NamedTask& known : kTaskNames) list += (list.empty() ? "" : ", ") + std::string(known.name);
  return list;
}

// Full sequence length N (= T + 1) of a task, as 64-bit so huge lengths cannot overflow.
std::int64_t full_length(TaskKind kind, std::int64_t length) {
  return kind == TaskKind::kInduction ? 4 * length + 2 : 2 * length + 1;
}

// The draw_* functions write one full sequence and return where its scored answer begins: the
// answer is seq[begin, begin + L).

// copy / reverse / sort: x1..xL SEP a1..aL.                                    seq: (2L + 1,)
int draw_copy_like(TaskKind kind, int length, int num_symbols, SequenceRng& rng, std::int32_t* seq) {
  const int sep = num_symbols;
  for (int i = 0; i < length; ++i) seq[i] = rng.below(num_symbols);
  seq[length] = sep;
  std::int32_t* answer = seq + length + 1;
  std::copy(seq, seq + length, answer);
  if (kind == TaskKind::kReverse) std::reverse(answer, answer + length);
  if (kind == TaskKind::kSort) std::sort(answer, answer + length);
  return length + 1;
}

// induction: filler(p) SEP segment filler(g) SEP segment filler(2L - p - g).    seq: (4L + 2,)
// `pool` (num_symbols,) holds 0..S-1 in order on entry and on exit: a partial Fisher–Yates
// shuffle moves the segment to pool[0..L) and leaves the filler symbols in pool[L..S); the swaps
// are then undone, so each sequence depends on its own key only, at O(L) cost instead of O(S).
int draw_induction(int length, int num_symbols, SequenceRng& rng, std::int32_t* seq,
                   std::vector<std::int32_t>& pool) {
  const int sep = num_symbols;
  std::vector<int> swapped_with(length);  // (L,) the Fisher–Yates choices, to undo them
  for (int j = 0; j < length; ++j) {
    swapped_with[j] = j + rng.below(num_symbols - j);
    std::swap(pool[j], pool[swapped_with[j]]);
  }
  const int prefix = rng.below(length + 1);
  const int gap = rng.below(length + 1);
  const int num_filler_symbols = num_symbols - length;
  auto filler = [&]() { return pool[length + rng.below(num_filler_symbols)]; };
  int pos = 0;
  for (int i = 0; i < prefix; ++i) seq[pos++] = filler();
  seq[pos++] = sep;
  for (int j = 0; j < length; ++j) seq[pos++] = pool[j];
  for (int i = 0; i < gap; ++i) seq[pos++] = filler();
  seq[pos++] = sep;
  const int repeat_begin = pos;
  for (int j = 0; j < length; ++j) seq[pos++] = pool[j];
  while (pos < 4 * length + 2) seq[pos++] = filler();
  for (int j = length - 1; j >= 0; --j) std::swap(pool[j], pool[swapped_with[j]]);
  return repeat_begin;
}

Status invalid(const std::string& message) {
  return Status::Error(StatusCode::kInvalidArgument, message);
}

Status check_config(const TaskConfig& config, TaskKind kind) {
  if (config.num_symbols < 2 || config.num_symbols > kMaxTaskSymbols) {
    return invalid("task num_symbols = " + std::to_string(config.num_symbols) + " must be in [2, " +
                   std::to_string(kMaxTaskSymbols) + "]");
  }
  if (config.length < 1) return invalid("task length = " + std::to_string(config.length) + " must be >= 1");
  const std::int64_t T = full_length(kind, config.length) - 1;
  if (T > kMaxTaskSequenceLength) {
    return invalid("task '" + config.name + "' with length " + std::to_string(config.length) +
                   " has sequence length T = " + std::to_string(T) + ", over the maximum of " +
                   std::to_string(kMaxTaskSequenceLength));
  }
  if (kind == TaskKind::kInduction && config.num_symbols <= config.length) {
    return invalid(
        "task 'induction' needs num_symbols > length (the filler is drawn from the symbols "
        "not in the segment), got num_symbols = " +
        std::to_string(config.num_symbols) + " and length = " + std::to_string(config.length));
  }
  return Status::Ok();
}

}  // namespace

Task::Task() {
  config_.name = "copy";
}

Status Task::create(const TaskConfig& config, Task& out) {
  TaskKind kind;
  if (!parse_task_name(config.name, kind)) {
    return invalid("unknown task name '" + config.name + "'; known tasks: " + known_task_names());
  }
  ATTN_RETURN_IF_ERROR(check_config(config, kind));
  out.config_ = config;
  out.kind_ = kind;
  out.sequences_drawn_ = 0;
  return Status::Ok();
}

int Task::vocab_size() const {
  return config_.num_symbols + 1;
}

int Task::sequence_length() const {
  return static_cast<int>(full_length(kind_, config_.length) - 1);
}

std::vector<std::string> Task::token_names() const {
  std::vector<std::string> names;
  names.reserve(vocab_size());
  for (int s = 0; s < config_.num_symbols; ++s) names.push_back(std::to_string(s));
  names.push_back("|");
  return names;
}

Status Task::check_batch_size(int n) const {
  if (n < 1) return invalid("task batch size n = " + std::to_string(n) + " must be >= 1");
  const std::int64_t tokens = static_cast<std::int64_t>(n) * sequence_length();
  if (tokens > kMaxTaskBatchTokens) {
    return Status::Error(StatusCode::kTooLarge, "task batch of " + std::to_string(n) + " sequences of T = " +
                                                    std::to_string(sequence_length()) + " is " +
                                                    std::to_string(tokens) + " tokens, over the maximum of " +
                                                    std::to_string(kMaxTaskBatchTokens));
  }
  // ids and targets: two int32 buffers, the size of float32 ones.
  return check_allocation(2 * static_cast<std::uint64_t>(tokens), "task batch ids and targets");
}

void Task::fill_batch(const std::vector<std::uint64_t>& sequence_keys, std::vector<std::int32_t>& ids,
                      std::vector<std::int32_t>& targets) const {
  const int T = sequence_length();
  const std::size_t n = sequence_keys.size();
  std::vector<std::int32_t> seq(T + 1);  // (N,) one full sequence
  std::vector<std::int32_t> pool;        // (S,) induction's symbol pool, identity between sequences
  if (kind_ == TaskKind::kInduction) {
    pool.resize(config_.num_symbols);
    std::iota(pool.begin(), pool.end(), 0);
  }
  ids.assign(n * T, 0);      // (n, T)
  targets.assign(n * T, 0);  // (n, T)
  for (std::size_t b = 0; b < n; ++b) {
    SequenceRng rng(sequence_keys[b]);
    const int answer_begin =
        kind_ == TaskKind::kInduction
            ? draw_induction(config_.length, config_.num_symbols, rng, seq.data(), pool)
            : draw_copy_like(kind_, config_.length, config_.num_symbols, rng, seq.data());
    std::int32_t* id_row = ids.data() + b * T;
    std::int32_t* target_row = targets.data() + b * T;
    for (int t = 0; t < T; ++t) {
      const bool scored = t + 1 >= answer_begin && t + 1 < answer_begin + config_.length;
      id_row[t] = seq[t];
      target_row[t] = scored ? seq[t + 1] : kIgnoreTarget;
    }
  }
}

Status Task::next_batch(int n, std::vector<std::int32_t>& ids, std::vector<std::int32_t>& targets) {
  ATTN_RETURN_IF_ERROR(check_batch_size(n));
  const std::uint64_t stream = chain(config_.seed, kTrainStreamSalt);
  std::vector<std::uint64_t> keys(n);  // (n,)
  for (int i = 0; i < n; ++i) keys[i] = chain(stream, sequences_drawn_ + i);
  fill_batch(keys, ids, targets);
  sequences_drawn_ += n;
  return Status::Ok();
}

Status Task::batch_at(std::uint64_t seed, std::uint64_t index, int n, std::vector<std::int32_t>& ids,
                      std::vector<std::int32_t>& targets) const {
  ATTN_RETURN_IF_ERROR(check_batch_size(n));
  const std::uint64_t batch = chain(chain(seed, kEvalStreamSalt), index);
  std::vector<std::uint64_t> keys(n);  // (n,)
  for (int i = 0; i < n; ++i) keys[i] = chain(batch, static_cast<std::uint64_t>(i));
  fill_batch(keys, ids, targets);
  return Status::Ok();
}

}  // namespace attn
