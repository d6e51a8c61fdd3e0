// The interpretability tools on Qwen3.5 (gated DeltaNet layers: src/model/delta_net_backward.cpp) on the
// qwen3_5-tiny fixture at T = 70 (past one chunk of 64): metricGradients' hidden-state gradients and
// each layer's z gradient (a DeltaNet layer's per value head, d_v; the gated full layer's) against
// central finite differences of the model's own float32 forward (a small perturbation of z through
// W_O added at attn.hook_out: the linear approximation attribution patching makes, against the
// actual change); saliency from those gradients; patching per value head: a head whose clean and
// corrupted z agree (the rows before the changed token) changes nothing, exactly; the final-state hook;
// headScores of the value heads from the forward's signed effective attention.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../src/js/index.js';
import { loadCheckpoint, metricOf, direction, dotOf, near, fromStream } from './gradient-checks.mjs';

await init();

// Central differences in float32: step EPS along a direction at the perturbed tensor's scale.
const EPS = 1e-2;
const FD_TOL = { abs: 2e-3, rel: 3e-2 };
const T = 70;
const ids = Int32Array.from({ length: T }, (_, i) => (i * 37 + 11) % 96);
const o = { token: 24, against: 57 };

const rmsOf = (x) => Math.sqrt(dotOf(x, x) / x.length);

describe('interpretability on qwen3_5-tiny (DeltaNet layers)', () => {
  it('metricGradients: hidden states and every layer’s z against finite differences', async () => {
    const model = await loadCheckpoint('qwen3_5-tiny');
    const a = model._interp();
    const { E, H, d } = a;
    const g = model.metricGradients(ids, o);
    assert.deepEqual(g.gradZ.shape, [a.L, H, T, d]);
    const hidden = a.forward(ids, 1, T, { hiddenStates: true }).hiddenStates;
    for (let l = 0; l < a.L; l++) {
      const h = hidden[l].data;
      const v = direction(T * E, l + 7).map((x) => x * rmsOf(h));
      const at = (s) =>
        metricOf(
          a,
          ids,
          o,
          fromStream(
            l,
            Float32Array.from(h, (x, i) => x + s * v[i]),
            T,
            E,
          ),
        );
      const fd = (at(EPS) - at(-EPS)) / (2 * EPS);
      const want = dotOf(g.gradHiddenStates[l].data, v);
      assert.ok(near(want, fd, FD_TOL), `hidden ${l}: ${want} vs fd ${fd}`);
      // z: the layer's heads (a DeltaNet layer's value heads) of size dl, NaN past it
      const Hl = a.heads(l),
        dl = a.zDim(l),
        wo = a.outProj(l);
      assert.equal(model.layers[l].kind === 'delta' ? dl : d, dl, `layer ${l}: z size`);
      const gz = g.gradZ.data.subarray(l * H * T * d, (l + 1) * H * T * d);
      const u = direction(Hl * T * dl, 3 + l);
      let dot = 0;
      const delta = new Float32Array(T * E); // W_O · u at each t, u (H_l, T, d_l)
      for (let hh = 0; hh < Hl; hh++)
        for (let t = 0; t < T; t++)
          for (let j = 0; j < d; j++) {
            const gv = gz[(hh * T + t) * d + j];
            if (j >= dl) {
              assert.ok(Number.isNaN(gv), `layer ${l}: NaN past d_l`);
              continue;
            }
            const uv = u[(hh * T + t) * dl + j];
            dot += gv * uv;
            for (let r = 0; r < E; r++) delta[t * E + r] += wo[r * Hl * dl + hh * dl + j] * uv;
          }
      const moved = (s) =>
        metricOf(
          a,
          ids,
          o,
          fromStream(
            l,
            hidden[l].data,
            T,
            E,
            `blocks.${l}.attn.hook_out`,
            delta.map((x) => s * x),
          ),
        );
      const fdz = (moved(EPS) - moved(-EPS)) / (2 * EPS);
      assert.ok(near(dot, fdz, FD_TOL), `z ${l} (${model.layers[l].kind}): ${dot} vs fd ${fdz}`);
    }
    // saliency's gradient × input: Σ_e hidden state 0 · its gradient, per token
    const sal = await model.saliency(ids, o);
    const e = hidden[0].data,
      g0 = g.gradHiddenStates[0].data;
    for (let t = 0; t < T; t++) {
      let s = 0;
      for (let k = 0; k < E; k++) s += e[t * E + k] * g0[t * E + k];
      assert.ok(Math.abs(sal.scores.data[t] - s) <= 1e-5 * Math.max(1, Math.abs(s)), `saliency ${t}`);
    }
    model.dispose();
  });

  it('patch and attributionPatch per value head: unchanged heads give exactly 0', async () => {
    const model = await loadCheckpoint('qwen3_5-tiny');
    const clean = Int32Array.from(ids.subarray(0, 12)),
      corrupted = Int32Array.from(clean);
    corrupted[5] = (clean[5] + 1) % 96;
    const base = { clean, corrupted, ...o, position: 9 };
    const n = clean.length,
      H = model._interp().H;
    for (const tool of ['patch', 'attributionPatch']) {
      const r = await model[tool]({ ...base, component: 'head-position' });
      assert.deepEqual(r.result.shape, [model.numLayers, H, n]);
      let moved = 0;
      for (let l = 0; l < model.numLayers; l++)
        for (let h = 0; h < H; h++)
          for (let t = 0; t < n; t++) {
            const v = r.result.data[(l * H + h) * n + t];
            if (t < 5 || (tool === 'patch' && t > 9)) assert.equal(v, 0, `${tool} (${l}, ${h}, ${t})`);
            else if (t <= 9 && v !== 0) moved++;
          }
      assert.ok(moved > 0, `${tool}: some head at or after the changed token matters`);
    }
    model.dispose();
  });

  it('linear_attn.hook_state: the final state, captured only', async () => {
    const model = await loadCheckpoint('qwen3_5-tiny');
    const { heads: H, headDim: dk, valueDim: dv } = model.layers[0];
    const names = new Map(model.hookNames().map((h) => [h.name, h.shape]));
    assert.deepEqual(names.get('blocks.0.linear_attn.hook_state'), ['B', H, dk, dv]);
    assert.ok(!names.has('blocks.2.linear_attn.hook_state'), 'a full layer has none');
    const state = model.run(ids, { capture: ['blocks.0.linear_attn.hook_state'] }).activations[
      'blocks.0.linear_attn.hook_state'
    ];
    assert.deepEqual(state.shape, [1, H, dk, dv]);
    assert.ok(state.data.some((v) => v !== 0) && state.data.every(Number.isFinite));
    assert.throws(
      () =>
        model.run(ids, {
          edits: [{ hook: 'blocks.0.linear_attn.hook_state', op: 'add', value: state }],
        }),
      /captured only/,
    );
    assert.throws(
      () =>
        model.steeringVector({ positive: [1, 2], negative: [3, 4], hook: 'blocks.0.linear_attn.hook_state' }),
      /no value per position/,
    );
    model.dispose();
  });

  it("headScores: a DeltaNet layer's value heads score its signed effective attention", async () => {
    const model = await loadCheckpoint('qwen3_5-tiny');
    const short = ids.subarray(0, 12);
    const n = short.length;
    const { attention, attentionKinds } = model.forward(short, { attention: true });
    const scores = model.headScores(short, { kinds: ['previous-token'] })['previous-token'];
    const H = model.numHeads;
    assert.deepEqual(scores.shape, [model.numLayers, H]);
    let negative = false;
    for (let l = 0; l < model.numLayers; l++) {
      const a = attention[l].data;
      negative ||= attentionKinds[l] === 'delta' && a.some((v) => v < 0);
      for (let h = 0; h < model.layers[l].heads; h++) {
        let s = 0; // the mean over rows t >= 1 of A[t, t - 1]
        for (let t = 1; t < n; t++) s += a[(h * n + t) * n + t - 1];
        const want = s / (n - 1);
        assert.ok(
          Math.abs(scores.data[l * H + h] - want) <= 1e-6,
          `(${l}, ${h}): ${scores.data[l * H + h]} vs ${want}`,
        );
      }
    }
    assert.ok(negative, 'a DeltaNet map has negative entries (signed)');
    model.dispose();
  });
});
