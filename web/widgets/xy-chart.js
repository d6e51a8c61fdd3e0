// drawXY: a small x–y chart on a canvas for the tutorial widgets (variance against d_k, softmax
// weights against a scale, vectors in a plane). Linear or logarithmic axes, lines and/or point
// markers, dashed reference lines, a vertical marker, a legend; all text through fillText.
import { chartTable } from './a11y.js';
import { SERIES_COLORS } from './charts.js';
import { formatNumber, prepareCanvas, themeOf } from './draw-util.js';

// Okabe–Ito vermilion and blue, darkened so that text in them keeps a 4.5:1 contrast (WCAG AA) on
// white and on the pale highlight of a selected table row (#D55E00 is 3.9:1 on white).
const LIGHT_PAIR = { a: '#A84600', b: '#00649C' };

/**
 * Two contrasting series colours readable as text on the host's background: dark vermilion and blue
 * on light backgrounds, Okabe–Ito orange and sky blue on dark ones. For "without / with" comparisons.
 * @returns {{ a: string, b: string }}
 */
export function pairColors(host) {
  return themeOf(host).dark ? { a: SERIES_COLORS[1], b: SERIES_COLORS[4] } : { ...LIGHT_PAIR };
}

export { prepareCanvas };

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

/**
 * @param {HTMLCanvasElement} canvas
 * @param {object} o
 * @param {Element} o.host                        theme source (colours, fonts)
 * @param {number} o.width  @param {number} [o.height=240]
 * @param {{ min: number, max: number, log?: number, ticks?: number[], label?: string, format?: (v) => string }} o.x
 * @param {{ min: number, max: number, log?: number, ticks?: number[], label?: string, format?: (v) => string }} o.y
 * @param {{ label: string, points: [number, number][], color?: string, line?: boolean, markers?: boolean,
 *           dashed?: boolean, width?: number }[]} o.series
 * @param {{ x: number, label?: string }} [o.marker]  a vertical line (the current slider value)
 * @param {string} [o.title]
 * @returns {{ nearest(clientX: number, clientY: number, maxDist?: number): ({ series: number, index: number } | null),
 *             toPixel(x: number, y: number): [number, number] }}
 */
export function drawXY(canvas, o) {
  const theme = themeOf(o.host);
  const width = o.width,
    height = o.height || 240;
  const ctx = prepareCanvas(canvas, width, height);
  if (theme.bg) {
    ctx.fillStyle = theme.bg;
    ctx.fillRect(0, 0, width, height);
  }
  const legend = legendLayout(ctx, o, theme, width);
  const top = (o.title ? 24 : 8) + legend.height,
    bottom = o.x.label ? 40 : 26;
  // The plot box in CSS pixels and the two value → pixel mappings.
  const g = { left: 48, right: width - 14, top, bottom: height - bottom, width, height };
  g.X = scaleOf(o.x, g.left, g.right);
  g.Y = scaleOf(o.y, g.bottom, g.top);
  drawAxes(ctx, g, o, theme); // 1. grid, ticks, axis labels, title
  drawMarker(ctx, g, o, theme); // 2. the vertical marker, under the series
  drawSeries(ctx, g, o); // 3. lines and points, clipped to the plot
  drawLegend(ctx, legend, o, theme); // 4. the legend along the top
  ctx.lineWidth = 1;
  chartTable(
    canvas,
    o.title || canvas.getAttribute('aria-label') || 'Chart',
    ['series', o.x.label || 'x', o.y.label || 'y'],
    o.series.flatMap((s) => s.points.map(([x, y]) => [s.label, x, y])),
  );
  return {
    toPixel: (x, y) => [g.X(x), g.Y(y)],
    nearest(clientX, clientY, maxDist = 14) {
      const r = canvas.getBoundingClientRect();
      const px = clientX - r.left,
        py = clientY - r.top;
      let best = null,
        bestD = maxDist;
      o.series.forEach((s, si) =>
        s.points.forEach(([x, y], i) => {
          if (!s.markers || !Number.isFinite(y)) return;
          const d = Math.hypot(g.X(x) - px, g.Y(y) - py);
          if (d < bestD) {
            bestD = d;
            best = { series: si, index: i };
          }
        }),
      );
      return best;
    },
  };
}

function drawAxes(ctx, g, o, theme) {
  ctx.lineWidth = 1;
  ctx.font = `10.5px ${theme.mono}`;
  ctx.fillStyle = theme.muted;
  ctx.strokeStyle = theme.dark ? 'rgba(255,255,255,0.13)' : 'rgba(0,0,0,0.11)';
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (const v of ticksOf(o.y)) {
    const y = Math.round(g.Y(v)) + 0.5;
    ctx.beginPath();
    ctx.moveTo(g.left, y);
    ctx.lineTo(g.right, y);
    ctx.stroke();
    ctx.fillText(tickText(o.y, v), g.left - 6, y);
  }
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  for (const v of ticksOf(o.x)) {
    const x = Math.round(g.X(v)) + 0.5;
    ctx.beginPath();
    ctx.moveTo(x, g.top);
    ctx.lineTo(x, g.bottom);
    ctx.stroke();
    ctx.fillText(tickText(o.x, v), x, g.bottom + 5);
  }
  ctx.font = `12px ${theme.font}`;
  ctx.fillStyle = theme.fg;
  if (o.x.label) {
    ctx.textAlign = 'center';
    ctx.fillText(o.x.label, (g.left + g.right) / 2, g.height - 17);
  }
  if (o.y.label) {
    ctx.save();
    ctx.translate(12, (g.top + g.bottom) / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.fillText(o.y.label, 0, 0);
    ctx.restore();
  }
  if (o.title) {
    ctx.font = `600 12.5px ${theme.font}`;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'top';
    ctx.fillText(o.title, 6, 5);
  }
}

function drawMarker(ctx, g, o, theme) {
  if (!o.marker || !Number.isFinite(o.marker.x)) return;
  const x = Math.round(g.X(o.marker.x)) + 0.5;
  ctx.strokeStyle = theme.accent;
  ctx.lineWidth = 1.5;
  ctx.setLineDash([4, 3]);
  ctx.beginPath();
  ctx.moveTo(x, g.top);
  ctx.lineTo(x, g.bottom);
  ctx.stroke();
  ctx.setLineDash([]);
  if (o.marker.label) {
    const flip = x > g.width - 90; // near the right edge the label goes on the left of the line
    ctx.fillStyle = theme.accent;
    ctx.font = `11px ${theme.font}`;
    ctx.textBaseline = 'top';
    ctx.textAlign = flip ? 'right' : 'left';
    ctx.fillText(o.marker.label, x + (flip ? -4 : 4), g.top + 2);
  }
}

function drawSeries(ctx, g, o) {
  ctx.save();
  ctx.beginPath();
  ctx.rect(g.left - 5, g.top - 5, g.right - g.left + 10, g.bottom - g.top + 10);
  ctx.clip();
  o.series.forEach((s, k) => {
    const color = s.color || SERIES_COLORS[k % SERIES_COLORS.length];
    const pts = s.points
      .filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y))
      .map(([x, y]) => [g.X(x), g.Y(y)]);
    ctx.strokeStyle = color;
    ctx.fillStyle = color;
    ctx.lineWidth = s.width || 2;
    if (s.line !== false && pts.length > 1) {
      ctx.setLineDash(s.dashed ? [5, 4] : []);
      ctx.beginPath();
      pts.forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
      ctx.stroke();
      ctx.setLineDash([]);
    }
    if (s.markers)
      for (const [x, y] of pts) {
        ctx.beginPath();
        ctx.arc(x, y, 3.6, 0, 2 * Math.PI);
        ctx.fill();
      }
  });
  ctx.restore();
}

/** Where each labelled series goes in the legend: rows that wrap at the canvas width. */
function legendLayout(ctx, o, theme, width) {
  ctx.font = `12px ${theme.font}`;
  const items = [];
  let x = 48,
    row = 0;
  o.series.forEach((s, k) => {
    if (!s.label) return;
    const w = ctx.measureText(s.label).width + 21;
    if (x > 48 && x + w > width - 8) {
      x = 48;
      row++;
    }
    items.push({ k, x, y: (o.title ? 24 : 8) + 8 + row * 18 });
    x += w + 17;
  });
  return { items, height: items.length ? (row + 1) * 18 + 4 : 0 };
}

function drawLegend(ctx, legend, o, theme) {
  ctx.font = `12px ${theme.font}`;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  for (const { k, x, y } of legend.items) {
    const s = o.series[k];
    const color = s.color || SERIES_COLORS[k % SERIES_COLORS.length];
    ctx.strokeStyle = color;
    ctx.lineWidth = 2.2;
    ctx.setLineDash(s.dashed ? [4, 3] : []);
    ctx.beginPath();
    ctx.moveTo(x, y);
    ctx.lineTo(x + 16, y);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillStyle = theme.fg;
    ctx.fillText(s.label, x + 21, y);
  }
}

/** Parses "1, 2, 3" (or an array) into finite numbers; throws with `what` in the message otherwise. */
export function parseNumberList(text, what) {
  const parts = Array.isArray(text)
    ? text
    : String(text)
        .split(/[\s,]+/)
        .filter(Boolean);
  const out = parts.map(Number);
  if (!out.length || out.some((v) => !Number.isFinite(v)))
    throw new Error(`${what}: expected numbers separated by commas, got “${String(text)}”`);
  return out;
}

/** Parses "x,y; x,y" (or nested arrays) into rows of equal length. */
export function parseVectors(text, what) {
  const rows = Array.isArray(text)
    ? text
    : String(text)
        .split(';')
        .map((s) => s.trim())
        .filter(Boolean);
  const out = rows.map((r) => parseNumberList(r, what));
  if (!out.length || out.some((r) => r.length !== out[0].length))
    throw new Error(`${what}: expected vectors of one length separated by “;”, got “${String(text)}”`);
  return out;
}
