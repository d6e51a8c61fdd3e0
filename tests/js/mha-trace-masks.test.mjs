// MultiHeadAttention: trace steps, masks and key padding against the float64 reference in
// attention-reference.mjs, positional input, dropout, results after memory growth, dispose.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  init,
  Tensor,
  AttentionError,
  MultiHeadAttention,
  sinusoidalEncoding,
  memoryStats,
} from '../../src/js/index.js';
import { assertClose } from './close.js';
import { kRefTol, kSamePathTol, rand, mhaRef } from './attention-reference.mjs';

// Top-level await: describe() bodies below build inputs with seededNormal at collection time.
await init();

describe('MultiHeadAttention: trace, masks, dropout, lifetime', () => {
  it('trace: ordered steps with shapes, from input to output', () => {
    const m = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 11 });
    const q = rand([2, 3, 8], 110);
    const kv = rand([2, 4, 8], 111);
    const r = m.forward(q, kv, null, { trace: true, averageWeights: false });
    const shapes = r.trace.map((s) => [s.name, s.shape]);
    assert.deepEqual(shapes, [
      ['input', [2, 3, 8]],
      ['q', [2, 2, 3, 4]],
      ['k', [2, 2, 4, 4]],
      ['v', [2, 2, 4, 4]],
      ['scores', [2, 2, 3, 4]],
      ['scaled', [2, 2, 3, 4]],
      ['masked', [2, 2, 3, 4]],
      ['weights', [2, 2, 3, 4]],
      ['context', [2, 2, 3, 4]],
      ['concat', [2, 3, 8]],
      ['output', [2, 3, 8]],
    ]);
    const get = (name) => r.trace.find((s) => s.name === name).data;
    assert.deepEqual(Array.from(get('input')), Array.from(q.data));
    assert.deepEqual(Array.from(get('weights')), Array.from(r.weights.data));
    assert.deepEqual(Array.from(get('output')), Array.from(r.output.data));
    assert.deepEqual(r.trace[1].axes, ['B', 'H', 'T_q', 'd_k']);
    m.dispose();
  });

  it('trace with positional: input, positional, x = input + positional, then residual and normalized', () => {
    const m = new MultiHeadAttention({
      embedDim: 8,
      numHeads: 2,
      residual: true,
      layerNorm: { eps: 1e-6 },
      seed: 12,
    });
    assert.equal(m.config.layerNormEps, 1e-6);
    const q = rand([2, 3, 8], 120);
    const pe = sinusoidalEncoding(6, 8); // longer than Tq: the first Tq rows are used
    const r = m.forward(q, null, null, { trace: true, positional: pe, dropout: { p: 0.2, seed: 3 } });
    assert.deepEqual(
      r.trace.map((s) => s.name),
      [
        'input',
        'positional',
        'x',
        'q',
        'k',
        'v',
        'scores',
        'scaled',
        'masked',
        'weights',
        'dropped',
        'context',
        'concat',
        'output',
        'residual',
        'normalized',
      ],
    );
    const step = (name) => r.trace.find((s) => s.name === name);
    assert.deepEqual(step('positional').shape, [3, 8]);
    assert.deepEqual(step('x').shape, [2, 3, 8]);
    const expectedX = Array.from(q.data, (v, i) => v + pe.data[i % 24]);
    assertClose(step('x').data, expectedX, kRefTol, 'x = input + positional');
    assertClose(
      step('residual').data,
      Array.from(step('output').data, (v, i) => v + step('x').data[i]),
      kRefTol,
      'residual = output + x',
    );
    assert.deepEqual(
      Array.from(step('normalized').data),
      Array.from(r.output.data),
      'the result is the last step',
    );
    m.dispose();
  });

  it('masks and key padding (true = may attend / real token) match the reference', () => {
    const m = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 13 });
    const sd = m.stateDict();
    const q = rand([2, 3, 8], 130);
    const kv = rand([2, 5, 8], 131);
    const pad = [
      [1, 1, 1, 0, 0],
      [1, 1, 1, 1, 1],
    ];
    const r = m.forward(q, kv, null, {
      keyPaddingMask: new Tensor(Uint8Array.from(pad.flat()), [2, 5]),
      averageWeights: false,
    });
    // Reference: drop the padded keys of batch 0 (same result as masking them).
    const b0 = mhaRef(
      sd,
      2,
      new Tensor(q.data.slice(0, 24), [1, 3, 8]),
      new Tensor(kv.data.slice(0, 24), [1, 3, 8]),
    );
    assertClose(r.output.data.subarray(0, 24), b0.output, kRefTol, 'padded batch 0');
    for (let h = 0; h < 2; h++)
      for (let i = 0; i < 3; i++) {
        assert.deepEqual(
          Array.from(r.weights.data.subarray((h * 3 + i) * 5 + 3, (h * 3 + i) * 5 + 5)),
          [0, 0],
          'padded keys get 0',
        );
      }
    const causal = m.forward(q, null, null, { causal: true });
    for (let i = 0; i < 3; i++) for (let j = i + 1; j < 3; j++) assert.equal(causal.weights.get(0, i, j), 0);
    m.dispose();
  });

  it('causal never masks the bias_k / zero-attention keys (same as an explicit lower-triangular mask)', () => {
    const m = new MultiHeadAttention({
      embedDim: 8,
      numHeads: 2,
      addBiasKV: true,
      addZeroAttn: true,
      seed: 15,
    });
    const x = rand([2, 4, 8], 150);
    const causal = m.forward(x, null, null, { causal: true });
    const tril = new Tensor(
      Uint8Array.from({ length: 16 }, (_, i) => (i % 4 <= Math.floor(i / 4) ? 1 : 0)),
      [4, 4],
    );
    const explicit = m.forward(x, null, null, { mask: tril });
    assert.deepEqual(causal.weights.shape, [2, 4, 6], 'Tk + bias_k + zero key');
    assertClose(
      causal.output.data,
      explicit.output.data,
      kSamePathTol,
      'causal = tril mask over the real keys',
    );
    // Query 0: key 0 and the two extra keys (columns 4, 5) attended; keys 1..3 masked.
    assert.deepEqual(Array.from(causal.weights.data.subarray(1, 4)), [0, 0, 0]);
    assert.ok(causal.weights.data[4] > 0 && causal.weights.data[5] > 0, 'extra keys stay visible');
    m.dispose();
  });

  it('a fully padded batch gives zero weights and an output of out_proj.bias (never NaN)', () => {
    const m = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 16 });
    const bias = Float32Array.from({ length: 8 }, (_, i) => i / 8 - 0.5);
    m.loadStateDict({ 'out_proj.bias': new Tensor(bias, [8]) });
    const x = rand([2, 4, 8], 160);
    const padding = new Tensor(Uint8Array.from([0, 0, 0, 0, 1, 1, 1, 1]), [2, 4]);
    const r = m.forward(x, null, null, { keyPaddingMask: padding });
    assert.ok(r.output.data.every(Number.isFinite));
    assert.deepEqual(Array.from(r.weights.data.subarray(0, 16)), new Array(16).fill(0));
    for (let i = 0; i < 4; i++)
      assert.deepEqual(Array.from(r.output.data.subarray(i * 8, i * 8 + 8)), Array.from(bias), `row ${i}`);
    m.dispose();
  });

  it('positional is added to the query, and to key/value only in self-attention', () => {
    const m = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 17 });
    const x = rand([2, 4, 8], 170);
    const kv = rand([2, 5, 8], 171);
    const pe = sinusoidalEncoding(4, 8);
    const shifted = new Tensor(
      x.data.map((v, i) => v + pe.data[i % 32]),
      [2, 4, 8],
    );
    assertClose(
      m.forward(x, null, null, { positional: pe }).output.data,
      m.forward(shifted).output.data,
      kSamePathTol,
      'self',
    );
    assertClose(
      m.forward(x, kv, null, { positional: pe }).output.data,
      m.forward(shifted, kv).output.data,
      kSamePathTol,
      'cross',
    );
    m.dispose();
  });

  it('MHA weights are the softmax before dropout; dropout is deterministic per seed', () => {
    const m = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 18 });
    const x = rand([2, 4, 8], 180);
    const plain = m.forward(x);
    const a = m.forward(x, null, null, { dropout: { p: 0.5, seed: 1 } });
    const b = m.forward(x, null, null, { dropout: { p: 0.5, seed: 1 } });
    assert.deepEqual(Array.from(a.weights.data), Array.from(plain.weights.data));
    assert.deepEqual(Array.from(a.output.data), Array.from(b.output.data));
    assert.notDeepEqual(Array.from(a.output.data), Array.from(plain.output.data));
    m.dispose();
  });

  it('results stay valid after later calls and wasm memory growth', () => {
    const m = new MultiHeadAttention({ embedDim: 4, numHeads: 1, seed: 14 });
    const x = rand([2, 3, 4], 140);
    const first = m.forward(x, null, null, { trace: true });
    const saved = {
      output: Array.from(first.output.data),
      weights: Array.from(first.weights.data),
      trace: first.trace.map((s) => Array.from(s.data)),
    };
    // Big enough that its (T, T) weights alone need more than the current heap: it must grow.
    const heapBefore = memoryStats().heapBytes;
    const T = Math.ceil(Math.sqrt((1.5 * heapBefore) / 4));
    const big = m.forward(rand([1, T, 4], 141));
    assert.ok(memoryStats().heapBytes > heapBefore, 'the heap grew');
    assert.deepEqual(big.weights.shape, [1, T, T]);
    for (let i = 0; i < 20; i++) m.forward(rand([2, 3, 4], 142 + i));
    assert.deepEqual(Array.from(first.output.data), saved.output);
    assert.deepEqual(Array.from(first.weights.data), saved.weights);
    first.trace.forEach((s, i) => assert.deepEqual(Array.from(s.data), saved.trace[i], s.name));
    assert.equal(first.output.data.byteLength, 2 * 3 * 4 * 4, 'an own buffer, not a view of the heap');
    m.dispose();
  });

  it('dispose frees the handle once; later calls throw DISPOSED', () => {
    const start = memoryStats().liveHandles;
    const m = new MultiHeadAttention({ embedDim: 4 });
    assert.equal(memoryStats().liveHandles, start + 1);
    m.dispose();
    m.dispose();
    assert.equal(memoryStats().liveHandles, start);
    for (const call of [() => m.forward([[1, 2, 3, 4]]), () => m.stateDict(), () => m.loadStateDict({})]) {
      assert.throws(call, (e) => e instanceof AttentionError && e.code === 'DISPOSED');
    }
  });
});
