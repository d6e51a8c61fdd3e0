// The display lists (display-list.js) of the two small charts of charts.js — bars (one query's
// attention distribution over the keys) and lines (the curves of chosen positional-encoding
// dimensions) — the one description their canvases (charts.js) and SVG panels (svg-charts.js) paint.
import { fitText, formatNumber } from './draw-util.js';

/** The faint grid of the charts. */
const gridColor = (theme) => (theme.dark ? 'rgba(255,255,255,0.14)' : 'rgba(0,0,0,0.12)');

/**
 * The layout of a bar chart for options `o` at font scale s (1: the screen's 12 px labels): margins,
 * bar width, whether labels are drawn and angled, the height and the top of the value axis. ctx
 * measures the labels (its font is left at theirs).
 */
export function barsLayout(ctx, o, theme, s = 1) {
  const n = o.values.length;
  const left = 44,
    right = 10;
  const plotW = Math.max(60, o.width - left - right);
  const bw = plotW / Math.max(1, n);
  const top = (o.title ? 28 : 10) + (bw >= 30 ? 12 : 0); // room for the value labels over full bars
  const labelled = bw >= 11;
  ctx.font = `${12 * s}px ${theme.font}`;
  const longest = labelled ? Math.min(90 * s, Math.max(...o.labels.map((l) => ctx.measureText(l).width))) : 0;
  const angled = labelled && longest + 4 > bw;
  const bottom = labelled ? (angled ? Math.ceil(longest * 0.72) + 16 : 22 * s) : 8;
  const plotH = 130;
  const max = o.maxValue ?? Math.max(1e-9, ...Array.from(o.values, (v) => (Number.isFinite(v) ? v : 0)));
  // minValue (< 0): signed bars, the axis from minValue to max with the zero line inside.
  const min = Math.min(0, o.minValue ?? 0);
  return { n, left, plotW, bw, top, labelled, angled, plotH, height: top + plotH + bottom, max, min };
}

/** A small muted number (axis values, bar values) at font scale s. */
const smallText = (theme, s, x, y, str, anchor, baseline) => ({
  kind: 'text',
  x,
  y,
  text: str,
  size: 10 * s,
  anchor,
  baseline,
  fill: theme.muted,
  mono: true,
});

/**
 * The items of a bar chart (options as drawBars) laid out as L (barsLayout at font scale s), its top
 * left at (ox, oy): grid with values at the axis' ends and middle, the title, one bar per nonzero
 * value (down from the zero line for a negative one, with minValue), numbers over wide bars, labels
 * under the bars. ctx measures the labels.
 */
export function barsList(ctx, theme, o, L, { s = 1, ox = 0, oy = 0 } = {}) {
  const { n, left, plotW, bw, top, plotH, max, min = 0 } = L;
  const items = [];
  const segs = [];
  const value = (i) => (Number.isFinite(o.values[i]) ? o.values[i] : 0);
  const yOf = (v) => oy + top + plotH * (1 - (v - min) / (max - min)); // the axis: min at the bottom
  for (const f of [0, 0.5, 1]) {
    const v = min + (max - min) * f;
    segs.push([ox + left, yOf(v), 'h', plotW]);
    items.push(smallText(theme, s, ox + left - 6, yOf(v), formatNumber(v, 2), 'end', 'middle'));
  }
  if (min < 0) segs.push([ox + left, yOf(0), 'h', plotW]);
  items.unshift({ kind: 'rules', segs, stroke: gridColor(theme) });
  if (o.title) {
    ctx.font = `600 ${12 * s}px ${theme.font}`;
    const text = fitText(ctx, o.title, o.width - 12);
    items.push({
      kind: 'text',
      x: ox + 6,
      y: oy + 6,
      text,
      size: 12 * s,
      baseline: 'top',
      fill: theme.fg,
      weight: 600,
    });
  }
  const boxes = [],
    below = []; // the negative bars, in o.negativeColor where given
  for (let i = 0; i < n; i++) {
    const v = Math.max(min, Math.min(max, value(i)));
    const y0 = yOf(Math.max(v, 0)),
      bh = yOf(Math.min(v, 0)) - y0;
    const bx = ox + left + i * bw + (bw > 4 ? 1 : 0);
    if (bh > 0)
      (v < 0 && o.negativeColor ? below : boxes).push([bx, y0, Math.max(1, bw - (bw > 4 ? 2 : 0)), bh]);
  }
  items.push({ kind: 'boxes', boxes, fill: o.color || theme.accent });
  if (below.length) items.push({ kind: 'boxes', boxes: below, fill: o.negativeColor });
  // The numbers over bars wide enough for them (over the zero line for a negative one).
  if (bw >= 30)
    for (let i = 0; i < n; i++) {
      const x = ox + left + (i + 0.5) * bw,
        y = yOf(Math.max(0, Math.min(max, value(i)))) - 2;
      items.push(smallText(theme, s, x, y, formatNumber(value(i), 2), 'middle', 'bottom'));
    }
  if (L.labelled) barLabels(ctx, theme, o, L, { s, ox, oy, items });
  return items;
}

// The bars' labels under them: thinned to fit, angled where they are wider than a bar.
function barLabels(ctx, theme, o, { n, left, bw, top, plotH, angled }, { s, ox, oy, items }) {
  ctx.font = `${12 * s}px ${theme.font}`;
  const every = Math.max(1, Math.ceil((angled ? 13 : 26) / bw));
  for (let i = 0; i < n; i += every) {
    const label = { kind: 'text', x: ox + left + (i + 0.5) * bw, size: 12 * s, fill: theme.fg };
    if (angled) {
      const text = fitText(ctx, o.labels[i], 90 * s);
      items.push({ ...label, y: oy + top + plotH + 6, text, baseline: 'middle', rotate: 45 });
    } else {
      const text = fitText(ctx, o.labels[i], bw * every - 2);
      items.push({ ...label, y: oy + top + plotH + 5, text, anchor: 'middle', baseline: 'top' });
    }
  }
}

/** The layout of a line chart (options as drawLines): margins, plot size, x count, value range. */
export function linesLayout(o) {
  const height = o.height || 200;
  const left = 40,
    right = 12,
    top = 30,
    bottom = 30;
  const plotW = Math.max(60, o.width - left - right),
    plotH = height - top - bottom;
  const n = Math.max(2, ...o.series.map((q) => q.values.length));
  const [y0, y1] = o.yRange || [-1, 1];
  return { height, left, top, plotW, plotH, n, y0, y1 };
}

/**
 * The items of a line chart (options as drawLines), its top left at (ox, oy): grid and values, x
 * ticks, one polyline per series in `colors`, and a legend along the top (series that fit). ctx
 * measures the legend's labels.
 */
export function linesList(ctx, theme, o, { s = 1, ox = 0, oy = 0, colors }) {
  const { left, top, plotW, plotH, n, y0, y1 } = linesLayout(o);
  const X = (i) => ox + left + (i / (n - 1)) * plotW;
  const Y = (v) => oy + top + (1 - (v - y0) / (y1 - y0)) * plotH;
  const segs = [],
    items = [];
  for (const v of [y0, (y0 + y1) / 2, y1]) {
    segs.push([ox + left, Y(v), 'h', plotW]);
    items.push(smallText(theme, s, ox + left - 6, Y(v), formatNumber(v, 1), 'end', 'middle'));
  }
  items.unshift({ kind: 'rules', segs, stroke: gridColor(theme) });
  const step = Math.max(1, Math.ceil((n - 1) / 8));
  for (let i = 0; i < n; i += step)
    items.push(smallText(theme, s, X(i), oy + top + plotH + 5, String(i), 'middle', 'top'));
  if (o.xLabel)
    items.push(smallText(theme, s, ox + left + plotW, oy + top + plotH + 17, o.xLabel, 'end', 'top'));
  ctx.font = `${12 * s}px ${theme.font}`;
  let lx = ox + left;
  o.series.forEach((q, k) => {
    const color = colors[k % colors.length];
    const points = [];
    for (let i = 0; i < q.values.length; i++)
      if (Number.isFinite(q.values[i])) points.push(X(i), Y(q.values[i]));
    // The SVG joins the segments round; the canvas keeps its default (miter) joins.
    items.push({ kind: 'polyline', points, stroke: color, width: 1.8, svgJoin: 'round' });
    const w = ctx.measureText(q.label).width;
    if (lx - ox + w + 24 < o.width) {
      items.push(
        { kind: 'rect', x: lx, y: oy + 11, w: 14, h: 3, fill: color },
        {
          kind: 'text',
          x: lx + 18,
          y: oy + 12,
          text: q.label,
          size: 12 * s,
          baseline: 'middle',
          fill: theme.fg,
        },
      );
      lx += w + 34;
    }
  });
  return items;
}
