// Where <token-saliency> computes: model.saliency(ids, options) (docs/interpretability.md) in the page,
// or — for a model loaded from `src`, where the worker can open its own copy — in
// web/workers/interp-worker.js (its `saliency` job, spoken to through web/workers/rpc.js), so integrated
// gradients (one backward per step) never hold up the page. The worker is created on first use and
// opened with the model's bytes once per model; the state lives on the element (el._worker, the
// WorkerClient; el._workerReady, the open call), where modelChanged and onDisconnect reset it.
import { WorkerClient, abortError } from '../workers/rpc.js';

function saliencyWorker(el) {
  const create = () =>
    new Worker(new URL('../workers/interp-worker.js', import.meta.url), { type: 'module' });
  el._worker ??= new WorkerClient(create, {
    onFail: (e) => {
      const message = `The saliency worker failed: ${e.message ?? 'error'}`;
      el._workerReady = null; // a new worker opens the model again
      el.showError(message);
      return message;
    },
  });
  return el._worker;
}

/** Whether a run of `method` goes to the worker: integrated gradients on a model loaded from `src`. */
export function runsInWorker(el, method) {
  return method === 'integrated-gradients' && !!el._bytes && typeof Worker === 'function';
}

async function inWorker(el, ids, options, onProgress, signal) {
  const worker = saliencyWorker(el);
  if (!el._workerReady) {
    const bytes = el._bytes.slice();
    el._workerReady = worker.call('open', { bytes }, { transfer: [bytes.buffer] });
  }
  await el._workerReady;
  if (signal.aborted) throw abortError();
  return new Promise((resolve, reject) => {
    signal.addEventListener('abort', () => reject(abortError()), { once: true });
    worker.call('saliency', { options: { ids, ...options } }, { signal, onProgress }).then(resolve, reject);
  });
}

/**
 * Runs model.saliency(ids, options) for `el` — in its worker (runsInWorker) or in the page — and
 * resolves to { scores: Float32Array (T), value, delta, where: 'worker' | 'page' }. `signal` aborting
 * rejects it (AbortError); in the worker the job stops at its next batch.
 */
export async function computeSaliency(el, ids, options, onProgress, signal) {
  if (runsInWorker(el, options.method)) {
    const r = await inWorker(el, ids, options, onProgress, signal);
    return { scores: Float32Array.from(r.scores.data), value: r.value, delta: r.delta, where: 'worker' };
  }
  const m = el.model;
  if (typeof m?.saliency !== 'function')
    throw new Error('this model has no saliency() (the library is too old)');
  const r = await m.saliency(ids, { ...options, onProgress, signal });
  return { scores: Float32Array.from(r.scores.data), value: r.value, delta: r.delta, where: 'page' };
}

/** Ends `el`'s worker (the element left the page, or its model changed). */
export function endSaliencyWorker(el) {
  el._worker?.terminate();
  el._worker = null;
  el._workerReady = null;
}
