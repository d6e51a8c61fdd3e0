// drawXY: a small x–y chart on a canvas for the tutorial widgets (variance against d_k, softmax
// weights against a scale, vectors in a plane). Linear or logarithmic axes, lines and/or point
// markers, dashed reference lines, a vertical marker, a legend; all text through fillText. The
// picture is xy-list.js's display list, the same one the SVG export (svg-xy.js) paints.
import { chartTable } from './a11y.js';
import { SERIES_COLORS } from './charts.js';
import { prepareCanvas, themeOf } from './draw-util.js';
import { paintFigure } from './paint-canvas.js';
import { scaleOf, tickText, ticksOf, xyLayout, xyList } from './xy-list.js';

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

export { prepareCanvas, scaleOf, tickText, ticksOf };

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
  // The plot box in CSS pixels and the two value → pixel mappings; the picture from its display
  // list (the same one the SVG export paints, laid out again at its font scale).
  let g;
  const ctx = paintFigure(canvas, width, height, theme, (c, th, at) => {
    if (!at) g = xyLayout(c, o, th);
    return xyList(th, o, at ? xyLayout(c, o, th, at.s ?? 1) : g, { ...at, colors: SERIES_COLORS });
  });
  ctx.lineWidth = 1; // as the chart left the context before (callers may draw on it)
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
