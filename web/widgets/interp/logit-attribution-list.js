// The display list (display-list.js) of <logit-attribution>'s bars: the one description its canvas
// (paint-canvas.js, on screen, PNG and print) and its SVG figure (paint-svg.js) paint. One row per
// component, largest |value| first: the name (right-aligned, shortened to fit), a bar from the zero
// axis (orange for +, blue for −) and the value beside its end; the zero axis and its "0" below.
import { colorOf } from '../figures/colormap.js';
import { fitText, formatNumber } from '../figures/draw-util.js';

/** Row height, name column, room for a value either side, and the padding round the bars (px). */
export const ROW_H = 22,
  LABEL_W = 74,
  VALUE_W = 64,
  PAD = 8;

/** Bar colours: the ends of the diverging map (orange for +, blue for −). */
export const barColor = (v) => colorOf('diverging', v >= 0 ? 0.78 : -0.78, -1, 1);

/**
 * Where the bars go in a figure `width` px wide: the bars (components, in order), the largest
 * |value|, the plot's width, the zero axis x0, the first row's top and the figure's height.
 */
export function barsGeometry(bars, width) {
  const max = Math.max(1e-9, ...bars.map((c) => Math.abs(c.value)));
  const plotW = Math.max(40, width - LABEL_W - 2 * VALUE_W - 2 * PAD);
  const x0 = PAD + LABEL_W + VALUE_W + plotW / 2; // the zero axis
  return { bars, max, plotW, x0, top: PAD + 4, height: PAD * 2 + 4 + bars.length * ROW_H + 18 };
}

/**
 * The items of the bars laid out as g (barsGeometry). ctx measures the names (its font is left at
 * theirs). A bar is at least 1 px wide; its value is written 4 px past its true end.
 */
export function attributionList(ctx, theme, g) {
  const items = [];
  ctx.font = `12px ${theme.font}`;
  g.bars.forEach((c, i) => {
    const y = g.top + i * ROW_H,
      len = (Math.abs(c.value) / g.max) * (g.plotW / 2),
      pos = c.value >= 0;
    const mid = y + ROW_H / 2;
    items.push(
      {
        kind: 'rect',
        x: pos ? g.x0 : g.x0 - len,
        y: y + 3,
        w: Math.max(1, len),
        h: ROW_H - 6,
        fill: barColor(c.value),
      },
      {
        kind: 'text',
        x: PAD + LABEL_W - 6,
        y: mid,
        text: fitText(ctx, c.name, LABEL_W - 6),
        size: 12,
        anchor: 'end',
        baseline: 'middle',
        fill: theme.fg,
      },
      {
        kind: 'text',
        x: pos ? g.x0 + len + 4 : g.x0 - len - 4,
        y: mid,
        text: formatNumber(c.value, 3),
        size: 11,
        anchor: pos ? 'start' : 'end',
        baseline: 'middle',
        fill: theme.fg,
        mono: true,
      },
    );
  });
  const bottom = g.top + g.bars.length * ROW_H;
  items.push(
    { kind: 'rules', segs: [[g.x0 + 0.5, g.top, 'V', bottom]], stroke: theme.muted },
    {
      kind: 'text',
      x: g.x0,
      y: bottom + 3,
      text: '0',
      size: 10,
      anchor: 'middle',
      baseline: 'top',
      fill: theme.muted,
      mono: true,
    },
  );
  return items;
}
