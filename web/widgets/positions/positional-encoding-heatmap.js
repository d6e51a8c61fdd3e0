// <positional-encoding-heatmap>: the sinusoidal positional encoding as positions × dimensions, with
// the curves of chosen dimensions below it (click a column to add or remove its curve).
//
// Attributes: length (positions, default 50), d-model (default 64), base (default 10000),
//             dims (comma-separated dimensions to draw as curves, default "0,2,8,24").
// The values come from the library's sinusoidalEncoding(length, dModel, { base }).
import { AwElement, h, withState } from '../base-element.js';
import { HeatmapView } from '../figures/heatmap-view.js';
import { SERIES_COLORS, drawLines } from '../figures/charts.js';
import { heatmapPanel, jsonSafe, linesPanel, svgDocument, svgFigure } from '../figures/svg.js';
import { composeCanvases, jsonText, matrixToCSV, toNested } from '../export.js';
import { exactNumber, themeOf } from '../figures/draw-util.js';
import { attn } from '../runtime.js';
import { divergingName } from '../figures/colormap.js';
import { PART_GAP } from '../figures/display-list.js';

const PE_CSS = `
.controls { display: inline-flex; align-items: center; gap: 6px; }
.controls input { width: 7.5em; }
.curves { margin-top: 10px; }
`;

export class PositionalEncodingHeatmap extends AwElement {
  static attributes = {
    length: { type: 'int', parseInt: true, default: 50, min: 1, max: 2048 },
    'd-model': { type: 'int', parseInt: true, default: 64, min: 1, max: 2048 },
    base: { type: 'number', default: 10000, above: 1 },
    dims: { property: false }, // below: its valid dimensions depend on d-model
    // The map of the encoding (values in −1…1): 'blue-orange' (default) | 'red-blue'.
    diverging: { type: 'diverging' },
  };

  build() {
    this._base = h('input', {
      type: 'number',
      min: '2',
      step: 'any',
      'aria-label': 'Base of the sinusoidal encoding',
      onchange: () => {
        const v = Number(this._base.value);
        if (v > 1) this.base = v;
      },
    });
    this._summary = h('div', { class: 'muted small' });
    this._canvas = h('canvas', { role: 'img' });
    this._view = new HeatmapView(this._canvas, {
      host: this,
      onHover: (cell) => this.#hover(cell),
      onClick: (cell) => this.#click(cell),
    });
    this._curves = h('canvas', { role: 'img', class: 'curves' });
    this._readout = h('div', {
      class: 'readout',
      'aria-live': 'polite',
      text: 'Hover or focus a cell for its exact value; click a column (or press Enter) to add or remove its curve.',
    });
    this.shadowRoot.append(
      h('style', { text: PE_CSS }),
      h(
        'div',
        { class: 'bar' },
        h('span', { class: 'title', text: 'Sinusoidal positional encoding' }),
        h('label', { class: 'controls' }, h('span', { class: 'muted', text: 'base' }), this._base),
        this.exportBar(),
      ),
      this._summary,
      ...this.baseParts(),
      h('div', { class: 'scroll' }, this._canvas),
      this._curves,
      this._readout,
    );
  }

  /** Dimensions drawn as curves (those under d-model; default 0, 2, 8, 24; at most 8). */
  get dims() {
    const raw = this.getAttribute('dims');
    const list =
      raw === null
        ? [0, 2, 8, 24]
        : raw
            .split(/[\s,]+/)
            .filter(Boolean)
            .map(Number);
    return [...new Set(list.filter((d) => Number.isInteger(d) && d >= 0 && d < this.dModel))].slice(0, 8);
  }
  set dims(v) {
    this.setAttribute('dims', (Array.isArray(v) ? v : [v]).join(','));
  }

  get exportName() {
    return `positional-encoding-base${this.base}`;
  }

  /** What is drawn: { length, dModel, base, data (length × dModel), dims }. */
  get shown() {
    return this._shown || null;
  }

  cellCenter(row, col) {
    return this._view.cellCenter(row, col);
  }

  render() {
    const L = this.length,
      D = this.dModel,
      base = this.base;
    let pe;
    try {
      pe = attn.sinusoidalEncoding(L, D, { base });
    } catch (e) {
      this.showError(e.message);
      return;
    }
    this.showError('');
    const data = Float32Array.from(pe.data); // (L, D) row-major
    this._shown = { length: L, dModel: D, base, data, dims: this.dims };
    if (this.shadowRoot.activeElement !== this._base) this._base.value = String(base);
    this._summary.textContent =
      `${L} positions (rows) × ${D} dimensions (columns), base ${base}. ` +
      'Even columns are sines, odd columns cosines; the wavelength grows from 2π to 2π·base across the dimensions.';
    const W = this.contentWidth;
    this._view.width = W;
    this._view.set({
      data,
      rows: L,
      cols: D,
      rowLabels: Array.from({ length: L }, (_, i) => String(i)),
      colLabels: Array.from({ length: D }, (_, i) => String(i)),
      domain: { lo: -1, hi: 1, map: divergingName(this.getAttribute('diverging')) },
      values: 'never',
      maxCell: 40,
      minRowHeight: 0,
      maxRowHeight: 14,
      rowAxis: 'position',
      colAxis: 'dimension',
    });
    this._canvas.setAttribute(
      'aria-label',
      `Heatmap of the sinusoidal positional encoding with base ${base}: ${L} positions by ${D} dimensions, values from −1 to 1. ` +
        'Arrow keys move between cells; Enter toggles the column’s curve.',
    );
    const series = this.dims.map((d) => ({
      label: `dim ${d} (${d % 2 ? 'cos' : 'sin'}, λ ≈ ${wavelength(d, D, base)})`,
      values: Array.from({ length: L }, (_, p) => data[p * D + d]),
    }));
    this._curvesOpts = { width: Math.min(W, 900), height: 210, series, xLabel: 'position', yRange: [-1, 1] };
    drawLines(this._curves, { host: this, ...this._curvesOpts });
    this._curves.setAttribute(
      'aria-label',
      `Line chart of dimensions ${this.dims.join(', ') || 'none'} over positions 0 to ${L - 1}.`,
    );
  }

  #hover(cell) {
    if (!cell) {
      this.showTooltip(0, 0, null);
      return;
    }
    const d = cell.col,
      i = Math.floor(d / 2);
    const fn = d % 2 ? 'cos' : 'sin';
    const text = `position ${cell.row}, dimension ${d}: ${fn}(${cell.row} / ${this.base}^(${2 * i}/${this.dModel})) = ${exactNumber(cell.value)}`;
    this._readout.textContent = text;
    const p = this._view.cellCenter(cell.row, cell.col);
    this.showTooltip(p.x, p.y, [`pos ${cell.row} · dim ${d} (${fn})`, exactNumber(cell.value)]);
    this.emit('cell-hover', { ...cell, position: cell.row, dim: d });
  }

  #click(cell) {
    const dims = this.dims;
    this.dims = dims.includes(cell.col) ? dims.filter((x) => x !== cell.col) : [...dims, cell.col].slice(-8);
    this.emit('cell-click', { ...cell, position: cell.row, dim: cell.col });
  }

  getCSV() {
    const s = this._shown;
    if (!s) return '';
    return matrixToCSV({ data: s.data, rows: s.length, cols: s.dModel, corner: 'position \\ dim' });
  }

  getJSON() {
    const s = this._shown;
    if (!s) return jsonText(null);
    return jsonText(
      withState(this, {
        kind: 'sinusoidal-positional-encoding',
        base: s.base,
        length: s.length,
        dModel: s.dModel,
        data: toNested(s.data, s.length, s.dModel),
      }),
    );
  }

  /**
   * The heatmap and the curves as an SVG document (vector cells, one path per colour level; the
   * state in <metadata>). Options: width (CSS px, default the widget's), fontSize (px, default 12).
   */
  toSVG(options = {}) {
    const sh = this._shown;
    if (!sh || !this._view.opts) throw new Error('toSVG: nothing is drawn yet (wait for the ready event)');
    const W = Math.max(160, Number(options.width) || this.contentWidth);
    const fontSize = Math.max(6, Math.min(48, Number(options.fontSize) || 12));
    const theme = themeOf(this);
    const fig = svgFigure(theme, fontSize / 12);
    const p = heatmapPanel(fig, this._view, { x: 0, y: 0, width: W });
    const c = linesPanel(
      fig,
      { ...this._curvesOpts, width: Math.min(W, 900) },
      { x: 0, y: p.h + PART_GAP, colors: SERIES_COLORS },
    );
    const state = jsonSafe({
      widget: 'positional-encoding-heatmap',
      length: sh.length,
      dModel: sh.dModel,
      base: sh.base,
      dims: sh.dims,
      domain: this._view.opts.domain,
      options: { width: W, fontSize },
      theme: theme.dark ? 'dark' : 'light',
      panels: [{ rows: sh.length, cols: sh.dModel, cells: p.cells }],
      widgetState: this.state,
    });
    return svgDocument(fig, {
      width: Math.max(p.w, c.w),
      height: p.h + PART_GAP + c.h,
      state,
      title: `Sinusoidal positional encoding, base ${sh.base}: ${sh.length} positions by ${sh.dModel} dimensions`,
    });
  }

  pngCanvas() {
    const h0 = parseFloat(this._canvas.style.height) || 0;
    return composeCanvases(
      [
        { canvas: this._canvas, x: 0, y: 0 },
        { canvas: this._curves, x: 0, y: h0 + PART_GAP },
      ],
      themeOf(this).bgSolid,
    );
  }
}

/** The wavelength of dimension d, rounded for a label. */
function wavelength(d, D, base) {
  const lambda = 2 * Math.PI * Math.pow(base, (2 * Math.floor(d / 2)) / D);
  return lambda < 100 ? lambda.toFixed(1) : Math.round(lambda).toLocaleString('en');
}
