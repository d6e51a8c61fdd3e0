// The data side of <mask-editor>: the "may attend" colour domain, the summary of a mask config, and
// the check of the external data a page sets as `el.data`.

export const ALLOWED_DOMAIN = { lo: 0, hi: 1.6, map: 'viridis' }; // "may attend" = 1 draws as a calm teal

/** One sentence on the mask config c ({ mask, toggles, pad }). */
export function describe(c) {
  const clicks = c.toggles.length
    ? ` plus ${c.toggles.length} clicked cell${c.toggles.length > 1 ? 's' : ''}`
    : '';
  return {
    none: `No mask${clicks}: every query may attend to every key.`,
    causal: `Causal mask${clicks}: query i may attend only to keys 0 … i.`,
    padding: `Padding mask${clicks}: the ${c.pad} <pad> key${c.pad === 1 ? '' : 's'} at the end cannot be attended to.`,
    custom: `Custom mask: ${c.toggles.length} clicked cell${c.toggles.length === 1 ? '' : 's'} masked.`,
  }[c.mask];
}

// The external data, checked: every buffer the size its heads and tokens say.
export function checkData(d) {
  const T = d.tokens.length;
  const weights = Float32Array.from(d.weights);
  if (
    !(d.heads >= 1) ||
    weights.length !== d.heads * T * T ||
    d.allowed.length !== T * T ||
    (d.fixed && d.fixed.length !== T * T)
  ) {
    throw new Error(`mask-editor data: ${d.heads} heads × ${T}² weights and ${T}² mask cells expected`);
  }
  return {
    weights,
    heads: d.heads,
    size: T,
    allowed: Uint8Array.from(d.allowed),
    fixed: d.fixed ? Uint8Array.from(d.fixed) : null,
    toggles: (d.toggles ?? []).map((p) => p.slice()),
    tokens: d.tokens.slice(),
    summary: d.summary ?? '',
  };
}
