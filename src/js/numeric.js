// The small numeric helpers of the JavaScript side, written once: the largest entry of a row (and its
// index) and the softmax of a row of logits (max subtracted, exponentials summed in index order, then
// divided), in double precision. Callers that compare numbers depend on this exact order of operations.

/** The largest entry of a row (−Infinity for an empty row; NaN entries are passed over). */
export function rowMax(row) {
  let max = -Infinity;
  for (const v of row) if (v > max) max = v;
  return max;
}

/** The index of the largest entry of a row (the first on a tie). */
export function argmax(row) {
  let best = 0;
  for (let j = 1; j < row.length; j++) if (row[j] > row[best]) best = j;
  return best;
}

/** One unnormalised softmax term: exp((v − max) / temperature). */
export const softmaxTerm = (v, max, temperature = 1) => Math.exp((v - max) / temperature);

/**
 * The sum of the softmax terms of a row (softmaxTerm of each entry, or of the entries `ids` in their
 * order), added in that order; each term is also stored in `weights` (k-th id at k) when given.
 */
export function softmaxTotal(row, max, { ids = null, temperature = 1, weights = null } = {}) {
  let total = 0;
  const n = ids ? ids.length : row.length;
  for (let k = 0; k < n; k++) {
    const w = softmaxTerm(row[ids ? ids[k] : k], max, temperature);
    if (weights) weights[k] = w;
    total += w;
  }
  return total;
}

/** softmax(row)[index]: one probability of a row of logits. */
export function softmaxAt(row, index) {
  const max = rowMax(row);
  return softmaxTerm(row[index], max) / softmaxTotal(row, max);
}
