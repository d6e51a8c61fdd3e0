// HeatmapView: draws one matrix on a canvas — cells coloured by a colour map, row/column labels,
// optional numbers inside cells, an optional Σ column (row sums), and a colour legend — and turns
// pointer and keyboard input into cell events. Every widget's matrix goes through this one renderer.
//
// Text (token labels included) is drawn with fillText, so it is never parsed as HTML.
// Cell colours are written as one (rows × cols) ImageData and scaled up, so 512 × 512 stays smooth.
import { colormap, inkOn } from './colormap.js';
import { formatNumber, fitText, prepareCanvas, themeOf } from './draw-util.js';
import { gridRow, valueWords, visuallyHidden } from './a11y.js';

const PAD = 8;

// The widest label of a label list in a font, remembered per list (tiles share their lists).
const labelWidths = new WeakMap();
function widestLabel(ctx, labels) {
  let byFont = labelWidths.get(labels);
  if (!byFont) labelWidths.set(labels, (byFont = new Map()));
  let w = byFont.get(ctx.font);
  if (w === undefined) {
    w = 0;
    for (const l of labels) w = Math.max(w, ctx.measureText(l.length > 40 ? l.slice(0, 40) : l).width);
    byFont.set(ctx.font, w);
  }
  return w;
}

// Packed RGBA (little-endian: 0xAABBGGRR) versions of the colour maps, built once per map.
const packedCache = new Map();
function packedLut(name, lut) {
  let p = packedCache.get(name);
  if (!p) {
    p = new Uint32Array(256);
    for (let i = 0; i < 256; i++)
      p[i] = ((255 << 24) | (lut[i * 3 + 2] << 16) | (lut[i * 3 + 1] << 8) | lut[i * 3]) >>> 0;
    packedCache.set(name, p);
  }
  return p;
}
const LEGEND_H = 34;
const SUM_W = 58;

export class HeatmapView {
  /**
   * @param {HTMLCanvasElement} canvas
   * @param {{ host: Element, onHover?: Function, onClick?: Function }} hooks
   *   onHover(cell | null, via: 'pointer' | 'keyboard'), onClick(cell, via)
   *   cell = { row, col, value, rowLabel, colLabel }
   */
  constructor(canvas, { host, onHover = () => {}, onClick = () => {} }) {
    this.canvas = canvas;
    this.host = host;
    this.hooks = { onHover, onClick };
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
        this.hooks.onClick(c, 'pointer');
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
   * @param {{ lo: number, hi: number, map: string }} o.domain
   * @param {number} [o.decimals=2]   rounding of the numbers inside cells
   * @param {'auto'|'always'|'never'} [o.values='auto']
   * @param {boolean} [o.rowSums=false]  draw a Σ column
   * @param {number} [o.maxCell=46]  largest cell edge in CSS pixels
   * @param {number} [o.minRowHeight=18]  rows are at least this tall while there are ≤ 64 (room for labels)
   * @param {number} [o.maxRowHeight]  rows are at most this tall (default maxCell)
   * @param {number} [o.selectedRow]  outline a row (the query row shown as a distribution)
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
      this.hooks.onClick(this.cell(f.row, f.col), 'keyboard');
      return;
    } else return;
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
    const o = this.opts;
    ctx.font = `${12 * s}px ${theme.font}`;
    const maxLabel = (labels, cap) => (labels ? Math.min(cap, widestLabel(ctx, labels)) : 0);
    const rowW = o.rowLabels ? Math.ceil(maxLabel(o.rowLabels, 110 * s)) + 10 : 0;
    const sumW = o.rowSums ? SUM_W * s : 0;
    const avail = Math.max(40, width - rowW - sumW - 2 * PAD);
    const cw = Math.max(1, Math.min(o.maxCell, avail / Math.max(1, o.cols)));
    // Rows get at least a label's height while there are few of them; tall matrices are capped at
    // ~720 px so a 512-token heatmap still fits on a screen.
    let ch = Math.min(o.maxCell, o.rowLabels && o.rows <= 64 ? Math.max(cw, o.minRowHeight) : cw);
    if (o.maxRowHeight) ch = Math.min(ch, o.maxRowHeight);
    if (o.rows * ch > 720) ch = Math.max(1, 720 / o.rows);
    const colLabelW = o.colLabels ? maxLabel(o.colLabels, 90 * s) : 0;
    // Short numeric labels (dimension indices) stay horizontal and are thinned instead of angled.
    const numeric = o.colLabels && o.colLabels.every((l) => /^\d+$/.test(l));
    const angled = o.colLabels && !numeric && colLabelW + 4 > cw;
    const top =
      (o.title ? 22 * s : 0) + (o.colLabels ? (angled ? Math.ceil(colLabelW * 0.72) + 14 * s : 18 * s) : 0);
    const x0 = PAD + rowW,
      y0 = PAD + top;
    const h = y0 + o.rows * ch + (o.legend ? LEGEND_H * s + 6 : 0) + PAD;
    return {
      x0,
      y0,
      cw,
      ch,
      rowW,
      sumW,
      angled,
      top,
      w: Math.ceil(Math.min(width, x0 + o.cols * cw + sumW + PAD)),
      h: Math.ceil(h),
    };
  }

  /** Draws everything. Safe to call often (it is cheap relative to the model). */
  draw() {
    const o = this.opts;
    if (!o) return;
    const ctx = this.canvas.getContext('2d');
    const theme = themeOf(this.host);
    const g = (this.geo = this.#layout(ctx, theme));
    prepareCanvas(this.canvas, g.w, g.h);
    if (theme.bg) {
      ctx.fillStyle = theme.bg;
      ctx.fillRect(0, 0, g.w, g.h);
    }
    this.#cells(ctx, g, theme);
    this.#labels(ctx, g, theme);
    if (o.rowSums) this.#sums(ctx, g, theme);
    this.#marks(ctx, g, theme);
    if (o.legend) this.#legend(ctx, g, theme);
  }

  #cells(ctx, g, theme) {
    const o = this.opts,
      { lo, hi, map } = o.domain,
      lut = colormap(map);
    // 1. One pixel per cell, scaled up without smoothing. Colours are written as packed RGBA words
    //    (a 256-entry table), which keeps 512 × 512 cells at a few milliseconds.
    const img = new ImageData(o.cols, o.rows);
    const px = new Uint32Array(img.data.buffer); // (rows, cols) RGBA, little-endian words
    const packed = packedLut(map, lut);
    const [mr, mg, mb] = theme.maskedRgb;
    const maskedPx = ((255 << 24) | (mb << 16) | (mg << 8) | mr) >>> 0;
    const k = hi > lo ? 255 / (hi - lo) : 0;
    const masked = []; // flat indices of −∞ cells
    const n = o.rows * o.cols,
      data = o.data;
    const below = packed[0];
    for (let i = 0; i < n; i++) {
      const v = data[i];
      if (v >= lo) {
        // the common case (false for NaN and −∞)
        const t = ((v - lo) * k + 0.5) | 0;
        px[i] = packed[t > 255 ? 255 : t];
      } else if (v > -Infinity) {
        px[i] = below;
      } else {
        masked.push(i);
        px[i] = maskedPx;
      }
    }
    const off = new OffscreenCanvas(o.cols, o.rows);
    off.getContext('2d').putImageData(img, 0, 0);
    // Sharp cell edges when scaling up; averaged when many cells share a pixel.
    ctx.imageSmoothingEnabled = g.cw < 1 || g.ch < 1;
    ctx.drawImage(off, g.x0, g.y0, o.cols * g.cw, o.rows * g.ch);
    this.maskedCount = masked.length;
    // 2. Hatching on masked (−∞) cells, so masking does not rely on colour alone (where no "−∞" is
    //    written in the cell already).
    const showValues = o.values === 'always' || (o.values === 'auto' && g.cw >= 34 && g.ch >= 16);
    if (g.cw >= 5 && masked.length && !showValues) {
      ctx.save();
      ctx.strokeStyle = theme.hatch;
      ctx.lineWidth = 1;
      ctx.beginPath();
      for (const i of masked) {
        const x = g.x0 + (i % o.cols) * g.cw,
          y = g.y0 + Math.floor(i / o.cols) * g.ch;
        ctx.moveTo(x + 1, y + g.ch - 1);
        ctx.lineTo(x + g.cw - 1, y + 1);
      }
      ctx.stroke();
      ctx.restore();
    }
    // 3. Cell borders and the rounded numbers when cells are big enough to read them.
    if (g.cw >= 8 && g.ch >= 8) {
      ctx.strokeStyle = theme.bgSolid;
      ctx.lineWidth = 1;
      ctx.beginPath();
      for (let c = 1; c < o.cols; c++) {
        ctx.moveTo(g.x0 + c * g.cw, g.y0);
        ctx.lineTo(g.x0 + c * g.cw, g.y0 + o.rows * g.ch);
      }
      for (let r = 1; r < o.rows; r++) {
        ctx.moveTo(g.x0, g.y0 + r * g.ch);
        ctx.lineTo(g.x0 + o.cols * g.cw, g.y0 + r * g.ch);
      }
      ctx.stroke();
    }
    if (showValues) {
      ctx.font = `${g.cw >= 44 ? 11 : 10}px ${theme.mono}`;
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      for (let r = 0; r < o.rows; r++)
        for (let c = 0; c < o.cols; c++) {
          const v = o.data[r * o.cols + c];
          ctx.fillStyle = Number.isFinite(v) ? inkOn(map, v, lo, hi) : theme.fg;
          ctx.fillText(
            formatNumber(v, o.decimals),
            g.x0 + (c + 0.5) * g.cw,
            g.y0 + (r + 0.5) * g.ch,
            g.cw - 2,
          );
        }
    }
  }

  #labels(ctx, g, theme) {
    const o = this.opts;
    ctx.fillStyle = theme.fg;
    ctx.font = `12px ${theme.font}`;
    if (o.title) {
      ctx.textAlign = 'left';
      ctx.textBaseline = 'top';
      ctx.font = `600 12px ${theme.font}`;
      ctx.fillText(fitText(ctx, o.title, g.w - 2 * PAD), PAD, PAD);
      ctx.font = `12px ${theme.font}`;
    }
    if (o.rowLabels) {
      const every = Math.max(1, Math.ceil(14 / g.ch));
      ctx.textAlign = 'right';
      ctx.textBaseline = 'middle';
      for (let r = 0; r < o.rows; r += every) {
        ctx.fillStyle = o.selectedRow === r ? theme.accent : theme.fg;
        ctx.fillText(fitText(ctx, o.rowLabels[r], g.rowW - 10), g.x0 - 6, g.y0 + (r + 0.5) * g.ch);
      }
    }
    if (o.colLabels) {
      const widest = g.angled
        ? 13
        : Math.max(16, ...o.colLabels.slice(0, 600).map((l) => ctx.measureText(l).width + 8));
      const every = Math.max(1, Math.ceil((g.angled ? 13 : Math.min(widest, 80)) / g.cw));
      ctx.fillStyle = theme.fg;
      for (let c = 0; c < o.cols; c += every) {
        const x = g.x0 + (c + 0.5) * g.cw,
          text = o.colLabels[c];
        if (g.angled) {
          ctx.save();
          ctx.translate(x, g.y0 - 5);
          ctx.rotate(-Math.PI / 4);
          ctx.textAlign = 'left';
          ctx.textBaseline = 'middle';
          ctx.fillText(fitText(ctx, text, 90), 0, 0);
          ctx.restore();
        } else {
          ctx.textAlign = 'center';
          ctx.textBaseline = 'bottom';
          ctx.fillText(fitText(ctx, text, g.cw * every - 2), x, g.y0 - 4);
        }
      }
    }
  }

  #sums(ctx, g, theme) {
    const o = this.opts;
    const x = g.x0 + o.cols * g.cw + 8;
    ctx.font = `11px ${theme.mono}`;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'bottom';
    ctx.fillStyle = theme.muted;
    ctx.fillText('Σ row', x, g.y0 - 4);
    if (g.ch < 10) return;
    ctx.textBaseline = 'middle';
    for (let r = 0; r < o.rows; r++) {
      let s = 0;
      for (let c = 0; c < o.cols; c++) {
        const v = o.data[r * o.cols + c];
        if (Number.isFinite(v)) s += v;
      }
      ctx.fillStyle = theme.fg;
      ctx.fillText(s.toFixed(3), x, g.y0 + (r + 0.5) * g.ch);
    }
  }

  #marks(ctx, g, theme) {
    const o = this.opts;
    if (Number.isInteger(o.selectedRow) && o.selectedRow < o.rows) {
      ctx.strokeStyle = theme.accent;
      ctx.lineWidth = 2;
      ctx.strokeRect(g.x0 + 1, g.y0 + o.selectedRow * g.ch + 1, o.cols * g.cw - 2, g.ch - 2);
    }
    const box = (c, color, w) => {
      ctx.strokeStyle = color;
      ctx.lineWidth = w;
      const s = Math.max(g.cw, 4),
        t = Math.max(g.ch, 4);
      ctx.strokeRect(g.x0 + c.col * g.cw + (g.cw - s) / 2, g.y0 + c.row * g.ch + (g.ch - t) / 2, s, t);
    };
    if (this.hover) box(this.hover, theme.fg, 1.5);
    if (this.focus && this.hasFocus) {
      box(this.focus, theme.bgSolid, 4);
      box(this.focus, theme.accent, 2);
    }
  }

  #legend(ctx, g, theme) {
    const o = this.opts,
      { lo, hi, map } = o.domain,
      lut = colormap(map);
    const x = PAD + Math.max(0, g.rowW - 4),
      y = g.y0 + o.rows * g.ch + 12;
    const w = Math.max(60, Math.min(220, g.w - x - PAD - 12));
    for (let i = 0; i < w; i++) {
      const k = Math.round((i / (w - 1)) * 255) * 3;
      ctx.fillStyle = `rgb(${lut[k]},${lut[k + 1]},${lut[k + 2]})`;
      ctx.fillRect(x + i, y, 1.5, 10);
    }
    ctx.fillStyle = theme.muted;
    ctx.font = `10px ${theme.mono}`;
    ctx.textBaseline = 'top';
    const tick = (t, v, align) => {
      ctx.textAlign = align;
      ctx.fillText(formatNumber(v, Math.abs(hi - lo) < 0.1 ? 4 : 2), x + t * w, y + 13);
    };
    tick(0, lo, 'left');
    tick(0.5, (lo + hi) / 2, 'center');
    tick(1, hi, 'right');
    if (this.maskedCount) {
      const mx = x + w + 14;
      ctx.fillStyle = `rgb(${theme.maskedRgb.slice(0, 3).join(',')})`;
      ctx.fillRect(mx, y, 14, 10);
      ctx.strokeStyle = theme.hatch;
      ctx.beginPath();
      ctx.moveTo(mx + 1, y + 9);
      ctx.lineTo(mx + 13, y + 1);
      ctx.stroke();
      ctx.fillStyle = theme.muted;
      ctx.textAlign = 'left';
      ctx.textBaseline = 'top';
      ctx.font = `11px ${theme.font}`;
      ctx.fillText('masked (−∞)', mx + 20, y - 1);
    }
  }
}
