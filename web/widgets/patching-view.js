// <patching-view>: activation patching (docs/interpretability.md) — which activations
// carry a prediction. A clean and a corrupted input that differ somewhere; for every head (or every
// layer × position of the residual stream) the corrupted input runs again with that one activation
// taken from the clean run, and the grid shows how much of the clean run's logit difference
// logits[position, token] − logits[position, against] it brings back: 1 all of it, 0 nothing
// (model.patch's ratio). Run shows a progress bar; Cancel stops the run (an AbortController, patch's
// signal) and leaves the widget ready for another. Click (or Enter on) a head to emit head-select.
//
// Where it runs: a model loaded from `src` is patched in a Web Worker (web/workers/interp-worker.js,
// its own wasm instance and copy of the model, as the trainer runs), so the page never waits; a
// model set as the `model` property (a TinyTransformer or PretrainedModel the page holds) is patched
// in the page, and the work yields to the page between layers (patch awaits a macrotask between batches).
//
// Attributes: src; clean, corrupted (ids, space-separated; vocabulary names work too); position
// (default the last); token (default the clean run's top prediction), against (default the corrupted
// run's top prediction, or its runner-up when that is `token`); component (`head`: layer × head,
// default; `residual`: layer × position); autorun (run whenever the inputs change); steps (the id
// of an <attention-steps> to open a selected head in, on the clean input).
// Properties: the same, model, vocab, running, shown ({ component, clean, corrupted, position, token,
// against, L, cols, result: Float32Array, cleanDiff, corruptedDiff, where }), run(), cancel().
// Events: head-select { layer, head, value } ('head'), cell-select { layer, position, value }
// ('residual'), patch-progress { done, total }, patch-done { component, where, ms }, patch-cancel, model-load, ready.
import { h } from './base-element.js';
import { HeatmapView } from './heatmap-view.js';
import { formatNumber } from './draw-util.js';
import { patchingCSV, patchingJSON, patchingSVG } from './patching-export.js';
import { patchInWorker } from './patching-worker-client.js';
import { InterpElement, modelShape, tokenPicker } from './interp-base.js';
import { gridLabels, parseIds, planPatch, planSummary } from './patching-plan.js';

const COMPONENTS = ['head', 'residual'];

const CSS = `
  .inputs { display: grid; grid-template-columns: auto minmax(0, 1fr); gap: 6px 8px; align-items: center; margin-bottom: 6px; }
  .inputs input { width: 100%; min-width: 0; font-family: var(--aw-mono, ui-monospace, Menlo, monospace); }
  .controls { display: flex; flex-wrap: wrap; gap: 6px 12px; align-items: center; margin: 6px 0; }
  .run { display: flex; flex-wrap: wrap; gap: 6px 10px; align-items: center; margin: 6px 0; }
  progress { width: 160px; max-width: 100%; height: 14px; }`;

export class PatchingView extends InterpElement {
  static get ownAttributes() {
    return ['src', 'clean', 'corrupted', 'position', 'token', 'against', 'component', 'autorun', 'steps'];
  }

  build() {
    const field = (name, label) => {
      const input = h('input', {
        type: 'text',
        id: `pv-${name}`,
        autocomplete: 'off',
        spellcheck: 'false',
        onchange: () => this.setAttribute(name, input.value.trim()),
      });
      return [h('label', { for: `pv-${name}`, text: label }), input];
    };
    const [cleanLabel, cleanInput] = field('clean', 'Clean');
    const [corruptLabel, corruptInput] = field('corrupted', 'Corrupted');
    this._cleanInput = cleanInput;
    this._corruptInput = corruptInput;
    this._token = tokenPicker('Token', { onchange: (v) => this.#setAttr('token', v) });
    this._against = tokenPicker('against', { onchange: (v) => this.#setAttr('against', v) });
    this._component = h(
      'select',
      { onchange: () => this.setAttribute('component', this._component.value) },
      h('option', { value: 'head', text: 'each head (layer × head)' }),
      h('option', { value: 'residual', text: 'residual stream (layer × position)' }),
    );
    this._runButton = h('button', {
      type: 'button',
      class: 'run-button',
      text: 'Run',
      onclick: () => {
        this.run();
      },
    });
    this._cancelButton = h('button', {
      type: 'button',
      class: 'cancel-button',
      text: 'Cancel',
      disabled: true,
      onclick: () => this.cancel(),
    });
    this._progress = h('progress', { max: '1', value: '0', 'aria-label': 'Patching progress' });
    this._status = h('span', { class: 'muted small', role: 'status' });
    this._summary = h('p', { class: 'muted small' });
    this._canvas = h('canvas');
    this._view = new HeatmapView(this._canvas, {
      host: this,
      onHover: (c) => this.#hover(c),
      onClick: (c) => this.#select(c),
    });
    this._canvas.hidden = true;
    this._readout = h('div', {
      class: 'readout',
      'aria-live': 'polite',
      text: 'Press Run: each head of the corrupted run is replaced, one at a time, by its clean value.',
    });
    this.shadowRoot.append(
      h('style', { text: CSS }),
      h(
        'div',
        { class: 'bar' },
        h('span', { class: 'title', text: 'Activation patching' }),
        this.exportBar(),
      ),
      h('div', { class: 'inputs' }, cleanLabel, cleanInput, corruptLabel, corruptInput),
      h(
        'div',
        { class: 'controls' },
        this._token.label,
        this._against.label,
        h('label', { class: 'inline' }, h('span', { text: 'Patch' }), this._component),
      ),
      h('div', { class: 'run' }, this._runButton, this._cancelButton, this._progress, this._status),
      ...this.baseParts(),
      this._summary,
      this._canvas,
      this._readout,
    );
    this._runId = 0;
  }

  /**
   * Renders once there is a model. With autorun, `ready` waits for the first result (or for the
   * reason there is none), so "ready" means the grid is drawn.
   */
  refresh() {
    if (!this._model) return false;
    if (this.autorun && !this._readyFired && !this._shown) {
      this._readyFired = true;
      this._heldReady = true;
    }
    return super.refresh();
  }

  #releaseReady() {
    if (!this._heldReady) return;
    this._heldReady = false;
    this.dataset.ready = '';
    this.emit('ready', {});
  }

  #setAttr(name, v) {
    if (v === undefined || v === null) this.removeAttribute(name);
    else this.setAttribute(name, String(v));
  }

  #intAttr(name) {
    const t = this.getAttribute(name);
    if (t === null || t.trim() === '') return undefined;
    const n = Number(t);
    return Number.isInteger(n) ? n : undefined;
  }

  get clean() {
    return parseIds(this.getAttribute('clean'), this.vocab);
  }
  set clean(v) {
    this.setAttribute(
      'clean',
      Array.isArray(v) || ArrayBuffer.isView(v) ? Array.from(v).join(' ') : String(v),
    );
  }
  get corrupted() {
    return parseIds(this.getAttribute('corrupted'), this.vocab);
  }
  set corrupted(v) {
    this.setAttribute(
      'corrupted',
      Array.isArray(v) || ArrayBuffer.isView(v) ? Array.from(v).join(' ') : String(v),
    );
  }
  get position() {
    return this.#intAttr('position');
  }
  set position(v) {
    this.#setAttr('position', v);
  }
  get token() {
    return this.#intAttr('token');
  }
  set token(v) {
    this.#setAttr('token', v);
  }
  get against() {
    return this.#intAttr('against');
  }
  set against(v) {
    this.#setAttr('against', v);
  }
  get component() {
    const c = this.getAttribute('component');
    return COMPONENTS.includes(c) ? c : 'head';
  }
  set component(v) {
    this.setAttribute('component', String(v));
  }
  get autorun() {
    return this.hasAttribute('autorun') && this.getAttribute('autorun') !== 'false';
  }
  set autorun(v) {
    this.toggleAttribute('autorun', Boolean(v));
  }
  /** Whether a run is under way. */
  get running() {
    return Boolean(this._active);
  }
  get shown() {
    return this._shown ?? null;
  }

  extraState() {
    return { model: this.modelState() };
  }

  modelChanged() {
    this.cancel();
    this._workerReady = null;
    this._shown = null;
    this._lastAuto = null;
  }

  onDisconnect() {
    this.cancel();
    this._worker?.terminate();
    this._worker = null;
    this._workerReady = null;
  }

  /**
   * What a run would use: ids, position and the token pair (defaults filled from the two runs' top
   * predictions). Throws with a readable message when the inputs are incomplete.
   */
  plan() {
    return planPatch(this);
  }

  render() {
    const { V } = modelShape(this._model);
    const nameOf = (i) => this.tokenName(i);
    this._token.fill(V, nameOf);
    this._against.fill(V, nameOf);
    this._token.set(this.token);
    this._against.set(this.against);
    if (this.shadowRoot.activeElement !== this._cleanInput)
      this._cleanInput.value = this.getAttribute('clean') ?? '';
    if (this.shadowRoot.activeElement !== this._corruptInput)
      this._corruptInput.value = this.getAttribute('corrupted') ?? '';
    this._component.value = this.component;
    let p;
    try {
      p = this.plan();
    } catch (error) {
      this._summary.textContent = error.message;
      this._runButton.disabled = true;
      this.#releaseReady();
      return;
    }
    this._runButton.disabled = this.running;
    this._summary.textContent = planSummary(this, p);
    if (this._shown) this.#draw();
    const key = JSON.stringify(p);
    if (this.autorun && key !== this._lastAuto && !this.running) {
      this._lastAuto = key;
      queueMicrotask(() => this.run());
    }
  }

  /**
   * Runs the patching for the current inputs. Resolves to { result, cleanDiff, corruptedDiff } (the
   * result a Float32Array, as shown) or null when cancelled or refused (the widget says why).
   */
  async run() {
    if (this._active) this.cancel();
    let p;
    try {
      p = this.plan();
    } catch (error) {
      this.showError(error.message);
      this.#releaseReady();
      return null;
    }
    this.showError('');
    const runId = ++this._runId;
    const controller = new AbortController();
    this._active = { runId, controller };
    this.dataset.running = '';
    this._runButton.disabled = true;
    this._cancelButton.disabled = false;
    this._progress.value = 0;
    this._status.textContent = 'Running…';
    const started = performance.now();
    const onProgress = (done, total) => {
      if (this._active?.runId !== runId) return;
      this._progress.max = total;
      this._progress.value = done;
      this._status.textContent = `${done} of ${total} patched runs`;
      this.emit('patch-progress', { done, total });
    };
    const options = {
      clean: p.clean,
      corrupted: p.corrupted,
      position: p.position,
      token: p.token,
      against: p.against,
      component: p.component,
    };
    const where = this._bytes && typeof Worker === 'function' ? 'worker' : 'page';
    try {
      let r;
      if (where === 'worker') r = await patchInWorker(this, options, onProgress, controller.signal);
      else {
        const out = await this._model.patch({ ...options, onProgress, signal: controller.signal });
        r = {
          result: { data: Float32Array.from(out.result.data), shape: Array.from(out.result.shape) },
          cleanDiff: out.cleanDiff,
          corruptedDiff: out.corruptedDiff,
        };
      }
      if (this._active?.runId !== runId) return null;
      const ms = performance.now() - started;
      const { L } = modelShape(this._model);
      this._shown = {
        ...p,
        L,
        cols: r.result.shape[1],
        result: r.result.data,
        cleanDiff: r.cleanDiff,
        corruptedDiff: r.corruptedDiff,
        where,
      };
      this.#finish();
      this._status.textContent = `Done: ${r.result.data.length} entries in ${Math.round(ms)} ms (${where === 'worker' ? 'in a worker' : 'in the page'}).`;
      this.#draw();
      this.#releaseReady();
      this.emit('patch-done', { component: p.component, where, ms });
      return { result: r.result.data, cleanDiff: r.cleanDiff, corruptedDiff: r.corruptedDiff };
    } catch (error) {
      if (error?.name === 'AbortError') {
        this.#releaseReady();
        return null;
      }
      if (this._active?.runId === runId) {
        this.#finish();
        this._status.textContent = '';
        this.showError(`${error.code ?? 'ERROR'}: ${error.message}`);
      }
      this.#releaseReady();
      return null;
    }
  }

  /** Stops a run under way (the widget stays usable); does nothing when none is. */
  cancel() {
    const a = this._active;
    if (!a) return;
    a.controller.abort(); // in a worker: rejects the run now, and the job stops at its next batch
    const done = this._progress.value,
      total = this._progress.max;
    this.#finish();
    this._status.textContent = `Cancelled after ${done} of ${total} patched runs.`;
    this.emit('patch-cancel', {});
  }

  #finish() {
    this._active = null;
    delete this.dataset.running;
    this._runButton.disabled = false;
    this._cancelButton.disabled = true;
  }

  #draw() {
    const s = this._shown;
    let m = 1;
    for (const v of s.result) if (Number.isFinite(v)) m = Math.max(m, Math.abs(v));
    const { rowLabels, colLabels } = gridLabels(this, s);
    this._canvas.hidden = false;
    this._view.width = Math.min(
      this.contentWidth,
      s.component === 'head' ? Math.max(280, 80 + s.cols * 56) : 900,
    );
    const head = s.component === 'head';
    this._view.set({
      data: s.result,
      rows: s.L,
      cols: s.cols,
      rowLabels,
      colLabels,
      rowAxis: 'layer',
      colAxis: head ? 'head' : 'position',
      domain: { lo: -m, hi: m, map: 'diverging' },
      values: 'auto',
      decimals: 2,
      maxCell: head ? 56 : 40,
      minRowHeight: 18,
      title: head ? 'Share restored' : 'Share restored (layer × position)',
    });
    this._canvas.setAttribute(
      'aria-label',
      `Patching result: ${s.L} layers × ${s.cols} ${head ? 'heads' : 'positions'}; 1 means the patched activation restores the clean run's logit difference. ` +
        `${head ? 'Enter selects a head.' : ''}`,
    );
    this._readout.textContent = `Clean run: ${formatNumber(s.cleanDiff, 3)}; corrupted run: ${formatNumber(s.corruptedDiff, 3)}. Hover or focus a cell for its share.`;
  }

  #hover(cell) {
    if (!cell) {
      this.showTooltip(0, 0, null);
      return;
    }
    const s = this._shown,
      head = s.component === 'head';
    const what = head ? `layer ${cell.row}, head ${cell.col}` : `layer ${cell.row}, position ${cell.col}`;
    this._readout.textContent = `${what}: restores ${formatNumber(cell.value, 4)} of the difference`;
    const p = this._view.cellCenter(cell.row, cell.col);
    this.showTooltip(p.x, p.y, [what, `restores ${formatNumber(cell.value, 4)}`]);
  }

  #select(cell) {
    const s = this._shown;
    if (s.component === 'head') {
      const opened = this.openInSteps(cell.row, cell.col, s.clean);
      this._readout.textContent = `Selected layer ${cell.row}, head ${cell.col} (restores ${formatNumber(cell.value, 4)})${opened ? ': opened step by step on the clean input.' : '.'}`;
      this.emit('head-select', { layer: cell.row, head: cell.col, value: cell.value });
    } else {
      this._readout.textContent = `Selected layer ${cell.row}, position ${cell.col} (restores ${formatNumber(cell.value, 4)}).`;
      this.emit('cell-select', { layer: cell.row, position: cell.col, value: cell.value });
    }
  }

  getCSV() {
    return patchingCSV(this._shown);
  }

  getJSON() {
    return patchingJSON(this);
  }

  /** The result grid as an SVG document (vector cells; the inputs and state in <metadata>). */
  toSVG(options = {}) {
    return patchingSVG(this, options);
  }

  pngCanvas() {
    return this._canvas;
  }
}
