// Granite (transformers' GraniteForCausalLM; llama.cpp's "granite"): Llama with four scalars —
// embeddings × embedding_multiplier, each branch × residual_multiplier before its residual add, scores
// scaled by attention_multiplier (instead of 1/√head_dim), logits ÷ logits_scaling.
import { LLAMA_TENSORS, llamaCore, llamaKeys } from './llama-layout.js';
import { llamaGGUF } from './gguf-layout.js';
import { invalid } from './shared.js';

export default {
  architecture: 'GraniteForCausalLM',
  name: 'Granite',
  keys: {
    modelType: 'granite',
    implemented: llamaKeys(
      {},
      { embedding_multiplier: 1, residual_multiplier: 1, attention_multiplier: 1, logits_scaling: 1 },
    ),
    inert: ['attention_dropout'],
    defaultOnly: { attention_bias: false, mlp_bias: false },
  },
  core: llamaCore,
  variant: { multipliers: true },
  // Its row of the architectures table of docs/checkpoints.md (scripts/config-keys-doc.mjs).
  docs: {
    computes:
      'embeddings × `embedding_multiplier`, each branch × `residual_multiplier` before its residual add (the hooks `hook_attn_out` / `hook_mlp_out` hold the branch as added), scores × `attention_multiplier` (instead of 1/√head_dim), logits ÷ `logits_scaling` (the interpretability tools explain the scaled logits)',
    fixtures: '`granite-tiny` (embedding 3, residual 0.5, attention 0.3, logits ÷ 2.5; GQA)',
  },
  // GGUF: llama.cpp's rope type NORM (q/k rows permuted by its converter, GraniteModel(LlamaModel));
  // the four scalars as embedding_scale, residual_scale, attention.scale and logit_scale (the last
  // needed; a missing or 0 other one: llama.cpp skips that step, i.e. 1, or 1/√head_dim in float32
  // for the score); rope.scaling.finetuned false switches RoPE off in llama.cpp's Granite: refused.
  gguf: llamaGGUF(['granite'], {
    permutedQK: true,
    ropeFreqs: true,
    config: (read) => {
      if (read('rope.scaling.finetuned', true) === false)
        throw invalid('gguf: granite.rope.scaling.finetuned false (Granite without RoPE) is not implemented');
      return {
        embedding_multiplier: orOne(read('embedding_scale', 0)),
        residual_multiplier: orOne(read('residual_scale', 0)),
        attention_multiplier: read('attention.scale', 0) || defaultScale(read),
        logits_scaling: read('logit_scale'),
      };
    },
  }),
  tensors: LLAMA_TENSORS,
};

const orOne = (v) => (v === 0 ? 1 : v);
// llama.cpp's 1.0f / sqrtf(n_embd_head) as a number (exact once the core rounds it to float32).
function defaultScale(read) {
  const d = read('attention.key_length', Math.floor(read('embedding_length') / read('attention.head_count')));
  return Math.fround(1 / Math.fround(Math.sqrt(d)));
}
