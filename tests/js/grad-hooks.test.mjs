// metricGradients' `hooks` option (src/js/interp/grad-hooks.js): ∂M/∂ an activation at a hook point,
// in the hook's own shape, against central finite differences of M through model.run with an `add`
// of ±h·v at that hook (the hook machinery's forward: a path independent of the backward), on
// TinyTransformers (pre-, post-, no norm; with and without an MLP) and pretrained fixtures (GPT-2,
// Llama, Gemma 2's sandwich norms); the layouts against gradHiddenStates / gradZ / gradAttention; the
// refusals by name, the model unchanged.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { init, Tensor } from '../../src/js/index.js';
import { patchMetric } from '../../src/js/interp/patch.js';
import { tiny, loadCheckpoint, direction, dotOf, near, refuses } from './gradient-checks.mjs';

await init();

// Central differences in float32: step H along a direction at the activation's own scale.
const H = 1e-2;
const FD_TOL = { abs: 2e-3, rel: 3e-2 };

// M of run()'s logits (after any final soft-cap: the probability metrics' distribution).
function metricOfRun(model, ids, o, edits) {
  const r = model.run(ids, { edits });
  const V = r.logits.shape[2],
    p = o.position ?? ids.length - 1;
  const metric = patchMetric({ metric: o.metric ?? 'logit-diff', token: o.token, against: o.against });
  return metric(r.logits.data.subarray(p * V, (p + 1) * V));
}

// gradHooks[hook]·v against (M(a + hv) − M(a − hv)) / 2h; the gradient's shape is the hook's.
function checkHook(model, ids, o, hook, what) {
  const T = ids.length;
  const g = model.metricGradients(ids, { ...o, hooks: [hook] }).gradHooks[hook];
  const base = model.run(ids, { capture: [hook] }).activations[hook];
  assert.deepEqual(g.shape, base.shape, `${what} ${hook}: the hook's shape`);
  const finite = base.data.filter(Number.isFinite);
  const rms = Math.sqrt(dotOf(finite, finite) / finite.length) || 1;
  const v = direction(base.data.length, T + hook.length).map((x) => x * rms);
  const at = (s) =>
    metricOfRun(model, ids, o, [
      {
        hook,
        op: 'add',
        value: new Tensor(
          Float32Array.from(v, (x) => s * x),
          base.shape,
        ),
      },
    ]);
  const fd = (at(H) - at(-H)) / (2 * H);
  const want = dotOf(g.data, v);
  assert.ok(near(want, fd, FD_TOL), `${what} ${hook}: ${want} vs fd ${fd}`);
}

const STREAM = ['hook_resid_pre', 'hook_resid_post', 'hook_mlp_out', 'attn.hook_z', 'attn.hook_pattern'];

describe('metricGradients hooks on TinyTransformer', () => {
  const ids = Int32Array.from([3, 1, 4, 1, 5, 9]);
  for (const norm of ['pre', 'post', 'none']) {
    it(`norm ${norm}: every supported hook of both layers against finite differences through run`, () => {
      const model = tiny({ norm });
      for (let l = 0; l < 2; l++)
        for (const h of STREAM)
          checkHook(model, ids, { token: 2, against: 7, position: 4 }, `blocks.${l}.${h}`, norm);
      checkHook(model, ids, { token: 8, metric: 'log-probability' }, 'blocks.0.hook_mlp_out', norm);
      model.dispose();
    });
  }

  it('without an MLP: hook_attn_out is the stream leaving the block (not after a final norm)', () => {
    const o = { token: 2, against: 7 };
    const none = tiny({ mlp: false, norm: 'none' });
    for (const h of ['blocks.0.hook_attn_out', 'blocks.1.hook_attn_out', 'blocks.1.hook_resid_post'])
      checkHook(none, ids, o, h, 'no MLP, no norm');
    none.dispose();
    const pre = tiny({ mlp: false });
    checkHook(pre, ids, o, 'blocks.0.hook_attn_out', 'no MLP, pre-norm');
    for (const h of ['blocks.1.hook_attn_out', 'blocks.1.hook_resid_post'])
      refuses(() => pre.metricGradients(ids, { ...o, hooks: [h] }), /final norm/);
    pre.dispose();
    const post = tiny({ mlp: false, norm: 'post' });
    refuses(() => post.metricGradients(ids, { ...o, hooks: ['blocks.0.hook_attn_out'] }), /a norm follows/);
    post.dispose();
  });

  it('the layouts: the same numbers as gradHiddenStates, gradZ (head-major) and gradAttention', () => {
    const model = tiny();
    const T = ids.length;
    const g = model.metricGradients(ids, {
      token: 2,
      attention: true,
      hooks: [
        'blocks.*.hook_resid_pre',
        'blocks.0.hook_resid_post',
        'blocks.*.attn.hook_z',
        'blocks.1.attn.hook_pattern',
      ],
    });
    assert.deepEqual(Object.keys(g.gradHooks), [
      'blocks.0.hook_resid_pre',
      'blocks.1.hook_resid_pre',
      'blocks.0.hook_resid_post',
      'blocks.0.attn.hook_z',
      'blocks.1.attn.hook_z',
      'blocks.1.attn.hook_pattern',
    ]);
    for (let l = 0; l < 2; l++) {
      assert.deepEqual(g.gradHooks[`blocks.${l}.hook_resid_pre`].data, g.gradHiddenStates[l].data);
      const z = g.gradHooks[`blocks.${l}.attn.hook_z`];
      assert.deepEqual(z.shape, [1, T, 2, 4]);
      for (let t = 0; t < T; t++)
        for (let h = 0; h < 2; h++)
          for (let j = 0; j < 4; j++) assert.equal(z.get(0, t, h, j), g.gradZ.get(l, h, t, j));
    }
    assert.deepEqual(g.gradHooks['blocks.0.hook_resid_post'].data, g.gradHiddenStates[1].data);
    assert.notEqual(g.gradHooks['blocks.0.hook_resid_post'].data, g.gradHiddenStates[1].data); // a copy
    assert.deepEqual(g.gradHooks['blocks.1.attn.hook_pattern'].shape, [1, 2, T, T]);
    assert.deepEqual(g.gradHooks['blocks.1.attn.hook_pattern'].data, g.gradAttention[1].data);
    const plain = model.metricGradients(ids, { token: 2, hooks: ['blocks.0.attn.hook_pattern'] });
    assert.equal(plain.gradAttention, null, 'a pattern hook alone does not add gradAttention');
    assert.deepEqual(model.metricGradients(ids, { token: 2 }).gradHooks, {});
    model.dispose();
  });

  it('other hooks are refused by name with the supported list; unknown ones as unknown; the model unchanged', () => {
    const model = tiny();
    const o = { token: 2 };
    const before = model.metricGradients(ids, o);
    for (const h of [
      'blocks.0.hook_resid_mid',
      'blocks.0.hook_attn_out',
      'blocks.1.attn.hook_q',
      'blocks.0.attn.hook_attn_scores',
      'blocks.0.mlp.hook_post',
      'hook_embed',
      'ln_final.hook_normalized',
    ])
      refuses(
        () => model.metricGradients(ids, { ...o, hooks: ['blocks.0.hook_resid_pre', h] }),
        new RegExp(
          `no gradient at hook "${h.replace(/\./g, '\\.')}".*supported: blocks\\.\\{0…1\\}\\.hook_resid_pre`,
        ),
      );
    refuses(
      () => model.metricGradients(ids, { ...o, hooks: ['blocks.*.attn.hook_rot_k'] }),
      /"blocks\.0\.attn\.hook_rot_k"/,
    );
    for (const h of ['blocks.2.hook_resid_pre', 'blocks.0.hook_nope', 'blocks.*.hook_nope', 'resid_pre', ''])
      refuses(() => model.metricGradients(ids, { ...o, hooks: [h] }), /unknown hook/);
    refuses(
      () => model.metricGradients(ids, { ...o, hooks: 'blocks.0.hook_resid_pre' }),
      /hooks must be an array/,
    );
    refuses(() => model.metricGradients(ids, { ...o, hooks: [0] }), /hooks must be an array/);
    const after = model.metricGradients(ids, o);
    assert.equal(after.value, before.value);
    assert.deepEqual(after.gradHiddenStates[0].data, before.gradHiddenStates[0].data);
    model.dispose();
  });
});

describe('metricGradients hooks on pretrained fixtures', () => {
  const ids = Int32Array.from([7, 52, 19, 83, 40, 11]);
  // Gemma 2's run() logits are after its final soft-cap: its check uses a probability metric (of the
  // capped distribution, as run returns it); the logit difference is of the pre-cap logits.
  const cases = [
    ['gpt2-tiny', { token: 24, against: 95 }],
    ['llama-tiny', { token: 24, against: 95 }],
    ['gemma2-tiny', { token: 24, metric: 'log-probability', position: 3 }],
  ];
  for (const [name, o] of cases) {
    it(`${name}: resid_pre, resid_post, mlp_out, z and pattern against finite differences through run`, async () => {
      const model = await loadCheckpoint(name);
      const L = model.layers.length;
      for (const h of STREAM) checkHook(model, ids, o, `blocks.${L - 1}.${h}`, name);
      checkHook(model, ids, o, 'blocks.0.hook_resid_pre', name);
      checkHook(model, ids, o, 'blocks.0.attn.hook_z', name);
      refuses(
        () => model.metricGradients(ids, { ...o, hooks: ['blocks.0.hook_attn_out'] }),
        /between the attention and the MLP/,
      );
      model.dispose();
    });
  }
});
