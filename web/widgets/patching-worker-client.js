// <patching-view>'s jobs in web/workers/interp-worker.js (through interp-worker-client.js, which
// <token-saliency> shares): model.patch and model.attributionPatch off the page.
import { interpJob } from './interp-worker-client.js';

/**
 * Runs model.patch(options) in `el`'s worker (created on first use; the model's bytes sent once per
 * model): resolves to { result: { data, shape }, cleanDiff, corruptedDiff }. `signal` aborting
 * rejects it at once (AbortError) and cancels the job in the worker, which stops at its next batch.
 */
export function patchInWorker(el, options, onProgress, signal) {
  return interpJob(el, 'patching', 'patch', options, onProgress, signal);
}

/** model.attributionPatch(options) in `el`'s worker, as patchInWorker (the same result shape). */
export function attributionPatchInWorker(el, options, onProgress, signal) {
  return interpJob(el, 'patching', 'attributionPatch', options, onProgress, signal);
}
