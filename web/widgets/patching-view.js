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
// attribution (Float32Array | null), correlation (r | null), cleanDiff, corruptedDiff, where }), run(), cancel().
// Events: head-select { layer, head, value } ('head'), cell-select { layer, position, value }
// ('residual', 'mlp'), patch-progress { done, total }, patch-done { component, where, ms }, patch-cancel, model-load, ready.
import { InterpElement, defineTargetAccessors, modelShape, setOptionalAttribute } from './interp-base.js';
import { patchingCSV, patchingJSON, patchingPNG, patchingSVG } from './patching-export.js';
import { parseIds, planPatch, planSummary } from './patching-plan.js';
import { buildPatching } from './patching-build.js';
import { drawPatching } from './patching-draw.js';
import { finishRun, runPatching } from './patching-run.js';
import { endInterpWorker } from './interp-worker-client.js';

const COMPONENTS = ['head', 'residual', 'mlp'];
const METHODS = ['exact', 'attribution', 'both'];

export class PatchingView extends InterpElement {
  static get ownAttributes() {
    return [
      'src',
      'clean',
      'corrupted',
      'position',
      'token',
      'against',
      'component',
      'method',
      'autorun',
      'steps',
    ];
  }

  build() {
    buildPatching(this, (name, v) => setOptionalAttribute(this, name, v, false));
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

  _releaseReady() {
    if (!this._heldReady) return;
    this._heldReady = false;
    this.dataset.ready = '';
    this.emit('ready', {});
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
  get component() {
    const c = this.getAttribute('component');
    return COMPONENTS.includes(c) ? c : 'head';
  }
  set component(v) {
    this.setAttribute('component', String(v));
  }
  /** exact (model.patch), attribution (model.attributionPatch) or both, compared. */
  get method() {
    const m = this.getAttribute('method');
    return METHODS.includes(m) ? m : 'exact';
  }
  set method(v) {
    this.setAttribute('method', String(v));
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
    endInterpWorker(this);
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
    this._method.value = this.method;
    let p;
    try {
      p = this.plan();
    } catch (error) {
      this._summary.textContent = error.message;
      this._runButton.disabled = true;
      this._releaseReady();
      return;
    }
    this._runButton.disabled = this.running;
    this._summary.textContent = planSummary(this, p);
    if (this._shown) drawPatching(this);
    const key = JSON.stringify(p);
    if (this.autorun && key !== this._lastAuto && !this.running) {
      this._lastAuto = key;
      queueMicrotask(() => this.run());
    }
  }

  /**
   * Runs the patching for the current inputs. Resolves to { result, cleanDiff, corruptedDiff } (the
   * result a Float32Array, as shown; with attribution, `attribution` and `correlation` too) or null
   * when cancelled or refused (the widget says why).
   */
  async run() {
    if (this._active) this.cancel();
    let p;
    try {
      p = this.plan();
    } catch (error) {
      this.showError(error.message);
      this._releaseReady();
      return null;
    }
    this.showError('');
    const runId = this._runId + 1;
    try {
      const done = await runPatching(this, p);
      if (!done) return null;
      const s = done.shown;
      drawPatching(this);
      this._releaseReady();
      this.emit('patch-done', { component: p.component, where: done.where, ms: done.ms });
      const { result, cleanDiff, corruptedDiff } = s;
      if (!s.attribution) return { result, cleanDiff, corruptedDiff };
      return { result, cleanDiff, corruptedDiff, attribution: s.attribution, correlation: s.correlation };
    } catch (error) {
      if (error?.name !== 'AbortError' && this._active?.runId === runId) {
        finishRun(this);
        this._status.textContent = '';
        this.showError(`${error.code ?? 'ERROR'}: ${error.message}`);
      }
      this._releaseReady();
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
    finishRun(this);
    this._status.textContent = `Cancelled after ${done} of ${total} patched runs.`;
    this.emit('patch-cancel', {});
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
    return patchingPNG(this);
  }
}

// position, token, against; null removes the attribute (the default target applies)
defineTargetAccessors(PatchingView, false);
