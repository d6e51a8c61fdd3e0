// PretrainedModel.logitAttribution (total = logitDiff for every checkpoint folder) and patch, against the
// float64 references of tests/golden/make_interp_fixtures.py (torch hooks: head z patched, residual patched).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { init, TinyTransformer, Tensor } from '../../src/js/index.js';
import {
  ATTR_TOL,
  PRETRAINED,
  json,
  assertClose,
  checkAttribution,
  refuses,
  loadCheckpoint,
} from './interp-checks.mjs';
import { INTERP_REFUSED, listPretrained } from './fixture.js';

await init();

// every checkpoint folder, so a family added there is covered at once (LFM2's conv layer: its
// (layer, head) entries NaN, its output one part of the attribution, `mixers`; Qwen3.5's DeltaNet
// layers: one entry per value head); Gemma 4's additions are refused (INTERP_REFUSED)
const CHECKPOINTS = listPretrained().filter((name) => !INTERP_REFUSED.includes(name));
// those with float64 references (expected_patch.json: qwen3_5-vl-tiny has none, its text model is
// qwen3_5-tiny's, whose references tests/golden/qwen3_5_interp.py writes)
const REFERENCED = listPretrained('expected_patch.json').filter((name) => !INTERP_REFUSED.includes(name));

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
          if (i % T > c.position && !Number.isNaN(got.result.data[i]))
            assert.equal(got.result.data[i], 0, `${what} ${c.name} ${component}[${i}]`);
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

describe('logitAttribution (PretrainedModel): total = logitDiff for every architecture', () => {
  for (const name of CHECKPOINTS) {
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
        // total is the sum of the parts (heads, mixers and mlp are float32: their rounding); NaN where
        // a layer has no such part (a conv layer's heads, an attention layer's mixer)
        assert.deepEqual(r.mixers.shape, [model.numLayers]);
        model.layers.forEach((layer, l) => {
          const row = r.heads.data.subarray(l * model.numHeads, (l + 1) * model.numHeads);
          assert.equal(row.filter(Number.isNaN).length, model.numHeads - layer.heads, `${name} heads[${l}]`);
          assert.equal(Number.isNaN(r.mixers.data[l]), layer.heads > 0, `${name} mixers[${l}]`);
        });
        const parts = [r.embed, r.bias, ...r.heads.data, ...r.mixers.data, ...r.mlp.data].filter(
          (v) => !Number.isNaN(v),
        );
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

describe('logitAttribution (PretrainedModel) against float64 references', () => {
  for (const name of REFERENCED) {
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
  for (const name of REFERENCED) {
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
