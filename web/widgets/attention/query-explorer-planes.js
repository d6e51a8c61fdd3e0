// The two planes of <query-explorer>, on its canvases and as SVG: the query and the keys (the key
// plane, where the query is dragged), and the values with the output, their weighted average. Each
// plane is one display list (display-list.js), painted onto the canvas and into the SVG figure,
// made from what the element shows: `sh` = { q, K, V, labels, result: { weights, output } }.
import { SERIES_COLORS } from '../figures/charts.js';
import { formatNumber } from '../figures/draw-util.js';
import { paintFigure } from '../figures/paint-canvas.js';
import { paintSvg } from '../figures/paint-svg.js';

export const RANGE = 3; // sliders and the key plane span −3 … 3

/**
 * The grid (a line per whole number, each stroked on its own on the canvas) and the axes of a
 * square plane over [lo, hi]², `size` wide, its top left at (ox, oy); with its value → px mapping.
 */
export function planeAxes(theme, size, lo, hi, ox = 0, oy = 0) {
  const pad = 14;
  const P = (x, y) => [
    ox + pad + ((x - lo) / (hi - lo)) * (size - 2 * pad),
    oy + size - pad - ((y - lo) / (hi - lo)) * (size - 2 * pad),
  ];
  const grid = [];
  for (let v = Math.ceil(lo); v <= hi; v++) {
    const [xa, ya] = P(v, lo),
      [xb, yb] = P(lo, v);
    grid.push([xa, ya, 'V', oy + pad], [xb, yb, 'H', ox + size - pad]);
  }
  const faint = theme.dark ? 'rgba(255,255,255,0.10)' : 'rgba(0,0,0,0.08)';
  const items = [{ kind: 'rules', segs: grid, stroke: faint, strokeEach: true }];
  if (lo <= 0 && hi >= 0) {
    const [x0, y0] = P(0, 0);
    const segs = [
      [ox + pad, y0, 'H', ox + size - pad],
      [x0, oy + pad, 'V', oy + size - pad],
    ];
    items.push({ kind: 'rules', segs, stroke: theme.dark ? 'rgba(255,255,255,0.35)' : 'rgba(0,0,0,0.35)' });
  }
  return { P, pad, items };
}

/** A bold label centred on [x, y], with a halo of the background so it reads over lines. */
const label = (theme, s, text, [x, y], color) => ({
  kind: 'text',
  x,
  y,
  text,
  size: 12 * s,
  weight: 600,
  anchor: 'middle',
  baseline: 'middle',
  fill: color,
  halo: theme.bgSolid,
});

/** The key plane's items: the keys (arrows as thick as their weights) and the query with its handle. */
export function keyPlaneList(sh, theme, P, s) {
  const items = [];
  const [x0, y0] = P(0, 0);
  const arrow = ([x1, y1], color, width) => ({ kind: 'arrow', x0, y0, x1, y1, color, width, headBase: 6 });
  sh.K.forEach((k, j) => {
    const w = sh.result.weights[j],
      color = SERIES_COLORS[j % SERIES_COLORS.length];
    const len = Math.hypot(k[0], k[1]) || 1;
    const at = P(k[0] + (k[0] / len) * 0.45, k[1] + (k[1] / len) * 0.45);
    items.push(
      arrow(P(k[0], k[1]), color, 1.2 + 5 * w),
      label(theme, s, `${sh.labels[j]} ${formatNumber(w, 2)}`, at, color),
    );
  });
  const [qx, qy] = P(sh.q[0], sh.q[1]);
  items.push(
    arrow([qx, qy], theme.fg, 2.6),
    { kind: 'circle', cx: qx, cy: qy, r: 6, fill: theme.accent },
    label(theme, s, 'q', [qx + 12, qy - 12], theme.fg),
  );
  return items;
}

/** The key plane's whole list, its top left at (ox, oy) of the figure, text at font scale s. */
function keyPlaneAt(sh, theme, size, { ox = 0, oy = 0, s = 1 } = {}) {
  const { P, items } = planeAxes(theme, size, -RANGE, RANGE, ox, oy);
  return [...items, ...keyPlaneList(sh, theme, P, s)];
}

/**
 * The query and the keys (arrows as thick as their weights) on the key plane, which the query is
 * dragged in, painted on `canvas` `size` px square in `theme`, with its aria-label. Returns the
 * plane's geometry { ctx, theme, P, pad, lo, hi } (queryAt maps a pointer through it).
 */
export function drawKeyPlane(canvas, s, theme, size) {
  const ctx = paintFigure(canvas, size, size, theme, (c, th, at) => keyPlaneAt(s, th, size, at));
  const { P, pad } = planeAxes(theme, size, -RANGE, RANGE);
  canvas.setAttribute(
    'aria-label',
    `Plane with the query q = (${s.q.map((x) => formatNumber(x, 2)).join(', ')}) and ${s.K.length} key arrows whose thickness is their weight. ` +
      'Arrow keys move the query by 0.1.',
  );
  return { ctx, theme, P, pad, lo: -RANGE, hi: RANGE };
}

/**
 * The query under a pointer at (clientX, clientY) on the key plane whose geometry is `geo`
 * (drawKeyPlane) and whose box is `rect` (getBoundingClientRect), rounded to multiples of `step`.
 */
export function queryAt(geo, rect, clientX, clientY, step) {
  const size = rect.width;
  const x = geo.lo + ((clientX - rect.left - geo.pad) / (size - 2 * geo.pad)) * (geo.hi - geo.lo);
  const y = geo.lo + ((size - geo.pad - (clientY - rect.top)) / (size - 2 * geo.pad)) * (geo.hi - geo.lo);
  return [Math.round(x / step) * step, Math.round(y / step) * step];
}

/** The value plane's range: the values, the output and 0, with room around them. */
export function valueRange(s) {
  const all = [...s.V.flat(), ...s.result.output, 0];
  const lo = Math.floor(Math.min(...all) - 0.5),
    hi = Math.ceil(Math.max(...all) + 0.5);
  return [Math.min(lo, -0.5), Math.max(hi, lo + 2)];
}

/** The value plane's items: lines from the output to each value, the weights as the dots' areas, the output. */
export function valuePlaneList(sh, theme, P, s) {
  const items = [];
  const [ox, oy] = P(sh.result.output[0], sh.result.output[1]);
  sh.V.forEach((v, j) => {
    const [px, py] = P(v[0], v[1]),
      color = SERIES_COLORS[j % SERIES_COLORS.length],
      w = sh.result.weights[j];
    const line = { kind: 'lines', segs: [ox, oy, px, py], stroke: color, width: 1 + 3 * w };
    items.push(
      { ...line, alpha: 0.35 + 0.65 * w, svgCap: 'round' },
      { kind: 'circle', cx: px, cy: py, r: 3 + 9 * Math.sqrt(w), fill: color },
      label(theme, s, `v(${sh.labels[j]})`, [px, py - 18], color),
    );
  });
  const diamond = [ox, oy - 8, ox + 8, oy, ox, oy + 8, ox - 8, oy];
  items.push(
    { kind: 'polygon', points: diamond, fill: theme.accent, stroke: theme.fg, width: 2 },
    label(theme, s, 'output', [ox, oy + 19], theme.fg),
  );
  return items;
}

/** The value plane's whole list, its top left at (ox, oy) of the figure, text at font scale s. */
function valuePlaneAt(sh, theme, size, { ox = 0, oy = 0, s = 1 } = {}) {
  const { P, items } = planeAxes(theme, size, ...valueRange(sh), ox, oy);
  return [...items, ...valuePlaneList(sh, theme, P, s)];
}

/**
 * The values (dots as large as their weights) and the output, their weighted average, painted on
 * `canvas` `size` px square in `theme`, with its aria-label.
 */
export function drawValuePlane(canvas, s, theme, size) {
  paintFigure(canvas, size, size, theme, (c, th, at) => valuePlaneAt(s, th, size, at));
  canvas.setAttribute(
    'aria-label',
    `Plane with the ${s.V.length} value vectors and the output (${s.result.output.map((x) => formatNumber(x, 2)).join(', ')}), their weighted average.`,
  );
}

/** drawKeyPlane as SVG shapes at (x0, y0) of the figure, in its theme (the same display list). */
export function keyPlaneSVG(sh, fig, x0, y0, size) {
  fig.body.push(paintSvg(fig, keyPlaneAt(sh, fig.theme, size, { ox: x0, oy: y0, s: fig.s })));
  return { w: size, h: size, panel: { kind: 'plane' } };
}

/** drawValuePlane as SVG shapes at (x0, y0) of the figure, in its theme (the same display list). */
export function valuePlaneSVG(sh, fig, x0, y0, size) {
  fig.body.push(paintSvg(fig, valuePlaneAt(sh, fig.theme, size, { ox: x0, oy: y0, s: fig.s })));
  return { w: size, h: size, panel: { kind: 'plane' } };
}
