// The plane of <rope-explorer>, on its canvas and as SVG: one frequency pair of q rotated to
// positions 0…p (the arrow at p, a fading trail behind it) and k's pair at position 0 for reference;
// with its data table, the position slider's value and the readout on the pair's rotation.
import { h } from './base-element.js';
import { chartTable } from './a11y.js';
import { formatNumber, themeOf } from './draw-util.js';
import { pairColors } from './xy-chart.js';
import { paintFigure } from './paint-canvas.js';
import { paintSvg } from './paint-svg.js';

/** The two feature indices of frequency pair p of d features, in the `style` pairing ('half' | 'interleaved'). */
export function pairDims(style, p, d) {
  return style === 'half' ? [p, p + d / 2] : [2 * p, 2 * p + 1];
}

/** What the plane of `el` shows and its scale: the pair, q's position, the radius R that fits both arrows. */
export function planeFrame(el) {
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

/**
 * The plane's display list (display-list.js), its top left at (ox, oy) of the figure, text at font
 * scale s: axes, q's circle (dashed), the trail of q's pair at positions 0…position−1 fading
 * towards the past, k's pair at position 0 (a dashed arrow), q's pair at position (an arrow), the
 * title and the key to the two arrows. Also returns q's pair at position.
 */
export function planeList(el, f, { ox = 0, oy = 0, s: fs = 1 } = {}) {
  const { s, size, theme, d, p, pos, a, b, rq, R, pad, c } = f;
  const P = (x, y) => [ox + c + (x / R) * (c - pad), oy + c - (y / R) * (c - pad)];
  const axis = theme.dark ? 'rgba(255,255,255,0.3)' : 'rgba(0,0,0,0.3)';
  const { b: qc, a: kc } = pairColors(el);
  const segs = [
    [ox + pad, oy + c, 'H', ox + size - pad],
    [ox + c, oy + pad, 'V', oy + size - pad],
  ];
  const items = [
    { kind: 'rules', segs, stroke: axis },
    { kind: 'circle', cx: ox + c, cy: oy + c, r: (rq / R) * (c - pad), stroke: axis, dash: [3, 4] },
  ];
  const trail = [],
    alphas = [];
  for (let t = 0; t < pos; t++) {
    trail.push(...P(s.plane[t * d + a], s.plane[t * d + b]));
    alphas.push(0.12 + 0.45 * ((t + 1) / (pos + 1)));
  }
  items.push({ kind: 'dots', points: trail, r: 2.4, fill: qc, alphas });
  const qx = s.plane[pos * d + a],
    qy = s.plane[pos * d + b];
  const arrow = (to, color, width, dashed) => {
    const [x1, y1] = to;
    return { kind: 'arrow', x0: ox + c, y0: oy + c, x1, y1, color, width, dashed };
  };
  items.push(arrow(P(s.kPlane[a], s.kPlane[b]), kc, 2, true), arrow(P(qx, qy), qc, 2.6, false));
  const text = (x, y, str, fill, baseline) => ({
    kind: 'text',
    x,
    y,
    text: str,
    size: 12 * fs,
    baseline,
    fill,
  });
  const title = `pair ${p} (dims ${a}, ${b}) · q at position ${pos}`;
  items.push(
    { ...text(ox + 6, oy + 4, title, theme.fg, 'top'), weight: 600 },
    text(ox + 6, oy + size - 4, 'q (solid)', qc, 'bottom'),
    text(ox + 76, oy + size - 4, 'k at position 0 (dashed)', kc, 'bottom'),
  );
  return { items, qx, qy };
}

/** (a) The chosen pair of q at positions 0…position (trail), the arrow at position, k's pair at 0. */
export function drawPlane(el) {
  const f = planeFrame(el);
  let q;
  paintFigure(el._plane, f.size, f.size, f.theme, (ctx, theme, at) => {
    const r = planeList(el, f, at);
    if (!at) q = r;
    return r.items;
  });
  describePlane(el, f, q.qx, q.qy);
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

/** The plane of drawPlane as SVG shapes at (x0, y0) of the figure (the same display list). */
export function planeSVG(el, fig, x0, y0) {
  const f = planeFrame(el);
  fig.body.push(paintSvg(fig, planeList(el, f, { ox: x0, oy: y0, s: fig.s }).items));
  return { w: f.size, h: f.size, panel: { kind: 'plane' } };
}
