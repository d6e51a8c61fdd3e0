// What the widgets share to be read without sight: visually hidden (but focusable and announced)
// elements, values in words, the one live row of a heatmap's grid, and data tables behind charts.
// Text goes in with textContent only.
import { formatNumber } from './draw-util.js';

/** Hides `el` from sight, not from assistive technology or the keyboard (CSSOM: no style attribute). */
export function visuallyHidden(el) {
  Object.assign(el.style, {
    position: 'absolute',
    width: '1px',
    height: '1px',
    overflow: 'hidden',
    clipPath: 'inset(50%)',
    whiteSpace: 'nowrap',
    margin: '0',
    padding: '0',
    border: '0',
  });
  return el;
}

/** A value in words: a number to 4 decimals, or "masked (−∞)". */
export function valueWords(v) {
  if (v === -Infinity) return 'masked (−∞)';
  return Number.isFinite(v) ? formatNumber(v, 4) : String(v);
}

/** A role="row" holding one focusable role="gridcell" (roving tabindex) named `text`. */
export function gridRow(row, col, text) {
  const rowEl = document.createElement('div');
  rowEl.setAttribute('role', 'row');
  rowEl.setAttribute('aria-rowindex', String(row + 1));
  const cellEl = document.createElement('div');
  cellEl.setAttribute('role', 'gridcell');
  cellEl.setAttribute('aria-colindex', String(col + 1));
  cellEl.tabIndex = 0;
  cellEl.textContent = text;
  rowEl.append(cellEl);
  return rowEl;
}

/**
 * Keeps a visually hidden data table right after `canvas` (created on first use): the chart's values
 * for screen readers, after the canvas's own summary (its role="img" label). `columns`: header
 * texts; `rows`: arrays of cells (numbers are written to 4 decimals). The caption names the chart.
 */
export function chartTable(canvas, caption, columns, rows) {
  let table = canvas.nextElementSibling;
  if (!table || !table.matches('table[data-aw-chart-table]')) {
    table = visuallyHidden(document.createElement('table'));
    table.dataset.awChartTable = '';
    canvas.after(table);
  }
  const cellText = (v) => (typeof v === 'number' ? valueWords(v) : String(v));
  const tr = (cells, tag) => {
    const row = document.createElement('tr');
    for (const c of cells) {
      const cell = document.createElement(tag);
      if (tag === 'th') cell.scope = 'col';
      cell.textContent = cellText(c);
      row.append(cell);
    }
    return row;
  };
  const cap = document.createElement('caption');
  cap.textContent = caption;
  const head = document.createElement('thead');
  head.append(tr(columns, 'th'));
  const body = document.createElement('tbody');
  body.append(...rows.map((r) => tr(r, 'td')));
  table.replaceChildren(cap, head, body);
  return table;
}

/** Whether a box scrolls along an axis its CSS lets it scroll (content wider or taller than the box). */
function scrolls(box) {
  const style = getComputedStyle(box);
  const can = (overflow) => overflow === 'auto' || overflow === 'scroll';
  return (
    (can(style.overflowX) && box.scrollWidth > box.clientWidth + 1) ||
    (can(style.overflowY) && box.scrollHeight > box.clientHeight + 1)
  );
}

/**
 * Keeps a box that scrolls a tab stop (so keys can scroll it; axe's scrollable-region-focusable) and
 * one that does not scroll out of the tab order. Whether it scrolls changes after the first layout —
 * the screen turns, new content arrives, math fonts finish loading on a slow machine and widen a
 * formula — so it is re-checked whenever the box or a child resizes, its children change, or fonts
 * finish loading. Returns the check, for callers that change the content and want it now.
 */
export function keepScrollFocusable(box) {
  const mark = () => {
    if (scrolls(box)) box.tabIndex = 0;
    else box.removeAttribute('tabindex');
  };
  let pending = 0;
  const recheck = () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(mark);
  };
  const sizes = new ResizeObserver(recheck);
  const watch = () => {
    sizes.observe(box);
    for (const child of box.children) sizes.observe(child);
  };
  new MutationObserver(() => {
    watch();
    recheck();
  }).observe(box, { childList: true });
  document.fonts?.addEventListener('loadingdone', recheck);
  watch();
  mark();
  return mark;
}
