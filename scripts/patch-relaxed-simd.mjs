#!/usr/bin/env node
// Usage: node scripts/patch-relaxed-simd.mjs <file.wasm>
//
// Debian's Emscripten 3.1.6 compiles with clang 14, which knows relaxed SIMD's fused multiply-add
// only as the prototype instruction `f32x4.fma`, opcode 0xfd 0xaf 0x01. Engines implement the
// standardised `f32x4.relaxed_madd`, opcode 0xfd 0x85 0x02 (0x105 as a LEB128), with the same three
// operands in the same order (a·b + c). This rewrites every prototype opcode in the code section
// of a linked module, in place. It is the post-link step of the relaxed-SIMD build (CMake
// attn_patch_relaxed_simd); the result loads only where relaxed SIMD is on (Chrome ≥ 114,
// Firefox ≥ 145, Node ≥ 22, Node 20 with --experimental-wasm-relaxed-simd).
//
// Where: the byte pattern also occurs inside immediates (an i32.const address whose LEB128 is
// ...fd af 01, which depends on where the data lands, so on the length of the build's paths), so
// the instructions are located by llvm-objdump (LLVM 14, the compiler's own disassembler,
// installed with Emscripten): each decoded `f32x4.fma` gives its offset in the code section, and
// only those bytes are rewritten, after checking that they hold the prototype opcode. A module
// with no f32x4.fma, or with any other prototype relaxed instruction, fails the build. The patched
// module is then validated by Node with relaxed SIMD enabled.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const PROTOTYPE_FMA = [0xfd, 0xaf, 0x01];
const RELAXED_MADD = [0xfd, 0x85, 0x02];
const CODE_SECTION = 10;

function fail(message) {
  console.error(`patch-relaxed-simd: ${message}`);
  process.exit(1);
}

function readU32Leb(bytes, at) {
  let value = 0,
    shift = 0,
    byte;
  do {
    byte = bytes[at++];
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  return { value, next: at };
}

// [start, end) of the code section's payload.
function codeSection(bytes) {
  if (bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d)
    fail('not a wasm module');
  let at = 8;
  while (at < bytes.length) {
    const id = bytes[at];
    const { value: size, next } = readU32Leb(bytes, at + 1);
    if (id === CODE_SECTION) return { start: next, end: next + size };
    at = next + size;
  }
  fail('no code section');
}

function objdump() {
  for (const tool of ['llvm-objdump-14', '/usr/lib/llvm-14/bin/llvm-objdump', 'llvm-objdump']) {
    if (tool.startsWith('/') && !existsSync(tool)) continue;
    try {
      execFileSync(tool, ['--version'], { stdio: 'ignore' });
      return tool;
    } catch {}
  }
  fail("llvm-objdump (LLVM 14, a dependency of Debian's emscripten package) was not found");
}

// The prototype relaxed instructions llvm-objdump decodes: mnemonic → offsets in the code section
// (its disassembly prints each instruction as `offset: bytes <tab>mnemonic`).
function decodedRelaxed(file) {
  const text = execFileSync(objdump(), ['-d', file], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const found = {};
  const line =
    /^\s*([0-9a-f]+):[0-9a-f ]*\t((?:f32x4|f64x2|i8x16|i16x8|i32x4|i64x2)\.(?:fma|fms|relaxed_\w+|laneselect|dot_i8x16\w*))\b/gm;
  for (const m of text.matchAll(line)) (found[m[2]] ??= []).push(parseInt(m[1], 16));
  return found;
}

function validateWithRelaxedSimd(file) {
  const check =
    `const ok = WebAssembly.validate(require('fs').readFileSync(${JSON.stringify(file)}));` +
    'process.exit(ok ? 0 : 3)';
  try {
    execFileSync(process.execPath, ['--experimental-wasm-relaxed-simd', '-e', check], { stdio: 'inherit' });
  } catch {
    fail(`${file}: the patched module does not validate with relaxed SIMD enabled`);
  }
}

const file = process.argv[2];
if (!file) fail('usage: node scripts/patch-relaxed-simd.mjs <file.wasm>');
const bytes = readFileSync(file);
const { start, end } = codeSection(bytes);
const decoded = decodedRelaxed(file);
const fmas = decoded['f32x4.fma'] ?? [];
const others = Object.keys(decoded).filter((k) => k !== 'f32x4.fma');
if (others.length) fail(`${file}: unexpected relaxed instructions ${others.join(', ')}`);
if (fmas.length === 0)
  fail(`${file}: no f32x4.fma to patch (built without -mrelaxed-simd, or patched already?)`);
for (const offset of fmas) {
  const at = start + offset;
  if (at + PROTOTYPE_FMA.length > end || !PROTOTYPE_FMA.every((b, k) => bytes[at + k] === b)) {
    fail(
      `${file}: llvm-objdump puts an f32x4.fma at code offset 0x${offset.toString(16)}, but its bytes are not fd af 01`,
    );
  }
  RELAXED_MADD.forEach((b, k) => {
    bytes[at + k] = b;
  });
}
writeFileSync(file, bytes);
validateWithRelaxedSimd(file);
console.log(`patch-relaxed-simd: ${file}: ${fmas.length} × f32x4.fma → f32x4.relaxed_madd`);
