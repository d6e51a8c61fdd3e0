// MultiHeadAttention.backward: the contract's error cases (heap and handles unchanged after each), the
// saved-state rules, and no growth over many calls.

import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  init,
  Tensor,
  AttentionError,
  seededNormal,
  memoryStats,
  setMemoryLimit,
} from '../../src/js/index.js';
import { randomModule, E6, bools } from './mha-backward-check.mjs';

const kLeakCalls = 1000;

const core = await init();
after(() => assert.equal(memoryStats().liveHandles, 0, 'every module disposed'));

// ---- the contract's errors, state rules and memory ----------------------------------------------

/** Everything a throw must leave as it was. */
function snapshot() {
  const { heapUsedBytes, liveHandles } = memoryStats();
  return { heapUsedBytes, liveHandles, emvalHandles: core.count_emval_handles() };
}

function expectError(fn, code, message) {
  const before = snapshot();
  assert.throws(fn, (e) => e instanceof AttentionError && e.code === code && message.test(e.message));
  assert.deepEqual(snapshot(), before, `heap and handles after ${code} ${message}`);
}

describe('MultiHeadAttention.backward: errors and the saved state', () => {
  const x = seededNormal([2, 3, 6], 201);
  const g = seededNormal([2, 3, 6], 202);
  const noForward = /needs a forward with requiresGrad: true first/;

  it('INVALID_ARGUMENT without a requiresGrad forward: none yet, a later one without it, a failed one', () => {
    const mha = randomModule(E6, 203);
    expectError(() => mha.backward(g), 'INVALID_ARGUMENT', noForward);
    // A requiresGrad forward that fails keeps nothing either.
    expectError(
      () => mha.forward(seededNormal([2, 3, 5], 1), null, null, { requiresGrad: true }),
      'SHAPE_MISMATCH',
      /query/,
    );
    setMemoryLimit(1024); // the inputs fit, the buffers do not
    try {
      expectError(
        () => mha.forward(x, null, null, { requiresGrad: true }),
        'TOO_LARGE',
        /multi-head attention/,
      );
    } finally {
      setMemoryLimit(2 ** 30);
    }
    expectError(() => mha.backward(g), 'INVALID_ARGUMENT', noForward);
    const keyPaddingMask = new Tensor(
      bools(6, () => false),
      [2, 3],
    );
    // A later forward without requiresGrad, on the lean path and on the general one; a forward that
    // fails in the core or in the wrapper's checks: each clears the saved state.
    for (const later of [
      () => mha.forward(x),
      () => mha.forward(x, null, null, { keyPaddingMask }),
      () => assert.throws(() => mha.forward(seededNormal([2, 3, 5], 1)), /query must have shape/),
      () =>
        assert.throws(
          () => mha.forward(x, null, null, { requires_grad: true }),
          /did you mean 'requiresGrad'/,
        ),
    ]) {
      mha.forward(x, null, null, { requiresGrad: true });
      mha.backward(g);
      later();
      expectError(() => mha.backward(g), 'INVALID_ARGUMENT', noForward);
    }
    mha.dispose();
  });

  it('setting a parameter after the forward makes backward INVALID_ARGUMENT; a refused one does not', () => {
    const mha = randomModule(E6, 204);
    mha.forward(x, null, null, { requiresGrad: true });
    const first = mha.backward(g);
    assert.throws(
      () => mha.loadStateDict({ 'out_proj.bias': [1, 2] }),
      (e) => e.code === 'SHAPE_MISMATCH',
    );
    assert.deepEqual(mha.backward(g).params['out_proj.weight'].data, first.params['out_proj.weight'].data);
    mha.loadStateDict({ 'out_proj.bias': mha.stateDict()['out_proj.bias'] }); // even the same values
    expectError(
      () => mha.backward(g),
      'INVALID_ARGUMENT',
      /a parameter was set \(loadStateDict\) after the forward/,
    );
    mha.forward(x, null, null, { requiresGrad: true });
    assert.deepEqual(
      mha.backward(g).inputs.query.data,
      first.inputs.query.data,
      'a new forward makes it usable again',
    );
    mha.dispose();
  });

  it('bad gradOutput: SHAPE_MISMATCH, NON_FINITE, INVALID_ARGUMENT; too large: TOO_LARGE; then it still works', () => {
    const mha = randomModule(E6, 205);
    mha.forward(x, null, null, { requiresGrad: true });
    const good = mha.backward(g);
    expectError(
      () => mha.backward(seededNormal([2, 3, 5], 1)),
      'SHAPE_MISMATCH',
      /gradOutput must have the output's shape \(2, 3, 6\), got \(2, 3, 5\)/,
    );
    expectError(() => mha.backward(seededNormal([3, 6], 1)), 'SHAPE_MISMATCH', /gradOutput/);
    const nan = seededNormal([2, 3, 6], 1);
    nan.data[7] = NaN;
    expectError(() => mha.backward(nan), 'NON_FINITE', /gradOutput/);
    expectError(
      () => mha.backward(new Tensor(new Int32Array(36), [2, 3, 6])),
      'INVALID_ARGUMENT',
      /gradOutput must be a float32 tensor/,
    );
    expectError(() => mha.backward('g'), 'INVALID_ARGUMENT', /gradOutput must be a Tensor/);
    setMemoryLimit(1024); // gradOutput fits; the gradients and scratch do not
    try {
      expectError(() => mha.backward(g), 'TOO_LARGE', /multi-head attention backward/);
    } finally {
      setMemoryLimit(2 ** 30);
    }
    const again = mha.backward(g); // the same saved state, called again
    for (const name of Object.keys(good.params))
      assert.deepEqual(again.params[name].data, good.params[name].data, name);
    assert.deepEqual(again.inputs.query.data, good.inputs.query.data);
    mha.dispose();
    expectError(() => mha.backward(g), 'DISPOSED', /disposed/);
  });

  it('a value passed without a key is ignored by the forward: its gradient is zeros', () => {
    const mha = randomModule(E6, 206);
    mha.forward(x, null, null, { requiresGrad: true });
    const selfGrads = mha.backward(g);
    mha.forward(x, null, seededNormal([2, 4, 6], 207), { requiresGrad: true });
    const { inputs } = mha.backward(g);
    assert.deepEqual(inputs.value.shape, [2, 4, 6]);
    assert.ok(inputs.value.data.every((v) => v === 0));
    assert.deepEqual(inputs.query.data, selfGrads.inputs.query.data);
    mha.dispose();
  });

  it('forward without requiresGrad still takes the lean path, and frees the saved state', () => {
    const mha = randomModule(E6, 208);
    let lean = 0;
    const forwardFast = mha._handle.forwardFast;
    mha._handle.forwardFast = function (...args) {
      lean++;
      return forwardFast.apply(this, args);
    };
    mha.forward(x); // sizes the lean path's buffers, which the handle keeps
    const idle = memoryStats().heapUsedBytes;
    mha.forward(x, null, null, { requiresGrad: true });
    assert.equal(lean, 1, 'requiresGrad takes the general path');
    assert.ok(memoryStats().heapUsedBytes > idle, 'the saved state takes memory');
    mha.forward(x);
    assert.equal(lean, 2, 'without requiresGrad: the lean path again');
    assert.equal(memoryStats().heapUsedBytes, idle, 'and the saved state is freed');
    mha.dispose();
  });

  it(`${kLeakCalls} forward(requiresGrad) + backward calls leave the heap, handles and emval count flat`, () => {
    const mha = randomModule({ ...E6, addBiasKV: true, residual: true, layerNorm: true }, 209);
    const kv = seededNormal([2, 5, 6], 210);
    const keyPaddingMask = new Tensor(
      bools(10, (i) => i === 4),
      [2, 5],
    );
    const run = (i) => {
      const options =
        i % 2
          ? { causal: true, dropout: { p: 0.1, seed: i } }
          : { keyPaddingMask, positional: seededNormal([3, 6], 1) };
      mha.forward(x, i % 2 ? null : kv, null, { ...options, requiresGrad: true });
      return mha.backward(g).inputs.query.data[0];
    };
    for (let i = 0; i < 50; i++) run(i);
    const before = snapshot();
    let checksum = 0;
    for (let i = 0; i < kLeakCalls; i++) checksum += run(i);
    assert.ok(Number.isFinite(checksum));
    assert.deepEqual(snapshot(), before);
    mha.dispose();
  });
});
