// Arrows and haloed labels on a 2D canvas, shared by the vector planes of <query-explorer> and
// <rope-explorer>. An arrow is the display list's 'arrow' item (display-list.js): its geometry is
// written once, and painted here as svgArrow (paint-svg.js) paints it into an SVG.
import { paintCanvas } from './paint-canvas.js';

/**
 * An arrow from [x0, y0] to [x1, y1] (CSS pixels): a round-capped shaft that stops inside the head,
 * and a filled head of length headBase + 1.5 · width. `dashed` draws the shaft dashed (5 on, 4 off).
 * The display list's 'arrow' item, painted at once.
 */
export function canvasArrow(ctx, [x0, y0], [x1, y1], color, width, { dashed = false, headBase = 7 } = {}) {
  paintCanvas(ctx, [{ kind: 'arrow', x0, y0, x1, y1, color, width, dashed, headBase }]);
}

/** Bold 12 px text centred on [x, y], with a halo of the background so it reads over lines. */
export function canvasLabel(ctx, theme, text, [x, y], color) {
  const label = { kind: 'text', x, y, text, size: 12, weight: 600, anchor: 'middle', baseline: 'middle' };
  paintCanvas(ctx, [{ ...label, fill: color, halo: theme.bgSolid }], theme);
}
