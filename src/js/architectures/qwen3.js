// Qwen3: Llama with an RMSNorm of each head's q and k, an explicit head_dim and Qwen's sliding layers.
import { LLAMA_TENSORS, llamaCore } from './llama-layout.js';
import { QK_NORM, QWEN_WINDOWS } from './shared.js';
import { llamaGGUF } from './gguf-layout.js';

export default {
  architecture: 'Qwen3ForCausalLM',
  name: 'Qwen3',
  keys: {
    modelType: 'qwen3',
    implemented: {
      vocab_size: 151936,
      hidden_size: 4096,
      intermediate_size: 22016,
      num_hidden_layers: 32,
      num_attention_heads: 32,
      num_key_value_heads: 32,
      head_dim: 128,
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
    defaultOnly: { attention_bias: false },
  },
  core: llamaCore,
  variant: { qkNorm: QK_NORM.perHead, windows: 'qwen' },
  // Its row of the architectures table of docs/checkpoints.md (scripts/config-keys-doc.mjs).
  docs: {
    computes:
      "RMSNorm of each head's q and k (`q_norm`, `k_norm`, weights (head_dim)) after the projection, before RoPE; explicit `head_dim`; no biases; sliding layers as Qwen2",
    fixtures: '`qwen3-tiny` (head_dim 16 ≠ hidden/heads)',
  },
  // GGUF: llama.cpp's qwen3 has no sliding window (every layer full).
  gguf: llamaGGUF(['qwen3'], { inert: ['attention.sliding_window'] }),
  tensors: LLAMA_TENSORS,
};
