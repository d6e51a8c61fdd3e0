// <attention-steps>: the whole multi-head attention pass, one trace step at a time — the formula
// (KaTeX), the shape in symbols and words, the matrix with token labels and its numbers (rounded;
// exact on hover), a head selector, and two plain sentences. Hovering a QKᵀ cell spells out
// q_i · k_j term by term; softmax rows show their sums.
//
// Attributes: every model config attribute, plus step="<index or trace name>", head="<index>".
// Properties/methods: steps (names), step, head, current (what is shown), next(), prev(), goTo(x).
// Events: step-change { index, name, head }, cell-hover / cell-click { step, head, row, col, value, … }.
import { ModelElement, h, numbersFromState, withState } from '../base-element.js';
import { HeatmapView } from '../figures/heatmap-view.js';
import { autoDomain, divergingName, paletteName } from '../figures/colormap.js';
import { composeCanvases, jsonText, matrixToCSV, toNested } from '../export.js';
import { exactNumber, themeOf } from '../figures/draw-util.js';
import { resultFromTrace, runModel } from '../model.js';
import { loadKatex, whenReady } from '../runtime.js';
import { stepInfo } from './step-info.js';
import { matrixOf } from './trace-view.js';
import { STEPS_CSS, StepsChrome } from './attention-steps-chrome.js';
import { axisName, explainStepCell } from './attention-steps-explain.js';
import { stepsSVG } from './attention-steps-svg.js';

/** The largest trace (numbers over all its steps) that el.state stores whole. */
const TRACE_STATE_MAX = 200_000;

// Optional steps and where to go when a config does not have them (dropout off, no positions, …).
const STEP_FALLBACK = {
  dropped: 'weights',
  positional: 'input',
  x: 'positional',
  normalized: 'residual',
  residual: 'output',
};

export class AttentionSteps extends ModelElement {
  /** The tabs, head selector, formula, shape, sentences and buttons around the matrix. */
  #chrome;

  static attributes = {
    step: { property: false }, // below: an index or a step's name, read against this pass's steps
    head: { type: 'index', default: 0 }, // the head shown (0…H-1)
    // The map of the probability steps (weights): 'viridis' (default) | 'cividis' | 'gray'.
    palette: { type: 'palette' },
    // The map of the signed steps (scores, q, k, v, …): 'blue-orange' (default) | 'red-blue'.
    diverging: { type: 'diverging' },
  };

  prepare() {
    return Promise.all([
      whenReady(),
      loadKatex().then((k) => {
        this.#chrome.katex = k;
        this._katexStyle.textContent = k.katexCss;
      }),
    ]);
  }

  build() {
    this._katexStyle = h('style'); // KaTeX's stylesheet, once loadKatex() has it
    const chrome = (this.#chrome = new StepsChrome({
      goTo: (k) => this.goTo(k),
      onHead: (hd) => this.#setHead(hd),
      onTabKey: (e) => this.#tabKey(e),
      onPrev: () => this.prev(),
      onNext: () => this.next(),
    }));
    this._canvas = h('canvas', { role: 'img' });
    this._view = new HeatmapView(this._canvas, {
      host: this,
      onHover: (cell, via) => this.#hover(cell, via),
      onClick: (cell) => this.#click(cell),
    });
    this._readout = h('div', { class: 'readout', 'aria-live': 'polite' });
    this._panel = h(
      'div',
      { role: 'tabpanel' },
      chrome.formula,
      h(
        'div',
        { class: 'shape' },
        h('span', { class: 'muted', text: 'shape' }),
        chrome.shapeSym,
        chrome.shapeWords,
      ),
      chrome.explain,
      h('div', { class: 'matrix scroll' }, this._canvas),
      this._readout,
    );
    this.shadowRoot.append(
      this._katexStyle,
      h('style', { text: STEPS_CSS }),
      h(
        'div',
        { class: 'bar' },
        chrome.title,
        h('label', { class: 'inline' }, h('span', { class: 'muted', text: 'head' }), chrome.head),
        this.exportBar(),
      ),
      ...this.baseParts(),
      chrome.tabs,
      this._panel,
      h('div', { class: 'nav' }, chrome.prev, chrome.next),
    );
  }

  /** Names of the steps of the current pass, in order. */
  get steps() {
    return this._result && this._result.ok ? this._result.steps.map((s) => s.name) : [];
  }

  /** The current step index. A named step this pass does not have shows its nearest neighbour. */
  get step() {
    const v = this.getAttribute('step');
    const names = this.steps;
    if (v === null) return 0;
    let name = v;
    while (name && !names.includes(name) && STEP_FALLBACK[name]) name = STEP_FALLBACK[name];
    const byName = names.indexOf(name);
    const i = byName >= 0 ? byName : parseInt(v, 10);
    return Number.isFinite(i) ? Math.max(0, Math.min(names.length ? names.length - 1 : 0, i)) : 0;
  }
  set step(v) {
    this.goTo(v);
  }

  get exportSuffix() {
    return this._current
      ? `${this._current.name}${this._current.hasHead ? `-head${this._current.head}` : ''}`
      : '';
  }

  /**
   * Shows a trace computed elsewhere instead of running the model: { tokens, steps, heads, dModel,
   * causal } (a TinyTransformer layer: <attention-model-view> sets it). null goes back to the config.
   */
  set trace(t) {
    this._traceIn = t || null;
    this._trace = t ? resultFromTrace(t) : null;
    this.schedule();
  }
  get trace() {
    return this._trace;
  }

  /**
   * The state: attributes (step, head, the model's), the config, and a trace set from JS: its
   * tokens, heads, dModel, causal and — up to TRACE_STATE_MAX numbers — its steps (larger traces
   * are referenced only: `steps: null`; the <attention-model-view>'s state reproduces them).
   */
  extraState() {
    const t = this._traceIn;
    if (!t) return { ...super.extraState(), trace: null };
    const size = t.steps.reduce((n, s) => n + s.data.length, 0);
    return {
      ...super.extraState(),
      trace: {
        tokens: Array.from(t.tokens, String),
        heads: t.heads,
        dModel: t.dModel,
        causal: t.causal ?? true,
        steps:
          size <= TRACE_STATE_MAX
            ? t.steps.map((s) => ({
                name: s.name,
                shape: Array.from(s.shape),
                axes: Array.from(s.axes || []),
                data: s.data,
              }))
            : null,
      },
    };
  }

  /** The state for an SVG's metadata: a trace's numbers are left out (the figure has them). */
  svgState() {
    const st = this.state;
    return st.trace ? { ...st, trace: { ...st.trace, steps: null } } : st;
  }

  applyExtraState(s) {
    super.applyExtraState(s);
    const t = s.trace;
    if (!t) {
      this.trace = null;
      return;
    }
    if (!Array.isArray(t.steps)) return; // referenced only: keep the target's own trace
    this.trace = { ...t, steps: t.steps.map((st) => ({ ...st, data: numbersFromState(st.data) })) };
  }

  /** The model result shown (see model.js runModel). */
  get result() {
    return this._result || null;
  }

  /** Exactly what the matrix shows: { index, name, head, hasHead, shape, axes, rows, cols, data, rowLabels, colLabels }. */
  get current() {
    return this._current || null;
  }

  /** Goes to a step by index or trace name; emits step-change. */
  goTo(x) {
    const names = this.steps;
    const i = typeof x === 'string' && names.includes(x) ? names.indexOf(x) : Number(x);
    if (!Number.isInteger(i) || i < 0 || (names.length && i >= names.length)) return;
    if (String(i) === this.getAttribute('step') || (names.length && names[i] === this.getAttribute('step')))
      return;
    this.setAttribute('step', String(i));
    this.refresh();
    this.emit('step-change', { index: i, name: names[i], head: this.head });
  }
  next() {
    this.goTo(this.step + 1);
  }
  prev() {
    this.goTo(this.step - 1);
  }

  /** Client coordinates of a cell's centre (tests, tours). */
  cellCenter(row, col) {
    return this._view.cellCenter(row, col);
  }

  #setHead(hd) {
    this.setAttribute('head', String(hd));
    this.refresh();
    this.emit('step-change', { index: this.step, name: this.steps[this.step], head: hd });
  }

  #tabKey(e) {
    const d = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
    if (e.key === 'Home' || e.key === 'End' || d) {
      e.preventDefault();
      this.goTo(e.key === 'Home' ? 0 : e.key === 'End' ? this.steps.length - 1 : this.step + d);
      this.#chrome.focusTab(this.step);
    }
  }

  render() {
    const r = (this._result = this._trace ?? runModel(this.config));
    if (!r.ok) {
      this.showError(r.error.message);
      this._panel.hidden = true;
      this._current = null;
      return;
    }
    this.showError('');
    this._panel.hidden = false;
    const i = this.step,
      stepData = r.steps[i];
    const m = matrixOf(stepData, this.head, r);
    const info = stepInfo(stepData.name, this.#sizes(r));
    this._current = {
      index: i,
      name: stepData.name,
      head: m.head,
      hasHead: m.hasHead,
      shape: stepData.shape,
      axes: stepData.axes,
      rows: m.rows,
      cols: m.cols,
      data: m.data,
      rowLabels: m.rowLabels,
      colLabels: m.colLabels,
      rowAxis: m.rowAxis,
      colAxis: m.colAxis,
      title: info.title,
    };
    this.dataset.step = stepData.name;
    this.#chrome.render(r, i, info, m, this.#sizes(r));
    const domain =
      info.kind === 'probability' ? { lo: 0, hi: 1, map: 'viridis' } : autoDomain(m.data, info.kind);
    domain.map =
      domain.map === 'diverging'
        ? divergingName(this.getAttribute('diverging'))
        : paletteName(this.getAttribute('palette'));
    this._view.width = this.contentWidth;
    this._view.set({
      data: m.data,
      rows: m.rows,
      cols: m.cols,
      rowLabels: m.rowLabels,
      colLabels: m.colLabels,
      domain,
      decimals: 2,
      rowSums: stepData.name === 'weights' || stepData.name === 'dropped',
      maxCell: 46,
      rowAxis: axisName(m.rowAxis, 'row'),
      colAxis: axisName(m.colAxis, 'column'),
    });
    this._canvas.setAttribute(
      'aria-label',
      `${info.title}${m.hasHead ? `, head ${m.head}` : ''}: a ${m.rows} by ${m.cols} matrix, ` +
        `rows ${m.rowAxis || 'one row'}, columns ${m.colAxis}. Arrow keys move between cells and read their exact values.`,
    );
    this.#resetReadout(stepData.name);
  }

  #sizes(r) {
    const c = r.config;
    return {
      c,
      Tq: r.Tq,
      Tk: r.Tk,
      E: c.dModel,
      H: r.heads,
      dk: r.dk,
      pads: c.mask === 'padding' ? c.pad : 0,
    };
  }

  #resetReadout(name) {
    const hint =
      name === 'scores'
        ? 'Hover or focus a cell to see q_i · k_j term by term.'
        : name === 'weights'
          ? 'Hover or focus a cell for its exact weight and its row’s sum.'
          : 'Hover or focus a cell (Tab, then arrow keys) for its exact value.';
    this._readout.replaceChildren(h('span', { class: 'muted', text: hint }));
    delete this._readout.dataset.value;
  }

  /** The readout lines for a cell: the location with its exact value, and for some steps how it is made. */
  explainCell(cell) {
    return explainStepCell(this._current, this._result, cell);
  }

  #hover(cell, via) {
    if (!cell) {
      this.showTooltip(0, 0, null);
      return;
    }
    const { main, detail } = this.explainCell(cell);
    this._readout.replaceChildren(
      h('span', { text: main }),
      detail ? h('span', { class: 'terms', text: detail }) : '',
    );
    this._readout.dataset.value = String(cell.value);
    this._readout.dataset.row = String(cell.row);
    this._readout.dataset.col = String(cell.col);
    const p = this._view.cellCenter(cell.row, cell.col);
    this.showTooltip(p.x, p.y, [`${cell.rowLabel} · ${cell.colLabel}`, exactNumber(cell.value)]);
    void via;
    this.emit('cell-hover', { step: this._current.name, head: this._current.head, ...cell });
  }

  #click(cell) {
    this.emit('cell-click', { step: this._current.name, head: this._current.head, ...cell });
  }

  getCSV() {
    const c = this._current;
    if (!c) return '';
    return matrixToCSV({ ...c, corner: `${c.rowAxis} \\ ${c.colAxis}` });
  }

  getJSON() {
    const c = this._current;
    if (!c) return jsonText(null);
    return jsonText(
      withState(this, {
        kind: 'attention-step',
        step: c.name,
        title: c.title,
        head: c.hasHead ? c.head : null,
        traceShape: c.shape,
        traceAxes: c.axes,
        rows: c.rows,
        cols: c.cols,
        rowAxis: c.rowAxis,
        colAxis: c.colAxis,
        rowLabels: c.rowLabels,
        colLabels: c.colLabels,
        data: toNested(c.data, c.rows, c.cols),
      }),
    );
  }

  /**
   * The shown step's matrix as an SVG document (vector cells, one path per colour level; signed
   * steps in the diverging map, as on screen; the state in <metadata>). Options: width, fontSize.
   */
  toSVG(options = {}) {
    const c = this._current;
    if (!c || !this._view.opts) throw new Error('toSVG: nothing is drawn yet (wait for the ready event)');
    return stepsSVG(c, this._view, options, {
      width: this.contentWidth,
      theme: themeOf(this),
      config: this._trace ? null : this.config,
      state: this.svgState(),
    });
  }

  pngCanvas() {
    return composeCanvases([{ canvas: this._canvas, x: 0, y: 0 }], themeOf(this).bgSolid);
  }
}
