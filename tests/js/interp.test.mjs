// Head-type scores and attention rollout (issue #27) against float64 references written by
// tests/golden/make_interp_fixtures.py (the tiny checkpoints' torch forwards, TinyTransformers of
// tests/golden/tiny_transformer.py), hand-built attention with known scores, rollout's invariants,
// and refused options that leave the model usable.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import {
  init,
  loadPretrained,
  attentionRollout,
  TinyTransformer,
  Tensor,
  AttentionError,
} from '../../src/js/index.js';
import { headScoresFromAttention, _setTraceBudget } from '../../src/js/interp.js';
import { isClose, FIXTURE_TOL } from './close.js';

// The issue's bounds: scores and rollout 1e-5 + 1e-4 (FIXTURE_TOL); attribution 1e-4 + 1e-3.
const ATTR_TOL = { abs: 1e-4, rel: 1e-3 };
const KINDS = ['previous-token', 'duplicate-token', 'induction'];

await init();

const PRETRAINED = new URL('../golden/pretrained/', import.meta.url);
const json = (url) => JSON.parse(readFileSync(url, 'utf8'));
const MODELS = ['gpt2-tiny', 'llama-tiny', 'qwen2-tiny', 'llama3-scaled-tiny'];

// close.js's check, but `want` may hold null = NaN (a score with no qualifying row).
function assertClose(got, want, what, tol = FIXTURE_TOL) {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < got.length; i++) {
    if (want[i] === null) {
      if (!Number.isNaN(got[i])) assert.fail(`${what}[${i}] = ${got[i]}, want NaN`);
    } else if (!isClose(got[i], want[i], tol)) {
      assert.fail(`${what}[${i}] = ${got[i]}, want ${want[i]}`);
    }
  }
}

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

function checkAttribution(model, ids, want, what) {
  const options = { position: want.position, token: want.token };
  if (want.against !== null) options.against = want.against;
  const got = model.logitAttribution(ids, options);
  assert.deepEqual(got.heads.shape, want.heads.shape, `${what}: heads shape`);
  assertClose(got.heads.data, want.heads.data, `${what} heads`, ATTR_TOL);
  assertClose(got.mlp.data, want.mlp.data, `${what} mlp`, ATTR_TOL);
  for (const k of ['embed', 'bias', 'total', 'logitDiff'])
    assertClose([got[k]], [want[k]], `${what} ${k}`, ATTR_TOL);
  // total = logitDiff (the sum of the parts against the real forward's logits)
  assert.ok(
    Math.abs(got.total - got.logitDiff) <= 1e-5 * Math.max(1, Math.abs(got.logitDiff)),
    `${what}: total ${got.total} vs logitDiff ${got.logitDiff}`,
  );
}

const code = (c) => (e) => e instanceof AttentionError && e.code === c;
const refuses = (fn, pattern, c = 'INVALID_ARGUMENT') =>
  assert.throws(fn, (e) => code(c)(e) && (pattern === undefined || pattern.test(e.message)));

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

describe('the induction preset', () => {
  it('its claimed heads have the top scores of their kind (mean over 16 repeated segments)', () => {
    const model = TinyTransformer.fromSafetensors(
      readFileSync(new URL('../../web/presets/induction.safetensors', import.meta.url)),
    );
    // segments of 6-11 distinct symbols among 16, repeated once (the preset's data without filler), mulberry32 seed 7
    let a = 7;
    const rand = () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
    };
    const n = 16,
      mean = { 'previous-token': [0, 0, 0, 0], induction: [0, 0, 0, 0] };
    for (let s = 0; s < n; s++) {
      const seg = 6 + Math.floor(rand() * 6);
      const pool = Array.from({ length: 16 }, (_, i) => i)
        .sort(() => rand() - 0.5)
        .slice(0, seg);
      const scores = model.headScores([...pool, ...pool], { kinds: ['previous-token', 'induction'] });
      for (const k in mean)
        scores[k].data.forEach((v, i) => {
          mean[k][i] += v / n;
        });
    }
    const top = (xs) => xs.indexOf(Math.max(...xs));
    // (layer, head) = index / numHeads: layer 0 head 1 is the previous-token head, layer 1 head 1 the induction head
    assert.equal(top(mean['previous-token']), 1, `previous-token means ${mean['previous-token']}`);
    assert.ok(mean['previous-token'][1] > 0.6, `${mean['previous-token']}`);
    assert.equal(top(mean.induction), 3, `induction means ${mean.induction}`);
    assert.ok(mean.induction[3] > 0.95, `${mean.induction}`);
    model.dispose();
  });

  it("patching: layer 1's heads carry the copied token, layer 0's do not (8 pairs, one list)", async () => {
    const model = TinyTransformer.fromSafetensors(
      readFileSync(new URL('../../web/presets/induction.safetensors', import.meta.url)),
    );
    let a = 7;
    const rand = () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
    };
    // 8 distinct symbols repeated: at position 12 (the second copy's 5th) the model predicts the
    // first copy's 6th, symbol 0; the corrupted run has symbol 1 (not in the segment) there instead
    const clean = [],
      corrupted = [];
    for (let s = 0; s < 8; s++) {
      const seg = Array.from({ length: 14 }, (_, i) => i + 2)
        .sort(() => rand() - 0.5)
        .slice(0, 7);
      seg.splice(5, 0, 0);
      const c = [...seg, ...seg],
        x = c.slice();
      x[5] = 1;
      clean.push(c);
      corrupted.push(x);
    }
    const r = await model.patch({ clean, corrupted, position: 12, token: 0, against: 1, component: 'head' });
    const [h00, h01, h10, h11] = r.result.data;
    assert.ok(Math.abs(h00) < 0.05 && Math.abs(h01) < 0.05, `layer 0: ${h00}, ${h01}`);
    assert.ok(h10 > 0.2 && h11 > 0.2 && h10 + h11 > 0.7, `layer 1: ${h10}, ${h11}`);
    const res = await model.patch({
      clean,
      corrupted,
      position: 12,
      token: 0,
      against: 1,
      component: 'residual',
    });
    for (let t = 0; t < 16; t++) assert.equal(res.result.data[t], t === 5 ? 1 : 0, `residual[0, ${t}]`);
    model.dispose();
  });
});

describe('logitAttribution (TinyTransformer)', () => {
  const ids = [1, 2, 3, 4, 1, 2, 3, 0];
  it('total = logitDiff for every norm placement, positional encoding, with and without MLPs, GQA', () => {
    for (const norm of ['pre', 'post', 'none']) {
      for (const positional of ['learned', 'sinusoidal', 'rope', 'alibi', 'none']) {
        for (const mlp of [true, false]) {
          const model = new TinyTransformer({
            vocabSize: 9,
            maxLength: 12,
            dModel: 12,
            numHeads: 3,
            numLayers: 3,
            norm,
            positional,
            mlp,
            seed: 5,
            ...(positional === 'rope' ? { dModel: 12, numHeads: 2 } : {}),
          });
          // larger weights than the default init, so the logits differ by O(1)
          const sd = model.stateDict();
          for (const [n, t] of Object.entries(sd))
            if (n.endsWith('weight') && !n.includes('ln'))
              t.data.forEach((v, i) => {
                t.data[i] = v * 4;
              });
          model.loadStateDict(sd);
          for (const o of [
            { token: 4, against: 7 },
            { token: 2, position: 3 },
            { token: 0, against: 8, position: 0 },
          ]) {
            const r = model.logitAttribution(ids, o);
            assert.deepEqual(r.heads.shape, [3, model.config.numHeads]);
            assert.deepEqual(r.mlp.shape, [3]);
            if (!mlp) assert.ok(r.mlp.data.every((v) => v === 0));
            const what = `${norm}/${positional}/mlp ${mlp} ${JSON.stringify(o)}`;
            assert.ok(
              Math.abs(r.total - r.logitDiff) <= 1e-5 * Math.max(1, Math.abs(r.logitDiff)),
              `${what}: ${r.total} vs ${r.logitDiff}`,
            );
            const logits = model.forward(ids).logits;
            const p = o.position ?? ids.length - 1;
            assert.equal(
              r.logitDiff,
              logits.get(0, p, o.token) - (o.against === undefined ? 0 : logits.get(0, p, o.against)),
            );
          }
          model.dispose();
        }
      }
    }
    const gqa = new TinyTransformer({
      vocabSize: 9,
      maxLength: 12,
      dModel: 16,
      numHeads: 4,
      numKVHeads: 2,
      numLayers: 2,
      positional: 'rope',
    });
    const r = gqa.logitAttribution(ids, { token: 3, against: 5 });
    assert.deepEqual(r.heads.shape, [2, 4], 'query heads');
    assert.ok(Math.abs(r.total - r.logitDiff) <= 1e-5);
    gqa.dispose();
  });

  it('refuses bad positions, tokens, token === against, unknown options and batches of two; the model stays usable', () => {
    const model = new TinyTransformer({ vocabSize: 9, maxLength: 12, dModel: 8, numHeads: 2, numLayers: 2 });
    const before = model.logitAttribution(ids, { token: 3, against: 4 });
    refuses(() => model.logitAttribution(ids, {}), /token must be an integer in \[0, 9\)/);
    refuses(() => model.logitAttribution(ids, { token: 9 }), /token/);
    refuses(() => model.logitAttribution(ids, { token: 1, against: -1 }), /against/);
    refuses(() => model.logitAttribution(ids, { token: 1, against: 1 }), /both 1/);
    refuses(
      () => model.logitAttribution(ids, { token: 1, position: 8 }),
      /position must be an integer in \[0, 8\)/,
    );
    refuses(() => model.logitAttribution(ids, { token: 1, position: -1 }), /position/);
    refuses(() => model.logitAttribution(ids, { token: 1, position: 1.5 }), /position/);
    refuses(() => model.logitAttribution(ids, { token: 1, pos: 2 }), /'pos'/);
    refuses(() => model.logitAttribution([ids, ids], { token: 1 }), /batch of one/);
    const after = model.logitAttribution(ids, { token: 3, against: 4 });
    assert.deepEqual(after, before);
    model.dispose();
  });
});

// ---- PretrainedModel.logitAttribution and activation patching ----------------------------------------
const CHECKPOINTS = [
  'gpt2-tiny',
  'llama-tiny',
  'qwen2-tiny',
  'llama3-scaled-tiny',
  'llama-linear-tiny',
  'qwen3-tiny',
  'mistral-tiny',
  'qwen2-sliding-tiny',
  'smollm3-tiny',
  'olmo2-tiny',
  'phi3-tiny',
  'gemma3-tiny',
  'gemma2-tiny',
];
const loadCheckpoint = (name) => {
  const dir = new URL(`${name}/`, PRETRAINED);
  return loadPretrained({
    config: json(new URL('config.json', dir)),
    weights: readFileSync(new URL('model.safetensors', dir)),
  });
};

describe('logitAttribution (PretrainedModel): total = logitDiff for every architecture', () => {
  // every checkpoint folder, so a family added there is covered at once
  for (const name of readdirSync(PRETRAINED)
    .filter((n) => existsSync(new URL(`${n}/model.safetensors`, PRETRAINED)))
    .sort()) {
    it(name, async () => {
      const model = await loadCheckpoint(name);
      const ids = [7, 52, 19, 83, 40, 11, 66, 90, 7, 52];
      const logits = model.forward(ids, { attention: false }).logits;
      for (const o of [
        { token: 24, against: 95 },
        { token: 3, position: 4 },
        { token: 0, against: 1, position: 0 },
      ]) {
        const r = model.logitAttribution(ids, o);
        assert.deepEqual(r.heads.shape, [model.numLayers, model.numHeads]);
        assert.deepEqual(r.mlp.shape, [model.numLayers]);
        const p = o.position ?? ids.length - 1;
        // Gemma 2 caps the forward's logits (c·tanh(z / c)); attribution explains the pre-cap z, which
        // the float64 fixtures check (below): here, the capped difference must be the cap of each side.
        const cap = model.config.final_logit_softcapping;
        const at = (tok) => logits.get(0, p, tok);
        const want = at(o.token) - (o.against === undefined ? 0 : at(o.against));
        if (!cap)
          assert.ok(
            Math.abs(r.logitDiff - want) <= 1e-5 * Math.max(1, Math.abs(want)),
            `${name} ${JSON.stringify(o)}: logitDiff ${r.logitDiff} vs the forward's ${want}`,
          );
        else
          assert.ok(
            Math.abs(r.logitDiff) >= Math.abs(want) - 1e-5,
            `${name}: the pre-cap difference is at least the capped one`,
          );
        // total is the sum of the parts (heads and mlp are float32: their rounding)
        const parts = [r.embed, r.bias, ...r.heads.data, ...r.mlp.data];
        const sum = parts.reduce((a, b) => a + b, 0),
          scale = parts.reduce((a, b) => a + Math.abs(b), 0);
        assert.ok(
          Math.abs(sum - r.total) <= 1e-6 * Math.max(1, scale),
          `${name}: total ${r.total} is the sum of the parts ${sum}`,
        );
        assert.ok(
          Math.abs(r.total - r.logitDiff) <= 1e-5 * Math.max(1, Math.abs(r.logitDiff)),
          `${name} ${JSON.stringify(o)}: total ${r.total} vs logitDiff ${r.logitDiff}`,
        );
      }
      refuses(() => model.logitAttribution(ids, { token: 1, against: 1 }), /both 1/);
      refuses(() => model.logitAttribution(ids, { token: model.vocabSize }), /token/);
      refuses(() => model.logitAttribution([ids, ids], { token: 1 }), /batch of one/);
      model.dispose();
    });
  }
});

// LD_patched = corruptedDiff + ratio · (cleanDiff − corruptedDiff), each against the float64 reference.
function checkPatched(got, want, c, what) {
  const span = c.cleanDiff - c.corruptedDiff;
  assertClose(
    Array.from(got.result.data, (r) => c.corruptedDiff + r * span),
    want.data,
    what,
    ATTR_TOL,
  );
}

async function checkPatchCases(model, cases, what) {
  for (const c of cases) {
    const base = {
      clean: c.clean,
      corrupted: c.corrupted,
      position: c.position,
      token: c.token,
      against: c.against,
    };
    for (const component of ['head', 'head-position', 'residual']) {
      const got = await model.patch({ ...base, component });
      assert.deepEqual(got.result.shape, c.patched[component].shape, `${what} ${c.name} ${component} shape`);
      assertClose(
        [got.cleanDiff, got.corruptedDiff],
        [c.cleanDiff, c.corruptedDiff],
        `${what} ${c.name} LDs`,
        ATTR_TOL,
      );
      checkPatched(got, c.patched[component], got, `${what} ${c.name} ${component}`);
      // positions after `position` never matter: exactly 0
      const T = c.clean.length;
      if (component !== 'head') {
        for (let i = 0; i < got.result.data.length; i++)
          if (i % T > c.position) assert.equal(got.result.data[i], 0, `${what} ${c.name} ${component}[${i}]`);
      }
      if (component === 'residual') {
        // block 0: exactly 1 at the token that differs, 0 elsewhere
        const k = c.clean.findIndex((id, i) => id !== c.corrupted[i]);
        for (let t = 0; t < T; t++)
          assert.equal(got.result.data[t], t === k ? 1 : 0, `${what} ${c.name} residual[0, ${t}]`);
      }
    }
    // A saturated probability (Gemma 2's pre-cap logits of the tiny random model put ~all of it on
    // one token in both runs) leaves nothing to explain: refused, as the float64 values say.
    if (
      !(
        Math.abs(c.cleanProbability - c.corruptedProbability) >=
        1e-6 * Math.max(1, Math.abs(c.cleanProbability))
      )
    ) {
      await assert.rejects(
        model.patch({ ...base, metric: 'probability' }),
        /nothing to explain/,
        `${what} ${c.name} probability`,
      );
      continue;
    }
    const prob = await model.patch({ ...base, metric: 'probability' });
    assertClose(
      [prob.cleanDiff, prob.corruptedDiff],
      [c.cleanProbability, c.corruptedProbability],
      `${what} ${c.name} probabilities`,
      ATTR_TOL,
    );
    checkPatched(prob, c.patchedProbability.head, prob, `${what} ${c.name} head (probability)`);
  }
}

describe('logitAttribution (PretrainedModel) against float64 references', () => {
  for (const name of CHECKPOINTS) {
    it(name, async () => {
      const model = await loadCheckpoint(name);
      const ids = [7, 52, 19, 83, 40, 11, 66, 90, 7, 52];
      for (const want of json(new URL(`${name}/expected_patch.json`, PRETRAINED)).attribution) {
        checkAttribution(model, ids, want, `${name} attribution at ${want.position}`);
      }
      model.dispose();
    });
  }
});

describe('patch against float64 references (torch hooks: head z patched, residual patched)', () => {
  for (const name of CHECKPOINTS) {
    it(name, async () => {
      const model = await loadCheckpoint(name);
      await checkPatchCases(model, json(new URL(`${name}/expected_patch.json`, PRETRAINED)).cases, name);
      model.dispose();
    });
  }
  const tiny = json(new URL('../golden/interp/tiny_transformer.json', import.meta.url));
  for (const m of tiny.models) {
    it(`TinyTransformer ${m.name}`, async () => {
      const model = new TinyTransformer(m.config);
      model.loadStateDict(
        Object.fromEntries(
          Object.entries(m.weights).map(([n, t]) => [n, new Tensor(Float32Array.from(t.data), t.shape)]),
        ),
      );
      await checkPatchCases(model, m.patching, m.name);
      model.dispose();
    });
  }
});

describe('patch: lists of pairs, progress, abort, refusals', () => {
  const clean = [7, 52, 19, 83, 40, 11, 66, 90],
    corrupted = [7, 52, 19, 83, 40, 60, 66, 90];
  const clean2 = [9, 52, 19, 83, 40, 11, 66, 90],
    corrupted2 = [9, 52, 19, 83, 40, 12, 66, 90];
  const o = { token: 24, against: 95 };

  it('a list of pairs averages each entry; cleanDiff and corruptedDiff are then per pair', async () => {
    const model = await loadCheckpoint('gpt2-tiny');
    for (const component of ['head', 'head-position', 'residual']) {
      const a = await model.patch({ clean, corrupted, component, ...o });
      const b = await model.patch({ clean: clean2, corrupted: corrupted2, component, ...o });
      const both = await model.patch({
        clean: [clean, clean2],
        corrupted: [corrupted, corrupted2],
        component,
        ...o,
      });
      assert.deepEqual(both.cleanDiff, [a.cleanDiff, b.cleanDiff]);
      assert.deepEqual(both.corruptedDiff, [a.corruptedDiff, b.corruptedDiff]);
      assertClose(
        both.result.data,
        Array.from(a.result.data, (v, i) => (v + b.result.data[i]) / 2),
        `${component} mean`,
        1e-6,
      );
      // a (B, T) batch is a list of B pairs
      const batch = await model.patch({
        clean: new Tensor(Int32Array.from([...clean, ...clean2]), [2, 8]),
        corrupted: [corrupted, corrupted2],
        component,
        ...o,
      });
      assert.deepEqual(batch.result.data, both.result.data);
    }
    model.dispose();
  });

  it('onProgress counts every patched run; an aborted signal rejects with its reason and the model stays usable', async () => {
    for (const make of [
      () => loadCheckpoint('llama-tiny'),
      () =>
        new TinyTransformer({ vocabSize: 9, maxLength: 12, dModel: 8, numHeads: 2, numLayers: 2, seed: 3 }),
    ]) {
      const model = await make();
      const V = model.vocabSize ?? model.config.vocabSize;
      const c = clean.map((id) => id % V),
        x = corrupted.map((id) => id % V);
      const opts = { clean: c, corrupted: x, token: 1, against: 2, component: 'head-position' };
      const calls = [];
      const before = await model.patch({ ...opts, onProgress: (done, total) => calls.push([done, total]) });
      const L = model.numLayers ?? model.config.numLayers,
        H = model.numHeads ?? model.config.numHeads;
      assert.deepEqual(calls.at(-1), [L * H * 8, L * H * 8]);
      assert.ok(calls.every(([d], i) => i === 0 || d > calls[i - 1][0]));
      const ac = new AbortController();
      const reason = new Error('stop here');
      await assert.rejects(
        model.patch({
          ...opts,
          signal: ac.signal,
          onProgress: (done) => {
            if (done >= 8) ac.abort(reason);
          },
        }),
        (e) => e === reason,
      );
      const pre = new AbortController();
      pre.abort();
      await assert.rejects(model.patch({ ...opts, signal: pre.signal }), (e) => e.name === 'AbortError');
      const after = await model.patch(opts);
      assert.deepEqual(after.result.data, before.result.data);
      model.dispose();
    }
  });

  it('TinyTransformers that are not causal, or have grouped-query heads: every row runs; residual at block 0 is 1 at the changed token', async () => {
    for (const extra of [{ causal: false }, { numKVHeads: 1, positional: 'rope' }]) {
      const model = new TinyTransformer({
        vocabSize: 9,
        maxLength: 12,
        dModel: 8,
        numHeads: 2,
        numLayers: 2,
        seed: 11,
        ...extra,
      });
      const sd = model.stateDict(); // larger weights: the logits differ by O(1)
      for (const [n, t] of Object.entries(sd))
        if (n.endsWith('weight') && !n.includes('ln'))
          t.data.forEach((v, i) => {
            t.data[i] = v * 4;
          });
      model.loadStateDict(sd);
      const c = [1, 2, 3, 4, 5, 6],
        x = [1, 2, 7, 4, 5, 6];
      for (const position of [5, 3]) {
        const r = await model.patch({
          clean: c,
          corrupted: x,
          token: 1,
          against: 2,
          position,
          component: 'residual',
        });
        for (let t = 0; t < 6; t++)
          assert.equal(r.result.data[t], t === 2 ? 1 : 0, `${JSON.stringify(extra)} residual[0, ${t}]`);
        const h = await model.patch({
          clean: c,
          corrupted: x,
          token: 1,
          against: 2,
          position,
          component: 'head-position',
        });
        assert.deepEqual(h.result.shape, [2, 2, 6]);
        // causal: positions after `position` are not run, their entries are 0
        for (let hd = 0; hd < 2; hd++)
          for (let t = 0; t < 6; t++)
            if (extra.causal !== false && t > position) assert.equal(h.result.data[hd * 6 + t], 0);
      }
      if (extra.causal === false) {
        // later positions matter without a causal mask: some entry after position 1 is not 0
        const r = await model.patch({
          clean: c,
          corrupted: x,
          token: 1,
          against: 2,
          position: 1,
          component: 'residual',
        });
        assert.ok(Array.from(r.result.data).some((v, i) => i % 6 > 1 && v !== 0));
      }
      model.dispose();
    }
  });

  it('long inputs trace a few layers per forward: the same results as one traced forward', async () => {
    for (const make of [
      () => loadCheckpoint('qwen3-tiny'),
      () =>
        new TinyTransformer({ vocabSize: 9, maxLength: 12, dModel: 8, numHeads: 2, numLayers: 3, seed: 4 }),
    ]) {
      const model = await make();
      const V = model.vocabSize;
      const c = clean.map((id) => id % V),
        x = corrupted.map((id) => id % V);
      const opts = { clean: c, corrupted: x, token: 1, against: 2 };
      const want = [
        await model.patch({ ...opts, component: 'head' }),
        await model.patch({ ...opts, component: 'residual' }),
      ];
      const attribution =
        model instanceof TinyTransformer ? null : model.logitAttribution(c, { token: 1, against: 2 });
      const old = _setTraceBudget(1); // one layer per traced forward
      try {
        assert.deepEqual(await model.patch({ ...opts, component: 'head' }), want[0]);
        assert.deepEqual(await model.patch({ ...opts, component: 'residual' }), want[1]);
        if (attribution) assert.deepEqual(model.logitAttribution(c, { token: 1, against: 2 }), attribution);
      } finally {
        _setTraceBudget(old);
      }
      model.dispose();
    }
  });

  it('refuses ids of different lengths, runs with nothing to explain, bad options; nothing runs and the model stays usable', async () => {
    const model = await loadCheckpoint('qwen2-tiny');
    const before = await model.patch({ clean, corrupted, ...o, component: 'residual' });
    const rejects = (opts, pattern) =>
      assert.rejects(model.patch(opts), (e) => code('INVALID_ARGUMENT')(e) && pattern.test(e.message));
    await rejects({ clean, corrupted: corrupted.slice(1), ...o }, /one length/);
    await rejects({ clean: [clean, clean2], corrupted: [corrupted], ...o }, /2 clean runs but 1/);
    await rejects({ clean, corrupted: clean, ...o }, /nothing to explain/);
    await rejects({ clean, corrupted, token: 3, against: 3 }, /both 3/);
    await rejects({ clean, corrupted, token: model.vocabSize }, /token/);
    await rejects({ clean, corrupted, ...o, position: 8 }, /position must be an integer in \[0, 8\)/);
    await rejects({ clean, corrupted, ...o, position: -1 }, /position/);
    await rejects({ clean, corrupted, ...o, component: 'mlp' }, /component/);
    await rejects({ clean, corrupted, ...o, metric: 'kl' }, /metric/);
    await rejects({ clean, corrupted, ...o, layer: 1 }, /'layer'/);
    await rejects({ clean, corrupted, ...o, onProgress: 3 }, /onProgress/);
    await rejects({ clean, corrupted, ...o, signal: {} }, /signal/);
    await rejects({ clean }, /clean and corrupted/);
    // a position before the differing token: nothing to explain
    await rejects({ clean, corrupted, ...o, position: 3 }, /nothing to explain/);
    const after = await model.patch({ clean, corrupted, ...o, component: 'residual' });
    assert.deepEqual(after.result.data, before.result.data);
    model.dispose();
  });
});
