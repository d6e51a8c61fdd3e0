// The display list: what a figure draws, computed once, in figure coordinates (CSS px), and painted
// by two backends — paint-canvas.js onto a canvas (the widget on screen, PNG export, print) and
// paint-svg.js into an SVG figure (the vector export) — so a drawing rule is written in one place.
//
// Items (plain objects, `kind` says which):
//   { kind: 'cells', x, y, cw, ch, rows, cols, levels, map, maskedRgb }
//       a matrix of cells from (x, y), each cw × ch; levels[r·cols + c] is the colour-table entry
//       (0–255) of map, or −1 for a masked cell (painted in maskedRgb)
//   { kind: 'lines', segs: [x0, y0, x1, y1, …], stroke, width?, alpha?, bare?, svgCap? }
//   { kind: 'polygon', points: [x0, y0, …], fill, stroke, width }          a closed, filled, outlined shape
//   { kind: 'rules', segs: [[x, y, dir, v], …], stroke, width?, dash?, strokeEach? }
//       axis-aligned strokes from (x, y): dir 'h' / 'v' by a length v, 'H' / 'V' to the coordinate v
//   { kind: 'polyline', points: [x0, y0, x1, y1, …], stroke, width, svgJoin?, dash?, clip? }
//   { kind: 'dots', points: [x0, y0, …], r, fill, clip?, alphas? }        filled circles (alphas:
//       one opacity each; such a group is left out of the SVG when it is empty)
//   { kind: 'circle', cx, cy, r, fill?, stroke?, dash? }                  one circle
//   { kind: 'rect', x, y, w, h, fill?, stroke?, width? }                  a filled or outlined box
//   { kind: 'boxes', boxes: [[x, y, w, h], …], fill }                     filled boxes (bars)
//   { kind: 'ramp', x, y, w, h, map }                                     a colour bar of a map
//   { kind: 'arrow', x0, y0, x1, y1, color, width, dashed?, headBase? }  a shaft and a filled head
//   { kind: 'text', x, y, text, size, anchor, baseline, fill, mono?, weight?, maxWidth?, rotate?, halo? }
//       anchor: 'start' | 'middle' | 'end'; baseline: the canvas's textBaseline; rotate: degrees
//       about (x, y); maxWidth: the canvas squeezes the text to it; halo: an outline (HALO_WIDTH px)
//       in that colour under the text, so it reads over lines
// Colours are CSS colours; sizes are already multiplied by the figure's font scale. A stroke's width
// left out is 1 (and the SVG leaves it to the default); dash: [on, off] px. clip: { x, y, w, h, x1,
// y1 } — the canvas clips to the box, the SVG drops the points outside it (no clip path, no id).
// `bare`, `svgJoin` and `svgCap` only shape the SVG markup (attribute order; round joins and caps,
// where the canvas keeps the ones its context has).
import { formatNumber } from './draw-util.js';

/** The dash of a dashed arrow's shaft: [on, off] px (both backends). */
export const ARROW_DASH = [5, 4];
/** The width of a text's halo, the outline under it (both backends), in px. */
export const HALO_WIDTH = 3;
/** The gap between a figure's stacked parts (a heatmap, the chart under it) in its PNG and SVG, px. */
export const PART_GAP = 12;

/** Which colour-table level value v takes in the domain's lo and k = 255 / (hi − lo) (−1: masked). */
export function levelOf(v, lo, k) {
  if (v >= lo) {
    // the common case (false for NaN and −∞)
    const t = ((v - lo) * k + 0.5) | 0;
    return t > 255 ? 255 : t;
  }
  return v > -Infinity ? 0 : -1;
}

/**
 * A (rows, cols) matrix as a 'cells' item from (x, y): each value's level in the domain (values
 * below lo take the lowest colour; −∞ and NaN are masked). Also returns the flat indices of the
 * masked cells.
 */
export function cellsItem(data, rows, cols, domain, { x, y, cw, ch, maskedRgb }) {
  const { lo, hi, map } = domain;
  const k = hi > lo ? 255 / (hi - lo) : 0;
  const n = rows * cols,
    levels = new Int16Array(n),
    masked = [];
  for (let i = 0; i < n; i++) {
    const lev = levelOf(data[i], lo, k);
    levels[i] = lev;
    if (lev < 0) masked.push(i);
  }
  return { item: { kind: 'cells', x, y, cw, ch, rows, cols, levels, map, maskedRgb }, masked };
}

/**
 * The colour legend of a domain at (x, y), `w` wide: the colour bar, its three values and, if
 * asked, the masked swatch. Sizes of the text follow the font scale s.
 */
export function legendList({ x, y, w, domain, masked = false }, theme, s = 1) {
  const { lo, hi, map } = domain;
  const items = [{ kind: 'ramp', x, y, w, h: 10, map }];
  const decimals = Math.abs(hi - lo) < 0.1 ? 4 : 2;
  const tick = (t, v, anchor) => ({
    kind: 'text',
    x: x + t * w,
    y: y + 13,
    text: formatNumber(v, decimals),
    size: 10 * s,
    anchor,
    baseline: 'top',
    fill: theme.muted,
    mono: true,
  });
  items.push(tick(0, lo, 'start'), tick(0.5, (lo + hi) / 2, 'middle'), tick(1, hi, 'end'));
  if (masked) {
    const mx = x + w + 14;
    items.push(
      { kind: 'rect', x: mx, y, w: 14, h: 10, fill: `rgb(${theme.maskedRgb.slice(0, 3).join(',')})` },
      { kind: 'lines', segs: [mx + 1, y + 9, mx + 13, y + 1], stroke: theme.hatch, bare: true },
      {
        kind: 'text',
        x: mx + 20,
        y: y - 1,
        text: 'masked (−∞)',
        size: 11 * s,
        anchor: 'start',
        baseline: 'top',
        fill: theme.muted,
      },
    );
  }
  return items;
}

/**
 * The one colour legend of a figure of many panels (every panel on one scale), under the panels:
 * at x 8, 4 px below y, as wide as the panels allow (60–220 px). Returns its items (legendList) and
 * the height it takes below y.
 */
export function figureLegend(y, width, domain, theme, s = 1) {
  const box = { x: 8, y: y + 4, w: Math.min(220, Math.max(60, width - 16)), domain };
  return { items: legendList(box, theme, s), h: 4 + 10 + 16 * s + 8 };
}

/**
 * Where an arrow's parts go: its round-capped shaft from (x0, y0) stops at (ex, ey), inside the
 * filled head (tip, and two barbs 0.42 rad either side), of length headBase + 1.5 · width.
 */
export function arrowGeometry({ x0, y0, x1, y1, width, headBase = 7 }) {
  const a = Math.atan2(y1 - y0, x1 - x0),
    head = headBase + width * 1.5;
  const barb = (t) => [x1 - head * Math.cos(a + t), y1 - head * Math.sin(a + t)];
  return {
    ex: x1 - Math.cos(a) * head * 0.6,
    ey: y1 - Math.sin(a) * head * 0.6,
    head: [[x1, y1], barb(-0.42), barb(0.42)],
  };
}
