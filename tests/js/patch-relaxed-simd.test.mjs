// scripts/patch-relaxed-simd.mjs rewrites the prototype f32x4.fma opcode (fd af 01) into
// f32x4.relaxed_madd (fd 85 02) at the instructions llvm-objdump decodes, and nowhere else: the same
// three bytes also occur inside immediates (here an i32.const whose LEB128 is fd af 01), which is
// what broke a clean-clone build whose data addresses happened to produce one.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PATCHER = fileURLToPath(new URL('../../scripts/patch-relaxed-simd.mjs', import.meta.url));
const V128_ZERO = [0xfd, 0x0c, ...new Array(16).fill(0)];
const I32_CONST_22525 = [0x41, 0xfd, 0xaf, 0x01]; // 22525 = 0x7d + 0x2f·2^7 + 1·2^14
const PROTOTYPE_FMA = [0xfd, 0xaf, 0x01];

// () -> v128 { i32.const 22525; drop; f32x4.fma(0, 0, 0) }: one decoy, one instruction.
function moduleBytes() {
  const body = [
    0x00,
    ...I32_CONST_22525,
    0x1a,
    ...V128_ZERO,
    ...V128_ZERO,
    ...V128_ZERO,
    ...PROTOTYPE_FMA,
    0x0b,
  ];
  return new Uint8Array([
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00,
    0x01,
    0x05,
    0x01,
    0x60,
    0x00,
    0x01,
    0x7b, // type section: () -> v128
    0x03,
    0x02,
    0x01,
    0x00, // function section
    0x0a,
    body.length + 2,
    0x01,
    body.length,
    ...body, // code section: one body
  ]);
}

function indexOf(bytes, pattern, from = 0) {
  for (let i = from; i + pattern.length <= bytes.length; i++)
    if (pattern.every((b, k) => bytes[i + k] === b)) return i;
  return -1;
}

describe('patch-relaxed-simd', () => {
  it('rewrites the decoded f32x4.fma and leaves an immediate with the same bytes alone', () => {
    const dir = mkdtempSync(join(tmpdir(), 'attn-patch-'));
    try {
      const file = join(dir, 'm.wasm');
      const before = moduleBytes();
      writeFileSync(file, before);
      const decoyAt = indexOf(before, I32_CONST_22525);
      const fmaAt = indexOf(before, PROTOTYPE_FMA, decoyAt + I32_CONST_22525.length);
      assert.ok(decoyAt > 0 && fmaAt > decoyAt, 'the test module has the decoy before the instruction');
      const out = execFileSync(process.execPath, [PATCHER, file], { encoding: 'utf8' });
      assert.match(out, /1 × f32x4\.fma → f32x4\.relaxed_madd/);
      const after = new Uint8Array(readFileSync(file));
      assert.deepEqual(
        [...after.subarray(decoyAt, decoyAt + 4)],
        I32_CONST_22525,
        'the immediate is unchanged',
      );
      assert.deepEqual(
        [...after.subarray(fmaAt, fmaAt + 3)],
        [0xfd, 0x85, 0x02],
        'the instruction is relaxed_madd',
      );
      assert.equal(after.length, before.length);
      // A second run finds nothing to patch and fails loudly rather than guessing.
      const again = spawnSync(process.execPath, [PATCHER, file], { encoding: 'utf8' });
      assert.notEqual(again.status, 0);
      assert.match(again.stderr, /no f32x4\.fma to patch/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
