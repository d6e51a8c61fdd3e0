// The interpretability adapter (src/js/interp/adapter.js) both model classes implement, and the core's
// shared forward hooks (src/model/interp_hooks.h) behind it: hidden states in Hugging Face's L + 1
// order for both, a run from a hidden state, the logit lens, the pre-cap logits; and no import cycle
// between the model classes and the interpretability modules.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fromStream } from './gradient-checks.mjs';
import { fileURLToPath } from 'node:url';
import { init, TinyTransformer } from '../../src/js/index.js';
import { loadCheckpoint } from './interp-checks.mjs';
import { small } from './tiny-transformer-setup.mjs';
import { FOLDER_IMPORTS, importGraph, layeringProblems } from '../../scripts/check-imports.mjs';

await init();

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ADAPTER_KEYS = [
  'L',
  'H',
  'E',
  'd',
  'vocab',
  'causal',
  'mlp',
  'forward',
  'finalSoftcap',
  'gradients',
  'outProj',
  'outBias',
  'normAfter',
  'branchScale',
  'finalNorm',
  'unembed',
  'embedding',
  'attention',
  'heads',
  'kind',
  'mixerHook',
  'zDim',
].sort();

const ids = Int32Array.from([3, 1, 4, 1, 5, 9]);

describe('the interpretability modules', () => {
  it('import neither model class (the folder layering: interp/ sees only the base values)', () => {
    assert.deepEqual(FOLDER_IMPORTS.interp, ['top']);
    const graph = importGraph(ROOT);
    const interp = Object.fromEntries(Object.entries(graph).filter(([f]) => f.startsWith('src/js/interp/')));
    assert.ok(Object.keys(interp).length >= 5, Object.keys(interp).join(', '));
    assert.deepEqual(layeringProblems(interp), []);
    for (const [file, targets] of Object.entries(interp))
      for (const t of targets) assert.ok(!/^src\/js\/(tiny|pretrained)\//.test(t), `${file} imports ${t}`);
  });
});

describe('the adapter of both model classes', () => {
  it('TinyTransformer: hidden states L + 1, [0] the embeddings, a run from each gives the same logits', () => {
    const model = new TinyTransformer({ ...small, positional: 'learned' });
    const a = model._interp();
    assert.deepEqual(Object.keys(a).sort(), ADAPTER_KEYS);
    const L = a.L,
      E = a.E,
      T = ids.length;
    const full = a.forward(ids, 1, T, {
      hiddenStates: true,
      capture: ['blocks.*.mlp.hook_out'],
      logitLens: true,
    });
    assert.equal(full.hiddenStates.length, L + 1);
    assert.equal(Object.keys(full.activations).length, L);
    const sd = model.stateDict();
    const tok = sd['tok_emb.weight'].data,
      pos = sd['pos_emb.weight'].data;
    for (let t = 0; t < T; t++)
      for (let i = 0; i < E; i++)
        assert.equal(full.hiddenStates[0].data[t * E + i], Math.fround(tok[ids[t] * E + i] + pos[t * E + i]));
    // the last hidden state is ln_f's output: the head of it is the logits
    const plain = model.forward(ids, { attention: false }).logits.data;
    assert.deepEqual(full.logits.data, plain);
    // the lens: (L + 1, 1, T), its last row the model's own top token
    assert.deepEqual(full.logitLens.shape, [L + 1, 1, T]);
    const V = a.vocab;
    for (let t = 0; t < T; t++) {
      const row = plain.subarray(t * V, (t + 1) * V);
      assert.equal(full.logitLens.ids[L * T + t], row.indexOf(Math.max(...row)));
    }
    for (let l = 0; l < L; l++) {
      const r = a.forward(ids, 1, T, fromStream(l, full.hiddenStates[l].data, T, E));
      assert.deepEqual(r.logits.data, plain, `from hidden state ${l}`);
    }
    model.dispose();
  });

  it('PretrainedModel: the same interface, hidden states L + 1 and the pre-cap logits', async () => {
    const model = await loadCheckpoint('gemma2-tiny');
    const a = model._interp();
    assert.deepEqual(Object.keys(a).sort(), ADAPTER_KEYS);
    const r = a.forward(ids, 1, ids.length, { hiddenStates: true, logitsRow: 2 });
    assert.equal(r.hiddenStates.length, a.L + 1);
    assert.deepEqual(r.logits.shape, [1, 1, a.vocab]);
    // Gemma 2 caps the forward's logits: the adapter's are the ones before the cap
    const cap = model.config.final_logit_softcapping;
    const capped = model.forward(ids, { attention: false }).logits;
    for (let v = 0; v < a.vocab; v++) {
      const want = capped.get(0, 2, v);
      assert.ok(Math.abs(cap * Math.tanh(r.logits.data[v] / cap) - want) <= 1e-5, `token ${v}`);
    }
    assert.equal(a.normAfter(0, 'attn').branch, true); // Gemma's post-norms act on a branch
    model.dispose();
  });
});
