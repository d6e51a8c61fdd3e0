// <patching-view>'s picture, a PatchingFigure: the result grid (HeatmapView: layer × head, or layer ×
// position of the residual stream or the MLP outputs), with attribution patching beside exact
// patching their second grid, the scatter of the two and the correlation printed; the readout that
// hover, focus and a selection write, and the events a selection emits.
import { h } from '../base-element.js';
import { formatNumber } from '../figures/draw-util.js';
import { HeatmapView } from '../figures/heatmap-view.js';
import { agreementText, drawScatter } from './patching-compare.js';

const COL_AXIS = { head: 'head', residual: 'position', mlp: 'position' };
const TITLES = {
  head: 'Share restored',
  residual: 'Share restored (layer × position)',
  mlp: 'Share restored (MLP output: layer × position)',
};

/** The largest |value| of the finite entries of `data` (at least 1): the colour scale's half-range. */
function extent(data) {
  let m = 1;
  for (const v of data) if (Number.isFinite(v)) m = Math.max(m, Math.abs(v));
  return m;
}

/** Row labels (layers) and column labels (heads, or the positions' tokens: clean/corrupted where they differ) of the grid s. */
function gridLabels(nameOf, s) {
  const rowLabels = Array.from({ length: s.L }, (_, l) => `L${l}`);
  const colLabels =
    s.component === 'head'
      ? Array.from({ length: s.cols }, (_, hd) => `H${hd}`)
      : s.clean.map((id, t) =>
          id === s.corrupted[t] ? nameOf(id) : `${nameOf(id)}/${nameOf(s.corrupted[t])}`,
        );
  return { rowLabels, colLabels };
}

/**
 * Draws one grid of shown `s` (`data`: its exact or attribution values, ±m the colour scale's ends)
 * in `view`, titled `title`, at most `width` px wide; nameOf(id) names a token.
 */
function drawGrid(view, s, data, { title, m, width, nameOf }) {
  const { rowLabels, colLabels } = gridLabels(nameOf, s);
  const head = s.component === 'head';
  view.canvas.hidden = false;
  view.width = Math.min(width, head ? Math.max(280, 80 + s.cols * 56) : 900);
  view.set({
    data,
    rows: s.L,
    cols: s.cols,
    rowLabels,
    colLabels,
    rowAxis: 'layer',
    colAxis: COL_AXIS[s.component],
    domain: { lo: -m, hi: m, map: 'diverging' },
    values: 'auto',
    decimals: 2,
    maxCell: head ? 56 : 40,
    minRowHeight: 18,
    title,
  });
}

/** The grid's accessible name: its size, and what a value and Enter mean. */
function gridLabel(s, estimate) {
  const head = s.component === 'head';
  const what = estimate ? 'Attribution patching estimate' : 'Patching result';
  const unit = head ? 'heads' : s.component === 'mlp' ? 'MLP outputs by position' : 'positions';
  return (
    `${what}: ${s.L} layers × ${s.cols} ${unit}; 1 means the patched activation restores the clean run's logit difference. ` +
    `${head ? 'Enter selects a head.' : ''}`
  );
}

/** The cell's name, and both values where both runs are shown. */
function describeCell(s, cell) {
  const what =
    s.component === 'head'
      ? `layer ${cell.row}, head ${cell.col}`
      : `layer ${cell.row}, ${s.component === 'mlp' ? 'MLP at ' : ''}position ${cell.col}`;
  const i = cell.row * s.cols + cell.col;
  const both = s.exact && s.attribution;
  const value = both
    ? `restores ${formatNumber(s.exact[i], 4)} (attribution estimate ${formatNumber(s.attribution[i], 4)})`
    : `restores ${formatNumber(cell.value, 4)}`;
  return { what, value };
}

/**
 * The picture of a <patching-view> (`host`: its width, token names, tooltip, events and the
 * <attention-steps> a head opens in): draw(s) shows a run's result; hover and a click (or Enter) on
 * a cell write the readout, and a selection emits head-select or cell-select.
 */
export class PatchingFigure {
  #host;
  #grid; // the first grid (exact, else attribution)
  #attributionGrid; // attribution beside exact
  #scatter = h('canvas', { role: 'img', hidden: true });
  #scatterOptions = null; // drawXY's options of the scatter drawn
  #agreement = h('p', { class: 'agreement', hidden: true, 'aria-live': 'polite' });
  #readout = h('div', {
    class: 'readout',
    'aria-live': 'polite',
    text: 'Press Run: each head of the corrupted run is replaced, one at a time, by its clean value.',
  });
  #shown = null; // the run drawn

  constructor(host) {
    this.#host = host;
    this.#grid = this.#gridView();
    this.#attributionGrid = this.#gridView();
  }

  /** A grid canvas and its HeatmapView, hidden until drawn. */
  #gridView() {
    const canvas = h('canvas');
    const view = new HeatmapView(canvas, {
      host: this.#host,
      onHover: (c) => this.#hover(view, c),
      onClick: (c) => this.#select(c),
    });
    canvas.hidden = true;
    return view;
  }

  /** The parts to lay out, in order: the two grids, the scatter, the agreement line and the readout. */
  parts() {
    return [
      this.#grid.canvas,
      this.#attributionGrid.canvas,
      // The scatter's wrapper clips the table of its points that drawXY adds for screen readers.
      h('div', { class: 'scatter' }, this.#scatter),
      this.#agreement,
      this.#readout,
    ];
  }

  /** The first grid's HeatmapView (exact, else attribution): what the exports read. */
  get grid() {
    return this.#grid;
  }
  /** The attribution grid's HeatmapView (drawn beside exact). */
  get attributionGrid() {
    return this.#attributionGrid;
  }
  /** The scatter: its canvas and the drawXY options it was drawn with (null before). */
  get scatter() {
    return { canvas: this.#scatter, options: this.#scatterOptions };
  }

  /** Draws shown `s`: the grid (exact, else attribution), the attribution grid and the scatter beside exact. */
  draw(s) {
    const host = this.#host;
    this.#shown = s;
    const both = Boolean(s.exact && s.attribution);
    const o = {
      m: extent(both ? [...s.exact, ...s.attribution] : s.result),
      nameOf: (i) => host.tokenName(i),
    };
    const onlyAttribution = !s.exact;
    const title = `${TITLES[s.component]}${onlyAttribution ? ' (attribution patching)' : ''}`;
    drawGrid(this.#grid, s, s.result, { ...o, title, width: host.contentWidth });
    this.#grid.canvas.setAttribute('aria-label', gridLabel(s, onlyAttribution));
    this.#attributionGrid.canvas.hidden = !both;
    this.#scatter.hidden = !both;
    this.#agreement.hidden = !both;
    if (both) {
      drawGrid(this.#attributionGrid, s, s.attribution, {
        ...o,
        title: `${TITLES[s.component]} (attribution patching)`,
        width: host.contentWidth,
      });
      this.#attributionGrid.canvas.setAttribute('aria-label', gridLabel(s, true));
      this.#scatterOptions = drawScatter(host, this.#scatter, s);
      this.#agreement.textContent = agreementText(s.correlation, s.result.length);
    }
    this.#readout.textContent = `Clean run: ${formatNumber(s.cleanDiff, 3)}; corrupted run: ${formatNumber(s.corruptedDiff, 3)}. Hover or focus a cell for its share.`;
  }

  /** Hover or keyboard focus on a cell of `view` (null: left the grid): the readout and the tooltip. */
  #hover(view, cell) {
    if (!cell) {
      this.#host.showTooltip(0, 0, null);
      return;
    }
    const { what, value } = describeCell(this.#shown, cell);
    this.#readout.textContent = `${what}: ${value} of the difference`;
    const p = view.cellCenter(cell.row, cell.col);
    this.#host.showTooltip(p.x, p.y, [what, value]);
  }

  /** A click (or Enter) on a cell: a head opens step by step and emits head-select; else cell-select. */
  #select(cell) {
    const host = this.#host,
      s = this.#shown;
    const { what, value } = describeCell(s, cell);
    if (s.component === 'head') {
      const opened = host.openInSteps(cell.row, cell.col, s.clean);
      this.#readout.textContent = `Selected ${what} (${value})${opened ? ': opened step by step on the clean input.' : '.'}`;
      host.emit('head-select', { layer: cell.row, head: cell.col, value: cell.value });
    } else {
      this.#readout.textContent = `Selected ${what} (${value}).`;
      host.emit('cell-select', { layer: cell.row, position: cell.col, value: cell.value });
    }
  }
}
