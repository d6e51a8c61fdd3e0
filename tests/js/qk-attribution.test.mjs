// model.qkAttribution (src/js/interp/qk.js): Σ matrix + positionBias = the score, against a score
// recomputed here from the forward's own trace (scale · q · k of the last q/k steps, plus the traced
// ALiBi bias), for every pretrained fixture family and TinyTransformers with each positional kind,
// norm placement and grouped-query heads; the components' names and order; one entry against a
// float64 recomputation from the weights; every refusal, and the model unchanged by them.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { init, TinyTransformer } from '../../src/js/index.js';
import { loadCheckpoint, refuses } from './interp-checks.mjs';
import { INTERP_REFUSED, deltaPretrained, hybridPretrained, listPretrained } from './fixture.js';

await init();

// Σ matrix + positionBias against the score (float32 forward vs the float64 split), and the score
// against the trace's recomputation: relative to max(1, |score|).
const SUM_TOL = 2e-5;
const TRACE_TOL = 1e-5;

const close = (got, want, tol, what) =>
  assert.ok(
    Math.abs(got - want) <= tol * Math.max(1, Math.abs(want)),
    `${what}: ${got} vs ${want} (tolerance ${tol})`,
  );

const total = (r) => r.matrix.data.reduce((a, b) => a + b, r.positionBias);

// The score of (query, key) in head h of layer l recomputed from forward's trace: the last q and k
// steps the core records (after the bias, q/k norm and RoPE), the key head of a grouped-query head,
// times `scale`, plus the traced ALiBi bias where the layer has one.
function tracedScore(trace, { layer, head, query, key }, scale) {
  const steps = trace[layer];
  const last = (names) => names.map((n) => steps.find((s) => s.name === n)).find((s) => s);
  const q = last(['q_rotated', 'q_normed', 'q']),
    k = last(['k_rotated', 'k_normed', 'k']);
  const [, H, T, d] = q.shape,
    kh = Math.floor(head / (H / k.shape[1]));
  let s = 0;
  for (let i = 0; i < d; i++) s += q.data[(head * T + query) * d + i] * k.data[(kh * T + key) * d + i];
  const alibi = steps.find((x) => x.name === 'alibi');
  return scale * s + (alibi ? alibi.data[(head * T + query) * T + key] : 0);
}

// The names qkAttribution must give, in order, for a model of H heads (with MLPs where `mlp`).
function expectedNames(layer, H, positions, mlp = true) {
  const names = positions ? ['embed', 'pos'] : ['embed'];
  for (let l = 0; l < layer; l++) {
    for (let h = 0; h < H; h++) names.push(`L${l}H${h}`);
    if (mlp) names.push(`L${l}MLP`);
  }
  return [...names, 'bias'];
}

// Every (layer, head) at a few (query, key) pairs the mask shows: Σ = score = the trace's score.
function checkModel(model, ids, { L, H, scale, positions, mlp, visible }, what) {
  const { trace } = model.forward(ids, { trace: true, attention: false });
  const T = ids.length;
  const pairs = [
    [T - 1, T - 1],
    [T - 1, 0],
    [T - 2, 1],
    [3, 2],
    [1, 4],
  ];
  let checked = 0;
  for (let layer = 0; layer < L; layer++) {
    for (let head = 0; head < H; head++) {
      for (const [query, key] of pairs) {
        if (!visible(layer, query, key)) continue;
        const o = { layer, head, query, key };
        const r = model.qkAttribution(ids, o);
        const names = expectedNames(layer, H, positions, mlp);
        assert.deepEqual([...r.components], names, `${what} ${JSON.stringify(o)} names`);
        assert.deepEqual(r.matrix.shape, [names.length, names.length], `${what} matrix shape`);
        close(total(r), r.score, SUM_TOL, `${what} ${JSON.stringify(o)} Σ matrix + positionBias`);
        close(r.score, tracedScore(trace, o, scale), TRACE_TOL, `${what} ${JSON.stringify(o)} score`);
        checked++;
      }
    }
  }
  assert.ok(checked >= L * H, `${what}: ${checked} cases checked`);
}

const IDS = Int32Array.from([3, 1, 4, 1, 5, 9, 2, 6]);

describe('qkAttribution on every pretrained fixture family', () => {
  // A hybrid (DeltaNet layers): refused, naming the first such layer, which has no q·k to explain.
  for (const name of listPretrained().filter(deltaPretrained)) {
    it(`${name}: refused, naming its first DeltaNet layer`, async () => {
      const model = await loadCheckpoint(name);
      const first = model.layers.findIndex((l) => l.kind === 'delta');
      assert.throws(
        () => model.qkAttribution(IDS, { layer: first, head: 0, query: 7, key: 6 }),
        new RegExp(`layer ${first} is a DeltaNet layer`),
      );
      model.dispose();
    });
  }
  for (const name of listPretrained().filter((n) => !hybridPretrained(n) && !INTERP_REFUSED.includes(n))) {
    it(`${name}: Σ matrix + positionBias = score = the trace's scale · q · k`, async () => {
      const model = await loadCheckpoint(name);
      const c = model.config;
      // Granite's attention_multiplier, Gemma's query_pre_attn_scalar^−½, else 1/√head_dim
      const scale =
        c.attention_multiplier ??
        (c.query_pre_attn_scalar ? c.query_pre_attn_scalar ** -0.5 : model.headDim ** -0.5);
      const windowOf = (l) => model.layers[l].window;
      checkModel(
        model,
        IDS,
        {
          L: model.numLayers,
          H: model.numHeads,
          scale,
          positions: model.architecture === 'GPT2LMHeadModel',
          mlp: true,
          visible: (l, q, k) => k <= q && (windowOf(l) === 0 || q - k < windowOf(l)),
        },
        name,
      );
      const r = model.qkAttribution(IDS, { layer: 1, head: 0, query: 7, key: 6 });
      assert.equal(r.positionBias, 0, `${name}: no ALiBi`);
      assert.ok(!r.components.some((n) => /^L[1-9]/.test(n)), `${name}: no component of layer >= 1`);
      model.dispose();
    });
  }

  it('grouped-query heads use their key head: each head against the trace (key head h / group)', async () => {
    const model = await loadCheckpoint('llama-tiny');
    assert.ok(model.numKVHeads < model.numHeads);
    const group = model.numHeads / model.numKVHeads;
    const { trace } = model.forward(IDS, { trace: true, attention: false });
    for (let head = 0; head < model.numHeads; head++) {
      const o = { layer: 1, head, query: 7, key: 2 };
      const r = model.qkAttribution(IDS, o);
      close(
        r.score,
        tracedScore(trace, o, model.headDim ** -0.5),
        TRACE_TOL,
        `head ${head} (key head ${Math.floor(head / group)})`,
      );
    }
    model.dispose();
  });
});

const tinyIds = Int32Array.from([3, 1, 4, 1, 5, 9]);

describe('qkAttribution on TinyTransformer', () => {
  for (const positional of ['learned', 'sinusoidal', 'rope', 'alibi', 'none']) {
    for (const norm of ['pre', 'post', 'none']) {
      it(`positional ${positional}, norm ${norm}, with and without grouped-query heads`, () => {
        for (const numKVHeads of [2, 1]) {
          for (const causal of [true, false]) {
            const cfg = { vocabSize: 11, maxLength: 6, dModel: 8, numHeads: 2, numLayers: 3, seed: 3 };
            const model = new TinyTransformer({ ...cfg, positional, norm, numKVHeads, causal });
            checkModel(
              model,
              tinyIds,
              {
                L: 3,
                H: 2,
                scale: 0.5,
                positions: positional === 'learned' || positional === 'sinusoidal',
                mlp: true,
                visible: (l, q, k) => !causal || k <= q,
              },
              `${positional}/${norm}/kv ${numKVHeads}/${causal ? 'causal' : 'bidirectional'}`,
            );
            model.dispose();
          }
        }
      });
    }
  }

  it('ALiBi: positionBias = −slope · (query − key), and |query − key| without the causal mask', () => {
    for (const causal of [true, false]) {
      const model = new TinyTransformer({
        vocabSize: 11,
        maxLength: 6,
        dModel: 8,
        numHeads: 2,
        positional: 'alibi',
        causal,
      });
      const slopes = [0.0625, 0.00390625]; // get_slopes(2): 2^-4, 2^-8
      for (const [query, key] of [
        [5, 1],
        [2, 2],
      ].concat(causal ? [] : [[1, 4]])) {
        for (let head = 0; head < 2; head++) {
          const r = model.qkAttribution(tinyIds, { layer: 0, head, query, key });
          assert.equal(r.positionBias, Math.fround(-slopes[head] * Math.abs(query - key)));
        }
      }
      model.dispose();
    }
  });

  it('without MLPs the components have no L{l}MLP; a window hides keys outside it', () => {
    const model = new TinyTransformer({
      vocabSize: 11,
      maxLength: 6,
      dModel: 8,
      numHeads: 2,
      numLayers: 2,
      mlp: false,
      window: 2,
    });
    const r = model.qkAttribution(tinyIds, { layer: 1, head: 1, query: 4, key: 3 });
    assert.deepEqual([...r.components], ['embed', 'pos', 'L0H0', 'L0H1', 'bias']);
    close(total(r), r.score, SUM_TOL, 'no MLP');
    refuses(
      () => model.qkAttribution(tinyIds, { layer: 0, head: 0, query: 4, key: 2 }),
      /sliding window of 2/,
    );
    model.dispose();
  });
});

// Float64 recomputation of one entry from the weights (stateDict): layer 0 of a pre-norm
// TinyTransformer with learned positions. The stream at t is e_t + p_t (no other component), ln1 is
// frozen at it: n(c) = s · (c − mean c) ⊙ γ (β to the constants); q_c = W_q,h · n(c), k likewise for
// the key head; entry (i, j) = (1/√d) · q_i · k_j, the constants' row q_bias = W_q,h · β + b_q,h.
describe('qkAttribution against a float64 recomputation from the weights', () => {
  it('layer 0 entries (embed, pos) and (bias, embed) of a learned-position pre-norm model', () => {
    const model = new TinyTransformer({
      vocabSize: 11,
      maxLength: 6,
      dModel: 8,
      numHeads: 2,
      numLayers: 2,
      seed: 7,
    });
    const sd = model.stateDict();
    const E = 8,
      d = 4,
      head = 1,
      query = 5,
      key = 2;
    const row = (name, i) => Array.from(sd[name].data.subarray(i * E, (i + 1) * E));
    const gamma = Array.from(sd['blocks.0.ln1.weight'].data),
      beta = Array.from(sd['blocks.0.ln1.bias'].data);
    const W = sd['blocks.0.attn.in_proj_weight'].data,
      b = sd['blocks.0.attn.in_proj_bias'].data;
    const mean = (v) => v.reduce((x, y) => x + y, 0) / v.length;
    const scaleAt = (t) => {
      const x = row('tok_emb.weight', tinyIds[t]).map((v, i) => v + row('pos_emb.weight', t)[i]);
      const m = mean(x);
      return 1 / Math.sqrt(mean(x.map((v) => (v - m) ** 2)) + 1e-5);
    };
    const normed = (c, s) => {
      const m = mean(c);
      return c.map((v, i) => s * (v - m) * gamma[i]);
    };
    // rows offset: q rows [h·d, (h+1)·d), k rows E + [h·d, (h+1)·d)
    const proj = (v, offset, bias) =>
      Array.from({ length: d }, (_, r) =>
        v.reduce((s, x, i) => s + W[(offset + r) * E + i] * x, bias ? b[offset + r] : 0),
      );
    const qEmbed = proj(normed(row('tok_emb.weight', tinyIds[query]), scaleAt(query)), head * d, false);
    const qBias = proj(beta, head * d, true);
    const kEmbed = proj(normed(row('tok_emb.weight', tinyIds[key]), scaleAt(key)), E + head * d, false);
    const kPos = proj(normed(row('pos_emb.weight', key), scaleAt(key)), E + head * d, false);
    const dot = (a, c) => a.reduce((s, x, i) => s + x * c[i], 0);
    const r = model.qkAttribution(tinyIds, { layer: 0, head, query, key });
    assert.deepEqual([...r.components], ['embed', 'pos', 'bias']);
    const at = (i, j) => r.matrix.data[i * 3 + j];
    close(at(0, 1), dot(qEmbed, kPos) / 2, 1e-6, '(embed, pos)');
    close(at(2, 0), dot(qBias, kEmbed) / 2, 1e-6, '(bias, embed)');
    model.dispose();
  });
});

describe('qkAttribution refusals', () => {
  it('bad options name themselves; hidden keys and batches are refused; the model is unchanged', () => {
    const model = new TinyTransformer({
      vocabSize: 11,
      maxLength: 6,
      dModel: 8,
      numHeads: 2,
      numLayers: 2,
      seed: 5,
    });
    const before = model.forward(tinyIds).logits.data.slice();
    const ok = { layer: 1, head: 1, query: 4, key: 2 };
    const bad = [
      [{ ...ok, layer: 2 }, /layer must be an integer in \[0, 2\), got 2/],
      [{ ...ok, layer: -1 }, /layer must be an integer/],
      [{ ...ok, head: 2 }, /head must be an integer in \[0, 2\)/],
      [{ ...ok, head: 0.5 }, /head must be an integer/],
      [{ ...ok, query: 6 }, /query must be an integer in \[0, 6\)/],
      [{ ...ok, key: '1' }, /key must be an integer/],
      [{ layer: 1, head: 1, query: 4 }, /key must be an integer/],
      [{ ...ok, position: 3 }, /position/],
      [{ ...ok, key: 5 }, /key 5 is after query 4; the causal mask hides it/],
    ];
    for (const [options, pattern] of bad) refuses(() => model.qkAttribution(tinyIds, options), pattern);
    refuses(() => model.qkAttribution([Array.from(tinyIds), Array.from(tinyIds)], ok), /batch of one/);
    assert.deepEqual(model.forward(tinyIds).logits.data, before);
    model.dispose();
  });

  it('a pretrained sliding-window layer refuses keys outside its window', async () => {
    const model = await loadCheckpoint('mistral-tiny');
    const w = model.layers[0].window;
    assert.ok(w > 0);
    refuses(() => model.qkAttribution(IDS, { layer: 0, head: 0, query: 7, key: 7 - w }), /sliding window/);
    refuses(() => model.qkAttribution(IDS, { layer: 0, head: 0, query: 2, key: 3 }), /causal mask/);
    model.qkAttribution(IDS, { layer: 0, head: 0, query: 7, key: 8 - w });
    model.dispose();
  });
});
