// The geometry of a HeatmapView's picture, from which its display list (heatmap-list.js) is built
// for its canvas (heatmap-view.js) and its SVG panel (svg-heatmap.js): paddings, gutters, the cell
// sizes from which numbers, hatching and borders are drawn, the thinning of labels and where the
// legend goes.
// Sizes are CSS px at font scale s (1: the 12 px labels of the screen).

/** Padding around the picture. */
export const PAD = 8;
/** Height of the legend (colour bar and its values), times s. */
export const LEGEND_H = 34;
/** Width of the Σ column, times s. */
export const SUM_W = 58;

// Cells at least this wide and tall get their numbers written in them (values: 'auto').
const VALUES_MIN_W = 34;
const VALUES_MIN_H = 16;
// Cells at least this wide get their numbers at 11 px rather than 10 px.
const VALUES_WIDE = 44;
// Masked cells at least this wide are hatched (unless their "−∞" is written in them).
const HATCH_MIN_W = 5;
// Cells at least this wide and tall get borders.
const BORDER_MIN = 8;
// Rows at least this tall get their Σ written.
const SUMS_MIN_H = 10;

/** Whether the cells show their numbers. */
export function showsValues(o, g) {
  return o.values === 'always' || (o.values === 'auto' && g.cw >= VALUES_MIN_W && g.ch >= VALUES_MIN_H);
}

/** Whether masked cells are hatched (there are some, and no "−∞" is written in them). */
export function hatchesMasked(g, maskedCount, showValues) {
  return g.cw >= HATCH_MIN_W && maskedCount > 0 && !showValues;
}

/** Whether cell borders are drawn. */
export function hasBorders(g) {
  return g.cw >= BORDER_MIN && g.ch >= BORDER_MIN;
}

/** The size of the numbers in cells, before the font scale. */
export function valueSize(g) {
  return g.cw >= VALUES_WIDE ? 11 : 10;
}

/** Whether the Σ column has a number per row (its heading is always drawn). */
export function showsSums(g) {
  return g.ch >= SUMS_MIN_H;
}

/** Every how many rows a row label is drawn, so labels do not overlap. */
export function rowLabelEvery(g, s = 1) {
  return Math.max(1, Math.ceil((14 * s) / g.ch));
}

/** Every how many columns a column label is drawn; ctx measures in the labels' font. */
export function colLabelEvery(ctx, o, g, s = 1) {
  const widest = g.angled
    ? 13 * s
    : Math.max(16, ...o.colLabels.slice(0, 600).map((l) => ctx.measureText(l).width + 8));
  return Math.max(1, Math.ceil((g.angled ? 13 * s : Math.min(widest, 80 * s)) / g.cw));
}

/** Where the legend's colour bar goes: { x, y, w }. */
export function legendBox(o, g) {
  const x = PAD + Math.max(0, g.rowW - 4),
    y = g.y0 + o.rows * g.ch + 12;
  return { x, y, w: Math.max(60, Math.min(220, g.w - x - PAD - 12)) };
}

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

/**
 * Gutters and cell sizes of the view's options `o` for a width and a font scale s; measures labels
 * with ctx (its font is left at the labels' font).
 */
export function heatmapLayout(ctx, theme, o, width, s = 1) {
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
  // A legend with a caption (domain.caption, heatmap-list.js) takes up to two more lines of 11 px text.
  const legendH = o.legend ? (LEGEND_H + (o.domain?.caption ? 30 : 0)) * s + 6 : 0;
  const h = y0 + o.rows * ch + legendH + PAD;
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
