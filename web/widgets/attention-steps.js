// <attention-steps>: the whole multi-head attention pass, one trace step at a time — the formula
// (KaTeX), the shape in symbols and words, the matrix with token labels and its numbers (rounded;
// exact on hover), a head selector, and two plain sentences. Hovering a QKᵀ cell spells out
// q_i · k_j term by term; softmax rows show their sums.
//
// Attributes: every model config attribute, plus step="<index or trace name>", head="<index>".
// Properties/methods: steps (names), step, head, current (what is shown), next(), prev(), goTo(x).
// Events: step-change { index, name, head }, cell-hover / cell-click { step, head, row, col, value, … }.
import { ModelElement, h, numbersFromState, withState } from './base-element.js';
import { HeatmapView } from './heatmap-view.js';
import { autoDomain, divergingName, paletteName } from './colormap.js';
import { composeCanvases, jsonText, matrixToCSV, toNested } from './export.js';
import { exactNumber, formatNumber, themeOf } from './draw-util.js';
import { resultFromTrace, runModel } from './model.js';
import { loadKatex, whenReady } from './runtime.js';
import { shapeSymbols, shapeWords, stepInfo } from './step-info.js';
import { matrixOf } from './trace-view.js';
import { heatmapPanel, jsonSafe, svgDocument, svgFigure } from './svg.js';

const STEPS_CSS = `
.tabs { display: flex; flex-wrap: wrap; gap: 4px; margin: 2px 0 12px; }
.tabs button { font-size: 12.5px; padding: 2px 9px; min-height: 26px; border-radius: 999px; font-variant-numeric: tabular-nums; }
.tabs button .n { opacity: 0.8; margin-right: 4px; font-size: 11px; } /* 0.6 fell below 4.5:1 contrast */
.tabs button[aria-selected="true"] .n { opacity: 1; } /* on the accent, 0.8 falls below 4.5:1 */
.formula { overflow-x: auto; overflow-y: hidden; padding: 2px 0; font-size: 15px; min-height: 2.6em; }
.formula .katex-display { margin: 0.35em 0 0.5em; }
.shape { display: flex; flex-wrap: wrap; gap: 4px 10px; align-items: baseline; margin-bottom: 4px; font-size: 13px; }
.shape code { font-family: var(--aw-mono, ui-monospace, Menlo, Consolas, monospace); font-size: 12.5px;
  padding: 1px 6px; border-radius: 4px; background: color-mix(in srgb, currentColor 7%, transparent); }
.explain { margin: 4px 0 12px; max-width: 72ch; }
.nav { display: flex; justify-content: space-between; gap: 8px; margin-top: 10px; }
.nav button { min-width: 8em; }
.matrix { min-height: 60px; }
`;

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

// How a step's axis is read out in a cell's accessible name.
const AXIS_WORDS = {
  T_q: 'query',
  T_k: 'key',
  T: 'token',
  d_model: 'feature',
  d_k: 'feature',
  d_v: 'feature',
};
const axisName = (axis, fallback) => (axis ? (AXIS_WORDS[axis] ?? axis) : fallback);

export class AttentionSteps extends ModelElement {
  static get ownAttributes() {
    return ['step', 'head', 'palette', 'diverging'];
  }

  /** The map of the probability steps (weights): 'viridis' (default) | 'cividis' | 'gray'. */
  get palette() {
    return paletteName(this.getAttribute('palette'));
  }
  set palette(v) {
    this.setAttribute('palette', String(v));
  }
  /** The map of the signed steps (scores, q, k, v, …): 'blue-orange' (default) | 'red-blue'. */
  get diverging() {
    return divergingName(this.getAttribute('diverging')) === 'red-blue' ? 'red-blue' : 'blue-orange';
  }
  set diverging(v) {
    this.setAttribute('diverging', String(v));
  }

  prepare() {
    return Promise.all([
      whenReady(),
      loadKatex().then((k) => {
        this._katex = k;
        this._katexStyle.textContent = k.katexCss;
      }),
    ]);
  }

  build() {
    this._katexStyle = h('style'); // KaTeX's stylesheet, once loadKatex() has it
    this._title = h('span', { class: 'title', 'aria-live': 'polite' });
    this._head = h('select', {
      'aria-label': 'Head',
      onchange: () => this.#setHead(Number(this._head.value)),
    });
    this._tabs = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Steps of the attention pass' });
    this._tabs.addEventListener('keydown', (e) => this.#tabKey(e));
    this._formula = h('div', { class: 'formula', 'aria-hidden': 'false' });
    this._shapeSym = h('code');
    this._shapeWords = h('span', { class: 'muted' });
    this._explain = h('p', { class: 'explain' });
    this._canvas = h('canvas', { role: 'img' });
    this._view = new HeatmapView(this._canvas, {
      host: this,
      onHover: (cell, via) => this.#hover(cell, via),
      onClick: (cell) => this.#click(cell),
    });
    this._readout = h('div', { class: 'readout', 'aria-live': 'polite' });
    this._prev = h('button', { type: 'button', onclick: () => this.prev() });
    this._next = h('button', { type: 'button', onclick: () => this.next() });
    this._panel = h(
      'div',
      { role: 'tabpanel' },
      this._formula,
      h(
        'div',
        { class: 'shape' },
        h('span', { class: 'muted', text: 'shape' }),
        this._shapeSym,
        this._shapeWords,
      ),
      this._explain,
      h('div', { class: 'matrix scroll' }, this._canvas),
      this._readout,
    );
    this.shadowRoot.append(
      this._katexStyle,
      h('style', { text: STEPS_CSS }),
      h(
        'div',
        { class: 'bar' },
        this._title,
        h('label', { class: 'inline' }, h('span', { class: 'muted', text: 'head' }), this._head),
        this.exportBar(),
      ),
      ...this.baseParts(),
      this._tabs,
      this._panel,
      h('div', { class: 'nav' }, this._prev, this._next),
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

  get head() {
    return Math.max(0, parseInt(this.getAttribute('head') ?? '0', 10) || 0);
  }
  set head(v) {
    this.setAttribute('head', String(v));
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
      this._tabs.children[this.step]?.focus();
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
    this.#renderChrome(r, i, info, m);
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

  #renderChrome(r, i, info, m) {
    const n = r.steps.length;
    this._title.textContent = `Step ${i + 1} of ${n} · ${info.title}`;
    // Tabs: rebuilt only when the list of steps changes.
    const sig = r.steps.map((s) => s.name).join();
    if (this._tabSig !== sig) {
      this._tabSig = sig;
      this._tabs.replaceChildren(
        ...r.steps.map((s, k) => {
          const b = h(
            'button',
            { type: 'button', role: 'tab', onclick: () => this.goTo(k) },
            h('span', { class: 'n', text: String(k + 1) }),
            stepInfo(s.name, this.#sizes(r)).short,
          );
          return b;
        }),
      );
    }
    [...this._tabs.children].forEach((b, k) => {
      b.setAttribute('aria-selected', String(k === i));
      b.tabIndex = k === i ? 0 : -1;
      b.title = stepInfo(r.steps[k].name, this.#sizes(r)).title;
    });
    // Head selector: enabled only where the step has a head axis.
    if (this._head.options.length !== r.heads) {
      this._head.replaceChildren(
        ...Array.from({ length: r.heads }, (_, k) => h('option', { value: String(k), text: `Head ${k}` })),
      );
    }
    this._head.value = String(m.head);
    this._head.disabled = !m.hasHead;
    this._head.title = m.hasHead ? '' : 'This step has no head axis';
    if (this._tex !== info.tex) {
      this._tex = info.tex;
      // Our own formula strings only (no user text), so KaTeX's HTML output is safe to insert.
      this._formula.innerHTML = this._katex.renderToString(info.tex, {
        displayMode: true,
        throwOnError: false,
        output: 'htmlAndMathml',
      });
    }
    this._shapeSym.textContent = shapeSymbols(r.steps[i].shape, r.steps[i].axes);
    this._shapeWords.textContent = shapeWords(r.steps[i].shape, r.steps[i].axes);
    this._explain.textContent = info.text.join(' ');
    const label = (k) => (k >= 0 && k < n ? stepInfo(r.steps[k].name, this.#sizes(r)).short : '');
    this._prev.textContent = i > 0 ? `← ${label(i - 1)}` : '← Previous';
    this._next.textContent = i < n - 1 ? `${label(i + 1)} →` : 'Next →';
    this._prev.disabled = i === 0;
    this._next.disabled = i === n - 1;
    // The accessible name starts with the visible text (WCAG 2.5.3, label in name).
    this._prev.setAttribute('aria-label', `${this._prev.textContent.replace('←', '').trim()}: previous step`);
    this._next.setAttribute('aria-label', `${this._next.textContent.replace('→', '').trim()}: next step`);
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
    const cur = this._current,
      r = this._result;
    const where = `${axisWord(cur.rowAxis, cell.rowLabel, cell.row)}, ${axisWord(cur.colAxis, cell.colLabel, cell.col)}`;
    const head = cur.hasHead ? `head ${cur.head} · ` : '';
    const main = `${head}${where} = ${exactNumber(cell.value)}`;
    let detail = '';
    const row = (name, i) => {
      const mm = matrixOf(r.byName[name], cur.head, r);
      return mm.data.subarray(i * mm.cols, (i + 1) * mm.cols);
    };
    if (cur.name === 'scores' && r.byName.q && r.byName.k) {
      // With RoPE the scores are the rotated q and k's products.
      const q = row(r.byName.q_rotated ? 'q_rotated' : 'q', cell.row),
        k = row(r.byName.k_rotated ? 'k_rotated' : 'k', cell.col);
      const terms = Array.from(q, (qd, d) => `(${formatNumber(qd, 3)})(${formatNumber(k[d], 3)})`);
      let sum = 0;
      for (let d = 0; d < q.length; d++) sum += q[d] * k[d];
      const shown =
        terms.length > 24
          ? [...terms.slice(0, 16), `… ${terms.length - 20} more terms …`, ...terms.slice(-4)]
          : terms;
      detail = `q_${cell.row} · k_${cell.col} = ${shown.join(' + ')}\n= ${formatNumber(sum, 6)}  (${q.length} terms, d_k = ${q.length})`;
    } else if (cur.name === 'scaled' && r.byName.scores) {
      const c = r.config,
        s = row('scores', cell.row)[cell.col];
      const scale = (c.scaling ? 1 / Math.sqrt(r.dk) : 1) / c.temperature;
      const how = c.scaling ? `1/√${r.dk}` : '1';
      detail = `S'_${cell.row},${cell.col} = S × ${how}${c.temperature !== 1 ? `/${c.temperature}` : ''} = ${formatNumber(s, 4)} × ${formatNumber(scale, 4)} = ${formatNumber(s * scale, 4)}`;
    } else if (cur.name === 'masked') {
      detail =
        cell.value === -Infinity
          ? 'masked: −∞, so its softmax weight will be exactly 0'
          : 'may attend: the scaled score passes through unchanged';
    } else if (cur.name === 'weights' || cur.name === 'dropped') {
      let sum = 0;
      const w = cur.data.subarray(cell.row * cur.cols, (cell.row + 1) * cur.cols);
      for (const v of w) sum += v;
      detail = `row ${cell.row} (“${cell.rowLabel}”) sums to ${exactNumber(sum)}`;
    } else if (cur.name === 'context' && r.byName.v) {
      const a = row(r.byName.dropped ? 'dropped' : 'weights', cell.row);
      const vm = matrixOf(r.byName.v, cur.head, r);
      const terms = Array.from(
        a,
        (aj, j) => `(${formatNumber(aj, 3)})(${formatNumber(vm.data[j * vm.cols + cell.col], 3)})`,
      );
      const shown =
        terms.length > 16
          ? [...terms.slice(0, 12), `… ${terms.length - 14} more …`, ...terms.slice(-2)]
          : terms;
      detail = `c_${cell.row},${cell.col} = Σ_j A_${cell.row},j · v_j,${cell.col} = ${shown.join(' + ')}`;
    }
    return { main, detail };
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
    const W = Math.max(160, Number(options.width) || this.contentWidth);
    const fontSize = Math.max(6, Math.min(48, Number(options.fontSize) || 12));
    const theme = themeOf(this);
    const fig = svgFigure(theme, fontSize / 12);
    const p = heatmapPanel(fig, this._view, { x: 0, y: 0, width: W });
    const cfg = this._trace ? null : this.config;
    const state = jsonSafe({
      widget: 'attention-steps',
      step: c.name,
      index: c.index,
      head: c.hasHead ? c.head : null,
      title: c.title,
      rowLabels: c.rowLabels,
      colLabels: c.colLabels,
      domain: this._view.opts.domain,
      config: cfg ? { ...cfg, stateDict: cfg.stateDict ? '(set from JS, not stored)' : null } : null,
      options: { width: W, fontSize },
      theme: theme.dark ? 'dark' : 'light',
      panels: [{ rows: c.rows, cols: c.cols, cells: p.cells }],
      widgetState: this.svgState(),
    });
    return svgDocument(fig, {
      width: p.w,
      height: p.h,
      state,
      title: `${c.title}${c.hasHead ? `, head ${c.head}` : ''}: ${c.rows} by ${c.cols}`,
    });
  }

  pngCanvas() {
    return composeCanvases([{ canvas: this._canvas, x: 0, y: 0 }], themeOf(this).bgSolid);
  }
}

/** "query “cat” (2)", "key “mat” (5)", "dim 3" for a readout. */
function axisWord(axis, label, index) {
  if (axis === 'T_q' || axis === 'T') return `query “${label}” (${index})`;
  if (axis === 'T_k') return `key “${label}” (${index})`;
  return `${axis && axis !== 'B' ? `${axis} ` : ''}dim ${index}`;
}
