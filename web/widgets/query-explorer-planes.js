// The two planes of <query-explorer>, on its canvases and as SVG: the query and the keys (the key
// plane, where the query is dragged), and the values with the output, their weighted average.
import { SERIES_COLORS } from './charts.js';
import { formatNumber, themeOf } from './draw-util.js';
import { prepareCanvas } from './xy-chart.js';
import { num, paint, svgArrow, svgText } from './svg.js';
import { canvasArrow, canvasLabel } from './canvas-arrow.js';

export const RANGE = 3; // sliders and the key plane span −3 … 3

/** Axes, grid and a pixel mapping for a square plane over [lo, hi]² on `el`'s canvas. */
function axes(el, canvas, size, lo, hi) {
  const theme = themeOf(el);
  const ctx = prepareCanvas(canvas, size, size);
  if (theme.bg) {
    ctx.fillStyle = theme.bg;
    ctx.fillRect(0, 0, size, size);
  }
  const pad = 14;
  const P = (x, y) => [
    pad + ((x - lo) / (hi - lo)) * (size - 2 * pad),
    size - pad - ((y - lo) / (hi - lo)) * (size - 2 * pad),
  ];
  ctx.strokeStyle = theme.dark ? 'rgba(255,255,255,0.10)' : 'rgba(0,0,0,0.08)';
  ctx.lineWidth = 1;
  for (let v = Math.ceil(lo); v <= hi; v++) {
    const [x0, y0] = P(v, lo),
      [x1, y1] = P(lo, v);
    ctx.beginPath();
    ctx.moveTo(x0, y0);
    ctx.lineTo(x0, pad);
    ctx.stroke();
    ctx.beginPath();
    ctx.moveTo(x1, y1);
    ctx.lineTo(size - pad, y1);
    ctx.stroke();
  }
  ctx.strokeStyle = theme.dark ? 'rgba(255,255,255,0.35)' : 'rgba(0,0,0,0.35)';
  if (lo <= 0 && hi >= 0) {
    const [ox, oy] = P(0, 0);
    ctx.beginPath();
    ctx.moveTo(pad, oy);
    ctx.lineTo(size - pad, oy);
    ctx.moveTo(ox, pad);
    ctx.lineTo(ox, size - pad);
    ctx.stroke();
  }
  return { ctx, theme, P, pad, lo, hi };
}

/** The query and the keys (arrows as thick as their weights) on the key plane, which the query is dragged in. */
export function drawKeyPlane(el, size) {
  const s = el._shown;
  const g = (el._keyGeo = axes(el, el._keyCanvas, size, -RANGE, RANGE));
  const { ctx, theme, P } = g;
  const o = P(0, 0);
  s.K.forEach((k, j) => {
    const w = s.result.weights[j];
    const tip = P(k[0], k[1]);
    canvasArrow(ctx, o, tip, SERIES_COLORS[j % SERIES_COLORS.length], 1.2 + 5 * w, { headBase: 6 });
    const len = Math.hypot(k[0], k[1]) || 1;
    canvasLabel(
      ctx,
      theme,
      `${s.labels[j]} ${formatNumber(w, 2)}`,
      P(k[0] + (k[0] / len) * 0.45, k[1] + (k[1] / len) * 0.45),
      SERIES_COLORS[j % SERIES_COLORS.length],
    );
  });
  const qt = P(s.q[0], s.q[1]);
  canvasArrow(ctx, o, qt, theme.fg, 2.6, { headBase: 6 });
  ctx.beginPath();
  ctx.arc(qt[0], qt[1], 6, 0, 2 * Math.PI);
  ctx.fillStyle = theme.accent;
  ctx.fill();
  canvasLabel(ctx, theme, 'q', [qt[0] + 12, qt[1] - 12], theme.fg);
  el._keyCanvas.setAttribute(
    'aria-label',
    `Plane with the query q = (${s.q.map((x) => formatNumber(x, 2)).join(', ')}) and ${s.K.length} key arrows whose thickness is their weight. ` +
      'Arrow keys move the query by 0.1.',
  );
}

/** The values (dots as large as their weights) and the output, their weighted average. */
export function drawValuePlane(el, size) {
  const s = el._shown;
  const all = [...s.V.flat(), ...s.result.output, 0];
  const lo = Math.floor(Math.min(...all) - 0.5),
    hi = Math.ceil(Math.max(...all) + 0.5);
  const { ctx, theme, P } = axes(el, el._valueCanvas, size, Math.min(lo, -0.5), Math.max(hi, lo + 2));
  const out = P(s.result.output[0], s.result.output[1]);
  // Thin lines from the output to each value, the weights as the dots' areas.
  s.V.forEach((v, j) => {
    const p = P(v[0], v[1]),
      color = SERIES_COLORS[j % SERIES_COLORS.length];
    ctx.strokeStyle = color;
    ctx.globalAlpha = 0.35 + 0.65 * s.result.weights[j];
    ctx.lineWidth = 1 + 3 * s.result.weights[j];
    ctx.beginPath();
    ctx.moveTo(out[0], out[1]);
    ctx.lineTo(p[0], p[1]);
    ctx.stroke();
    ctx.globalAlpha = 1;
    ctx.fillStyle = color;
    ctx.beginPath();
    ctx.arc(p[0], p[1], 3 + 9 * Math.sqrt(s.result.weights[j]), 0, 2 * Math.PI);
    ctx.fill();
    canvasLabel(ctx, theme, `v(${s.labels[j]})`, [p[0], p[1] - 18], color);
  });
  ctx.fillStyle = theme.accent;
  ctx.strokeStyle = theme.fg;
  ctx.lineWidth = 2;
  ctx.beginPath();
  ctx.moveTo(out[0], out[1] - 8);
  ctx.lineTo(out[0] + 8, out[1]);
  ctx.lineTo(out[0], out[1] + 8);
  ctx.lineTo(out[0] - 8, out[1]);
  ctx.closePath();
  ctx.fill();
  ctx.stroke();
  canvasLabel(ctx, theme, 'output', [out[0], out[1] + 19], theme.fg);
  el._valueCanvas.setAttribute(
    'aria-label',
    `Plane with the ${s.V.length} value vectors and the output (${s.result.output.map((x) => formatNumber(x, 2)).join(', ')}), their weighted average.`,
  );
}

/** axes() as SVG: grid, axes; returns the value → figure mapping. */
function axesSVG(out, theme, x0, y0, size, lo, hi) {
  const pad = 14;
  const P = (x, y) => [
    x0 + pad + ((x - lo) / (hi - lo)) * (size - 2 * pad),
    y0 + size - pad - ((y - lo) / (hi - lo)) * (size - 2 * pad),
  ];
  let d = '';
  for (let v = Math.ceil(lo); v <= hi; v++) {
    const [xa, ya] = P(v, lo),
      [xb, yb] = P(lo, v);
    d += `M${num(xa)} ${num(ya)}V${num(y0 + pad)}M${num(xb)} ${num(yb)}H${num(x0 + size - pad)}`;
  }
  out.push(
    `<path fill="none" ${paint('stroke', theme.dark ? 'rgba(255,255,255,0.10)' : 'rgba(0,0,0,0.08)')} d="${d}"/>`,
  );
  if (lo <= 0 && hi >= 0) {
    const [ox, oy] = P(0, 0);
    out.push(
      `<path fill="none" ${paint('stroke', theme.dark ? 'rgba(255,255,255,0.35)' : 'rgba(0,0,0,0.35)')} d="M${num(x0 + pad)} ${num(oy)}H${num(x0 + size - pad)}M${num(ox)} ${num(y0 + pad)}V${num(y0 + size - pad)}"/>`,
    );
  }
  return P;
}

/** drawKeyPlane as SVG shapes at (x0, y0) of the figure. */
export function keyPlaneSVG(el, fig, x0, y0, size) {
  const s = el._shown,
    theme = themeOf(el),
    out = [];
  const P = axesSVG(out, theme, x0, y0, size, -RANGE, RANGE);
  const [ox, oy] = P(0, 0);
  const label = (t, [x, y], color) =>
    svgText(fig, x, y, t, {
      anchor: 'middle',
      baseline: 'middle',
      fill: color,
      weight: 600,
      halo: theme.bgSolid,
    });
  s.K.forEach((k, j) => {
    const w = s.result.weights[j],
      color = SERIES_COLORS[j % SERIES_COLORS.length];
    const [tx, ty] = P(k[0], k[1]);
    out.push(svgArrow(ox, oy, tx, ty, color, 1.2 + 5 * w, { headBase: 6 }));
    const len = Math.hypot(k[0], k[1]) || 1;
    out.push(
      label(
        `${s.labels[j]} ${formatNumber(w, 2)}`,
        P(k[0] + (k[0] / len) * 0.45, k[1] + (k[1] / len) * 0.45),
        color,
      ),
    );
  });
  const [qx, qy] = P(s.q[0], s.q[1]);
  out.push(
    svgArrow(ox, oy, qx, qy, theme.fg, 2.6, { headBase: 6 }),
    `<circle cx="${num(qx)}" cy="${num(qy)}" r="6" ${paint('fill', theme.accent)}/>`,
    label('q', [qx + 12, qy - 12], theme.fg),
  );
  fig.body.push(out.join('\n'));
  return { w: size, h: size, panel: { kind: 'plane' } };
}

/** drawValuePlane as SVG shapes at (x0, y0) of the figure. */
export function valuePlaneSVG(el, fig, x0, y0, size) {
  const s = el._shown,
    theme = themeOf(el),
    out = [];
  const all = [...s.V.flat(), ...s.result.output, 0];
  const lo = Math.floor(Math.min(...all) - 0.5),
    hi = Math.ceil(Math.max(...all) + 0.5);
  const P = axesSVG(out, theme, x0, y0, size, Math.min(lo, -0.5), Math.max(hi, lo + 2));
  const [ox, oy] = P(s.result.output[0], s.result.output[1]);
  const label = (t, [x, y], color) =>
    svgText(fig, x, y, t, {
      anchor: 'middle',
      baseline: 'middle',
      fill: color,
      weight: 600,
      halo: theme.bgSolid,
    });
  s.V.forEach((v, j) => {
    const [px, py] = P(v[0], v[1]),
      color = SERIES_COLORS[j % SERIES_COLORS.length],
      w = s.result.weights[j];
    out.push(
      `<path fill="none" ${paint('stroke', color)} stroke-opacity="${+(0.35 + 0.65 * w).toFixed(3)}" stroke-width="${num(1 + 3 * w)}" stroke-linecap="round" d="M${num(ox)} ${num(oy)}L${num(px)} ${num(py)}"/>`,
      `<circle cx="${num(px)}" cy="${num(py)}" r="${num(3 + 9 * Math.sqrt(w))}" ${paint('fill', color)}/>`,
      label(`v(${s.labels[j]})`, [px, py - 18], color),
    );
  });
  out.push(
    `<path ${paint('fill', theme.accent)} ${paint('stroke', theme.fg)} stroke-width="2" d="M${num(ox)} ${num(oy - 8)}L${num(ox + 8)} ${num(oy)}L${num(ox)} ${num(oy + 8)}L${num(ox - 8)} ${num(oy)}z"/>`,
    label('output', [ox, oy + 19], theme.fg),
  );
  fig.body.push(out.join('\n'));
  return { w: size, h: size, panel: { kind: 'plane' } };
}
