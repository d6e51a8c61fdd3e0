// The bar and line charts of charts.js as panels of an SVG figure, laid out as their canvas twins.
import { barsLayout } from './charts.js';
import { fitText, formatNumber } from './draw-util.js';
import { cssHex, num, paint, scratchContext, text } from './svg-core.js';

/**
 * The line chart of charts.js's drawLines (same options, same layout) as part of a figure, its top
 * left at (ox, oy): grid, axis values, one polyline per series in the Okabe–Ito colours, legend.
 * @returns {{ w: number, h: number }}
 */
export function linesPanel(fig, o, { x: ox = 0, y: oy = 0, colors } = {}) {
  const { theme, s } = fig;
  const height = o.height || 200;
  const left = 40,
    right = 12,
    top = 30,
    bottom = 30;
  const plotW = Math.max(60, o.width - left - right),
    plotH = height - top - bottom;
  const n = Math.max(2, ...o.series.map((q) => q.values.length));
  const [y0, y1] = o.yRange || [-1, 1];
  const X = (i) => ox + left + (i / (n - 1)) * plotW;
  const Y = (v) => oy + top + (1 - (v - y0) / (y1 - y0)) * plotH;
  const out = [];
  const grid = theme.dark ? 'rgba(255,255,255,0.14)' : 'rgba(0,0,0,0.12)';
  let d = '';
  for (const v of [y0, (y0 + y1) / 2, y1]) {
    d += `M${num(ox + left)} ${num(Y(v))}h${num(plotW)}`;
    out.push(
      text(
        ox + left - 6,
        Y(v),
        formatNumber(v, 1),
        { size: 10 * s, anchor: 'end', baseline: 'middle', fill: theme.muted, mono: true },
        fig,
      ),
    );
  }
  out.unshift(`<path fill="none" ${paint('stroke', grid)} d="${d}"/>`);
  const step = Math.max(1, Math.ceil((n - 1) / 8));
  for (let i = 0; i < n; i += step)
    out.push(
      text(
        X(i),
        oy + top + plotH + 5,
        String(i),
        { size: 10 * s, anchor: 'middle', baseline: 'top', fill: theme.muted, mono: true },
        fig,
      ),
    );
  if (o.xLabel)
    out.push(
      text(
        ox + left + plotW,
        oy + top + plotH + 17,
        o.xLabel,
        { size: 10 * s, anchor: 'end', baseline: 'top', fill: theme.muted, mono: true },
        fig,
      ),
    );
  const scratch = scratchContext();
  scratch.font = `${12 * s}px ${theme.font}`;
  let lx = ox + left;
  o.series.forEach((q, k) => {
    const color = colors[k % colors.length];
    const pts = [];
    for (let i = 0; i < q.values.length; i++)
      if (Number.isFinite(q.values[i])) pts.push(`${num(X(i))},${num(Y(q.values[i]))}`);
    out.push(
      `<polyline fill="none" ${paint('stroke', color)} stroke-width="1.8" stroke-linejoin="round" points="${pts.join(' ')}"/>`,
    );
    const w = scratch.measureText(q.label).width;
    if (lx - ox + w + 24 < o.width) {
      out.push(
        `<rect x="${num(lx)}" y="${num(oy + 11)}" width="14" height="3" ${paint('fill', color)}/>`,
        text(lx + 18, oy + 12, q.label, { size: 12 * s, baseline: 'middle', fill: theme.fg }, fig),
      );
      lx += w + 34;
    }
  });
  fig.body.push(out.join('\n'));
  return { w: o.width, h: height };
}

/**
 * The bar chart of charts.js's drawBars (same options, same layout) as part of a figure, its top
 * left at (ox, oy): grid with values, one bar per value, numbers over wide bars, labels under them.
 * @returns {{ w: number, h: number }}
 */
export function barsPanel(fig, o, { x: ox = 0, y: oy = 0 } = {}) {
  const { theme, s } = fig;
  const ctx = scratchContext();
  const L = barsLayout(ctx, o, theme, s);
  const { n, left, bw, top, plotH, max } = L;
  // What the parts below draw with: the layout, the panel's origin, the figure's elements.
  const P = { fig, o, L, ctx, ox, oy, out: [] };
  barsAxis(P);
  let bars = '';
  const rects = [];
  for (let i = 0; i < n; i++) {
    const v = Number.isFinite(o.values[i]) ? o.values[i] : 0;
    const bh = (v / max) * plotH;
    const bx = ox + left + i * bw + (bw > 4 ? 1 : 0),
      bwid = Math.max(1, bw - (bw > 4 ? 2 : 0));
    if (bh > 0) {
      bars += `M${num(bx)} ${num(oy + top + plotH - bh)}h${num(bwid)}v${num(bh)}h${num(-bwid)}z`;
      rects.push({ x: +num(bx), y: +num(oy + top + plotH - bh), w: +num(bwid), h: +num(bh) });
    }
  }
  const fill = cssHex(o.color || theme.accent).hex;
  if (bars) P.out.push(`<path ${paint('fill', o.color || theme.accent)} d="${bars}"/>`);
  if (bw >= 30) barsValues(P);
  if (L.labelled) barsLabels(P);
  fig.body.push(P.out.join('\n'));
  return { w: o.width, h: L.height, bars: rects, fill };
}

// Grid with its values at 0, max/2, max, and the title.
function barsAxis({ fig, o, L, ctx, ox, oy, out }) {
  const { theme, s } = fig;
  const { left, plotW, top, plotH, max } = L;
  let d = '';
  for (const f of [0, 0.5, 1]) {
    const y = oy + top + plotH * (1 - f);
    d += `M${num(ox + left)} ${num(y)}h${num(plotW)}`;
    out.push(
      text(
        ox + left - 6,
        y,
        formatNumber(max * f, 2),
        { size: 10 * s, anchor: 'end', baseline: 'middle', fill: theme.muted, mono: true },
        fig,
      ),
    );
  }
  out.unshift(
    `<path fill="none" ${paint('stroke', theme.dark ? 'rgba(255,255,255,0.14)' : 'rgba(0,0,0,0.12)')} d="${d}"/>`,
  );
  if (o.title) {
    ctx.font = `600 ${12 * s}px ${theme.font}`;
    out.push(
      text(
        ox + 6,
        oy + 6,
        fitText(ctx, o.title, o.width - 12),
        { size: 12 * s, baseline: 'top', fill: theme.fg, weight: 600 },
        fig,
      ),
    );
  }
}

// The numbers over bars wide enough for them.
function barsValues({ fig, o, L, ox, oy, out }) {
  const { theme, s } = fig;
  const { n, left, bw, top, plotH, max } = L;
  for (let i = 0; i < n; i++) {
    const v = Number.isFinite(o.values[i]) ? o.values[i] : 0;
    out.push(
      text(
        ox + left + (i + 0.5) * bw,
        oy + top + plotH - (v / max) * plotH - 2,
        formatNumber(v, 2),
        { size: 10 * s, anchor: 'middle', baseline: 'bottom', fill: theme.muted, mono: true },
        fig,
      ),
    );
  }
}

// The bars' labels under them: thinned to fit, angled where they are wider than a bar.
function barsLabels({ fig, o, L, ctx, ox, oy, out }) {
  const { theme, s } = fig;
  const { n, left, bw, top, plotH, angled } = L;
  ctx.font = `${12 * s}px ${theme.font}`;
  const every = Math.max(1, Math.ceil((angled ? 13 : 26) / bw));
  for (let i = 0; i < n; i += every) {
    const x = ox + left + (i + 0.5) * bw;
    if (angled) {
      out.push(
        `<g transform="translate(${num(x)} ${num(oy + top + plotH + 6)}) rotate(45)">${text(0, 0, fitText(ctx, o.labels[i], 90 * s), { size: 12 * s, baseline: 'middle', fill: theme.fg }, fig)}</g>`,
      );
    } else {
      out.push(
        text(
          x,
          oy + top + plotH + 5,
          fitText(ctx, o.labels[i], bw * every - 2),
          { size: 12 * s, anchor: 'middle', baseline: 'top', fill: theme.fg },
          fig,
        ),
      );
    }
  }
}
