// config.json → the core's PretrainedConfig, under the rule "no silent wrong answers": every key of a
// supported architecture's config is listed below as implemented (it changes what we compute), inert
// (it cannot change the forward) or inert only at its default; any other key, a default-only key at
// another value, a rope_type we do not implement, quantization_config, auto_map and any unknown
// architecture is INVALID_ARGUMENT naming the key and the value. Both config layouts are read:
// transformers 4 (rope_theta, rope_scaling at the top level) and transformers 5 (rope_parameters);
// when both appear they must agree.
//
// The tables follow transformers 5.17's configuration classes (PreTrainedConfig, GPT2Config,
// LlamaConfig, Qwen2Config, Qwen3Config, MistralConfig, SmolLM3Config, Olmo2Config, Phi3Config), written by hand from their source: this project's machines have no
// `transformers` (docs/checkpoints.md says how the tables were made and what each key does here).
import { AttentionError } from './errors.js';
import { describe } from './options.js';

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);

// PreTrainedConfig's own attributes and the generation/serving bookkeeping configs carry: none can
// change a forward pass (dropouts are off at inference, token ids only name tokens).
export const INERT_COMMON = [
  '_name_or_path', '_commit_hash', '_attn_implementation', '_attn_implementation_autoset', 'architectures',
  'model_type', 'transformers_version', 'dtype', 'torch_dtype', 'use_bfloat16', 'use_cache', 'initializer_range',
  'return_dict', 'output_hidden_states', 'output_attentions', 'torchscript', 'tf_legacy_loss', 'pruned_heads',
  'chunk_size_feed_forward', 'is_decoder', 'id2label', 'label2id', 'num_labels', 'problem_type', 'finetuning_task',
  'tokenizer_class', 'prefix', 'task_specific_params', 'bos_token_id', 'eos_token_id', 'pad_token_id',
  'sep_token_id', 'decoder_start_token_id', 'max_length', 'min_length', 'do_sample', 'early_stopping', 'num_beams',
  'num_beam_groups', 'diversity_penalty', 'temperature', 'top_k', 'top_p', 'typical_p', 'repetition_penalty',
  'length_penalty', 'no_repeat_ngram_size', 'encoder_no_repeat_ngram_size', 'bad_words_ids',
  'num_return_sequences', 'output_scores', 'return_dict_in_generate', 'forced_bos_token_id',
  'forced_eos_token_id', 'remove_invalid_values', 'exponential_decay_length_penalty', 'suppress_tokens',
  'begin_suppress_tokens',
];
export const DEFAULT_ONLY_COMMON = { is_encoder_decoder: false, add_cross_attention: false, tie_encoder_decoder: false, cross_attention_hidden_size: null };
// Keys that can never be read as a plain forward: refused whatever their value.
export const REFUSED = {
  quantization_config: 'quantized checkpoints are not supported (load an F32, F16 or BF16 checkpoint)',
  auto_map: 'the checkpoint needs custom modeling code (auto_map), which this library cannot run',
};

// Qwen2's (and Qwen3's, SmolLM3's) sliding window: it acts only with use_sliding_window true, on the
// layers layer_types marks "sliding_attention" (by default layer i >= max_window_layers).
const QWEN_WINDOWS = { use_sliding_window: false, sliding_window: 4096, max_window_layers: 28, layer_types: null };

// Each architecture: its model_type, the keys we implement with transformers' class defaults (used
// when config.json omits them), the inert keys and the keys inert only at their default.
export const CONFIG_KEYS = {
  GPT2LMHeadModel: {
    modelType: 'gpt2',
    implemented: { vocab_size: 50257, n_positions: 1024, n_embd: 768, n_layer: 12, n_head: 12, n_inner: null,
      activation_function: 'gelu_new', layer_norm_epsilon: 1e-5 },
    inert: ['resid_pdrop', 'embd_pdrop', 'attn_pdrop', 'summary_type', 'summary_use_proj', 'summary_activation',
      'summary_proj_to_labels', 'summary_first_dropout', 'n_ctx', 'reorder_and_upcast_attn'],
    defaultOnly: { scale_attn_weights: true, scale_attn_by_inverse_layer_idx: false, tie_word_embeddings: true },
  },
  LlamaForCausalLM: {
    modelType: 'llama',
    implemented: { vocab_size: 32000, hidden_size: 4096, intermediate_size: 11008, num_hidden_layers: 32,
      num_attention_heads: 32, num_key_value_heads: null, hidden_act: 'silu', max_position_embeddings: 2048,
      rms_norm_eps: 1e-6, tie_word_embeddings: false, head_dim: null, rope_parameters: null, rope_theta: 10000,
      rope_scaling: null },
    inert: ['attention_dropout'],
    defaultOnly: { attention_bias: false, mlp_bias: false, pretraining_tp: 1 },
  },
  Qwen2ForCausalLM: {
    modelType: 'qwen2',
    implemented: { vocab_size: 151936, hidden_size: 4096, intermediate_size: 22016, num_hidden_layers: 32,
      num_attention_heads: 32, num_key_value_heads: 32, hidden_act: 'silu', max_position_embeddings: 32768,
      rms_norm_eps: 1e-6, tie_word_embeddings: false, rope_parameters: null, rope_theta: 10000, rope_scaling: null,
      ...QWEN_WINDOWS },
    inert: ['attention_dropout'],
    defaultOnly: {},
  },
  Qwen3ForCausalLM: {
    modelType: 'qwen3',
    implemented: { vocab_size: 151936, hidden_size: 4096, intermediate_size: 22016, num_hidden_layers: 32,
      num_attention_heads: 32, num_key_value_heads: 32, head_dim: 128, hidden_act: 'silu', max_position_embeddings: 32768,
      rms_norm_eps: 1e-6, tie_word_embeddings: false, rope_parameters: null, rope_theta: 10000, rope_scaling: null,
      ...QWEN_WINDOWS },
    inert: ['attention_dropout'],
    defaultOnly: { attention_bias: false },
  },
  MistralForCausalLM: {
    modelType: 'mistral',
    implemented: { vocab_size: 32000, hidden_size: 4096, intermediate_size: 14336, num_hidden_layers: 32,
      num_attention_heads: 32, num_key_value_heads: 8, head_dim: null, hidden_act: 'silu', max_position_embeddings: 131072,
      rms_norm_eps: 1e-6, tie_word_embeddings: false, rope_parameters: null, rope_theta: 10000, rope_scaling: null,
      sliding_window: 4096 },
    inert: ['attention_dropout'],
    defaultOnly: {},
  },
  SmolLM3ForCausalLM: {
    modelType: 'smollm3',
    implemented: { vocab_size: 128256, hidden_size: 2048, intermediate_size: 11008, num_hidden_layers: 36,
      num_attention_heads: 16, num_key_value_heads: 4, hidden_act: 'silu', max_position_embeddings: 32768,
      rms_norm_eps: 1e-6, tie_word_embeddings: true, rope_parameters: null, rope_theta: 2000000, rope_scaling: null,
      no_rope_layers: null, no_rope_layer_interval: 4, ...QWEN_WINDOWS, sliding_window: null },
    inert: ['attention_dropout'],
    defaultOnly: { attention_bias: false, mlp_bias: false, pretraining_tp: 1 },
  },
  Olmo2ForCausalLM: {
    modelType: 'olmo2',
    implemented: { vocab_size: 50304, hidden_size: 4096, intermediate_size: 11008, num_hidden_layers: 32,
      num_attention_heads: 32, num_key_value_heads: null, hidden_act: 'silu', max_position_embeddings: 2048,
      rms_norm_eps: 1e-5, tie_word_embeddings: false, rope_parameters: null, rope_theta: 10000, rope_scaling: null },
    inert: ['attention_dropout'],
    defaultOnly: { attention_bias: false },
  },
  Phi3ForCausalLM: {
    modelType: 'phi3',
    implemented: { vocab_size: 32064, hidden_size: 3072, intermediate_size: 8192, num_hidden_layers: 32,
      num_attention_heads: 32, num_key_value_heads: null, hidden_act: 'silu', max_position_embeddings: 4096,
      rms_norm_eps: 1e-5, tie_word_embeddings: false, rope_parameters: null, rope_theta: 10000, rope_scaling: null,
      partial_rotary_factor: 1, sliding_window: null },
    // original_max_position_embeddings is read only by rope_type longrope, which is refused.
    inert: ['attention_dropout', 'resid_pdrop', 'embd_pdrop', 'original_max_position_embeddings'],
    defaultOnly: {},
  },
};
export const ARCHITECTURES = Object.keys(CONFIG_KEYS);

const sameValue = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// Every key of `config` is in the architecture's table; default-only keys hold their default.
function checkKeys(config, architecture) {
  const t = CONFIG_KEYS[architecture];
  for (const [key, value] of Object.entries(config)) {
    if (Object.hasOwn(REFUSED, key)) throw invalid(`config.json: ${key}: ${REFUSED[key]}`);
    if (Object.hasOwn(t.implemented, key) || t.inert.includes(key) || INERT_COMMON.includes(key)) continue;
    const defaults = Object.hasOwn(t.defaultOnly, key) ? t.defaultOnly : Object.hasOwn(DEFAULT_ONLY_COMMON, key) ? DEFAULT_ONLY_COMMON : null;
    if (!defaults) throw invalid(`config.json: key "${key}" (${describe(value)}) is not implemented for ${architecture}`);
    if (!sameValue(value, defaults[key])) {
      throw invalid(`config.json: ${key} = ${JSON.stringify(value)} is not implemented for ${architecture} (only ${JSON.stringify(defaults[key])})`);
    }
  }
}

// A config value or its class default, checked as a positive integer / number > 0.
function reader(config, architecture) {
  const defaults = CONFIG_KEYS[architecture].implemented;
  const get = (key) => config[key] ?? defaults[key];
  return {
    get,
    int(key, fallback = get(key)) {
      const v = config[key] ?? fallback;
      if (!Number.isSafeInteger(v) || v < 1) throw invalid(`config.json: ${key} must be a positive integer, got ${describe(v)}`);
      return v;
    },
    num(key) {
      const v = get(key);
      if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw invalid(`config.json: ${key} must be a number > 0, got ${describe(v)}`);
      return v;
    },
  };
}

function positive(object, key, where) {
  const v = object[key];
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw invalid(`config.json: ${where}.${key} must be a number > 0, got ${describe(v)}`);
  return v;
}

// The keys each implemented rope_type reads (besides rope_type / type and rope_theta).
const ROPE_TYPES = {
  default: [],
  linear: ['factor'],
  dynamic: ['factor', 'original_max_position_embeddings'],
  llama3: ['factor', 'low_freq_factor', 'high_freq_factor', 'original_max_position_embeddings'],
};

/**
 * The RoPE settings of a config in either layout: { type, theta, params } where params holds the
 * rope_type's own keys. transformers 4: rope_theta + rope_scaling; transformers 5: rope_parameters
 * ({ rope_type, rope_theta, … }). Both present: they must agree. `partial` is a
 * partial_rotary_factor given among the rope settings (rotaryDimsOf checks it).
 */
export function ropeSettings(config, architecture) {
  const { rope_parameters: p5, rope_scaling: scaling } = config;
  const legacy = config.rope_theta !== undefined || (scaling !== undefined && scaling !== null);
  const fromLegacy = { rope_type: scaling?.rope_type ?? scaling?.type ?? 'default', rope_theta: config.rope_theta ?? CONFIG_KEYS[architecture].implemented.rope_theta, ...withoutType(scaling ?? {}) };
  if (p5 != null && (typeof p5 !== 'object' || Array.isArray(p5))) throw invalid(`config.json: rope_parameters must be an object, got ${describe(p5)}`);
  if (scaling != null && (typeof scaling !== 'object' || Array.isArray(scaling))) throw invalid(`config.json: rope_scaling must be an object or null, got ${describe(scaling)}`);
  if (p5 != null && ('full_attention' in p5 || 'sliding_attention' in p5)) {
    throw invalid(`config.json: rope_parameters per layer type (${Object.keys(p5).join(', ')}) are not implemented for ${architecture}`);
  }
  let chosen = fromLegacy;
  if (p5 != null) {
    const from5 = { rope_type: p5.rope_type ?? p5.type ?? 'default', rope_theta: p5.rope_theta ?? fromLegacy.rope_theta, ...withoutType(p5) };
    if (legacy && !sameRope(fromLegacy, from5)) {
      throw invalid(`config.json: rope_parameters ${JSON.stringify(p5)} disagrees with rope_theta ${JSON.stringify(config.rope_theta)} / rope_scaling ${JSON.stringify(scaling ?? null)}`);
    }
    chosen = from5;
  }
  const { rope_type: type, rope_theta: theta, partial_rotary_factor: partial, ...params } = chosen;
  if (!Object.hasOwn(ROPE_TYPES, type)) throw invalid(`config.json: rope_type ${describe(type)} is not implemented (implemented: ${Object.keys(ROPE_TYPES).join(', ')})`);
  if (typeof theta !== 'number' || !Number.isFinite(theta) || theta <= 0) throw invalid(`config.json: rope_theta must be a number > 0, got ${describe(theta)}`);
  for (const [key, value] of Object.entries(params)) {
    if (!ROPE_TYPES[type].includes(key)) throw invalid(`config.json: rope key "${key}" (${describe(value)}) is not implemented for rope_type "${type}"`);
  }
  return { type, theta, params, partial };
}

function withoutType(o) {
  const { rope_type: _t, type: _u, rope_theta: _r, ...rest } = o;
  return rest;
}
// Two rope settings agree when every key either gives is equal (rope_type "default" = no scaling).
// partial_rotary_factor is compared with the top-level key by rotaryDimsOf instead.
function sameRope(a, b) {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  keys.delete('partial_rotary_factor');
  return [...keys].every((k) => sameValue(a[k], b[k]));
}

/**
 * The inverse frequencies (dims / 2, double; dims = the rotated features) of a rope setting, or null
 * for the default ones the core computes from theta; and the longest input the setting is exact for.
 */
export function ropeFrequencies({ type, theta, params }, headDim, maxPositions) {
  const base = () => Array.from({ length: headDim / 2 }, (_, i) => 1 / theta ** ((2 * i) / headDim));
  if (type === 'default') return { invFreq: null, maxPositions };
  if (type === 'linear') {
    const factor = positive(params, 'factor', 'rope linear');
    return { invFreq: base().map((f) => f / factor), maxPositions };
  }
  if (type === 'dynamic') {
    // transformers' dynamic NTK keeps the default frequencies up to original_max_position_embeddings
    // and rescales beyond it; we implement the first part and refuse longer inputs.
    positive(params, 'factor', 'rope dynamic');
    const original = params.original_max_position_embeddings ?? maxPositions;
    if (!Number.isSafeInteger(original) || original < 1) throw invalid(`config.json: rope dynamic original_max_position_embeddings must be a positive integer, got ${describe(original)}`);
    return { invFreq: null, maxPositions: Math.min(maxPositions, original) };
  }
  return { invFreq: llama3Frequencies(params, theta, headDim), maxPositions };
}

/** Llama 3's scaled RoPE frequencies (transformers' _compute_llama3_parameters), in double. */
function llama3Frequencies(scaling, theta, headDim) {
  const where = 'rope llama3';
  const factor = positive(scaling, 'factor', where), low = positive(scaling, 'low_freq_factor', where);
  const high = positive(scaling, 'high_freq_factor', where), old = positive(scaling, 'original_max_position_embeddings', where);
  const lowWavelen = old / low, highWavelen = old / high;
  return Array.from({ length: headDim / 2 }, (_, i) => {
    const f = 1 / theta ** ((2 * i) / headDim);
    const wavelen = (2 * Math.PI) / f;
    if (wavelen < highWavelen) return f;
    if (wavelen > lowWavelen) return f / factor;
    const smooth = (old / wavelen - low) / (high - low);
    return (1 - smooth) * (f / factor) + smooth * f;
  });
}

// The architecture a config names: model_type (what transformers' Auto classes read) and
// architectures[0] must name the same supported model.
function architectureOf(config) {
  const list = config.architectures;
  const architecture = Array.isArray(list) && list.length === 1 ? list[0] : undefined;
  if (!Object.hasOwn(CONFIG_KEYS, architecture)) {
    throw invalid(`config.json: architecture ${describe(Array.isArray(list) && list.length === 1 ? architecture : list)} is not supported; supported: ${ARCHITECTURES.join(', ')}`);
  }
  const want = CONFIG_KEYS[architecture].modelType;
  if (config.model_type !== undefined && config.model_type !== want) {
    throw invalid(`config.json: model_type ${describe(config.model_type)} does not match architecture ${architecture} (model_type "${want}")`);
  }
  return architecture;
}

function gpt2Core(r) {
  const act = r.get('activation_function');
  if (act !== 'gelu_new') throw invalid(`config.json: GPT-2 activation_function ${describe(act)} is not supported (only "gelu_new", the tanh GELU)`);
  const hidden = r.int('n_embd'), heads = r.int('n_head');
  return { arch: 0, vocabSize: r.int('vocab_size'), hidden, layers: r.int('n_layer'), heads, kvHeads: heads,
    headDim: Math.floor(hidden / heads), intermediate: r.int('n_inner', r.get('n_inner') ?? 4 * hidden), maxPositions: r.int('n_positions'),
    normEps: r.num('layer_norm_epsilon'), ropeTheta: 10000, qkvBias: false, tieEmbeddings: true };
}

// The Llama family's variants (src/model/pretrained.h), by architecture.
const QK_NORM = { none: 0, perHead: 1, allHeads: 2 };  // MhaConfig::QkNorm
const VARIANTS = {
  Qwen2ForCausalLM: { qkvBias: true },
  Qwen3ForCausalLM: { qkNorm: QK_NORM.perHead },
  Olmo2ForCausalLM: { qkNorm: QK_NORM.allHeads, postNorms: true },
  Phi3ForCausalLM: { fusedProjections: true },
};

function llamaCore(config, architecture, r) {
  const act = r.get('hidden_act');
  if (act !== 'silu') throw invalid(`config.json: hidden_act ${describe(act)} is not supported (only "silu")`);
  const hidden = r.int('hidden_size'), heads = r.int('num_attention_heads'), layers = r.int('num_hidden_layers');
  const headDim = r.int('head_dim', r.get('head_dim') ?? Math.floor(hidden / heads));
  const rope = ropeSettings(config, architecture);
  const rotaryDims = rotaryDimsOf(config, architecture, rope.partial, headDim);
  const { invFreq, maxPositions } = ropeFrequencies(rope, rotaryDims, r.int('max_position_embeddings'));
  const v = VARIANTS[architecture] ?? {};
  const core = { arch: 1, vocabSize: r.int('vocab_size'), hidden, layers, heads,
    kvHeads: r.int('num_key_value_heads', r.get('num_key_value_heads') ?? heads), headDim, intermediate: r.int('intermediate_size'),
    maxPositions, normEps: r.num('rms_norm_eps'), ropeTheta: rope.theta, qkvBias: Boolean(v.qkvBias),
    tieEmbeddings: r.get('tie_word_embeddings') === true, qkNorm: v.qkNorm ?? QK_NORM.none, postNorms: Boolean(v.postNorms),
    fusedProjections: Boolean(v.fusedProjections), rotaryDims: rotaryDims === headDim ? 0 : rotaryDims };
  if (invFreq) core.ropeInvFreq = invFreq;
  const windows = layerWindows(config, architecture, r, layers);
  if (windows) core.layerWindow = windows;
  if (architecture === 'SmolLM3ForCausalLM') core.layerRope = noRopeLayers(config, r, layers);
  return core;
}

// The features RoPE rotates: partial_rotary_factor · head_dim (Phi-3; top level or in the rope
// settings, which must then agree), else the whole head.
function rotaryDimsOf(config, architecture, inRope, headDim) {
  const top = config.partial_rotary_factor;
  if (top !== undefined && inRope !== undefined && top !== inRope) {
    throw invalid(`config.json: partial_rotary_factor ${JSON.stringify(top)} disagrees with the rope settings' ${JSON.stringify(inRope)}`);
  }
  const factor = top ?? inRope ?? 1;
  if (factor !== 1 && architecture !== 'Phi3ForCausalLM') throw invalid(`config.json: partial_rotary_factor = ${JSON.stringify(factor)} is not implemented for ${architecture} (only 1)`);
  if (typeof factor !== 'number' || !(factor > 0 && factor <= 1)) throw invalid(`config.json: partial_rotary_factor must be in (0, 1], got ${describe(factor)}`);
  const dims = Math.floor(headDim * factor);  // transformers: int(head_dim * partial_rotary_factor)
  if (dims < 2 || dims % 2 !== 0) throw invalid(`config.json: partial_rotary_factor ${factor} gives ${dims} rotated features of ${headDim}; an even number >= 2 is needed`);
  return dims;
}

// Each layer's sliding window (0 = full), or null when every layer is full.
function layerWindows(config, architecture, r, layers) {
  const window = r.get('sliding_window');
  const checked = () => {
    if (!Number.isSafeInteger(window) || window < 1) throw invalid(`config.json: sliding_window must be a positive integer or null, got ${describe(window)}`);
    return window;
  };
  if (architecture === 'MistralForCausalLM' || architecture === 'Phi3ForCausalLM') {
    return window === null ? null : new Array(layers).fill(checked());
  }
  if (!('use_sliding_window' in CONFIG_KEYS[architecture].implemented)) return null;
  const use = r.get('use_sliding_window'), given = config.layer_types;
  if (typeof use !== 'boolean') throw invalid(`config.json: use_sliding_window must be true or false, got ${describe(use)}`);
  if (given != null && (!Array.isArray(given) || given.length !== layers || given.some((t) => t !== 'full_attention' && t !== 'sliding_attention'))) {
    throw invalid(`config.json: layer_types must list "full_attention" or "sliding_attention" for each of the ${layers} layers, got ${describe(given)}`);
  }
  const anySliding = given?.includes('sliding_attention');
  // Without use_sliding_window (or without a window) transformers sets sliding_window to None:
  // every layer is full, and sliding layer_types would make it fail.
  if (!use || window === null) {
    if (anySliding) throw invalid('config.json: layer_types asks for sliding layers but use_sliding_window is false or sliding_window is null');
    return null;
  }
  if (architecture === 'SmolLM3ForCausalLM') throw invalid('config.json: SmolLM3 use_sliding_window = true is not implemented (only false)');
  const first = r.get('max_window_layers');  // layers before it stay full; 0 = every layer slides
  if (given == null && (!Number.isSafeInteger(first) || first < 0)) throw invalid(`config.json: max_window_layers must be an integer >= 0, got ${describe(first)}`);
  const types = given ?? Array.from({ length: layers }, (_, i) => (i >= first ? 'sliding_attention' : 'full_attention'));
  const w = checked();
  return types.map((t) => (t === 'sliding_attention' ? w : 0));
}

// SmolLM3: no_rope_layers[i] = 1 where layer i uses RoPE; by default every no_rope_layer_interval-th
// layer has none (SmolLM3Config: int((i + 1) % interval != 0)).
function noRopeLayers(config, r, layers) {
  const given = config.no_rope_layers;
  if (given != null) {
    if (!Array.isArray(given) || given.length !== layers || given.some((f) => f !== 0 && f !== 1)) {
      throw invalid(`config.json: no_rope_layers must hold 0 or 1 for each of the ${layers} layers, got ${describe(given)}`);
    }
    return given;
  }
  const interval = r.int('no_rope_layer_interval');
  return Array.from({ length: layers }, (_, i) => ((i + 1) % interval !== 0 ? 1 : 0));
}

/** The core's config of a parsed config.json; anything not implemented is INVALID_ARGUMENT naming it. */
export function coreConfig(config) {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) throw invalid(`config must be the parsed config.json object, got ${describe(config)}`);
  const architecture = architectureOf(config);
  checkKeys(config, architecture);
  const r = reader(config, architecture);
  const core = architecture === 'GPT2LMHeadModel' ? gpt2Core(r) : llamaCore(config, architecture, r);
  return { architecture, core };
}
