// model.attributionPatch (src/js/interp/attribution-patch.js) against its definition, computed here
// from metricGradients and forwards: (a_clean − a_corrupted)·∂M/∂a on the corrupted run over
// (M_clean − M_corrupted), for heads (z from the forward's trace), head-positions, the residual stream
// and MLP branches; lists of pairs average; its correlation with patch printed (not a correctness
// test); refusals.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../src/js/index.js';
import { tracedForward } from '../../src/js/interp/attribution.js';
import { tiny, loadCheckpoint, metricOf } from './gradient-checks.mjs';

await init();

const TOL = { abs: 1e-4, rel: 1e-3 };

// The definition for every component, from the forwards' hidden states, MLP branches and traced z.
function definition(model, clean, corrupted, o) {
  const a = model._interp();
  const { L, H, E, d } = a,
    T = clean.length;
  const run = (ids) => {
    const { first, z } = tracedForward(
      (layers, f) =>
        a.forward(ids, 1, T, {
          traceLayers: layers,
          hiddenStates: f,
          capture: f ? ['blocks.*.hook_mlp_out'] : [],
        }),
      L,
      H,
      T,
    );
    return {
      hidden: first.hiddenStates.map((x) => x.data),
      mlp: Array.from({ length: L }, (_, l) => first.activations[`blocks.${l}.hook_mlp_out`].data),
      z,
    };
  };
  const c = run(clean),
    x = run(corrupted);
  const mc = metricOf(a, clean, o),
    mx = metricOf(a, corrupted, o);
  const g = model.metricGradients(corrupted, o);
  const core = a.gradients(corrupted, 1, T, {
    metric: 0,
    position: o.position,
    token: o.token,
    against: o.against ?? -1,
  });
  const n = mc - mx;
  const head = new Float64Array(L * H),
    headPos = new Float64Array(L * H * T),
    residual = new Float64Array(L * T),
    mlp = new Float64Array(L * T);
  for (let l = 0; l < L; l++) {
    for (let h = 0; h < H; h++)
      for (let t = 0; t < T; t++) {
        let s = 0;
        for (let j = 0; j < d; j++) {
          const i = (h * T + t) * d + j;
          s += (c.z[l][i] - x.z[l][i]) * g.gradZ.data[l * H * T * d + i];
        }
        head[l * H + h] += s / n;
        headPos[(l * H + h) * T + t] = s / n;
      }
    for (let t = 0; t < T; t++) {
      let r = 0,
        m = 0;
      for (let k = t * E; k < (t + 1) * E; k++) {
        r += (c.hidden[l][k] - x.hidden[l][k]) * g.gradHiddenStates[l].data[k];
        m += (c.mlp[l][k] - x.mlp[l][k]) * core.gradMlp[l].data[k];
      }
      residual[l * T + t] = r / n;
      mlp[l * T + t] = m / n;
    }
  }
  return { head, 'head-position': headPos, residual, mlp, mc, mx };
}

function check(got, want, what) {
  assert.equal(got.length, want.length);
  for (let i = 0; i < got.length; i++)
    assert.ok(
      Math.abs(got[i] - want[i]) <= TOL.abs + TOL.rel * Math.abs(want[i]),
      `${what}[${i}]: ${got[i]} vs ${want[i]}`,
    );
}

const pearson = (x, y) => {
  const n = x.length,
    mx = x.reduce((a, b) => a + b, 0) / n,
    my = y.reduce((a, b) => a + b, 0) / n;
  let sxy = 0,
    sxx = 0,
    syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) ** 2;
    syy += (y[i] - my) ** 2;
  }
  return sxy / Math.sqrt(sxx * syy);
};

describe('attributionPatch', () => {
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
    it(`${name}: every component against its definition; the correlation with patch printed`, async () => {
      const model = await open();
      const c = Int32Array.from(clean),
        x = Int32Array.from(corrupted);
      const want = definition(model, c, x, { ...o, position: c.length - 1 });
      for (const component of ['head', 'head-position', 'residual', 'mlp']) {
        const got = await model.attributionPatch({ clean: c, corrupted: x, component, ...o });
        check(got.result.data, want[component], `${name} ${component}`);
        assert.ok(Math.abs(got.cleanDiff - want.mc) < 1e-4 && Math.abs(got.corruptedDiff - want.mx) < 1e-4);
        const exact = await model.patch({ clean: c, corrupted: x, component, ...o });
        console.log(
          `${name} ${component}: correlation with patch ${pearson(got.result.data, exact.result.data).toFixed(3)}`,
        );
      }
      model.dispose();
    });
  }

  it('lists of pairs average; refusals leave the model usable', async () => {
    const model = tiny();
    const p1 = [Int32Array.from([3, 1, 4, 1, 5, 9]), Int32Array.from([3, 1, 4, 6, 5, 9])];
    const p2 = [Int32Array.from([2, 1, 4, 1, 5, 9]), Int32Array.from([2, 1, 8, 1, 5, 9])];
    const o = { token: 2, against: 7, component: 'head-position' };
    const a = await model.attributionPatch({ clean: p1[0], corrupted: p1[1], ...o });
    const b = await model.attributionPatch({ clean: p2[0], corrupted: p2[1], ...o });
    const both = await model.attributionPatch({ clean: [p1[0], p2[0]], corrupted: [p1[1], p2[1]], ...o });
    check(
      both.result.data,
      Array.from(a.result.data, (v, i) => (v + b.result.data[i]) / 2),
      'mean',
    );
    assert.deepEqual(both.cleanDiff, [a.cleanDiff, b.cleanDiff]);
    const rejects = (opts, pattern) =>
      assert.rejects(
        model.attributionPatch(opts),
        (e) => e.code === 'INVALID_ARGUMENT' && pattern.test(e.message),
      );
    await rejects({ clean: p1[0], corrupted: p1[0], ...o }, /^attributionPatch: .*nothing to explain/);
    await rejects(
      { clean: p1[0], corrupted: p1[1], ...o, component: 'attn' },
      /^attributionPatch: component/,
    );
    await rejects({ clean: p1[0], corrupted: p1[1], ...o, metric: 'kl' }, /metric/);
    await rejects({ clean: p1[0], corrupted: p1[1], ...o, metric: 'probability' }, /against/);
    await rejects({ clean: p1[0], corrupted: p1[1], ...o, steps: 2 }, /'steps'/);
    const again = await model.attributionPatch({ clean: p1[0], corrupted: p1[1], ...o });
    assert.deepEqual(again.result.data, a.result.data);
    model.dispose();
  });
});
