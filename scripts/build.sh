#!/usr/bin/env bash
# Builds the package in place: dist/attention_core.mjs + dist/attention_core.wasm (SIMD128), so that
# `import 'attention-wasm'` resolves from the project root. With --bench, also the scalar wasm
# variant (dist-scalar/) and the native benchmark binary.
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

if [ "${1:-}" = "--bench" ]; then
  configure build/wasm-scalar emcmake cmake -S . -B build/wasm-scalar -DCMAKE_BUILD_TYPE=Release \
    -DATTN_BUILD_TESTS=OFF -DATTN_SIMD=OFF -DATTN_DIST_DIR="$PWD/dist-scalar"
  cmake --build build/wasm-scalar -j"$JOBS" --target attention_module
  configure build/native cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release
  cmake --build build/native -j"$JOBS" --target native_bench
fi
