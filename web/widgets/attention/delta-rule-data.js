// The gated delta rule of one DeltaNet value head, walked in float64 from a layer's hook points
// (model.run(ids, { capture }) of blocks.{l}.linear_attn.hook_q / hook_k / hook_v / hook_beta /
// hook_g): no wasm, no DOM, so Node tests check it against the library's own o and effective map.
//
// Per token t, from the state S (d_k × d_v) the previous token left (zero before token 0):
//   decay    S' = e^{g_t} S
//   correct  u  = β_t (v_t − S'ᵀ k_t)          (what the state predicted for k_t, and the error)
//   write    S″ = S' + k_t uᵀ
//   read     o_t = S″ᵀ q_t / √d_k
// with q_t, k_t L2-normalized per key head as the library does (x / √(Σx² + eps)).

/** The hook names a step view captures for layer `layer`. */
export function deltaHooks(layer) {
  return ['q', 'k', 'v', 'beta', 'g'].map((n) => `blocks.${layer}.linear_attn.hook_${n}`);
}

// Hugging Face's grouped order (value head h reads key head h / (H_v / H_k)) or GGUF's tiled one
// (h mod H_k): the library's DeltaNet (src/model/delta_net.h) chooses the same way.
export function keyHeadOf(h, vHeads, kHeads, layout = 'grouped') {
  if (layout === 'tiled') return h % kHeads;
  if (layout !== 'grouped') throw new RangeError(`layout must be 'grouped' or 'tiled', got ${layout}`);
  return Math.floor(h / (vHeads / kHeads));
}

function l2(x, eps) {
  let ss = 0;
  for (const a of x) ss += a * a;
  const inv = 1 / Math.sqrt(ss + eps);
  return x.map((a) => a * inv);
}

function shapeOf(tensor, name, rank) {
  if (!tensor || !tensor.shape || tensor.shape.length !== rank || tensor.shape[0] !== 1)
    throw new RangeError(`${name}: a captured tensor of rank ${rank} and batch 1 is needed`);
  return tensor.shape;
}

/**
 * One value head's inputs from captured activations (batch 1): { T, dk, dv, q, k, v, beta, g,
 * keyHead } with q and k L2-normalized (float64 rows). `eps`: the model's rms_norm_eps.
 */
export function deltaHeadFromActivations(activations, layer, head, { layout = 'grouped', eps = 1e-6 } = {}) {
  const [hq, hk, hv, hb, hg] = deltaHooks(layer).map((n) => activations[n]);
  const [, T, kHeads, dk] = shapeOf(hq, 'hook_q', 4);
  const [, , vHeads, dv] = shapeOf(hv, 'hook_v', 4);
  shapeOf(hk, 'hook_k', 4);
  shapeOf(hb, 'hook_beta', 3);
  shapeOf(hg, 'hook_g', 3);
  if (!Number.isInteger(head) || head < 0 || head >= vHeads)
    throw new RangeError(`head must be an integer in [0, ${vHeads - 1}], got ${head}`);
  const kh = keyHeadOf(head, vHeads, kHeads, layout);
  const row = (t, data, heads, d, hd) =>
    Array.from(data.subarray((t * heads + hd) * d, (t * heads + hd + 1) * d));
  const ts = Array.from({ length: T }, (_, t) => t);
  return {
    T,
    dk,
    dv,
    head,
    keyHead: kh,
    q: ts.map((t) => l2(row(t, hq.data, kHeads, dk, kh), eps)),
    k: ts.map((t) => l2(row(t, hk.data, kHeads, dk, kh), eps)),
    v: ts.map((t) => row(t, hv.data, vHeads, dv, head)),
    beta: ts.map((t) => hb.data[t * vHeads + head]),
    g: ts.map((t) => hg.data[t * vHeads + head]),
  };
}

const zeros = (dk, dv) => new Float64Array(dk * dv);

// Sᵀx (d_v) of a row-major (d_k, d_v) state.
function readState(S, x, dk, dv) {
  const out = new Float64Array(dv);
  for (let i = 0; i < dk; i++) for (let j = 0; j < dv; j++) out[j] += S[i * dv + j] * x[i];
  return out;
}

/** One token's four steps from the state `S` before it; returns every intermediate. */
export function deltaStep(head, t, S) {
  const { dk, dv } = head;
  const q = head.q[t],
    k = head.k[t],
    v = head.v[t];
  const decay = Math.exp(head.g[t]);
  const decayed = S.map((s) => s * decay);
  const prediction = readState(decayed, k, dk, dv);
  const correction = prediction.map((p, j) => head.beta[t] * (v[j] - p));
  const after = decayed.slice();
  for (let i = 0; i < dk; i++) for (let j = 0; j < dv; j++) after[i * dv + j] += k[i] * correction[j];
  const o = readState(after, q, dk, dv).map((x) => x / Math.sqrt(dk));
  return { t, before: S, decay, decayed, prediction, correction, after, o };
}

/** The walk up to token t: the state each token leaves, and token t's four steps. */
export function deltaWalk(head, t) {
  if (!Number.isInteger(t) || t < 0 || t >= head.T)
    throw new RangeError(`token must be an integer in [0, ${head.T - 1}], got ${t}`);
  let S = zeros(head.dk, head.dv);
  for (let s = 0; s < t; s++) S = deltaStep(head, s, S).after;
  return deltaStep(head, t, S);
}

/** The outputs o_t of every token (T rows of d_v), by the recurrence. */
export function deltaOutputs(head) {
  const out = [];
  let S = zeros(head.dk, head.dv);
  for (let t = 0; t < head.T; t++) {
    const step = deltaStep(head, t, S);
    out.push(step.o);
    S = step.after;
  }
  return out;
}

/** Σ_s A[t,s] v_s over an effective attention row (A: the head's (T, T) map, row-major). */
export function mixValues(head, map, t) {
  const out = new Float64Array(head.dv);
  for (let s = 0; s < head.T; s++) {
    const a = map[t * head.T + s];
    for (let j = 0; j < head.dv; j++) out[j] += a * head.v[s][j];
  }
  return out;
}
