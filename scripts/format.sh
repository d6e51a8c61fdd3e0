#!/usr/bin/env bash
# Formats every JS/TS file with prettier (.prettierrc.json) and every C++ file with clang-format
# (.clang-format), then checks the rest of the house style (scripts/check-style.mjs). `--check` only checks.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--check" ]; then
  node scripts/check-style.mjs
else
  node scripts/check-style.mjs --fix
fi
