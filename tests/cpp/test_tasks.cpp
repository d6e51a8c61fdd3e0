// Seeded toy tasks (src/train/tasks.h): each format element by element, determinism of both
// streams, the induction task's properties, and every error path.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/memory_limit.h"
#include "train/tasks.h"

namespace {

using attn::StatusCode;
using attn::Task;
using attn::TaskConfig;
using Ids = std::vector<std::int32_t>;
constexpr std::int32_t kIgnore = -100;

Task make_task(const std::string& name, int length, int num_symbols, std::uint64_t seed) {
  Task task;
  const attn::Status s = Task::create({name, length, num_symbols, seed}, task);
  INFO(s.message);
  REQUIRE(s.ok());
  return task;
}

// Row b of an (n, T) buffer.
Ids row(const Ids& batch, int T, int b) {
  return Ids(batch.begin() + b * T, batch.begin() + (b + 1) * T);
}

// The answer a task must give for input x, written independently of the library.
Ids expected_answer(const std::string& name, const Ids& x) {
  if (name == "copy") return x;
  Ids a(x.rbegin(), x.rend());
  if (name == "reverse") return a;
  // sort: counting sort over the symbols present.
  Ids sorted;
  for (std::int32_t s = 0; sorted.size() < x.size(); ++s) {
    for (std::int32_t v : x)
      if (v == s) sorted.push_back(s);
  }
  return sorted;
}

void check_copy_like_row(const std::string& name, const Ids& ids, const Ids& targets, int L, int S) {
  const int T = 2 * L;
  REQUIRE(ids.size() == static_cast<std::size_t>(T));
  const Ids x(ids.begin(), ids.begin() + L);
  for (std::int32_t v : x) CHECK((v >= 0 && v < S));
  CHECK(ids[L] == S);  // SEP
  for (int t = 0; t < L; ++t) CHECK(targets[t] == kIgnore);
  const Ids answer(targets.begin() + L, targets.end());
  CHECK(answer == expected_answer(name, x));
  for (int t = L; t + 1 < T; ++t) CHECK(targets[t] == ids[t + 1]);  // shifted by one
}

// Positions of SEP in a row of ids.
std::vector<int> separators(const Ids& ids, int sep) {
  std::vector<int> at;
  for (int t = 0; t < static_cast<int>(ids.size()); ++t)
    if (ids[t] == sep) at.push_back(t);
  return at;
}

// Checks one induction row; returns the position of the second SEP (the repeat starts after it).
int check_induction_row(const Ids& ids, const Ids& targets, int L, int S) {
  const int T = 4 * L + 1;
  REQUIRE(ids.size() == static_cast<std::size_t>(T));
  const std::vector<int> seps = separators(ids, S);
  REQUIRE(seps.size() == 2);
  const Ids segment(ids.begin() + seps[0] + 1, ids.begin() + seps[0] + 1 + L);
  CHECK(std::set<std::int32_t>(segment.begin(), segment.end()).size() == static_cast<std::size_t>(L));
  for (std::int32_t v : segment) CHECK((v >= 0 && v < S));
  // Scored: exactly the L targets at the second SEP and the repeat's first L - 1 tokens.
  for (int t = 0; t < T; ++t) {
    const bool in_repeat = t >= seps[1] && t < seps[1] + L;
    if (in_repeat) {
      CHECK(targets[t] == segment[t - seps[1]]);
      if (t + 1 < T) CHECK(targets[t] == ids[t + 1]);  // shifted by one
    } else {
      CHECK(targets[t] == kIgnore);
    }
  }
  // Filler: every id outside "SEP segment" twice is a symbol that is not in the segment.
  for (int t = 0; t < T; ++t) {
    const bool structural = (t >= seps[0] && t <= seps[0] + L) || (t >= seps[1] && t <= seps[1] + L);
    if (structural) continue;
    CHECK((ids[t] >= 0 && ids[t] < S));
    CHECK(std::find(segment.begin(), segment.end(), ids[t]) == segment.end());
  }
  // The induction rule answers every scored position: the current id occurred exactly once
  // before, and its successor there is the target.
  for (int t = seps[1]; t < seps[1] + L; ++t) {
    std::vector<int> earlier;
    for (int j = 0; j < t; ++j)
      if (ids[j] == ids[t]) earlier.push_back(j);
    REQUIRE(earlier.size() == 1);
    CHECK(ids[earlier[0] + 1] == targets[t]);
  }
  return seps[1];
}

}  // namespace

TEST_CASE("tasks: copy, reverse and sort answer their input, element by element", "[train]") {
  const int L = 5, S = 7, n = 6;
  for (const char* name : {"copy", "reverse", "sort"}) {
    INFO("task " << name);
    Task task = make_task(name, L, S, 3);
    CHECK(task.vocab_size() == S + 1);
    REQUIRE(task.sequence_length() == 2 * L);
    Ids ids, targets;
    REQUIRE(task.next_batch(n, ids, targets).ok());
    REQUIRE(ids.size() == static_cast<std::size_t>(n * 2 * L));
    REQUIRE(targets.size() == ids.size());
    for (int b = 0; b < n; ++b) check_copy_like_row(name, row(ids, 2 * L, b), row(targets, 2 * L, b), L, S);
  }
  // reverse at the default L = 8 has T = 16; length 1 works too.
  CHECK(make_task("reverse", 8, 10, 0).sequence_length() == 16);
  Task one = make_task("sort", 1, 2, 9);
  Ids ids, targets;
  REQUIRE(one.next_batch(3, ids, targets).ok());
  for (int b = 0; b < 3; ++b) check_copy_like_row("sort", row(ids, 2, b), row(targets, 2, b), 1, 2);
}

TEST_CASE("tasks: induction rows are well formed and the repeat moves", "[train]") {
  const int L = 5, S = 9, n = 48;
  Task task = make_task("induction", L, S, 5);
  CHECK(task.vocab_size() == S + 1);
  const int T = task.sequence_length();
  REQUIRE(T == 4 * L + 1);
  Ids ids, targets;
  REQUIRE(task.next_batch(n, ids, targets).ok());
  std::set<int> repeat_starts, distances;
  for (int b = 0; b < n; ++b) {
    INFO("sequence " << b);
    const Ids r = row(ids, T, b);
    const int second_sep = check_induction_row(r, row(targets, T, b), L, S);
    repeat_starts.insert(second_sep);
    distances.insert(second_sep - separators(r, S)[0]);
  }
  // Neither the absolute start of the repeat nor its distance from the segment is fixed.
  CHECK(repeat_starts.size() >= 5);
  CHECK(distances.size() >= 4);
  // The tightest sizes: one filler symbol (S = L + 1), and the largest T allowed.
  for (const auto& size : {std::make_pair(1, 2), std::make_pair(3, 4), std::make_pair(127, 128)}) {
    Task tight = make_task("induction", size.first, size.second, 8);
    REQUIRE(tight.next_batch(4, ids, targets).ok());
    const int tight_T = tight.sequence_length();
    for (int b = 0; b < 4; ++b) {
      check_induction_row(row(ids, tight_T, b), row(targets, tight_T, b), size.first, size.second);
    }
  }
}

TEST_CASE("tasks: both streams are deterministic from their seeds", "[train]") {
  const int n = 8;
  for (const char* name : {"copy", "reverse", "sort", "induction"}) {
    INFO("task " << name);
    Task a = make_task(name, 4, 6, 21), b = make_task(name, 4, 6, 21), c = make_task(name, 4, 6, 22);
    Ids a1, a1_targets, b1, b1_targets, c1, c1_targets, a2, a2_targets;
    REQUIRE(a.next_batch(n, a1, a1_targets).ok());
    REQUIRE(b.next_batch(n, b1, b1_targets).ok());
    REQUIRE(c.next_batch(n, c1, c1_targets).ok());
    REQUIRE(a.next_batch(n, a2, a2_targets).ok());
    CHECK(a1 == b1);
    CHECK(a1_targets == b1_targets);
    CHECK(a1 != c1);  // another seed
    CHECK(a1 != a2);  // the stream advances
    // The stream is numbered by sequence: 3 + 5 sequences equal 8.
    Task d = make_task(name, 4, 6, 21);
    Ids d3, d3_targets, d5, d5_targets;
    REQUIRE(d.next_batch(3, d3, d3_targets).ok());
    REQUIRE(d.next_batch(5, d5, d5_targets).ok());
    d3.insert(d3.end(), d5.begin(), d5.end());
    CHECK(d3 == a1);

    // batch_at: same call, same batch; another index or seed, another batch; a prefix for smaller
    // n; salted apart from next_batch's stream; and next_batch's stream is untouched by it.
    const int T = a.sequence_length();
    Ids e1, e1_targets, e2, e2_targets, e3, e3_targets, e4, e4_targets, e5, e5_targets;
    REQUIRE(a.batch_at(77, 2, n, e1, e1_targets).ok());
    REQUIRE(b.batch_at(77, 2, n, e2, e2_targets).ok());
    REQUIRE(a.batch_at(77, 3, n, e3, e3_targets).ok());
    REQUIRE(a.batch_at(78, 2, n, e4, e4_targets).ok());
    REQUIRE(a.batch_at(77, 2, 3, e5, e5_targets).ok());
    CHECK(e1 == e2);
    CHECK(e1_targets == e2_targets);
    CHECK(e1 != e3);
    CHECK(e1 != e4);
    CHECK(e5 == Ids(e1.begin(), e1.begin() + 3 * T));
    Ids same_seed, same_seed_targets;
    REQUIRE(c.batch_at(21, 0, n, same_seed, same_seed_targets).ok());
    CHECK(same_seed != a1);
    Ids b2, b2_targets;
    REQUIRE(b.next_batch(n, b2, b2_targets).ok());
    CHECK(b2 == a2);
  }
}

TEST_CASE("tasks: a pinned batch guards the stream across platforms", "[train]") {
  // The first sequences of two tasks, written down from a native run: the wasm build of this
  // suite must reproduce them exactly (integer-only RNG), and a change to the generator shows.
  Task copy = make_task("copy", 3, 5, 42);
  Ids ids, targets;
  REQUIRE(copy.next_batch(2, ids, targets).ok());
  CHECK(ids == Ids{1, 2, 4, 5, 1, 2, /**/ 2, 0, 1, 5, 2, 0});
  Task induction = make_task("induction", 2, 4, 42);
  REQUIRE(induction.batch_at(7, 1, 1, ids, targets).ok());
  // filler 1, SEP, segment 2 0, filler 1, SEP, repeat 2 0, filler 3 (and one more token).
  CHECK(ids == Ids{1, 4, 2, 0, 1, 4, 2, 0, 3});
  CHECK(targets == Ids{kIgnore, kIgnore, kIgnore, kIgnore, kIgnore, 2, 0, kIgnore, kIgnore});
}

TEST_CASE("tasks: token names", "[train]") {
  const std::vector<std::string> names = make_task("copy", 3, 12, 0).token_names();
  REQUIRE(names.size() == 13);
  CHECK(names[0] == "0");
  CHECK(names[9] == "9");
  CHECK(names[11] == "11");
  CHECK(names[12] == "|");
}

TEST_CASE("tasks: invalid configurations and batch sizes are refused", "[train]") {
  Task task;
  attn::Status s = Task::create({"shuffle", 4, 10, 0}, task);
  CHECK(s.code == StatusCode::kInvalidArgument);
  CHECK(s.message.find("'shuffle'") != std::string::npos);
  CHECK(s.message.find("copy, reverse, sort, induction") != std::string::npos);

  struct Bad {
    TaskConfig config;
    const char* mentions;
  };
  const Bad bad[] = {
      {{"copy", 4, 1, 0}, "num_symbols"},
      {{"copy", 4, attn::kMaxTaskSymbols + 1, 0}, "num_symbols"},
      {{"sort", 0, 10, 0}, "length"},
      {{"reverse", -3, 10, 0}, "length"},
      {{"copy", 257, 10, 0}, "T = 514"},        // 2L > 512
      {{"induction", 128, 200, 0}, "T = 513"},  // 4L + 1 > 512
      {{"induction", 5, 5, 0}, "num_symbols > length"},
      {{"induction", 1 << 30, 10, 0}, "T = 4294967297"},  // no int overflow in the size check
  };
  for (const Bad& b : bad) {
    s = Task::create(b.config, task);
    INFO(b.config.name << " length " << b.config.length << " symbols " << b.config.num_symbols << ": "
                       << s.message);
    CHECK(s.code == StatusCode::kInvalidArgument);
    CHECK(s.message.find(b.mentions) != std::string::npos);
  }
  // The largest T allowed is accepted.
  CHECK(Task::create({"copy", 256, 10, 0}, task).ok());
  CHECK(task.sequence_length() == 512);

  // Batch sizes: nothing written and the stream not advanced on error.
  Task copy = make_task("copy", 4, 10, 1);  // T = 8
  Ids ids = {1, 2, 3}, targets = {4};
  CHECK(copy.next_batch(0, ids, targets).code == StatusCode::kInvalidArgument);
  CHECK(copy.batch_at(0, 0, -1, ids, targets).code == StatusCode::kInvalidArgument);
  CHECK(copy.next_batch((1 << 22) / 8 + 1, ids, targets).code == StatusCode::kTooLarge);
  CHECK(copy.batch_at(0, 0, 1 << 30, ids, targets).code == StatusCode::kTooLarge);
  CHECK(ids == Ids{1, 2, 3});
  CHECK(targets == Ids{4});
  const std::uint64_t saved_limit = attn::memory_limit_bytes();
  attn::set_memory_limit_bytes(100);  // 25 elements: two (2, 8) buffers do not fit
  s = copy.next_batch(2, ids, targets);
  attn::set_memory_limit_bytes(saved_limit);
  CHECK(s.code == StatusCode::kTooLarge);
  Ids first, first_targets, fresh, fresh_targets;
  REQUIRE(copy.next_batch(2, first, first_targets).ok());
  REQUIRE(make_task("copy", 4, 10, 1).next_batch(2, fresh, fresh_targets).ok());
  CHECK(first == fresh);
}
