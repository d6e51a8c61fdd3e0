// <patching-view>'s picture: the result grid (HeatmapView: layer × head, or layer × position of the
// residual stream or the MLP outputs), with attribution patching beside exact patching their second
// grid, the scatter of the two and the correlation printed; the readout that hover, focus and a
// selection write, and the events a selection emits.
import { formatNumber } from './draw-util.js';
import { gridLabels } from './patching-plan.js';
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

/** Draws one grid of shown `s` (`data`: its exact or attribution values) in `view`, titled `title`. */
function drawGrid(el, view, s, data, title, m) {
  const { rowLabels, colLabels } = gridLabels(el, s);
  const head = s.component === 'head';
  view.canvas.hidden = false;
  view.width = Math.min(el.contentWidth, head ? Math.max(280, 80 + s.cols * 56) : 900);
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

/** Draws shown `s`: the grid (exact, else attribution), the attribution grid and the scatter beside exact. */
export function drawPatching(el) {
  const s = el._shown;
  const both = Boolean(s.exact && s.attribution);
  const m = extent(both ? [...s.exact, ...s.attribution] : s.result);
  const onlyAttribution = !s.exact;
  const title = `${TITLES[s.component]}${onlyAttribution ? ' (attribution patching)' : ''}`;
  drawGrid(el, el._view, s, s.result, title, m);
  el._canvas.setAttribute('aria-label', gridLabel(s, onlyAttribution));
  el._attrCanvas.hidden = !both;
  el._scatter.hidden = !both;
  el._agreement.hidden = !both;
  if (both) {
    drawGrid(el, el._attrView, s, s.attribution, `${TITLES[s.component]} (attribution patching)`, m);
    el._attrCanvas.setAttribute('aria-label', gridLabel(s, true));
    drawScatter(el, el._scatter, s);
    el._agreement.textContent = agreementText(s.correlation, s.result.length);
  }
  el._readout.textContent = `Clean run: ${formatNumber(s.cleanDiff, 3)}; corrupted run: ${formatNumber(s.corruptedDiff, 3)}. Hover or focus a cell for its share.`;
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

/** Hover or keyboard focus on a cell of `view` (null: left the grid): the readout and the tooltip. */
export function hoverPatching(el, view, cell) {
  if (!cell) {
    el.showTooltip(0, 0, null);
    return;
  }
  const { what, value } = describeCell(el._shown, cell);
  el._readout.textContent = `${what}: ${value} of the difference`;
  const p = view.cellCenter(cell.row, cell.col);
  el.showTooltip(p.x, p.y, [what, value]);
}

/** A click (or Enter) on a cell: a head opens step by step and emits head-select; else cell-select. */
export function selectPatching(el, cell) {
  const s = el._shown;
  const { what, value } = describeCell(s, cell);
  if (s.component === 'head') {
    const opened = el.openInSteps(cell.row, cell.col, s.clean);
    el._readout.textContent = `Selected ${what} (${value})${opened ? ': opened step by step on the clean input.' : '.'}`;
    el.emit('head-select', { layer: cell.row, head: cell.col, value: cell.value });
  } else {
    el._readout.textContent = `Selected ${what} (${value}).`;
    el.emit('cell-select', { layer: cell.row, position: cell.col, value: cell.value });
  }
}
