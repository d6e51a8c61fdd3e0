// model.metricGradients through the wasm module against PyTorch float64 autograd on every checkpoint folder:
// tests/golden/pretrained/<family>/expected_gradients.json, written by tests/golden/make_gradient_fixtures.py
// from the same safetensors files (the bf16 case on the bfloat16 weights widened, as the model widens them),
// and TinyTransformer against tests/golden/gradients/tiny_transformer.json (the same script).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, loadPretrained, TinyTransformer, Tensor } from '../../src/js/index.js';
import { PRETRAINED_DIR, listPretrainedInterp } from './fixture.js';

await init();

// The model runs forward and backward in float32, the fixtures in float64 (see
// tests/cpp/test_gradient_fixtures.cpp for why): each element within 1e-3 of its tensor's largest entry
// plus 1e-3 of itself; the metric's value within 1e-4 · max(1, |value|).
const GRAD_SCALE_TOL = 1e-3;
const GRAD_REL_TOL = 1e-3;
const VALUE_TOL = 1e-4;

const read = (name, file) => readFileSync(new URL(`${name}/${file}`, PRETRAINED_DIR));
const json = (name, file) => JSON.parse(read(name, file).toString('utf8'));

function assertGradClose(got, want, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  const scale = want.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  let worst = 0;
  let at = 0;
  for (let i = 0; i < want.length; i++) {
    const err =
      Math.abs(got[i] - want[i]) / (GRAD_SCALE_TOL * scale + GRAD_REL_TOL * Math.abs(want[i]) + 1e-12);
    if (!(err <= worst)) [worst, at] = [err, i];
  }
  assert.ok(
    worst <= 1,
    `${what}: worst error / tolerance ${worst} at ${at} (got ${got[at]}, want ${want[at]})`,
  );
}

// gradZ (L, H, T, d) against the fixture's L of (T, H_l·d_l): z of head h at t is columns h·d_l ..
// h·d_l + d_l (a DeltaNet layer's value heads: d_l = d_v, gradZ NaN past it, checked here).
function zAsFixture(gradZ, l, Hl = gradZ.shape[1], dl = gradZ.shape[3]) {
  const [, H, T, d] = gradZ.shape;
  const out = new Float64Array(T * Hl * dl);
  for (let h = 0; h < Hl; h++) {
    for (let t = 0; t < T; t++) {
      const at = ((l * H + h) * T + t) * d;
      for (let j = 0; j < dl; j++) out[t * Hl * dl + h * dl + j] = gradZ.data[at + j];
      for (let j = dl; j < d; j++) assert.ok(Number.isNaN(gradZ.data[at + j]), `gradZ NaN past d_l at ${l}`);
    }
  }
  return out;
}

function checkCase(model, c, what) {
  const { kind, position, token, against } = c.metric;
  const attention = c.grad_attention !== undefined;
  const options = { position, token, metric: kind, attention, ...(against >= 0 ? { against } : {}) };
  const got = model.metricGradients(c.ids, options);
  assert.ok(Math.abs(got.value - c.value) <= VALUE_TOL * Math.max(1, Math.abs(c.value)), `${what}: value`);
  assert.equal(got.gradHiddenStates.length, c.grad_hidden.length, `${what}: hidden states`);
  c.grad_hidden.forEach((want, l) => {
    assert.deepEqual(got.gradHiddenStates[l].shape, want.shape, `${what}: gradHiddenStates[${l}] shape`);
    assertGradClose(got.gradHiddenStates[l].data, want.data, `${what}: gradHiddenStates[${l}]`);
  });
  assert.equal(got.gradZ.shape[0], c.grad_z.length, `${what}: gradZ layers`);
  c.grad_z.forEach((want, l) => {
    // a layer without heads (LFM2's conv): (T, 0) in the fixture, NaN in gradZ
    if (want.data.length === 0)
      assert.ok(zAsFixture(got.gradZ, l).every(Number.isNaN), `${what}: gradZ[${l}]`);
    else {
      const a = model._interp();
      assertGradClose(zAsFixture(got.gradZ, l, a.heads(l), a.zDim(l)), want.data, `${what}: gradZ[${l}]`);
    }
  });
  if (!attention) {
    assert.equal(got.gradAttention, null, `${what}: gradAttention without attention`);
    return;
  }
  c.grad_attention.forEach((want, l) => {
    assert.deepEqual(got.gradAttention[l].shape, [1, ...want.shape], `${what}: gradAttention[${l}] shape`);
    assertGradClose(got.gradAttention[l].data, want.data, `${what}: gradAttention[${l}]`);
  });
}

describe('metricGradients against float64 autograd (every checkpoint folder)', () => {
  // Qwen3.5's (tests/golden/make_qwen3_5_gradients.py) among them: a DeltaNet layer's z per value head
  for (const name of listPretrainedInterp('expected_gradients.json')) {
    it(name, async () => {
      const doc = json(name, 'expected_gradients.json');
      assert.ok(doc.cases.length > 0, `${name}: no cases`);
      const models = new Map(); // one per weights file
      try {
        for (const [i, c] of doc.cases.entries()) {
          if (!models.has(c.weights)) {
            const config = json(name, 'config.json');
            models.set(c.weights, await loadPretrained({ config, weights: read(name, c.weights) }));
          }
          checkCase(models.get(c.weights), c, `${name} case ${i} (${c.weights}, ${c.metric.kind})`);
        }
      } finally {
        for (const model of models.values()) model.dispose();
      }
    });
  }
});

describe('metricGradients against float64 autograd (TinyTransformer)', () => {
  const doc = JSON.parse(
    readFileSync(new URL('../golden/gradients/tiny_transformer.json', import.meta.url), 'utf8'),
  );
  for (const c of doc.cases) {
    it(`${c.model} (${c.metric.kind})`, () => {
      const model = new TinyTransformer(c.config);
      try {
        const weights = Object.entries(c.weights).map(([n, t]) => [
          n,
          new Tensor(Float32Array.from(t.data), t.shape),
        ]);
        model.loadStateDict(Object.fromEntries(weights));
        checkCase(model, c, c.model);
      } finally {
        model.dispose();
      }
    });
  }
});
