// <patching-view>'s agreement of exact and attribution patching: the Pearson correlation of the two
// grids (one pair per component entry) and the scatter that shows them (xy-chart.js's drawXY: one
// display list for its canvas and its SVG panel, an accessible table of the points beside it).
import { drawXY } from '../figures/xy-chart.js';
import { formatNumber } from '../figures/draw-util.js';

/**
 * Pearson's r of the pairs (a[i], b[i]) where both are finite; NaN with fewer than two pairs or when
 * either side does not vary. Accumulated in doubles, from the means (two passes).
 */
export function pearson(a, b) {
  const xs = [],
    ys = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++)
    if (Number.isFinite(a[i]) && Number.isFinite(b[i])) {
      xs.push(a[i]);
      ys.push(b[i]);
    }
  const n = xs.length;
  if (n < 2) return NaN;
  const mx = xs.reduce((s, v) => s + v, 0) / n,
    my = ys.reduce((s, v) => s + v, 0) / n;
  let sxy = 0,
    sxx = 0,
    syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = xs[i] - mx,
      dy = ys[i] - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  return sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : NaN;
}

/** The sentence that prints the correlation r of the n entries compared. */
export function agreementText(r, n) {
  const value = Number.isFinite(r) ? formatNumber(r, 3) : 'undefined (a side does not vary)';
  return `Agreement of attribution with exact patching over ${n} entries: Pearson correlation r = ${value}.`;
}

/**
 * drawXY's options for the scatter of shown `s` (exact on x, attribution on y; one point per entry,
 * the dashed line y = x where they would agree), `width` px wide.
 */
export function scatterOptions(host, s, width) {
  const points = [];
  for (let i = 0; i < s.exact.length; i++)
    if (Number.isFinite(s.exact[i]) && Number.isFinite(s.attribution[i]))
      points.push([s.exact[i], s.attribution[i]]);
  let lo = 0,
    hi = 1;
  for (const [x, y] of points) {
    lo = Math.min(lo, x, y);
    hi = Math.max(hi, x, y);
  }
  const pad = (hi - lo) * 0.05;
  const axis = (label) => ({ min: lo - pad, max: hi + pad, label });
  return {
    host,
    width,
    height: Math.min(260, Math.max(200, width * 0.6)),
    x: axis('exact (activation patching)'),
    y: axis('attribution patching'),
    title: 'Attribution against exact, one point per entry',
    series: [
      { label: 'entries', points, markers: true, line: false },
      {
        label: 'y = x',
        points: [
          [lo - pad, lo - pad],
          [hi + pad, hi + pad],
        ],
        dashed: true,
        line: true,
      },
    ],
  };
}

/** Draws the scatter of shown `s` on `canvas` (as wide as `host` allows); returns its drawXY options (the SVG export draws them again). */
export function drawScatter(host, canvas, s) {
  const width = Math.min(host.contentWidth, 420);
  const options = scatterOptions(host, s, width);
  canvas.hidden = false;
  canvas.setAttribute(
    'aria-label',
    `Scatter of ${options.series[0].points.length} entries: exact patching across, attribution patching up.`,
  );
  drawXY(canvas, options);
  return options;
}
