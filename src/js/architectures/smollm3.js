// SmolLM3: Llama without RoPE in the layers no_rope_layers marks 0.
import { LLAMA_TENSORS, llamaCore } from './llama-layout.js';
import { QWEN_WINDOWS } from './shared.js';
import { llamaGGUF } from './gguf-layout.js';

export default {
  architecture: 'SmolLM3ForCausalLM',
  name: 'SmolLM3',
  keys: {
    modelType: 'smollm3',
    implemented: {
      vocab_size: 128256,
      hidden_size: 2048,
      intermediate_size: 11008,
      num_hidden_layers: 36,
      num_attention_heads: 16,
      num_key_value_heads: 4,
      hidden_act: 'silu',
      max_position_embeddings: 32768,
      rms_norm_eps: 1e-6,
      tie_word_embeddings: true,
      rope_parameters: null,
      rope_theta: 2000000,
      rope_scaling: null,
      no_rope_layers: null,
      no_rope_layer_interval: 4,
      ...QWEN_WINDOWS,
      sliding_window: null,
    },
    inert: ['attention_dropout'],
    defaultOnly: { attention_bias: false, mlp_bias: false, pretraining_tp: 1 },
  },
  core: llamaCore,
  variant: { windows: 'qwen', fullOnly: true, noRopeLayers: true },
  // Its row of the architectures table of docs/checkpoints.md (scripts/config-keys-doc.mjs).
  docs: {
    computes:
      'no RoPE in the layers where `no_rope_layers[i]` is 0 (default: every `no_rope_layer_interval`-th layer)',
    fixtures: '`smollm3-tiny`',
  },
  // GGUF: rope type NORM (q/k rows permuted); llama.cpp fixes the no-RoPE layers to every 4th
  // (n_no_rope_layer_step = 4, whatever config.json said) and reads no sliding window.
  gguf: llamaGGUF(['smollm3'], {
    permutedQK: true,
    inert: ['attention.sliding_window'],
    config: (read) => ({
      no_rope_layers: Array.from({ length: read('block_count') }, (_, il) => ((il + 1) % 4 !== 0 ? 1 : 0)),
    }),
  }),
  tensors: LLAMA_TENSORS,
};
