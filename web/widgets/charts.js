// Two small canvas charts: bars (one query's attention distribution over the keys) and lines (the
// curves of chosen positional-encoding dimensions). Labels are drawn with fillText (never HTML).
import { chartTable } from './a11y.js';
import { fitText, formatNumber, prepareCanvas, themeOf } from './draw-util.js';

/** Okabe–Ito: distinguishable with the common colour-vision deficiencies. */
export const SERIES_COLORS = [
  '#0072B2',
  '#E69F00',
  '#009E73',
  '#CC79A7',
  '#56B4E9',
  '#D55E00',
  '#F0E442',
  '#000000',
];

/**
 * The layout of a bar chart for options `o` at font scale s (1: the screen's 12 px labels): margins,
 * bar width, whether labels are drawn and angled, the height and the top of the value axis. ctx
 * measures the labels (its font is left at theirs). Shared with the SVG export (svg-charts.js).
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
  return { n, left, plotW, bw, top, labelled, angled, plotH, height: top + plotH + bottom, max };
}

/**
 * Vertical bars with labels under them.
 * @param {HTMLCanvasElement} canvas
 * @param {{ host: Element, width: number, values: ArrayLike<number>, labels: string[], title?: string,
 *           color?: string, maxValue?: number }} o
 * @returns {{ barAt(clientX: number): number }} hit testing for tooltips
 */
export function drawBars(canvas, o) {
  const theme = themeOf(o.host);
  const L = barsLayout(canvas.getContext('2d'), o, theme);
  const { n, left, bw, top, plotH, height, max } = L;
  const ctx = prepareCanvas(canvas, o.width, height);
  if (theme.bg) {
    ctx.fillStyle = theme.bg;
    ctx.fillRect(0, 0, o.width, height);
  }
  drawBarAxis(ctx, o, L, theme);
  ctx.fillStyle = o.color || theme.accent;
  for (let i = 0; i < n; i++) {
    const v = Number.isFinite(o.values[i]) ? o.values[i] : 0;
    const bh = (v / max) * plotH;
    ctx.fillRect(left + i * bw + (bw > 4 ? 1 : 0), top + plotH - bh, Math.max(1, bw - (bw > 4 ? 2 : 0)), bh);
  }
  if (bw >= 30) {
    ctx.fillStyle = theme.muted;
    ctx.font = `10px ${theme.mono}`;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'bottom';
    for (let i = 0; i < n; i++) {
      const v = Number.isFinite(o.values[i]) ? o.values[i] : 0;
      ctx.fillText(formatNumber(v, 2), left + (i + 0.5) * bw, top + plotH - (v / max) * plotH - 2);
    }
  }
  if (L.labelled) drawBarLabels(ctx, o, L, theme);
  chartTable(
    canvas,
    o.title || canvas.getAttribute('aria-label') || 'Bar chart',
    ['bar', 'value'],
    Array.from(o.values, (v, i) => [o.labels[i] ?? String(i), v]),
  );
  return {
    barAt(clientX) {
      const x = clientX - canvas.getBoundingClientRect().left - left;
      const i = Math.floor(x / bw);
      return x >= 0 && i < n ? i : -1;
    },
  };
}

// Axis and grid at 0, max/2, max, and the title.
function drawBarAxis(ctx, o, { left, plotW, top, plotH, max }, theme) {
  ctx.strokeStyle = theme.dark ? 'rgba(255,255,255,0.14)' : 'rgba(0,0,0,0.12)';
  ctx.fillStyle = theme.muted;
  ctx.font = `10px ${theme.mono}`;
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (const f of [0, 0.5, 1]) {
    const y = top + plotH * (1 - f);
    ctx.beginPath();
    ctx.moveTo(left, y);
    ctx.lineTo(left + plotW, y);
    ctx.stroke();
    ctx.fillText(formatNumber(max * f, 2), left - 6, y);
  }
  if (o.title) {
    ctx.fillStyle = theme.fg;
    ctx.font = `600 12px ${theme.font}`;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'top';
    ctx.fillText(fitText(ctx, o.title, o.width - 12), 6, 6);
  }
}

// The bars' labels under them: thinned to fit, angled where they are wider than a bar.
function drawBarLabels(ctx, o, { n, left, bw, top, plotH, angled }, theme) {
  ctx.fillStyle = theme.fg;
  ctx.font = `12px ${theme.font}`;
  const every = Math.max(1, Math.ceil((angled ? 13 : 26) / bw));
  for (let i = 0; i < n; i += every) {
    const x = left + (i + 0.5) * bw;
    if (angled) {
      ctx.save();
      ctx.translate(x, top + plotH + 6);
      ctx.rotate(Math.PI / 4);
      ctx.textAlign = 'left';
      ctx.textBaseline = 'middle';
      ctx.fillText(fitText(ctx, o.labels[i], 90), 0, 0);
      ctx.restore();
    } else {
      ctx.textAlign = 'center';
      ctx.textBaseline = 'top';
      ctx.fillText(fitText(ctx, o.labels[i], bw * every - 2), x, top + plotH + 5);
    }
  }
}

/**
 * Line chart of several series over x = 0 … n-1.
 * @param {{ host: Element, width: number, height?: number, series: { label: string, values: ArrayLike<number> }[],
 *           xLabel?: string, yRange?: [number, number] }} o
 */
export function drawLines(canvas, o) {
  const theme = themeOf(o.host);
  const height = o.height || 200;
  const ctx = prepareCanvas(canvas, o.width, height);
  if (theme.bg) {
    ctx.fillStyle = theme.bg;
    ctx.fillRect(0, 0, o.width, height);
  }
  const left = 40,
    right = 12,
    top = 30,
    bottom = 30;
  const plotW = Math.max(60, o.width - left - right),
    plotH = height - top - bottom;
  const n = Math.max(2, ...o.series.map((s) => s.values.length));
  const [y0, y1] = o.yRange || [-1, 1];
  const X = (i) => left + (i / (n - 1)) * plotW;
  const Y = (v) => top + (1 - (v - y0) / (y1 - y0)) * plotH;
  ctx.strokeStyle = theme.dark ? 'rgba(255,255,255,0.14)' : 'rgba(0,0,0,0.12)';
  ctx.fillStyle = theme.muted;
  ctx.font = `10px ${theme.mono}`;
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (const v of [y0, (y0 + y1) / 2, y1]) {
    ctx.beginPath();
    ctx.moveTo(left, Y(v));
    ctx.lineTo(left + plotW, Y(v));
    ctx.stroke();
    ctx.fillText(formatNumber(v, 1), left - 6, Y(v));
  }
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  const step = Math.max(1, Math.ceil((n - 1) / 8));
  for (let i = 0; i < n; i += step) ctx.fillText(String(i), X(i), top + plotH + 5);
  if (o.xLabel) {
    ctx.textAlign = 'right';
    ctx.fillText(o.xLabel, left + plotW, top + plotH + 17);
  }
  // Series, then a legend along the top.
  let lx = left;
  o.series.forEach((s, k) => {
    const color = SERIES_COLORS[k % SERIES_COLORS.length];
    ctx.strokeStyle = color;
    ctx.lineWidth = 1.8;
    ctx.beginPath();
    for (let i = 0; i < s.values.length; i++) {
      const p = [X(i), Y(s.values[i])];
      if (i) ctx.lineTo(...p);
      else ctx.moveTo(...p);
    }
    ctx.stroke();
    ctx.font = `12px ${theme.font}`;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'middle';
    const w = ctx.measureText(s.label).width;
    if (lx + w + 24 < o.width) {
      ctx.fillStyle = color;
      ctx.fillRect(lx, 11, 14, 3);
      ctx.fillStyle = theme.fg;
      ctx.fillText(s.label, lx + 18, 12);
      lx += w + 34;
    }
  });
  ctx.lineWidth = 1;
  chartTable(
    canvas,
    canvas.getAttribute('aria-label') || 'Line chart',
    [o.xLabel || 'x', ...o.series.map((s) => s.label)],
    Array.from({ length: n }, (_, i) => [
      i,
      ...o.series.map((s) => (i < s.values.length ? s.values[i] : '')),
    ]),
  );
}
