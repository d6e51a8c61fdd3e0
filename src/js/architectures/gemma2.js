// Gemma 2 (transformers' Gemma2ForCausalLM): the Gemma layout without q/k norms and with one RoPE,
// every other layer sliding (layer 0 first), attention-logit and final-logit soft-capping.
import { ropeSettings } from './rope.js';
import { GEMMA_TENSORS, gemmaCore } from './gemma-layout.js';
import { QK_NORM } from './shared.js';
import { gemmaQueryScalar, llamaGGUF, swaPattern } from './gguf-layout.js';

export default {
  architecture: 'Gemma2ForCausalLM',
  name: 'Gemma 2',
  keys: {
    modelType: 'gemma2',
    implemented: {
      vocab_size: 256000,
      hidden_size: 2304,
      intermediate_size: 9216,
      num_hidden_layers: 26,
      num_attention_heads: 8,
      num_key_value_heads: 4,
      head_dim: 256,
      hidden_activation: 'gelu_pytorch_tanh',
      max_position_embeddings: 8192,
      rms_norm_eps: 1e-6,
      tie_word_embeddings: true,
      rope_parameters: null,
      rope_theta: 10000,
      rope_scaling: null,
      query_pre_attn_scalar: 256,
      sliding_window: 4096,
      layer_types: null,
      attn_logit_softcapping: 50,
      final_logit_softcapping: 30,
    },
    // Gemma2MLP reads hidden_activation; the checkpoints also carry an unused hidden_act.
    inert: ['attention_dropout', 'cache_implementation', 'hidden_act'],
    defaultOnly: { attention_bias: false, use_bidirectional_attention: false },
  },
  core: gemmaCore,
  variant: {
    qkNorm: QK_NORM.none,
    windowPattern: 2,
    softcaps: true,
    ropes: (config, family) => ({
      full: ropeSettings(config, family.architecture, family.keys.implemented.rope_theta),
      sliding: null,
    }),
  },
  // Its row of the architectures table of docs/checkpoints.md (scripts/config-keys-doc.mjs).
  docs: {
    computes:
      'as Gemma 3 below without q/k norms and with one RoPE, every other layer sliding (layer 0 first), plus attention-logit soft-capping (scaled scores → c·tanh(s/c) before the mask, `attn_logit_softcapping`) and final-logit soft-capping (`final_logit_softcapping`); the interpretability tools explain the logits before the final cap',
    fixtures: '`gemma2-tiny` (caps 5 and 3)',
  },
  // GGUF: norms stored as 1 + w; llama.cpp slides every other layer (layer 0 first), scales
  // scores by 1/√head_dim (27B: 1/√(hidden/heads)) and defaults the caps to 50 and 30.
  gguf: llamaGGUF(['gemma2'], {
    normsPlusOne: true,
    config: (read) => ({
      query_pre_attn_scalar: gemmaQueryScalar(read, 46),
      sliding_window: read('attention.sliding_window'),
      layer_types: swaPattern(read('block_count'), 2),
      attn_logit_softcapping: read('attn_logit_softcapping', 50),
      final_logit_softcapping: read('final_logit_softcapping', 30),
    }),
  }),
  tensors: GEMMA_TENSORS,
};
