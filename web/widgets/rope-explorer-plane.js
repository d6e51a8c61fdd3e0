// The plane of <rope-explorer>, on its canvas and as SVG: one frequency pair of q rotated to
// positions 0…p (the arrow at p, a fading trail behind it) and k's pair at position 0 for reference;
// with its data table, the position slider's value and the readout on the pair's rotation.
import { h } from './base-element.js';
import { chartTable } from './a11y.js';
import { formatNumber, themeOf } from './draw-util.js';
import { pairColors, prepareCanvas } from './xy-chart.js';
import { num, paint, svgArrow, svgText } from './svg.js';
import { canvasArrow } from './canvas-arrow.js';

/** The two feature indices of frequency pair p of d features, in the `style` pairing ('half' | 'interleaved'). */
export function pairDims(style, p, d) {
  return style === 'half' ? [p, p + d / 2] : [2 * p, 2 * p + 1];
}

/** What the plane of `el` shows and its scale: the pair, q's position, the radius R that fits both arrows. */
function planeFrame(el) {
  const s = el._shown,
    size = el._planeSize || 280,
    theme = themeOf(el);
  const d = s.d,
    p = el.pair,
    pos = el.position,
    [a, b] = pairDims(el.rotaryStyle, p, d);
  const rq = Math.hypot(s.q[a], s.q[b]),
    rk = Math.hypot(s.k[a], s.k[b]);
  const R = Math.max(rq, rk, 1e-3) * 1.18,
    pad = 16,
    c = size / 2;
  return { s, size, theme, d, p, pos, a, b, rq, R, pad, c };
}

/** (a) The chosen pair of q at positions 0…position (trail), the arrow at position, k's pair at 0. */
export function drawPlane(el) {
  const f = planeFrame(el);
  const { s, size, theme, d, p, pos, a, b, rq, R, pad, c } = f;
  const ctx = prepareCanvas(el._plane, size, size);
  if (theme.bg) {
    ctx.fillStyle = theme.bg;
    ctx.fillRect(0, 0, size, size);
  }
  const P = (x, y) => [c + (x / R) * (c - pad), c - (y / R) * (c - pad)];
  ctx.strokeStyle = theme.dark ? 'rgba(255,255,255,0.3)' : 'rgba(0,0,0,0.3)';
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(pad, c);
  ctx.lineTo(size - pad, c);
  ctx.moveTo(c, pad);
  ctx.lineTo(c, size - pad);
  ctx.stroke();
  ctx.setLineDash([3, 4]);
  ctx.beginPath();
  ctx.arc(c, c, (rq / R) * (c - pad), 0, 2 * Math.PI);
  ctx.stroke();
  ctx.setLineDash([]);
  const { b: qc, a: kc } = pairColors(el);
  for (let t = 0; t < pos; t++) {
    // the trail, fading towards the past
    const [x, y] = P(s.plane[t * d + a], s.plane[t * d + b]);
    ctx.globalAlpha = 0.12 + 0.45 * ((t + 1) / (pos + 1));
    ctx.fillStyle = qc;
    ctx.beginPath();
    ctx.arc(x, y, 2.4, 0, 2 * Math.PI);
    ctx.fill();
  }
  ctx.globalAlpha = 1;
  canvasArrow(ctx, [c, c], P(s.kPlane[a], s.kPlane[b]), kc, 2, { dashed: true });
  const qx = s.plane[pos * d + a],
    qy = s.plane[pos * d + b];
  canvasArrow(ctx, [c, c], P(qx, qy), qc, 2.6, { dashed: false });
  ctx.font = `600 12px ${theme.font}`;
  ctx.fillStyle = theme.fg;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'top';
  ctx.fillText(`pair ${p} (dims ${a}, ${b}) · q at position ${pos}`, 6, 4);
  ctx.font = `12px ${theme.font}`;
  ctx.textBaseline = 'bottom';
  ctx.fillStyle = qc;
  ctx.fillText('q (solid)', 6, size - 4);
  ctx.fillStyle = kc;
  ctx.fillText('k at position 0 (dashed)', 76, size - 4);
  describePlane(el, f, qx, qy);
}

/** The plane's words: its aria-label and data table, the slider's value, the readout on the pair. */
function describePlane(el, { s, d, p, pos, a, b }, qx, qy) {
  const theta = s.base ** ((-2 * p) / d),
    angle = Math.atan2(qy, qx);
  const contrib = qx * s.kPlane[a] + qy * s.kPlane[b];
  el._plane.setAttribute(
    'aria-label',
    `Plane of frequency pair ${p} (features ${a} and ${b}): q's pair rotated to position ${pos} ` +
      `is at angle ${formatNumber(angle, 3)} rad; k's pair at position 0 is drawn dashed. The trail shows positions 0 to ${pos}.`,
  );
  const every = Math.max(1, Math.ceil(pos / 64)),
    rows = [];
  for (let t = 0; t <= pos; t += every)
    rows.push([
      t,
      s.plane[t * d + a],
      s.plane[t * d + b],
      Math.atan2(s.plane[t * d + b], s.plane[t * d + a]),
    ]);
  chartTable(
    el._plane,
    `q's pair ${p} at positions 0 to ${pos}`,
    ['position', `feature ${a}`, `feature ${b}`, 'angle (rad)'],
    rows,
  );
  if (el.shadowRoot.activeElement !== el._slider) el._slider.value = String(pos);
  el._posOut.textContent = String(pos);
  const wl = (2 * Math.PI) / theta;
  el._readout.replaceChildren(
    h('span', {
      text:
        `Pair ${p}: θ = ${formatNumber(theta, 6)} rad per position, one turn every ${wl < 1000 ? formatNumber(wl, 1) : Math.round(wl).toLocaleString('en')} positions. ` +
        `At position ${pos} q's pair has turned ${formatNumber(pos * theta, 3)} rad.`,
    }),
    h('span', {
      class: 'terms',
      text:
        `This pair's share of q·k with q at position ${pos} and k at 0 (δ = ${pos}): ${formatNumber(contrib, 4)}. ` +
        'Fast pairs (small p) spin and tell nearby offsets apart; slow pairs barely move and carry the content match.',
    }),
  );
}

/** The plane of drawPlane as SVG shapes at (x0, y0) of the figure. */
export function planeSVG(el, fig, x0, y0) {
  const { s, size, theme, d, p, pos, a, b, rq, R, pad, c } = planeFrame(el);
  const P = (x, y) => [x0 + c + (x / R) * (c - pad), y0 + c - (y / R) * (c - pad)];
  const axis = theme.dark ? 'rgba(255,255,255,0.3)' : 'rgba(0,0,0,0.3)';
  const out = [
    `<path fill="none" ${paint('stroke', axis)} d="M${num(x0 + pad)} ${num(y0 + c)}H${num(x0 + size - pad)}M${num(x0 + c)} ${num(y0 + pad)}V${num(y0 + size - pad)}"/>`,
    `<circle cx="${num(x0 + c)}" cy="${num(y0 + c)}" r="${num((rq / R) * (c - pad))}" fill="none" ${paint('stroke', axis)} stroke-dasharray="3 4"/>`,
  ];
  const { b: qc, a: kc } = pairColors(el);
  let trail = '';
  for (let t = 0; t < pos; t++) {
    const [x, y] = P(s.plane[t * d + a], s.plane[t * d + b]);
    trail += `<circle cx="${num(x)}" cy="${num(y)}" r="2.4" fill-opacity="${+(0.12 + 0.45 * ((t + 1) / (pos + 1))).toFixed(3)}"/>`;
  }
  if (trail) out.push(`<g ${paint('fill', qc)}>${trail}</g>`);
  const [kx, ky] = P(s.kPlane[a], s.kPlane[b]),
    [qx, qy] = P(s.plane[pos * d + a], s.plane[pos * d + b]);
  out.push(
    svgArrow(x0 + c, y0 + c, kx, ky, kc, 2, { dashed: true }),
    svgArrow(x0 + c, y0 + c, qx, qy, qc, 2.6),
    svgText(fig, x0 + 6, y0 + 4, `pair ${p} (dims ${a}, ${b}) · q at position ${pos}`, {
      baseline: 'top',
      fill: theme.fg,
      weight: 600,
    }),
    svgText(fig, x0 + 6, y0 + size - 4, 'q (solid)', { baseline: 'bottom', fill: qc }),
    svgText(fig, x0 + 76, y0 + size - 4, 'k at position 0 (dashed)', { baseline: 'bottom', fill: kc }),
  );
  fig.body.push(out.join('\n'));
  return { w: size, h: size, panel: { kind: 'plane' } };
}
