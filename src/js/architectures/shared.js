// What several families share: the config.json key rows of Qwen2's sliding window, the q/k norm
// kinds of the core and the checks of per-layer lists.
import { AttentionError } from '../errors.js';
import { describe } from '../options.js';

export const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);

// MhaConfig::QkNorm (generated into constants.js): none, per head (Qwen3, Gemma 3), over all heads (OLMo 2).
export { QK_NORM } from '../constants.js';

// Qwen2's (and Qwen3's, SmolLM3's) sliding window: it acts only with use_sliding_window true, on the
// layers layer_types marks "sliding_attention" (by default layer i >= max_window_layers).
export const QWEN_WINDOWS = {
  use_sliding_window: false,
  sliding_window: 4096,
  max_window_layers: 28,
  layer_types: null,
};

/** layer_types checked: null/undefined, or "full_attention" / "sliding_attention" for each layer. */
export function checkLayerTypes(given, layers) {
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
  return given;
}

/** A config value checked as a positive integer (a sliding window). */
export function positiveWindow(window) {
  if (!Number.isSafeInteger(window) || window < 1)
    throw invalid(`config.json: sliding_window must be a positive integer or null, got ${describe(window)}`);
  return window;
}
