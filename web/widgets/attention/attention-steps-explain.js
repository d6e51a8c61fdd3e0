// How <attention-steps> reads a cell out: its axes in words, and for some steps how its value is
// made (q·k term by term, the scaling, the mask, a row's sum, the weighted values).
import { exactNumber, formatNumber } from '../figures/draw-util.js';
import { matrixOf } from './trace-view.js';

// How a step's axis is read out in a cell's accessible name.
const AXIS_WORDS = {
  T_q: 'query',
  T_k: 'key',
  T: 'token',
  d_model: 'feature',
  d_k: 'feature',
  d_v: 'feature',
};
export const axisName = (axis, fallback) => (axis ? (AXIS_WORDS[axis] ?? axis) : fallback);

/**
 * The readout lines for `cell` of the step shown (`cur`, the element's current) of the model result
 * `r`: the location with its exact value, and for some steps how it is made.
 */
export function explainStepCell(cur, r, cell) {
  const where = `${axisWord(cur.rowAxis, cell.rowLabel, cell.row)}, ${axisWord(cur.colAxis, cell.colLabel, cell.col)}`;
  const head = cur.hasHead ? `head ${cur.head} · ` : '';
  const main = `${head}${where} = ${exactNumber(cell.value)}`;
  let detail = '';
  const row = (name, i) => {
    const mm = matrixOf(r.byName[name], cur.head, r);
    return mm.data.subarray(i * mm.cols, (i + 1) * mm.cols);
  };
  if (cur.name === 'scores' && r.byName.q && r.byName.k) {
    // With RoPE the scores are the rotated q and k's products.
    const q = row(r.byName.q_rotated ? 'q_rotated' : 'q', cell.row),
      k = row(r.byName.k_rotated ? 'k_rotated' : 'k', cell.col);
    const terms = Array.from(q, (qd, d) => `(${formatNumber(qd, 3)})(${formatNumber(k[d], 3)})`);
    let sum = 0;
    for (let d = 0; d < q.length; d++) sum += q[d] * k[d];
    const shown =
      terms.length > 24
        ? [...terms.slice(0, 16), `… ${terms.length - 20} more terms …`, ...terms.slice(-4)]
        : terms;
    detail = `q_${cell.row} · k_${cell.col} = ${shown.join(' + ')}\n= ${formatNumber(sum, 6)}  (${q.length} terms, d_k = ${q.length})`;
  } else if (cur.name === 'scaled' && r.byName.scores) {
    const c = r.config,
      s = row('scores', cell.row)[cell.col];
    const scale = (c.scaling ? 1 / Math.sqrt(r.dk) : 1) / c.temperature;
    const how = c.scaling ? `1/√${r.dk}` : '1';
    detail = `S'_${cell.row},${cell.col} = S × ${how}${c.temperature !== 1 ? `/${c.temperature}` : ''} = ${formatNumber(s, 4)} × ${formatNumber(scale, 4)} = ${formatNumber(s * scale, 4)}`;
  } else if (cur.name === 'masked') {
    detail =
      cell.value === -Infinity
        ? 'masked: −∞, so its softmax weight will be exactly 0'
        : 'may attend: the scaled score passes through unchanged';
  } else if (cur.name === 'weights' || cur.name === 'dropped') {
    let sum = 0;
    const w = cur.data.subarray(cell.row * cur.cols, (cell.row + 1) * cur.cols);
    for (const v of w) sum += v;
    detail = `row ${cell.row} (“${cell.rowLabel}”) sums to ${exactNumber(sum)}`;
  } else if (cur.name === 'context' && r.byName.v) {
    const a = row(r.byName.dropped ? 'dropped' : 'weights', cell.row);
    const vm = matrixOf(r.byName.v, cur.head, r);
    const terms = Array.from(
      a,
      (aj, j) => `(${formatNumber(aj, 3)})(${formatNumber(vm.data[j * vm.cols + cell.col], 3)})`,
    );
    const shown =
      terms.length > 16
        ? [...terms.slice(0, 12), `… ${terms.length - 14} more …`, ...terms.slice(-2)]
        : terms;
    detail = `c_${cell.row},${cell.col} = Σ_j A_${cell.row},j · v_j,${cell.col} = ${shown.join(' + ')}`;
  }
  return { main, detail };
}

/** "query “cat” (2)", "key “mat” (5)", "dim 3" for a readout. */
function axisWord(axis, label, index) {
  if (axis === 'T_q' || axis === 'T') return `query “${label}” (${index})`;
  if (axis === 'T_k') return `key “${label}” (${index})`;
  return `${axis && axis !== 'B' ? `${axis} ` : ''}dim ${index}`;
}
