// YaRN (transformers' _compute_yarn_parameters) and Ministral 3's query temperature as the registry
// maps them onto the core's config (the forward itself: the ministral3-tiny fixture in every suite
// that reads tests/golden/pretrained/), and their refusals by name.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { coreConfig } from '../../src/js/pretrained/config.js';
import { preFlags } from '../../src/js/tokenizers/gguf-tokenizer-models.js';

const MINISTRAL = {
  architectures: ['Ministral3ForCausalLM'],
  model_type: 'ministral3',
  hidden_size: 64,
  num_attention_heads: 4,
  head_dim: 16,
  max_position_embeddings: 4096,
};
const LLAMA = { ...MINISTRAL, architectures: ['LlamaForCausalLM'], model_type: 'llama' };
// beta 0: YaRN alone (no query temperature)
const yarn = (extra) => ({
  rope_type: 'yarn',
  rope_theta: 10000,
  factor: 4,
  llama_4_scaling_beta: 0,
  ...extra,
});

describe('YaRN', () => {
  it("factor = max / original when original is given; the ramp between the correction dims; mscale's factor", () => {
    const { core } = coreConfig({
      ...MINISTRAL,
      rope_parameters: yarn({ original_max_position_embeddings: 1024, beta_fast: 32, beta_slow: 1 }),
    });
    const d = 16,
      f = 4096 / 1024;
    // correction dims d·ln(1024 / (β·2π)) / (2 ln 10000): 1.41 and 4.42, floored / ceiled: 1 and 5
    const ramp = (m) => Math.min(1, Math.max(0, (m - 1) / (5 - 1)));
    const want = Array.from({ length: d / 2 }, (_, m) => {
      const x = 1 / 10000 ** ((2 * m) / d);
      return (x / f) * ramp(m) + x * (1 - ramp(m));
    });
    assert.deepEqual(core.ropeInvFreq, want);
    assert.equal(core.ropeAttentionFactor, 1 + 0.1 * Math.log(f));
    assert.equal(core.queryTemperatureBeta, undefined);
  });

  it('attention_factor given; mscale / mscale_all_dim; without original: factor over max_position_embeddings', () => {
    const given = coreConfig({ ...MINISTRAL, rope_parameters: yarn({ attention_factor: 1.5 }) }).core;
    assert.equal(given.ropeAttentionFactor, 1.5);
    const ratio = coreConfig({
      ...MINISTRAL,
      rope_parameters: yarn({ mscale: 1, mscale_all_dim: 0.5 }),
    }).core;
    assert.equal(ratio.ropeAttentionFactor, (1 + 0.1 * Math.log(4)) / (1 + 0.05 * Math.log(4)));
  });

  it('refused by name: a bad key, Ministral 3 without its temperature, the temperature elsewhere', () => {
    const cases = [
      [
        { ...MINISTRAL, rope_parameters: yarn({ extrapolation_factor: 1 }) },
        /rope key "extrapolation_factor"/,
      ],
      [{ ...LLAMA, rope_parameters: yarn({}) }, /rope_type "yarn" is not implemented for LlamaForCausalLM/],
      [
        { ...LLAMA, rope_parameters: { rope_type: 'linear', factor: 2, llama_4_scaling_beta: 0.1 } },
        /rope key "llama_4_scaling_beta"/,
      ],
      [
        { ...MINISTRAL, rope_parameters: yarn({ max_position_embeddings: 8192 }) },
        /max_position_embeddings 8192 disagrees with max_position_embeddings 4096/,
      ],
      [
        {
          architectures: ['Ministral3ForCausalLM'],
          rope_parameters: yarn({ original_max_position_embeddings: 1024, llama_4_scaling_beta: undefined }),
        },
        /Ministral 3 needs rope llama_4_scaling_beta/,
      ],
    ];
    for (const [config, pattern] of cases) assert.throws(() => coreConfig(config), pattern);
  });
});

describe('Ministral 3', () => {
  it("no rope_parameters: Ministral3Config's YaRN and temperature (factor 16, original 16384, beta 0.1)", () => {
    const { core } = coreConfig({ architectures: ['Ministral3ForCausalLM'], model_type: 'ministral3' });
    assert.equal(core.ropeTheta, 1e6);
    assert.equal(core.queryTemperatureBeta, 0.1);
    assert.equal(core.queryTemperatureFloor, 16384);
    assert.equal(core.ropeAttentionFactor ?? 1, 1); // mscale = mscale_all_dim
    assert.equal(core.ropeInvFreq[0], 1);
    assert.equal(core.ropeInvFreq.at(-1), 1e6 ** (-126 / 128) / 16);
  });

  it("the GGUF Tekken pre-tokenizer: llama.cpp's flags", () => {
    assert.deepEqual(preFlags('tekken'), {
      name: 'tekken',
      regexes: 'tekken',
      ignoreMerges: true,
      addBos: true,
      cleanSpaces: false,
    });
  });
});
