// <token-saliency>: which input tokens a prediction depends on — model.saliency(ids, { position, token,
// against, metric, method, steps }) (docs/interpretability.md): the text with each token shaded by its
// score (signed scores on a diverging map, 0 neutral; the gradient's norm on a sequential one), the
// method chosen in the widget. Integrated gradients (one backward per step) run in the
// interpretability worker for a model loaded from `src`, with a progress bar and Cancel; the other
// methods (one backward) run in the page.
//
// The model: `src` (a TinyTransformer safetensors file: a preset) or the `model` property (a
// TinyTransformer or PretrainedModel). The sequence: `ids`, optional `tokens`. `position` (default the
// last), `token` (default the model's top prediction there), `against` (default its runner-up; `none`:
// the metric of `token` alone), `metric` ('logit-diff' | 'probability' | 'log-probability'), `method`
// ('gradient' | 'gradient-x-input' (default) | 'integrated-gradients'), `steps` (integrated gradients'
// steps, default 32).
// Keyboard: the tokens are a grid of one row; arrow keys (Home, End) move between them, and each
// token's score is announced.
// Properties: model, ids, tokens, vocab, shown ({ ids, tokens, position, token, against, metric,
// method, steps, scores: Float32Array (T), value, delta, domain, where }), state (adds scores, value,
// delta, method), running; run(), cancel().
// Events: saliency-progress { done, total }, saliency-done { method, where, ms }, saliency-cancel,
// token-focus { position, score }, model-load, ready.
import { h } from '../base-element.js';
import { formatNumber, themeOf } from '../figures/draw-util.js';
import { paintFigure } from '../figures/paint-canvas.js';
import { visuallyHidden, valueWords } from '../figures/a11y.js';
import { InterpElement, OPTIONAL_INT, logitsAt, targetAttributes, topIds } from './interp-base.js';
import { BOX_H, saliencyGeometry, saliencyList, scoreDomain } from './token-saliency-list.js';
import { saliencyCSV, saliencyJSON, saliencySVG } from './token-saliency-export.js';
import { computeSaliency, runsInWorker } from './token-saliency-run.js';
import { InterpWorker } from './interp-worker-client.js';

export const SALIENCY_METHODS = Object.freeze(['gradient', 'gradient-x-input', 'integrated-gradients']);
export const SALIENCY_METRICS = Object.freeze(['logit-diff', 'probability', 'log-probability']);

const METHOD_NAMES = {
  gradient: 'gradient norm',
  'gradient-x-input': 'gradient × input',
  'integrated-gradients': 'integrated gradients',
};

const CSS = `
  .controls { display: flex; flex-wrap: wrap; gap: 6px 14px; align-items: center; margin-bottom: 6px; }
  .run { display: flex; flex-wrap: wrap; gap: 6px 10px; align-items: center; margin: 4px 0; }
  progress { width: 140px; max-width: 100%; height: 14px; }
  canvas { display: block; max-width: 100%; }`;

export class TokenSaliency extends InterpElement {
  static attributes = {
    src: { property: false }, // src, ids, tokens: InterpElement's
    ids: { property: false },
    tokens: { property: false },
    ...targetAttributes(), // position, token, against ('none': no comparison token)
    metric: { type: 'enum', values: SALIENCY_METRICS, default: 'logit-diff', trim: true, optional: true },
    method: {
      type: 'enum',
      values: SALIENCY_METHODS,
      default: 'gradient-x-input',
      trim: true,
      optional: true,
    },
    steps: { type: OPTIONAL_INT, default: 32, min: 1 }, // integrated gradients' steps
  };

  // The controls and parts (build()), the run under way ({ runId, controller } | null) and the last
  // one shown (`shown`), the inputs last run, the focused token (−1: none) and the figure's geometry.
  #methodSelect;
  #cancelButton;
  #progress;
  #status;
  #summary;
  #canvas;
  #grid;
  #readout;
  #runId = 0;
  #active = null;
  #shown = null;
  #lastKey = null;
  #focus = -1;
  #geo = null;
  #worker = new InterpWorker('saliency', (message) => this.showError(message));

  build() {
    this.#methodSelect = h(
      'select',
      { onchange: () => this.setAttribute('method', this.#methodSelect.value) },
      ...SALIENCY_METHODS.map((m) => h('option', { value: m, text: METHOD_NAMES[m] })),
    );
    this.#cancelButton = h('button', {
      type: 'button',
      text: 'Cancel',
      disabled: true,
      onclick: () => this.cancel(),
    });
    this.#progress = h('progress', { max: '1', value: '0', 'aria-label': 'Saliency progress' });
    this.#status = h('span', { class: 'muted small', 'aria-live': 'polite' });
    this.#summary = h('p', { class: 'muted small', 'aria-live': 'polite' });
    this.#canvas = h('canvas', { role: 'img', 'aria-label': 'Token saliency' });
    this.#grid = visuallyHidden(h('div', { role: 'grid', 'aria-label': 'Tokens and their scores' }));
    this.#grid.addEventListener('keydown', (e) => this.#key(e));
    this.#readout = h('div', {
      class: 'readout',
      'aria-live': 'polite',
      text: 'Focus the tokens (Tab) and move with the arrow keys to hear each score.',
    });
    this.#canvas.addEventListener('pointermove', (e) => this.#hover(e));
    this.#canvas.addEventListener('pointerleave', () => this.showTooltip(0, 0, null));
    this.shadowRoot.append(
      h('style', { text: CSS }),
      h('div', { class: 'bar' }, h('span', { class: 'title', text: 'Token saliency' }), this.exportBar()),
      h(
        'div',
        { class: 'controls' },
        h('label', { class: 'inline' }, h('span', { text: 'Method' }), this.#methodSelect),
      ),
      h('div', { class: 'run' }, this.#cancelButton, this.#progress, this.#status),
      ...this.baseParts(),
      this.#summary,
      this.#canvas,
      this.#grid,
      this.#readout,
    );
  }

  refresh() {
    return this._model && this.ids?.length ? super.refresh() : false;
  }

  get shown() {
    return this.#shown ?? null;
  }
  /** Whether a run is under way. */
  get running() {
    return Boolean(this.#active);
  }

  /** The state, with the scores shown (recomputed, not restored, when a state is set). */
  extraState() {
    const s = this.#shown;
    return {
      ...super.extraState(),
      method: this.method,
      scores: s ? Array.from(s.scores) : null,
      value: s?.value ?? null,
      delta: s?.delta ?? null,
    };
  }

  modelChanged() {
    this.cancel();
    this.#worker.end();
    this.#shown = null;
    this.#lastKey = null;
  }

  onDisconnect() {
    this.cancel();
    this.#worker.end();
  }

  /** What a run uses: ids, tokens and model.saliency's options (defaults filled from the top predictions). */
  plan() {
    const ids = this.ids.slice(),
      T = ids.length;
    const position = this.position ?? T - 1;
    let ranked = null;
    const rank = () =>
      (ranked ??= topIds(logitsAt(this._model, ids, Math.max(0, Math.min(T - 1, position))), 2));
    const token = this.token ?? rank()[0];
    const against = this.against === null ? undefined : (this.against ?? rank().find((t) => t !== token));
    const options = { position, token, metric: this.metric, method: this.method };
    if (against !== undefined) options.against = against;
    if (options.method === 'integrated-gradients') options.steps = this.steps;
    return { ids, tokens: this.tokens.slice(0, T), options };
  }

  render() {
    this.#methodSelect.value = this.method;
    let p;
    try {
      p = this.plan();
    } catch (error) {
      this.showError(`${error.code ?? 'ERROR'}: ${error.message}`);
      return;
    }
    const key = JSON.stringify(p);
    if (key !== this.#lastKey) {
      this.#lastKey = key; // new inputs: a run under way is cancelled and this one starts
      queueMicrotask(() => this.run());
    }
    this.#canvas.hidden = !this.#shown; // nothing to draw before the first run's scores
    if (this.#shown) this.#draw();
  }

  /**
   * Runs model.saliency for the current inputs (in the worker for integrated gradients on a model
   * from `src`). Resolves to { scores: Float32Array, value, delta } or null when cancelled or refused.
   */
  async run() {
    if (this.#active) this.cancel();
    let p;
    try {
      p = this.plan();
    } catch (error) {
      this.showError(`${error.code ?? 'ERROR'}: ${error.message}`);
      return null;
    }
    this.#lastKey = JSON.stringify(p);
    this.showError('');
    const runId = ++this.#runId,
      controller = new AbortController();
    this.#active = { runId, controller };
    this.#busy(true, p.options.method);
    const started = performance.now();
    const onProgress = (done, total) => {
      if (this.#active?.runId !== runId) return;
      this.#progress.max = total;
      this.#progress.value = done;
      this.#status.textContent = `${done} of ${total}`;
      this.emit('saliency-progress', { done, total });
    };
    try {
      const source = { model: this._model, bytes: this._bytes, worker: this.#worker };
      const r = await computeSaliency(source, p.ids, p.options, onProgress, controller.signal);
      if (this.#active?.runId !== runId) return null;
      this.#busy(false);
      this.#show(p, r, performance.now() - started);
      return { scores: r.scores, value: r.value, delta: r.delta };
    } catch (error) {
      if (error?.name === 'AbortError' || this.#active?.runId !== runId) return null;
      this.#busy(false);
      this.#status.textContent = '';
      this.showError(`${error.code ?? 'ERROR'}: ${error.message}`);
      return null;
    }
  }

  /** Stops a run under way (the widget stays usable); does nothing when none is. */
  cancel() {
    const a = this.#active;
    if (!a) return;
    a.controller.abort(); // in the worker: rejects the run now, and the job stops at its next batch
    this.#busy(false);
    this.#status.textContent = 'Cancelled.';
    this.emit('saliency-cancel', {});
  }

  #busy(on, method) {
    if (on) {
      this.dataset.running = '';
      this.#progress.value = 0;
      this.#status.textContent = runsInWorker(this._bytes, method) ? 'Running in a worker…' : 'Running…';
    } else {
      this.#active = null;
      delete this.dataset.running;
    }
    this.#cancelButton.disabled = !on;
  }

  #show(p, r, ms) {
    const signed = p.options.method !== 'gradient';
    this.#shown = {
      ids: p.ids,
      tokens: p.ids.map((id, t) => p.tokens[t] ?? this.tokenName(id)),
      position: p.options.position,
      token: p.options.token,
      against: p.options.against ?? null,
      metric: p.options.metric,
      method: p.options.method,
      steps: p.options.steps ?? null,
      scores: r.scores,
      value: r.value,
      delta: r.delta,
      domain: scoreDomain(r.scores, signed),
      where: r.where,
    };
    this.#focus = Math.min(this.#focus, p.ids.length - 1);
    this.#status.textContent = `Done in ${Math.round(ms)} ms (${r.where === 'worker' ? 'in a worker' : 'in the page'}).`;
    this.#summarize();
    this.#canvas.hidden = false;
    this.#draw();
    this.#fillGrid();
    this.emit('saliency-done', { method: p.options.method, where: r.where, ms });
  }

  #summarize() {
    const s = this.#shown;
    let top = 0;
    for (let t = 1; t < s.scores.length; t++) if (Math.abs(s.scores[t]) > Math.abs(s.scores[top])) top = t;
    const target = `“${this.tokenName(s.token)}”${s.against === null ? '' : ` against “${this.tokenName(s.against)}”`}`;
    const gap = s.method === 'integrated-gradients' ? `; completeness gap ${formatNumber(s.delta, 4)}` : '';
    this.#summary.textContent =
      `${METHOD_NAMES[s.method].replace(/^./, (c) => c.toUpperCase())} of ${s.metric} for ${target} at position ${s.position} ` +
      `(value ${formatNumber(s.value, 3)}${gap}). The largest score is at position ${top} ` +
      `(“${s.tokens[top]}”, ${formatNumber(s.scores[top], 3)}).`;
  }

  // The figure's display list painted onto the canvas (the SVG paints the same list).
  #draw() {
    const s = this.#shown,
      W = Math.min(this.contentWidth, 720);
    const theme = themeOf(this);
    const g = saliencyGeometry(this.#canvas.getContext('2d'), theme, s.tokens, W);
    this.#geo = g;
    paintFigure(this.#canvas, W, g.height, theme, (ctx, th) =>
      saliencyList(th, saliencyGeometry(ctx, th, s.tokens, W), s.scores, s.domain, this.#focus),
    );
    this.#canvas.setAttribute(
      'aria-label',
      `${s.tokens.length} tokens shaded by their ${METHOD_NAMES[s.method]} scores. ${this.#summary.textContent}`,
    );
  }

  /** One row of gridcells, one per token (roving tabindex), each named by its token and score. */
  #fillGrid() {
    const s = this.#shown;
    const row = h('div', { role: 'row', 'aria-rowindex': '1' });
    s.tokens.forEach((text, t) => {
      const cell = h('div', {
        role: 'gridcell',
        'aria-colindex': String(t + 1),
        'aria-label': this.#cellWords(t),
      });
      cell.textContent = text;
      cell.tabIndex = t === Math.max(0, this.#focus) ? 0 : -1;
      cell.addEventListener('focus', () => this.#focusToken(t));
      row.append(cell);
    });
    row.addEventListener('focusout', (e) => {
      if (!row.contains(e.relatedTarget)) this.#focusToken(-1);
    });
    this.#grid.replaceChildren(row);
  }

  #cellWords(t) {
    const s = this.#shown;
    return `position ${t}, token “${s.tokens[t]}”: score ${valueWords(s.scores[t])}`;
  }

  #key(e) {
    const cells = [...this.#grid.querySelectorAll('[role="gridcell"]')];
    const i = cells.indexOf(e.target);
    if (i < 0) return;
    const next = {
      ArrowLeft: i - 1,
      ArrowUp: i - 1,
      ArrowRight: i + 1,
      ArrowDown: i + 1,
      Home: 0,
      End: cells.length - 1,
    }[e.key];
    if (next === undefined) return;
    e.preventDefault();
    const j = Math.max(0, Math.min(cells.length - 1, next));
    cells[i].tabIndex = -1;
    cells[j].tabIndex = 0;
    cells[j].focus();
  }

  #focusToken(t) {
    if (this.#focus === t || !this.#shown) return;
    this.#focus = t;
    this.#draw();
    if (t < 0) return;
    this.#readout.textContent = this.#cellWords(t);
    this.emit('token-focus', { position: t, score: this.#shown.scores[t] });
  }

  #hover(e) {
    const g = this.#geo,
      s = this.#shown;
    if (!g || !s) return;
    const r = this.#canvas.getBoundingClientRect();
    const x = e.clientX - r.left,
      y = e.clientY - r.top;
    const t = g.boxes.findIndex((b) => x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + BOX_H);
    this.showTooltip(
      e.clientX,
      e.clientY,
      t < 0 ? null : [`“${s.tokens[t]}” (position ${t})`, `score ${formatNumber(s.scores[t], 4)}`],
    );
  }

  getCSV() {
    return saliencyCSV(this.#shown);
  }

  getJSON() {
    return saliencyJSON(this);
  }

  /** The figure as an SVG document (the canvas's display list; the run in <metadata>). */
  toSVG(options = {}) {
    return saliencySVG(this, this.#canvas, this.#focus, options);
  }

  pngCanvas() {
    return this.#canvas;
  }
}
