// The step view's delta rule (web/widgets/attention/delta-rule-data.js), walked in float64 from a
// Qwen3.5 layer's captured hooks, against the library on the seeded qwen3_5-tiny fixture: its o_t
// equals the layer's hook_o (the read before the gated norm), and Σ_s A[t,s]·v_s over the library's
// effective attention equals the same o_t — past one 64-row chunk of the library's chunked prefill.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../src/js/index.js';
import { json, load } from './pretrained-files.mjs';
import {
  deltaHeadFromActivations,
  deltaHooks,
  deltaOutputs,
  deltaWalk,
  keyHeadOf,
  mixValues,
} from '../../web/widgets/attention/delta-rule-data.js';

const NAME = 'qwen3_5-tiny';
await init();
const model = await load(NAME);
// float32 forward (and its chunked WY prefill) against a float64 walk over float32 hooks.
const TOL = 1e-5;
const close = (got, want, what) => {
  let worst = 0,
    scale = 0;
  for (let j = 0; j < want.length; j++) {
    worst = Math.max(worst, Math.abs(got[j] - want[j]));
    scale = Math.max(scale, Math.abs(want[j]));
  }
  assert.ok(worst <= TOL * (1 + scale), `${what}: |diff| ${worst} > ${TOL}·(1 + ${scale})`);
};

describe('the delta rule step by step (float64, from hooks)', () => {
  const cases = json(NAME, 'expected.json').cases;
  for (const name of ['b1_t7', 'b1_t70']) {
    it(`${name}: o_t = hook_o and Σ_s A[t,s]·v_s = o_t for every value head of both DeltaNet layers`, () => {
      const ids = cases.find((c) => c.name === name).input_ids.data;
      const T = ids.length;
      const { attention } = model.forward([ids], { attention: true });
      for (const layer of [0, 1]) {
        const hookO = `blocks.${layer}.linear_attn.hook_o`;
        const { activations } = model.run([ids], { capture: [...deltaHooks(layer), hookO] });
        const { heads: vHeads, valueDim: dv } = model.layers[layer];
        for (let h = 0; h < vHeads; h++) {
          const head = deltaHeadFromActivations(activations, layer, h);
          const outs = deltaOutputs(head);
          const map = attention[layer].data.subarray(h * T * T, (h + 1) * T * T);
          for (let t = 0; t < T; t++) {
            const o = activations[hookO].data;
            const want = Array.from({ length: dv }, (_, j) => o[(t * vHeads + h) * dv + j]);
            close(outs[t], want, `layer ${layer} head ${h} token ${t}: o_t vs hook_o`);
            close(mixValues(head, map, t), outs[t], `layer ${layer} head ${h} token ${t}: Σ A v vs o_t`);
          }
          const last = deltaWalk(head, T - 1);
          assert.deepEqual(Array.from(last.o), Array.from(outs[T - 1])); // the walk and the scan agree
        }
      }
    });
  }

  it('the four steps: decay scales the state, the write adds k·uᵀ, u = β(v − S′ᵀk)', () => {
    const ids = cases.find((c) => c.name === 'b1_t7').input_ids.data;
    const { activations } = model.run([ids], { capture: deltaHooks(0) });
    const head = deltaHeadFromActivations(activations, 0, 3);
    assert.equal(head.keyHead, 1); // grouped: 4 value heads on 2 key heads
    const s = deltaWalk(head, 4);
    assert.ok(s.decay > 0 && s.decay < 1, `e^g = ${s.decay}`);
    for (let i = 0; i < s.before.length; i++) assert.equal(s.decayed[i], s.before[i] * s.decay);
    // After the write the state predicts β·v + (1 − β)·S′ᵀk for k (|k| = 1 up to eps).
    const again = Array.from({ length: head.dv }, (_, j) => {
      let x = 0;
      for (let i = 0; i < head.dk; i++) x += s.after[i * head.dv + j] * head.k[4][i];
      return x;
    });
    const want = s.prediction.map((p, j) => head.beta[4] * head.v[4][j] + (1 - head.beta[4]) * p);
    close(again, want, 'the state after the write, read at k_t');
  });

  it('value heads on key heads (grouped, tiled); bad heads, tokens and captures refused', () => {
    assert.deepEqual(
      [0, 1, 2, 3].map((h) => keyHeadOf(h, 4, 2)),
      [0, 0, 1, 1],
    );
    assert.deepEqual(
      [0, 1, 2, 3].map((h) => keyHeadOf(h, 4, 2, 'tiled')),
      [0, 1, 0, 1],
    );
    assert.throws(() => keyHeadOf(0, 4, 2, 'other'), RangeError);
    // The wrong order reads another key head: far from the layer's own o (the check above can fail).
    const ids = cases.find((c) => c.name === 'b1_t7').input_ids.data;
    const hookO = 'blocks.0.linear_attn.hook_o';
    const run = model.run([ids], { capture: [...deltaHooks(0), hookO] }).activations;
    const wrong = deltaOutputs(deltaHeadFromActivations(run, 0, 1, { layout: 'tiled' }));
    let worst = 0;
    for (let t = 0; t < ids.length; t++)
      for (let j = 0; j < 6; j++)
        worst = Math.max(worst, Math.abs(wrong[t][j] - run[hookO].data[(t * 4 + 1) * 6 + j]));
    assert.ok(worst > 100 * TOL, `the tiled order on a folder's grouped heads: |diff| ${worst}`);
    const { activations } = model.run([[1, 2, 3]], { capture: deltaHooks(1) });
    assert.throws(() => deltaHeadFromActivations(activations, 1, 4), /head must be/);
    assert.throws(() => deltaHeadFromActivations(activations, 0, 0), /hook_q/);
    const head = deltaHeadFromActivations(activations, 1, 0);
    assert.throws(() => deltaWalk(head, 3), /token must be/);
  });
});
