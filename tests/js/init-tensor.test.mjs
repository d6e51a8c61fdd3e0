// init and Tensor, checked against the contract index.d.ts states.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  init,
  Tensor,
  AttentionError,
  memoryStats,
  memoryLimit,
  setMemoryLimit,
  kernelVariant,
  relaxedSimdSupported,
} from '../../src/js/index.js';

// Top-level await: describe() bodies below build inputs with seededNormal at collection time.
await init();

// ---- init, Tensor ---------------------------------------------------------------------------------

describe('init', () => {
  it('is idempotent and every caller shares one instance', async () => {
    const p1 = init();
    const p2 = init();
    assert.equal(p1, p2, 'same promise');
    const [a, b] = await Promise.all([p1, p2]);
    assert.equal(a, b, 'same module instance');
    assert.equal(await init(), a);
  });

  it('reports the build init() chose, the default 1 GiB memory limit and no live handles', () => {
    assert.equal(kernelVariant(), relaxedSimdSupported() ? 'relaxed-simd' : 'simd128');
    assert.equal(memoryLimit(), 2 ** 30);
    setMemoryLimit(2 ** 20);
    assert.equal(memoryLimit(), 2 ** 20);
    setMemoryLimit(2 ** 30);
    const stats = memoryStats();
    assert.ok(stats.heapBytes > 0 && Number.isInteger(stats.heapBytes));
    assert.equal(stats.liveHandles, 0);
  });
});

describe('Tensor', () => {
  it('wraps a Float32Array without copying and indexes row-major', () => {
    const data = Float32Array.from({ length: 24 }, (_, i) => i);
    const t = new Tensor(data, [2, 3, 4]);
    assert.equal(t.data, data);
    assert.equal(t.dtype, 'float32');
    assert.deepEqual(t.shape, [2, 3, 4]);
    assert.equal(t.size, 24);
    assert.equal(t.rank, 3);
    assert.equal(t.get(1, 2, 3), 23);
    assert.equal(t.get(1, 0, 2), 14);
  });

  it('converts number[] to float32 and defaults the shape to [length]', () => {
    const t = new Tensor([1, 2.5, -3]);
    assert.ok(t.data instanceof Float32Array);
    assert.deepEqual(t.shape, [3]);
    assert.equal(t.get(1), 2.5);
  });

  it('infers the shape of nested arrays and toArray() round-trips', () => {
    const nested = [
      [
        [1, 2],
        [3, 4],
        [5, 6],
      ],
    ];
    const t = new Tensor(nested);
    assert.deepEqual(t.shape, [1, 3, 2]);
    assert.deepEqual(t.toArray(), nested);
  });

  it('makes boolean mask tensors from Uint8Array and boolean[]', () => {
    const m = new Tensor(new Uint8Array([1, 0, 0, 1]), [2, 2]);
    assert.equal(m.dtype, 'bool');
    assert.equal(m.get(0, 0), true);
    assert.equal(m.get(0, 1), false);
    const b = new Tensor([
      [true, false],
      [false, true],
    ]);
    assert.equal(b.dtype, 'bool');
    assert.ok(b.data instanceof Uint8Array);
    assert.deepEqual(Array.from(b.data), [1, 0, 0, 1]);
    assert.deepEqual(b.toArray(), [
      [true, false],
      [false, true],
    ]);
  });

  it('rejects a shape that does not match the data, bad shapes, ragged arrays and bad indices', () => {
    const code = (c) => (e) => e instanceof AttentionError && e.code === c;
    assert.throws(() => new Tensor([1, 2, 3, 4], [1, 1, 1, 5]), code('SHAPE_MISMATCH'));
    assert.throws(() => new Tensor([1, 2], [2, -1]), code('SHAPE_MISMATCH'));
    assert.throws(() => new Tensor([1, 2], [1.5, 2]), code('SHAPE_MISMATCH'));
    assert.throws(() => new Tensor([[1, 2], [3]]), code('SHAPE_MISMATCH'));
    assert.throws(() => new Tensor('abc', [3]), code('INVALID_ARGUMENT'));
    const t = new Tensor([1, 2, 3, 4], [2, 2]);
    assert.throws(() => t.get(0), code('SHAPE_MISMATCH'));
    assert.throws(() => t.get(2, 0), code('INVALID_ARGUMENT'));
  });
});
