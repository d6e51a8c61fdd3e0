// <mask-editor>: pick a padding / causal / custom mask, click cells to flip them, and watch the
// softmax renormalise: masked scores become −∞, their weights exactly 0, and each row's remaining
// weights still sum to 1 (a fully masked row gets all zeros).
//
// Attributes: every model config attribute (mask="none|causal|padding|custom", toggles="i.j,…", …),
//             plus head="mean" | 0…H-1 (default "mean").
// Events: mask-change { mask, toggles, allowed: Uint8Array (Tq × Tk, 1 = may attend) }, cell-hover, cell-click.
// Property `data` shows a model the page runs itself (a trained TinyTransformer's layer) instead:
//   el.data = { weights: (H, T, T) flat, heads, allowed: Uint8Array (T × T, the mask the weights were
//               computed with), fixed?: Uint8Array (T × T, 1 = masked by the model itself, e.g. causal:
//               a click cannot unmask it), toggles: [[i, j], …] (the clicked cells), tokens, summary }
// Then the mask-type buttons are hidden; a click emits mask-change { mask: 'custom', toggles } and the
// page recomputes and sets `data` again.
import { ModelElement, h, numbersFromState } from '../base-element.js';
import { HeatmapView } from '../figures/heatmap-view.js';
import { composeCanvases } from '../export.js';
import { exactNumber, themeOf } from '../figures/draw-util.js';
import { colorOf } from '../figures/colormap.js';
import { formatToggles, runModel } from '../model.js';
import { matrixOf } from './trace-view.js';
import { ALLOWED_DOMAIN, checkData, describe } from './mask-editor-data.js';
import { maskCSV, maskJSON, maskSVG } from './mask-editor-export.js';

const MODES = [
  ['none', 'None'],
  ['causal', 'Causal'],
  ['padding', 'Padding'],
  ['custom', 'Custom'],
];

const MASK_CSS = `
.panels { display: flex; flex-wrap: wrap; gap: 14px 22px; align-items: flex-start; margin-top: 10px; }
.panel { min-width: 0; flex: 1 1 300px; }
.panel h3 { font-size: 13px; font-weight: 600; margin: 0 0 4px; }
.legend-note { margin-top: 4px; }
`;

export class MaskEditor extends ModelElement {
  static attributes = {
    head: { type: 'index', values: ['mean'], default: 'mean' }, // 'mean' or a head index
    // The colour map of both panels, on screen and in exports: 'viridis' (default) | 'cividis' | 'gray'.
    palette: { type: 'palette' },
  };

  build() {
    this._modeButtons = MODES.map(([mode, label]) =>
      h('button', {
        type: 'button',
        'data-mode': mode,
        'aria-pressed': 'false',
        text: label,
        onclick: () => this.setMode(mode),
      }),
    );
    this._reset = h('button', {
      type: 'button',
      text: 'Clear clicks',
      onclick: () => {
        if (!this._data) {
          this.#commit(this.config.mask, []);
          return;
        }
        this._data.toggles = [];
        this.emit('mask-change', { mask: 'custom', toggles: [], togglesText: '', allowed: null });
      },
    });
    this._head = h('select', {
      'aria-label': 'Head',
      onchange: () => this.setAttribute('head', this._head.value),
    });
    this._maskCanvas = h('canvas', { role: 'img' });
    this._weightCanvas = h('canvas', { role: 'img' });
    const hooks = (which) => ({
      host: this,
      onHover: (c) => this.#hover(which, c),
      onClick: (c) => this.toggle(c.row, c.col),
    });
    this._maskView = new HeatmapView(this._maskCanvas, hooks('mask'));
    this._weightView = new HeatmapView(this._weightCanvas, hooks('weights'));
    this._summary = h('div', { class: 'muted small' });
    this._readout = h('div', {
      class: 'readout',
      'aria-live': 'polite',
      text: 'Click a cell (or focus it and press Enter) to mask it or let it attend again.',
    });
    const note = legendNote();
    this.shadowRoot.append(
      h('style', { text: MASK_CSS }),
      h(
        'div',
        { class: 'bar' },
        h('span', { class: 'title', text: 'Mask editor' }),
        h('div', { class: 'seg', role: 'group', 'aria-label': 'Mask type' }, ...this._modeButtons),
        this._reset,
        h('label', { class: 'inline' }, h('span', { class: 'muted', text: 'weights of' }), this._head),
        this.exportBar(),
      ),
      this._summary,
      ...this.baseParts(),
      h(
        'div',
        { class: 'panels' },
        h(
          'div',
          { class: 'panel' },
          h('h3', { text: 'Mask M — rows: queries, columns: keys' }),
          h('div', { class: 'scroll' }, this._maskCanvas),
          note,
        ),
        h(
          'div',
          { class: 'panel' },
          h('h3', { text: 'Softmax weights after masking' }),
          h('div', { class: 'scroll' }, this._weightCanvas),
        ),
      ),
      this._readout,
    );
  }

  get exportName() {
    return `mask-${this.config.mask}`;
  }

  /** The mask shown: { rows, cols, data: Uint8Array (1 = may attend) }. */
  get allowed() {
    return this._shown ? { rows: this._shown.rows, cols: this._shown.cols, data: this._shown.allowed } : null;
  }

  /** The weights shown: { head, rows, cols, data }. */
  get weights() {
    return this._shown
      ? { head: this._shown.head, rows: this._shown.rows, cols: this._shown.cols, data: this._shown.weights }
      : null;
  }

  get result() {
    return this._result || null;
  }

  get data() {
    return this._data || null;
  }
  set data(d) {
    this._data = d ? checkData(d) : null;
    this.schedule();
  }

  /** The state: attributes (head, the model's), the config (mask, toggles, …) and `data` when set from JS. */
  extraState() {
    const d = this._data;
    return {
      ...super.extraState(),
      data: d
        ? {
            ...d,
            weights: d.weights,
            allowed: Array.from(d.allowed),
            fixed: d.fixed ? Array.from(d.fixed) : null,
          }
        : null,
    };
  }

  applyExtraState(s) {
    super.applyExtraState(s);
    this._data = s.data ? checkData({ ...s.data, weights: numbersFromState(s.data.weights) }) : null;
  }

  /** Centre of a cell: which = 'mask' | 'weights'. */
  cellCenter(which, row, col) {
    return (which === 'mask' ? this._maskView : this._weightView).cellCenter(row, col);
  }

  /** Switches the mask type (clears clicked cells). */
  setMode(mode) {
    this.#commit(mode, []);
  }

  /** Flips one cell: masked ↔ may attend. */
  toggle(row, col) {
    if (this._data) {
      this.#toggleData(row, col);
      return;
    }
    const c = this.config;
    const key = `${row}.${col}`;
    const had = c.toggles.some(([i, j]) => `${i}.${j}` === key);
    const toggles = had ? c.toggles.filter(([i, j]) => `${i}.${j}` !== key) : [...c.toggles, [row, col]];
    this.#commit(c.mask === 'none' ? 'custom' : c.mask, toggles);
    const r = this._shown;
    const now = r && r.allowed[row * r.cols + col];
    this.emit('cell-click', { row, col, allowed: !!now, query: r?.queryTokens[row], key: r?.keyTokens[col] });
  }

  #commit(mask, toggles) {
    this.setConfig({ mask, toggles });
    this.refresh();
    const r = this._shown;
    this.emit('mask-change', {
      mask,
      toggles: toggles.map((p) => p.slice()),
      togglesText: formatToggles(toggles),
      allowed: r ? r.allowed.slice() : null,
    });
  }

  // A click on external data: flip the cell in the toggle list (unless the model itself masks it)
  // and let the page recompute.
  #toggleData(row, col) {
    const d = this._data;
    const T = d.size;
    if (d.fixed && d.fixed[row * T + col]) {
      this._readout.textContent = `The model masks key ${col} for query ${row} itself (a key after the query, in a causal model): clicking cannot unmask it.`;
      return;
    }
    const had = d.toggles.some(([i, j]) => i === row && j === col);
    d.toggles = had ? d.toggles.filter(([i, j]) => i !== row || j !== col) : [...d.toggles, [row, col]];
    this.emit('mask-change', {
      mask: 'custom',
      toggles: d.toggles.map((p) => p.slice()),
      togglesText: formatToggles(d.toggles),
      allowed: null,
    });
    this.emit('cell-click', { row, col, allowed: had, query: d.tokens[row], key: d.tokens[col] });
  }

  // The model result render() draws: the config's own model, or the external data.
  #run() {
    if (!this._data) return runModel(this.config);
    const d = this._data;
    const T = d.size;
    const mean = new Float32Array(T * T);
    for (let k = 0; k < d.heads; k++)
      for (let i = 0; i < T * T; i++) mean[i] += d.weights[k * T * T + i] / d.heads;
    return {
      ok: true,
      external: true,
      heads: d.heads,
      Tq: T,
      Tk: T,
      mask: d.allowed,
      meanWeights: mean,
      headWeights: (k) => d.weights.subarray(k * T * T, (k + 1) * T * T),
      queryTokens: d.tokens,
      keyTokens: d.tokens,
      config: { mask: 'custom', toggles: d.toggles },
      summary: d.summary,
    };
  }

  render() {
    const r = (this._result = this.#run());
    const c = r.config;
    this._modeButtons.forEach((b) => b.setAttribute('aria-pressed', String(b.dataset.mode === c.mask)));
    this._modeButtons[0].parentElement.hidden = Boolean(r.external);
    this._reset.disabled = c.toggles.length === 0;
    if (!r.ok) {
      this.showError(r.error.message);
      this._shown = null;
      return;
    }
    this.showError('');
    if (this._head.options.length !== r.heads + 1) {
      this._head.replaceChildren(
        h('option', { value: 'mean', text: 'Mean of heads' }),
        ...Array.from({ length: r.heads }, (_, k) => h('option', { value: String(k), text: `Head ${k}` })),
      );
    }
    const head = this.head === 'mean' ? 'mean' : Math.min(this.head, r.heads - 1);
    this._head.value = String(head);
    const weights =
      head === 'mean'
        ? r.meanWeights
        : r.external
          ? r.headWeights(head)
          : matrixOf(r.byName.weights, head, r).data;
    const { Tq, Tk } = r;
    const maskData = new Float32Array(Tq * Tk); // (Tq, Tk): 1 may attend, −∞ masked (hatched)
    for (let i = 0; i < maskData.length; i++) maskData[i] = r.mask[i] ? 1 : -Infinity;
    this._shown = {
      rows: Tq,
      cols: Tk,
      allowed: r.mask,
      weights,
      head,
      queryTokens: r.queryTokens,
      keyTokens: r.keyTokens,
      mode: c.mask,
      toggles: c.toggles,
    };
    const masked = r.mask.reduce((n, v) => n + (v ? 0 : 1), 0);
    this._summary.textContent = `${r.external ? r.summary : describe(c)} ${masked} of ${Tq * Tk} cells masked.`;
    const W = this.contentWidth;
    const panelW = W >= 640 ? Math.floor((W - 22) / 2) : W;
    const common = {
      rows: Tq,
      cols: Tk,
      rowLabels: r.queryTokens,
      colLabels: r.keyTokens,
      maxCell: 34,
      rowAxis: 'query',
      colAxis: 'key',
    };
    this._maskView.width = panelW;
    this._maskView.set({
      ...common,
      data: maskData,
      domain: { ...ALLOWED_DOMAIN, map: this.palette },
      decimals: 0,
      legend: false,
    });
    this._weightView.width = panelW;
    this._weightView.set({
      ...common,
      data: weights,
      domain: { lo: 0, hi: 1, map: this.palette },
      decimals: 2,
      rowSums: true,
      values: Tk <= 14 ? 'auto' : 'never',
    });
    const aria = `${Tq} query tokens (rows) by ${Tk} key tokens (columns). Arrow keys move between cells; Enter flips a cell between masked and allowed.`;
    this._maskCanvas.setAttribute('aria-label', `Attention mask, ${masked} cells masked: ${aria}`);
    this._weightCanvas.setAttribute(
      'aria-label',
      `Softmax weights after masking (${head === 'mean' ? 'mean of heads' : `head ${head}`}): ${aria}`,
    );
  }

  #hover(which, cell) {
    if (!cell) {
      this.showTooltip(0, 0, null);
      return;
    }
    const s = this._shown;
    const allowed = !!s.allowed[cell.row * s.cols + cell.col];
    const w = s.weights[cell.row * s.cols + cell.col];
    let sum = 0;
    for (let j = 0; j < s.cols; j++) sum += s.weights[cell.row * s.cols + j];
    const rowAllowed = s.allowed.subarray(cell.row * s.cols, (cell.row + 1) * s.cols).some((v) => v);
    const lines = [
      `query “${s.queryTokens[cell.row]}” (${cell.row}) → key “${s.keyTokens[cell.col]}” (${cell.col})`,
      `${allowed ? 'may attend' : 'masked'} · weight = ${exactNumber(w)}`,
      rowAllowed
        ? `row sum = ${exactNumber(sum)}`
        : 'every key masked: the row’s weights are all 0 (not NaN)',
    ];
    this._readout.textContent = lines.join(' · ');
    const p = (which === 'mask' ? this._maskView : this._weightView).cellCenter(cell.row, cell.col);
    this.showTooltip(p.x, p.y, lines);
    this.emit('cell-hover', {
      row: cell.row,
      col: cell.col,
      allowed,
      weight: w,
      rowSum: sum,
      query: s.queryTokens[cell.row],
      key: s.keyTokens[cell.col],
    });
  }

  getCSV() {
    return maskCSV(this._shown);
  }

  getJSON() {
    return maskJSON(this._shown, this);
  }

  /**
   * The mask and the weights as an SVG document, laid out as on screen with their headings and the
   * mask's key (vector cells, one path per colour level; the state in <metadata>).
   */
  toSVG(options = {}) {
    return maskSVG(this._shown, { maskView: this._maskView, weightView: this._weightView }, this, options);
  }

  /** What printing replaces with the SVG figure (print.js): the two panels. */
  printParts() {
    return [this._maskCanvas.closest('.panels')];
  }

  pngCanvas() {
    const a = this._maskCanvas.getBoundingClientRect(),
      b = this._weightCanvas.getBoundingClientRect();
    return composeCanvases(
      [
        { canvas: this._maskCanvas, x: 0, y: 0 },
        { canvas: this._weightCanvas, x: b.left - a.left, y: b.top - a.top },
      ],
      themeOf(this).bgSolid,
    );
  }
}

/** The mask panel's key: the colour of "may attend" and the hatching of a masked cell. */
function legendNote() {
  const teal = colorOf('viridis', 1, ALLOWED_DOMAIN.lo, ALLOWED_DOMAIN.hi);
  return h(
    'div',
    { class: 'legend-note muted' },
    h('span', { class: 'swatch', style: `background:${teal}` }),
    'may attend (1)   ',
    h('span', {
      class: 'swatch',
      style: 'background:repeating-linear-gradient(135deg,#bbb 0 2px,#eee 2px 4px)',
    }),
    'masked (0 → score −∞)',
  );
}
