// One HeatmapView as a panel of an SVG figure: its display list (heatmap-list.js, the same one its
// canvas paints) laid out by the same geometry (heatmap-geometry.js), painted by paint-svg.js.
import { heatmapList } from './heatmap-list.js';
import { paintSvg } from './paint-svg.js';

/**
 * One HeatmapView as a panel of the figure, its top-left corner at (ox, oy): cells, masked hatching,
 * cell borders, numbers, title, labels, Σ column, the selected row and the legend, laid out as the
 * canvas does for `width`. Hover and keyboard-focus marks (transient) are left out.
 * @returns {{ w: number, h: number, geo: object, cells: { x: number, y: number, w: number, h: number } }}
 *   cells: where the panel's cell area lies in the figure (written into the metadata, so a program
 *   can find cell (r, c) of a panel at x + (c + ½)·w/cols, y + (r + ½)·h/rows)
 */
export function heatmapPanel(fig, view, { x: ox = 0, y: oy = 0, width = view.width, legend } = {}) {
  const o = view.opts;
  const g = view.layout(width, fig.s);
  const ctx = view.canvas.getContext('2d');
  const { items } = heatmapList(ctx, fig.theme, o, g, { s: fig.s, ox, oy, legend: legend ?? o.legend });
  fig.body.push(paintSvg(fig, items));
  const r2 = (v) => Math.round(v * 1000) / 1000;
  return {
    w: g.w,
    h: g.h,
    geo: g,
    cells: { x: r2(ox + g.x0), y: r2(oy + g.y0), w: r2(o.cols * g.cw), h: r2(o.rows * g.ch) },
  };
}
