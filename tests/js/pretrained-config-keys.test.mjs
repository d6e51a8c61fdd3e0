// config.json keys: every key outside the architecture's table, a default-only key off its default, an
// unimplemented rope_type, quantization_config and auto_map are INVALID_ARGUMENT naming themselves; inert
// keys load; model.layers and the exported tables.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, PRETRAINED_CONFIG_KEYS } from '../../src/js/index.js';
import { DOC, docSection, renderKeyTables } from '../../scripts/config-keys-doc.mjs';
import { json, load, asTransformers5, rejects, IDS } from './pretrained-files.mjs';

await init();

describe('keys outside the table are refused, naming the key and value', () => {
  const llama = json('llama-tiny', 'config.json'),
    qwen = json('qwen2-tiny', 'config.json'),
    gpt2 = json('gpt2-tiny', 'config.json');
  const gemma = json('gemma3-tiny', 'config.json');
  const cases = [
    [
      'an unknown key',
      'llama-tiny',
      { ...llama, attn_logit_softcapping: 50 },
      /key "attn_logit_softcapping" \(50\) is not implemented for LlamaForCausalLM/,
    ],
    [
      'attention_bias: true',
      'llama-tiny',
      { ...llama, attention_bias: true },
      /attention_bias = true is not implemented.*only false/,
    ],
    ['mlp_bias: true', 'llama-tiny', { ...llama, mlp_bias: true }, /mlp_bias = true/],
    ['pretraining_tp 2', 'llama-tiny', { ...llama, pretraining_tp: 2 }, /pretraining_tp = 2/],
    [
      'GPT-2 scale_attn_by_inverse_layer_idx',
      'gpt2-tiny',
      { ...gpt2, scale_attn_by_inverse_layer_idx: true },
      /scale_attn_by_inverse_layer_idx = true/,
    ],
    [
      'GPT-2 untied head',
      'gpt2-tiny',
      { ...gpt2, tie_word_embeddings: false },
      /tie_word_embeddings = false/,
    ],
    [
      'quantization_config',
      'llama-tiny',
      { ...llama, quantization_config: { quant_method: 'gptq' } },
      /quantization_config: quantized checkpoints are not supported/,
    ],
    ['auto_map', 'llama-tiny', { ...llama, auto_map: { AutoModelForCausalLM: 'modeling_x.X' } }, /auto_map/],
    [
      'rope_type yarn (4.x)',
      'llama-tiny',
      { ...llama, rope_scaling: { rope_type: 'yarn', factor: 4 } },
      /rope_type "yarn" is not implemented/,
    ],
    [
      'rope_type longrope (5.x)',
      'llama-tiny',
      { ...asTransformers5(llama), rope_parameters: { rope_type: 'longrope', rope_theta: 1e4 } },
      /rope_type "longrope"/,
    ],
    [
      'an unknown rope key',
      'llama-tiny',
      { ...llama, rope_scaling: { rope_type: 'linear', factor: 2, attention_factor: 1.5 } },
      /rope key "attention_factor"/,
    ],
    [
      'partial_rotary_factor 0.5',
      'llama-tiny',
      asTransformers5({ ...llama, rope_scaling: { rope_type: 'default', partial_rotary_factor: 0.5 } }),
      /partial_rotary_factor = 0.5 is not implemented for LlamaForCausalLM/,
    ],
    [
      'rope per layer type',
      'llama-tiny',
      {
        ...asTransformers5(llama),
        rope_parameters: { full_attention: { rope_type: 'default', rope_theta: 1e4 } },
      },
      /per layer type/,
    ],
    [
      'an unknown architecture',
      'llama-tiny',
      { ...llama, architectures: ['MambaForCausalLM'] },
      /architecture "MambaForCausalLM" is not supported/,
    ],
    [
      'model_type disagreeing',
      'llama-tiny',
      { ...llama, model_type: 'mistral' },
      /model_type "mistral" does not match architecture LlamaForCausalLM/,
    ],
    [
      'Qwen2 sliding layers',
      'qwen2-tiny',
      { ...qwen, layer_types: ['sliding_attention', 'full_attention'] },
      /layer_types/,
    ],
    [
      'Gemma 2-style attention soft-capping',
      'gemma3-tiny',
      { ...gemma, attn_logit_softcapping: 50 },
      /attn_logit_softcapping = 50 is not implemented for Gemma3ForCausalLM \(only null\)/,
    ],
    [
      'Gemma final-logit soft-capping',
      'gemma3-tiny',
      { ...gemma, final_logit_softcapping: 30 },
      /final_logit_softcapping = 30/,
    ],
    [
      'Gemma bidirectional attention',
      'gemma3-tiny',
      { ...gemma, use_bidirectional_attention: true },
      /use_bidirectional_attention = true/,
    ],
    [
      'Gemma layer_types too short',
      'gemma3-tiny',
      { ...gemma, layer_types: ['sliding_attention'] },
      /layer_types must list/,
    ],
    [
      'Gemma rope layouts disagreeing',
      'gemma3-tiny',
      {
        ...gemma,
        rope_parameters: {
          full_attention: { rope_type: 'default', rope_theta: 1e6 },
          sliding_attention: { rope_type: 'default', rope_theta: 1e4 },
        },
      },
      /disagrees/,
    ],
    [
      'Gemma scaled local RoPE',
      'gemma3-tiny',
      {
        ...json('gemma3-tiny', 'config.transformers5.json'),
        rope_parameters: {
          full_attention: { rope_type: 'default', rope_theta: 1e6 },
          sliding_attention: { rope_type: 'linear', factor: 2, rope_theta: 1e4 },
        },
      },
      /sliding layers is not implemented/,
    ],
    [
      'Gemma rope_parameters without a layer type',
      'gemma3-tiny',
      {
        ...json('gemma3-tiny', 'config.transformers5.json'),
        rope_parameters: { rope_type: 'default', rope_theta: 1e6 },
      },
      /exactly "full_attention" and "sliding_attention"/,
    ],
    [
      'Gemma hidden_activation',
      'gemma3-tiny',
      { ...gemma, hidden_activation: 'gelu' },
      /hidden_activation "gelu" is not supported/,
    ],
    [
      'Qwen2 layer_types of the wrong length',
      'qwen2-tiny',
      { ...qwen, use_sliding_window: true, layer_types: ['sliding_attention'] },
      /layer_types must list/,
    ],
    [
      'a negative sliding_window',
      'qwen2-tiny',
      { ...qwen, use_sliding_window: true, sliding_window: -4, max_window_layers: 0 },
      /sliding_window must be a positive integer/,
    ],
  ];
  for (const [what, name, config, pattern] of cases) it(what, () => rejects(config, name, pattern));

  it("Gemma 2: attribution explains the logits before final soft-capping (the forward's are capped)", async () => {
    const m = await load('gemma2-tiny');
    const cap = m.config.final_logit_softcapping,
      ids = [5, 17, 42];
    const capped = m.forward([ids]).logits;
    for (const token of [1, 2, 60]) {
      const pre = m.logitAttribution(ids, { token }).logitDiff; // without `against`: the logit itself
      const want = capped.get(0, 2, token);
      assert.ok(
        Math.abs(cap * Math.tanh(pre / cap) - want) <= 1e-5,
        `cap·tanh(${pre} / cap) vs the forward's ${want}`,
      );
      assert.ok(Math.abs(pre) >= Math.abs(want) - 1e-6, 'the pre-cap logit is at least as large');
    }
    m.dispose();
  });

  it('inert keys load, whatever their value; the module stays usable', async () => {
    const m = await load('llama-tiny', {
      ...llama,
      attention_dropout: 0.3,
      initializer_range: 1,
      use_cache: false,
      _name_or_path: 'x',
      transformers_version: '5.17.0',
      dtype: 'bfloat16',
    });
    assert.equal(m.forward(IDS).logits.shape[2], 96);
    m.dispose();
  });

  it("docs/checkpoints.md lists exactly the code's tables (node scripts/config-keys-doc.mjs rewrites it)", () => {
    assert.equal(docSection(readFileSync(DOC, 'utf8')), renderKeyTables());
  });

  it('model.layers says what differs between layers', async () => {
    const gemma = await load('gemma3-tiny'),
      smol = await load('smollm3-tiny'),
      gpt2 = await load('gpt2-tiny'),
      gemma2 = await load('gemma2-tiny');
    assert.deepEqual(
      gemma.layers.map((l) => [l.window, l.rope, l.ropeTheta, l.ropeScaled, l.qkNorm, l.softcap]),
      [
        [3, true, 10000, false, true, 0],
        [0, true, 1000000, true, true, 0],
      ],
    );
    assert.deepEqual(
      smol.layers.map((l) => [l.rope, l.ropeTheta]),
      [
        [true, 2000000],
        [false, null],
      ],
    );
    assert.deepEqual(
      gpt2.layers.map((l) => [l.window, l.rope]),
      [
        [0, false],
        [0, false],
      ],
    );
    assert.deepEqual(
      gemma2.layers.map((l) => [l.window, l.softcap]),
      [
        [3, 5],
        [0, 5],
      ],
    );
    for (const m of [gemma, smol, gpt2, gemma2]) m.dispose();
  });

  it('the tables are exported and every key is in exactly one class', () => {
    for (const [arch, t] of Object.entries(PRETRAINED_CONFIG_KEYS)) {
      const all = [...Object.keys(t.implemented), ...t.inert, ...Object.keys(t.defaultOnly)];
      assert.equal(new Set(all).size, all.length, `${arch}: a key listed twice`);
    }
  });
});
