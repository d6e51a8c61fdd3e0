// patch's component 'mlp' (an MLP branch's output at one position, clean into corrupted) against a
// direct forward of the corrupted run with the difference added at blocks.{l}.hook_mlp_out, row t, for each metric, log-probability
// included; on a TinyTransformer and the GPT-2 fixture.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../src/js/index.js';
import { tiny, loadCheckpoint, metricOf } from './gradient-checks.mjs';

await init();

// Each entry (M(patched) − M_corrupted) / (M_clean − M_corrupted), every row of the corrupted run.
function direct(model, clean, corrupted, o) {
  const a = model._interp();
  const { L, E } = a,
    T = clean.length;
  const branches = (ids) => {
    const r = a.forward(ids, 1, T, { capture: ['blocks.*.hook_mlp_out'] });
    return Array.from({ length: L }, (_, l) => r.activations[`blocks.${l}.hook_mlp_out`].data);
  };
  const bc = branches(clean),
    bx = branches(corrupted);
  const mc = metricOf(a, clean, o),
    mx = metricOf(a, corrupted, o);
  const out = new Float64Array(L * T);
  for (let l = 0; l < L; l++) {
    for (let t = 0; t < T; t++) {
      const delta = new Float32Array(T * E);
      for (let k = t * E; k < (t + 1) * E; k++) delta[k] = bc[l][k] - bx[l][k];
      const m = metricOf(a, corrupted, o, {
        edits: [{ hook: `blocks.${l}.hook_mlp_out`, op: 'add', value: delta, shape: [1, T, E] }],
      });
      out[l * T + t] = (m - mx) / (mc - mx);
    }
  }
  return out;
}

describe("patch component 'mlp'", () => {
  const cases = [
    ['tiny', () => tiny(), [3, 1, 4, 1, 5, 9], [3, 1, 4, 6, 5, 9], { token: 2, against: 7 }],
    [
      'gpt2-tiny',
      () => loadCheckpoint('gpt2-tiny'),
      [7, 52, 19, 83, 40, 11, 66, 90],
      [7, 52, 19, 83, 40, 60, 66, 90],
      { token: 24, against: 95 },
    ],
  ];
  for (const [name, open, clean, corrupted, o] of cases) {
    it(`${name}: against a direct forward with an add at hook_mlp_out, for each metric`, async () => {
      const model = await open();
      const c = Int32Array.from(clean),
        x = Int32Array.from(corrupted);
      for (const metric of ['logit-diff', 'probability', 'log-probability']) {
        const opts = metric === 'logit-diff' ? o : { token: o.token, metric };
        const got = await model.patch({ clean: c, corrupted: x, component: 'mlp', ...opts });
        assert.deepEqual(got.result.shape, [model._interp().L, c.length]);
        const want = direct(model, c, x, { ...opts, position: c.length - 1 });
        for (let i = 0; i < want.length; i++)
          assert.ok(
            Math.abs(got.result.data[i] - want[i]) <= 1e-4 + 1e-3 * Math.abs(want[i]),
            `${name} ${metric}[${i}]: ${got.result.data[i]} vs ${want[i]}`,
          );
      }
      model.dispose();
    });
  }
});
