// <patching-view>'s runs: exact activation patching (model.patch: one run per entry) and attribution
// patching (model.attributionPatch: two forwards and one backward for every entry at once), in the
// widget's worker for a model loaded from `src`, in the page for a model set as a property; progress,
// Cancel (an AbortController, the jobs' signal), and what a finished run leaves in `el._shown`.
import { modelShape } from './interp-base.js';
import { attributionPatchInWorker, patchInWorker } from './patching-worker-client.js';
import { pearson } from './patching-compare.js';

const RUNS = { exact: ['patch', patchInWorker], attribution: ['attributionPatch', attributionPatchInWorker] };
const NOUN = { exact: 'patched runs', attribution: 'attribution steps' };

/** The runs a method asks for, in order: exact, attribution, or both (exact first). */
export const runsOf = (method) => (method === 'both' ? ['exact', 'attribution'] : [method]);

/** One run (`kind`: exact | attribution) of the plan's options, in the worker or the page → { result: { data, shape }, cleanDiff, corruptedDiff }. */
async function runOne(el, kind, options, where, onProgress, signal) {
  const [method, inWorker] = RUNS[kind];
  if (where === 'worker') return inWorker(el, options, onProgress, signal);
  if (typeof el._model[method] !== 'function')
    throw Object.assign(new Error(`this model has no ${method} method`), { code: 'UNSUPPORTED' });
  const out = await el._model[method]({ ...options, onProgress, signal });
  return {
    result: { data: Float32Array.from(out.result.data), shape: Array.from(out.result.shape) },
    cleanDiff: out.cleanDiff,
    corruptedDiff: out.corruptedDiff,
  };
}

/** Marks the run under way in the widget's controls; returns its { runId, controller }. */
function begin(el) {
  const runId = ++el._runId;
  const controller = new AbortController();
  el._active = { runId, controller };
  el.dataset.running = '';
  el._runButton.disabled = true;
  el._cancelButton.disabled = false;
  el._progress.value = 0;
  el._status.textContent = 'Running…';
  return el._active;
}

/** The controls after a run (finished, refused or cancelled). */
export function finishRun(el) {
  el._active = null;
  delete el.dataset.running;
  el._runButton.disabled = false;
  el._cancelButton.disabled = true;
}

/** What the finished runs leave shown: the plan, the grids (exact and/or attribution) and their agreement. */
function shownOf(el, p, method, out, where) {
  const { L } = modelShape(el._model);
  const first = out.exact ?? out.attribution;
  const exact = out.exact?.result.data ?? null,
    attribution = out.attribution?.result.data ?? null;
  return {
    ...p,
    L,
    cols: first.result.shape[1],
    method,
    result: exact ?? attribution,
    exact,
    attribution,
    correlation: exact && attribution ? pearson(exact, attribution) : null,
    cleanDiff: first.cleanDiff,
    corruptedDiff: first.corruptedDiff,
    where,
  };
}

/**
 * Runs the widget's method on plan p. Resolves to the shown state, or null when the run was replaced
 * by another or cancelled (an AbortError is thrown on to the caller).
 */
export async function runPatching(el, p) {
  const active = begin(el);
  const started = performance.now();
  const method = el.method;
  const { component, clean, corrupted, position, token, against } = p;
  const options = { clean, corrupted, position, token, against, component };
  const where = el._bytes && typeof Worker === 'function' ? 'worker' : 'page';
  const out = {};
  for (const kind of runsOf(method)) {
    const onProgress = (done, total) => {
      if (el._active?.runId !== active.runId) return;
      el._progress.max = total;
      el._progress.value = done;
      el._status.textContent = `${done} of ${total} ${NOUN[kind]}`;
      el.emit('patch-progress', { done, total });
    };
    out[kind] = await runOne(el, kind, options, where, onProgress, active.controller.signal);
    if (el._active?.runId !== active.runId) return null;
  }
  const ms = performance.now() - started;
  el._shown = shownOf(el, p, method, out, where);
  finishRun(el);
  const n = el._shown.result.length;
  el._status.textContent = `Done: ${n} entries in ${Math.round(ms)} ms (${where === 'worker' ? 'in a worker' : 'in the page'}).`;
  return { shown: el._shown, ms, where };
}
