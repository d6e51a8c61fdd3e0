// The Llama layout (transformers' LlamaForCausalLM and the families built on it): its Hugging Face
// tensor names by role and how a config.json maps to the core's config. A family on this layout
// gives its variant (src/model/pretrained.h's PretrainedConfig fields) as data:
//   qkvBias, qkNorm, preNorms, postNorms, fusedProjections: the core's fields of the same name;
//   partialRotary: partial_rotary_factor may be < 1; windows: 'every' (one sliding_window on every
//   layer, null = none) or 'qwen' (use_sliding_window, max_window_layers, layer_types);
//   fullOnly: use_sliding_window true is refused; noRopeLayers: no_rope_layers / its interval;
//   longRope: rope_type longrope (reads original_max_position_embeddings; ropeAttentionFactor);
//   yarn: rope_type yarn is implemented (else refused);
//   queryTemperature: Ministral 3's llama_4_scaling_beta in the rope settings (q × 1 + β·ln(1 +
//   ⌊p / original⌋) after RoPE; queryTemperatureBeta, queryTemperatureFloor), refused elsewhere;
//   multipliers: Granite's embedding_multiplier, residual_multiplier, attention_multiplier (the score
//   scale) and logits_scaling (embedScale, residualScale, attentionScale, logitsScaling).
import { describe } from '../options.js';
import { PRETRAINED_ARCH } from '../constants.js';
import { ropeFrequencies, ropeSettings } from './rope.js';
import { QK_NORM, checkLayerTypes, invalid, positiveWindow } from './shared.js';

// LlamaConfig's implemented keys with transformers' defaults. A family on this layout passes the
// defaults its own config class changes and the keys it adds (listed after these in the docs).
export function llamaKeys(defaults = {}, added = {}) {
  return {
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
    rope_parameters: null,
    rope_theta: 10000,
    rope_scaling: null,
    ...defaults,
    ...added,
  };
}

// Hugging Face's names of the Llama layout: the global tensors and, after `layer` + l + ".", the
// per-layer ones. post_attention_layernorm is the norm before the MLP here; families with
// post-norms rename the roles (POST_NORM_NAMES).
export const LLAMA_TENSORS = {
  prefixes: [''],
  layer: 'model.layers.',
  global: { embed: 'model.embed_tokens.weight', final_norm: 'model.norm.weight', unembed: 'lm_head.weight' },
  perLayer: {
    attn_norm: 'input_layernorm.weight',
    mlp_norm: 'post_attention_layernorm.weight',
    q: 'self_attn.q_proj.weight',
    k: 'self_attn.k_proj.weight',
    v: 'self_attn.v_proj.weight',
    o: 'self_attn.o_proj.weight',
    q_bias: 'self_attn.q_proj.bias',
    k_bias: 'self_attn.k_proj.bias',
    v_bias: 'self_attn.v_proj.bias',
    q_norm: 'self_attn.q_norm.weight',
    k_norm: 'self_attn.k_norm.weight',
    gate: 'mlp.gate_proj.weight',
    up: 'mlp.up_proj.weight',
    down: 'mlp.down_proj.weight',
  },
  transposed: [],
};

// With post-norms (OLMo 2, Gemma): post_attention_layernorm is the attention output's norm, and
// the MLP's own norms are pre_/post_feedforward_layernorm.
export const POST_NORM_NAMES = {
  ...LLAMA_TENSORS,
  perLayer: {
    ...LLAMA_TENSORS.perLayer,
    post_attn_norm: LLAMA_TENSORS.perLayer.mlp_norm,
    mlp_norm: 'pre_feedforward_layernorm.weight',
    post_mlp_norm: 'post_feedforward_layernorm.weight',
  },
};

/** The core config of a Llama-layout family's config.json (r: pretrained/config.js's reader). */
export function llamaCore(config, r, family) {
  const v = family.variant;
  const act = r.get('hidden_act');
  if (act !== 'silu')
    throw invalid(`config.json: hidden_act ${describe(act)} is not supported (only "silu")`);
  const hidden = r.int('hidden_size'),
    heads = r.int('num_attention_heads'),
    layers = r.int('num_hidden_layers');
  const headDim = r.int('head_dim', r.get('head_dim') ?? Math.floor(hidden / heads));
  const rope = ropeSettings(config, family.architecture, family.keys.implemented.rope_theta);
  const rotaryDims = rotaryDimsOf(config, family, rope.partial, headDim);
  // Phi-3 reads original_max_position_embeddings (its LongRoPE); the other families have no such key.
  const original = v.longRope ? r.int('original_max_position_embeddings') : undefined;
  const { invFreq, maxPositions, attentionFactor } = ropeFrequencies(
    rope,
    rotaryDims,
    r.int('max_position_embeddings'),
    original,
    { yarn: Boolean(v.yarn), architecture: family.architecture },
  );
  const core = {
    arch: PRETRAINED_ARCH.LLAMA,
    vocabSize: r.int('vocab_size'),
    hidden,
    layers,
    heads,
    kvHeads: r.int('num_key_value_heads', r.get('num_key_value_heads') ?? heads),
    headDim,
    intermediate: r.int('intermediate_size'),
    maxPositions,
    normEps: r.num('rms_norm_eps'),
    ropeTheta: rope.theta,
    qkvBias: Boolean(v.qkvBias),
    tieEmbeddings: r.get('tie_word_embeddings') === true,
    qkNorm: v.qkNorm ?? QK_NORM.none,
    preNorms: v.preNorms ?? true,
    postNorms: Boolean(v.postNorms),
    fusedProjections: Boolean(v.fusedProjections),
    rotaryDims: rotaryDims === headDim ? 0 : rotaryDims,
  };
  if (invFreq) core.ropeInvFreq = invFreq;
  if (attentionFactor !== 1) core.ropeAttentionFactor = attentionFactor;
  const windows = layerWindows(config, family, r, layers);
  if (windows) core.layerWindow = windows;
  if (v.noRopeLayers) core.layerRope = noRopeLayers(config, r, layers);
  if (v.multipliers) Object.assign(core, graniteMultipliers(r));
  const temperature = queryTemperature(rope, family);
  if (temperature) Object.assign(core, temperature);
  return core;
}

// Ministral 3's query temperature from its rope settings (transformers' _get_llama_4_attn_scale:
// beta llama_4_scaling_beta, floor original_max_position_embeddings, both needed), or null.
function queryTemperature(rope, family) {
  const beta = rope.params.llama_4_scaling_beta;
  if (!family.variant.queryTemperature) {
    if (beta !== undefined)
      throw invalid(
        `config.json: rope llama_4_scaling_beta (${describe(beta)}) is not implemented for ${family.architecture}`,
      );
    return null;
  }
  const floor = rope.params.original_max_position_embeddings;
  if (beta === 0) return null;
  if (typeof beta !== 'number' || !Number.isFinite(beta) || !Number.isSafeInteger(floor) || floor < 1)
    throw invalid(
      `config.json: ${family.name} needs rope llama_4_scaling_beta (a number) and original_max_position_embeddings (a positive integer), got ${describe(beta)} and ${describe(floor)}`,
    );
  return { queryTemperatureBeta: beta, queryTemperatureFloor: floor };
}

// Granite's four scalars as the core takes them: float32 constants where transformers multiplies a
// float32 tensor by them; the score scale as given (the core rounds it once, as 1/√d).
function graniteMultipliers(r) {
  return {
    embedScale: Math.fround(r.num('embedding_multiplier')),
    residualScale: Math.fround(r.num('residual_multiplier')),
    attentionScale: r.num('attention_multiplier'),
    logitsScaling: Math.fround(r.num('logits_scaling')),
  };
}

// The features RoPE rotates: partial_rotary_factor · head_dim (Phi-3; top level or in the rope
// settings, which must then agree), else the whole head.
function rotaryDimsOf(config, family, inRope, headDim) {
  const top = config.partial_rotary_factor;
  if (top !== undefined && inRope !== undefined && top !== inRope) {
    throw invalid(
      `config.json: partial_rotary_factor ${JSON.stringify(top)} disagrees with the rope settings' ${JSON.stringify(inRope)}`,
    );
  }
  const factor = top ?? inRope ?? 1;
  if (factor !== 1 && !family.variant.partialRotary)
    throw invalid(
      `config.json: partial_rotary_factor = ${JSON.stringify(factor)} is not implemented for ${family.architecture} (only 1)`,
    );
  if (typeof factor !== 'number' || !(factor > 0 && factor <= 1))
    throw invalid(`config.json: partial_rotary_factor must be in (0, 1], got ${describe(factor)}`);
  const dims = Math.floor(headDim * factor); // transformers: int(head_dim * partial_rotary_factor)
  if (dims < 2 || dims % 2 !== 0)
    throw invalid(
      `config.json: partial_rotary_factor ${factor} gives ${dims} rotated features of ${headDim}; an even number >= 2 is needed`,
    );
  return dims;
}

// Each layer's sliding window (0 = full), or null when every layer is full.
function layerWindows(config, family, r, layers) {
  const window = r.get('sliding_window');
  const { windows, fullOnly } = family.variant;
  if (windows === 'every') return window === null ? null : new Array(layers).fill(positiveWindow(window));
  if (windows !== 'qwen') return null;
  const use = r.get('use_sliding_window'),
    given = config.layer_types;
  if (typeof use !== 'boolean')
    throw invalid(`config.json: use_sliding_window must be true or false, got ${describe(use)}`);
  checkLayerTypes(given, layers);
  const anySliding = given?.includes('sliding_attention');
  // Without use_sliding_window (or without a window) transformers sets sliding_window to None:
  // every layer is full, and sliding layer_types would make it fail.
  if (!use || window === null) {
    if (anySliding)
      throw invalid(
        'config.json: layer_types asks for sliding layers but use_sliding_window is false or sliding_window is null',
      );
    return null;
  }
  if (fullOnly)
    throw invalid(`config.json: ${family.name} use_sliding_window = true is not implemented (only false)`);
  const first = r.get('max_window_layers'); // layers before it stay full; 0 = every layer slides
  if (given == null && (!Number.isSafeInteger(first) || first < 0))
    throw invalid(`config.json: max_window_layers must be an integer >= 0, got ${describe(first)}`);
  const types =
    given ?? Array.from({ length: layers }, (_, i) => (i >= first ? 'sliding_attention' : 'full_attention'));
  const w = positiveWindow(window);
  return types.map((t) => (t === 'sliding_attention' ? w : 0));
}

// SmolLM3: no_rope_layers[i] = 1 where layer i uses RoPE; by default every no_rope_layer_interval-th
// layer has none (SmolLM3Config: int((i + 1) % interval != 0)).
function noRopeLayers(config, r, layers) {
  const given = config.no_rope_layers;
  if (given != null) {
    if (!Array.isArray(given) || given.length !== layers || given.some((f) => f !== 0 && f !== 1)) {
      throw invalid(
        `config.json: no_rope_layers must hold 0 or 1 for each of the ${layers} layers, got ${describe(given)}`,
      );
    }
    return given;
  }
  const interval = r.int('no_rope_layer_interval');
  return Array.from({ length: layers }, (_, i) => ((i + 1) % interval !== 0 ? 1 : 0));
}
