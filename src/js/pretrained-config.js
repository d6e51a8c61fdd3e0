// config.json → the core's PretrainedConfig, under the rule "no silent wrong answers": every key of a
// supported architecture's config must be in its table (pretrained-keys.js) as implemented, inert or
// inert only at its default; any other key, a default-only key at another value, a rope_type we do
// not implement, quantization_config, auto_map and any unknown architecture is INVALID_ARGUMENT
// naming the key and the value. Both config layouts are read: transformers 4 (rope_theta,
// rope_scaling at the top level) and transformers 5 (rope_parameters); when both appear they must agree.
import { AttentionError } from './errors.js';
import { describe } from './options.js';
import { PRETRAINED_ARCH } from './constants.js';
import { ARCHITECTURES, CONFIG_KEYS, DEFAULT_ONLY_COMMON, INERT_COMMON, REFUSED } from './pretrained-keys.js';

export { ARCHITECTURES, CONFIG_KEYS, DEFAULT_ONLY_COMMON, INERT_COMMON, REFUSED };

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);

const sameValue = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// Every key of `config` is in the architecture's table; default-only keys hold their default.
function checkKeys(config, architecture) {
  const t = CONFIG_KEYS[architecture];
  for (const [key, value] of Object.entries(config)) {
    if (Object.hasOwn(REFUSED, key)) throw invalid(`config.json: ${key}: ${REFUSED[key]}`);
    if (Object.hasOwn(t.implemented, key) || t.inert.includes(key) || INERT_COMMON.includes(key)) continue;
    const defaults = Object.hasOwn(t.defaultOnly, key)
      ? t.defaultOnly
      : Object.hasOwn(DEFAULT_ONLY_COMMON, key)
        ? DEFAULT_ONLY_COMMON
        : null;
    if (!defaults)
      throw invalid(`config.json: key "${key}" (${describe(value)}) is not implemented for ${architecture}`);
    // null for a default of false is false, as in transformers (Python's None is falsy): Gemma 2's
    // config class writes use_bidirectional_attention: null.
    if (!sameValue(value, defaults[key]) && !(defaults[key] === false && value === null)) {
      throw invalid(
        `config.json: ${key} = ${JSON.stringify(value)} is not implemented for ${architecture} (only ${JSON.stringify(defaults[key])})`,
      );
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
      if (!Number.isSafeInteger(v) || v < 1)
        throw invalid(`config.json: ${key} must be a positive integer, got ${describe(v)}`);
      return v;
    },
    num(key) {
      const v = get(key);
      if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)
        throw invalid(`config.json: ${key} must be a number > 0, got ${describe(v)}`);
      return v;
    },
  };
}

function positive(object, key, where) {
  const v = object[key];
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)
    throw invalid(`config.json: ${where}.${key} must be a number > 0, got ${describe(v)}`);
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
  const fromLegacy = {
    rope_type: scaling?.rope_type ?? scaling?.type ?? 'default',
    rope_theta: config.rope_theta ?? CONFIG_KEYS[architecture].implemented.rope_theta,
    ...withoutType(scaling ?? {}),
  };
  if (p5 != null && (typeof p5 !== 'object' || Array.isArray(p5)))
    throw invalid(`config.json: rope_parameters must be an object, got ${describe(p5)}`);
  if (scaling != null && (typeof scaling !== 'object' || Array.isArray(scaling)))
    throw invalid(`config.json: rope_scaling must be an object or null, got ${describe(scaling)}`);
  if (p5 != null && ('full_attention' in p5 || 'sliding_attention' in p5)) {
    throw invalid(
      `config.json: rope_parameters per layer type (${Object.keys(p5).join(', ')}) are not implemented for ${architecture}`,
    );
  }
  let chosen = fromLegacy;
  if (p5 != null) {
    const from5 = {
      rope_type: p5.rope_type ?? p5.type ?? 'default',
      rope_theta: p5.rope_theta ?? fromLegacy.rope_theta,
      ...withoutType(p5),
    };
    if (legacy && !sameRope(fromLegacy, from5)) {
      throw invalid(
        `config.json: rope_parameters ${JSON.stringify(p5)} disagrees with rope_theta ${JSON.stringify(config.rope_theta)} / rope_scaling ${JSON.stringify(scaling ?? null)}`,
      );
    }
    chosen = from5;
  }
  const { rope_type: type, rope_theta: theta, partial_rotary_factor: partial, ...params } = chosen;
  if (!Object.hasOwn(ROPE_TYPES, type))
    throw invalid(
      `config.json: rope_type ${describe(type)} is not implemented (implemented: ${Object.keys(ROPE_TYPES).join(', ')})`,
    );
  if (typeof theta !== 'number' || !Number.isFinite(theta) || theta <= 0)
    throw invalid(`config.json: rope_theta must be a number > 0, got ${describe(theta)}`);
  for (const [key, value] of Object.entries(params)) {
    if (!ROPE_TYPES[type].includes(key))
      throw invalid(
        `config.json: rope key "${key}" (${describe(value)}) is not implemented for rope_type "${type}"`,
      );
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
    if (!Number.isSafeInteger(original) || original < 1)
      throw invalid(
        `config.json: rope dynamic original_max_position_embeddings must be a positive integer, got ${describe(original)}`,
      );
    return { invFreq: null, maxPositions: Math.min(maxPositions, original) };
  }
  return { invFreq: llama3Frequencies(params, theta, headDim), maxPositions };
}

/** Llama 3's scaled RoPE frequencies (transformers' _compute_llama3_parameters), in double. */
function llama3Frequencies(scaling, theta, headDim) {
  const where = 'rope llama3';
  const factor = positive(scaling, 'factor', where),
    low = positive(scaling, 'low_freq_factor', where);
  const high = positive(scaling, 'high_freq_factor', where),
    old = positive(scaling, 'original_max_position_embeddings', where);
  const lowWavelen = old / low,
    highWavelen = old / high;
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
    throw invalid(
      `config.json: architecture ${describe(Array.isArray(list) && list.length === 1 ? architecture : list)} is not supported; supported: ${ARCHITECTURES.join(', ')}`,
    );
  }
  const want = CONFIG_KEYS[architecture].modelType;
  if (config.model_type !== undefined && config.model_type !== want) {
    throw invalid(
      `config.json: model_type ${describe(config.model_type)} does not match architecture ${architecture} (model_type "${want}")`,
    );
  }
  return architecture;
}

function gpt2Core(r) {
  const act = r.get('activation_function');
  if (act !== 'gelu_new')
    throw invalid(
      `config.json: GPT-2 activation_function ${describe(act)} is not supported (only "gelu_new", the tanh GELU)`,
    );
  const hidden = r.int('n_embd'),
    heads = r.int('n_head');
  return {
    arch: PRETRAINED_ARCH.GPT2,
    vocabSize: r.int('vocab_size'),
    hidden,
    layers: r.int('n_layer'),
    heads,
    kvHeads: heads,
    headDim: Math.floor(hidden / heads),
    intermediate: r.int('n_inner', r.get('n_inner') ?? 4 * hidden),
    maxPositions: r.int('n_positions'),
    normEps: r.num('layer_norm_epsilon'),
    ropeTheta: 10000,
    qkvBias: false,
    tieEmbeddings: true,
  };
}

// The Llama family's variants (src/model/pretrained.h), by architecture.
const QK_NORM = { none: 0, perHead: 1, allHeads: 2 }; // MhaConfig::QkNorm
const VARIANTS = {
  Qwen2ForCausalLM: { qkvBias: true },
  Qwen3ForCausalLM: { qkNorm: QK_NORM.perHead },
  Olmo2ForCausalLM: { qkNorm: QK_NORM.allHeads, preNorms: false, postNorms: true },
  Phi3ForCausalLM: { fusedProjections: true },
};

function llamaCore(config, architecture, r) {
  if (architecture === 'Gemma3ForCausalLM' || architecture === 'Gemma2ForCausalLM')
    return gemmaCore(config, architecture, r);
  const act = r.get('hidden_act');
  if (act !== 'silu')
    throw invalid(`config.json: hidden_act ${describe(act)} is not supported (only "silu")`);
  const hidden = r.int('hidden_size'),
    heads = r.int('num_attention_heads'),
    layers = r.int('num_hidden_layers');
  const headDim = r.int('head_dim', r.get('head_dim') ?? Math.floor(hidden / heads));
  const rope = ropeSettings(config, architecture);
  const rotaryDims = rotaryDimsOf(config, architecture, rope.partial, headDim);
  const { invFreq, maxPositions } = ropeFrequencies(rope, rotaryDims, r.int('max_position_embeddings'));
  const v = VARIANTS[architecture] ?? {};
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
  const windows = layerWindows(config, architecture, r, layers);
  if (windows) core.layerWindow = windows;
  if (architecture === 'SmolLM3ForCausalLM') core.layerRope = noRopeLayers(config, r, layers);
  return core;
}

// Gemma 2 and 3 (transformers' Gemma2Model, Gemma3TextModel): embeddings × √hidden_size, RMSNorm with
// (1 + w), a norm before and after both the attention and the MLP, GeGLU (gelu_pytorch_tanh), scores
// scaled by query_pre_attn_scalar^−1/2, sliding layers by layer_types (Gemma 2: every other layer;
// Gemma 3: all but each sliding_window_pattern-th). Gemma 2: attention-logit and final-logit
// soft-capping, one RoPE. Gemma 3: per-head q/k norms and one RoPE per layer type (the full layers'
// rope_theta + scaling, the sliding layers' rope_local_base_freq, unscaled).
function gemmaCore(config, architecture, r) {
  const gemma2 = architecture === 'Gemma2ForCausalLM';
  const act = r.get('hidden_activation');
  if (act !== 'gelu_pytorch_tanh')
    throw invalid(
      `config.json: hidden_activation ${describe(act)} is not supported (only "gelu_pytorch_tanh")`,
    );
  const hidden = r.int('hidden_size'),
    heads = r.int('num_attention_heads'),
    layers = r.int('num_hidden_layers');
  const headDim = r.int('head_dim');
  const { full, sliding } = gemma2
    ? { full: ropeSettings(config, architecture), sliding: null }
    : gemmaRopes(config);
  if (full.partial !== undefined)
    throw invalid(`config.json: partial_rotary_factor is not implemented for ${architecture}`);
  const { invFreq, maxPositions } = ropeFrequencies(full, headDim, r.int('max_position_embeddings'));
  const core = {
    arch: PRETRAINED_ARCH.LLAMA,
    vocabSize: r.int('vocab_size'),
    hidden,
    layers,
    heads,
    kvHeads: r.int('num_key_value_heads'),
    headDim,
    intermediate: r.int('intermediate_size'),
    maxPositions,
    normEps: r.num('rms_norm_eps'),
    ropeTheta: full.theta,
    qkvBias: false,
    tieEmbeddings: r.get('tie_word_embeddings') === true,
    qkNorm: gemma2 ? QK_NORM.none : QK_NORM.perHead,
    preNorms: true,
    postNorms: true,
    fusedProjections: false,
    rotaryDims: 0,
    normWeightOffset: 1,
    embedScale: Math.fround(Math.sqrt(hidden)),
    attentionScale: r.num('query_pre_attn_scalar') ** -0.5,
    geluMlp: true,
    localRopeTheta: sliding?.theta ?? 0,
    layerWindow: gemmaWindows(config, r, layers, gemma2 ? 2 : 6),
    attnSoftcap: gemma2 ? softcap(r, 'attn_logit_softcapping') : 0,
    finalSoftcap: gemma2 ? softcap(r, 'final_logit_softcapping') : 0,
  };
  if (invFreq) core.ropeInvFreq = invFreq;
  return core;
}

// Gemma 3's two RoPEs, from either layout: transformers 4 (rope_theta + rope_scaling for the full
// layers, rope_local_base_freq for the sliding ones) or 5 (rope_parameters keyed by layer type).
function gemmaRopes(config) {
  const p5 = config.rope_parameters;
  const v4 = {
    full: ropeSettings(
      { rope_theta: config.rope_theta ?? 1e6, rope_scaling: config.rope_scaling },
      'Gemma3ForCausalLM',
    ),
    sliding: ropeSettings({ rope_theta: config.rope_local_base_freq ?? 1e4 }, 'Gemma3ForCausalLM'),
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
      full: ropeSettings({ rope_parameters: p5.full_attention }, 'Gemma3ForCausalLM'),
      sliding: ropeSettings({ rope_parameters: p5.sliding_attention }, 'Gemma3ForCausalLM'),
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

// A soft-capping value: a number > 0, or null (none).
function softcap(r, key) {
  const v = r.get(key);
  if (v === null) return 0;
  return r.num(key);
}

// Each Gemma layer's window (0 = full): layer_types, else sliding but every pattern-th layer (Gemma 2:
// every other one; Gemma 3: sliding_window_pattern, 6 by default).
function gemmaWindows(config, r, layers, defaultPattern) {
  const window = r.int('sliding_window');
  const pattern = config.sliding_window_pattern ?? config._sliding_window_pattern ?? defaultPattern;
  if (!Number.isSafeInteger(pattern) || pattern < 1)
    throw invalid(`config.json: sliding_window_pattern must be a positive integer, got ${describe(pattern)}`);
  const given = config.layer_types;
  if (
    given != null &&
    (!Array.isArray(given) ||
      given.length !== layers ||
      given.some((t) => t !== 'full_attention' && t !== 'sliding_attention'))
  ) {
    throw invalid(
      `config.json: layer_types must list "full_attention" or "sliding_attention" for each of the ${layers} layers, got ${describe(given)}`,
    );
  }
  const types =
    given ??
    Array.from({ length: layers }, (_, i) =>
      (i + 1) % pattern !== 0 ? 'sliding_attention' : 'full_attention',
    );
  return types.map((t) => (t === 'sliding_attention' ? window : 0));
}

// The features RoPE rotates: partial_rotary_factor · head_dim (Phi-3; top level or in the rope
// settings, which must then agree), else the whole head.
function rotaryDimsOf(config, architecture, inRope, headDim) {
  const top = config.partial_rotary_factor;
  if (top !== undefined && inRope !== undefined && top !== inRope) {
    throw invalid(
      `config.json: partial_rotary_factor ${JSON.stringify(top)} disagrees with the rope settings' ${JSON.stringify(inRope)}`,
    );
  }
  const factor = top ?? inRope ?? 1;
  if (factor !== 1 && architecture !== 'Phi3ForCausalLM')
    throw invalid(
      `config.json: partial_rotary_factor = ${JSON.stringify(factor)} is not implemented for ${architecture} (only 1)`,
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
function layerWindows(config, architecture, r, layers) {
  const window = r.get('sliding_window');
  const checked = () => {
    if (!Number.isSafeInteger(window) || window < 1)
      throw invalid(
        `config.json: sliding_window must be a positive integer or null, got ${describe(window)}`,
      );
    return window;
  };
  if (architecture === 'MistralForCausalLM' || architecture === 'Phi3ForCausalLM') {
    return window === null ? null : new Array(layers).fill(checked());
  }
  if (!('use_sliding_window' in CONFIG_KEYS[architecture].implemented)) return null;
  const use = r.get('use_sliding_window'),
    given = config.layer_types;
  if (typeof use !== 'boolean')
    throw invalid(`config.json: use_sliding_window must be true or false, got ${describe(use)}`);
  if (
    given != null &&
    (!Array.isArray(given) ||
      given.length !== layers ||
      given.some((t) => t !== 'full_attention' && t !== 'sliding_attention'))
  ) {
    throw invalid(
      `config.json: layer_types must list "full_attention" or "sliding_attention" for each of the ${layers} layers, got ${describe(given)}`,
    );
  }
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
  if (architecture === 'SmolLM3ForCausalLM')
    throw invalid('config.json: SmolLM3 use_sliding_window = true is not implemented (only false)');
  const first = r.get('max_window_layers'); // layers before it stay full; 0 = every layer slides
  if (given == null && (!Number.isSafeInteger(first) || first < 0))
    throw invalid(`config.json: max_window_layers must be an integer >= 0, got ${describe(first)}`);
  const types =
    given ?? Array.from({ length: layers }, (_, i) => (i >= first ? 'sliding_attention' : 'full_attention'));
  const w = checked();
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

/** The core's config of a parsed config.json; anything not implemented is INVALID_ARGUMENT naming it. */
export function coreConfig(config) {
  if (config === null || typeof config !== 'object' || Array.isArray(config))
    throw invalid(`config must be the parsed config.json object, got ${describe(config)}`);
  const architecture = architectureOf(config);
  checkKeys(config, architecture);
  const r = reader(config, architecture);
  const core = architecture === 'GPT2LMHeadModel' ? gpt2Core(r) : llamaCore(config, architecture, r);
  return { architecture, core };
}
