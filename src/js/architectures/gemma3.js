// Gemma 3 (transformers' Gemma3ForCausalLM, the text model): the Gemma layout with per-head q/k
// RMSNorms and one RoPE per layer type (the full layers' rope_theta + scaling, the sliding layers'
// rope_local_base_freq, unscaled), all but every sliding_window_pattern-th layer sliding.
import { describe } from '../options.js';
import { ropeSettings, sameRope } from './rope.js';
import { GEMMA_TENSORS, gemmaCore } from './gemma-layout.js';
import { QK_NORM, invalid } from './shared.js';
import { gemmaQueryScalar, llamaGGUF, swaPattern, swaPeriod } from './gguf-layout.js';

const ARCH = 'Gemma3ForCausalLM';

export default {
  architecture: ARCH,
  name: 'Gemma 3',
  keys: {
    modelType: 'gemma3_text',
    implemented: {
      vocab_size: 262208,
      hidden_size: 2304,
      intermediate_size: 9216,
      num_hidden_layers: 26,
      num_attention_heads: 8,
      num_key_value_heads: 4,
      head_dim: 256,
      hidden_activation: 'gelu_pytorch_tanh',
      max_position_embeddings: 131072,
      rms_norm_eps: 1e-6,
      tie_word_embeddings: true,
      rope_parameters: null,
      rope_theta: 1000000,
      rope_scaling: null,
      rope_local_base_freq: 10000,
      query_pre_attn_scalar: 256,
      sliding_window: 4096,
      layer_types: null,
      sliding_window_pattern: 6,
      _sliding_window_pattern: 6,
    },
    inert: ['attention_dropout', 'cache_implementation'],
    defaultOnly: {
      attention_bias: false,
      attn_logit_softcapping: null,
      final_logit_softcapping: null,
      use_bidirectional_attention: false,
    },
  },
  core: gemmaCore,
  variant: { qkNorm: QK_NORM.perHead, windowPattern: 6, softcaps: false, ropes: gemmaRopes },
  // Its row of the architectures table of docs/checkpoints.md (scripts/config-keys-doc.mjs).
  docs: {
    computes:
      'embeddings × √hidden_size (a float32 constant), RMSNorm with (1 + w), a norm before and after both the attention and the MLP, GeGLU (`gelu_pytorch_tanh`), per-head q/k RMSNorm, scores scaled by `query_pre_attn_scalar`^−½, sliding layers by `layer_types` (or all but every `sliding_window_pattern`-th), one RoPE per layer type (`rope_parameters` keyed by layer type, or `rope_theta` + `rope_scaling` for full layers and `rope_local_base_freq` for sliding ones)',
    fixtures: '`gemma3-tiny` (layer 0 sliding, layer 1 full with linear-scaled RoPE)',
    qualifier: '(text)',
  },
  // GGUF: norms stored as 1 + w; llama.cpp slides all but every n-th layer
  // (attention.sliding_window_pattern, else 6), runs the sliding layers' RoPE unscaled at
  // rope.freq_base_swa (else 10000), and scales scores by 1/√head_dim (27B: 1/√(hidden/heads))
  // whatever query_pre_attn_scalar was.
  gguf: llamaGGUF(['gemma3'], {
    normsPlusOne: true,
    config: (read) => ({
      query_pre_attn_scalar: gemmaQueryScalar(read, 62),
      sliding_window: read('attention.sliding_window'),
      layer_types: swaPattern(read('block_count'), swaPeriod(read, 6)),
      rope_local_base_freq: read('rope.freq_base_swa', 10000),
    }),
  }),
  tensors: GEMMA_TENSORS,
};

// Gemma 3's two RoPEs, from either layout: transformers 4 (rope_theta + rope_scaling for the full
// layers, rope_local_base_freq for the sliding ones) or 5 (rope_parameters keyed by layer type).
function gemmaRopes(config) {
  const rope = (settings) => ropeSettings(settings, ARCH, 1e6); // Gemma3TextConfig's rope_theta
  const p5 = config.rope_parameters;
  const v4 = {
    full: rope({ rope_theta: config.rope_theta ?? 1e6, rope_scaling: config.rope_scaling }),
    sliding: rope({ rope_theta: config.rope_local_base_freq ?? 1e4 }),
  };
  let chosen = v4;
  if (p5 != null) {
    if (typeof p5 !== 'object' || Array.isArray(p5))
      throw invalid(`config.json: rope_parameters must be an object, got ${describe(p5)}`);
    const extra = Object.keys(p5).filter((k) => k !== 'full_attention' && k !== 'sliding_attention');
    if (extra.length || !p5.full_attention || !p5.sliding_attention) {
      throw invalid(
        `config.json: Gemma 3's rope_parameters must hold exactly "full_attention" and "sliding_attention", got ${Object.keys(p5).join(', ') || 'none'}`,
      );
    }
    const v5 = {
      full: rope({ rope_parameters: p5.full_attention }),
      sliding: rope({ rope_parameters: p5.sliding_attention }),
    };
    const given4 =
      config.rope_theta !== undefined ||
      config.rope_scaling != null ||
      config.rope_local_base_freq !== undefined;
    const same = (a, b) =>
      a.type === b.type && a.theta === b.theta && sameRope(a.params, b.params) && a.partial === b.partial;
    if (given4 && !(same(v4.full, v5.full) && same(v4.sliding, v5.sliding))) {
      throw invalid(
        'config.json: rope_parameters disagrees with rope_theta / rope_scaling / rope_local_base_freq',
      );
    }
    chosen = v5;
  }
  if (chosen.sliding.type !== 'default')
    throw invalid(
      `config.json: a scaled RoPE (${chosen.sliding.type}) on Gemma 3's sliding layers is not implemented`,
    );
  if (chosen.full.partial !== undefined || chosen.sliding.partial !== undefined)
    throw invalid('config.json: partial_rotary_factor is not implemented for Gemma 3');
  return chosen;
}
