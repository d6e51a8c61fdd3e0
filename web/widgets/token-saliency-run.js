// Where <token-saliency> computes: model.saliency(ids, options) (docs/interpretability.md) in the page,
// or — for a model loaded from `src`, where the worker can open its own copy — in
// web/workers/interp-worker.js (its `saliency` job, through interp-worker-client.js), so integrated
// gradients (one backward per step) never hold up the page.
import { interpJob } from './interp-worker-client.js';

/** Whether a run of `method` goes to the worker: integrated gradients on a model loaded from `src`. */
export function runsInWorker(el, method) {
  return method === 'integrated-gradients' && !!el._bytes && typeof Worker === 'function';
}

/**
 * Runs model.saliency(ids, options) for `el` — in its worker (runsInWorker) or in the page — and
 * resolves to { scores: Float32Array (T), value, delta, where: 'worker' | 'page' }. `signal` aborting
 * rejects it (AbortError); in the worker the job stops at its next batch.
 */
export async function computeSaliency(el, ids, options, onProgress, signal) {
  if (runsInWorker(el, options.method)) {
    const r = await interpJob(el, 'saliency', 'saliency', { ids, ...options }, onProgress, signal);
    return { scores: Float32Array.from(r.scores.data), value: r.value, delta: r.delta, where: 'worker' };
  }
  const m = el.model;
  if (typeof m?.saliency !== 'function')
    throw new Error('this model has no saliency() (the library is too old)');
  const r = await m.saliency(ids, { ...options, onProgress, signal });
  return { scores: Float32Array.from(r.scores.data), value: r.value, delta: r.delta, where: 'page' };
}
