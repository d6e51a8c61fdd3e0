// RoPE settings of a config.json in either layout and the inverse frequencies of each implemented
// rope_type: transformers 4 (rope_theta, rope_scaling at the top level) and transformers 5
// (rope_parameters); when both appear they must agree.
import { AttentionError } from '../errors.js';
import { describe } from '../options.js';

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);

export const sameValue = (a, b) => JSON.stringify(a) === JSON.stringify(b);

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
  longrope: ['short_factor', 'long_factor', 'factor', 'attention_factor', 'original_max_position_embeddings'],
  // llama_4_scaling_beta: Ministral 3's query temperature (read by a family whose variant has
  // queryTemperature, refused by the others); max_position_embeddings: Ministral3Config writes the
  // top-level value here too, and transformers' YaRN reads the top-level one.
  yarn: [
    'factor',
    'attention_factor',
    'beta_fast',
    'beta_slow',
    'mscale',
    'mscale_all_dim',
    'original_max_position_embeddings',
    'truncate',
    'llama_4_scaling_beta',
    'max_position_embeddings',
  ],
};

/**
 * The RoPE settings of a config in either layout: { type, theta, params } where params holds the
 * rope_type's own keys. transformers 4: rope_theta + rope_scaling; transformers 5: rope_parameters
 * ({ rope_type, rope_theta, … }). Both present: they must agree. `partial` is a
 * partial_rotary_factor given among the rope settings (rotaryDimsOf checks it). `defaultTheta`:
 * the architecture's class default for rope_theta; `architecture` names it in errors.
 */
export function ropeSettings(config, architecture, defaultTheta) {
  const { rope_parameters: p5, rope_scaling: scaling } = config;
  const legacy = config.rope_theta !== undefined || (scaling !== undefined && scaling !== null);
  const fromLegacy = {
    rope_type: scaling?.rope_type ?? scaling?.type ?? 'default',
    rope_theta: config.rope_theta ?? defaultTheta,
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
export function sameRope(a, b) {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  keys.delete('partial_rotary_factor');
  return [...keys].every((k) => sameValue(a[k], b[k]));
}

/**
 * The inverse frequencies (dims / 2, double; dims = the rotated features) of a rope setting, or null
 * for the default ones the core computes from theta; the longest input the setting is exact for; and
 * the factor cos and sin are multiplied by (1 but for LongRoPE and YaRN). `original`: the top-level
 * original_max_position_embeddings of a family that reads it (Phi-3), needed by longrope; a caller
 * without it refuses longrope. `yarn`: the family's variant implements YaRN (tested against its
 * fixture: Ministral 3); else it is refused.
 */
export function ropeFrequencies(
  { type, theta, params },
  headDim,
  maxPositions,
  original,
  { yarn = false, architecture = 'this architecture' } = {},
) {
  const base = () => Array.from({ length: headDim / 2 }, (_, i) => 1 / theta ** ((2 * i) / headDim));
  const plain = (invFreq, max = maxPositions) => ({ invFreq, maxPositions: max, attentionFactor: 1 });
  if (type === 'default') return plain(null);
  if (type === 'linear') {
    const factor = positive(params, 'factor', 'rope linear');
    return plain(base().map((f) => f / factor));
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
    return plain(null, Math.min(maxPositions, original));
  }
  if (type === 'longrope') return longRope(params, theta, headDim, maxPositions, original);
  if (type === 'yarn') {
    if (!yarn) throw invalid(`config.json: rope_type "yarn" is not implemented for ${architecture}`);
    return yarnFrequencies(params, theta, headDim, maxPositions);
  }
  return plain(llama3Frequencies(params, theta, headDim));
}

// YaRN (transformers' _compute_yarn_parameters, in double): with original_max_position_embeddings
// the factor is max_position_embeddings / original (the given `factor` is not used), else `factor`
// over max_position_embeddings; per pair m the extrapolated θ^(−2m/dims) and the interpolated one
// (÷ factor) blended by a ramp between the correction dims of beta_fast (32) and beta_slow (1)
// (floor / ceil unless truncate is false); cos and sin × attention_factor (default
// mscale(factor, mscale) / mscale(factor, mscale_all_dim) when both are given, else
// mscale(factor), mscale(s, m) = 1 + 0.1·m·ln s for s > 1, else 1).
function yarnFrequencies(params, theta, dims, maxPositions) {
  const where = 'rope yarn';
  let factor = positive(params, 'factor', where),
    original = maxPositions;
  if (params.original_max_position_embeddings !== undefined) {
    original = params.original_max_position_embeddings;
    if (!Number.isSafeInteger(original) || original < 1)
      throw invalid(
        `config.json: ${where} original_max_position_embeddings must be a positive integer, got ${describe(original)}`,
      );
    factor = maxPositions / original;
  }
  const inRope = params.max_position_embeddings;
  if (inRope !== undefined && inRope !== maxPositions)
    throw invalid(
      `config.json: ${where} max_position_embeddings ${describe(inRope)} disagrees with max_position_embeddings ${maxPositions}`,
    );
  for (const key of ['beta_fast', 'beta_slow', 'mscale', 'mscale_all_dim'])
    if (params[key] != null && params[key] !== 0) positive(params, key, where);
  if (params.truncate !== undefined && typeof params.truncate !== 'boolean')
    throw invalid(`config.json: ${where} truncate must be true or false, got ${describe(params.truncate)}`);
  const mscale = (s, m = 1) => (s <= 1 ? 1 : 0.1 * m * Math.log(s) + 1);
  const { mscale: ms, mscale_all_dim: all } = params;
  const attentionFactor =
    params.attention_factor != null
      ? positive(params, 'attention_factor', where)
      : ms && all
        ? mscale(factor, ms) / mscale(factor, all)
        : mscale(factor);
  const correction = (rotations) =>
    (dims * Math.log(original / (rotations * 2 * Math.PI))) / (2 * Math.log(theta));
  const truncate = params.truncate ?? true;
  let low = correction(params.beta_fast || 32),
    high = correction(params.beta_slow || 1);
  if (truncate) [low, high] = [Math.floor(low), Math.ceil(high)];
  low = Math.max(low, 0);
  high = Math.min(high, dims - 1);
  if (low === high) high += 0.001; // transformers' guard against a zero-width ramp
  const invFreq = Array.from({ length: dims / 2 }, (_, m) => {
    const extrapolated = 1 / theta ** ((2 * m) / dims),
      interpolated = extrapolated / factor;
    const ramp = Math.min(1, Math.max(0, (m - low) / (high - low)));
    return interpolated * ramp + extrapolated * (1 - ramp);
  });
  return { invFreq, maxPositions, attentionFactor };
}

// LongRoPE (transformers' _compute_longrope_parameters and longrope_frequency_update, Phi-3):
// inv_freq_m = 1 / (ext_m · θ^(2m/dims)) with ext = short_factor while the sequence is at most
// original_max_position_embeddings long and long_factor beyond; cos and sin × attention_factor
// (default √(1 + ln f / ln original), f = max_position_embeddings / original, 1 when f <= 1). We
// implement the short factors and cap the input at original_max_position_embeddings: a longer input
// is refused rather than computed with factors transformers would have switched (docs/checkpoints.md).
function longRope(params, theta, dims, maxPositions, topOriginal) {
  if (topOriginal === undefined)
    throw invalid('config.json: rope_type "longrope" is implemented for Phi-3 only');
  const inRope = params.original_max_position_embeddings;
  if (inRope !== undefined && inRope !== topOriginal)
    throw invalid(
      `config.json: rope original_max_position_embeddings ${describe(inRope)} disagrees with original_max_position_embeddings ${describe(topOriginal)}`,
    );
  const original = topOriginal;
  if (!Number.isSafeInteger(original) || original < 1)
    throw invalid(
      `config.json: original_max_position_embeddings must be a positive integer, got ${describe(original)}`,
    );
  const factors = (key) => {
    const v = params[key];
    if (!Array.isArray(v) || v.length !== dims / 2 || v.some((f) => typeof f !== 'number' || !(f > 0)))
      throw invalid(
        `config.json: rope longrope ${key} must hold ${dims / 2} numbers > 0 (one per rotated pair), got ${describe(v)}`,
      );
    return v;
  };
  const short = factors('short_factor');
  factors('long_factor'); // checked as transformers checks it; used only past the cap
  // transformers ignores rope_scaling.factor when the config has original_max_position_embeddings
  // (Phi-3's always has): the factor is max_position_embeddings / original.
  if (params.factor !== undefined) positive(params, 'factor', 'rope longrope');
  const factor = maxPositions / original;
  const attentionFactor =
    params.attention_factor !== undefined
      ? positive(params, 'attention_factor', 'rope longrope')
      : factor <= 1
        ? 1
        : Math.sqrt(1 + Math.log(factor) / Math.log(original));
  const invFreq = short.map((ext, m) => 1 / (ext * theta ** ((2 * m) / dims)));
  return { invFreq, maxPositions: Math.min(maxPositions, original), attentionFactor };
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
