// Where <token-saliency> computes: model.saliency(ids, options) (docs/interpretability.md) in the page,
// or — for a model loaded from `src`, where the worker can open its own copy — in
// web/workers/interp-worker.js (its `saliency` job, through an InterpWorker of interp-worker-client.js),
// so integrated gradients (one backward per step) never hold up the page.

/** Whether a run of `method` goes to the worker: integrated gradients on a model loaded from a file (`bytes`). */
export function runsInWorker(bytes, method) {
  return method === 'integrated-gradients' && !!bytes && typeof Worker === 'function';
}

/**
 * Runs model.saliency(ids, options) — in `worker` (an InterpWorker) on the model file `bytes` when
 * runsInWorker, else on `model` in the page — and resolves to { scores: Float32Array (T), value,
 * delta, where: 'worker' | 'page' }. `signal` aborting rejects it (AbortError); in the worker the job
 * stops at its next batch.
 */
export async function computeSaliency({ model, bytes, worker }, ids, options, onProgress, signal) {
  if (runsInWorker(bytes, options.method)) {
    const r = await worker.run(bytes, 'saliency', { ids, ...options }, onProgress, signal);
    return { scores: Float32Array.from(r.scores.data), value: r.value, delta: r.delta, where: 'worker' };
  }
  if (typeof model?.saliency !== 'function')
    throw new Error('this model has no saliency() (the library is too old)');
  const r = await model.saliency(ids, { ...options, onProgress, signal });
  return { scores: Float32Array.from(r.scores.data), value: r.value, delta: r.delta, where: 'page' };
}
