// HeatmapView: draws one matrix on a canvas — cells coloured by a colour map, row/column labels,
// optional numbers inside cells, an optional Σ column (row sums), and a colour legend — and turns
// pointer and keyboard input into cell events. Every widget's matrix goes through this one renderer.
//
// Text (token labels included) is drawn with fillText, so it is never parsed as HTML.
// Cell colours are written as one (rows × cols) ImageData and scaled up, so 512 × 512 stays smooth.
import { themeOf } from './draw-util.js';
import { gridRow, valueWords, visuallyHidden } from './a11y.js';
import { heatmapLayout } from './heatmap-geometry.js';
import { heatmapList } from './heatmap-list.js';
import { paintFigure } from './paint-canvas.js';

export class HeatmapView {
  /**
   * @param {HTMLCanvasElement} canvas
   * @param {{ host: Element, onHover?: Function, onClick?: Function }} hooks
   *   onHover(cell | null, via: 'pointer' | 'keyboard'), onClick(cell, via, event) (the event's
   *   modifier keys select several rows), onKey(cell, event): a key the grid does not use, on a cell
   *   cell = { row, col, value, rowLabel, colLabel }
   */
  constructor(canvas, { host, onHover = () => {}, onClick = () => {}, onKey = () => {} }) {
    this.canvas = canvas;
    this.host = host;
    this.hooks = { onHover, onClick, onKey };
    this.opts = null;
    this.focus = null; // { row, col } moved by the keyboard
    this.hover = null; // { row, col } under the pointer
    this.width = 600;
    this.geo = null;
    // The canvas is what the eye reads; `grid` (role="grid", one tab stop, a roving tabindex over
    // one live cell) is what the keyboard and screen readers read: arrow keys move the cell, whose
    // name says its row token, column token and value. The canvas draws the focused cell.
    canvas.tabIndex = -1; // focus() on it (pointer users, older callers) moves on to the grid
    canvas.setAttribute('aria-hidden', 'true');
    this.grid = visuallyHidden(document.createElement('div'));
    this.grid.setAttribute('role', 'grid');
    this.gridCell = null;
    new MutationObserver(() => this.#labelGrid()).observe(canvas, {
      attributes: true,
      attributeFilter: ['aria-label'],
    });
    canvas.addEventListener('pointermove', (e) => this.#pointer(e));
    canvas.addEventListener('pointerleave', () => {
      this.hover = null;
      this.draw();
      this.hooks.onHover(null, 'pointer');
    });
    canvas.addEventListener('click', (e) => {
      const c = this.cellAt(e.clientX, e.clientY);
      if (c) {
        this.focus = { row: c.row, col: c.col };
        this.#focusCell();
        this.hooks.onClick(c, 'pointer', e);
      }
    });
    canvas.addEventListener('focus', () => this.#focusCell());
    this.grid.addEventListener('keydown', (e) => this.#key(e));
    this.grid.addEventListener('focusin', () => {
      if (!this.focus && this.opts && this.opts.rows && this.opts.cols) this.focus = { row: 0, col: 0 };
      this.draw();
      if (this.focus) this.hooks.onHover(this.cell(this.focus.row, this.focus.col), 'keyboard');
    });
    this.grid.addEventListener('focusout', () => this.draw());
  }

  /** Whether keyboard focus is on this view's grid. */
  get hasFocus() {
    const active = this.host.shadowRoot ? this.host.shadowRoot.activeElement : document.activeElement;
    return Boolean(active && this.grid.contains(active));
  }

  #labelGrid() {
    const o = this.opts;
    this.grid.setAttribute('aria-label', this.canvas.getAttribute('aria-label') || o?.title || 'Heatmap');
  }

  // The grid's one row and cell, for the focused (row, col): a new element each move, focused, so
  // screen readers announce it; the old one is removed after focus has left it.
  #syncGrid(moveFocus) {
    const o = this.opts;
    if (!this.grid.isConnected && this.canvas.parentNode) this.canvas.after(this.grid);
    if (!o || !o.rows || !o.cols) {
      this.grid.replaceChildren();
      this.gridCell = null;
      return;
    }
    this.grid.setAttribute('aria-rowcount', String(o.rows));
    this.grid.setAttribute('aria-colcount', String(o.cols));
    const { row, col } = this.focus || { row: 0, col: 0 };
    const c = this.cell(row, col);
    const text = `${o.rowAxis || 'row'} ${row} “${c.rowLabel}”, ${o.colAxis || 'column'} ${col} “${c.colLabel}”: ${valueWords(c.value)}`;
    if (this.gridCell && this.gridCell.textContent === text && !moveFocus) return;
    const rowEl = gridRow(row, col, text);
    const cellEl = rowEl.firstChild;
    const old = this.grid.firstChild;
    this.grid.append(rowEl);
    if (moveFocus || (old && this.hasFocus)) cellEl.focus({ preventScroll: true });
    old?.remove();
    this.gridCell = cellEl;
  }

  #focusCell() {
    const o = this.opts;
    if (!this.focus && o && o.rows && o.cols) this.focus = { row: 0, col: 0 };
    this.#syncGrid(true);
    this.draw();
  }

  /**
   * Sets what to draw.
   * @param {object} o
   * @param {Float32Array|number[]} o.data  (rows, cols) row-major; −∞ draws as a masked cell
   * @param {number} o.rows @param {number} o.cols
   * @param {string[]} [o.rowLabels] @param {string[]} [o.colLabels]
   * @param {{ lo: number, hi: number, map: string, caption?: string }} o.domain  caption: a line under
   *   the legend saying what the colours are (e.g. signed weights, not probabilities)
   * @param {number} [o.decimals=2]   rounding of the numbers inside cells
   * @param {'auto'|'always'|'never'} [o.values='auto']
   * @param {boolean} [o.rowSums=false]  draw a Σ column
   * @param {number} [o.maxCell=46]  largest cell edge in CSS pixels
   * @param {number} [o.minRowHeight=18]  rows are at least this tall while there are ≤ 64 (room for labels)
   * @param {number} [o.maxRowHeight]  rows are at most this tall (default maxCell)
   * @param {number} [o.selectedRow]  outline a row (the query row shown as a distribution)
   * @param {number[]} [o.selectedRows]  outline these rows too (several query rows selected)
   * @param {string} [o.title]  drawn above the matrix
   * @param {string} [o.rowAxis='row'] @param {string} [o.colAxis='column']  what rows and columns are
   *   (e.g. 'query', 'key'), in each cell's accessible name
   * @param {boolean} [o.legend=true]
   */
  set(o) {
    this.opts = {
      decimals: 2,
      values: 'auto',
      rowSums: false,
      maxCell: 46,
      minRowHeight: 18,
      legend: true,
      ...o,
    };
    if (this.focus && (this.focus.row >= o.rows || this.focus.col >= o.cols)) this.focus = null;
    if (this.hover && (this.hover.row >= o.rows || this.hover.col >= o.cols)) this.hover = null;
    this.#labelGrid();
    this.#syncGrid(false);
    this.draw();
  }

  /**
   * Takes the view off the page: its canvas and its grid (the grid sits beside the canvas, so
   * removing the canvas alone would leave the grid's live cell in the Tab order).
   */
  remove() {
    this.canvas.remove();
    this.grid.remove();
  }

  /** Sets the CSS width the view may use and redraws. */
  resize(width) {
    if (width > 0 && Math.abs(width - this.width) >= 1) {
      this.width = width;
      this.draw();
    }
  }

  /** The cell at (row, col) as an event payload. */
  cell(row, col) {
    const o = this.opts;
    return {
      row,
      col,
      value: o.data[row * o.cols + col],
      rowLabel: o.rowLabels ? o.rowLabels[row] : String(row),
      colLabel: o.colLabels ? o.colLabels[col] : String(col),
    };
  }

  /** The cell under a client point, or null. */
  cellAt(clientX, clientY) {
    const g = this.geo;
    if (!g) return null;
    const r = this.canvas.getBoundingClientRect();
    const x = clientX - r.left - g.x0,
      y = clientY - r.top - g.y0;
    const col = Math.floor(x / g.cw),
      row = Math.floor(y / g.ch);
    if (x < 0 || y < 0 || row >= this.opts.rows || col >= this.opts.cols) return null;
    return this.cell(row, col);
  }

  /** Client coordinates of a cell's centre (for tooltips and tests). */
  cellCenter(row, col) {
    const g = this.geo,
      r = this.canvas.getBoundingClientRect();
    return { x: r.left + g.x0 + (col + 0.5) * g.cw, y: r.top + g.y0 + (row + 0.5) * g.ch };
  }

  #pointer(e) {
    const c = this.cellAt(e.clientX, e.clientY);
    const same = c && this.hover && c.row === this.hover.row && c.col === this.hover.col;
    if (same || (!c && !this.hover)) return;
    this.hover = c ? { row: c.row, col: c.col } : null;
    this.draw();
    this.hooks.onHover(c, 'pointer');
  }

  #key(e) {
    const o = this.opts;
    if (!o || !o.rows || !o.cols) return;
    const f = this.focus || { row: 0, col: 0 };
    let { row, col } = f;
    if (e.key === 'ArrowUp') row--;
    else if (e.key === 'ArrowDown') row++;
    else if (e.key === 'ArrowLeft') col--;
    else if (e.key === 'ArrowRight') col++;
    else if (e.key === 'Home') col = 0;
    else if (e.key === 'End') col = o.cols - 1;
    else if (e.key === 'PageUp') row = 0;
    else if (e.key === 'PageDown') row = o.rows - 1;
    else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      this.focus = f;
      this.hooks.onClick(this.cell(f.row, f.col), 'keyboard', e);
      return;
    } else {
      this.hooks.onKey(this.cell(f.row, f.col), e);
      return;
    }
    e.preventDefault();
    this.focus = { row: Math.max(0, Math.min(o.rows - 1, row)), col: Math.max(0, Math.min(o.cols - 1, col)) };
    this.#syncGrid(true);
    this.draw();
    this.hooks.onHover(this.cell(this.focus.row, this.focus.col), 'keyboard');
  }

  /**
   * Computes gutters and cell sizes for a width (default: the current one) and a font scale s
   * (1: the 12 px labels of the screen; the SVG export's fontSize option scales the text and the
   * room kept for it). Uses the canvas's context to measure labels; public for the SVG export.
   */
  layout(width = this.width, s = 1) {
    const ctx = this.canvas.getContext('2d');
    return this.#layout(ctx, themeOf(this.host), width, s);
  }

  #layout(ctx, theme, width = this.width, s = 1) {
    return heatmapLayout(ctx, theme, this.opts, width, s);
  }

  /** Draws everything. Safe to call often (it is cheap relative to the model). */
  draw() {
    const o = this.opts;
    if (!o) return;
    const ctx = this.canvas.getContext('2d');
    const theme = themeOf(this.host);
    const g = (this.geo = this.#layout(ctx, theme));
    const width = this.width;
    // The picture (the same display list the SVG export paints), then the transient marks (the
    // canvas's only). At a figure offset or font scale, laid out again as the SVG export does.
    paintFigure(this.canvas, g.w, g.h, theme, (c, th, at) => {
      const { items, masked } = heatmapList(c, th, o, at ? this.#layout(c, th, width, at.s ?? 1) : g, at);
      if (at) return items;
      this.maskedCount = masked.length;
      return [...items, ...this.#marks(g, th)];
    });
  }

  // Hover and keyboard focus, as outlined boxes around the cell: on the canvas only (the SVG export
  // leaves them out).
  #marks(g, theme) {
    const box = (c, stroke, width) => {
      const s = Math.max(g.cw, 4),
        t = Math.max(g.ch, 4);
      const x = g.x0 + c.col * g.cw + (g.cw - s) / 2,
        y = g.y0 + c.row * g.ch + (g.ch - t) / 2;
      return { kind: 'rect', x, y, w: s, h: t, stroke, width };
    };
    const items = [];
    if (this.hover) items.push(box(this.hover, theme.fg, 1.5));
    if (this.focus && this.hasFocus)
      items.push(box(this.focus, theme.bgSolid, 4), box(this.focus, theme.accent, 2));
    return items;
  }
}
