// One HeatmapView as a panel of an SVG figure: the vector twin of its canvas (heatmap-canvas.js),
// laid out by the same geometry (heatmap-geometry.js).
import { colormap, inkOn } from './colormap.js';
import { fitText, formatNumber } from './draw-util.js';
import {
  PAD,
  colLabelEvery,
  hasBorders,
  hatchesMasked,
  legendBox,
  rowLabelEvery,
  showsSums,
  showsValues,
  valueSize,
} from './heatmap-geometry.js';
import { colorBar, cssHex, hex3, num, paint, text } from './svg-core.js';

/** Which colour-table level the canvas gives value v (−1: masked), the same arithmetic as HeatmapView. */
function levelOf(v, lo, k) {
  if (v >= lo) {
    const t = ((v - lo) * k + 0.5) | 0;
    return t > 255 ? 255 : t;
  }
  return v > -Infinity ? 0 : -1;
}

/**
 * One HeatmapView as a panel of the figure, its top-left corner at (ox, oy): cells, masked hatching,
 * cell borders, numbers, title, labels, Σ column, the selected row and the legend, laid out as the
 * canvas does for `width`. Hover and keyboard-focus marks (transient) are left out.
 * @returns {{ w: number, h: number, geo: object, cells: { x: number, y: number, w: number, h: number } }}
 *   cells: where the panel's cell area lies in the figure (written into the metadata, so a program
 *   can find cell (r, c) of a panel at x + (c + ½)·w/cols, y + (r + ½)·h/rows)
 */
export function heatmapPanel(fig, view, { x: ox = 0, y: oy = 0, width = view.width, legend } = {}) {
  const o = view.opts,
    { theme } = fig;
  const g = view.layout(width, fig.s);
  // What every part below draws with: the view's options and layout, the panel's origin.
  const P = {
    fig,
    o,
    g,
    theme,
    s: fig.s,
    ctx: view.canvas.getContext('2d'),
    X: (px) => ox + px,
    Y: (py) => oy + py,
    out: [],
  };
  const masked = panelCells(P);
  const showValues = showsValues(o, g);
  if (hatchesMasked(g, masked.length, showValues)) panelHatch(P, masked);
  if (hasBorders(g) && (o.rows > 1 || o.cols > 1)) panelBorders(P);
  if (showValues) panelValues(P);
  panelLabels(P);
  if (o.rowSums) panelSums(P);
  if (Number.isInteger(o.selectedRow) && o.selectedRow >= 0 && o.selectedRow < o.rows) {
    P.out.push(
      `<rect x="${num(P.X(g.x0 + 1))}" y="${num(P.Y(g.y0 + o.selectedRow * g.ch + 1))}" width="${num(o.cols * g.cw - 2)}" height="${num(g.ch - 2)}" fill="none" ${paint('stroke', theme.accent)} stroke-width="2"/>`,
    );
  }
  if (legend ?? o.legend) {
    const { x, y, w } = legendBox(o, g);
    P.out.push(colorBar(fig, { x: P.X(x), y: P.Y(y), w, domain: o.domain, masked: masked.length > 0 }));
  }
  fig.body.push(P.out.join('\n'));
  const r2 = (v) => Math.round(v * 1000) / 1000;
  return {
    w: g.w,
    h: g.h,
    geo: g,
    cells: { x: r2(P.X(g.x0)), y: r2(P.Y(g.y0)), w: r2(o.cols * g.cw), h: r2(o.rows * g.ch) },
  };
}

// The cells into the figure's shared paths: runs of one level along each row. Returns the flat
// indices of the masked (−∞) cells.
function panelCells({ fig, o, g, theme, X, Y }) {
  const { lo, hi, map } = o.domain,
    lut = colormap(map);
  const fills = Array.from({ length: 256 }, (_, i) => hex3(lut, i));
  const maskedFill = cssHex(`rgb(${theme.maskedRgb.slice(0, 3).join(',')})`).hex;
  const k = hi > lo ? 255 / (hi - lo) : 0;
  const masked = [];
  for (let r = 0; r < o.rows; r++) {
    let c = 0;
    while (c < o.cols) {
      const lev = levelOf(o.data[r * o.cols + c], lo, k);
      let e = c + 1;
      while (e < o.cols && levelOf(o.data[r * o.cols + e], lo, k) === lev) e++;
      if (lev < 0) for (let i = c; i < e; i++) masked.push(r * o.cols + i);
      fig.cells.add(lev < 0 ? maskedFill : fills[lev], g.cw, g.ch, X(g.x0), Y(g.y0), r, c, e - c);
      c = e;
    }
  }
  return masked;
}

function panelHatch({ o, g, theme, X, Y, out }, masked) {
  let d = '';
  for (const i of masked) {
    const x = X(g.x0 + (i % o.cols) * g.cw),
      y = Y(g.y0 + Math.floor(i / o.cols) * g.ch);
    d += `M${num(x + 1)} ${num(y + g.ch - 1)}L${num(x + g.cw - 1)} ${num(y + 1)}`;
  }
  out.push(`<path fill="none" ${paint('stroke', theme.hatch)} d="${d}"/>`);
}

function panelBorders({ o, g, theme, X, Y, out }) {
  let d = '';
  for (let c = 1; c < o.cols; c++) d += `M${num(X(g.x0 + c * g.cw))} ${num(Y(g.y0))}v${num(o.rows * g.ch)}`;
  for (let r = 1; r < o.rows; r++) d += `M${num(X(g.x0))} ${num(Y(g.y0 + r * g.ch))}h${num(o.cols * g.cw)}`;
  if (d) out.push(`<path fill="none" ${paint('stroke', theme.bgSolid)} stroke-width="1" d="${d}"/>`);
}

function panelValues({ fig, o, g, theme, s, X, Y, out }) {
  const { lo, hi, map } = o.domain;
  const size = valueSize(g) * s;
  for (let r = 0; r < o.rows; r++)
    for (let c = 0; c < o.cols; c++) {
      const v = o.data[r * o.cols + c];
      out.push(
        text(
          X(g.x0 + (c + 0.5) * g.cw),
          Y(g.y0 + (r + 0.5) * g.ch),
          formatNumber(v, o.decimals),
          {
            size,
            anchor: 'middle',
            baseline: 'middle',
            fill: Number.isFinite(v) ? inkOn(map, v, lo, hi) : theme.fg,
            mono: true,
          },
          fig,
        ),
      );
    }
}

// Title and labels, cut to fit as on the canvas (the view's canvas context measures them).
function panelLabels(P) {
  const { fig, o, g, theme, s, ctx, X, Y, out } = P;
  if (o.title) {
    ctx.font = `600 ${12 * s}px ${theme.font}`;
    out.push(
      text(
        X(PAD),
        Y(PAD),
        fitText(ctx, o.title, g.w - 2 * PAD),
        { size: 12 * s, baseline: 'top', fill: theme.fg, weight: 600 },
        fig,
      ),
    );
  }
  ctx.font = `${12 * s}px ${theme.font}`;
  if (o.rowLabels) {
    const every = rowLabelEvery(g, s);
    for (let r = 0; r < o.rows; r += every) {
      out.push(
        text(
          X(g.x0 - 6),
          Y(g.y0 + (r + 0.5) * g.ch),
          fitText(ctx, o.rowLabels[r], g.rowW - 10),
          {
            size: 12 * s,
            anchor: 'end',
            baseline: 'middle',
            fill: o.selectedRow === r ? theme.accent : theme.fg,
          },
          fig,
        ),
      );
    }
  }
  if (o.colLabels) panelColLabels(P);
}

function panelColLabels({ fig, o, g, theme, s, ctx, X, Y, out }) {
  const every = colLabelEvery(ctx, o, g, s);
  for (let c = 0; c < o.cols; c += every) {
    const x = X(g.x0 + (c + 0.5) * g.cw);
    if (g.angled) {
      const y = Y(g.y0 - 5);
      out.push(
        `<g transform="translate(${num(x)} ${num(y)}) rotate(-45)">${text(0, 0, fitText(ctx, o.colLabels[c], 90 * s), { size: 12 * s, baseline: 'middle', fill: theme.fg }, fig)}</g>`,
      );
    } else {
      out.push(
        text(
          x,
          Y(g.y0 - 4),
          fitText(ctx, o.colLabels[c], g.cw * every - 2),
          { size: 12 * s, anchor: 'middle', baseline: 'bottom', fill: theme.fg },
          fig,
        ),
      );
    }
  }
}

function panelSums({ fig, o, g, theme, s, X, Y, out }) {
  const x = X(g.x0 + o.cols * g.cw + 8);
  out.push(
    text(x, Y(g.y0 - 4), 'Σ row', { size: 11 * s, baseline: 'bottom', fill: theme.muted, mono: true }, fig),
  );
  if (!showsSums(g)) return;
  for (let r = 0; r < o.rows; r++) {
    let sum = 0;
    for (let c = 0; c < o.cols; c++) {
      const v = o.data[r * o.cols + c];
      if (Number.isFinite(v)) sum += v;
    }
    out.push(
      text(
        x,
        Y(g.y0 + (r + 0.5) * g.ch),
        sum.toFixed(3),
        { size: 11 * s, baseline: 'middle', fill: theme.fg, mono: true },
        fig,
      ),
    );
  }
}
