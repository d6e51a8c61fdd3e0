// The bar and line charts of charts.js as panels of an SVG figure: their display lists
// (chart-list.js, the same ones their canvases paint) painted by paint-svg.js.
import { barsLayout, barsList, linesLayout, linesList } from './chart-list.js';
import { paintSvg } from './paint-svg.js';
import { cssHex, num, scratchContext } from './svg-core.js';

/**
 * The line chart of charts.js's drawLines (same options, same layout) as part of a figure, its top
 * left at (ox, oy): grid, axis values, one polyline per series in `colors`, legend.
 * @returns {{ w: number, h: number }}
 */
export function linesPanel(fig, o, { x: ox = 0, y: oy = 0, colors } = {}) {
  const { theme, s } = fig;
  fig.body.push(paintSvg(fig, linesList(scratchContext(), theme, o, { s, ox, oy, colors })));
  return { w: o.width, h: linesLayout(o).height };
}

/**
 * The bar chart of charts.js's drawBars (same options, same layout) as part of a figure, its top
 * left at (ox, oy): grid with values, one bar per value, numbers over wide bars, labels under them.
 * @returns {{ w: number, h: number, bars: { x: number, y: number, w: number, h: number }[], fill: string }}
 */
export function barsPanel(fig, o, { x: ox = 0, y: oy = 0 } = {}) {
  const { theme, s } = fig;
  const ctx = scratchContext();
  const L = barsLayout(ctx, o, theme, s);
  const items = barsList(ctx, theme, o, L, { s, ox, oy });
  fig.body.push(paintSvg(fig, items));
  const bars = items
    .find((it) => it.kind === 'boxes')
    .boxes.map(([x, y, w, h]) => ({ x: +num(x), y: +num(y), w: +num(w), h: +num(h) }));
  return { w: o.width, h: L.height, bars, fill: cssHex(o.color || theme.accent).hex };
}
