// The demo's plan for a long prompt (web/workers/long-prompt.js): what a prefill of T tokens will hold,
// stated before the run, against the formulas written out here from the fixtures' configs — the map
// state (2·T·(Σ H·d + Σ H_kv·d of the layers whose keys are read), docs/api.md "Long prompts"), the float32 KV cache of each softmax layer
// with its own keys (Gemma 4's shared-key layers hold none, LFM2's conv layer none) — and the refusal
// of a prompt that does not fit the page's 3 GiB, decided without allocating it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../src/js/index.js';
import { json, load } from './pretrained-files.mjs';
import { plan } from '../../web/workers/long-prompt.js';

await init();
const BUDGET = 3 * 2 ** 30;

// Per fixture: each softmax layer's [H·d (queries), H_kv·d of the keys it reads, whether it holds
// its own K/V], from config.json.
function layersOf(name) {
  const c = json(name, 'config.json');
  const H = c.num_attention_heads,
    kv = c.num_key_value_heads;
  if (name === 'llama-tiny') return [0, 1].map(() => [H * c.head_dim, kv * c.head_dim, true]);
  if (name === 'lfm2-tiny') return [[H * (c.hidden_size / H), kv * (c.hidden_size / H), true]];
  // gemma4-tiny: sliding layers head_dim, full layers global_head_dim; the last two layers read the
  // keys of the first two (num_kv_shared_layers)
  const d = c.layer_types.map((t) => (t === 'full_attention' ? c.global_head_dim : c.head_dim));
  const shared = c.num_kv_shared_layers;
  return d.map((dl, l) => [H * dl, kv * dl, l < d.length - shared]);
}

for (const name of ['llama-tiny', 'lfm2-tiny', 'gemma4-tiny']) {
  test(`${name}: the plan's map state, KV cache and weights, and the refusal of what does not fit`, async () => {
    const model = await load(name);
    const layers = layersOf(name);
    for (const T of [700, 4096]) {
      const p = plan(model, T);
      const mapBytes = layers.reduce((n, [q, k, own]) => n + 2 * T * (q + (own ? k : 0)), 0);
      const kvBytes = layers.reduce((n, [, k, own]) => n + (own ? 2 * 4 * T * k : 0), 0);
      assert.deepEqual(
        [p.T, p.mapBytes, p.kvBytes, p.weightBytes, p.total, p.fits, p.why],
        [T, mapBytes, kvBytes, model.weightBytes, model.weightBytes + mapBytes + kvBytes, true, ''],
      );
    }
    // The smallest T whose state passes the budget, and the one below it.
    const perToken = plan(model, 1).total - model.weightBytes;
    const over = Math.floor((BUDGET - model.weightBytes) / perToken) + 1;
    assert.equal(plan(model, over - 1).fits, true);
    const p = plan(model, over);
    assert.equal(p.fits, false);
    assert.equal(
      p.why,
      `the run needs ${p.total} bytes, more than the ${BUDGET} bytes this page gives a model`,
    );
    model.dispose();
  });
}
