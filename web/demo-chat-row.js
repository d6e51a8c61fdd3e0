// The chat view's numbers (web/demo-chat.js): the attention row of one reply token over the tokens
// before it, from a forward's every-layer attention — one layer's heads, the mean over layers and
// heads, or the rollout. Plain arrays in and out (no page), so tests/js/chat-row.test.mjs checks them.

/**
 * The row of query `p` over keys 0 … p of a forward's attention `r` on T tokens, as the view `agg`
 * shows it: { weights, shape: [n, 1, p+1], signed } — layer `layer`'s n heads, or one tile (the mean
 * over layers and heads, or the rollout: `rollout` is the library's attentionRollout). Throws what a
 * view cannot show (a signed map averaged or rolled out).
 */
export function chatRow(r, T, p, { agg, layer, rollout }) {
  const heads = (l) => r.attention[l].length / (T * T);
  const rowOf = (a, h) => a.subarray(h * T * T + p * T, h * T * T + p * T + p + 1);
  const one = (weights) => ({ weights, shape: [1, 1, p + 1], signed: false });
  if (agg === 'layer') {
    const a = r.attention[layer],
      H = heads(layer);
    const weights = new Float32Array(H * (p + 1));
    for (let h = 0; h < H; h++) weights.set(rowOf(a, h), h * (p + 1));
    return { weights, shape: [H, 1, p + 1], signed: (r.kinds?.[layer] ?? 'attention') !== 'attention' };
  }
  const signedAt = (r.kinds ?? []).findIndex((k) => k !== 'attention');
  if (signedAt >= 0)
    throw new Error(
      `the ${agg === 'rollout' ? 'rollout' : 'mean over layers'} needs softmax attention in every layer: ` +
        `layer ${signedAt} is a ${r.kinds[signedAt]} layer (show one layer instead)`,
    );
  if (agg === 'rollout') {
    const tensors = r.attention.map((data, l) => ({ data, shape: [1, heads(l), T, T] }));
    const R = rollout(tensors).data;
    const at = (r.attention.length - 1) * T * T + p * T;
    return one(R.slice(at, at + p + 1));
  }
  const acc = new Float64Array(p + 1);
  let count = 0;
  r.attention.forEach((a, l) => {
    for (let h = 0; h < heads(l); h++, count++) rowOf(a, h).forEach((v, k) => (acc[k] += v));
  });
  return one(Float32Array.from(acc, (v) => v / count));
}
