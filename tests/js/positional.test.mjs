// sinusoidalEncoding, seededNormal and LearnedPositionalEncoding, checked against their formulas and the
// contract index.d.ts states.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  init,
  Tensor,
  AttentionError,
  sinusoidalEncoding,
  LearnedPositionalEncoding,
  seededNormal,
  memoryStats,
} from '../../src/js/index.js';
import { assertClose } from './close.js';
import { kPeTol } from './attention-reference.mjs';

// Top-level await: describe() bodies below build inputs with seededNormal at collection time.
await init();

// ---- positional encodings, seededNormal ---------------------------------------------------------

describe('sinusoidalEncoding', () => {
  const formula = (pos, col, d, base) => {
    const pair = Math.floor(col / 2);
    const angle = pos / base ** ((2 * pair) / d);
    return col % 2 === 0 ? Math.sin(angle) : Math.cos(angle);
  };
  const expected = (length, d, base) =>
    Array.from({ length: length * d }, (_, i) => formula(Math.floor(i / d), i % d, d, base));

  it('follows PE[pos, 2i] = sin(pos / base^(2i/d)), PE[pos, 2i+1] = cos(…)', () => {
    const pe = sinusoidalEncoding(50, 16);
    assert.deepEqual(pe.shape, [50, 16]);
    assertClose(pe.data, expected(50, 16, 10000), kPeTol, 'base 10000');
  });

  it('uses the base option', () => {
    const pe = sinusoidalEncoding(20, 8, { base: 100 });
    assertClose(pe.data, expected(20, 8, 100), kPeTol, 'base 100');
    assert.notDeepEqual(Array.from(pe.data), Array.from(sinusoidalEncoding(20, 8).data));
  });

  it('odd dModel keeps the last sine column and drops its cosine partner', () => {
    const pe = sinusoidalEncoding(10, 5);
    assert.deepEqual(pe.shape, [10, 5]);
    assertClose(pe.data, expected(10, 5, 10000), kPeTol, 'odd dModel');
  });
});

describe('seededNormal', () => {
  it('is deterministic for a seed, differs across seeds, and looks like N(0, 1)', () => {
    const a = seededNormal([40, 50], 7);
    const b = seededNormal([40, 50], 7);
    const c = seededNormal([40, 50], 8);
    assert.deepEqual(a.shape, [40, 50]);
    assert.deepEqual(Array.from(a.data), Array.from(b.data));
    assert.notDeepEqual(Array.from(a.data), Array.from(c.data));
    const n = a.size;
    const mean = a.data.reduce((s, v) => s + v, 0) / n;
    const variance = a.data.reduce((s, v) => s + (v - mean) ** 2, 0) / n;
    // 2000 deterministic samples: generous bounds, this is a sanity check of the distribution.
    assert.ok(Math.abs(mean) < 0.1, `mean ${mean}`);
    assert.ok(variance > 0.85 && variance < 1.15, `variance ${variance}`);
  });
});

describe('LearnedPositionalEncoding', () => {
  it('is seeded, encodes the first rows, accepts a new table, and disposes', () => {
    const start = memoryStats().liveHandles;
    const a = new LearnedPositionalEncoding({ maxLength: 6, dModel: 4, seed: 3 });
    const b = new LearnedPositionalEncoding({ maxLength: 6, dModel: 4, seed: 3 });
    const c = new LearnedPositionalEncoding({ maxLength: 6, dModel: 4, seed: 4 });
    assert.equal(memoryStats().liveHandles, start + 3);
    assert.equal(a.maxLength, 6);
    assert.equal(a.dModel, 4);
    assert.deepEqual(a.table.shape, [6, 4]);
    assert.deepEqual(Array.from(a.table.data), Array.from(b.table.data), 'same seed, same table');
    assert.notDeepEqual(Array.from(a.table.data), Array.from(c.table.data), 'other seed');

    const first3 = a.encode(3);
    assert.deepEqual(first3.shape, [3, 4]);
    assert.deepEqual(Array.from(first3.data), Array.from(a.table.data.subarray(0, 12)));
    assert.throws(() => a.encode(7), AttentionError, 'longer than maxLength');

    const table = Float32Array.from({ length: 24 }, (_, i) => i / 10);
    a.setTable(new Tensor(table, [6, 4]));
    assert.deepEqual(Array.from(a.table.data), Array.from(table));
    assert.deepEqual(Array.from(a.encode(2).data), Array.from(table.subarray(0, 8)));
    assert.throws(
      () => a.setTable(new Tensor(table, [4, 6])),
      (e) => e instanceof AttentionError && e.code === 'SHAPE_MISMATCH',
    );
    // The table getter returns a copy.
    a.table.data[0] = 99;
    assert.equal(a.table.data[0], 0);

    for (const pe of [a, b, c]) pe.dispose();
    a.dispose(); // twice is harmless
    assert.equal(memoryStats().liveHandles, start);
    assert.throws(
      () => a.encode(1),
      (e) => e instanceof AttentionError && e.code === 'DISPOSED',
    );
  });
});
