// Positional helpers of today's attention: rotary embeddings (RoPE) and the ALiBi paper's slopes,
// computed by the core (src/core/rotary.h) so they are the very numbers the attention uses.
import { AttentionError, check } from '../errors.js';
import { checkInt, checkNumber, checkOptions, describe } from '../options.js';
import { asFloatTensor, fromCore } from '../tensor.js';

const ROTARY_OPTIONS = ['base', 'style', 'dims', 'offset'];
const STYLES = ['half', 'interleaved'];

/** { base, interleaved, dims (0 = all), offset } checked; the core checks ranges against d. */
export function rotaryOptions(options, what) {
  const { base = 10000, style = 'half', dims = 0, offset = 0 } = checkOptions(options, ROTARY_OPTIONS, what);
  if (!STYLES.includes(style)) {
    throw new AttentionError(
      'INVALID_ARGUMENT',
      `rotary style must be 'half' (GPT-NeoX, Llama) or 'interleaved' (GPT-J, RoFormer), got ${describe(style)}`,
    );
  }
  return {
    base: checkNumber(base, 'rotary base'),
    interleaved: style === 'interleaved',
    dims: checkInt(dims, 'rotary dims'),
    offset: checkInt(offset, 'rotary offset'),
  };
}

/** applyRotary, applyRotaryBackward and alibiSlopes over one wrapper's runtime (runtime.js). */
export function positionsApi({ requireCore, checkInputBytes }) {
  function rotary(x, options, backward, what) {
    const m = requireCore();
    const o = rotaryOptions(options, `${what} option`);
    const t = asFloatTensor(x, backward ? 'gradOutput' : 'x');
    checkInputBytes(what, [t]);
    return fromCore(check(m._rotary(t, o.base, o.interleaved, o.dims, o.offset, backward)).result);
  }

  /**
   * Rotary position embedding of x (..., T, d): row t at position offset + t; pairs (i, i + dims/2)
   * for style 'half' (GPT-NeoX, Llama's rotate_half) or (2i, 2i + 1) for 'interleaved' (GPT-J,
   * RoFormer), θ_i = base^(−2i/dims); features past `dims` pass through.
   */
  function applyRotary(x, options = {}) {
    return rotary(x, options, false, 'applyRotary');
  }

  /** The gradient of x for applyRotary(x, options) given the output's gradient: the inverse rotation. */
  function applyRotaryBackward(gradOutput, options = {}) {
    return rotary(gradOutput, options, true, 'applyRotaryBackward');
  }

  /** The ALiBi paper's slopes for numHeads heads (get_slopes), as a Float32Array. */
  function alibiSlopes(numHeads) {
    const m = requireCore();
    return check(m._alibiSlopes(checkInt(numHeads, 'numHeads'))).result;
  }

  return { applyRotary, applyRotaryBackward, alibiSlopes };
}
