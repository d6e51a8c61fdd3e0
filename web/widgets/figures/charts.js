// Two small canvas charts: bars (one query's attention distribution over the keys) and lines (the
// curves of chosen positional-encoding dimensions), painted from their display lists
// (chart-list.js, the same ones the SVG export paints). Labels are drawn with fillText (never HTML).
import { chartTable } from './a11y.js';
import { themeOf } from './draw-util.js';
import { barsLayout, barsList, linesLayout, linesList } from './chart-list.js';
import { paintFigure } from './paint-canvas.js';

export { barsLayout };

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
 * Vertical bars with labels under them.
 * @param {HTMLCanvasElement} canvas
 * @param {{ host: Element, width: number, values: ArrayLike<number>, labels: string[], title?: string,
 *           color?: string, negativeColor?: string, maxValue?: number, minValue?: number }} o
 *   minValue < 0: signed bars, the negative ones in negativeColor (default color)
 * @returns {{ barAt(clientX: number): number }} hit testing for tooltips
 */
export function drawBars(canvas, o) {
  const theme = themeOf(o.host);
  const L = barsLayout(canvas.getContext('2d'), o, theme);
  const { n, left, bw, height } = L;
  // At a figure offset or font scale (the SVG export's panel), laid out again for it.
  paintFigure(canvas, o.width, height, theme, (ctx, th, at) =>
    barsList(ctx, th, o, at ? barsLayout(ctx, o, th, at.s ?? 1) : L, at),
  );
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

/**
 * Line chart of several series over x = 0 … n-1.
 * @param {{ host: Element, width: number, height?: number, series: { label: string, values: ArrayLike<number> }[],
 *           xLabel?: string, yRange?: [number, number] }} o
 */
export function drawLines(canvas, o) {
  const theme = themeOf(o.host);
  const height = o.height || 200;
  const { n } = linesLayout(o);
  paintFigure(canvas, o.width, height, theme, (ctx, th, at) =>
    linesList(ctx, th, o, { ...at, colors: SERIES_COLORS }),
  );
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
