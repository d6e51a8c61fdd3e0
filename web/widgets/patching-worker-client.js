// <patching-view>'s side of web/workers/interp-worker.js: the worker is created on first use, opened
// with the model's bytes once per model, and answers { id, value } | { id, error } | { id, progress }.
// The state lives on the element (el._worker, el._workerReady, el._pending, el._requestId, el._active),
// where modelChanged, cancel and onDisconnect reset it.

/**
 * One request to `el`'s worker; resolves to its value, rejects with its error. A patch request is
 * recorded on the run under way (el._active) so that cancel() can abort it in the worker.
 */
function request(el, message, transfer = [], onProgress) {
  const id = (el._requestId = (el._requestId ?? 0) + 1);
  return new Promise((resolve, reject) => {
    el._pending ??= new Map();
    el._pending.set(id, { resolve, reject, onProgress });
    el._worker.postMessage({ ...message, id }, transfer);
    if (message.type === 'patch' && el._active) {
      el._active.workerId = id;
      el._active.reject = reject;
    }
  });
}

/**
 * Runs model.patch(options) in `el`'s worker (created on first use; the model's bytes sent once per
 * model): resolves to { result: { data, shape }, cleanDiff, corruptedDiff }.
 */
export async function patchInWorker(el, options, onProgress, signal) {
  if (!el._worker) {
    el._worker = new Worker(new URL('../workers/interp-worker.js', import.meta.url), { type: 'module' });
    el._worker.onmessage = ({ data }) => {
      const p = el._pending?.get(data.id);
      if (!p) return;
      if (data.progress) {
        p.onProgress?.(...data.progress);
        return;
      }
      el._pending.delete(data.id);
      if (data.error)
        p.reject(
          Object.assign(new Error(data.error.message), { name: data.error.name, code: data.error.code }),
        );
      else p.resolve(data.value);
    };
    el._worker.onerror = (e) => el.showError(`The patching worker failed: ${e.message ?? 'error'}`);
  }
  if (!el._workerReady) {
    const bytes = el._bytes.slice();
    el._workerReady = request(el, { type: 'open', bytes }, [bytes.buffer]);
  }
  await el._workerReady;
  if (signal.aborted) throw Object.assign(new Error('The operation was aborted'), { name: 'AbortError' });
  return request(el, { type: 'patch', options }, [], onProgress);
}
