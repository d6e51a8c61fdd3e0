// The display list (display-list.js) of an x–y chart (xy-chart.js's drawXY): axes, grid, ticks,
// labels, title, the vertical marker, the series (lines and/or point markers, clipped to the plot)
// and the legend — the one description its canvas (xy-chart.js) and SVG panel (svg-xy.js) paint.
import { formatNumber } from './draw-util.js';

/** A mapping value → pixel along one axis (log axes take the base-`log` logarithm first). */
export function scaleOf(axis, p0, p1) {
  const f = axis.log ? (v) => Math.log(v) / Math.log(axis.log) : (v) => v;
  const a = f(axis.min),
    b = f(axis.max);
  return (v) => p0 + ((f(v) - a) / (b - a)) * (p1 - p0);
}

/** Tick values: the axis's own list, else powers of the log base, else ~5 round numbers. */
export function ticksOf(axis) {
  if (axis.ticks) return axis.ticks;
  if (axis.log) {
    const out = [];
    for (let e = Math.ceil(Math.log(axis.min) / Math.log(axis.log) - 1e-9); ; e++) {
      const v = axis.log ** e;
      if (v > axis.max * (1 + 1e-9)) break;
      out.push(v);
    }
    return out;
  }
  const span = axis.max - axis.min;
  const raw = span / 5,
    mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => span / s <= 6) || raw;
  const out = [];
  for (let v = Math.ceil(axis.min / step) * step; v <= axis.max + step * 1e-9; v += step)
    out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

export const tickText = (axis, v) =>
  axis.format ? axis.format(v) : Number.isInteger(v) ? String(v) : formatNumber(v, v < 1 ? 2 : 1);

/** Where each labelled series goes in the legend: rows that wrap at the chart's width. */
function legendLayout(ctx, o, theme, s) {
  ctx.font = `${12 * s}px ${theme.font}`;
  const items = [];
  let x = 48,
    row = 0;
  o.series.forEach((q, k) => {
    if (!q.label) return;
    const w = ctx.measureText(q.label).width + 21;
    if (x > 48 && x + w > o.width - 8) {
      x = 48;
      row++;
    }
    items.push({ k, x, y: (o.title ? 24 : 8) + 8 + row * 18 });
    x += w + 17;
  });
  return { items, height: items.length ? (row + 1) * 18 + 4 : 0 };
}

/**
 * The layout of an x–y chart (options as drawXY) at font scale s: the plot box in px of the chart
 * ({ left, right, top, bottom, width, height }), its value → pixel mappings X and Y, and the legend's
 * rows. ctx measures the legend's labels.
 */
export function xyLayout(ctx, o, theme, s = 1) {
  const width = o.width,
    height = o.height || 240;
  const legend = legendLayout(ctx, o, theme, s);
  const top = (o.title ? 24 : 8) + legend.height,
    bottom = o.x.label ? 40 : 26;
  const g = { left: 48, right: width - 14, top, bottom: height - bottom, width, height, legend };
  g.X = scaleOf(o.x, g.left, g.right);
  g.Y = scaleOf(o.y, g.bottom, g.top);
  return g;
}

/**
 * The items of an x–y chart laid out as g (xyLayout), its top left at (ox, oy) of the figure;
 * series without a colour take colors[k].
 */
export function xyList(theme, o, g, { s = 1, ox = 0, oy = 0, colors }) {
  const items = [];
  axes(items, theme, o, g, { s, ox, oy });
  if (o.marker && Number.isFinite(o.marker.x)) marker(items, theme, o, g, { s, ox, oy });
  series(items, o, g, { ox, oy, colors });
  for (const { k, x, y } of g.legend.items) {
    const q = o.series[k];
    const color = q.color || colors[k % colors.length];
    const dash = q.dashed ? [4, 3] : null;
    items.push(
      { kind: 'rules', segs: [[ox + x, oy + y, 'h', 16]], stroke: color, width: 2.2, dash },
      {
        kind: 'text',
        x: ox + x + 21,
        y: oy + y,
        text: q.label,
        size: 12 * s,
        baseline: 'middle',
        fill: theme.fg,
      },
    );
  }
  return items;
}

// Grid (each line stroked on its own on the canvas), tick values, axis labels and the title.
function axes(items, theme, o, g, { s, ox, oy }) {
  const segs = [];
  const grid = theme.dark ? 'rgba(255,255,255,0.13)' : 'rgba(0,0,0,0.11)';
  const tick = { kind: 'text', size: 10.5 * s, fill: theme.muted, mono: true };
  items.push({ kind: 'rules', segs, stroke: grid, strokeEach: true });
  for (const v of ticksOf(o.y)) {
    const y = Math.round(g.Y(v)) + 0.5;
    segs.push([ox + g.left, oy + y, 'H', ox + g.right]);
    const at = { x: ox + g.left - 6, y: oy + y, anchor: 'end', baseline: 'middle' };
    items.push({ ...tick, ...at, text: tickText(o.y, v) });
  }
  for (const v of ticksOf(o.x)) {
    const x = Math.round(g.X(v)) + 0.5;
    segs.push([ox + x, oy + g.top, 'V', oy + g.bottom]);
    const at = { x: ox + x, y: oy + g.bottom + 5, anchor: 'middle', baseline: 'top' };
    items.push({ ...tick, ...at, text: tickText(o.x, v) });
  }
  const label = { kind: 'text', size: 12 * s, anchor: 'middle', fill: theme.fg };
  if (o.x.label) {
    const at = { x: ox + (g.left + g.right) / 2, y: oy + g.height - 17, baseline: 'top' };
    items.push({ ...label, ...at, text: o.x.label });
  }
  if (o.y.label) {
    const at = { x: ox + 12, y: oy + (g.top + g.bottom) / 2, baseline: 'middle', rotate: -90 };
    items.push({ ...label, ...at, text: o.y.label });
  }
  if (o.title) {
    const at = { x: ox + 6, y: oy + 5, baseline: 'top', weight: 600 };
    items.push({ kind: 'text', ...at, text: o.title, size: 12.5 * s, fill: theme.fg });
  }
}

// The dashed vertical marker and its label (flipped to the left near the right edge).
function marker(items, theme, o, g, { s, ox, oy }) {
  const x = Math.round(g.X(o.marker.x)) + 0.5;
  const segs = [[ox + x, oy + g.top, 'V', oy + g.bottom]];
  items.push({ kind: 'rules', segs, stroke: theme.accent, width: 1.5, dash: [4, 3] });
  if (o.marker.label) {
    const flip = x > g.width - 90;
    const at = {
      x: ox + x + (flip ? -4 : 4),
      y: oy + g.top + 2,
      anchor: flip ? 'end' : 'start',
      baseline: 'top',
    };
    items.push({ kind: 'text', ...at, text: o.marker.label, size: 11 * s, fill: theme.accent });
  }
}

// Each series as a line and/or markers, clipped to the plot (the SVG drops the points outside it).
function series(items, o, g, { ox, oy, colors }) {
  const clip = {
    x: ox + g.left - 5,
    y: oy + g.top - 5,
    w: g.right - g.left + 10,
    h: g.bottom - g.top + 10,
    x1: ox + g.right + 5,
    y1: oy + g.bottom + 5,
  };
  o.series.forEach((q, k) => {
    const color = q.color || colors[k % colors.length];
    const points = [];
    for (const [x, y] of q.points)
      if (Number.isFinite(x) && Number.isFinite(y)) points.push(ox + g.X(x), oy + g.Y(y));
    if (q.line !== false && points.length > 2) {
      const dash = q.dashed ? [5, 4] : null;
      items.push({
        kind: 'polyline',
        points,
        stroke: color,
        width: q.width || 2,
        svgJoin: 'round',
        dash,
        clip,
      });
    }
    if (q.markers) items.push({ kind: 'dots', points, r: 3.6, fill: color, clip });
  });
}
