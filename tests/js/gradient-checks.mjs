// Shared by the gradient tests (metric-gradients, saliency, attribution-patch, patch-mlp .test.mjs):
// the metric of a row of pre-cap logits, forwards from a residual with a perturbation, and models.

import { TinyTransformer } from '../../src/js/index.js';
import { patchMetric } from '../../src/js/interp/patch.js';

export { loadCheckpoint, refuses, code } from './interp-checks.mjs';

// A small TinyTransformer (vocab 11, T up to 8, 2 layers, 2 heads of 4).
export const tiny = (extra = {}) =>
  new TinyTransformer({
    vocabSize: 11,
    maxLength: 8,
    dModel: 8,
    numHeads: 2,
    numLayers: 2,
    seed: 5,
    positional: 'learned',
    ...extra,
  });

// M of the logits (pre-cap) at `position` of one forward (1, T, V) with the given hooks.
export function metricOf(a, ids, o, hooks = {}) {
  const r = a.forward(ids, 1, ids.length, hooks);
  const V = a.vocab;
  const position = o.position ?? ids.length - 1;
  const row = r.logits.data.subarray(position * V, (position + 1) * V);
  return patchMetric({ metric: o.metric ?? 'logit-diff', token: o.token, against: o.against })(row);
}

/**
 * The hooks of a run from block l with `stream` (1, T, E) (startAt), adding `delta` (1, T, E) at
 * `hook` when given.
 */
export function fromStream(l, stream, T, E, hook, delta) {
  const start = `blocks.${l}.hook_resid_pre`;
  const edits = [{ hook: start, op: 'set', value: stream, shape: [1, T, E] }];
  if (hook) edits.push({ hook, op: 'add', value: delta, shape: [1, T, E] });
  return { startAt: start, edits };
}

// A deterministic direction of n values in [−1, 1].
export function direction(n, seed = 1) {
  let s = seed;
  return Float32Array.from({ length: n }, () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return (s / 2147483648) * 2 - 1;
  });
}

export const dotOf = (a, b) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

// |got − want| <= tol.abs + tol.rel·|want|, or a message.
export const near = (got, want, tol) => Math.abs(got - want) <= tol.abs + tol.rel * Math.abs(want);
