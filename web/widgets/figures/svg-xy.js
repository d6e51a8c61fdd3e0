// x–y charts (xy-chart.js's drawXY) as panels of an SVG figure: their display lists (xy-list.js,
// the same ones their canvases paint) painted by paint-svg.js, so the figure's axes are the canvas's.
import { paintSvg } from './paint-svg.js';
import { scratchContext } from './svg-core.js';
import { xyLayout, xyList } from './xy-list.js';

/**
 * An x–y chart with drawXY's options and layout (axes, grid, ticks, labels, title, the vertical
 * marker, lines / markers / dashed series, the legend) as part of a figure, its top left at (ox, oy).
 * Points outside the axes are dropped rather than clipped (no clip path, so no id to collide).
 * @returns {{ w: number, h: number }}
 */
export function xyPanel(fig, o, { x: ox = 0, y: oy = 0, colors } = {}) {
  const { theme, s } = fig;
  const g = xyLayout(scratchContext(), o, theme, s);
  fig.body.push(paintSvg(fig, xyList(theme, o, g, { s, ox, oy, colors })));
  return { w: o.width, h: o.height || 240 };
}
