// Tensor dtypes: int32 tensors (from Int32Array, or converted with { dtype: 'int32' } and checked),
// the internal asIntTensor helper, and the float APIs refusing int32 tensors instead of casting.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  init,
  Tensor,
  AttentionError,
  softmax,
  layerNorm,
  scaledDotProductAttention,
  MultiHeadAttention,
  seededNormal,
} from '../../src/js/index.js';
import { asIntTensor } from '../../src/js/tensor.js';

await init();

const rejects = (fn, code, message) =>
  assert.throws(fn, (error) => {
    assert.ok(error instanceof AttentionError, String(error));
    assert.equal(error.code, code, error.message);
    assert.match(error.message, message);
    return true;
  });

describe('int32 tensors', () => {
  it('an Int32Array makes an int32 tensor, wrapped without copying', () => {
    const data = new Int32Array([1, -2, 3, 2147483647, -2147483648, 0]);
    const t = new Tensor(data, [2, 3]);
    assert.equal(t.dtype, 'int32');
    assert.equal(t.data, data);
    assert.equal(t.get(1, 0), 2147483647);
    assert.deepEqual(t.toArray(), [
      [1, -2, 3],
      [2147483647, -2147483648, 0],
    ]);
    assert.equal(new Tensor(new Int32Array(4)).shape[0], 4);
  });

  it('float32 stays the default for numbers and other typed arrays', () => {
    assert.equal(new Tensor([1, 2, 3]).dtype, 'float32');
    assert.equal(
      new Tensor([
        [1, 2],
        [3, 4],
      ]).dtype,
      'float32',
    );
    assert.equal(new Tensor(new Float64Array([1, 2])).dtype, 'float32');
    assert.equal(new Tensor(new Int16Array([1, 2])).dtype, 'float32');
    assert.equal(new Tensor(new Float32Array(2)).dtype, 'float32');
    assert.equal(new Tensor([true, false]).dtype, 'bool');
  });

  it('{ dtype: "int32" } converts nested arrays and other typed arrays', () => {
    const nested = new Tensor(
      [
        [1, 2, 3],
        [4, 5, 6],
      ],
      undefined,
      { dtype: 'int32' },
    );
    assert.equal(nested.dtype, 'int32');
    assert.ok(nested.data instanceof Int32Array);
    assert.deepEqual(nested.shape, [2, 3]);
    assert.deepEqual(Array.from(nested.data), [1, 2, 3, 4, 5, 6]);
    assert.deepEqual(
      Array.from(new Tensor(new Float32Array([7, -8]), [2], { dtype: 'int32' }).data),
      [7, -8],
    );
    assert.deepEqual(
      Array.from(new Tensor(new Uint16Array([65535]), null, { dtype: 'int32' }).data),
      [65535],
    );
    assert.deepEqual(Array.from(new Tensor(new BigInt64Array([5n]), null, { dtype: 'int32' }).data), [5]);
    // and the other way: an Int32Array as float32
    const f = new Tensor(new Int32Array([1, 2]), [2], { dtype: 'float32' });
    assert.equal(f.dtype, 'float32');
    assert.ok(f.data instanceof Float32Array);
  });

  it('non-integers and values outside int32 are INVALID_ARGUMENT (never rounded or wrapped)', () => {
    const int = (data) => () => new Tensor(data, undefined, { dtype: 'int32' });
    rejects(int([1, 2.5]), 'INVALID_ARGUMENT', /value 1 must be an integer in \[-2\^31, 2\^31\), got 2.5/);
    rejects(int([[1], [NaN]]), 'INVALID_ARGUMENT', /value 1 .* got NaN/);
    rejects(int([Infinity]), 'INVALID_ARGUMENT', /got Infinity/);
    rejects(int([2 ** 31]), 'INVALID_ARGUMENT', /got 2147483648/);
    rejects(int([-(2 ** 31) - 1]), 'INVALID_ARGUMENT', /got -2147483649/);
    rejects(int(['3']), 'INVALID_ARGUMENT', /got "3"/);
    rejects(int([true]), 'INVALID_ARGUMENT', /got true/);
    rejects(int(new Float32Array([0.5])), 'INVALID_ARGUMENT', /got 0.5/);
    rejects(
      () => new Tensor([1], [1], { dtype: 'int64' }),
      'INVALID_ARGUMENT',
      /dtype must be one of float32, int32, bool; got "int64"/,
    );
    rejects(
      () => new Tensor([1], [1], { type: 'int32' }),
      'INVALID_ARGUMENT',
      /unknown Tensor option 'type'/,
    );
    rejects(
      () => new Tensor(new Int32Array(3), [2, 2]),
      'SHAPE_MISMATCH',
      /3 values but shape \[2,2\] needs 4/,
    );
  });

  it('float APIs refuse an int32 tensor with INVALID_ARGUMENT naming the argument', () => {
    const ids = new Tensor(new Int32Array(24), [2, 3, 4]);
    const x = seededNormal([2, 3, 4], 1);
    rejects(() => softmax(ids), 'INVALID_ARGUMENT', /^x must be a float32 tensor, got an int32 tensor/);
    rejects(() => layerNorm(ids), 'INVALID_ARGUMENT', /^x must be a float32 tensor/);
    rejects(
      () => layerNorm(x, { weight: new Tensor(new Int32Array(4)) }),
      'INVALID_ARGUMENT',
      /^weight must be a float32/,
    );
    rejects(
      () => scaledDotProductAttention(x, ids, x),
      'INVALID_ARGUMENT',
      /^k must be a float32 tensor, got an int32/,
    );
    rejects(
      () => scaledDotProductAttention(x, x, x, { additiveMask: { data: new Int32Array(9), shape: [3, 3] } }),
      'INVALID_ARGUMENT',
      /^additiveMask must be a float32/,
    );
    rejects(
      () => scaledDotProductAttention(x, x, x, { mask: new Tensor(new Int32Array(9), [3, 3]) }),
      'INVALID_MASK',
      /mask must be a boolean tensor .*got int32/,
    );
    const mha = new MultiHeadAttention({ embedDim: 4 });
    try {
      rejects(() => mha.forward(ids), 'INVALID_ARGUMENT', /^query must be a float32 tensor, got an int32/);
      rejects(
        () => mha.loadStateDict({ 'out_proj.bias': new Int32Array(4) }),
        'INVALID_ARGUMENT',
        /Tensor, \{ data, shape \}/,
      );
      rejects(
        () => mha.loadStateDict({ 'out_proj.bias': new Tensor(new Int32Array(4)) }),
        'INVALID_ARGUMENT',
        /^out_proj.bias must be a float32/,
      );
    } finally {
      mha.dispose();
    }
    // Integers as plain numbers are still float32 data.
    assert.equal(softmax([[1, 2, 3]]).dtype, 'float32');
  });
});

describe('asIntTensor (internal, for token ids)', () => {
  it('accepts an int32 Tensor as is, nested integer arrays, and { data: Int32Array | number[], shape }', () => {
    const t = new Tensor(new Int32Array([3, 1, 4]), [3]);
    assert.equal(asIntTensor(t, 'ids'), t);
    const nested = asIntTensor(
      [
        [1, 2],
        [3, 4],
      ],
      'ids',
    );
    assert.equal(nested.dtype, 'int32');
    assert.deepEqual(nested.shape, [2, 2]);
    const flat = asIntTensor([5, 6, 7], 'ids');
    assert.deepEqual([flat.dtype, ...flat.data], ['int32', 5, 6, 7]);
    const data = new Int32Array([9, 8]);
    const object = asIntTensor({ data, shape: [1, 2] }, 'ids');
    assert.equal(object.data, data);
    assert.deepEqual(Array.from(asIntTensor({ data: [1, 2], shape: [2] }, 'ids').data), [1, 2]);
  });

  it('rejects float32 and boolean tensors (not a cast) and non-integers, naming the argument', () => {
    rejects(
      () => asIntTensor(new Tensor([1, 2]), 'tokens'),
      'INVALID_ARGUMENT',
      /^tokens must be an int32 tensor .*got a float32 tensor/,
    );
    rejects(
      () => asIntTensor({ data: new Float32Array([1, 2]), shape: [2] }, 'tokens'),
      'INVALID_ARGUMENT',
      /^tokens must be an int32 tensor/,
    );
    rejects(
      () => asIntTensor(new Tensor(new Uint8Array(2)), 'tokens'),
      'INVALID_ARGUMENT',
      /got a boolean tensor/,
    );
    rejects(() => asIntTensor([[1, 2.5]], 'tokens'), 'INVALID_ARGUMENT', /must be an integer/);
    rejects(() => asIntTensor([true, false], 'tokens'), 'INVALID_ARGUMENT', /must be an integer/);
    rejects(() => asIntTensor(5, 'tokens'), 'INVALID_ARGUMENT', /^tokens must be a Tensor/);
  });
});
