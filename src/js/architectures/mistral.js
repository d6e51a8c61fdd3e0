// Mistral: Llama where every layer sees the sliding_window latest keys.
import { LLAMA_TENSORS, llamaCore } from './llama-layout.js';

export default {
  architecture: 'MistralForCausalLM',
  name: 'Mistral',
  keys: {
    modelType: 'mistral',
    implemented: {
      vocab_size: 32000,
      hidden_size: 4096,
      intermediate_size: 14336,
      num_hidden_layers: 32,
      num_attention_heads: 32,
      num_key_value_heads: 8,
      head_dim: null,
      hidden_act: 'silu',
      max_position_embeddings: 131072,
      rms_norm_eps: 1e-6,
      tie_word_embeddings: false,
      rope_parameters: null,
      rope_theta: 10000,
      rope_scaling: null,
      sliding_window: 4096,
    },
    inert: ['attention_dropout'],
    defaultOnly: {},
  },
  core: llamaCore,
  variant: { windows: 'every' },
  // Its row of the architectures table of docs/checkpoints.md (scripts/config-keys-doc.mjs).
  docs: {
    computes: 'every layer sees the `sliding_window` latest keys, itself included (`null` = full)',
    fixtures: '`mistral-tiny` (window 3)',
  },
  tensors: LLAMA_TENSORS,
};
