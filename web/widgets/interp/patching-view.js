// <patching-view>: activation patching (docs/interpretability.md) — which activations
// carry a prediction. A clean and a corrupted input that differ somewhere; for every head (or every
// layer × position of the residual stream) the corrupted input runs again with that one activation
// taken from the clean run, and the grid shows how much of the clean run's logit difference
// logits[position, token] − logits[position, against] it brings back: 1 all of it, 0 nothing
// (model.patch's ratio). Attribution patching (model.attributionPatch) estimates the same grid from
// two forwards and one backward; with method "both" the widget runs both and shows their agreement:
// the estimate's own grid, a scatter (exact across, attribution up, one point per entry) and the
// Pearson correlation. Run shows a progress bar; Cancel stops the run (an AbortController, the
// jobs' signal) and leaves the widget ready for another. Click (or Enter on) a head to emit head-select.
//
// Where it runs: a model loaded from `src` is patched in a Web Worker (web/workers/interp-worker.js,
// its own wasm instance and copy of the model, as the trainer runs), so the page never waits; a
// model set as the `model` property (a TinyTransformer or PretrainedModel the page holds) is patched
// in the page, and the work yields to the page between layers (patch awaits a macrotask between batches).
//
// Attributes: src; clean, corrupted (ids, space-separated; vocabulary names work too); position
// (default the last); token (default the clean run's top prediction), against (default the corrupted
// run's top prediction, or its runner-up when that is `token`); component (`head`: layer × head,
// default; `residual`: layer × position; `mlp`: each MLP's output, layer × position); method
// (`exact`, default; `attribution`; `both`); autorun (run whenever the inputs change); steps (the id
// of an <attention-steps> to open a selected head in, on the clean input).
// Properties: the same, model, vocab, running, shown ({ component, method, clean, corrupted,
// position, token, against, L, cols, result: Float32Array (exact, else attribution), exact,
// attribution (Float32Array | null), correlation (r | null), cleanDiff, corruptedDiff, where }), run(),
// cancel(), cellCenter(layer, column) (a cell of the first grid, in client coordinates).
// Events: head-select { layer, head, value } ('head'), cell-select { layer, position, value }
// ('residual', 'mlp'), patch-progress { done, total }, patch-done { component, where, ms }, patch-cancel, model-load, ready.
//
// The parts, each a class with its own state: PatchingInputs (patching-inputs.js: the controls, the
// plan and its summary), PatchingRunner (patching-run.js: the runs, Run / Cancel / progress, the
// worker), PatchingFigure (patching-draw.js: the grids, the scatter, the readout, hover and
// selection); patching-export.js writes the exports from what is shown.
import { h } from '../base-element.js';
import { InterpElement, targetAttributes } from './interp-base.js';
import { patchingCSV, patchingJSON, patchingPNG, patchingSVG } from './patching-export.js';
import { PatchingInputs, parseIds, planPatch, planSummary } from './patching-inputs.js';
import { PatchingFigure } from './patching-draw.js';
import { PatchingRunner } from './patching-run.js';

const COMPONENTS = ['head', 'residual', 'mlp'];
const METHODS = ['exact', 'attribution', 'both'];

const CSS = `
  .inputs { display: grid; grid-template-columns: auto minmax(0, 1fr); gap: 6px 8px; align-items: center; margin-bottom: 6px; }
  .inputs input { width: 100%; min-width: 0; font-family: var(--aw-mono, ui-monospace, Menlo, monospace); }
  .controls { display: flex; flex-wrap: wrap; gap: 6px 12px; align-items: center; margin: 6px 0; }
  .run { display: flex; flex-wrap: wrap; gap: 6px 10px; align-items: center; margin: 6px 0; }
  progress { width: 160px; max-width: 100%; height: 14px; }
  .scatter { position: relative; overflow: hidden; }`;

/** A presence attribute's type: true unless absent or 'false'; writing toggles it. */
const FLAG = {
  read: (text) => text !== null && text !== 'false',
  write: (el, name, v) => el.toggleAttribute(name, Boolean(v)),
};

/** A list of ids as the attribute's text (an array or typed array: space-separated). */
const idsText = (v) => (Array.isArray(v) || ArrayBuffer.isView(v) ? Array.from(v).join(' ') : String(v));

export class PatchingView extends InterpElement {
  #inputs; // PatchingInputs (built with the shadow root)
  #figure; // PatchingFigure (built with the shadow root)
  #runner = new PatchingRunner(this);
  #shown = null; // what the last finished run left (the `shown` property)
  #lastAuto = null; // the plan autorun last ran
  #heldReady = false; // `ready` waits for autorun's first result

  static attributes = {
    src: { property: false }, // read by InterpElement
    clean: { property: false }, // clean, corrupted: below (vocabulary names read as their ids)
    corrupted: { property: false },
    ...targetAttributes(false), // position, token, against; null removes them (the default target)
    component: { type: 'enum', values: COMPONENTS, default: 'head' },
    // exact (model.patch), attribution (model.attributionPatch) or both, compared.
    method: { type: 'enum', values: METHODS, default: 'exact' },
    autorun: { type: FLAG },
    steps: { property: false }, // the id of the <attention-steps> a selected head opens in
  };

  build() {
    this.#inputs = new PatchingInputs(this, (name, v) => (this[name] = v));
    this.#figure = new PatchingFigure(this);
    const { inputs, controls, summary } = this.#inputs.parts();
    this.shadowRoot.append(
      h('style', { text: CSS }),
      h(
        'div',
        { class: 'bar' },
        h('span', { class: 'title', text: 'Activation patching' }),
        this.exportBar(),
      ),
      inputs,
      controls,
      this.#runner.controls(),
      ...this.baseParts(),
      summary,
      ...this.#figure.parts(),
    );
  }

  /**
   * Renders once there is a model. With autorun, `ready` waits for the first result (or for the
   * reason there is none), so "ready" means the grid is drawn.
   */
  refresh() {
    if (!this._model) return false;
    if (this.autorun && !this._readyFired && !this.#shown) {
      this._readyFired = true;
      this.#heldReady = true;
    }
    return super.refresh();
  }

  #releaseReady() {
    if (!this.#heldReady) return;
    this.#heldReady = false;
    this.dataset.ready = '';
    this.emit('ready', {});
  }

  get clean() {
    return parseIds(this.getAttribute('clean'), this.vocab);
  }
  set clean(v) {
    this.setAttribute('clean', idsText(v));
  }
  get corrupted() {
    return parseIds(this.getAttribute('corrupted'), this.vocab);
  }
  set corrupted(v) {
    this.setAttribute('corrupted', idsText(v));
  }
  /** Whether a run is under way. */
  get running() {
    return this.#runner.running;
  }
  get shown() {
    return this.#shown ?? null;
  }

  extraState() {
    return { model: this.modelState() };
  }

  modelChanged() {
    this.cancel();
    this.#runner.modelChanged();
    this.#shown = null;
    this.#lastAuto = null;
  }

  onDisconnect() {
    this.cancel();
    this.#runner.end();
  }

  /**
   * What a run would use: ids, position and the token pair (defaults filled from the two runs' top
   * predictions). Throws with a readable message when the inputs are incomplete.
   */
  plan() {
    return planPatch(this);
  }

  render() {
    this.#inputs.show();
    let p;
    try {
      p = this.plan();
    } catch (error) {
      this.#inputs.say(error.message);
      this.#runner.allow(false);
      this.#releaseReady();
      return;
    }
    this.#runner.allow(true);
    this.#inputs.say(planSummary(this, p));
    if (this.#shown) this.#figure.draw(this.#shown);
    const key = JSON.stringify(p);
    if (this.autorun && key !== this.#lastAuto && !this.running) {
      this.#lastAuto = key;
      queueMicrotask(() => this.run());
    }
  }

  /**
   * Runs the patching for the current inputs. Resolves to { result, cleanDiff, corruptedDiff } (the
   * result a Float32Array, as shown; with attribution, `attribution` and `correlation` too) or null
   * when cancelled or refused (the widget says why).
   */
  async run() {
    if (this.running) this.cancel();
    let p;
    try {
      p = this.plan();
    } catch (error) {
      this.showError(error.message);
      this.#releaseReady();
      return null;
    }
    this.showError('');
    const run = this.#runner.begin();
    try {
      const done = await this.#runner.execute(run, p, this.method, this._model, this._bytes);
      if (!done) return null;
      const s = (this.#shown = done.shown);
      this.#figure.draw(s);
      this.#releaseReady();
      this.emit('patch-done', { component: p.component, where: done.where, ms: done.ms });
      const { result, cleanDiff, corruptedDiff } = s;
      if (!s.attribution) return { result, cleanDiff, corruptedDiff };
      return { result, cleanDiff, corruptedDiff, attribution: s.attribution, correlation: s.correlation };
    } catch (error) {
      if (error?.name !== 'AbortError' && this.#runner.isCurrent(run)) {
        this.#runner.fail();
        this.showError(`${error.code ?? 'ERROR'}: ${error.message}`);
      }
      this.#releaseReady();
      return null;
    }
  }

  /** Stops a run under way (the widget stays usable); does nothing when none is. */
  cancel() {
    if (this.#runner.cancel()) this.emit('patch-cancel', {});
  }

  /** The client coordinates of the centre of the first grid's cell (layer, column: head or position). */
  cellCenter(layer, column) {
    return this.#figure.grid.cellCenter(layer, column);
  }

  getCSV() {
    return patchingCSV(this.#shown);
  }

  getJSON() {
    return patchingJSON(this, this.#shown);
  }

  /** The result grid as an SVG document (vector cells; the inputs and state in <metadata>). */
  toSVG(options = {}) {
    return patchingSVG(this, this.#shown, this.#figure, options);
  }

  pngCanvas() {
    return patchingPNG(this, this.#shown, this.#figure);
  }
}
