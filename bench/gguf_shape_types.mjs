// The tensors of a real Q4_K_M file of a llama-like model and the type llama.cpp's quantizer gives
// each (src/llama-quant.cpp, llama_tensor_get_type_impl with ftype MOSTLY_Q4_K_M, no imatrix):
//   - default Q4_K;
//   - output.weight, and token_embd.weight when the head is tied (no output.weight): Q6_K (Q8_0 if
//     its rows are not a multiple of 256);
//   - attn_v (and a fused attn_qkv, which llama.cpp counts as attn_v) and ffn_down: Q6_K where
//     use_more_bits(i, n): i < n/8 || i >= 7n/8 || (i − n/8) % 3 == 2 (i counts those tensors in
//     the quantizer's order, which is layer order), else Q4_K;
//   - rows not a multiple of the block (tensor_type_fallback): Q4_K → Q5_0, Q6_K → Q8_0, then F16;
//   - 1-D tensors (norms, rope_freqs) are not quantized: F32 as the converter wrote them.
// The order is llama.cpp's weights_map (weight_name_comparer): non-layer tensors first, then layer
// by layer, each sorted by name — the order llama-quantize writes.

export const GGML = { F32: 0, F16: 1, Q5_0: 6, Q8_0: 8, Q4_K: 12, Q6_K: 14 };
/** Elements and bytes per block of the types written. */
export const BLOCK = {
  [GGML.F32]: [1, 4],
  [GGML.F16]: [1, 2],
  [GGML.Q5_0]: [32, 22],
  [GGML.Q8_0]: [32, 34],
  [GGML.Q4_K]: [256, 144],
  [GGML.Q6_K]: [256, 210],
};
export const TYPE_NAME = Object.fromEntries(Object.entries(GGML).map(([k, v]) => [v, k]));

const useMoreBits = (i, n) =>
  i < Math.floor(n / 8) || i >= Math.floor((7 * n) / 8) || (i - Math.floor(n / 8)) % 3 === 2;

// tensor_type_fallback: a type whose block does not divide the row length.
function fallback(type, cols) {
  if (cols % BLOCK[type][0] === 0) return type;
  const next = type === GGML.Q4_K ? GGML.Q5_0 : type === GGML.Q6_K ? GGML.Q8_0 : GGML.F16;
  return cols % BLOCK[next][0] === 0 ? next : GGML.F16;
}

// The tensors' names and ggml dims (row length first), by layer, before typing.
function shapes(m) {
  const { hidden, layers, ff, heads, kvHeads, headDim } = m.hp;
  const vocab = m.tokenizer.vocab;
  const q = heads * headDim,
    kv = kvHeads * headDim;
  const global = [
    ['token_embd.weight', [hidden, vocab]],
    ['output_norm.weight', [hidden]],
  ];
  if (!m.tied) global.push(['output.weight', [hidden, vocab]]);
  if (m.ropeFreqs) global.push(['rope_freqs.weight', [headDim / 2]]);
  const layer = [
    ['attn_norm.weight', [hidden]],
    ['attn_output.weight', [q, hidden]],
    ['ffn_down.weight', [ff, hidden]],
    ['ffn_norm.weight', [hidden]],
  ];
  if (m.fused) layer.push(['attn_qkv.weight', [hidden, q + 2 * kv]], ['ffn_up.weight', [hidden, 2 * ff]]);
  else
    layer.push(
      ['attn_q.weight', [hidden, q]],
      ['attn_k.weight', [hidden, kv]],
      ['attn_v.weight', [hidden, kv]],
      ['ffn_gate.weight', [hidden, ff]],
      ['ffn_up.weight', [hidden, ff]],
    );
  if (m.qkNorm) layer.push(['attn_q_norm.weight', [headDim]], ['attn_k_norm.weight', [headDim]]);
  const byName = (a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
  const out = global.sort(byName).map(([name, dims]) => ({ name, dims, layer: -1 }));
  for (let l = 0; l < layers; l++)
    for (const [name, dims] of [...layer].sort(byName))
      out.push({ name: `blk.${l}.${name}`, dims, layer: l });
  return out;
}

// The Q4_K_M type of one tensor (the rules above).
function q4kmType(t, m, counters) {
  if (t.dims.length < 2) return GGML.F32;
  const cols = t.dims[0];
  const headLike = t.name === 'output.weight' || (m.tied && t.name === 'token_embd.weight');
  if (headLike) return cols % 256 === 0 ? GGML.Q6_K : GGML.Q8_0;
  let type = GGML.Q4_K;
  const n = m.hp.layers;
  if (/attn_(v|qkv)\.weight$/.test(t.name)) {
    if (useMoreBits(counters.v++, n)) type = GGML.Q6_K;
  } else if (/ffn_down/.test(t.name)) {
    if (useMoreBits(counters.down++, n)) type = GGML.Q6_K;
  }
  return fallback(type, cols);
}

/** The tensors of a Q4_K_M file of model m: [{ name, dims, type, bytes }] in llama-quantize's order. */
export function q4kmTensors(m) {
  const counters = { v: 0, down: 0 };
  return shapes(m).map((t) => {
    const type = q4kmType(t, m, counters);
    const [per, size] = BLOCK[type];
    const elements = t.dims.reduce((a, b) => a * b, 1);
    return { ...t, type, bytes: (elements / per) * size };
  });
}

/** The tensors of a Q8_0 file (LLAMA_FTYPE_MOSTLY_Q8_0): every matrix Q8_0, the 1-D ones F32. */
export function q8_0Tensors(m) {
  return shapes(m).map((t) => {
    const type = t.dims.length < 2 ? GGML.F32 : GGML.Q8_0;
    const [per, size] = BLOCK[type];
    const elements = t.dims.reduce((a, b) => a * b, 1);
    return { ...t, type, bytes: (elements / per) * size };
  });
}

/** Count and bytes of each type in a tensor list: { Q4_K: [n, bytes], … }. */
export function typeSummary(tensors) {
  const out = {};
  for (const t of tensors) {
    const e = (out[TYPE_NAME[t.type]] ??= [0, 0]);
    e[0]++;
    e[1] += t.bytes;
  }
  return out;
}
