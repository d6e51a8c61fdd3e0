# Sourced by scripts/build.sh, scripts/test.sh and scripts/test-quick.sh (not run on its own).

export NODE_PATH=/usr/share/nodejs   # Emscripten 3.1.6 finds acorn there (Debian)
JOBS=${JOBS:-2}

# The two wasm build directories, one per thread mode, shared by build.sh (the ES modules) and
# test.sh (the Catch2 suite compiled to wasm and run by Node). Each builds both kernel flavours
# from one set of core, model, train, binding and test objects: the SIMD128 targets, and with
# ATTN_RELAXED_SIMD their relaxed-SIMD twins (*_relaxed), which differ only in the kernels, compiled
# a second time with relaxed SIMD's fused multiply-add (attn_relaxed_twin in CMakeLists.txt).
# build/wasm: dist/attention_core.{mjs,wasm}, the relaxed twin into build/wasm/dist-relaxed (build.sh
# ships its .wasm only: it shares the SIMD128 glue); its Catch2 binaries (attn_kernel_tests and the
# relaxed twin) are built on request only (docs/testing.md, "What runs once").
WASM_CONFIG=(emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release -DATTN_BUILD_TESTS=ON
  -DATTN_RELAXED_SIMD=ON -DATTN_RELAXED_DIST_DIR="$PWD/build/wasm/dist-relaxed")
# The threaded modules (Emscripten pthreads, docs/threads.md), both into dist/threads/ (glue, worker
# script, .wasm, and the {"type": "commonjs"} package.json the classic worker scripts need). Unlike the
# single-thread pair, each has its own glue: a threaded glue holds a data address of its binary
# (__emscripten_allow_main_runtime_queued_calls), which differs between the two.
# build/wasm-threads also builds the Catch2 suite with real threads, on each kernel flavour
# (attn_tests, attn_tests_relaxed: scripts/test.sh runs both).
WASM_THREADS_CONFIG=(emcmake cmake -S . -B build/wasm-threads -DCMAKE_BUILD_TYPE=Release -DATTN_BUILD_TESTS=ON
  -DATTN_THREADS=ON -DATTN_RELAXED_SIMD=ON -DATTN_MODULE_NAME=attention_core_threads
  -DATTN_DIST_DIR="$PWD/dist/threads")
NATIVE_CONFIG=(cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release)
# The Catch2 suite under ASan + UBSan (test.sh) and the fuzz targets that replay their corpora
# (fuzz.sh --replay): clang-14 (libFuzzer's compiler; the release build is gcc's), -O1 -g1 (ASan's
# recommended level, line tables for the reports).
ASAN_CONFIG=(cmake -S . -B build/asan -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DATTN_SANITIZE=ON)

# configure <build dir> <cmake command...>: runs the command, quietly unless it fails, when the
# directory has no CMake cache yet or was configured with other arguments (recorded in
# <dir>.configure.args), so a changed configuration reaches an existing build directory.
configure() {
  local dir=$1; shift
  local args="$*"
  mkdir -p build
  if [ ! -f "$dir/CMakeCache.txt" ] || [ "$(cat "$dir.configure.args" 2>/dev/null)" != "$args" ]; then
    "$@" > "$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
    printf '%s\n' "$args" > "$dir.configure.args"
  fi
}

# section <title>: starts a timed section; the table of section times is printed when the script
# exits (also on a failure, which names the section it happened in).
SECTION_TIMES=()
SECTION_NAME=""
SECTION_START=0
end_section() {
  if [ -n "$SECTION_NAME" ]; then
    SECTION_TIMES+=("$(printf '%5d s  %s' $((SECONDS - SECTION_START)) "$SECTION_NAME")")
  fi
  SECTION_NAME=""
}
section() {
  end_section
  SECTION_NAME="$*"
  SECTION_START=$SECONDS
  printf '\n=== %s === (%d s into the run)\n' "$*" "$SECONDS"
}
report_sections() {  # report_sections <exit status>
  local failed_in=$SECTION_NAME
  end_section
  printf '\n=== section times ===\n'
  [ ${#SECTION_TIMES[@]} -eq 0 ] || printf '%s\n' "${SECTION_TIMES[@]}"
  if [ "$1" -eq 0 ]; then
    printf '=== all suites passed (%d s) ===\n' "$SECONDS"
  else
    printf '=== FAILED in: %s (exit %d, after %d s) ===\n' "$failed_in" "$1" "$SECONDS"
  fi
}

# run_wasm_suite <build dir> <test binary> [node flags...]: a Catch2 binary compiled to wasm, in one
# Node process (every test case in it, as ctest would run them one process each; a failure names the
# case and exits 1).
run_wasm_suite() {
  local dir=$1 binary=$2; shift 2
  node "$@" "$dir/tests/cpp/$binary.cjs" --use-colour no
}
