// One source for the numbers JS shares with C++: src/js/constants.js is generated from
// the C++ enums by scripts/gen-constants.mjs. Here: the committed file is what the headers give,
// and every value (and name) equals what the compiled binding itself reports (_constants()), so a
// changed enum that was not regenerated, or a parser that misread one, fails.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as generated from '../../src/js/constants.js';
import { generate, parseEnum } from '../../scripts/gen-constants.mjs';
import createAttentionModule from '../../dist/attention_core.mjs';

describe('shared constants (src/js/constants.js)', () => {
  it('the committed file is what scripts/gen-constants.mjs writes from the headers', () => {
    const path = fileURLToPath(new URL('../../src/js/constants.js', import.meta.url));
    assert.equal(
      readFileSync(path, 'utf8'),
      generate(),
      'run `node scripts/gen-constants.mjs` (scripts/build.sh does) and commit src/js/constants.js',
    );
  });

  it('equals the binding: every table, name and value', async () => {
    const core = await createAttentionModule();
    const fromBinding = core._constants();
    const tables = Object.fromEntries(Object.entries(generated).map(([name, table]) => [name, { ...table }]));
    assert.deepEqual(tables, JSON.parse(JSON.stringify(fromBinding)));
  });

  it('the tables are frozen', () => {
    for (const table of Object.values(generated)) assert.ok(Object.isFrozen(table));
  });

  it('the parser refuses what it would have to guess', () => {
    const ok = 'enum class E : int { kOne = 1,  // c\n kTwoWords = 2 /* x */, };';
    assert.deepEqual(parseEnum(ok, 'attn::E', 'upper'), { ONE: 1, TWO_WORDS: 2 });
    assert.deepEqual(parseEnum(ok, 'attn::E', 'lower'), { one: 1, two_words: 2 });
    assert.throws(() => parseEnum('enum class E { kA, kB };', 'attn::E', 'upper'), /kA/);
    assert.throws(() => parseEnum('enum class E { kA = 1 << 2 };', 'attn::E', 'upper'), /integer/);
    assert.throws(() => parseEnum('enum class F { kA = 1 };', 'attn::E', 'upper'), /found 0/);
  });

  it('the lean path io block: inputs end where outputs start, outputs fit', () => {
    const { FAST_IO: io } = generated;
    assert.equal(io.OUT, 3 * io.INPUT_STRIDE);
    assert.ok(io.OUT_END <= io.SIZE);
    assert.equal(io.OUT_END - io.OUT_WEIGHTS_DIMS, 4);
  });
});
