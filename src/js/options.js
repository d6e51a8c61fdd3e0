// Checks of what callers pass besides tensors: option objects and plain numbers.
// Option objects are checked, not skimmed: an unknown key (a typo, or PyTorch's spelling such as
// `attn_mask`) is an INVALID_ARGUMENT naming it, because ignoring it would silently change the
// result (an ignored mask is an unmasked attention).
import { AttentionError } from './errors.js';

/** A value as an error message shows it: strings quoted, so `'8'` is not mistaken for `8`. */
export function describe(value) {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'bigint') return `${value}n`;
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name} of ${value.length ?? value.byteLength}`;
  if (value && typeof value === 'object') return `a ${value.constructor?.name ?? 'null-prototype'} object`;
  return String(value);
}

// PyTorch's names (and near misses) that users bring along, with what they are called here.
const RENAMED = {
  attn_mask:
    "mask (boolean, true = may attend: the opposite of nn.MultiheadAttention's boolean attn_mask) or additiveMask (float)",
  attnMask: 'mask (boolean, true = may attend) or additiveMask (float)',
  key_padding_mask: "keyPaddingMask (true = real token: the opposite of PyTorch's key_padding_mask)",
  need_weights: 'needWeights',
  average_attn_weights: 'averageWeights',
  is_causal: 'causal',
  dropout_p: 'dropout: { p, seed }',
  embed_dim: 'embedDim',
  num_heads: 'numHeads',
  add_bias_kv: 'addBiasKV',
  add_zero_attn: 'addZeroAttn',
  batch_first: 'nothing: inputs are always batch first, (B, T, E), or unbatched (T, E)',
};

// needWeights, need_weights, NeedWeights and need_Weights all look the same to this.
const loose = (key) => key.replace(/_/g, '').toLowerCase();

function unknownKeyMessage(key, known, what, hints) {
  const hint = hints?.[key] ?? RENAMED[key];
  if (hint) return `unknown ${what} '${key}': use ${hint}`;
  const near = known.find((k) => loose(k) === loose(key));
  if (near) return `unknown ${what} '${key}': did you mean '${near}'?`;
  return `unknown ${what} '${key}'; the known ones are ${known.join(', ')}`;
}

/**
 * `options` (undefined or null mean {}) as an object with only `known` keys; anything else throws
 * INVALID_ARGUMENT. `what` names it in messages ("forward option"); `hints` adds key-specific advice.
 * @param {unknown} options @param {string[]} known @param {string} what @param {Record<string, string>} [hints]
 * @returns {object}
 */
export function checkOptions(options, known, what, hints) {
  if (options == null) return {};
  if (typeof options !== 'object' || Array.isArray(options) || ArrayBuffer.isView(options)) {
    throw new AttentionError('INVALID_ARGUMENT', `${what}s must be an object, got ${describe(options)}`);
  }
  for (const key in options) {
    if (!known.includes(key))
      throw new AttentionError('INVALID_ARGUMENT', unknownKeyMessage(key, known, what, hints));
  }
  return options;
}

export function checkNumber(value, what) {
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new AttentionError('INVALID_ARGUMENT', `${what} must be a number, got ${describe(value)}`);
  }
  return value;
}

/** An integer that fits the core's int: anything else (2.5, '8', 2^31) is INVALID_ARGUMENT. */
export function checkInt(value, what) {
  if (!Number.isInteger(value) || Math.abs(value) > 0x7fffffff) {
    throw new AttentionError('INVALID_ARGUMENT', `${what} must be an integer, got ${describe(value)}`);
  }
  return value;
}

// Seeds are integers in [0, 2^53): the C++ side reads them as uint64.
export function checkSeed(value, what) {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new AttentionError(
      'INVALID_ARGUMENT',
      `${what} must be an integer in [0, 2^53), got ${describe(value)}`,
    );
  }
  return value;
}
