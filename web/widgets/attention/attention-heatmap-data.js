// The numbers behind <attention-heatmap>: precomputed weights as the element keeps them, and the
// scale of its query-row bar chart, the colour scale of its tiles (signed or not).
import { SIGNED_NOTE, colorOf } from '../figures/colormap.js';

export { SIGNED_NOTE };

/** The next of 0.05, 0.1, 0.2, 0.25, 0.5, 1 (and so on) at or above x. */
export function niceCeil(x) {
  if (!(x > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(x)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= x - 1e-12) return Math.min(1, m * p);
  return 1;
}

/** The next of 1, 2, 2.5, 5 (times a power of ten) at or above x: the axis of signed bars, not capped at 1. */
export function niceUp(x) {
  if (!(x > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(x)));
  for (const m of [1, 2, 2.5, 5]) if (m * p >= x * (1 - 1e-12)) return m * p;
  return 10 * p;
}

/**
 * The colour scale of the tiles `matrices`: [0, 1] (or [0, max] when every weight is under 0.5) on
 * the sequential `palette`; signed (`signed`, or any weight negative): symmetric ±max|a| on the
 * diverging map `diverging`, with 0 the neutral colour and the legend's caption saying so.
 */
export function heatmapDomain(matrices, { signed, palette, diverging }) {
  let max = 0,
    min = 0;
  for (const { data } of matrices)
    for (let i = 0; i < data.length; i++) {
      if (!Number.isFinite(data[i])) continue; // a masked or hidden cell
      if (data[i] > max) max = data[i];
      if (data[i] < min) min = data[i];
    }
  if (signed || min < 0) {
    const m = Math.max(max, -min, 1e-6);
    return { lo: -m, hi: m, map: diverging, caption: SIGNED_NOTE, signed: true };
  }
  return { lo: 0, hi: max > 0.5 ? 1 : Math.max(max, 1e-6), map: palette, signed: false };
}

/** Accepts flat or nested weights with shape (H, Tq, Tk) or (Tq, Tk). */
export function normalizeData(d) {
  const flat = Float32Array.from(Array.isArray(d.weights) ? d.weights.flat(3) : d.weights);
  const shape =
    d.shape ||
    (Array.isArray(d.weights) && Array.isArray(d.weights[0]?.[0])
      ? [d.weights.length, d.weights[0].length, d.weights[0][0].length]
      : [d.weights.length, d.weights[0]?.length ?? 1]);
  const [H, Tq, Tk] = shape.length === 3 ? shape : [1, ...shape];
  if (H * Tq * Tk !== flat.length)
    throw new Error(`data: shape ${shape.join('×')} does not match ${flat.length} weights`);
  const size = Tq * Tk;
  const perHead = Array.from({ length: H }, (_, i) => flat.subarray(i * size, (i + 1) * size));
  const mean = new Float32Array(size);
  for (const m of perHead) for (let i = 0; i < size; i++) mean[i] += m[i] / H;
  const labels = (l, n, p) =>
    Array.isArray(l) ? l.map(String) : Array.from({ length: n }, (_, i) => `${p}${i}`);
  return {
    H,
    Tq,
    Tk,
    flat,
    perHead,
    mean,
    queryTokens: labels(d.queryTokens, Tq, 'q'),
    keyTokens: labels(d.keyTokens, Tk, 'k'),
  };
}

/**
 * The bar chart's options (drawBars, less its width) for `row` of the tile of head `head` under
 * `domain`: signed bars in the map's own colours for the sign (its ends, as in the cells).
 */
export function barsOptions(domain, row, labels, what, head) {
  const signed = domain.signed;
  const top = signed ? niceUp(Math.max(...row.map(Math.abs))) : niceCeil(Math.max(...row));
  const headName = head === 'mean' ? 'mean over heads' : `head ${head}`;
  return {
    values: row,
    labels,
    maxValue: top,
    ...(signed
      ? {
          minValue: -top,
          color: colorOf(domain.map, 0.78, -1, 1),
          negativeColor: colorOf(domain.map, -0.78, -1, 1),
        }
      : {}),
    title: `${what}, ${headName}: ${signed ? 'its signed weights of the values' : 'where its attention goes'}`,
  };
}
