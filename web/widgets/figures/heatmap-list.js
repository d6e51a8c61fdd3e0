// The display list (display-list.js) of a HeatmapView's picture: cells, hatching on masked cells,
// cell borders, numbers, title, row and column labels, the Σ column, the selected row and the
// legend — the one description both its canvas (heatmap-view.js) and its SVG panel
// (svg-heatmap.js) paint. Transient marks (hover, keyboard focus) stay with the view.
import { inkOn } from './colormap.js';
import { fitText, formatNumber } from './draw-util.js';
import { cellsItem, legendList } from './display-list.js';
import {
  PAD,
  colLabelEvery,
  hasBorders,
  hatchesMasked,
  legendBox,
  rowLabelEvery,
  showsSums,
  showsValues,
  valueSize,
} from './heatmap-geometry.js';

/**
 * The items of the view's options `o` laid out as `g` (heatmapLayout at font scale s), the
 * picture's top-left corner at (ox, oy) of the figure. ctx measures the labels to cut them to fit.
 * @returns {{ items: object[], masked: number[] }}  masked: flat indices of the −∞ cells
 */
export function heatmapList(ctx, theme, o, g, { s = 1, ox = 0, oy = 0, legend = o.legend } = {}) {
  // What every part below draws with: the options, layout, theme, scale and the panel's origin.
  const P = { ctx, theme, o, g, s, X: (px) => ox + px, Y: (py) => oy + py, items: [] };
  const { item, masked } = cellsItem(o.data, o.rows, o.cols, o.domain, {
    x: P.X(g.x0),
    y: P.Y(g.y0),
    cw: g.cw,
    ch: g.ch,
    maskedRgb: theme.maskedRgb,
  });
  P.items.push(item);
  const values = showsValues(o, g);
  // Hatching on masked (−∞) cells, so masking does not rely on colour alone (where no "−∞" is
  // written in the cell already); borders and numbers when cells are big enough to read them.
  if (hatchesMasked(g, masked.length, values)) hatch(P, masked);
  if (hasBorders(g)) borders(P);
  if (values) cellValues(P);
  labels(P);
  if (o.rowSums) sums(P);
  for (const row of new Set([o.selectedRow, ...(o.selectedRows ?? [])])) {
    if (!(Number.isInteger(row) && row >= 0 && row < o.rows)) continue;
    P.items.push({
      kind: 'rect',
      x: P.X(g.x0 + 1),
      y: P.Y(g.y0 + row * g.ch + 1),
      w: o.cols * g.cw - 2,
      h: g.ch - 2,
      stroke: theme.accent,
      width: 2,
    });
  }
  if (legend) {
    const { x, y, w } = legendBox(o, g);
    const box = { x: P.X(x), y: P.Y(y), w, domain: o.domain, masked: masked.length > 0 };
    P.items.push(...legendList(box, theme, s));
    if (o.domain.caption) legendCaption(P, x, y);
  }
  return { items: P.items, masked };
}

/**
 * The domain's caption (what the colours mean, e.g. signed weights) under the colour bar: wrapped at
 * spaces into at most two lines of the picture's width, the second cut to fit.
 */
function legendCaption({ ctx, o, g, theme, s, X, Y, items }, x, y) {
  ctx.font = `${11 * s}px ${theme.font}`;
  const width = g.w - x - PAD;
  const lines = [''];
  for (const word of o.domain.caption.split(' ')) {
    const line = lines.at(-1) ? `${lines.at(-1)} ${word}` : word;
    if (lines.length < 2 && lines.at(-1) && ctx.measureText(line).width > width) lines.push(word);
    else lines[lines.length - 1] = line;
  }
  lines.forEach((line, k) =>
    items.push({
      kind: 'text',
      x: X(x),
      y: Y(y + (27 + 14 * k) * s),
      text: fitText(ctx, line, width),
      size: 11 * s,
      baseline: 'top',
      fill: theme.muted,
    }),
  );
}

/** A diagonal stroke over each masked cell (flat indices `masked`). */
function hatch({ o, g, theme, X, Y, items }, masked) {
  const segs = [];
  for (const i of masked) {
    const x = X(g.x0 + (i % o.cols) * g.cw),
      y = Y(g.y0 + Math.floor(i / o.cols) * g.ch);
    segs.push(x + 1, y + g.ch - 1, x + g.cw - 1, y + 1);
  }
  items.push({ kind: 'lines', segs, stroke: theme.hatch });
}

/** Lines between rows and between columns, in the background colour. */
function borders({ o, g, theme, X, Y, items }) {
  const segs = [];
  for (let c = 1; c < o.cols; c++) segs.push([X(g.x0 + c * g.cw), Y(g.y0), 'v', o.rows * g.ch]);
  for (let r = 1; r < o.rows; r++) segs.push([X(g.x0), Y(g.y0 + r * g.ch), 'h', o.cols * g.cw]);
  items.push({ kind: 'rules', segs, stroke: theme.bgSolid, width: 1 });
}

/** Each cell's rounded number, in the ink that reads on its colour. */
function cellValues({ o, g, theme, s, X, Y, items }) {
  const { lo, hi, map } = o.domain;
  const size = valueSize(g) * s;
  for (let r = 0; r < o.rows; r++)
    for (let c = 0; c < o.cols; c++) {
      const v = o.data[r * o.cols + c];
      items.push({
        kind: 'text',
        x: X(g.x0 + (c + 0.5) * g.cw),
        y: Y(g.y0 + (r + 0.5) * g.ch),
        text: formatNumber(v, o.decimals),
        size,
        anchor: 'middle',
        baseline: 'middle',
        fill: Number.isFinite(v) ? inkOn(map, v, lo, hi) : theme.fg,
        mono: true,
        maxWidth: g.cw - 2,
      });
    }
}

/** The title and the row labels (the selected row's in the accent), cut to fit. */
function labels(P) {
  const { ctx, o, g, theme, s, X, Y, items } = P;
  const font = `${12 * s}px ${theme.font}`;
  if (o.title) {
    ctx.font = `600 ${font}`;
    const text = fitText(ctx, o.title, g.w - 2 * PAD);
    const size = 12 * s;
    items.push({
      kind: 'text',
      x: X(PAD),
      y: Y(PAD),
      text,
      size,
      baseline: 'top',
      fill: theme.fg,
      weight: 600,
    });
  }
  ctx.font = font;
  if (o.rowLabels) {
    const every = rowLabelEvery(g, s);
    for (let r = 0; r < o.rows; r += every) {
      items.push({
        kind: 'text',
        x: X(g.x0 - 6),
        y: Y(g.y0 + (r + 0.5) * g.ch),
        text: fitText(ctx, o.rowLabels[r], g.rowW - 10),
        size: 12 * s,
        anchor: 'end',
        baseline: 'middle',
        fill: o.selectedRow === r || o.selectedRows?.includes(r) ? theme.accent : theme.fg,
      });
    }
  }
  if (o.colLabels) colLabels(P);
}

/** The column labels, thinned to fit: level above the cells, or at 45° where they are too wide. */
function colLabels({ ctx, o, g, theme, s, X, Y, items }) {
  const every = colLabelEvery(ctx, o, g, s);
  for (let c = 0; c < o.cols; c += every) {
    const x = X(g.x0 + (c + 0.5) * g.cw);
    const label = { kind: 'text', x, size: 12 * s, fill: theme.fg };
    if (g.angled) {
      const text = fitText(ctx, o.colLabels[c], 90 * s);
      items.push({ ...label, y: Y(g.y0 - 5), text, anchor: 'start', baseline: 'middle', rotate: -45 });
    } else {
      const text = fitText(ctx, o.colLabels[c], g.cw * every - 2);
      items.push({ ...label, y: Y(g.y0 - 4), text, anchor: 'middle', baseline: 'bottom' });
    }
  }
}

/** The Σ column: its heading, and each row's sum where rows are tall enough. */
function sums({ o, g, theme, s, X, Y, items }) {
  const x = X(g.x0 + o.cols * g.cw + 8);
  const text = (y, str, fill) => ({ kind: 'text', x, y, text: str, size: 11 * s, baseline: 'middle', fill });
  items.push({ ...text(Y(g.y0 - 4), 'Σ row', theme.muted), baseline: 'bottom', mono: true });
  if (!showsSums(g)) return;
  for (let r = 0; r < o.rows; r++) {
    let sum = 0;
    for (let c = 0; c < o.cols; c++) {
      const v = o.data[r * o.cols + c];
      if (Number.isFinite(v)) sum += v;
    }
    items.push({ ...text(Y(g.y0 + (r + 0.5) * g.ch), sum.toFixed(3), theme.fg), mono: true });
  }
}
