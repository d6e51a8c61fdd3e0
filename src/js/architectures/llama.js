// Llama (transformers' LlamaForCausalLM): RoPE (rotate_half), grouped-query heads, RMSNorm, SwiGLU.
import { LLAMA_TENSORS, llamaCore, llamaKeys } from './llama-layout.js';
import { llamaGGUF } from './gguf-layout.js';

export default {
  architecture: 'LlamaForCausalLM',
  name: 'Llama',
  keys: {
    modelType: 'llama',
    implemented: llamaKeys({}, { head_dim: null }),
    inert: ['attention_dropout'],
    defaultOnly: { attention_bias: false, mlp_bias: false, pretraining_tp: 1 },
  },
  core: llamaCore,
  variant: {},
  // Its row of the architectures table of docs/checkpoints.md (scripts/config-keys-doc.mjs).
  docs: {
    computes: 'RoPE (rotate_half), grouped-query heads, RMSNorm, SwiGLU',
    fixtures: '`llama-tiny`, `llama3-scaled-tiny`, `llama-linear-tiny`',
  },
  // GGUF: llama.cpp writes Llama 2/3, Mistral, TinyLlama and SmolLM2 as "llama" (rope type NORM: q/k
  // rows permuted by the converter); it reads no sliding window for it.
  gguf: llamaGGUF(['llama'], { permutedQK: true, ropeFreqs: true, inert: ['attention.sliding_window'] }),
  tensors: LLAMA_TENSORS,
};
