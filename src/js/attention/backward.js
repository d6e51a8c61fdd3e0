// Backward (gradient) functions: for a forward y = f(inputs) and an upstream gradient dy of y's
// shape, each returns the gradients of sum(y ⊙ dy) with respect to the inputs. Options are the
// forward's, checked by the same code; errors are the forward's, plus those of gradOutput.
import { check } from '../errors.js';
import { checkOptions } from '../options.js';
import { SDPA_OPTIONS, commonOptions, layerNormOptions } from '../runtime/runtime.js';
import { asFloatTensor, fromCore } from '../tensor.js';

/**
 * The backward functions over one wrapper's runtime (runtime.js createRuntime): index.js makes them
 * with its own and re-exports them.
 */
export function backwardApi({ requireCore, checkInputBytes }) {
  /**
   * Gradients of scaledDotProductAttention(q, k, v, options) with respect to q, k and v, for the
   * upstream gradient `gradOutput` (the output's shape). Options as the forward's (the same dropout
   * seed replays the same dropout mask); `needWeights` and `trace` are accepted and ignored.
   */
  function scaledDotProductAttentionBackward(q, k, v, gradOutput, options = {}) {
    const m = requireCore();
    const o = commonOptions(checkOptions(options, SDPA_OPTIONS, 'scaledDotProductAttentionBackward option'));
    const inputs = [
      asFloatTensor(q, 'q'),
      asFloatTensor(k, 'k'),
      asFloatTensor(v, 'v'),
      asFloatTensor(gradOutput, 'gradOutput'),
    ];
    checkInputBytes('scaled dot-product attention backward', [...inputs, o.mask, o.additiveMask]);
    const r = check(m._sdpaBackward(...inputs, o));
    return { q: fromCore(r.q), k: fromCore(r.k), v: fromCore(r.v) };
  }

  /** Gradient of softmax (last axis) with respect to its input, from its output `y` = softmax(x). */
  function softmaxBackward(y, gradOutput) {
    const m = requireCore();
    const inputs = [asFloatTensor(y, 'y'), asFloatTensor(gradOutput, 'gradOutput')];
    checkInputBytes('softmaxBackward', inputs);
    return fromCore(check(m._softmaxBackward(...inputs)).result);
  }

  /**
   * Gradients of layerNorm(x, options): `x` always, `weight` and `bias` when the options give them.
   * Options as layerNorm's.
   */
  function layerNormBackward(x, gradOutput, options = {}) {
    const m = requireCore();
    const { eps, weight, bias } = layerNormOptions(options, 'layerNormBackward option');
    const t = asFloatTensor(x, 'x');
    const dy = asFloatTensor(gradOutput, 'gradOutput');
    checkInputBytes('layerNormBackward', [t, dy, weight, bias]);
    const r = check(m._layerNormBackward(t, dy, eps, weight?.data ?? null, bias?.data ?? null));
    const grads = { x: fromCore(r.x) };
    if (r.weight) grads.weight = fromCore(r.weight);
    if (r.bias) grads.bias = fromCore(r.bias);
    return grads;
  }

  return { scaledDotProductAttentionBackward, softmaxBackward, layerNormBackward };
}
