#!/usr/bin/env bash
# `npm run test:quick`: the inner loop (docs/testing.md). The native Catch2 suite (an incremental
# build of build/native, then ctest) and all of tests/js (node --test) on the module already in
# dist/; no install, no wasm build, no sanitizers, no browser. `npm test` runs everything.
# Rebuild dist/ after a C++ change (`npm run build`): the JS tests load what is there, and a note
# is printed when a C++ or binding source is newer than dist/attention_core.wasm.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh   # NODE_PATH, JOBS, configure, section, the shared build configurations
trap 'report_sections $?' EXIT

if [ ! -f dist/attention_core.wasm ]; then
  echo "test:quick: no dist/attention_core.wasm; run \`npm run build\` (or \`npm test\`) first" >&2
  exit 1
fi
newer=$(find src cmake CMakeLists.txt -newer dist/attention_core.wasm \
  \( -name '*.cpp' -o -name '*.h' -o -name '*.cmake' -o -name CMakeLists.txt \) -print -quit)
if [ -n "$newer" ]; then
  echo "test:quick: NOTE: $newer is newer than dist/attention_core.wasm: the JS tests run the older" \
       "module (\`npm run build\` rebuilds it)"
fi

section "native ctest (incremental build)"
configure build/native "${NATIVE_CONFIG[@]}"
cmake --build build/native -j"$JOBS"
ctest --test-dir build/native --output-on-failure -j"$JOBS"

section "JS API tests (node --test tests/js/, the module in dist/)"
node --test --test-reporter=spec tests/js/
