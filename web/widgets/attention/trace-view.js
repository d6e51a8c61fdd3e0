// Turns one trace step (any rank) into the 2-D matrix a widget shows: batch 0, the chosen head, the
// last two axes as rows × columns, with token labels where an axis runs over tokens.

/** Labels for an axis of length n: tokens for T_q/T_k axes, indices otherwise. */
function axisLabels(axis, n, r) {
  const fit = (tokens) =>
    Array.from({ length: n }, (_, i) => (i < tokens.length ? tokens[i] : `+${i - tokens.length}`));
  if (axis === 'T_k' || axis === 'S' || (/^T/.test(axis || '') && n === r.Tk && n !== r.Tq))
    return fit(r.keyTokens);
  if (/^T/.test(axis || '') || axis === 'L') return fit(r.queryTokens);
  return Array.from({ length: n }, (_, i) => String(i));
}

/**
 * @param {{ shape: number[], axes: string[], data: Float32Array }} step
 * @param {number} head
 * @param {{ queryTokens: string[], keyTokens: string[], Tq: number, Tk: number }} r  model result
 * @returns {{ rows, cols, data: Float32Array, rowAxis, colAxis, rowLabels, colLabels, hasHead: boolean, head: number }}
 */
export function matrixOf(step, head, r) {
  const shape = step.shape.length ? step.shape : [step.data.length];
  const axes = step.axes.length === shape.length ? step.axes : shape.map((_, i) => `dim${i}`);
  const rank = shape.length;
  const rows = rank >= 2 ? shape[rank - 2] : 1;
  const cols = shape[rank - 1];
  // Offset of the (rows, cols) block: index 0 on every leading axis except H (the chosen head).
  const hAxis = axes.indexOf('H');
  const hasHead = hAxis >= 0 && hAxis < rank - 2;
  // k and v of grouped-query attention hold fewer (key/value) heads: query head h reads h / group.
  const group = hasHead && r?.heads > shape[hAxis] ? r.heads / shape[hAxis] : 1;
  const h = hasHead ? Math.min(Math.max(0, Math.floor(head / group)), shape[hAxis] - 1) : 0;
  let offset = 0;
  for (let a = 0; a < rank - 2; a++) offset = offset * shape[a] + (a === hAxis ? h : 0);
  offset *= rows * cols;
  const rowAxis = rank >= 2 ? axes[rank - 2] : '';
  const colAxis = axes[rank - 1];
  return {
    rows,
    cols,
    data: step.data.subarray(offset, offset + rows * cols),
    rowAxis,
    colAxis,
    rowLabels: rank >= 2 ? axisLabels(rowAxis, rows, r) : [''],
    colLabels: axisLabels(colAxis, cols, r),
    hasHead,
    head: h,
  };
}
