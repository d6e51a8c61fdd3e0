// TinyTransformer from JS: logits, loss, every gradient and 3 Trainer steps against the PyTorch fixtures
// (tests/golden/fixtures/tiny_*.txt, make_grad_fixtures.py), and forward options (attention and trace per
// layer, checked against a MultiHeadAttention holding the layer's weights).

import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { init, Tensor, TinyTransformer, Trainer, MultiHeadAttention } from '../../src/js/index.js';
import { listFixtures, loadFixture } from './fixture.js';
import { assertClose, isClose, allowed, FIXTURE_TOL } from './close.js';
import { small } from './tiny-transformer-setup.mjs';

// Elements whose first-step gradient is rounding noise around zero: AdamW turns noise into steps
// of up to lr, so after 3 steps they are held to 5·lr.
const kNoiseGrad = 1e-6;
const kNoiseSteps = 5;

await init();

// The fixtures' bound (tests/cpp/test_golden_grad.cpp): 1e-5 absolute + 1e-4 relative.
const assertFixtureClose = (actual, expected, what) => assertClose(actual, expected, FIXTURE_TOL, what);

const POSITIONAL = ['none', 'learned', 'sinusoidal'];
const NORM = ['none', 'pre', 'post'];

function fixtureModel(f) {
  const model = new TinyTransformer({
    vocabSize: f.scalar('vocab_size'),
    maxLength: f.scalar('max_length'),
    dModel: f.scalar('d_model'),
    numHeads: f.scalar('num_heads'),
    numLayers: f.scalar('num_layers'),
    mlp: f.scalar('mlp') === 1,
    mlpHidden: f.scalar('mlp_hidden'),
    positional: POSITIONAL[f.scalar('positional')],
    norm: NORM[f.scalar('norm')],
    causal: f.scalar('causal') === 1,
  });
  const sd = {};
  for (const name of Object.keys(model.stateDict())) sd[name] = f.get(`param.${name}`);
  model.loadStateDict(sd);
  return model;
}

const ints = (t) => ({ data: Int32Array.from(t.data), shape: t.shape });

describe('TinyTransformer against the PyTorch fixtures', () => {
  const names = listFixtures('index_grad.txt').filter((n) => n.startsWith('tiny_'));
  it('lists the 7 tiny_* fixtures', () => assert.equal(names.length, 7));

  for (const name of names) {
    it(`${name}: logits, loss, every gradient, 3 clipped AdamW steps`, () => {
      const f = loadFixture(name);
      const model = fixtureModel(f);
      const ids = ints(f.get('ids'));
      const targets = ints(f.get('targets'));
      assertFixtureClose(model.forward(ids).logits.data, f.get('logits').data, 'logits');
      assertFixtureClose([model.loss(ids, targets)], f.get('loss').data, 'loss');
      const { loss, grads } = model.gradients(ids, targets);
      assertFixtureClose([loss], f.get('loss').data, 'gradients loss');
      assert.deepEqual(Object.keys(grads), Object.keys(model.stateDict()));
      const noise = {};
      for (const [p, g] of Object.entries(grads)) {
        const want = f.get(`grad.${p}`).data;
        noise[p] = Array.from(want, (w) => Math.abs(w) < kNoiseGrad);
        const keep = (_, i) => !noise[p][i];
        assertFixtureClose(g.data.filter(keep), want.filter(keep), `grad.${p}`);
      }
      const lr = f.scalar('lr');
      const trainer = new Trainer(model, {
        lr,
        betas: [f.scalar('beta1'), f.scalar('beta2')],
        eps: f.scalar('eps'),
        weightDecay: f.scalar('weight_decay'),
        clipGradNorm: f.scalar('clip'),
      });
      for (let s = 0; s < 3; s++) {
        const r = trainer.step(ids, targets);
        assertFixtureClose([r.loss], [f.get('step_loss').data[s]], `step ${s + 1} loss`);
        assertFixtureClose([r.gradNorm], [f.get('step_grad_norm').data[s]], `step ${s + 1} grad norm`);
      }
      assert.equal(trainer.steps, 3);
      for (const [p, t] of Object.entries(model.stateDict())) {
        const want = f.get(`after.${p}`).data;
        for (let i = 0; i < want.length; i++) {
          const tol = noise[p][i] ? kNoiseSteps * lr : FIXTURE_TOL;
          if (!isClose(t.data[i], want[i], tol))
            assert.fail(`after.${p}[${i}] = ${t.data[i]}, want ${want[i]} (±${allowed(want[i], tol)})`);
        }
      }
      trainer.dispose();
      model.dispose();
    });
  }
});

describe('forward options', () => {
  const model = new TinyTransformer(small);
  after(() => model.dispose());
  const ids = [
    [1, 2, 3, 4],
    [5, 6, 7, 10],
  ];

  it('attention: true, false, a layer list; (B, H, T, T) rows summing to 1, causal', () => {
    const all = model.forward(ids).attention;
    assert.equal(all.length, 3);
    for (const w of all) {
      assert.deepEqual(w.shape, [2, 2, 4, 4]);
      for (let row = 0; row < 16; row++) {
        const r = w.data.subarray(4 * row, 4 * row + 4);
        assert.ok(Math.abs(r.reduce((a, b) => a + b, 0) - 1) < 1e-6);
        for (let j = (row % 4) + 1; j < 4; j++) assert.equal(r[j], 0, 'a query never sees a later key');
      }
    }
    assert.deepEqual(model.forward(ids, { attention: false }).attention, []);
    const some = model.forward(ids, { attention: [2, 0] }).attention;
    assert.equal(some[1], null);
    assert.deepEqual(some[0].data, all[0].data);
    assert.deepEqual(some[2].data, all[2].data);
    assert.deepEqual(model.forward(ids, { attention: [] }).attention, [null, null, null]);
    assert.equal(model.forward(ids).trace, undefined);
  });

  it("trace per layer: the steps MultiHeadAttention.forward traces with the layer's weights", () => {
    const { trace, attention, logits } = model.forward(ids, { trace: { layers: [1] } });
    assert.deepEqual(logits.data, model.forward(ids).logits.data, 'tracing does not change the logits');
    assert.equal(trace.length, 3);
    assert.equal(trace[0], null);
    assert.equal(trace[2], null);
    const steps = trace[1];
    const input = steps.find((s) => s.name === 'input');
    const sd = model.stateDict();
    const mha = new MultiHeadAttention({ embedDim: 8, numHeads: 2 });
    const prefix = 'blocks.1.attn.';
    mha.loadStateDict(
      Object.fromEntries(
        Object.entries(sd)
          .filter(([n]) => n.startsWith(prefix))
          .map(([n, t]) => [n.slice(prefix.length), t]),
      ),
    );
    const ref = mha.forward(new Tensor(input.data, input.shape), null, null, {
      causal: true,
      trace: true,
      averageWeights: false,
    });
    mha.dispose();
    assert.deepEqual(
      steps.map((s) => s.name),
      ref.trace.map((s) => s.name),
    );
    for (let k = 0; k < steps.length; k++) {
      assert.deepEqual(steps[k].axes, ref.trace[k].axes);
      assert.deepEqual(steps[k].shape, ref.trace[k].shape);
      assert.deepEqual(steps[k].data, ref.trace[k].data, `step ${steps[k].name}`);
    }
    assert.deepEqual(attention[1].data, ref.weights.data);
    assert.ok(model.forward(ids, { trace: true }).trace.every((t) => Array.isArray(t) && t.length > 0));
  });

  it('mask: applied in every layer on top of causal, as MultiHeadAttention with the same mask; all-true changes nothing', () => {
    const allow = [
      [1, 1, 1, 1],
      [1, 1, 1, 1],
      [0, 1, 1, 1],
      [1, 0, 1, 1],
    ]; // query 2 loses key 0, query 3 key 1
    const mask = allow.map((r) => r.map(Boolean));
    const { trace, attention, logits } = model.forward(ids, { mask, trace: true });
    assert.notDeepEqual(logits.data, model.forward(ids).logits.data, 'the mask changes the logits');
    assert.deepEqual(
      model.forward(ids, { mask: allow.map((r) => r.map(() => true)) }).logits.data,
      model.forward(ids).logits.data,
    );
    const sd = model.stateDict();
    for (let l = 0; l < 3; l++) {
      const w = attention[l].data;
      for (let bh = 0; bh < 4; bh++) {
        assert.equal(w[bh * 16 + 2 * 4 + 0], 0);
        assert.equal(w[bh * 16 + 3 * 4 + 1], 0);
      }
      // Each layer's attention equals MultiHeadAttention's on that layer's input with the same mask + causal.
      const input = trace[l].find((s) => s.name === 'input');
      const mha = new MultiHeadAttention({ embedDim: 8, numHeads: 2 });
      const prefix = `blocks.${l}.attn.`;
      mha.loadStateDict(
        Object.fromEntries(
          Object.entries(sd)
            .filter(([n]) => n.startsWith(prefix))
            .map(([n, t]) => [n.slice(prefix.length), t]),
        ),
      );
      const ref = mha.forward(new Tensor(input.data, input.shape), null, null, {
        causal: true,
        mask,
        averageWeights: false,
      });
      mha.dispose();
      assert.deepEqual(w, ref.weights.data, `layer ${l}`);
    }
  });

  it('ids of shape (T) are a batch of one: outputs keep B = 1', () => {
    const one = model.forward([5, 6, 7, 10], { trace: true });
    assert.deepEqual(one.logits.shape, [1, 4, 11]);
    assert.deepEqual(one.attention[0].shape, [1, 2, 4, 4]);
    const batched = model.forward(ids).logits.data.subarray(44);
    assert.deepEqual(one.logits.data, batched, 'each row of a batch is computed alone');
    const t = new Tensor(Int32Array.of(1, 2, 3, 4), [4]);
    const targets = new Tensor(Int32Array.of(2, 3, 4, -100), [4]);
    assert.equal(model.loss(t, targets), model.loss([[1, 2, 3, 4]], [[2, 3, 4, -100]]));
  });

  it('ids as an int32 Tensor, nested arrays or { data: Int32Array, shape } give the same logits', () => {
    const flat = Int32Array.of(1, 2, 3, 4, 5, 6, 7, 10);
    const a = model.forward(new Tensor(flat, [2, 4])).logits.data;
    assert.deepEqual(model.forward({ data: flat, shape: [2, 4] }).logits.data, a);
    assert.deepEqual(model.forward(ids).logits.data, a);
  });
});
