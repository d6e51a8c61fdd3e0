// The two charts of <rope-explorer>: (b) q·k against the relative offset δ = i − j, one line per
// frequency pair and the total; (c) the totals at absolute offsets 0, 100 and 1000, which coincide.
import { SERIES_COLORS } from './charts.js';
import { formatNumber, themeOf } from './draw-util.js';
import { drawXY } from './xy-chart.js';

export const SPAN = 32; // δ = −32 … 32
export const COMPARE = [0, 100, 1000]; // absolute offsets shown to coincide
const MAX_LINES = 6; // per-pair lines drawn (d > 12: a spread of pairs, the chosen one included)

/** (b) Per-pair contributions and the total against δ, at the offset attribute. */
export function drawLines(el, width) {
  const s = el._shown,
    P = s.d / 2,
    deltas = el.deltas,
    { total, pairs } = s.scores;
  const picked =
    P <= MAX_LINES
      ? Array.from({ length: P }, (_, p) => p)
      : [
          ...new Set([
            ...Array.from({ length: MAX_LINES - 1 }, (_, i) => Math.round((i * (P - 1)) / (MAX_LINES - 2))),
            el.pair,
          ]),
        ].sort((x, y) => x - y);
  let m = 0;
  for (const v of total) m = Math.max(m, Math.abs(v));
  for (const p of picked) for (const v of pairs[p]) m = Math.max(m, Math.abs(v));
  const series = [
    ...picked.map((p, i) => ({
      label: `pair ${p}`,
      color: SERIES_COLORS[i % 6],
      width: p === el.pair ? 2.6 : 1.3,
      points: deltas.map((x, t) => [x, pairs[p][t]]),
    })),
    {
      label: 'total q·k',
      color: themeOf(el).fg,
      width: 2.8,
      points: deltas.map((x, t) => [x, total[t]]),
    },
  ];
  drawXY(
    el._lines,
    (el._linesOpts = {
      host: el,
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
    }),
  );
  el._lines.setAttribute(
    'aria-label',
    `Line chart of q·k against δ from −32 to 32: ${picked.length} frequency pairs${picked.length < P ? ` of ${P}` : ''} and their total. ` +
      `At δ = 0 the total is ${formatNumber(total[SPAN], 4)}, the plain q·k.`,
  );
}

/** (c) The totals at absolute offsets 0, 100, 1000 on one chart. */
export function drawCompare(el, width) {
  const s = el._shown,
    deltas = el.deltas,
    c = themeOf(el);
  let m = 0;
  for (const t of s.compare) for (const v of t) m = Math.max(m, Math.abs(v));
  const looks = [
    { color: c.fg, width: 4 },
    { color: SERIES_COLORS[5], dashed: true, width: 2 },
    { color: SERIES_COLORS[4], line: false, markers: true },
  ];
  drawXY(
    el._compare,
    (el._compareOpts = {
      host: el,
      width,
      height: el._planeSize || 280,
      title: 'total q·k at absolute offsets 0, 100, 1000',
      series: s.compare.map((t, i) => ({
        label: `offset ${COMPARE[i]}`,
        ...looks[i],
        points: deltas.map((x, j) => [x, t[j]]),
      })),
      x: { min: -SPAN, max: SPAN, ticks: [-32, -16, 0, 16, 32], label: 'δ = i − j' },
      y: { min: -m * 1.08 || -1, max: m * 1.08 || 1 },
    }),
  );
  el._compare.setAttribute(
    'aria-label',
    `Line chart: the total q·k against δ with the earlier position at 0, 100 and 1000. The three curves coincide: ` +
      `the largest difference is ${s.maxDiff.toExponential(2)}.`,
  );
  el._diffOut.textContent =
    `Offsets 0, 100 and 1000 give the same scores: the largest |difference| over δ = −32…32 is ${s.maxDiff.toExponential(2)} ` +
    '(float32 rounding). RoPE makes q·k depend on i − j only.';
}
