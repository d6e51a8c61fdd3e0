// TinyTransformer's parameters and config: shape names and aliases, defaults, parameterCount, the state
// dict round trip, rope / alibi / grouped-query / window variants, seeded weights.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { init, TinyTransformer } from '../../src/js/index.js';
import { small } from './tiny-transformer-setup.mjs';

await init();

describe('parameters and config', () => {
  it('the shape names PretrainedModel has (numLayers … maxPositions), dModel and maxLength as aliases', () => {
    const model = new TinyTransformer({
      vocabSize: 7,
      maxLength: 5,
      dModel: 12,
      numHeads: 4,
      numKVHeads: 2,
      numLayers: 3,
    });
    const names = [
      'numLayers',
      'numHeads',
      'numKVHeads',
      'headDim',
      'hiddenSize',
      'vocabSize',
      'maxPositions',
      'dModel',
      'maxLength',
    ];
    assert.deepEqual(Object.fromEntries(names.map((n) => [n, model[n]])), {
      numLayers: 3,
      numHeads: 4,
      numKVHeads: 2,
      headDim: 3,
      hiddenSize: 12,
      vocabSize: 7,
      maxPositions: 5,
      dModel: 12,
      maxLength: 5,
    });
    assert.throws(
      () => {
        'use strict';
        model.numLayers = 9;
      },
      TypeError,
      'read-only',
    );
    model.dispose();
  });

  it('config has every default; parameterCount is Σ numel; stateDict round-trips exactly', () => {
    const model = new TinyTransformer({ vocabSize: 5, maxLength: 4, dModel: 8, numHeads: 2 });
    assert.deepEqual(model.config, {
      vocabSize: 5,
      maxLength: 4,
      dModel: 8,
      numHeads: 2,
      numLayers: 1,
      mlp: true,
      mlpHidden: 32,
      positional: 'learned',
      norm: 'pre',
      causal: true,
      seed: 0,
      numKVHeads: 2,
      window: null,
    });
    assert.ok(Object.isFrozen(model.config));
    const sd = model.stateDict();
    assert.equal(
      model.parameterCount,
      Object.values(sd).reduce((n, t) => n + t.size, 0),
    );
    // 5·8 tok + 4·8 pos + (2·8 ln1 + 3·8·8 + 3·8 + 8·8 + 8 + 2·8 ln2 + 32·8 + 32 + 8·32 + 8) + 2·8 ln_f + 5·8 + 5
    assert.equal(
      model.parameterCount,
      40 + 32 + (16 + 192 + 24 + 64 + 8 + 16 + 256 + 32 + 256 + 8) + 16 + 45,
    );
    const other = new TinyTransformer({ ...model.config, seed: 9 });
    assert.notDeepEqual(other.stateDict()['head.weight'].data, sd['head.weight'].data);
    other.loadStateDict(sd);
    for (const [name, t] of Object.entries(other.stateDict())) assert.deepEqual(t.data, sd[name].data, name);
    assert.deepEqual(other.forward([1, 2, 3]).logits.data, model.forward([1, 2, 3]).logits.data);
    model.dispose();
    other.dispose();
  });

  it("today's attention: positional rope / alibi, numKVHeads, window; trains, exports and reloads", () => {
    const model = new TinyTransformer({
      vocabSize: 7,
      maxLength: 8,
      dModel: 8,
      numHeads: 4,
      numKVHeads: 2,
      positional: 'rope',
      window: 3,
    });
    const names = Object.keys(model.stateDict());
    assert.ok(!names.includes('pos_emb.weight'));
    assert.deepEqual(
      names.filter((n) => n.startsWith('blocks.0.attn.')),
      [
        'q_proj_weight',
        'k_proj_weight',
        'v_proj_weight',
        'in_proj_bias',
        'out_proj.weight',
        'out_proj.bias',
      ].map((n) => `blocks.0.attn.${n}`),
    );
    assert.deepEqual(model.stateDict()['blocks.0.attn.k_proj_weight'].shape, [4, 8]);
    const { trace, attention } = model.forward([1, 2, 3, 4, 5], { trace: true });
    assert.ok(trace[0].some((s) => s.name === 'q_rotated'));
    const w = attention[0].data; // (1, 4, 5, 5): window 3, causal
    for (let h = 0; h < 4; h++)
      for (let i = 0; i < 5; i++)
        for (let j = 0; j < 5; j++) {
          if (j > i || i - j >= 3) assert.equal(w[(h * 5 + i) * 5 + j], 0, `head ${h} (${i}, ${j})`);
        }
    const { grads } = model.gradients([[1, 2, 3, 4]], [[2, 3, 4, 5]]);
    assert.ok(Object.values(grads).every((g) => g.data.every(Number.isFinite)));
    const copy = TinyTransformer.fromSafetensors(model.toSafetensors());
    assert.deepEqual(copy.config, model.config);
    assert.deepEqual(copy.forward([1, 2, 3]).logits.data, model.forward([1, 2, 3]).logits.data);
    const alibi = new TinyTransformer({
      vocabSize: 7,
      maxLength: 8,
      dModel: 8,
      numHeads: 2,
      positional: 'alibi',
    });
    assert.ok(alibi.forward([1, 2], { trace: true }).trace[0].some((s) => s.name === 'alibi'));
    assert.throws(
      () => new TinyTransformer({ vocabSize: 7, maxLength: 8, dModel: 8, numHeads: 4, numKVHeads: 3 }),
      (e) => e.code === 'HEADS_DO_NOT_DIVIDE' && /numKVHeads 3/.test(e.message),
    );
    assert.throws(
      () => new TinyTransformer({ vocabSize: 7, maxLength: 8, dModel: 8, numHeads: 2, window: 0 }),
      (e) => e.code === 'INVALID_ARGUMENT' && /window/.test(e.message),
    );
    for (const m of [model, copy, alibi]) m.dispose();
  });

  it('the same seed gives the same weights; variants have the documented parameters', () => {
    const a = new TinyTransformer({ ...small, numLayers: 1 });
    const b = new TinyTransformer({ ...small, numLayers: 1 });
    assert.deepEqual(a.stateDict(), b.stateDict());
    const bare = new TinyTransformer({
      ...small,
      numLayers: 1,
      mlp: false,
      norm: 'none',
      positional: 'sinusoidal',
    });
    assert.deepEqual(Object.keys(bare.stateDict()), [
      'tok_emb.weight',
      'blocks.0.attn.in_proj_weight',
      'blocks.0.attn.in_proj_bias',
      'blocks.0.attn.out_proj.weight',
      'blocks.0.attn.out_proj.bias',
      'head.weight',
      'head.bias',
    ]);
    for (const m of [a, b, bare]) m.dispose();
  });
});
