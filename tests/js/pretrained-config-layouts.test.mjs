// config.json read right: both layouts (transformers 4: rope_theta + rope_scaling; transformers 5:
// rope_parameters) give the same bits, for every checkpoint folder with a transformers-5 config.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { init, AttentionError } from '../../src/js/index.js';
import { json, load, asTransformers5, rejects, IDS } from './pretrained-files.mjs';
import { listPretrained } from './fixture.js';

await init();

// every checkpoint folder that holds both layouts (config.json and config.transformers5.json)
const BOTH_LAYOUTS = listPretrained('config.transformers5.json');

describe('both config layouts', () => {
  for (const name of BOTH_LAYOUTS) {
    it(`${name}: transformers 4 and 5 layouts (and both at once) give identical logits and attention`, async () => {
      // config.transformers5.json: the fixture script's transformers-5 form of the same model.
      const v4 = json(name, 'config.json'),
        v5 = json(name, 'config.transformers5.json');
      assert.ok(!('rope_theta' in v5));
      if (v4.model_type === 'gemma3_text') {
        // one RoPE per layer type
        assert.equal(v5.rope_parameters.full_attention.rope_theta, v4.rope_theta);
        assert.equal(v5.rope_parameters.sliding_attention.rope_theta, v4.rope_local_base_freq);
      } else {
        assert.equal(v5.rope_parameters.rope_theta, v4.rope_theta);
        assert.deepEqual(v5, asTransformers5(v4, v5));
      }
      const outs = [];
      for (const config of [v4, v5, { ...v4, ...v5 }]) {
        const m = await load(name, config);
        const r = m.forward(IDS);
        outs.push([r.logits.data, ...r.attention.map((a) => a.data)]);
        m.dispose();
      }
      for (const other of outs.slice(1)) other.forEach((d, i) => assert.deepEqual(d, outs[0][i]));
    });
  }

  it('a transformers-5 file read as if it had no rope_parameters would differ (the bug of 0.5.0)', async () => {
    const v5 = asTransformers5(json('qwen2-tiny', 'config.json')); // rope_theta 1e6, default 10000
    const right = await load('qwen2-tiny', v5);
    const { rope_parameters: _, ...stripped } = v5;
    const wrong = await load('qwen2-tiny', stripped);
    assert.notDeepEqual(right.forward(IDS).logits.data, wrong.forward(IDS).logits.data);
    right.dispose();
    wrong.dispose();
  });

  it('both layouts present must agree', async () => {
    const v4 = json('llama3-scaled-tiny', 'config.json'),
      v5 = asTransformers5(v4);
    await rejects(
      { ...v4, rope_parameters: { ...v5.rope_parameters, rope_theta: 10000 } },
      'llama3-scaled-tiny',
      /disagrees with rope_theta/,
    );
    await rejects(
      { ...v4, rope_parameters: { ...v5.rope_parameters, factor: 2 } },
      'llama3-scaled-tiny',
      /disagrees/,
    );
    await rejects(
      {
        ...json('llama-tiny', 'config.json'),
        rope_parameters: { rope_type: 'linear', factor: 2, rope_theta: 10000 },
      },
      'llama-tiny',
      /disagrees/,
    );
  });

  it('rope_type "dynamic" equals the default up to original_max_position_embeddings and refuses longer inputs', async () => {
    const base = json('llama-tiny', 'config.json');
    const plain = await load('llama-tiny', base);
    const dynamic = await load('llama-tiny', {
      ...base,
      rope_scaling: { rope_type: 'dynamic', factor: 2, original_max_position_embeddings: 8 },
    });
    assert.equal(dynamic.maxPositions, 8);
    assert.deepEqual(dynamic.forward(IDS).logits.data, plain.forward(IDS).logits.data);
    assert.throws(() => dynamic.forward([[1, 2, 3, 4, 5, 6, 7, 8, 9]]), AttentionError);
    const v5 = await load(
      'llama-tiny',
      asTransformers5({ ...base, rope_scaling: { type: 'dynamic', factor: 2 } }),
    );
    assert.equal(v5.maxPositions, base.max_position_embeddings);
    for (const m of [plain, dynamic, v5]) m.dispose();
  });
});
