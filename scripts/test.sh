#!/usr/bin/env bash
# Runs every suite, in the order a failure is cheapest to read: native Catch2 (ctest), the same
# suite under ASan + UBSan, the same suite compiled to wasm and run by Node (ctest), once with the
# SIMD128 kernels and once with the relaxed-SIMD build, the JS API tests (node --test; the core of
# them again on the relaxed-SIMD build), the real-browser tests (playwright-core + Debian Chromium),
# and a benchmark smoke run. Node 20 runs relaxed SIMD only with --experimental-wasm-relaxed-simd.
# Expects scripts/install.sh and scripts/build.sh to have run (npm test does both first).
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs
JOBS=${JOBS:-2}

configure() {  # configure <build dir> <cmake command...>; re-runs only when there is no cache yet
  local dir=$1; shift
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    "$@" > "$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
  fi
}
section() { printf '\n=== %s === (%d s into the run)\n' "$*" "$SECONDS"; }
mkdir -p build

section "native ctest"
configure build/native cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release
cmake --build build/native -j"$JOBS"
ctest --test-dir build/native --output-on-failure -j"$JOBS"

section "native ctest under AddressSanitizer + UndefinedBehaviorSanitizer"
configure build/asan cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTN_SANITIZE=ON
cmake --build build/asan -j"$JOBS"
ctest --test-dir build/asan --output-on-failure -j"$JOBS"

section "libFuzzer: SDPA, MHA and the training step from the committed corpus, 75 s each (ASan + UBSan)"
FUZZ_SEED=1 bash scripts/fuzz.sh 75

section "wasm ctest (the same Catch2 suite, SIMD128 kernels, run by Node)"
configure build/wasm-tests emcmake cmake -S . -B build/wasm-tests -DCMAKE_BUILD_TYPE=Release -DATTN_BUILD_MODULE=OFF
cmake --build build/wasm-tests -j"$JOBS"
ctest --test-dir build/wasm-tests --output-on-failure -j"$JOBS"

section "wasm ctest, relaxed-SIMD build (f32x4.relaxed_madd GEMM, Node with relaxed SIMD on)"
configure build/wasm-tests-relaxed emcmake cmake -S . -B build/wasm-tests-relaxed -DCMAKE_BUILD_TYPE=Release \
  -DATTN_BUILD_MODULE=OFF -DATTN_RELAXED_SIMD=ON
cmake --build build/wasm-tests-relaxed -j"$JOBS"
ctest --test-dir build/wasm-tests-relaxed --output-on-failure -j"$JOBS"

section "JS API tests (node --test)"
node --test --test-reporter=spec tests/js/

section "soak: 10^4 mixed calls, heap / bytes in use / handles flat (npm run soak makes 10^5)"
node scripts/soak.mjs --calls 10000

section "JS API tests on the relaxed-SIMD build (init() picks it when relaxed SIMD is on)"
node --experimental-wasm-relaxed-simd --test --test-reporter=spec tests/js/api.test.mjs \
  tests/js/golden.test.mjs tests/js/errors.test.mjs tests/js/leak.test.mjs tests/js/wasm.test.mjs \
  tests/js/backward.test.mjs tests/js/model.test.mjs tests/js/trainer.test.mjs \
  tests/js/safetensors.test.mjs tests/js/mha-backward.test.mjs tests/js/csp.test.mjs \
  tests/js/pretrained.test.mjs

section "browser tests (playwright-core + /usr/bin/chromium)"
node --test --test-reporter=spec --test-concurrency=1 tests/browser/

section "benchmark smoke run"
node bench/run.mjs --smoke

section "a SmolLM2-360M-shaped checkpoint (BF16, 724 MB, random weights written here) in Node and Chromium"
# Issue #16: it loads under the default 1 GiB limit (16-bit weights stay 16-bit) and runs a forward
# and a generation, from a Blob in Node and from an <input type=file> in Chromium (~35 s).
node bench/smollm2_shape.mjs --browser
printf '\n=== all suites passed (%d s) ===\n' "$SECONDS"
