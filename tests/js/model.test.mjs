// TinyTransformer from JS: logits, loss, every gradient and 3 Trainer steps against the PyTorch
// fixtures (tests/golden/fixtures/tiny_*.txt, make_grad_fixtures.py), forward options (attention
// and trace per layer, checked against a MultiHeadAttention holding the layer's weights), the state
// dict, and every bad input with the heap and the handle count unchanged afterwards.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  init,
  Tensor,
  AttentionError,
  TinyTransformer,
  Trainer,
  MultiHeadAttention,
  seededNormal,
  memoryStats,
} from '../../src/js/index.js';
import { listFixtures, loadFixture } from './fixture.js';
import { assertClose, isClose, allowed, FIXTURE_TOL } from './close.js';

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

const small = { vocabSize: 11, maxLength: 6, dModel: 8, numHeads: 2, numLayers: 3, seed: 3 };

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

describe('parameters and config', () => {
  it('the shape names PretrainedModel has (numLayers … maxPositions), dModel and maxLength as aliases', () => {
    const model = new TinyTransformer({
      vocabSize: 7,
      maxLength: 5,
      dModel: 12,
      numHeads: 4,
      numKVHeads: 2,
      numLayers: 3,
    });
    const names = [
      'numLayers',
      'numHeads',
      'numKVHeads',
      'headDim',
      'hiddenSize',
      'vocabSize',
      'maxPositions',
      'dModel',
      'maxLength',
    ];
    assert.deepEqual(Object.fromEntries(names.map((n) => [n, model[n]])), {
      numLayers: 3,
      numHeads: 4,
      numKVHeads: 2,
      headDim: 3,
      hiddenSize: 12,
      vocabSize: 7,
      maxPositions: 5,
      dModel: 12,
      maxLength: 5,
    });
    assert.throws(
      () => {
        'use strict';
        model.numLayers = 9;
      },
      TypeError,
      'read-only',
    );
    model.dispose();
  });

  it('config has every default; parameterCount is Σ numel; stateDict round-trips exactly', () => {
    const model = new TinyTransformer({ vocabSize: 5, maxLength: 4, dModel: 8, numHeads: 2 });
    assert.deepEqual(model.config, {
      vocabSize: 5,
      maxLength: 4,
      dModel: 8,
      numHeads: 2,
      numLayers: 1,
      mlp: true,
      mlpHidden: 32,
      positional: 'learned',
      norm: 'pre',
      causal: true,
      seed: 0,
      numKVHeads: 2,
      window: null,
    });
    assert.ok(Object.isFrozen(model.config));
    const sd = model.stateDict();
    assert.equal(
      model.parameterCount,
      Object.values(sd).reduce((n, t) => n + t.size, 0),
    );
    // 5·8 tok + 4·8 pos + (2·8 ln1 + 3·8·8 + 3·8 + 8·8 + 8 + 2·8 ln2 + 32·8 + 32 + 8·32 + 8) + 2·8 ln_f + 5·8 + 5
    assert.equal(
      model.parameterCount,
      40 + 32 + (16 + 192 + 24 + 64 + 8 + 16 + 256 + 32 + 256 + 8) + 16 + 45,
    );
    const other = new TinyTransformer({ ...model.config, seed: 9 });
    assert.notDeepEqual(other.stateDict()['head.weight'].data, sd['head.weight'].data);
    other.loadStateDict(sd);
    for (const [name, t] of Object.entries(other.stateDict())) assert.deepEqual(t.data, sd[name].data, name);
    assert.deepEqual(other.forward([1, 2, 3]).logits.data, model.forward([1, 2, 3]).logits.data);
    model.dispose();
    other.dispose();
  });

  it("today's attention: positional rope / alibi, numKVHeads, window; trains, exports and reloads", () => {
    const model = new TinyTransformer({
      vocabSize: 7,
      maxLength: 8,
      dModel: 8,
      numHeads: 4,
      numKVHeads: 2,
      positional: 'rope',
      window: 3,
    });
    const names = Object.keys(model.stateDict());
    assert.ok(!names.includes('pos_emb.weight'));
    assert.deepEqual(
      names.filter((n) => n.startsWith('blocks.0.attn.')),
      [
        'q_proj_weight',
        'k_proj_weight',
        'v_proj_weight',
        'in_proj_bias',
        'out_proj.weight',
        'out_proj.bias',
      ].map((n) => `blocks.0.attn.${n}`),
    );
    assert.deepEqual(model.stateDict()['blocks.0.attn.k_proj_weight'].shape, [4, 8]);
    const { trace, attention } = model.forward([1, 2, 3, 4, 5], { trace: true });
    assert.ok(trace[0].some((s) => s.name === 'q_rotated'));
    const w = attention[0].data; // (1, 4, 5, 5): window 3, causal
    for (let h = 0; h < 4; h++)
      for (let i = 0; i < 5; i++)
        for (let j = 0; j < 5; j++) {
          if (j > i || i - j >= 3) assert.equal(w[(h * 5 + i) * 5 + j], 0, `head ${h} (${i}, ${j})`);
        }
    const { grads } = model.gradients([[1, 2, 3, 4]], [[2, 3, 4, 5]]);
    assert.ok(Object.values(grads).every((g) => g.data.every(Number.isFinite)));
    const copy = TinyTransformer.fromSafetensors(model.toSafetensors());
    assert.deepEqual(copy.config, model.config);
    assert.deepEqual(copy.forward([1, 2, 3]).logits.data, model.forward([1, 2, 3]).logits.data);
    const alibi = new TinyTransformer({
      vocabSize: 7,
      maxLength: 8,
      dModel: 8,
      numHeads: 2,
      positional: 'alibi',
    });
    assert.ok(alibi.forward([1, 2], { trace: true }).trace[0].some((s) => s.name === 'alibi'));
    assert.throws(
      () => new TinyTransformer({ vocabSize: 7, maxLength: 8, dModel: 8, numHeads: 4, numKVHeads: 3 }),
      (e) => e.code === 'HEADS_DO_NOT_DIVIDE' && /numKVHeads 3/.test(e.message),
    );
    assert.throws(
      () => new TinyTransformer({ vocabSize: 7, maxLength: 8, dModel: 8, numHeads: 2, window: 0 }),
      (e) => e.code === 'INVALID_ARGUMENT' && /window/.test(e.message),
    );
    for (const m of [model, copy, alibi]) m.dispose();
  });

  it('the same seed gives the same weights; variants have the documented parameters', () => {
    const a = new TinyTransformer({ ...small, numLayers: 1 });
    const b = new TinyTransformer({ ...small, numLayers: 1 });
    assert.deepEqual(a.stateDict(), b.stateDict());
    const bare = new TinyTransformer({
      ...small,
      numLayers: 1,
      mlp: false,
      norm: 'none',
      positional: 'sinusoidal',
    });
    assert.deepEqual(Object.keys(bare.stateDict()), [
      'tok_emb.weight',
      'blocks.0.attn.in_proj_weight',
      'blocks.0.attn.in_proj_bias',
      'blocks.0.attn.out_proj.weight',
      'blocks.0.attn.out_proj.bias',
      'head.weight',
      'head.bias',
    ]);
    for (const m of [a, b, bare]) m.dispose();
  });
});

describe('errors: AttentionError naming the problem, heap and handles unchanged', () => {
  const model = new TinyTransformer(small);
  after(() => model.dispose());
  const reference = model.forward([1, 2, 3]).logits.data;

  function expectError(fn, code, message) {
    const before = memoryStats();
    assert.throws(
      fn,
      (e) => e instanceof AttentionError && e.code === code && message.test(e.message),
      `${code} ${message}`,
    );
    const afterStats = memoryStats();
    assert.equal(afterStats.heapUsedBytes, before.heapUsedBytes, `heap after ${message}`);
    assert.equal(afterStats.liveHandles, before.liveHandles, `handles after ${message}`);
    assert.deepEqual(model.forward([1, 2, 3]).logits.data, reference, 'the model still works');
  }

  it('config: unknown keys, wrong types and values', () => {
    expectError(
      () => new TinyTransformer({ ...small, n_head: 2 }),
      'INVALID_ARGUMENT',
      /unknown TinyTransformer config key 'n_head': use numHeads/,
    );
    expectError(
      () => new TinyTransformer({ ...small, vocab_size: 2 }),
      'INVALID_ARGUMENT',
      /'vocab_size': did you mean 'vocabSize'/,
    );
    expectError(
      () => new TinyTransformer({ ...small, positional: 'rotary' }),
      'INVALID_ARGUMENT',
      /positional must be one of 'none', 'learned', 'sinusoidal', 'rope', 'alibi'; got "rotary"/,
    );
    expectError(
      () => new TinyTransformer({ ...small, norm: 'rms' }),
      'INVALID_ARGUMENT',
      /norm must be one of/,
    );
    expectError(
      () => new TinyTransformer({ ...small, mlp: 1 }),
      'INVALID_ARGUMENT',
      /mlp must be true or false/,
    );
    expectError(
      () => new TinyTransformer({ ...small, dModel: 8.5 }),
      'INVALID_ARGUMENT',
      /dModel must be an integer/,
    );
    expectError(
      () => new TinyTransformer({ maxLength: 4, dModel: 8, numHeads: 2 }),
      'INVALID_ARGUMENT',
      /needs vocabSize/,
    );
    expectError(
      () => new TinyTransformer({ ...small, numHeads: 3 }),
      'HEADS_DO_NOT_DIVIDE',
      /numHeads 3 does not divide dModel 8/,
    );
    expectError(
      () => new TinyTransformer({ ...small, vocabSize: 1 }),
      'INVALID_ARGUMENT',
      /vocabSize must be an integer in \[2, 65536\], got 1/,
    );
    expectError(() => new TinyTransformer({ ...small, seed: -1 }), 'INVALID_ARGUMENT', /seed/);
    expectError(() => new TinyTransformer(), 'INVALID_ARGUMENT', /needs a config/);
  });

  it('ids: float tensors, out of range, too long, wrong rank, empty', () => {
    expectError(
      () => model.forward(new Tensor([1, 2, 3])),
      'INVALID_ARGUMENT',
      /ids must be an int32 tensor/,
    );
    expectError(
      () => model.forward({ data: new Float32Array([1, 2]), shape: [2] }),
      'INVALID_ARGUMENT',
      /ids must be an int32 tensor/,
    );
    expectError(() => model.forward([1, 2.5]), 'INVALID_ARGUMENT', /must be an integer/);
    expectError(
      () => model.forward([[1, 11]]),
      'INVALID_ARGUMENT',
      /ids\[0\]\[1\] = 11 is outside \[0, vocabSize = 11\)/,
    );
    expectError(() => model.forward([-1]), 'INVALID_ARGUMENT', /ids\[0\]\[0\] = -1 is outside/);
    expectError(
      () => model.forward([1, 2, 3, 4, 5, 6, 7]),
      'INVALID_ARGUMENT',
      /sequence length T = 7 exceeds maxLength 6/,
    );
    expectError(
      () => model.forward([[[1]]]),
      'SHAPE_MISMATCH',
      /ids must have shape \(B, T\) or \(T\), got \(1, 1, 1\)/,
    );
    expectError(() => model.forward({ data: new Int32Array(0), shape: [0, 3] }), 'EMPTY_INPUT', /non-empty/);
    expectError(() => model.forward([]), 'EMPTY_INPUT', /non-empty/);
  });

  it('targets: another shape, out of range, all -100', () => {
    expectError(
      () => model.loss([[1, 2]], [[1, 2, 3]]),
      'SHAPE_MISMATCH',
      /targets must have the shape of ids \(1, 2\), got \(1, 3\)/,
    );
    expectError(
      () => model.loss([1, 2], [[1, 2]]),
      'SHAPE_MISMATCH',
      /targets must have the shape of ids \(2\), got \(1, 2\)/,
    );
    expectError(
      () => model.gradients([1, 2], [1, 11]),
      'INVALID_ARGUMENT',
      /targets\[0\]\[1\] = 11 is outside .* not -100/,
    );
    expectError(() => model.gradients([1, 2], [-100, -100]), 'INVALID_ARGUMENT', /every target is -100/);
    expectError(
      () => model.loss([1, 2], new Tensor([1, 2])),
      'INVALID_ARGUMENT',
      /targets must be an int32 tensor/,
    );
  });

  it('forward options', () => {
    expectError(
      () => model.forward([1], { attention: [3] }),
      'INVALID_ARGUMENT',
      /attention: layer 3 is not in \[0, numLayers = 3\)/,
    );
    expectError(
      () => model.forward([1], { attention: 'all' }),
      'INVALID_ARGUMENT',
      /attention must be true, false or an array/,
    );
    expectError(
      () => model.forward([1], { trace: { layers: [-1] } }),
      'INVALID_ARGUMENT',
      /trace.layers: layer -1/,
    );
    expectError(
      () => model.forward([1], { trace: { layer: [0] } }),
      'INVALID_ARGUMENT',
      /unknown trace option 'layer'/,
    );
    expectError(
      () => model.forward([1], { trace: [0] }),
      'INVALID_ARGUMENT',
      /trace must be true, false or \{ layers/,
    );
    expectError(
      () => model.forward([1], { needWeights: false }),
      'INVALID_ARGUMENT',
      /unknown forward option 'needWeights'/,
    );
    expectError(
      () =>
        model.forward([1, 2], {
          mask: [
            [1.5, 1],
            [1, 1],
          ],
        }),
      'INVALID_MASK',
      /mask must be a boolean tensor/,
    );
    expectError(
      () =>
        model.forward([1, 2], {
          mask: [
            [true, true, true],
            [true, true, true],
          ],
        }),
      'INVALID_MASK',
      /does not broadcast/,
    );
  });

  it('loadStateDict is strict and all or nothing', () => {
    const sd = model.stateDict();
    const changed = { ...sd, 'head.bias': new Tensor(new Float32Array(11).fill(5)) };
    expectError(
      () => model.loadStateDict({ ...changed, 'head.weights': sd['head.weight'] }),
      'UNKNOWN_PARAMETER',
      /no parameter "head.weights"/,
    );
    const { 'ln_f.bias': _, ...missing } = changed;
    expectError(() => model.loadStateDict(missing), 'INVALID_ARGUMENT', /stateDict is missing "ln_f.bias"/);
    expectError(
      () => model.loadStateDict({ ...changed, 'blocks.2.mlp.fc1.bias': new Float32Array(3) }),
      'INVALID_ARGUMENT',
      /must be a Tensor/,
    );
    expectError(
      () => model.loadStateDict({ ...changed, 'blocks.2.mlp.fc1.bias': seededNormal([31]) }),
      'SHAPE_MISMATCH',
      /parameter "blocks.2.mlp.fc1.bias" must have shape \(32,\), got \(31,\)/,
    );
    const nan = new Float32Array(64);
    nan[5] = NaN;
    expectError(
      () => model.loadStateDict({ ...changed, 'pos_emb.weight': new Tensor(nan.subarray(0, 48), [6, 8]) }),
      'NON_FINITE',
      /pos_emb.weight/,
    );
    expectError(() => model.loadStateDict([sd]), 'INVALID_ARGUMENT', /stateDict must be an object/);
    assert.deepEqual(model.stateDict()['head.bias'].data, sd['head.bias'].data, 'nothing was written');
  });

  it('a disposed model throws DISPOSED; dispose twice is harmless', () => {
    const m = new TinyTransformer(small);
    const handles = memoryStats().liveHandles;
    m.dispose();
    m.dispose();
    assert.equal(memoryStats().liveHandles, handles - 1);
    for (const call of [
      () => m.forward([1]),
      () => m.stateDict(),
      () => m.loss([1], [1]),
      () => m.toSafetensors(),
    ]) {
      assert.throws(call, (e) => e.code === 'DISPOSED' && /TinyTransformer was disposed/.test(e.message));
    }
  });
});
