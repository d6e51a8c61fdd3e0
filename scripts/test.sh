#!/usr/bin/env bash
# Runs every suite, in the order a failure is cheapest to read: the house style (formatters, file
# and function sizes), native Catch2 (ctest), the thread pool under ThreadSanitizer, the same suite
# under ASan + UBSan, the committed fuzz corpora replayed under ASan + UBSan, the same Catch2 suite
# compiled to wasm and run by Node (every case with real threads, on the SIMD128 kernels and on the
# relaxed-SIMD ones), the
# JS API tests (node --test, on the threaded build init() loads in Node), the fixture suites again on
# the relaxed-SIMD build, the real-browser tests (playwright-core + Debian Chromium), and a benchmark
# smoke run. Node 20 runs relaxed SIMD only with --experimental-wasm-relaxed-simd. Prints each
# section's time at the end (docs/testing.md; `npm run test:quick` is the inner loop).
# Expects scripts/install.sh and scripts/build.sh to have run (npm test does both first).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh   # NODE_PATH, JOBS, configure, section, the shared build configurations
trap 'report_sections $?' EXIT
mkdir -p build

section "style, layers and shared constants (formatters, sizes, src/ include direction, constants = the C++ enums)"
node scripts/check-style.mjs
node scripts/check-layers.mjs
node scripts/gen-constants.mjs --check

section "native release build: kernels and fixtures, convergence of every toy task, presets reproducible"
# Every Catch2 case runs natively under ASan + UBSan below and in wasm with real threads; the -O3
# build differs from the sanitized one in its optimisation level only, so it runs attn_kernel_tests
# (every kernel against its double reference, the quantized weights, the PyTorch fixtures, the pool)
# and train_presets twice on the small budget (byte-identical files). The convergence of every toy
# task (one core for ~40 s, the fastest build's job) runs in the background from here until the
# ASan + UBSan section is done: it fills the core that the sanitized build's links and last
# tests leave idle.
configure build/native "${NATIVE_CONFIG[@]}"
cmake build/native > /dev/null   # an existing directory learns of a test target added since
cmake --build build/native -j"$JOBS" --target attn_kernel_tests train_presets
build/native/tests/cpp/attn_kernel_tests --use-colour no "[.convergence]" > build/native/convergence.log 2>&1 &
convergence_pid=$!
build/native/tests/cpp/attn_kernel_tests --use-colour no
cmake -DBIN="$PWD/build/native/tools/train-presets/train_presets" -DOUT="$PWD/build/native/tools/train-presets/determinism" \
  -DCORPUS="$PWD/tools/train-presets/corpus.txt" -P tools/train-presets/determinism.cmake

section "thread pool + parallel GEMMs under ThreadSanitizer (tests/cpp/tsan_pool.cpp, seconds)"
bash scripts/tsan-pool.sh

section "native ctest under AddressSanitizer + UndefinedBehaviorSanitizer"
# clang-14 (the fuzzers' compiler; the release build above is gcc's), -O1 -g1 (ASan's recommended
# level, line tables for the reports; ASAN_CONFIG): the same checks, the build in 72 s where gcc
# took 116 s (its ctest 15 s against 20 s) on the quiet 2-core machine; the test files themselves at
# -O0 (the library they check at -O1; tests/cpp/CMakeLists.txt): 53 s instead of 83 s of build for
# 4 s more of ctest. The fuzz targets are built
# here too, on the same sanitized libraries: the next section replays their corpora.
configure build/asan "${ASAN_CONFIG[@]}"
cmake build/asan > /dev/null   # an existing directory learns of the fuzz targets
cmake --build build/asan -j"$JOBS" --target attn_tests fuzz_all   # not the tools and the native benchmark
ctest --test-dir build/asan --output-on-failure -j"$JOBS"
wait "$convergence_pid" || { cat build/native/convergence.log; echo "convergence: FAILED"; exit 1; }
grep '^convergence\|passed' build/native/convergence.log

section "libFuzzer corpus replay: every committed input of the 3 targets once (ASan + UBSan)"
# Seconds, not minutes: the targets of build/asan (linked above), no exploring; the exploring runs
# (new inputs, a coverage-instrumented build) are `npm run fuzz` (scripts/fuzz.sh).
bash scripts/fuzz.sh --replay

section "wasm Catch2 suite, every case, with real threads (Emscripten pthreads: a pool of 4)"
# build/wasm-threads is build.sh's directory: the test binaries link the objects the modules did.
# The wasm suites run as one Node process each (run_wasm_suite): ctest would start Node and compile
# the test .wasm once per test case (41 s for what one process does in 8 s). The relaxed-SIMD twin
# links the same test objects and the relaxed kernels the threaded relaxed module has: both
# binaries are built here, two links at a time. The single-thread build runs no Catch2 suite: its
# kernels compute with these instructions (docs/testing.md, "What runs once").
configure build/wasm-threads "${WASM_THREADS_CONFIG[@]}"
cmake build/wasm-threads > /dev/null   # an existing directory learns of a test target added since
cmake --build build/wasm-threads -j"$JOBS" --target attn_tests attn_tests_relaxed
run_wasm_suite build/wasm-threads attn_tests

section "wasm Catch2 suite, every case, relaxed-SIMD twin (f32x4.relaxed_madd, Node with relaxed SIMD on)"
run_wasm_suite build/wasm-threads attn_tests_relaxed --experimental-wasm-relaxed-simd

section "JS API tests (node --test, two files at a time; init() loads the threaded build: Node runs threads)"
node --test --test-concurrency=2 --test-reporter=dot tests/js/

section "soak: 10^4 mixed calls, heap / bytes in use / handles flat (npm run soak makes 10^5)"
node scripts/soak.mjs --calls 10000

section "the relaxed-SIMD build through the API: the module checks and the PyTorch and transformers fixtures"
# The relaxed-SIMD build differs from the SIMD128 one only in the kernels' fused multiply-add, which
# its Catch2 suite above checks against double references at every size. Through the API, the
# fixture suites (every op and every pretrained family against PyTorch/transformers numbers) and the
# build checks run again with relaxed SIMD on; the rest of tests/js would repeat what does not differ.
node --experimental-wasm-relaxed-simd --test --test-concurrency=2 --test-reporter=dot \
  tests/js/wasm.test.mjs tests/js/golden.test.mjs tests/js/pretrained.test.mjs

section "browser tests (playwright-core + /usr/bin/chromium)"
# Two lanes at once, each one process with one Chromium (a fresh context per file; a test hands its
# page back with release() for the next test of the file), the files dealt by how many tests each
# declares (tests/browser/group.mjs; tests/browser/README.md). The pages wait on what they show,
# never on a clock, so they pass on a busy machine. One file alone: node --test tests/browser/<file>.test.mjs.
node --test --test-reporter=dot --test-concurrency=2 tests/browser/groups/*.mjs

section "benchmark smoke run"
node bench/run.mjs --smoke

section "a SmolLM2-360M-shaped checkpoint (BF16, 724 MB, random weights written here) in Node and Chromium"
# It loads under the default 1 GiB limit (16-bit weights stay 16-bit) and runs a forward
# and a generation, from a Blob in Node and from an <input type=file> in Chromium (~35 s).
node bench/smollm2_shape.mjs --browser
