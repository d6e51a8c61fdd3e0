// The numbers of <rope-explorer> as its CSV and JSON exports: per δ, each frequency pair's share of
// q·k, the total, and the totals at the compared absolute offsets. Made from what the element shows
// (its `shown`: the setting with its scores, compare and maxDiff) and the δ axis.
import { COMPARE } from './rope-explorer-data.js';

/** One line per δ: delta, pair_0 … pair_{d/2−1}, total, total_offset_0, _100, _1000. */
export function ropeCSV(s, deltas) {
  const P = s.d / 2;
  const lines = [
    [
      'delta',
      ...Array.from({ length: P }, (_, p) => `pair_${p}`),
      'total',
      ...COMPARE.map((o) => `total_offset_${o}`),
    ].join(','),
  ];
  deltas.forEach((x, t) =>
    lines.push(
      [x, ...s.scores.pairs.map((c) => c[t]), s.scores.total[t], ...s.compare.map((c) => c[t])].join(','),
    ),
  );
  return lines.join('\n') + '\n';
}

/** The JSON export's record (before the element adds its state). */
export function ropeRecord(s, deltas) {
  return {
    kind: 'rope',
    d: s.d,
    base: s.base,
    style: s.style,
    offset: s.offset,
    seed: s.seed,
    q: Array.from(s.q),
    k: Array.from(s.k),
    deltas,
    pairs: s.scores.pairs.map((c) => Array.from(c)),
    total: Array.from(s.scores.total),
    offsets: Object.fromEntries(COMPARE.map((o, i) => [o, Array.from(s.compare[i])])),
    maxDifference: s.maxDiff,
  };
}
