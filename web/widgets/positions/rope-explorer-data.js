// The numbers behind <rope-explorer>: the seeded q and k, rotated by the library's applyRotary, and
// q·k against the relative offset δ = i − j, per frequency pair and in total, at an absolute offset.
// RopeScores keeps the scores it has computed, per setting and offset.
import { attn } from '../runtime.js';

export const MAX_POS = 256; // the position slider's range
export const SPAN = 32; // δ = −32 … 32
export const COMPARE = [0, 100, 1000]; // absolute offsets shown to coincide

/** The two feature indices of frequency pair p of d features, in the `style` pairing ('half' | 'interleaved'). */
export function pairDims(style, p, d) {
  return style === 'half' ? [p, p + d / 2] : [2 * p, 2 * p + 1];
}

/** `n` copies of vec rotated by applyRotary ({ base, style }): row t at position offset + t. */
export function rotatedRows(vec, n, offset, { base, style }) {
  const d = vec.length,
    x = new Float32Array(n * d);
  for (let t = 0; t < n; t++) x.set(vec, t * d);
  return attn.applyRotary(new attn.Tensor(x, [n, d]), { base, style, offset }).data; // (n, d)
}

/**
 * What one setting { d, base, style, seed, offset } shows: its key, q and k (rows 0 and 1 of
 * seededNormal([2, d], seed)), q's rotations to positions 0 … MAX_POS (plane) and k's at 0 (kPlane).
 * Throws on an odd d, or what the library refuses.
 */
export function ropeSetting({ d, base, style, seed, offset }) {
  if (d % 2) throw new Error(`d must be even (RoPE rotates pairs of features), got ${d}`);
  const qk = attn.seededNormal([2, d], seed).data; // (2, d): q, k
  const rot = { base, style };
  const plane = rotatedRows(qk.subarray(0, d), MAX_POS + 1, 0, rot);
  const kPlane = rotatedRows(qk.subarray(d), 1, 0, rot);
  return {
    key: `${d}|${base}|${style}|${seed}`,
    d,
    base,
    style,
    seed,
    offset,
    q: Float32Array.from(qk.subarray(0, d)),
    k: Float32Array.from(qk.subarray(d)),
    plane,
    kPlane,
  };
}

/** The largest |difference| of the totals at COMPARE's later offsets from the first one's. */
export function maxDifference(totals) {
  let maxDiff = 0;
  for (const c of totals.slice(1))
    for (let t = 0; t < c.length; t++) maxDiff = Math.max(maxDiff, Math.abs(c[t] - totals[0][t]));
  return maxDiff;
}

/** The scores of q·k over δ, computed once per setting and offset. */
export class RopeScores {
  #cache = new Map();

  /** Forgets every score (the setting changed). */
  clear() {
    this.#cache.clear();
  }

  /**
   * { total: Float32Array(65), pairs: Float64Array[] } for the setting s (ropeSetting) at an absolute
   * offset, rotated with `rot` ({ base, style }).
   */
  at(s, offset, rot) {
    const key = `${s.key}|${offset}`;
    if (this.#cache.has(key)) return this.#cache.get(key);
    const d = s.d,
      P = d / 2,
      n = SPAN + 1;
    const Rq = rotatedRows(s.q, n, offset, rot),
      Rk = rotatedRows(s.k, n, offset, rot); // (33, d) each
    const total = new Float32Array(2 * SPAN + 1),
      pairs = Array.from({ length: P }, () => new Float64Array(2 * SPAN + 1));
    for (let t = 0; t <= 2 * SPAN; t++) {
      const delta = t - SPAN,
        i = Math.max(delta, 0),
        j = Math.max(-delta, 0);
      let sum = 0;
      for (let p = 0; p < P; p++) {
        const [a, b] = pairDims(rot.style, p, d);
        const c = Rq[i * d + a] * Rk[j * d + a] + Rq[i * d + b] * Rk[j * d + b];
        pairs[p][t] = c;
        sum += c;
      }
      total[t] = sum;
    }
    const out = { total, pairs };
    this.#cache.set(key, out);
    return out;
  }
}
