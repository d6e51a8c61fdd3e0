// <patching-view>'s runs, a PatchingRunner: exact activation patching (model.patch: one run per
// entry) and attribution patching (model.attributionPatch: two forwards and one backward for every
// entry at once), in the widget's worker (web/workers/interp-worker.js through an InterpWorker) for a
// model loaded from `src`, in the page for a model set as a property; the Run and Cancel buttons, the
// progress bar and the status line; Cancel (an AbortController, the jobs' signal); and what a
// finished run leaves to show.
import { h } from '../base-element.js';
import { modelShape } from './interp-base.js';
import { InterpWorker } from './interp-worker-client.js';
import { pearson } from './patching-compare.js';

const METHODS = { exact: 'patch', attribution: 'attributionPatch' };
const NOUN = { exact: 'patched runs', attribution: 'attribution steps' };

/** The runs a method asks for, in order: exact, attribution, or both (exact first). */
export const runsOf = (method) => (method === 'both' ? ['exact', 'attribution'] : [method]);

/** What the finished runs `out` ({ exact?, attribution? }) of plan p leave shown: the plan, the grids and their agreement. */
function shownOf(model, p, method, out, where) {
  const { L } = modelShape(model);
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
 * The runs of a <patching-view> (`host`: its run(), cancel(), events, error line and data-running):
 * one at a time, the one under way cancelled by the next.
 */
export class PatchingRunner {
  #host;
  #worker;
  #runId = 0;
  #active = null; // the run under way: { runId, controller }
  #runButton;
  #cancelButton;
  #progress;
  #status;

  constructor(host) {
    this.#host = host;
    this.#worker = new InterpWorker('patching', (message) => host.showError(message));
  }

  /** Builds Run, Cancel, the progress bar and the status line: the row to lay out. */
  controls() {
    const host = this.#host;
    this.#runButton = h('button', {
      type: 'button',
      class: 'run-button',
      text: 'Run',
      onclick: () => {
        host.run();
      },
    });
    this.#cancelButton = h('button', {
      type: 'button',
      class: 'cancel-button',
      text: 'Cancel',
      disabled: true,
      onclick: () => host.cancel(),
    });
    this.#progress = h('progress', { max: '1', value: '0', 'aria-label': 'Patching progress' });
    this.#status = h('span', { class: 'muted small', role: 'status' });
    return h('div', { class: 'run' }, this.#runButton, this.#cancelButton, this.#progress, this.#status);
  }

  /** Whether a run is under way. */
  get running() {
    return Boolean(this.#active);
  }

  /** Enables Run where the inputs make a plan (`canRun`) and no run is under way. */
  allow(canRun) {
    this.#runButton.disabled = !canRun || this.running;
  }

  /** Marks a new run under way in the controls; returns it ({ runId, controller }) for execute and isCurrent. */
  begin() {
    const runId = ++this.#runId;
    const controller = new AbortController();
    this.#active = { runId, controller };
    this.#host.dataset.running = '';
    this.#runButton.disabled = true;
    this.#cancelButton.disabled = false;
    this.#progress.value = 0;
    this.#status.textContent = 'Running…';
    return this.#active;
  }

  /** Whether `run` (from begin) is still the run under way: not finished, cancelled or replaced. */
  isCurrent(run) {
    return this.#active?.runId === run.runId;
  }

  /** The controls after a run (finished, refused or cancelled). */
  #finish() {
    this.#active = null;
    delete this.#host.dataset.running;
    this.#runButton.disabled = false;
    this.#cancelButton.disabled = true;
  }

  /** One run (`kind`: exact | attribution) of `options` → { result: { data, shape }, cleanDiff, corruptedDiff }. */
  async #runOne(kind, options, source, onProgress, signal) {
    const method = METHODS[kind];
    if (source.where === 'worker') return this.#worker.run(source.bytes, method, options, onProgress, signal);
    const model = source.model;
    if (typeof model[method] !== 'function')
      throw Object.assign(new Error(`this model has no ${method} method`), { code: 'UNSUPPORTED' });
    const out = await model[method]({ ...options, onProgress, signal });
    return {
      result: { data: Float32Array.from(out.result.data), shape: Array.from(out.result.shape) },
      cleanDiff: out.cleanDiff,
      corruptedDiff: out.corruptedDiff,
    };
  }

  /**
   * Runs `method` (exact, attribution or both) of plan p as `run` (from begin), on `model` — in the
   * worker where its file `bytes` is known and there are workers, else in the page. Resolves to
   * { shown, ms, where } (the controls ready again), or null when the run was replaced by another or
   * cancelled; rejects with its error (an AbortError when cancelled).
   */
  async execute(run, p, method, model, bytes) {
    const started = performance.now();
    const { component, clean, corrupted, position, token, against } = p;
    const options = { clean, corrupted, position, token, against, component };
    const where = bytes && typeof Worker === 'function' ? 'worker' : 'page';
    const out = {};
    for (const kind of runsOf(method)) {
      const onProgress = (done, total) => {
        if (!this.isCurrent(run)) return;
        this.#progress.max = total;
        this.#progress.value = done;
        this.#status.textContent = `${done} of ${total} ${NOUN[kind]}`;
        this.#host.emit('patch-progress', { done, total });
      };
      out[kind] = await this.#runOne(
        kind,
        options,
        { where, model, bytes },
        onProgress,
        run.controller.signal,
      );
      if (!this.isCurrent(run)) return null;
    }
    const ms = performance.now() - started;
    const shown = shownOf(model, p, method, out, where);
    this.#finish();
    const n = shown.result.length;
    this.#status.textContent = `Done: ${n} entries in ${Math.round(ms)} ms (${where === 'worker' ? 'in a worker' : 'in the page'}).`;
    return { shown, ms, where };
  }

  /** After a run failed (still current): the controls ready again, the status line empty. */
  fail() {
    this.#finish();
    this.#status.textContent = '';
  }

  /** Stops the run under way, saying how far it got; returns whether there was one. */
  cancel() {
    const a = this.#active;
    if (!a) return false;
    a.controller.abort(); // in a worker: rejects the run now, and the job stops at its next batch
    const done = this.#progress.value,
      total = this.#progress.max;
    this.#finish();
    this.#status.textContent = `Cancelled after ${done} of ${total} patched runs.`;
    return true;
  }

  /** The host's model changed: the worker opens the new one for the next run. */
  modelChanged() {
    this.#worker.modelChanged();
  }

  /** Ends the worker (the host left the page). */
  end() {
    this.#worker.end();
  }
}
