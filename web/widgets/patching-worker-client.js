// <patching-view>'s side of web/workers/interp-worker.js (spoken to through web/workers/rpc.js): the
// worker is created on first use and opened with the model's bytes once per model. The state lives on
// the element (el._worker, the WorkerClient; el._workerReady, the open call), where modelChanged,
// cancel and onDisconnect reset it.
import { WorkerClient, abortError } from '../workers/rpc.js';

function patchingWorker(el) {
  const create = () =>
    new Worker(new URL('../workers/interp-worker.js', import.meta.url), { type: 'module' });
  el._worker ??= new WorkerClient(create, {
    onFail: (e) => {
      const message = `The patching worker failed: ${e.message ?? 'error'}`;
      el._workerReady = null; // a new worker opens the model again
      el.showError(message);
      return message;
    },
  });
  return el._worker;
}

/**
 * Runs model.patch(options) in `el`'s worker (created on first use; the model's bytes sent once per
 * model): resolves to { result: { data, shape }, cleanDiff, corruptedDiff }. `signal` aborting
 * rejects it at once (AbortError) and cancels the job in the worker, which stops at its next batch.
 */
export function patchInWorker(el, options, onProgress, signal) {
  return jobInWorker(el, 'patch', options, onProgress, signal);
}

/** model.attributionPatch(options) in `el`'s worker, as patchInWorker (the same result shape). */
export function attributionPatchInWorker(el, options, onProgress, signal) {
  return jobInWorker(el, 'attributionPatch', options, onProgress, signal);
}

/** The worker's job `type` ({ options } in, progress and abort as patchInWorker says). */
async function jobInWorker(el, type, options, onProgress, signal) {
  const worker = patchingWorker(el);
  if (!el._workerReady) {
    const bytes = el._bytes.slice();
    el._workerReady = worker.call('open', { bytes }, { transfer: [bytes.buffer] });
  }
  await el._workerReady;
  if (signal.aborted) throw abortError();
  return new Promise((resolve, reject) => {
    signal.addEventListener('abort', () => reject(abortError()), { once: true });
    worker.call(type, { options }, { signal, onProgress }).then(resolve, reject);
  });
}
