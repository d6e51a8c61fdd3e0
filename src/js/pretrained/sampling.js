// Choosing the next token from a row of logits: greedy, or sampled with temperature → top-k → top-p
// (the order of transformers' logits warpers). Works on any vocabulary size without sorting it: top-k
// keeps a heap of k, top-p pops the nucleus off a heap built in O(V), and only what is kept is sorted.
// Ties go to the lower id everywhere.
import { AttentionError } from '../errors.js';
import { describe } from '../options.js';
import { argmax, softmaxTotal } from '../numeric.js';

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);

/** The sampling options of generate(), checked: nothing is silently wrapped or clamped. */
export function samplingOptions({ temperature = 0, topK = 0, topP = 1, seed = 0 }) {
  if (typeof temperature !== 'number' || !(temperature >= 0) || !Number.isFinite(temperature))
    throw invalid(`temperature must be a number >= 0, got ${describe(temperature)}`);
  if (!Number.isInteger(topK) || topK < 0)
    throw invalid(`topK must be an integer >= 0, got ${describe(topK)}`);
  if (typeof topP !== 'number' || !(topP > 0 && topP <= 1))
    throw invalid(`topP must be a number in (0, 1], got ${describe(topP)}`);
  if (!Number.isInteger(seed) || seed < 0 || seed >= 2 ** 32)
    throw invalid(`seed must be an integer in [0, 2^32), got ${describe(seed)}`);
  return { temperature, topK, topP, seed };
}

/** A chooser of next ids: (row of logits) → id; one seeded generator per call of generate. */
export function tokenChooser({ temperature, topK, topP, seed }) {
  if (temperature === 0) return argmax;
  const random = mulberry32(seed);
  return (row) => sample(row, temperature, topK, topP, random);
}

export { argmax };

// x ranks above y: larger logit first, the lower id on a tie.
const above = (row, x, y) => row[x] > row[y] || (row[x] === row[y] && x < y);

// One id from softmax(row / temperature) restricted to the top-k, then to the top-p nucleus.
function sample(row, temperature, topK, topP, random) {
  const ids = topK > 0 && topK < row.length ? topKIds(row, topK) : null;
  const pool = ids ?? Int32Array.from(row.keys());
  const max = row[ids ? ids[0] : argmax(row)];
  const weights = new Float64Array(pool.length);
  const total = softmaxTotal(row, max, { ids: pool, temperature, weights });
  const [kept, keptWeights, keptTotal] =
    topP < 1 ? nucleus(row, pool, weights, total, topP, Boolean(ids)) : [pool, weights, total];
  let u = random() * keptTotal;
  for (let k = 0; k < kept.length; k++) if ((u -= keptWeights[k]) < 0) return kept[k];
  return kept[kept.length - 1];
}

// The k best ids, best first: a min-heap of k over one pass of the row.
function topKIds(row, k) {
  const heap = new Int32Array(k);
  let n = 0;
  const worse = (a, b) => above(row, heap[b], heap[a]); // heap[a] ranks below heap[b]
  for (let j = 0; j < row.length; j++) {
    if (n < k) {
      heap[n] = j;
      siftUp(heap, n++, worse);
    } else if (above(row, j, heap[0])) {
      heap[0] = j;
      siftDown(heap, 0, n, worse);
    }
  }
  return Int32Array.from(heap).sort((x, y) => (above(row, x, y) ? -1 : 1));
}

// The smallest best-first prefix of `pool` whose probability reaches topP (at least one id).
// `sorted`: pool is already best first; otherwise the prefix is popped off a max-heap.
function nucleus(row, pool, weights, total, topP, sorted) {
  const order = sorted ? null : Int32Array.from(pool.keys());
  const better = (a, b) => above(row, pool[order[a]], pool[order[b]]);
  if (!sorted) for (let i = (order.length >> 1) - 1; i >= 0; i--) siftDown(order, i, order.length, better);
  const kept = [],
    keptWeights = [];
  let mass = 0,
    n = sorted ? 0 : order.length;
  for (let k = 0; k < pool.length && (kept.length === 0 || mass < topP * total); k++) {
    let at = k;
    if (!sorted) {
      at = order[0];
      order[0] = order[--n];
      siftDown(order, 0, n, better);
    }
    kept.push(pool[at]);
    keptWeights.push(weights[at]);
    mass += weights[at];
  }
  return [kept, keptWeights, mass];
}

// Binary heap helpers: `first(a, b)` says the entry at a belongs above the one at b.
function siftUp(h, i, first) {
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!first(i, p)) return;
    [h[i], h[p]] = [h[p], h[i]];
    i = p;
  }
}
function siftDown(h, i, n, first) {
  for (;;) {
    const l = 2 * i + 1,
      r = l + 1;
    let top = i;
    if (l < n && first(l, top)) top = l;
    if (r < n && first(r, top)) top = r;
    if (top === i) return;
    [h[i], h[top]] = [h[top], h[i]];
    i = top;
  }
}

// A seeded uniform generator in [0, 1) (mulberry32): the same seed, the same samples everywhere.
function mulberry32(a) {
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
