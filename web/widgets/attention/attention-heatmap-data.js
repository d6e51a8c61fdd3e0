// The numbers behind <attention-heatmap>: precomputed weights as the element keeps them, and the
// scale of its query-row bar chart.

/** The next of 0.05, 0.1, 0.2, 0.25, 0.5, 1 (and so on) at or above x. */
export function niceCeil(x) {
  if (!(x > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(x)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= x - 1e-12) return Math.min(1, m * p);
  return 1;
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
