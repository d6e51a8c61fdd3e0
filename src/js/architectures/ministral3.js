// Ministral 3 (transformers' Ministral3ForCausalLM, the text model of Mistral3ForConditionalGeneration;
// llama.cpp's "mistral3"): Mistral with YaRN RoPE and Llama 4's attention temperature — after RoPE,
// q at position p × (1 + llama_4_scaling_beta · ln(1 + ⌊p / original_max_position_embeddings⌋)).
import { describe } from '../options.js';
import { LLAMA_TENSORS, llamaCore } from './llama-layout.js';
import { LLAMA_GGUF_KEYS, llamaGGUF } from './gguf-layout.js';
import { invalid } from './shared.js';

// Ministral3Config's rope_parameters when config.json has none (its __post_init__).
const DEFAULT_ROPE = {
  rope_type: 'yarn',
  rope_theta: 1000000,
  factor: 16,
  original_max_position_embeddings: 16384,
  beta_fast: 32,
  beta_slow: 1,
  mscale_all_dim: 1,
  mscale: 1,
  llama_4_scaling_beta: 0.1,
};

// The Llama layout's GGUF keys but rope.freq_base, read into rope_parameters (Ministral3Config has
// no top-level rope_theta).
const { 'rope.freq_base': _freqBase, ...MISTRAL3_GGUF_KEYS } = LLAMA_GGUF_KEYS;

export default {
  architecture: 'Ministral3ForCausalLM',
  name: 'Ministral 3',
  keys: {
    modelType: 'ministral3',
    implemented: {
      vocab_size: 131072,
      hidden_size: 4096,
      intermediate_size: 14336,
      num_hidden_layers: 34,
      num_attention_heads: 32,
      num_key_value_heads: 8,
      head_dim: 128,
      hidden_act: 'silu',
      max_position_embeddings: 262144,
      rms_norm_eps: 1e-5,
      tie_word_embeddings: false,
      rope_parameters: null,
      sliding_window: null,
    },
    inert: ['attention_dropout'],
    defaultOnly: {},
  },
  core: (config, r, family) =>
    llamaCore(
      config.rope_parameters == null ? { ...config, rope_parameters: DEFAULT_ROPE } : config,
      r,
      family,
    ),
  variant: { windows: 'every', yarn: true, queryTemperature: true },
  // Its row of the architectures table of docs/checkpoints.md (scripts/config-keys-doc.mjs).
  docs: {
    computes:
      "`rope_parameters` yarn (transformers' formula: factor = max_position_embeddings / `original_max_position_embeddings`, the ramp between the correction dims of `beta_fast` / `beta_slow`, cos and sin × the attention factor from `mscale` / `mscale_all_dim`), then q × (1 + `llama_4_scaling_beta`·ln(1 + ⌊p / `original_max_position_embeddings`⌋)) at position p (Llama 4's attention temperature); `sliding_window` on every layer (`null` = full)",
    fixtures:
      '`ministral3-tiny` (YaRN over an original 4 positions: factor 16, the ramp over pairs 0–2, mscale 1 over mscale_all_dim 0.5; temperature β 0.5; GQA)',
    qualifier: '(text)',
  },
  // GGUF: q/k rows permuted (rope type NORM); rope.scaling.type yarn with rope.scaling.factor
  // (which must be context_length / original_context_length, the factor transformers uses),
  // original_context_length, yarn_beta_fast / yarn_beta_slow (32, 1), yarn_log_multiplier (llama.cpp:
  // mscale_all_dim with mscale 1; absent: the attention factor mscale(factor)) and
  // attention.temperature_scale (llama_4_scaling_beta; absent: none). llama.cpp reads no sliding
  // window for it.
  gguf: llamaGGUF(['mistral3'], {
    keys: MISTRAL3_GGUF_KEYS,
    permutedQK: true,
    inert: ['attention.sliding_window'],
    config: mistral3Config,
  }),
  tensors: LLAMA_TENSORS,
};

function mistral3Config(read) {
  const heads = read('attention.head_count');
  const headDim = read('attention.key_length', Math.floor(read('embedding_length') / heads));
  const dims = read('rope.dimension_count', headDim);
  if (dims !== headDim)
    throw invalid(
      `gguf: mistral3.rope.dimension_count ${dims} is not the head size ${headDim}: not implemented`,
    );
  const type = read('rope.scaling.type', 'none');
  if (type !== 'yarn')
    throw invalid(`gguf: mistral3.rope.scaling.type ${describe(type)} is not implemented (only yarn)`);
  const factor = read('rope.scaling.factor'),
    original = read('rope.scaling.original_context_length'),
    context = read('context_length');
  if (context / original !== factor)
    throw invalid(
      `gguf: mistral3.rope.scaling.factor ${factor} is not context_length / original_context_length (${context} / ${original}), the factor transformers uses: not implemented`,
    );
  const logMul = read('rope.scaling.yarn_log_multiplier', 0);
  return {
    sliding_window: null,
    rope_parameters: {
      rope_type: 'yarn',
      rope_theta: read('rope.freq_base', 10000),
      factor,
      original_max_position_embeddings: original,
      beta_fast: read('rope.scaling.yarn_beta_fast', 32),
      beta_slow: read('rope.scaling.yarn_beta_slow', 1),
      ...(logMul ? { mscale: 1, mscale_all_dim: logMul } : {}),
      llama_4_scaling_beta: read('attention.temperature_scale', 0),
    },
  };
}
