#!/usr/bin/env node
// `npm run bench:shapes [-- qwen3-0.6b gemma3-270m gemma3-1b olmo2-1b]`: the docs' memory claims. For each family the docs'
// checkpoint table lists, a checkpoint of the released model's exact shape (config.json as published,
// BF16, seeded random weights; written under bench/.cache/ at run time, never committed) is loaded in
// Node from a Blob under the memoryLimit the table states, then checked as the SmolLM2 check is
// (bench/smollm2_check.mjs: a forward of 8 ids, logits finite, attention rows sum to 1; 8 tokens). Prints file size, heap, times;
// exit 1 on any failure. Families whose released sizes do not fit the 4 GiB heap (SmolLM3-3B,
// Phi-3-mini, Mistral-7B) are proven by their tiny fixtures instead.
import { openAsBlob } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { writeShapedCheckpoint } from './shaped_checkpoint.mjs';
import { checkModel, describe } from './smollm2_check.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const common = {
  hidden_act: 'silu',
  rms_norm_eps: 1e-6,
  use_cache: true,
  torch_dtype: 'bfloat16',
  rope_scaling: null,
};
const gemma3 = {
  architectures: ['Gemma3ForCausalLM'],
  model_type: 'gemma3_text',
  hidden_activation: 'gelu_pytorch_tanh',
  rms_norm_eps: 1e-6,
  vocab_size: 262144,
  rope_theta: 1000000,
  rope_local_base_freq: 10000,
  rope_scaling: null,
  query_pre_attn_scalar: 256,
  tie_word_embeddings: true,
  attention_bias: false,
  attn_logit_softcapping: null,
  final_logit_softcapping: null,
  use_cache: true,
  torch_dtype: 'bfloat16',
  eos_token_id: 1,
  bos_token_id: 2,
  pad_token_id: 0,
};
export const SHAPES = {
  // Qwen/Qwen3-0.6B's config.json
  'qwen3-0.6b': {
    memoryLimit: 1.6e9,
    config: {
      ...common,
      architectures: ['Qwen3ForCausalLM'],
      model_type: 'qwen3',
      hidden_size: 1024,
      intermediate_size: 3072,
      num_hidden_layers: 28,
      num_attention_heads: 16,
      num_key_value_heads: 8,
      head_dim: 128,
      vocab_size: 151936,
      max_position_embeddings: 40960,
      rope_theta: 1000000,
      tie_word_embeddings: true,
      attention_bias: false,
      use_sliding_window: false,
      sliding_window: null,
      max_window_layers: 28,
      eos_token_id: 151645,
    },
  },
  // allenai/OLMo-2-0425-1B's config.json
  'olmo2-1b': {
    memoryLimit: 3.4e9,
    config: {
      ...common,
      architectures: ['Olmo2ForCausalLM'],
      model_type: 'olmo2',
      hidden_size: 2048,
      intermediate_size: 8192,
      num_hidden_layers: 16,
      num_attention_heads: 16,
      num_key_value_heads: 16,
      vocab_size: 100352,
      max_position_embeddings: 4096,
      rope_theta: 500000,
      tie_word_embeddings: false,
      attention_bias: false,
      eos_token_id: 100257,
      pad_token_id: 100277,
    },
  },
  // google/gemma-3-270m's config.json
  'gemma3-270m': {
    memoryLimit: 0.8e9,
    config: {
      ...gemma3,
      hidden_size: 640,
      intermediate_size: 2048,
      num_hidden_layers: 18,
      num_attention_heads: 4,
      num_key_value_heads: 1,
      head_dim: 256,
      max_position_embeddings: 32768,
      sliding_window: 512,
      layer_types: Array.from({ length: 18 }, (_, i) =>
        (i + 1) % 6 ? 'sliding_attention' : 'full_attention',
      ),
    },
  },
  // google/gemma-3-1b-pt's config.json
  'gemma3-1b': {
    memoryLimit: 2.4e9,
    config: {
      ...gemma3,
      hidden_size: 1152,
      intermediate_size: 6912,
      num_hidden_layers: 26,
      num_attention_heads: 4,
      num_key_value_heads: 1,
      head_dim: 256,
      max_position_embeddings: 32768,
      sliding_window: 512,
      sliding_window_pattern: 6,
    },
  },
};

async function run(attn, name, { memoryLimit, config }) {
  const t0 = performance.now();
  const { file, size, written } = writeShapedCheckpoint(path.join(here, '.cache', `${name}-shaped`), config);
  if (written)
    console.log(
      `${name}: wrote ${file} (${(size / 1e6).toFixed(0)} MB) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
  const r = await checkModel(attn, await openAsBlob(file), size, { config, memoryLimit });
  console.log(describe(`${name}, memoryLimit ${memoryLimit.toExponential(1)}, 1 thread`, r));
  return r.problems.map((p) => `${name}: ${p}`);
}

async function main() {
  const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const names = wanted.length ? wanted : Object.keys(SHAPES);
  const attn = await import('../src/js/index.js');
  await attn.init();
  const problems = [];
  for (const name of names) {
    if (!SHAPES[name]) throw new Error(`unknown shape ${name}; known: ${Object.keys(SHAPES).join(', ')}`);
    problems.push(...(await run(attn, name, SHAPES[name])));
  }
  if (problems.length) console.error(problems.join('\n'));
  process.exit(problems.length ? 1 : 0);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
