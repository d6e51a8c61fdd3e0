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

section "style: prettier, clang-format, file and function sizes (scripts/check-style.mjs)"
node scripts/check-style.mjs

section "native build (incremental)"
configure build/native "${NATIVE_CONFIG[@]}"
cmake --build build/native -j"$JOBS" --target attn_tests train_presets

# ctest's longest test (native:convergence, ~20 s) runs on one core while the rest finish, so the
# JS suite runs beside it instead of after it; its output is printed when both are done.
section "native ctest, and beside it all of tests/js (node --test, the module in dist/)"
js_log=build/test-quick-js.log
node --test --test-reporter=spec tests/js/ > "$js_log" 2>&1 &
js_pid=$!
ctest_rc=0
ctest --test-dir build/native --output-on-failure -j"$JOBS" || ctest_rc=$?
js_rc=0
wait "$js_pid" || js_rc=$?
if [ "$js_rc" -ne 0 ]; then
  cat "$js_log"
else
  tail -9 "$js_log"
fi
echo "native ctest: exit $ctest_rc; node --test tests/js/: exit $js_rc (full output: $js_log)"
[ "$ctest_rc" -eq 0 ] && [ "$js_rc" -eq 0 ]
