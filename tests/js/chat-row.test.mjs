// The chat view's attention row of one reply token (web/demo-chat-row.js) on the tiny checkpoints'
// own forward: one layer's heads are the forward's rows, the mean over layers and heads and the
// rollout (residual ½) equal float64 references written here; a hybrid model's signed (conv) layer is
// shown on its own, signed, and refused — by name — in a mean or a rollout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, attentionRollout } from '../../src/js/index.js';
import { chatRow } from '../../web/demo-chat-row.js';
import { load } from './pretrained-files.mjs';

await init();

/** float32 maps against double references of the same float32 inputs. */
const TOL = 2e-6;
const IDS = [5, 17, 42, 88, 3, 61, 29, 11, 7];

/** The forward as the demo's model worker hands it over: every layer's (H, T, T) and its kind. */
async function forwardOf(name) {
  const model = await load(name);
  try {
    const out = model.forward([IDS], { attention: true });
    return { attention: out.attention.map((a) => a.data.slice()), kinds: out.attentionKinds };
  } finally {
    model.dispose();
  }
}

const near = (got, want, what) => {
  assert.equal(got.length, want.length, what);
  want.forEach((w, k) => assert.ok(Math.abs(got[k] - w) <= TOL, `${what}[${k}]: ${got[k]} vs ${w}`));
};

test('qwen3-tiny: a layer’s heads, the mean over layers and heads, and the rollout of one row', async () => {
  const r = await forwardOf('qwen3-tiny');
  const T = IDS.length,
    p = 6;
  const heads = (l) => r.attention[l].length / (T * T);
  const row = (l, h) => Array.from(r.attention[l].subarray(h * T * T + p * T, h * T * T + p * T + p + 1));

  const one = chatRow(r, T, p, { agg: 'layer', layer: 1, rollout: attentionRollout });
  assert.deepEqual(one.shape, [heads(1), 1, p + 1]);
  assert.equal(one.signed, false);
  for (let h = 0; h < heads(1); h++)
    near(one.weights.subarray(h * (p + 1), (h + 1) * (p + 1)), row(1, h), `head ${h}`);

  const mean = new Float64Array(p + 1);
  let n = 0;
  r.attention.forEach((_, l) => {
    for (let h = 0; h < heads(l); h++, n++) row(l, h).forEach((v, k) => (mean[k] += v));
  });
  const layers = chatRow(r, T, p, { agg: 'layers', layer: 0, rollout: attentionRollout });
  assert.deepEqual(layers.shape, [1, 1, p + 1]);
  near(
    layers.weights,
    Array.from(mean, (v) => v / n),
    'mean over layers and heads',
  );

  // Rollout in double: Â = ½·mean over heads + ½·I, rows renormalised; R = Â_{L−1} ⋯ Â_0.
  let R = null;
  r.attention.forEach((a, l) => {
    const hat = Array.from({ length: T * T }, (_, k) => {
      let s = 0;
      for (let h = 0; h < heads(l); h++) s += a[h * T * T + k];
      return 0.5 * (s / heads(l)) + (Math.floor(k / T) === k % T ? 0.5 : 0);
    });
    for (let i = 0; i < T; i++) {
      const s = hat.slice(i * T, (i + 1) * T).reduce((x, y) => x + y, 0);
      for (let j = 0; j < T; j++) hat[i * T + j] /= s;
    }
    R =
      R === null
        ? hat
        : hat.map((_, k) => {
            const i = Math.floor(k / T),
              j = k % T;
            let s = 0;
            for (let m = 0; m < T; m++) s += hat[i * T + m] * R[m * T + j];
            return s;
          });
  });
  const rolled = chatRow(r, T, p, { agg: 'rollout', layer: 0, rollout: attentionRollout });
  near(rolled.weights, R.slice(p * T, p * T + p + 1), 'rollout');
  assert.ok(Math.abs(rolled.weights.reduce((s, v) => s + v, 0) - 1) < 1e-5, 'a rollout row sums to 1');
});

test('lfm2-tiny: a conv layer is shown signed on its own, and refused by name in a mean or a rollout', async () => {
  const r = await forwardOf('lfm2-tiny');
  const T = IDS.length;
  const conv = r.kinds.indexOf('conv');
  assert.ok(conv >= 0, 'lfm2-tiny has a conv layer');
  const one = chatRow(r, T, 4, { agg: 'layer', layer: conv, rollout: attentionRollout });
  assert.equal(one.signed, true);
  for (const agg of ['layers', 'rollout'])
    assert.throws(
      () => chatRow(r, T, 4, { agg, layer: 0, rollout: attentionRollout }),
      new RegExp(`needs softmax attention in every layer: layer ${conv} is a conv layer`),
    );
});
