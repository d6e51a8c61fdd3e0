// The two charts of <rope-explorer>: (b) q·k against the relative offset δ = i − j, one line per
// frequency pair and the total; (c) the totals at absolute offsets 0, 100 and 1000, which coincide.
// Each is made from what it shows: drawXY's options and the canvas's words, which drawChart applies.
import { SERIES_COLORS } from '../figures/charts.js';
import { formatNumber } from '../figures/draw-util.js';
import { drawXY } from '../figures/xy-chart.js';
import { COMPARE, SPAN } from './rope-explorer-data.js';

const MAX_LINES = 6; // per-pair lines drawn (d > 12: a spread of pairs, the chosen one included)

/** Draws a chart ({ opts, label } of linesChart or compareChart) on `canvas`; returns its options. */
export function drawChart(canvas, { opts, label }) {
  drawXY(canvas, opts);
  canvas.setAttribute('aria-label', label);
  return opts;
}

/**
 * (b) Per-pair contributions and the total against δ, at the setting's offset: `shown` is the
 * element's (with its scores), `pair` the chosen pair, `deltas` the δ axis, `fg` the theme's text
 * colour (the total's line), `host` the theme source, `width` in CSS px.
 */
export function linesChart({ shown: s, pair, deltas, fg, host, width }) {
  const P = s.d / 2,
    { total, pairs } = s.scores;
  const picked =
    P <= MAX_LINES
      ? Array.from({ length: P }, (_, p) => p)
      : [
          ...new Set([
            ...Array.from({ length: MAX_LINES - 1 }, (_, i) => Math.round((i * (P - 1)) / (MAX_LINES - 2))),
            pair,
          ]),
        ].sort((x, y) => x - y);
  let m = 0;
  for (const v of total) m = Math.max(m, Math.abs(v));
  for (const p of picked) for (const v of pairs[p]) m = Math.max(m, Math.abs(v));
  const series = [
    ...picked.map((p, i) => ({
      label: `pair ${p}`,
      color: SERIES_COLORS[i % 6],
      width: p === pair ? 2.6 : 1.3,
      points: deltas.map((x, t) => [x, pairs[p][t]]),
    })),
    { label: 'total q·k', color: fg, width: 2.8, points: deltas.map((x, t) => [x, total[t]]) },
  ];
  const opts = {
    host,
    width,
    height: 300,
    series,
    title: `q·k against the relative offset δ = i − j (earlier position ${s.offset})`,
    x: {
      min: -SPAN,
      max: SPAN,
      ticks: [-32, -24, -16, -8, 0, 8, 16, 24, 32],
      label: 'δ = i − j (query position − key position)',
    },
    y: { min: -m * 1.08 || -1, max: m * 1.08 || 1, label: 'contribution to q·k' },
    marker: { x: 0, label: 'δ = 0' },
  };
  const label =
    `Line chart of q·k against δ from −32 to 32: ${picked.length} frequency pairs${picked.length < P ? ` of ${P}` : ''} and their total. ` +
    `At δ = 0 the total is ${formatNumber(total[SPAN], 4)}, the plain q·k.`;
  return { opts, label };
}

/**
 * (c) The totals at absolute offsets 0, 100, 1000 on one chart, `height` tall (the plane's size);
 * the other arguments as for linesChart. Also returns `note`, the sentence under the charts.
 */
export function compareChart({ shown: s, deltas, fg, host, width, height }) {
  let m = 0;
  for (const t of s.compare) for (const v of t) m = Math.max(m, Math.abs(v));
  const looks = [
    { color: fg, width: 4 },
    { color: SERIES_COLORS[5], dashed: true, width: 2 },
    { color: SERIES_COLORS[4], line: false, markers: true },
  ];
  const opts = {
    host,
    width,
    height,
    title: 'total q·k at absolute offsets 0, 100, 1000',
    series: s.compare.map((t, i) => ({
      label: `offset ${COMPARE[i]}`,
      ...looks[i],
      points: deltas.map((x, j) => [x, t[j]]),
    })),
    x: { min: -SPAN, max: SPAN, ticks: [-32, -16, 0, 16, 32], label: 'δ = i − j' },
    y: { min: -m * 1.08 || -1, max: m * 1.08 || 1 },
  };
  const label =
    `Line chart: the total q·k against δ with the earlier position at 0, 100 and 1000. The three curves coincide: ` +
    `the largest difference is ${s.maxDiff.toExponential(2)}.`;
  const note =
    `Offsets 0, 100 and 1000 give the same scores: the largest |difference| over δ = −32…32 is ${s.maxDiff.toExponential(2)} ` +
    '(float32 rounding). RoPE makes q·k depend on i − j only.';
  return { opts, label, note };
}
