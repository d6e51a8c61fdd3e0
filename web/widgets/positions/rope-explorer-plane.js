// The plane of <rope-explorer>, on its canvas and as SVG: one frequency pair of q rotated to
// positions 0…p (the arrow at p, a fading trail behind it) and k's pair at position 0 for reference;
// with its data table and the words on the pair's rotation. All of it is drawn from a frame
// (planeFrame): what the element shows, at its size, in its theme.
import { chartTable } from '../figures/a11y.js';
import { formatNumber } from '../figures/draw-util.js';
import { paintFigure } from '../figures/paint-canvas.js';
import { paintSvg } from '../figures/paint-svg.js';
import { pairDims } from './rope-explorer-data.js';

/**
 * What the plane shows and its scale: `shown` (the element's setting, ropeExplorer.shown), the
 * pair, q's position, the pairing style and the plane's size in CSS px; `theme` (themeOf) and
 * `colors` (xy-chart.js pairColors: b for q, a for k). Adds the pair's dims a, b and the radius R
 * that fits both arrows.
 */
export function planeFrame({ shown: s, pair: p, position: pos, style, size }, theme, colors) {
  const d = s.d,
    [a, b] = pairDims(style, p, d);
  const rq = Math.hypot(s.q[a], s.q[b]),
    rk = Math.hypot(s.k[a], s.k[b]);
  const R = Math.max(rq, rk, 1e-3) * 1.18,
    pad = 16,
    c = size / 2;
  return { s, size, theme, colors, d, p, pos, a, b, rq, R, pad, c };
}

/**
 * The plane's display list (display-list.js), its top left at (ox, oy) of the figure, text at font
 * scale s: axes, q's circle (dashed), the trail of q's pair at positions 0…position−1 fading
 * towards the past, k's pair at position 0 (a dashed arrow), q's pair at position (an arrow), the
 * title and the key to the two arrows. Also returns q's pair at position.
 */
export function planeList(f, { ox = 0, oy = 0, s: fs = 1 } = {}) {
  const { s, size, theme, colors, d, p, pos, a, b, rq, R, pad, c } = f;
  const P = (x, y) => [ox + c + (x / R) * (c - pad), oy + c - (y / R) * (c - pad)];
  const axis = theme.dark ? 'rgba(255,255,255,0.3)' : 'rgba(0,0,0,0.3)';
  const { b: qc, a: kc } = colors;
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

/**
 * (a) The frame's pair of q at positions 0…position (trail), the arrow at position, k's pair at 0,
 * painted on `canvas` with its aria-label and data table. Returns the readout on the pair:
 * { turn, share } (how fast it turns; its share of q·k).
 */
export function drawPlane(canvas, f) {
  let q;
  paintFigure(canvas, f.size, f.size, f.theme, (ctx, theme, at) => {
    const r = planeList(f, at);
    if (!at) q = r;
    return r.items;
  });
  return describePlane(canvas, f, q.qx, q.qy);
}

/** The plane's words: its aria-label and data table on `canvas`; returns the readout on the pair. */
function describePlane(canvas, { s, d, p, pos, a, b }, qx, qy) {
  const theta = s.base ** ((-2 * p) / d),
    angle = Math.atan2(qy, qx);
  const contrib = qx * s.kPlane[a] + qy * s.kPlane[b];
  canvas.setAttribute(
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
    canvas,
    `q's pair ${p} at positions 0 to ${pos}`,
    ['position', `feature ${a}`, `feature ${b}`, 'angle (rad)'],
    rows,
  );
  const wl = (2 * Math.PI) / theta;
  return {
    turn:
      `Pair ${p}: θ = ${formatNumber(theta, 6)} rad per position, one turn every ${wl < 1000 ? formatNumber(wl, 1) : Math.round(wl).toLocaleString('en')} positions. ` +
      `At position ${pos} q's pair has turned ${formatNumber(pos * theta, 3)} rad.`,
    share:
      `This pair's share of q·k with q at position ${pos} and k at 0 (δ = ${pos}): ${formatNumber(contrib, 4)}. ` +
      'Fast pairs (small p) spin and tell nearby offsets apart; slow pairs barely move and carry the content match.',
  };
}

/** The plane of drawPlane (frame f) as SVG shapes at (x0, y0) of the figure (the same display list). */
export function planeSVG(f, fig, x0, y0) {
  fig.body.push(paintSvg(fig, planeList(f, { ox: x0, oy: y0, s: fig.s }).items));
  return { w: f.size, h: f.size, panel: { kind: 'plane' } };
}
