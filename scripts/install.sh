#!/usr/bin/env bash
# Installs what the build and the tests need, and nothing twice: Debian packages through apt-get
# (only those missing) and the npm devDependencies through `npm ci` (only when the lockfile changed).
# Safe to run on every `npm start` / `npm test`.
set -euo pipefail
cd "$(dirname "$0")/.."

# llvm-14: llvm-objdump checks the relaxed-SIMD opcode patch (scripts/patch-relaxed-simd.mjs)
# clang-14 + libclang-rt-14-dev: the libFuzzer targets (scripts/fuzz.sh)
# libeigen3-dev: the double-precision references of the Catch2 suite (tests/cpp/reference.cpp), not src/
packages=(cmake make g++ emscripten binaryen llvm-14 libeigen3-dev catch2 chromium clang-format clang-14 libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install: apt-get install ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm ci only when package-lock.json changed since the last install (a stamp inside node_modules).
if [ -f package-lock.json ]; then
  want=$(sha256sum package-lock.json | cut -d' ' -f1)
  have=$(cat node_modules/.attn-lock-sha256 2>/dev/null || true)
  if [ "$want" != "$have" ]; then
    echo "install: npm ci"
    npm ci --ignore-scripts --no-audit --no-fund
    echo "$want" > node_modules/.attn-lock-sha256
  fi
fi
