// Head-type scores and attention rollout against float64 references written by
// tests/golden/make_interp_fixtures.py (the tiny checkpoints' torch forwards, TinyTransformers of
// tests/golden/tiny_transformer.py), hand-built attention with known scores, rollout's invariants,
// and refused options that leave the model usable.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, loadPretrained, attentionRollout, TinyTransformer, Tensor } from '../../src/js/index.js';
import { headScoresFromAttention } from '../../src/js/interp/head-scores.js';
import { listPretrained } from './fixture.js';
import {
  ATTR_TOL,
  KINDS,
  PRETRAINED,
  json,
  assertClose,
  checkAttribution,
  refuses,
} from './interp-checks.mjs';

await init();

// every checkpoint folder with interpretability references
const MODELS = listPretrained('expected_interp.json');

function checkCase(model, c, what) {
  const scores = model.headScores(c.input_ids);
  assert.deepEqual(Object.keys(scores), KINDS, `${what}: the default kinds, in order`);
  const L = model.numLayers ?? model.config.numLayers,
    H = model.numHeads ?? model.config.numHeads;
  for (const kind of KINDS) {
    assert.ok(scores[kind] instanceof Tensor);
    assert.deepEqual(scores[kind].shape, [L, H], `${what} ${kind} shape`);
    assert.deepEqual(c.head_scores[kind].shape, [L, H]);
    assertClose(scores[kind].data, c.head_scores[kind].data, `${what} ${kind}`);
  }
  const { attention } = model.forward(c.input_ids);
  for (const [w, want] of Object.entries(c.rollout)) {
    const r = attentionRollout(attention, { residualWeight: Number(w) });
    assert.deepEqual(r.shape, want.shape, `${what} rollout w=${w} shape`);
    assertClose(r.data, want.data, `${what} rollout w=${w}`);
  }
  assertClose(attentionRollout(attention).data, c.rollout['0.5'].data, `${what} rollout (default w = 0.5)`);
}

describe('headScores and attentionRollout against float64 references', () => {
  for (const name of MODELS) {
    it(`${name}: every case (repeats, duplicates, distinct tokens, T = 1)`, async () => {
      const dir = new URL(`${name}/`, PRETRAINED);
      const model = await loadPretrained({
        config: json(new URL('config.json', dir)),
        weights: readFileSync(new URL('model.safetensors', dir)),
      });
      const expected = json(new URL('expected_interp.json', dir));
      assert.deepEqual(expected.kinds, KINDS);
      for (const c of expected.cases) checkCase(model, c, `${name} ${c.name}`);
      // (1, T) is the same batch of one
      const c = expected.cases[0];
      assertClose(
        model.headScores([c.input_ids]).induction.data,
        c.head_scores.induction.data,
        `${name} (1, T) ids`,
      );
      model.dispose();
    });
  }

  const tiny = json(new URL('../golden/interp/tiny_transformer.json', import.meta.url));
  for (const m of tiny.models) {
    it(`TinyTransformer ${m.name} (${m.config.norm}-norm, ${m.config.positional} positions)`, () => {
      const model = new TinyTransformer(m.config);
      model.loadStateDict(
        Object.fromEntries(
          Object.entries(m.weights).map(([n, t]) => [n, new Tensor(Float32Array.from(t.data), t.shape)]),
        ),
      );
      for (const c of m.cases) {
        // the weights arrived: the float64 logits of the same module, within the logit bounds
        assertClose(
          model.forward(c.input_ids).logits.data,
          c.logits.data,
          `${m.name} ${c.name} logits`,
          ATTR_TOL,
        ); // the logit bounds
        checkCase(model, c, `${m.name} ${c.name}`);
        for (const a of c.attribution)
          checkAttribution(model, c.input_ids, a, `${m.name} ${c.name} attribution at ${a.position}`);
      }
      model.dispose();
    });
  }
});

// Hand-built attention (1, H, T, T) per layer from plain rows.
const attn = (...heads) => new Tensor(heads.flat(2), [1, heads.length, heads[0].length, heads[0].length]);

describe('headScores on hand-built attention', () => {
  it('ids [1, 2, 1, 2]: each kind sums the defined keys and averages over qualifying rows', () => {
    const ids = Int32Array.from([1, 2, 1, 2]);
    const a = attn(
      [
        [1, 0, 0, 0],
        [0.25, 0.75, 0, 0],
        [0.5, 0.125, 0.375, 0],
        [0.1, 0.2, 0.3, 0.4],
      ],
      [
        [1, 0, 0, 0],
        [1, 0, 0, 0],
        [0, 1, 0, 0],
        [0, 0, 1, 0],
      ], // a pure previous-token head
    );
    const s = headScoresFromAttention(ids, [a]);
    // previous-token: rows 1..3, keys i-1: head 0 (0.25 + 0.125 + 0.3) / 3; head 1 (1 + 1 + 1) / 3
    assertClose(s['previous-token'].data, [(0.25 + 0.125 + 0.3) / 3, 1], 'previous-token', 1e-7);
    // duplicate-token: row 2 (key 0), row 3 (key 1): head 0 (0.5 + 0.2) / 2; head 1 (0 + 0) / 2
    assertClose(s['duplicate-token'].data, [(0.5 + 0.2) / 2, 0], 'duplicate-token', 1e-7);
    // induction: row 2 (ids[0] = 1 → key 1), row 3 (ids[1] = 2 → key 2): head 0 (0.125 + 0.3) / 2; head 1 (1 + 1) / 2
    assertClose(s.induction.data, [(0.125 + 0.3) / 2, 1], 'induction', 1e-7);
  });

  it('several earlier copies are summed in one row; rows without a copy do not count', () => {
    const ids = [7, 7, 5, 7];
    const a = attn([
      [1, 0, 0, 0],
      [0.4, 0.6, 0, 0],
      [0.2, 0.3, 0.5, 0],
      [0.1, 0.2, 0.3, 0.4],
    ]);
    const s = headScoresFromAttention(ids, [a, a]);
    assert.deepEqual(s['duplicate-token'].shape, [2, 1]);
    // rows 1 (key 0) and 3 (keys 0, 1)
    assertClose(s['duplicate-token'].data, [(0.4 + 0.3) / 2, (0.4 + 0.3) / 2], 'duplicate-token', 1e-7);
    // induction: row 1 has no j with 1 <= j < 1, row 2 (5) none; row 3 (j = 1, 2: ids[0] = ids[1] = 7) → 0.2 + 0.3
    assertClose(s.induction.data, [0.2 + 0.3, 0.2 + 0.3], 'induction', 1e-7);
  });

  it('no qualifying row is NaN for every head; T = 1 has NaN previous-token scores', () => {
    const s = headScoresFromAttention(
      [1, 2, 3],
      [
        attn(
          [
            [1, 0, 0],
            [0.5, 0.5, 0],
            [0.2, 0.3, 0.5],
          ],
          [
            [1, 0, 0],
            [1, 0, 0],
            [1, 0, 0],
          ],
        ),
      ],
    );
    assert.ok(s['duplicate-token'].data.every(Number.isNaN) && s.induction.data.every(Number.isNaN));
    assert.ok(!s['previous-token'].data.some(Number.isNaN));
    const one = headScoresFromAttention([4], [attn([[1]], [[1]])]);
    for (const k of KINDS) assert.ok(one[k].data.every(Number.isNaN), k);
  });
});

describe('attentionRollout', () => {
  const softRows = (T, seed) =>
    Array.from({ length: T }, (_, i) => {
      const row = Array.from({ length: T }, (_, j) =>
        j <= i ? 1 + Math.abs(Math.sin(seed * 7.1 + i * 3.3 + j)) : 0,
      );
      const s = row.reduce((x, y) => x + y, 0);
      return row.map((v) => v / s);
    });

  it('rows sum to 1 for every layer and weight; L = 1 is Â_0; w = 1 is the identity; w = 0 is the product of head means', () => {
    const T = 5;
    const layers = [
      attn(softRows(T, 1), softRows(T, 2)),
      attn(softRows(T, 3), softRows(T, 4)),
      attn(softRows(T, 5), softRows(T, 6)),
    ];
    for (const w of [0, 0.1, 0.5, 0.9, 1]) {
      const r = attentionRollout(layers, { residualWeight: w });
      assert.deepEqual(r.shape, [3, T, T]);
      for (let row = 0; row < 3 * T; row++) {
        const s = r.data.subarray(row * T, (row + 1) * T).reduce((x, y) => x + y, 0);
        assert.ok(Math.abs(s - 1) < 1e-6, `w=${w} row ${row} sums to ${s}`);
      }
    }
    const ident = attentionRollout(layers, { residualWeight: 1 });
    for (let l = 0; l < 3; l++)
      for (let i = 0; i < T; i++)
        for (let j = 0; j < T; j++) assert.equal(ident.get(l, i, j), i === j ? 1 : 0);
    // w = 0: R_1 = mean(A_1) · mean(A_0), written out
    const mean = (t) =>
      Array.from({ length: T }, (_, i) =>
        Array.from({ length: T }, (_, j) => (t.get(0, 0, i, j) + t.get(0, 1, i, j)) / 2),
      );
    const [m0, m1] = [mean(layers[0]), mean(layers[1])];
    const r0 = attentionRollout(layers, { residualWeight: 0 });
    for (let i = 0; i < T; i++) {
      for (let j = 0; j < T; j++) {
        assert.ok(Math.abs(r0.get(0, i, j) - m0[i][j]) < 1e-6);
        const want = m1[i].reduce((acc, v, k) => acc + v * m0[k][j], 0);
        assert.ok(Math.abs(r0.get(1, i, j) - want) < 1e-6, `R_1[${i}, ${j}]`);
      }
    }
    // w = 0.5 on one layer: (A + I) / 2 (rows already sum to 1)
    const one = attentionRollout([layers[0]]);
    assert.deepEqual(one.shape, [1, T, T]);
    for (let i = 0; i < T; i++)
      for (let j = 0; j < T; j++)
        assert.ok(Math.abs(one.get(0, i, j) - (m0[i][j] + (i === j ? 1 : 0)) / 2) < 1e-6);
  });

  it('takes { data, shape } objects as well as Tensors', () => {
    const a = attn(softRows(3, 1));
    const r = attentionRollout([{ data: Array.from(a.data), shape: a.shape }]);
    assert.deepEqual(Array.from(r.data), Array.from(attentionRollout([a]).data));
  });
});

describe('refused calls', () => {
  it('headScores: unknown kinds, bad kinds and options, batches of more than one; the model stays usable', async () => {
    const dir = new URL('gpt2-tiny/', PRETRAINED);
    const pretrained = await loadPretrained({
      config: json(new URL('config.json', dir)),
      weights: readFileSync(new URL('model.safetensors', dir)),
    });
    const tiny = new TinyTransformer({ vocabSize: 8, maxLength: 8, dModel: 8, numHeads: 2, numLayers: 2 });
    for (const model of [pretrained, tiny]) {
      const ids = [1, 2, 3, 1, 2, 3];
      const before = model.headScores(ids);
      refuses(() => model.headScores(ids, { kinds: ['induction', 'copying'] }), /"copying"/);
      refuses(
        () => model.headScores(ids, { kinds: ['previous_token'] }),
        /"previous_token".*'previous-token'/,
      );
      refuses(() => model.headScores(ids, { kinds: 'induction' }), /kinds must be an array/);
      refuses(() => model.headScores(ids, { kind: ['induction'] }), /'kind'/);
      refuses(() => model.headScores([ids, ids]), /batch of one/);
      refuses(() => model.headScores([0.5, 1]));
      const only = model.headScores(ids, { kinds: ['induction'] });
      assert.deepEqual(Object.keys(only), ['induction']);
      assert.deepEqual(Array.from(only.induction.data), Array.from(before.induction.data));
      assert.deepEqual(model.headScores(ids, { kinds: [] }), {});
      const after = model.headScores(ids);
      for (const k of KINDS)
        assert.deepEqual(Array.from(after[k].data), Array.from(before[k].data), `${k} after refused calls`);
    }
    pretrained.dispose();
    tiny.dispose();
  });

  it('attentionRollout: a missing layer, a batch of two, residualWeight outside [0, 1], bad shapes and options', async () => {
    const tiny = new TinyTransformer({ vocabSize: 8, maxLength: 8, dModel: 8, numHeads: 2, numLayers: 2 });
    const ids = [1, 2, 3, 4];
    refuses(
      () => attentionRollout(tiny.forward(ids, { attention: [1] }).attention),
      /layer 0's attention is missing/,
    );
    refuses(() => attentionRollout(tiny.forward(ids, { attention: false }).attention), /non-empty array/);
    refuses(() => attentionRollout(tiny.forward([ids, ids]).attention), /batch of one/);
    const { attention } = tiny.forward(ids);
    for (const w of [-0.1, 1.5, NaN, Infinity, '0.5', null])
      refuses(() => attentionRollout(attention, { residualWeight: w }), /residualWeight/);
    refuses(() => attentionRollout(attention, { residual_weight: 0.5 }), /'residual_weight'/);
    refuses(() => attentionRollout(attention[0]), /non-empty array/);
    refuses(
      () =>
        attentionRollout([
          attention[0],
          attn([
            [1, 0],
            [0.5, 0.5],
          ]),
        ]),
      /T = 2/,
    );
    refuses(() => attentionRollout([new Tensor(new Float32Array(8), [2, 2, 2])]), /\(1, H, T, T\)/);
    assert.deepEqual(attentionRollout(attention).shape, [2, 4, 4]);
    tiny.dispose();
  });
});
