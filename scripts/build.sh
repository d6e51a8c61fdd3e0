#!/usr/bin/env bash
# Builds the package in place: dist/attention_core.mjs + dist/attention_core.wasm (SIMD128) and
# dist/attention_core_relaxed.wasm (the same with relaxed-SIMD fused multiply-add, loaded by init()
# where the engine supports it; it shares the SIMD128 build's glue), so that `import 'attention-wasm'`
# resolves from the project root. With --bench, also the scalar wasm variant (dist-scalar/) and the
# native benchmark binary.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs   # Emscripten 3.1.6 finds acorn there (Debian)
JOBS=${JOBS:-2}

configure() {  # configure <build dir> <extra cmake args...>, quietly unless it fails
  local dir=$1; shift
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    "$@" > "$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
  fi
}

mkdir -p build
node scripts/vendor.mjs   # KaTeX from node_modules into web/vendor/katex (offline pages)
configure build/wasm emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release -DATTN_BUILD_TESTS=OFF
cmake --build build/wasm -j"$JOBS" --target attention_module

configure build/wasm-relaxed emcmake cmake -S . -B build/wasm-relaxed -DCMAKE_BUILD_TYPE=Release \
  -DATTN_BUILD_TESTS=OFF -DATTN_RELAXED_SIMD=ON -DATTN_MODULE_NAME=attention_core_relaxed \
  -DATTN_DIST_DIR="$PWD/build/wasm-relaxed/dist"
cmake --build build/wasm-relaxed -j"$JOBS" --target attention_module
# One glue for both binaries: refuse to ship the relaxed .wasm unless its glue is the SIMD128 one.
if ! cmp -s <(sed 's/attention_core_relaxed/attention_core/g' build/wasm-relaxed/dist/attention_core_relaxed.mjs) \
            dist/attention_core.mjs; then
  echo "build: the relaxed-SIMD glue differs from dist/attention_core.mjs beyond the file name" >&2
  exit 1
fi
cp build/wasm-relaxed/dist/attention_core_relaxed.wasm dist/

if [ "${1:-}" = "--bench" ]; then
  configure build/wasm-scalar emcmake cmake -S . -B build/wasm-scalar -DCMAKE_BUILD_TYPE=Release \
    -DATTN_BUILD_TESTS=OFF -DATTN_SIMD=OFF -DATTN_DIST_DIR="$PWD/dist-scalar"
  cmake --build build/wasm-scalar -j"$JOBS" --target attention_module
  configure build/native cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release
  cmake --build build/native -j"$JOBS" --target native_bench
fi
