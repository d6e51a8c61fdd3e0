// model.metricGradients (src/js/interp/gradients.js) against central finite differences of the model's
// own float32 forward: ∂M/∂ hidden state l along a direction (a forward restarted at block l from the
// perturbed stream), ∂M/∂z of a layer (its W_O image added to the attention output), the last hidden
// state's gradient = the unembedding difference at position; on TinyTransformers and pretrained
// fixtures; bad options refused by name, the model unchanged.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../src/js/index.js';
import {
  tiny,
  loadCheckpoint,
  metricOf,
  direction,
  dotOf,
  near,
  refuses,
  fromStream,
} from './gradient-checks.mjs';

await init();

// Central differences in float32: step EPS along a unit-scale direction; tolerance FD_TOL.
const EPS = 1e-2;
const FD_TOL = { abs: 2e-3, rel: 3e-2 };

// g·v against (M(h + εv) − M(h − εv)) / 2ε for each hidden state l < L.
function checkHidden(model, ids, o, what) {
  const a = model._interp();
  const T = ids.length;
  const g = model.metricGradients(ids, o);
  const hidden = a.forward(ids, 1, T, { hiddenStates: true }).hiddenStates;
  assert.equal(g.gradHiddenStates.length, a.L + 1, `${what}: L + 1 gradients`);
  for (let l = 0; l < a.L; l++) {
    assert.deepEqual(g.gradHiddenStates[l].shape, [T, a.E]);
    // the direction at the stream's own scale (a fresh TinyTransformer's stream is ~0.02)
    const rms = Math.sqrt(dotOf(hidden[l].data, hidden[l].data) / hidden[l].data.length);
    const v = direction(T * a.E, l + 7).map((x) => x * rms);
    const at = (s) =>
      metricOf(
        a,
        ids,
        o,
        fromStream(
          l,
          Float32Array.from(hidden[l].data, (x, i) => x + s * v[i]),
          T,
          a.E,
        ),
      );
    const fd = (at(EPS) - at(-EPS)) / (2 * EPS);
    const want = dotOf(g.gradHiddenStates[l].data, v);
    assert.ok(
      near(want, fd, FD_TOL),
      `${what} hidden ${l} (${o.metric ?? 'logit-diff'}): ${want} vs fd ${fd}`,
    );
  }
  return g;
}

// gradZ of layer l along u (L, H, T, d) against the forward with W_O·(εu) added to the attention output.
function checkZ(model, ids, o, l, what) {
  const a = model._interp();
  const { H, d, E } = a,
    T = ids.length;
  const g = model.metricGradients(ids, o);
  assert.deepEqual(g.gradZ.shape, [a.L, H, T, d]);
  const hidden = a.forward(ids, 1, T, { hiddenStates: true }).hiddenStates;
  const wo = a.outProj(l);
  const u = direction(H * T * d, 3);
  const delta = new Float32Array(T * E); // W_O · u at each t, u (H, T, d)
  for (let t = 0; t < T; t++)
    for (let r = 0; r < E; r++) {
      let s = 0;
      for (let h = 0; h < H; h++)
        for (let j = 0; j < d; j++) s += wo[r * H * d + h * d + j] * u[(h * T + t) * d + j];
      delta[t * E + r] = s;
    }
  const at = (s) =>
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
        Float32Array.from(delta, (x) => s * x),
      ),
    );
  const fd = (at(EPS) - at(-EPS)) / (2 * EPS);
  const want = dotOf(g.gradZ.data.subarray(l * H * T * d, (l + 1) * H * T * d), u);
  assert.ok(near(want, fd, FD_TOL), `${what} z ${l}: ${want} vs fd ${fd}`);
}

describe('metricGradients on TinyTransformer', () => {
  const ids = Int32Array.from([3, 1, 4, 1, 5, 9]);
  for (const norm of ['pre', 'post']) {
    it(`norm ${norm}: every metric against finite differences; z; the last gradient is the unembedding difference`, () => {
      const model = tiny({ norm });
      for (const o of [
        { token: 2, against: 7, position: 4 },
        { token: 2, metric: 'probability' },
        { token: 8, metric: 'log-probability' },
      ])
        checkHidden(model, ids, o, `tiny ${norm}`);
      checkZ(model, ids, { token: 2, against: 7 }, 1, `tiny ${norm}`);
      checkZ(model, ids, { token: 2, against: 7 }, 0, `tiny ${norm}`);
      if (norm === 'pre') {
        const a = model._interp();
        const g = model.metricGradients(ids, { token: 2, against: 7, position: 4 });
        const last = g.gradHiddenStates[a.L].data;
        const u = a.unembed(2).row.map((x, k) => x - a.unembed(7).row[k]);
        for (let t = 0; t < ids.length; t++)
          for (let k = 0; k < a.E; k++)
            assert.ok(Math.abs(last[t * a.E + k] - (t === 4 ? u[k] : 0)) < 1e-5, `last at (${t}, ${k})`);
      }
      const withA = model.metricGradients(ids, { token: 2, attention: true });
      assert.equal(withA.gradAttention.length, 2);
      assert.deepEqual(withA.gradAttention[0].shape, [1, 2, 6, 6]);
      assert.equal(model.metricGradients(ids, { token: 2 }).gradAttention, null);
      model.dispose();
    });
  }

  it('bad options are refused by name and the model is unchanged', () => {
    const model = tiny();
    const before = model.metricGradients(ids, { token: 2 });
    refuses(() => model.metricGradients(ids, { token: 2, metric: 'kl' }), /metric/);
    refuses(() => model.metricGradients(ids, { token: 2, against: 3, metric: 'probability' }), /against/);
    refuses(() => model.metricGradients(ids, { token: 11 }), /token/);
    refuses(() => model.metricGradients(ids, { token: 2, position: 6 }), /position/);
    refuses(() => model.metricGradients(ids, { token: 2, attention: 1 }), /attention/);
    refuses(() => model.metricGradients(ids, { token: 2, layer: 1 }), /'layer'/);
    refuses(
      () =>
        model.metricGradients(
          [
            [1, 2],
            [3, 4],
          ],
          { token: 2 },
        ),
      /batch of one/,
    );
    refuses(() => model.metricGradients([1, 12], { token: 2 }), /outside/);
    const after = model.metricGradients(ids, { token: 2 });
    assert.equal(after.value, before.value);
    assert.deepEqual(after.gradHiddenStates[0].data, before.gradHiddenStates[0].data);
    model.dispose();
  });
});

describe('metricGradients on pretrained fixtures', () => {
  const ids = Int32Array.from([7, 52, 19, 83, 40, 11]);
  for (const name of ['gpt2-tiny', 'llama-tiny', 'gemma2-tiny']) {
    it(`${name}: hidden states and z against finite differences`, async () => {
      const model = await loadCheckpoint(name);
      checkHidden(model, ids, { token: 24, against: 95 }, name);
      // the probability metrics use the capped distribution; metricOf's logits are pre-cap (Gemma 2)
      if (name !== 'gemma2-tiny')
        checkHidden(model, ids, { token: 24, metric: 'log-probability', position: 3 }, name);
      checkZ(model, ids, { token: 24, against: 95 }, 0, name);
      model.dispose();
    });
  }
});
