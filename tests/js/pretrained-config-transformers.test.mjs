// The config.json files transformers writes (transformers-default-configs.json): every key a checkpoint
// saved by the real library carries loads.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, PRETRAINED_CONFIG_KEYS } from '../../src/js/index.js';
import { coreConfig } from '../../src/js/pretrained/config.js';

await init();

// What the real library writes (tests/golden/dump_transformers_configs.py, run once where transformers
// 5.17 was installed): a checkpoint saved by it carries every key of its config class.
describe('the config.json files transformers writes (transformers-default-configs.json)', () => {
  const dump = JSON.parse(
    readFileSync(new URL('../golden/transformers-default-configs.json', import.meta.url), 'utf8'),
  );
  const architectureOf = Object.fromEntries(
    Object.entries(PRETRAINED_CONFIG_KEYS).map(([a, t]) => [t.modelType, a]),
  );

  // Qwen3.5's and Gemma 4's classes are newer than the committed dump: tests/golden/dump_transformers_configs.py
  // lists them, and a machine with transformers rewrites the file (this one has none).
  const NOT_DUMPED_YET = ['Qwen3_5ForCausalLM', 'Gemma4ForCausalLM'];

  it('covers every architecture we load', () => {
    const dumped = Object.keys(dump.models).map((mt) => architectureOf[mt]);
    assert.deepEqual(
      [...dumped, ...NOT_DUMPED_YET.filter((a) => !dumped.includes(a))].sort(),
      Object.keys(PRETRAINED_CONFIG_KEYS).sort(),
    );
  });

  for (const [modelType, { saved, full }] of Object.entries(dump.models)) {
    const architecture = architectureOf[modelType];
    it(`${architecture}: the default config as saved and as to_dict() is accepted (every key known)`, () => {
      for (const config of [saved, full])
        assert.doesNotThrow(() => coreConfig({ ...config, architectures: [architecture] }));
    });

    it(`${architecture}: our class defaults equal transformers ${dump.transformers}'s where both are set`, () => {
      for (const [key, ours] of Object.entries(PRETRAINED_CONFIG_KEYS[architecture].implemented)) {
        const theirs = full[key];
        if (ours == null || theirs == null) continue; // derived (num_key_value_heads, head_dim, layer_types…)
        assert.deepEqual(ours, theirs, `${key}`);
      }
    });
  }

  it('Gemma 2: use_bidirectional_attention null (its class default) is accepted as false; true is refused', () => {
    const base = { ...dump.models.gemma2.saved, architectures: ['Gemma2ForCausalLM'] };
    assert.doesNotThrow(() => coreConfig({ ...base, use_bidirectional_attention: null }));
    assert.doesNotThrow(() => coreConfig({ ...base, use_bidirectional_attention: false }));
    assert.throws(
      () => coreConfig({ ...base, use_bidirectional_attention: true }),
      /use_bidirectional_attention = true/,
    );
  });
});
