#!/usr/bin/env bash
# Builds the package in place: dist/attention_core.mjs + dist/attention_core.wasm (SIMD128) and
# dist/attention_core_relaxed.wasm (the same with relaxed-SIMD fused multiply-add, loaded by init()
# where the engine supports it; it shares the SIMD128 build's glue), so that `import 'attention-wasm'`
# resolves from the project root. With --bench, also the scalar wasm variant (dist-scalar/) and the
# native benchmark binary. Always also the threaded modules (docs/threads.md): dist/threads/
# attention_core_threads{,_relaxed}.{mjs,wasm,worker.js} and a CommonJS package.json for the classic
# worker scripts; init() loads them where threads can run.
# One build directory per thread mode (scripts/common.sh): each links the SIMD128 module and its
# relaxed-SIMD twin from the same objects but the kernels. build/wasm and build/wasm-threads also
# configure the Catch2 suite: scripts/test.sh builds its wasm test binaries there, from the same
# objects (only the modules are built here).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh   # NODE_PATH, JOBS, configure, the shared build configurations

mkdir -p build
node scripts/vendor.mjs   # KaTeX from node_modules into web/vendor/katex (offline pages)
node scripts/gen-constants.mjs   # src/js/constants.js from the C++ enums (docs/architecture.md)
configure build/wasm "${WASM_CONFIG[@]}"
cmake --build build/wasm -j"$JOBS" --target attention_module attention_module_relaxed
# One glue for both binaries: refuse to ship the relaxed .wasm unless its glue is the SIMD128 one.
if ! cmp -s <(sed 's/attention_core_relaxed/attention_core/g' build/wasm/dist-relaxed/attention_core_relaxed.mjs) \
            dist/attention_core.mjs; then
  echo "build: the relaxed-SIMD glue differs from dist/attention_core.mjs beyond the file name" >&2
  exit 1
fi
cp build/wasm/dist-relaxed/attention_core_relaxed.wasm dist/

if [ "${1:-}" = "--bench" ]; then
  configure build/wasm-scalar emcmake cmake -S . -B build/wasm-scalar -DCMAKE_BUILD_TYPE=Release \
    -DATTN_BUILD_TESTS=OFF -DATTN_SIMD=OFF -DATTN_DIST_DIR="$PWD/dist-scalar"
  cmake --build build/wasm-scalar -j"$JOBS" --target attention_module
  configure build/native "${NATIVE_CONFIG[@]}"
  cmake --build build/native -j"$JOBS" --target native_bench
fi
configure build/wasm-threads "${WASM_THREADS_CONFIG[@]}"
cmake --build build/wasm-threads -j"$JOBS" --target attention_module attention_module_relaxed
echo "build: done in ${SECONDS} s"
