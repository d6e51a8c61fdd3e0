#!/usr/bin/env bash
# ThreadSanitizer over the thread pool and the parallel GEMMs (tests/cpp/tsan_pool.cpp; docs/threads.md):
# builds the kernels and that file with -fsanitize=thread into build/tsan-pool/ and runs it. A data
# race is a TSan report and a non-zero exit (halt_on_error). Seconds, not minutes: no Catch2, no core.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/tsan-pool
mkdir -p "$out"
${CXX:-c++} -std=c++17 -O1 -g -fsanitize=thread -fno-omit-frame-pointer -ffp-contract=off -Wall -Wextra -I src \
  tests/cpp/tsan_pool.cpp src/kernels/parallel.cpp src/kernels/kernels_dispatch.cpp src/kernels/kernels_scalar.cpp src/kernels/quant_scalar.cpp src/kernels/weight_types.cpp \
  src/kernels/quant_int8.cpp src/kernels/quant_unpack_scalar.cpp src/kernels/quant_gemv_scalar.cpp src/kernels/kv_half_scalar.cpp \
  -o "$out/tsan_pool"
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" "$out/tsan_pool"
