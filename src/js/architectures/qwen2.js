// Qwen2: Llama with biases on q/k/v and Qwen's sliding layers.
import { LLAMA_TENSORS, llamaCore } from './llama-layout.js';
import { QWEN_WINDOWS } from './shared.js';
import { llamaGGUF } from './gguf-layout.js';

export default {
  architecture: 'Qwen2ForCausalLM',
  name: 'Qwen2',
  keys: {
    modelType: 'qwen2',
    implemented: {
      vocab_size: 151936,
      hidden_size: 4096,
      intermediate_size: 22016,
      num_hidden_layers: 32,
      num_attention_heads: 32,
      num_key_value_heads: 32,
      hidden_act: 'silu',
      max_position_embeddings: 32768,
      rms_norm_eps: 1e-6,
      tie_word_embeddings: false,
      rope_parameters: null,
      rope_theta: 10000,
      rope_scaling: null,
      ...QWEN_WINDOWS,
    },
    inert: ['attention_dropout'],
    defaultOnly: {},
  },
  core: llamaCore,
  variant: { qkvBias: true, windows: 'qwen' },
  // Its row of the architectures table of docs/checkpoints.md (scripts/config-keys-doc.mjs).
  docs: {
    computes:
      'q/k/v biases; with `use_sliding_window: true` the layers `layer_types` marks sliding (by default layer ≥ `max_window_layers`) see the `sliding_window` latest keys',
    fixtures: '`qwen2-tiny`, `qwen2-sliding-tiny`',
  },
  // GGUF: llama.cpp's qwen2 has no sliding window (every layer full).
  gguf: llamaGGUF(['qwen2'], { inert: ['attention.sliding_window'] }),
  tensors: LLAMA_TENSORS,
};
