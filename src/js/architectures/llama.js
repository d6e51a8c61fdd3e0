// Llama (transformers' LlamaForCausalLM): RoPE (rotate_half), grouped-query heads, RMSNorm, SwiGLU.
import { LLAMA_TENSORS, llamaCore } from './llama-layout.js';
import { llamaGGUF } from './gguf-layout.js';

export default {
  architecture: 'LlamaForCausalLM',
  name: 'Llama',
  keys: {
    modelType: 'llama',
    implemented: {
      vocab_size: 32000,
      hidden_size: 4096,
      intermediate_size: 11008,
      num_hidden_layers: 32,
      num_attention_heads: 32,
      num_key_value_heads: null,
      hidden_act: 'silu',
      max_position_embeddings: 2048,
      rms_norm_eps: 1e-6,
      tie_word_embeddings: false,
      head_dim: null,
      rope_parameters: null,
      rope_theta: 10000,
      rope_scaling: null,
    },
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
