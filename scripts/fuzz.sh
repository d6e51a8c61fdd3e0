#!/usr/bin/env bash
# The libFuzzer targets of tests/fuzz (clang-14, -fsanitize=fuzzer,address,undefined), built in
# build/fuzz and each run from its committed seed corpus (tests/fuzz/corpus/<target>) for the given
# seconds (default 100).
#
#   npm run fuzz              every target 100 s
#   npm run fuzz -- 3600      every target an hour
#   npm run fuzz -- 60 fuzz_mha   one target
#   bash scripts/fuzz.sh --replay [targets]   what `npm test` runs: every committed corpus file
#                             once under ASan + UBSan (seconds), no exploring; fails on any crash,
#                             sanitizer report or timeout, or if a file was not executed. The targets
#                             come from the test suite's ASan + UBSan build (build/asan, ASAN_CONFIG):
#                             running given inputs needs no coverage instrumentation.
#
# New inputs that reach new code go to build/fuzz/found/<target> (the committed corpus is read-only
# here; add to it with `<binary> -merge=1 tests/fuzz/corpus/<target> build/fuzz/found/<target>`).
# FUZZ_SEED=<n> makes a run reproducible: a fixed seed, no inputs carried over from earlier runs,
# and at most RUNS[<target>] executions (what this 2-core machine does in 75 s), so a slower
# machine runs a prefix of the same sequence and a faster one no further than it.
# A crash or sanitizer report stops the run and leaves the input in build/fuzz/artifacts/: make it a
# Catch2 test (tests/cpp/test_regressions.cpp) and add the input to the corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
REPLAY=0
if [ "${1:-}" = "--replay" ]; then
  REPLAY=1
  shift
else
  SECONDS_EACH=${1:-100}
  shift || true
fi
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(fuzz_sdpa fuzz_mha fuzz_tiny_train)

if [ "$REPLAY" = 1 ]; then
  source scripts/common.sh   # configure, ASAN_CONFIG
  configure build/asan "${ASAN_CONFIG[@]}"
  cmake --build build/asan -j"$JOBS" --target fuzz_all
  BIN=build/asan/tests/fuzz
  mkdir -p build/fuzz/artifacts
  # Each corpus file is named on the command line, so libFuzzer runs every one once, whole (no
  # -max_len cut), then exits; it stops at the first crash with a non-zero status. The count of
  # "Executed" lines must equal the count of files, so a corpus that was not read fails too.
  for t in "${TARGETS[@]}"; do
    files=(tests/fuzz/corpus/"$t"/*)
    [ -f "${files[0]}" ] || { echo "fuzz replay: no corpus in tests/fuzz/corpus/$t"; exit 1; }
    log="build/fuzz/$t.replay.log"
    start=$(date +%s%N)
    "$BIN/$t" -timeout=10 -rss_limit_mb=2048 -artifact_prefix="build/fuzz/artifacts/$t-" \
      "${files[@]}" > "$log" 2>&1 || { tail -60 "$log"
      echo "fuzz replay: $t FAILED on $(grep '^Running: ' "$log" | tail -1 | cut -d' ' -f2-) (full log: $log)"; exit 1; }
    ran=$(grep -c '^Executed ' "$log" || true)
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    if [ "$ran" -ne "${#files[@]}" ]; then
      tail -20 "$log"; echo "fuzz replay: $t executed $ran of ${#files[@]} corpus files"; exit 1
    fi
    echo "fuzz replay: $t: $ran/${#files[@]} corpus files executed under ASan + UBSan, no finding ($ms ms)"
  done
  exit 0
fi

if [ ! -f build/fuzz/CMakeCache.txt ]; then
  mkdir -p build
  CXX=clang++-14 cmake -S . -B build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTN_FUZZ=ON -DATTN_BUILD_TESTS=OFF \
    > build/fuzz.configure.log 2>&1 || { cat build/fuzz.configure.log; exit 1; }
fi
cmake --build build/fuzz -j"${JOBS:-2}" --target fuzz_all
mkdir -p build/fuzz/artifacts

declare -A RUNS=([fuzz_sdpa]=1500000 [fuzz_mha]=1125000 [fuzz_tiny_train]=225000)
for t in "${TARGETS[@]}"; do
  found="build/fuzz/found/$t"
  extra=()
  if [ -n "${FUZZ_SEED:-}" ]; then
    found=$(mktemp -d)
    extra=(-seed="$FUZZ_SEED" -runs="${RUNS[$t]}")
  fi
  mkdir -p "$found"
  echo "fuzz: $t for ${SECONDS_EACH} s from tests/fuzz/corpus/$t ($(ls "tests/fuzz/corpus/$t" | wc -l) inputs) ${extra[*]}"
  # The first corpus directory receives new inputs; the committed one is only read.
  "build/fuzz/tests/fuzz/$t" "$found" "tests/fuzz/corpus/$t" "${extra[@]}" -max_total_time="$SECONDS_EACH" \
    -max_len=512 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="build/fuzz/artifacts/$t-" \
    2> "build/fuzz/$t.log" || { tail -60 "build/fuzz/$t.log"; echo "fuzz: $t FAILED (input in build/fuzz/artifacts/)"; exit 1; }
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "build/fuzz/$t.log" | tr '\n' ' '; echo
done
