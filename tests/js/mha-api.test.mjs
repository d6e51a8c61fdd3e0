// MultiHeadAttention: config, stateDict (PyTorch names and layouts), forward against the float64 reference in
// attention-reference.mjs, packed and split weights, unbatched input, averaged weights.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { init, Tensor, MultiHeadAttention } from '../../src/js/index.js';
import { assertClose } from './close.js';
import { kRefTol, kTiledTol, kAvgTol, kSamePathTol, rand, mhaRef } from './attention-reference.mjs';

// Top-level await: describe() bodies below build inputs with seededNormal at collection time.
await init();

// ---- MultiHeadAttention ---------------------------------------------------------------------------

describe('MultiHeadAttention', () => {
  it('config defaults: numHeads 1, headDim = embedDim/numHeads, valueHeadDim = headDim', () => {
    const one = new MultiHeadAttention({ embedDim: 8 });
    assert.equal(one.numHeads, 1);
    assert.equal(one.headDim, 8);
    const m = new MultiHeadAttention({ embedDim: 12, numHeads: 3 });
    assert.equal(m.embedDim, 12);
    assert.equal(m.headDim, 4);
    assert.equal(m.valueHeadDim, 4);
    assert.equal(m.config.headDim, 4);
    assert.equal(m.config.bias, true);
    assert.equal(m.config.layerNorm, false);
    const explicit = new MultiHeadAttention({ embedDim: 8, numHeads: 3, headDim: 5 });
    assert.equal(explicit.headDim, 5);
    assert.equal(explicit.valueHeadDim, 5, 'valueHeadDim defaults to headDim');
    const both = new MultiHeadAttention({ embedDim: 8, numHeads: 2, headDim: 3, valueHeadDim: 5 });
    assert.deepEqual(both.stateDict()['out_proj.weight'].shape, [8, 10], 'out_proj takes H·d_v');
    assert.ok(Object.isFrozen(m.config));
    for (const x of [one, m, explicit, both]) x.dispose();
  });

  it('config resolves kdim and vdim to embedDim when omitted', () => {
    const m = new MultiHeadAttention({ embedDim: 8, numHeads: 2 });
    try {
      assert.equal(m.config.kdim, 8);
      assert.equal(m.config.vdim, 8);
    } finally {
      m.dispose();
    }
  });

  it('stateDict has PyTorch names and layouts', () => {
    const m = new MultiHeadAttention({ embedDim: 8, numHeads: 2 });
    const shapes = Object.fromEntries(Object.entries(m.stateDict()).map(([n, t]) => [n, t.shape]));
    assert.deepEqual(shapes, {
      in_proj_weight: [24, 8],
      in_proj_bias: [24],
      'out_proj.weight': [8, 8],
      'out_proj.bias': [8],
    });
    m.dispose();
    const kv = new MultiHeadAttention({
      embedDim: 8,
      numHeads: 2,
      kdim: 6,
      vdim: 10,
      addBiasKV: true,
      layerNorm: true,
    });
    const kvShapes = Object.fromEntries(Object.entries(kv.stateDict()).map(([n, t]) => [n, t.shape]));
    assert.deepEqual(kvShapes, {
      q_proj_weight: [8, 8],
      k_proj_weight: [8, 6],
      v_proj_weight: [8, 10],
      in_proj_bias: [24],
      bias_k: [1, 1, 8],
      bias_v: [1, 1, 8],
      'out_proj.weight': [8, 8],
      'out_proj.bias': [8],
      'layer_norm.weight': [8],
      'layer_norm.bias': [8],
    });
    kv.dispose();
    const noBias = new MultiHeadAttention({ embedDim: 8, numHeads: 2, bias: false });
    assert.deepEqual(Object.keys(noBias.stateDict()).sort(), ['in_proj_weight', 'out_proj.weight']);
    noBias.dispose();
  });

  it('forward matches a float64 reference computed from its stateDict (self and cross)', () => {
    const m = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 5 });
    const sd = m.stateDict();
    const x = rand([2, 5, 8], 61);
    const mem = rand([2, 7, 8], 62);
    const self = m.forward(x, null, null, { averageWeights: false });
    const selfRef = mhaRef(sd, 2, x, x);
    assertClose(self.output.data, selfRef.output, kRefTol, 'self output');
    assertClose(self.weights.data, selfRef.weights, kRefTol, 'self weights');
    const explicit = m.forward(x, x, x, { averageWeights: false });
    assertClose(explicit.output.data, self.output.data, kSamePathTol, 'forward(x) = forward(x, x, x)');
    const cross = m.forward(x, mem, mem, { averageWeights: false });
    assert.deepEqual(cross.output.shape, [2, 5, 8]);
    assert.deepEqual(cross.weights.shape, [2, 2, 5, 7]);
    assertClose(cross.output.data, mhaRef(sd, 2, x, mem).output, kRefTol, 'cross output');
    const valueDefaultsToKey = m.forward(x, mem);
    assertClose(valueDefaultsToKey.output.data, cross.output.data, kSamePathTol, 'value defaults to key');
    m.dispose();
  });

  it('stateDict / loadStateDict round trip reproduces another module; stateDict returns copies', () => {
    const a = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 1 });
    const b = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 2 });
    const x = rand([2, 4, 8], 70);
    assert.notDeepEqual(
      Array.from(a.forward(x).output.data),
      Array.from(b.forward(x).output.data),
      'seeds differ',
    );
    const sd = a.stateDict();
    assert.equal(b.loadStateDict(sd), b, 'loadStateDict returns this');
    assert.deepEqual(Array.from(b.forward(x).output.data), Array.from(a.forward(x).output.data));
    for (const [name, t] of Object.entries(b.stateDict())) {
      assert.deepEqual(Array.from(t.data), Array.from(sd[name].data), name);
    }
    sd.in_proj_weight.data.fill(0);
    assert.notEqual(a.stateDict().in_proj_weight.data[0], 0, 'stateDict() is a copy');
    // Values may also be nested arrays or { data, shape }.
    b.loadStateDict({ 'out_proj.bias': { data: new Array(8).fill(0.5), shape: [8] } });
    assert.deepEqual(Array.from(b.stateDict()['out_proj.bias'].data), new Array(8).fill(0.5));
    a.dispose();
    b.dispose();
  });

  it('packed in_proj_weight and the three q/k/v_proj_weight give the same output', () => {
    const packed = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 7 });
    const split = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 8 });
    const sd = packed.stateDict();
    const W = sd.in_proj_weight.data; // (3E, E): rows of W_q, then W_k, then W_v
    const block = (i) => new Tensor(W.slice(i * 64, (i + 1) * 64), [8, 8]);
    split.loadStateDict({
      q_proj_weight: block(0),
      k_proj_weight: block(1),
      v_proj_weight: block(2),
      in_proj_bias: sd.in_proj_bias,
      'out_proj.weight': sd['out_proj.weight'],
      'out_proj.bias': sd['out_proj.bias'],
    });
    const x = rand([2, 5, 8], 80);
    const mem = rand([2, 3, 8], 81);
    assertClose(split.forward(x).output.data, packed.forward(x).output.data, kSamePathTol, 'self');
    assertClose(split.forward(x, mem).output.data, packed.forward(x, mem).output.data, kSamePathTol, 'cross');
    packed.dispose();
    split.dispose();
  });

  it('unbatched (T, E) input gives (T, E) output equal to the batch of one', () => {
    const m = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 9 });
    const x2 = rand([5, 8], 90);
    const x3 = new Tensor(x2.data, [1, 5, 8]);
    const r2 = m.forward(x2, null, null, { averageWeights: false });
    const r3 = m.forward(x3, null, null, { averageWeights: false });
    assert.deepEqual(r2.output.shape, [5, 8]);
    assert.deepEqual(r2.weights.shape, [2, 5, 5]);
    assert.deepEqual(Array.from(r2.output.data), Array.from(r3.output.data));
    assert.deepEqual(m.forward(x2).weights.shape, [5, 5]);
    m.dispose();
  });

  it('averageWeights defaults to true: (B, Tq, Tk) = mean over heads of (B, H, Tq, Tk)', () => {
    const m = new MultiHeadAttention({ embedDim: 12, numHeads: 4, seed: 10 });
    const q = rand([2, 3, 12], 100);
    const kv = rand([2, 5, 12], 101);
    const avg = m.forward(q, kv);
    const perHead = m.forward(q, kv, null, { averageWeights: false });
    assert.deepEqual(avg.weights.shape, [2, 3, 5]);
    assert.deepEqual(perHead.weights.shape, [2, 4, 3, 5]);
    const mean = new Float64Array(30);
    for (let b = 0; b < 2; b++)
      for (let h = 0; h < 4; h++)
        for (let i = 0; i < 15; i++) {
          mean[b * 15 + i] += perHead.weights.data[(b * 4 + h) * 15 + i] / 4;
        }
    assertClose(avg.weights.data, mean, kAvgTol, 'average of heads');
    assert.deepEqual(Array.from(avg.output.data), Array.from(perHead.output.data));
    const none = m.forward(q, kv, null, { needWeights: false });
    assert.equal(none.weights, undefined);
    assertClose(none.output.data, avg.output.data, kTiledTol, 'needWeights false output');
    m.dispose();
  });
});
