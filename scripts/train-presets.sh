#!/usr/bin/env bash
# `npm run train-presets`: builds the native train_presets tool (tools/train-presets) and writes the
# trained presets into web/presets/ (a few minutes on 2 cores; the same build gives the same bytes).
# Extra arguments go to the tool (e.g. --only reverse, --out DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build web/presets
if [ ! -f build/native/CMakeCache.txt ]; then
  cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release > build/native.configure.log 2>&1 || { cat build/native.configure.log; exit 1; }
fi
cmake --build build/native -j"${JOBS:-2}" --target train_presets
build/native/tools/train-presets/train_presets --out web/presets "$@"
