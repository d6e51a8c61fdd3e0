// x–y charts (xy-chart.js's drawXY) as panels of an SVG figure. Axis scales, ticks and tick labels
// are xy-chart.js's own, so the figure's axes are the canvas's.
import { scaleOf, tickText, ticksOf } from './xy-chart.js';
import { num, paint, scratchContext, text } from './svg-core.js';

/**
 * An x–y chart with drawXY's options and layout (axes, grid, ticks, labels, title, the vertical
 * marker, lines / markers / dashed series, the legend) as part of a figure, its top left at (ox, oy).
 * Points outside the axes are dropped rather than clipped (no clip path, so no id to collide).
 * @returns {{ w: number, h: number }}
 */
export function xyPanel(fig, o, { x: ox = 0, y: oy = 0, colors } = {}) {
  const { s } = fig;
  const width = o.width,
    height = o.height || 240;
  const { items, legendH } = legendRows(fig, o, width);
  const top = (o.title ? 24 : 8) + legendH,
    bottom = o.x.label ? 40 : 26;
  const g = { left: 48, right: width - 14, top, bottom: height - bottom };
  // What the parts below draw with: the plot area, its scales, the panel's origin.
  const P = {
    fig,
    o,
    g,
    ox,
    oy,
    width,
    height,
    colors,
    X: scaleOf(o.x, g.left, g.right),
    Y: scaleOf(o.y, g.bottom, g.top),
    out: [],
  };
  xyAxes(P);
  if (o.marker && Number.isFinite(o.marker.x)) xyMarker(P);
  xySeries(P);
  for (const { k, x, y } of items) {
    const q = o.series[k];
    const color = q.color || colors[k % colors.length];
    P.out.push(
      `<path fill="none" ${paint('stroke', color)} stroke-width="2.2"${q.dashed ? ' stroke-dasharray="4 3"' : ''} d="M${num(ox + x)} ${num(oy + y)}h16"/>`,
      text(ox + x + 21, oy + y, q.label, { size: 12 * s, baseline: 'middle', fill: fig.theme.fg }, fig),
    );
  }
  fig.body.push(P.out.join('\n'));
  return { w: width, h: height };
}

// The legend's items in rows (as xy-chart.js's legendLayout): where each labelled series goes.
function legendRows(fig, o, width) {
  const ctx = scratchContext();
  ctx.font = `${12 * fig.s}px ${fig.theme.font}`;
  const items = [];
  let lx = 48,
    row = 0;
  o.series.forEach((q, k) => {
    if (!q.label) return;
    const w = ctx.measureText(q.label).width + 21;
    if (lx > 48 && lx + w > width - 8) {
      lx = 48;
      row++;
    }
    items.push({ k, x: lx, y: (o.title ? 24 : 8) + 8 + row * 18 });
    lx += w + 17;
  });
  return { items, legendH: items.length ? (row + 1) * 18 + 4 : 0 };
}

// Grid, tick values, axis labels and the title.
function xyAxes({ fig, o, g, ox, oy, height, X, Y, out }) {
  const { theme, s } = fig;
  const grid = theme.dark ? 'rgba(255,255,255,0.13)' : 'rgba(0,0,0,0.11)';
  let d = '';
  const tick = { size: 10.5 * s, fill: theme.muted, mono: true };
  for (const v of ticksOf(o.y)) {
    const y = Math.round(Y(v)) + 0.5;
    d += `M${num(ox + g.left)} ${num(oy + y)}H${num(ox + g.right)}`;
    out.push(
      text(ox + g.left - 6, oy + y, tickText(o.y, v), { ...tick, anchor: 'end', baseline: 'middle' }, fig),
    );
  }
  for (const v of ticksOf(o.x)) {
    const x = Math.round(X(v)) + 0.5;
    d += `M${num(ox + x)} ${num(oy + g.top)}V${num(oy + g.bottom)}`;
    out.push(
      text(ox + x, oy + g.bottom + 5, tickText(o.x, v), { ...tick, anchor: 'middle', baseline: 'top' }, fig),
    );
  }
  out.unshift(`<path fill="none" ${paint('stroke', grid)} d="${d}"/>`);
  if (o.x.label)
    out.push(
      text(
        ox + (g.left + g.right) / 2,
        oy + height - 17,
        o.x.label,
        { size: 12 * s, anchor: 'middle', baseline: 'top', fill: theme.fg },
        fig,
      ),
    );
  if (o.y.label) {
    out.push(
      `<g transform="translate(${num(ox + 12)} ${num(oy + (g.top + g.bottom) / 2)}) rotate(-90)">${text(0, 0, o.y.label, { size: 12 * s, anchor: 'middle', baseline: 'middle', fill: theme.fg }, fig)}</g>`,
    );
  }
  if (o.title)
    out.push(
      text(ox + 6, oy + 5, o.title, { size: 12.5 * s, baseline: 'top', fill: theme.fg, weight: 600 }, fig),
    );
}

// The dashed vertical marker and its label (flipped to the left near the right edge).
function xyMarker({ fig, o, g, ox, oy, width, X, out }) {
  const { theme, s } = fig;
  const x = Math.round(X(o.marker.x)) + 0.5;
  out.push(
    `<path fill="none" ${paint('stroke', theme.accent)} stroke-width="1.5" stroke-dasharray="4 3" d="M${num(ox + x)} ${num(oy + g.top)}V${num(oy + g.bottom)}"/>`,
  );
  if (o.marker.label) {
    const flip = x > width - 90;
    out.push(
      text(
        ox + x + (flip ? -4 : 4),
        oy + g.top + 2,
        o.marker.label,
        { size: 11 * s, anchor: flip ? 'end' : 'start', baseline: 'top', fill: theme.accent },
        fig,
      ),
    );
  }
}

// Each series as a polyline and/or markers, its points outside the axes dropped.
function xySeries({ o, g, ox, oy, colors, X, Y, out }) {
  const inside = (px, py) => px >= g.left - 5 && px <= g.right + 5 && py >= g.top - 5 && py <= g.bottom + 5;
  o.series.forEach((q, k) => {
    const color = q.color || colors[k % colors.length];
    const pts = q.points
      .filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y))
      .map(([x, y]) => [X(x), Y(y)])
      .filter(([px, py]) => inside(px, py));
    if (q.line !== false && pts.length > 1) {
      out.push(
        `<polyline fill="none" ${paint('stroke', color)} stroke-width="${q.width || 2}" stroke-linejoin="round"${q.dashed ? ' stroke-dasharray="5 4"' : ''} points="${pts.map(([px, py]) => `${num(ox + px)},${num(oy + py)}`).join(' ')}"/>`,
      );
    }
    if (q.markers)
      out.push(
        `<g ${paint('fill', color)}>${pts.map(([px, py]) => `<circle cx="${num(ox + px)}" cy="${num(oy + py)}" r="3.6"/>`).join('')}</g>`,
      );
  });
}
