// MultiHeadAttention.backward against the PyTorch autograd fixtures (tests/golden/fixtures/mha_bwd_*.txt).

import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { init, Tensor, MultiHeadAttention, memoryStats } from '../../src/js/index.js';
import { loadFixture, listFixtures } from './fixture.js';
import { assertClose, isClose } from './close.js';
import { kFixtureTol, kStructuralZeroTol } from './mha-backward-check.mjs';

await init();
after(() => assert.equal(memoryStats().liveHandles, 0, 'every module disposed'));

// ---- PyTorch fixtures ---------------------------------------------------------------------------

const floatTensor = (t) => new Tensor(t.data, t.shape);
const boolTensor = (t) =>
  new Tensor(
    Uint8Array.from(t.data, (v) => (v !== 0 ? 1 : 0)),
    t.shape,
  );
const optional = (f, name, convert) => (f.has(name) ? convert(f.get(name)) : undefined);

function moduleFromFixture(f) {
  const flag = (name) => f.scalar(name) === 1;
  const mha = new MultiHeadAttention({
    embedDim: f.scalar('embed_dim'),
    numHeads: f.scalar('num_heads'),
    kdim: f.scalar('kdim'),
    vdim: f.scalar('vdim'),
    headDim: f.scalar('head_dim'),
    valueHeadDim: f.scalar('value_head_dim'),
    bias: flag('bias'),
    addBiasKV: flag('add_bias_kv'),
    addZeroAttn: flag('add_zero_attn'),
    residual: flag('residual'),
    layerNorm: flag('layer_norm') ? { eps: f.scalar('layer_norm_eps') } : false,
  });
  const names = Object.keys(mha.stateDict());
  return mha.loadStateDict(Object.fromEntries(names.map((name) => [name, floatTensor(f.get(name))])));
}

function runGradFixture(f) {
  const mha = moduleFromFixture(f);
  try {
    const query = floatTensor(f.get('query'));
    const r = mha.forward(
      query,
      optional(f, 'key', floatTensor) ?? null,
      optional(f, 'value', floatTensor) ?? null,
      {
        mask: optional(f, 'mask', boolTensor),
        additiveMask: optional(f, 'additive_mask', floatTensor),
        keyPaddingMask: optional(f, 'key_padding_mask', boolTensor),
        positional: optional(f, 'positional', floatTensor),
        causal: f.scalar('causal') === 1,
        needWeights: false,
        requiresGrad: true,
      },
    );
    const near = (actual, name) => assertClose(actual, f.get(name).data, kFixtureTol, `${f.name} ${name}`);
    near(r.output.data, 'output');
    const { inputs, params } = mha.backward(floatTensor(f.get('grad_output')));
    const present = ['query', 'key', 'value'].filter((name) => f.has(name));
    assert.deepEqual(Object.keys(inputs), present, 'input gradients: those passed');
    for (const name of present) near(inputs[name].data, `grad_${name}`);
    for (const [name, grad] of Object.entries(params)) {
      assert.deepEqual(grad.shape, f.get(name).shape, `grad ${name} shape`);
      if (name !== 'in_proj_bias' || f.scalar('add_bias_kv') || f.scalar('add_zero_attn')) {
        near(grad.data, `grad.${name}`);
        continue;
      }
      // Adding one vector to every real key shifts a score row by a constant, which softmax ignores:
      // with no extra keys the key third's gradient is 0; compare it with an absolute bound only.
      const qk = mha.numHeads * mha.headDim;
      const want = f.get('grad.in_proj_bias').data;
      for (const [lo, hi] of [
        [0, qk],
        [2 * qk, want.length],
      ]) {
        assertClose(grad.data.subarray(lo, hi), want.subarray(lo, hi), kFixtureTol, `${f.name} in_proj_bias`);
      }
      for (let i = qk; i < 2 * qk; i++) {
        assert.ok(
          isClose(grad.data[i], 0, kStructuralZeroTol) && isClose(want[i], 0, kStructuralZeroTol),
          `key bias ${i}: ${grad.data[i]}`,
        );
      }
    }
    if (f.has('grad_positional')) checkPositionalGradient(f, inputs.query);
  } finally {
    mha.dispose();
  }
}

// The positional table has no gradient in the API (it is an option, not a parameter); since
// x = query + positional[:Tq], its gradient is Σ_b of the query's: check that against PyTorch's.
function checkPositionalGradient(f, gradQuery) {
  const [b, tq, e] = gradQuery.shape;
  const want = f.get('grad_positional').data;
  const sum = new Float64Array(want.length); // rows ≥ Tq stay 0, as PyTorch's
  for (let i = 0; i < b * tq * e; i++) sum[i % (tq * e)] += gradQuery.data[i];
  assertClose(sum, want, kFixtureTol, `${f.name} grad_positional`);
}

describe('MultiHeadAttention.backward vs PyTorch autograd (mha_bwd_* fixtures)', () => {
  const names = listFixtures('index_grad.txt').filter((n) => n.startsWith('mha_bwd_'));
  it('the gradient index lists the MHA fixtures', () => assert.ok(names.length >= 15, `${names.length}`));
  for (const name of names) it(name, () => runGradFixture(loadFixture(name)));
});
