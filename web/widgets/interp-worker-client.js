// An element's side of web/workers/interp-worker.js (spoken to through web/workers/rpc.js), one for
// every widget that runs the interpretability jobs off the page (<token-saliency>, <patching-view>):
// the worker is created on first use and opened with the element's model bytes (el._bytes) once per
// model. The state lives on the element (el._worker, the WorkerClient; el._workerReady, the open
// call): the element resets el._workerReady when its model changes and calls endInterpWorker when it
// leaves the page.
import { WorkerClient, abortError } from '../workers/rpc.js';

function interpWorker(el, what) {
  const create = () =>
    new Worker(new URL('../workers/interp-worker.js', import.meta.url), { type: 'module' });
  el._worker ??= new WorkerClient(create, {
    onFail: (e) => {
      const message = `The ${what} worker failed: ${e.message ?? 'error'}`;
      el._workerReady = null; // a new worker opens the model again
      el.showError(message);
      return message;
    },
  });
  return el._worker;
}

/**
 * Runs the worker's job `type` ({ options } in) for `el`; `what` names the worker in an error
 * ("saliency", "patching"). `signal` aborting rejects it at once (AbortError) and cancels the job in
 * the worker, which stops at its next batch; onProgress gets the job's progress.
 */
export async function interpJob(el, what, type, options, onProgress, signal) {
  const worker = interpWorker(el, what);
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

/** Ends `el`'s worker (the element left the page). */
export function endInterpWorker(el) {
  el._worker?.terminate();
  el._worker = null;
  el._workerReady = null;
}
