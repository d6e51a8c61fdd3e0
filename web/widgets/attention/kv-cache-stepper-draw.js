// What <kv-cache-stepper> draws for one state, as plain values: each heatmap's HeatmapView options
// (which HeatmapView turns into its display list, painted on the canvas and in the SVG), its width,
// accessible name and note, and the texts of the summary, status, cost and check. Functions of their
// arguments only; kv-cache-stepper-view.js puts the results on screen.
//
// `s` is a session's config { E, H, Hkv, T, dk, rope, seed, x } (kv-cache-stepper-state.js); t is the
// cache's length; map names are colormap.js's.

/** The sentence above the panels: the module and how it decodes x. */
export function summaryText(s) {
  return (
    `A seeded MultiHeadAttention (embedDim ${s.E}, ${s.H} query heads over ${s.Hkv} key/value head${s.Hkv > 1 ? 's' : ''}, ` +
    `d_k = ${s.dk}, ${s.rope ? 'RoPE' : 'no RoPE'}, seed ${s.seed}) decodes x (${s.T} tokens) with createCache({ maxLength: ${s.T} }). ` +
    'Each step projects only the new token, appends its key and value to the cache, and lets its query attend over every cached key.'
  );
}

/** The summary in place of the panels when the settings make no valid module. */
export function invalidText({ heads, kvHeads, embedDim }) {
  return `${heads} query heads over ${kvHeads} key/value heads with embed-dim ${embedDim}: not a valid module.`;
}

/** The status line beside the controls. */
export function statusText(s, t) {
  return `cache.length = ${t} of ${s.T}`;
}

/** The K/V head picker's options: [{ value, text }], one per key/value head. */
export function headChoices(s) {
  const size = s.H / s.Hkv;
  return Array.from({ length: s.Hkv }, (_, i) => ({
    value: String(i),
    text: `${i} (query heads ${i * size}–${(i + 1) * size - 1})`,
  }));
}

/** x, one row per token, the row fed next (t) outlined: { width, opts, label }. */
export function xPanel(s, t, W, map) {
  let mx = 0;
  for (const v of s.x) mx = Math.max(mx, Math.abs(v));
  return {
    width: Math.min(W, 520),
    opts: {
      data: s.x,
      rows: s.T,
      cols: s.E,
      rowLabels: Array.from({ length: s.T }, (_, i) => `token ${i}`),
      colLabels: Array.from({ length: s.E }, (_, i) => String(i)),
      rowAxis: 'token',
      colAxis: 'feature',
      domain: { lo: -mx, hi: mx, map },
      values: 'never',
      maxCell: 22,
      minRowHeight: 0,
      legend: false,
      selectedRow: t < s.T ? t : undefined,
      title: t < s.T ? `x (${s.T} × ${s.E}): token ${t} is next` : `x (${s.T} × ${s.E}): every token fed`,
    },
    label:
      `Heatmap of the input sequence x: ${s.T} tokens by ${s.E} features. ` +
      (t < s.T ? `Token ${t} is fed next.` : 'Every token has been fed.') +
      ' Arrow keys move between cells.',
  };
}

/** The labels of the cached positions 0 … t − 1. */
export function positionLabels(t) {
  return Array.from({ length: t }, (_, i) => `pos ${i}`);
}

/** The cached keys of K/V head g, (t, d_k), the new row outlined: { width, opts, label, note }. */
export function keysPanel(s, keys, { t, g, W, map }) {
  const size = s.H / s.Hkv,
    pos = t - 1;
  let km = 0;
  for (const v of keys) km = Math.max(km, Math.abs(v));
  return {
    note:
      `K/V head ${g} (read by query heads ${g * size}–${(g + 1) * size - 1}): ${t} row${t > 1 ? 's' : ''} × d_k = ${s.dk}, ` +
      `${s.rope ? 'rotated to their positions (RoPE), ' : ''}one row per position so far; the new row ${pos} is outlined. The values are cached the same way.`,
    width: Math.min(W, 260),
    opts: {
      data: keys,
      rows: t,
      cols: s.dk,
      rowLabels: positionLabels(t),
      colLabels: Array.from({ length: s.dk }, (_, i) => String(i)),
      rowAxis: 'position',
      colAxis: 'feature',
      domain: { lo: -km || -1, hi: km || 1, map },
      values: 'never',
      maxCell: 26,
      minRowHeight: 0,
      legend: false,
      selectedRow: pos,
      title: `cached k, K/V head ${g}`,
    },
    label:
      `Heatmap of the keys cached for key/value head ${g}: ${t} positions by ${s.dk} features; ` +
      `position ${pos} was just added. Arrow keys move between cells.`,
  };
}

/** The new query row's weights, (H, t), one row per query head: { width, opts, label, note }. */
export function weightsPanel(s, weights, { t, W, map }) {
  const size = s.H / s.Hkv,
    pos = t - 1;
  return {
    note:
      `Query ${pos} against keys 0–${pos}, one row per query head: the causal mask over the cache hides nothing, ` +
      'because every cached key is at or before the new token. Each row sums to 1.',
    width: Math.min(W, 520),
    opts: {
      data: weights,
      rows: s.H,
      cols: t,
      rowLabels: Array.from({ length: s.H }, (_, hd) => `q head ${hd} · K/V ${Math.floor(hd / size)}`),
      colLabels: positionLabels(t).map((l) => l.slice(4)),
      rowAxis: 'query head',
      colAxis: 'key',
      domain: { lo: 0, hi: 1, map },
      values: 'never',
      maxCell: 30,
      minRowHeight: 0,
      legend: true,
      title: `new query ${pos}`,
    },
    label:
      `Heatmap of the attention weights of the new query (position ${pos}) over the ${t} cached keys, ` +
      `one row per query head (${s.H}). Arrow keys move between cells.`,
  };
}

/** The cost line and the check while the cache is empty: { cost, check }. */
export function emptyTexts(s) {
  return {
    cost: `Nothing computed yet. Stepping through all ${s.T} tokens projects ${s.T} rows in all; recomputing the whole prefix at every step would project ${(s.T * (s.T + 1)) / 2}.`,
    check: 'Check: nothing to compare yet.',
  };
}

/**
 * What step t computed and what the cache holds ({ line, terms }), and the check of its output row
 * against one full causal forward (diff: this step's, maxDifference: every row's so far).
 */
export function stepTexts(s, t, diff, maxDifference) {
  const pos = t - 1;
  const cachedFloats = 2 * t * s.Hkv * s.dk;
  return {
    line: `Step ${t}: computed 1 new row (q·kᵀ over ${t} key${t > 1 ? 's' : ''}); recomputing would project ${t} row${t > 1 ? 's' : ''}.`,
    terms:
      `The cache now holds keys and values for ${t} position${t > 1 ? 's' : ''} × ${s.Hkv} key/value head${s.Hkv > 1 ? 's' : ''} × d_k = ${s.dk}: ` +
      `${cachedFloats} floats${s.Hkv < s.H ? ` (${2 * t * s.H * s.dk} if each of the ${s.H} query heads had its own)` : ''}. ` +
      `Over all ${s.T} tokens stepping projects ${s.T} rows; recomputing the prefix every step would project ${(s.T * (s.T + 1)) / 2}.`,
    check:
      `Check: stepped output row ${pos} against row ${pos} of one full causal forward over the ${t}-token prefix: ` +
      `max |difference| = ${diff.toExponential(2)}${t > 1 ? ` (every row so far: ${maxDifference.toExponential(2)})` : ''}.`,
  };
}
