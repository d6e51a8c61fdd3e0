// <attention-heatmap>: attention weights of one head, of the mean over heads, or all heads side by
// side; token labels, legend, exact-value tooltips; click (or Enter on) a cell to see that query's
// distribution over the keys as bars.
//
// Attributes: every model config attribute (text, d-model, heads, mask, …) plus
//   head="all" | "mean" | 0…H-1   (default "all")
//   query="<row>"  the query row shown as bars (default: the last row)
//   signed         the weights are signed (a conv or DeltaNet layer's map: weights of the values, not
//                  probabilities): drawn on a diverging map over ±max|a|, 0 neutral; data with a
//                  negative weight is drawn so without it
//   diverging="blue-orange" | "red-blue"  the map of signed weights
//   hide-columns="0,3"  keys hidden (an attention sink), each row renormalised without them (the
//                  "Hide the first token" box; H on a focused cell, Alt+click: that key)
//   queries="2,5"  several query rows (Shift/Ctrl+click, Shift/Ctrl+Enter) whose rows the bars
//                  combine: combine="mean" (default) | "sum"  (attention-heatmap-select.js)
// Property `data` shows precomputed weights instead of running the model:
//   el.data = { weights: flat or nested numbers, shape: [H, Tq, Tk] | [Tq, Tk], queryTokens, keyTokens }
import { ModelElement, h, numbersFromState, withState } from '../base-element.js';
import { HeatmapView } from '../figures/heatmap-view.js';
import { drawBars } from '../figures/charts.js';
import { composeCanvases, jsonText, matricesToLongCSV, matrixToCSV, toNested } from '../export.js';
import { exactNumber, themeOf } from '../figures/draw-util.js';
import { runModel } from '../model.js';
import { PART_GAP } from '../figures/display-list.js';
import { GAP, heatmapSVG, tileLayout } from './attention-heatmap-figure.js';
import { SIGNED_NOTE, barsOptions, heatmapDomain, normalizeData } from './attention-heatmap-data.js';
import { divergingName } from '../figures/colormap.js';
import { INDEX_LIST, barsRow, hideShown, rowsShown, toggleIndex } from './attention-heatmap-select.js';

export class AttentionHeatmap extends ModelElement {
  static attributes = {
    head: { type: 'index', values: ['all', 'mean'], default: 'all' }, // 'all' | 'mean' | head index
    // The query row shown as bars; -1 (the default) is the last row, the one that sees most under a causal mask.
    query: { type: 'int', parseInt: true, default: -1, min: -1 },
    // The colour map of the cells, on screen and in exports: 'viridis' (default) | 'cividis' | 'gray'.
    palette: { type: 'palette' },
    // Signed weights (weights of the values, not probabilities): the diverging map, symmetric about 0.
    signed: { type: 'boolean', default: false },
    // The map of signed weights: 'blue-orange' (default) | 'red-blue'.
    diverging: { type: 'diverging' },
    'hide-columns': { type: INDEX_LIST },
    queries: { type: INDEX_LIST },
    combine: { type: 'enum', values: ['mean', 'sum'], default: 'mean' },
  };

  build() {
    this._select = h('select', {
      'aria-label': 'Which head to show',
      onchange: () => {
        this.head = this._select.value;
        this.emit('view-change', { head: this.head });
      },
    });
    this._sink = h('input', { type: 'checkbox', onchange: () => this.#hide(0, this._sink.checked) });
    this._combine = h(
      'select',
      {
        'aria-label': 'Selected query rows',
        onchange: () => this.#select(this.queries, this._combine.value),
      },
      h('option', { value: 'mean', text: 'Average the selected rows' }),
      h('option', { value: 'sum', text: 'Sum the selected rows' }),
    );
    this._summary = h('div', { class: 'muted small summary' });
    this._grid = h('div', { class: 'tiles' });
    this._barsCanvas = h('canvas', { role: 'img', tabindex: '0' });
    this._barsCaption = h('div', { class: 'muted small' });
    this._readout = h('div', {
      class: 'readout',
      'aria-live': 'polite',
      text: 'Hover or focus a cell for its exact weight; click or press Enter to see that query row as bars.',
    });
    const style = h('style', {
      text: `
      .tiles { display: grid; gap: ${GAP}px; align-items: start; }
      .dist { margin-top: 10px; }
      .summary { margin: -2px 0 8px; }`,
    });
    this.shadowRoot.append(
      style,
      h(
        'div',
        { class: 'bar' },
        h('span', { class: 'title', text: 'Attention weights' }),
        this._select,
        h('label', {}, this._sink, ' Hide the first token'),
        this._combine,
        this.exportBar(),
      ),
      this._summary,
      ...this.baseParts(),
      this._grid,
      h('div', { class: 'dist' }, this._barsCanvas, this._barsCaption),
      this._readout,
    );
    this._views = [];
    this._barsCanvas.addEventListener('pointermove', (e) => this.#barHover(e));
    this._barsCanvas.addEventListener('pointerleave', () => this.showTooltip(0, 0, null));
  }

  get exportSuffix() {
    return this.shown ? this.shown.view : '';
  }

  /** Precomputed weights (see the header); null runs the model. */
  get data() {
    return this._data || null;
  }
  set data(d) {
    this._data = d ? normalizeData(d) : null;
    this.schedule();
  }

  /**
   * The state: the attributes (head, query, palette, the model's), the config, which tile's query
   * row is shown as bars, and precomputed `data` when set (weights flat, shape [H, Tq, Tk], tokens).
   */
  extraState() {
    const d = this._data;
    return {
      ...super.extraState(),
      barsTile: this._barsTile ?? 0,
      data: d
        ? { weights: d.flat, shape: [d.H, d.Tq, d.Tk], queryTokens: d.queryTokens, keyTokens: d.keyTokens }
        : null,
    };
  }

  applyExtraState(s) {
    super.applyExtraState(s);
    this._barsTile = Number.isInteger(s.barsTile) ? s.barsTile : 0;
    this._data = s.data ? normalizeData({ ...s.data, weights: numbersFromState(s.data.weights) }) : null;
  }

  /** The last model result (or null with external data). */
  get result() {
    return this._result || null;
  }

  /** What is drawn: { view, queryTokens, keyTokens, matrices: [{ head, rows, cols, data }] }. */
  get shown() {
    return this._shown || null;
  }

  /** Centre of a cell in client coordinates: tile index (0 in single view), row, col. */
  cellCenter(tile, row, col) {
    return this._views[tile].view.cellCenter(row, col);
  }

  #source() {
    if (this._data) return { ok: true, ...this._data };
    const r = (this._result = runModel(this.config));
    if (!r.ok) return r;
    const w = r.byName.weights;
    const H = r.heads,
      size = r.Tq * r.Tk;
    return {
      ok: true,
      H,
      Tq: r.Tq,
      Tk: r.Tk,
      queryTokens: r.queryTokens,
      keyTokens: r.keyTokens,
      perHead: Array.from({ length: H }, (_, i) => w.data.subarray(i * size, (i + 1) * size)),
      mean: r.meanWeights,
    };
  }

  render() {
    const s = this.#source();
    if (!s.ok) {
      this.showError(s.error.message);
      this._grid.replaceChildren();
      this._views = [];
      this._shown = null;
      this._barsCanvas.hidden = true;
      this._barsCaption.textContent = '';
      this._summary.textContent = '';
      return;
    }
    this.showError('');
    this.#fillSelect(s.H);
    let view = this.head;
    if (typeof view === 'number' && view >= s.H) view = 0;
    if (view === 'mean' && !s.mean) view = 'all';
    this._select.value = String(view); // the view drawn (a head past this map's H shows head 0)
    const matrices =
      view === 'all'
        ? s.perHead.map((data, i) => ({ head: i, data }))
        : view === 'mean'
          ? [{ head: 'mean', data: s.mean }]
          : [{ head: view, data: s.perHead[view] }];
    for (const m of matrices) {
      m.rows = s.Tq;
      m.cols = s.Tk;
    }
    const hidden = hideShown(matrices, this.hideColumns, this.signed);
    this._sink.checked = this.hideColumns.includes(0);
    this._combine.value = this.combine;
    this._combine.hidden = rowsShown(this.queries, s.Tq).length < 2;
    this._shown = { view: String(view), queryTokens: s.queryTokens, keyTokens: s.keyTokens, matrices };
    const c = this._data ? null : this.config;
    this.#drawTiles(s, matrices);
    this._summary.textContent =
      `${s.Tq} query × ${s.Tk} key tokens · ${s.H} head${s.H > 1 ? 's' : ''}` +
      (this._domain.signed ? ` · ${SIGNED_NOTE}` : '') +
      (c
        ? ` · d_model ${c.dModel} · ${c.cross ? 'cross' : 'self'}-attention · mask: ${c.mask}${c.toggles.length ? ` + ${c.toggles.length} clicked` : ''}`
        : '') +
      hidden;
    this.#drawBars();
  }

  #fillSelect(H) {
    const want = ['all', 'mean', ...Array.from({ length: H }, (_, i) => String(i))];
    if (this._select.options.length !== want.length) {
      this._select.replaceChildren(
        ...want.map((v) =>
          h('option', {
            value: v,
            text: v === 'all' ? 'All heads' : v === 'mean' ? 'Mean of heads' : `Head ${v}`,
          }),
        ),
      );
    }
    this._select.value = String(this.head);
    if (this._select.selectedIndex < 0) this._select.value = 'all';
  }

  // As many tiles per row as fit in W, then balanced (see attention-heatmap-figure.js).
  static tileLayout(W, n, Tk) {
    return tileLayout(W, n, Tk);
  }

  #drawTiles(s, matrices) {
    const W = this.contentWidth;
    const n = matrices.length;
    const { perRow, tileW } = AttentionHeatmap.tileLayout(W, n, s.Tk);
    this._grid.style.gridTemplateColumns = `repeat(${perRow}, minmax(0, 1fr))`;
    while (this._views.length > n) this._views.pop().view.remove();
    while (this._views.length < n) {
      const k = this._views.length;
      const canvas = h('canvas');
      const view = new HeatmapView(canvas, {
        host: this,
        onHover: (cell, via) => this.#hover(k, cell, via),
        onClick: (cell, via, e) => this.#click(k, cell, e),
        onKey: (cell, e) =>
          /^[hH]$/.test(e.key) && this.#hide(cell.col, !this.hideColumns.includes(cell.col)),
      });
      this._grid.append(canvas);
      this._views.push({ canvas, view });
    }
    // One colour scale for all heads, so tiles can be compared.
    const domain = heatmapDomain(matrices, {
      signed: this.signed,
      palette: this.palette,
      diverging: divergingName(this.diverging),
    });
    const what = domain.signed ? 'Signed weights (of the values, not probabilities)' : 'Attention weights';
    const q = this.query < 0 ? s.Tq - 1 : Math.min(this.query, s.Tq - 1);
    matrices.forEach((m, k) => {
      const { canvas, view: v } = this._views[k];
      const title = m.head === 'mean' ? 'Mean over heads' : `Head ${m.head}`;
      canvas.setAttribute('role', 'img');
      canvas.setAttribute(
        'aria-label',
        `${what}, ${title.toLowerCase()}: ${s.Tq} query tokens (rows) by ${s.Tk} key tokens (columns). ` +
          'Arrow keys move between cells; Enter shows that query row as bars.',
      );
      v.width = tileW;
      v.set({
        data: m.data,
        rows: s.Tq,
        cols: s.Tk,
        rowLabels: s.queryTokens,
        colLabels: s.keyTokens,
        domain,
        rowAxis: 'query',
        colAxis: 'key',
        decimals: 2,
        values: n === 1 ? 'auto' : 'never',
        maxCell: n === 1 ? 46 : 24,
        title: n === 1 ? '' : title,
        legend: k === 0,
        selectedRow: q,
        selectedRows: rowsShown(this.queries, s.Tq),
        rowSums: false,
      });
    });
    this._domain = domain;
  }

  #drawBars() {
    const sh = this._shown;
    const rows = sh.matrices[0].rows;
    const q = this.query < 0 ? rows - 1 : Math.min(this.query, rows - 1);
    const k = Math.min(this._barsTile ?? 0, sh.matrices.length - 1);
    const m = sh.matrices[k];
    const { row, what, n } = barsRow(m, q, this.queries, this.combine, sh.queryTokens);
    const signed = this._domain.signed;
    this._barsCanvas.hidden = false;
    this._barsOpts = barsOptions(this._domain, row, sh.keyTokens, what, m.head);
    this._barsOpts.width = Math.min(this.contentWidth, 900);
    this._bars = drawBars(this._barsCanvas, { host: this, ...this._barsOpts });
    this._barsRow = { row, q, head: m.head };
    let sum = 0;
    for (const v of row) sum += v;
    this._barsCanvas.setAttribute(
      'aria-label',
      `Bar chart: the attention of ${n > 1 ? `${n} query rows` : `query ${q}`} over ${m.cols} keys; the bars sum to ${sum.toFixed(4)}.`,
    );
    this._barsCaption.textContent = `The bars sum to ${sum.toFixed(6)}${signed ? ` (${SIGNED_NOTE}: a row need not sum to 1)` : ''}.`;
  }

  #barHover(e) {
    if (!this._bars) return;
    const i = this._bars.barAt(e.clientX);
    if (i < 0) {
      this.showTooltip(0, 0, null);
      return;
    }
    const sh = this._shown;
    this.showTooltip(e.clientX, e.clientY, [
      `key “${sh.keyTokens[i]}” (${i})`,
      `weight = ${exactNumber(this._barsRow.row[i])}`,
    ]);
  }

  #detail(k, cell) {
    const sh = this._shown;
    return {
      head: sh.matrices[k].head,
      row: cell.row,
      col: cell.col,
      value: cell.value,
      query: sh.queryTokens[cell.row],
      key: sh.keyTokens[cell.col],
    };
  }

  #hover(k, cell, via) {
    if (!cell) {
      this.showTooltip(0, 0, null);
      return;
    }
    const d = this.#detail(k, cell);
    const head = d.head === 'mean' ? 'mean over heads' : `head ${d.head}`;
    const lines = [
      `${head} · query “${d.query}” (${d.row}) → key “${d.key}” (${d.col})`,
      `weight = ${exactNumber(d.value)}`,
    ];
    if (this._domain.signed) lines.push(SIGNED_NOTE);
    this._readout.textContent = `${lines[0]}: ${lines.slice(1).join(' — ')}`;
    const p = this._views[k].view.cellCenter(cell.row, cell.col);
    this.showTooltip(p.x, p.y, lines);
    void via;
    this.emit('cell-hover', d);
  }

  /** Hides (or shows again) key column `col`, or selects query rows `queries` (combined by `combine`): the page hears it. */
  #hide(col, on) {
    const list = this.hideColumns.filter((c) => c !== col);
    this.#select(this.queries, this.combine, on ? [...list, col] : list);
  }

  #select(queries, combine, hideColumns = this.hideColumns) {
    Object.assign(this, { queries, combine, hideColumns });
    this.emit('selection-change', { hideColumns: this.hideColumns, queries: this.queries, combine });
  }

  #click(k, cell, e) {
    this._barsTile = k;
    if (e?.altKey) return this.#hide(cell.col, !this.hideColumns.includes(cell.col));
    if (e?.shiftKey || e?.ctrlKey || e?.metaKey) {
      const rows = this._shown.matrices[0].rows;
      const q = this.query < 0 ? rows - 1 : Math.min(this.query, rows - 1);
      const start = this.queries.length ? this.queries : [q];
      return this.#select(toggleIndex(start, cell.row), this.combine);
    }
    if (this.queries.length) this.queries = [];
    const d = this.#detail(k, cell);
    this.setAttribute('query', String(cell.row)); // re-renders with the row outlined and as bars
    this.emit('cell-click', d);
  }

  getCSV() {
    const sh = this._shown;
    if (!sh) return '';
    const withLabels = (m) => ({ ...m, key: m.head, rowLabels: sh.queryTokens, colLabels: sh.keyTokens });
    if (sh.matrices.length === 1)
      return matrixToCSV({ ...withLabels(sh.matrices[0]), corner: 'query \\ key' });
    return matricesToLongCSV(sh.matrices.map(withLabels), 'head');
  }

  getJSON() {
    const sh = this._shown;
    if (!sh) return jsonText(null);
    return jsonText(
      withState(this, {
        kind: 'attention-weights',
        ...(this._domain?.signed ? { signed: SIGNED_NOTE } : {}),
        // hidden keys: their weights null, each row renormalised without them
        ...(this.hideColumns.length ? { hiddenColumns: this.hideColumns } : {}),
        view: sh.view,
        queryTokens: sh.queryTokens,
        keyTokens: sh.keyTokens,
        shape: [sh.matrices.length, sh.matrices[0].rows, sh.matrices[0].cols],
        heads: sh.matrices.map((m) => ({ head: m.head, weights: toNested(m.data, m.rows, m.cols) })),
      }),
    );
  }

  /**
   * The heatmap(s) as an SVG document (vector cells, labels, the one shared colour bar). Options:
   * width (CSS px, default the widget's), fontSize (px, default 12), bars (true: the selected query
   * row's bar chart below, as on screen; default false). The view's state is in its <metadata>.
   */
  toSVG(options = {}) {
    const sh = this._shown;
    if (!sh || !this._views.length) throw new Error('toSVG: nothing is drawn yet (wait for the ready event)');
    const views = this._views.map((v) => v.view);
    return heatmapSVG(sh, views, this._barsOpts ?? null, options, {
      width: this.contentWidth,
      theme: themeOf(this),
      domain: this._domain,
      config: this._data ? null : this.config,
      query: this.query,
      palette: this.palette,
      signed: this._domain.signed,
      state: this.state,
    });
  }

  pngCanvas() {
    const items = [];
    const host = this._grid.getBoundingClientRect();
    for (const { canvas } of this._views) {
      const r = canvas.getBoundingClientRect();
      items.push({ canvas, x: r.left - host.left, y: r.top - host.top });
    }
    const gridH = Math.max(0, ...items.map((it) => it.y + parseFloat(it.canvas.style.height)));
    if (!this._barsCanvas.hidden) items.push({ canvas: this._barsCanvas, x: 0, y: gridH + PART_GAP });
    return composeCanvases(items, themeOf(this).bgSolid);
  }
}
