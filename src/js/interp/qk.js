// QK attribution: why a head attends where it does. The scaled score of (query, key) in one head,
// before the mask, soft-cap and softmax, split bilinearly over the residual stream's components at
// the query position (rows) and at the key position (columns): the same components as
// logitAttribution's (interp/attribution.js: the embedding, the positions where they are added to the
// stream, each earlier layer's heads and MLP, the constants), one path for both model classes over
// their interpretability adapters (interp/adapter.js). With every norm frozen at its actual input
// and RoPE a fixed rotation at each position, q and k are affine in the components, so the score is
// Σ_ij scale · q_i · k_j (+ an additive position bias such as ALiBi's). Everything in double.
import { AttentionError } from '../errors.js';
import { checkOptions, describe } from '../options.js';
import { idBatch } from '../ids.js';
import { Tensor } from '../tensor.js';
import {
  allLayers,
  dot,
  frozenNorm,
  layerPlan,
  normScale,
  residualStream,
  tracedForward,
  walkLayers,
  branchHooks,
} from './attribution.js';

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);

// layer, head, query and key checked against the model and T (every one required).
function qkOptions(options, a, T) {
  const o = checkOptions(options, ['layer', 'head', 'query', 'key'], 'qkAttribution option');
  const bounds = { layer: a.L, head: a.H, query: T, key: T };
  for (const [name, n] of Object.entries(bounds)) {
    if (!Number.isInteger(o[name]) || o[name] < 0 || o[name] >= n)
      throw invalid(`qkAttribution: ${name} must be an integer in [0, ${n}), got ${describe(o[name])}`);
  }
  const heads = a.heads(o.layer);
  if (heads === 0)
    throw invalid(
      `qkAttribution: layer ${o.layer} is of kind '${a.kind(o.layer)}': its token mixer has no heads and no scores`,
    );
  if (a.kind(o.layer) === 'delta')
    throw invalid(
      `qkAttribution: layer ${o.layer} is a DeltaNet layer: its map is the delta rule's, not a softmax of q·k scores`,
    );
  if (o.head >= heads)
    throw invalid(
      `qkAttribution: head must be an integer in [0, ${heads}) for layer ${o.layer}, got ${o.head}`,
    );
  return o;
}

// A key the layer's mask hides has no score to explain: after the query in a causal model, or
// outside the layer's sliding window (0 <= query − key < window causal, |query − key| < window not).
function checkVisible(a, att, { layer, query, key }) {
  if (a.causal && key > query)
    throw invalid(`qkAttribution: key ${key} is after query ${query}; the causal mask hides it`);
  const gap = a.causal ? query - key : Math.abs(query - key);
  if (att.window > 0 && gap >= att.window) {
    throw invalid(
      `qkAttribution: key ${key} is outside layer ${layer}'s sliding window of ${att.window} from query ${query}; the mask hides it`,
    );
  }
}

// The components' names in the matrix's order: 'embed', ['pos'], per layer l < layer its heads
// 'L{l}H{h}' (a headless mixer's one output 'L{l}CONV'; the kind in capitals) and its MLP 'L{l}MLP'
// (where the blocks have one), then 'bias'.
function componentNames(a, layer, positionsAdded) {
  const names = positionsAdded ? ['embed', 'pos'] : ['embed'];
  for (let l = 0; l < layer; l++) {
    for (let h = 0; h < a.heads(l); h++) names.push(`L${l}H${h}`);
    if (a.heads(l) === 0) names.push(`L${l}${a.kind(l).toUpperCase()}`);
    if (a.mlp) names.push(`L${l}MLP`);
  }
  names.push('bias');
  return names;
}

// The stream entering block `layer` at position t, kept apart: hidden state 0 (split into the token's
// embedding and the position part where positions are added to it), then each earlier layer's heads
// (W_O,h · z_h) and MLP output with the post-norms frozen as logitAttribution freezes them.
function streamAt(a, run, layer, t) {
  const { E } = a,
    T = run.T;
  const at = (x) => x.data.subarray(t * E, (t + 1) * E);
  const h0 = at(run.r.hiddenStates[0]);
  const emb = a.embedding(run.ids[t]);
  const inputs = emb.positionsAdded ? [emb.token, Float64Array.from(h0, (v, i) => v - emb.token[i])] : [h0];
  const plans = allLayers(layer).map((l) =>
    layerPlan(
      a,
      l,
      run.z[l] &&
        allLayers(a.heads(l)).map((h) =>
          run.z[l].subarray((h * T + t) * a.zDim(l), (h * T + t + 1) * a.zDim(l)),
        ),
      a.mlp ? Float64Array.from(at(run.r.activations[`blocks.${l}.mlp.hook_out`])) : null,
      run.z[l] ? null : Float64Array.from(at(run.r.activations[a.mixerHook(l)])),
    ),
  );
  const stream = residualStream(E, inputs);
  walkLayers(stream, plans);
  return { stream, positionsAdded: emb.positionsAdded };
}

// The stream's parts (the components, then the constants) through the block's input norm frozen
// at the stream's total; the constants' row takes the norm's β.
function normedParts(stream, spec) {
  const parts = [...stream.comps, stream.bias];
  if (!spec) return parts;
  const s = normScale(spec, stream.total());
  return parts.map((c, i) => frozenNorm(spec, s, c, i === parts.length - 1));
}

// Rows [first, first + count) of W (rows, E) row-major times x (E).
function project(W, E, first, count, x) {
  const y = new Float64Array(count);
  for (let r = 0; r < count; r++) {
    let s = 0;
    const at = (first + r) * E;
    for (let i = 0; i < E; i++) s += W[at + i] * x[i];
    y[r] = s;
  }
  return y;
}

// The frozen q/k RMSNorm of head h's parts: its scale s from the actual projection (head h's d values,
// or every head's where one norm spans them all, OLMo 2), c ↦ s · c ⊙ γ.
function freezeQkNorm(vs, norm, proj, parts, h, d, E) {
  const sum = (list, n) => list.reduce((acc, v) => acc.map((x, i) => x + v[i]), new Float64Array(n));
  let actual = sum(vs, d),
    gamma = norm.weight;
  if (!norm.perHead) {
    const rows = proj.weight.length / E;
    actual = project(proj.weight, E, 0, rows, sum(parts, E));
    if (proj.bias) for (let i = 0; i < rows; i++) actual[i] += proj.bias[i];
    gamma = norm.weight.subarray(h * d, (h + 1) * d);
  }
  const s = 1 / Math.sqrt(dot(actual, actual) / actual.length + norm.eps);
  return vs.map((v) => v.map((x, i) => s * x * gamma[i]));
}

// RoPE at position t (the core's `half` pairing (m, m + dims/2), cos and sin rounded to float32):
// a fixed rotation of each part; features past dims pass through.
function rotate(v, rope, t) {
  const half = rope.dims / 2,
    y = Float64Array.from(v);
  for (let m = 0; m < half; m++) {
    const angle = t * rope.invFreq[m];
    const c = Math.fround((rope.scale ?? 1) * Math.cos(angle)),
      s = Math.fround((rope.scale ?? 1) * Math.sin(angle));
    y[m] = v[m] * c - v[m + half] * s;
    y[m + half] = v[m + half] * c + v[m] * s;
  }
  return y;
}

// One side of the score (q of head h, or k of its key head): each part's d-vector, the projection's
// bias on the constants' row, through the frozen q/k norm and RoPE at position t.
function sideVectors(parts, proj, norm, rope, h, d, E, t) {
  let vs = parts.map((x) => project(proj.weight, E, h * d, d, x));
  if (proj.bias) {
    const last = vs[vs.length - 1];
    for (let i = 0; i < d; i++) last[i] += proj.bias[h * d + i];
  }
  if (norm) vs = freezeQkNorm(vs, norm, proj, parts, h, d, E);
  return rope ? vs.map((v) => rotate(v, rope, t)) : vs;
}

// One traced forward (every layer up to `layer`): each earlier layer's z, hidden state 0, the MLP
// outputs, and the core's own q·k of the asked head at (query, key)
// from its "scores".
function runTraced(a, batch, o) {
  const T = batch.t;
  let raw = NaN;
  const { first: r, z } = tracedForward(
    (layers, first) =>
      a.forward(batch.data, 1, T, {
        traceLayers: layers,
        hiddenStates: first,
        capture: first ? branchHooks(a) : [],
        logitsRow: 0,
      }),
    o.layer + 1,
    a.H,
    T,
    (l, traced) => {
      if (l !== o.layer) return;
      raw = traced.find((s) => s.name === 'scores').data[(o.head * T + o.query) * T + o.key];
    },
    (l) => a.heads(l) > 0,
  );
  return { r, z, T, ids: batch.data, raw };
}

/**
 * model.qkAttribution for both model classes: { score, components, matrix (C, C): rows the query
 * position's components, columns the key position's, positionBias } with Σ matrix + positionBias =
 * score (the core's own scale · q·k + positionBias). See docs/interpretability.md.
 */
export function qkAttribution(model, ids, options = {}) {
  const batch = idBatch(ids, 'ids');
  if (batch.b !== 1)
    throw invalid(`qkAttribution needs a batch of one: ids (T) or (1, T), got (${batch.b}, ${batch.t})`);
  const base = model._interp();
  const o = qkOptions(options, base, batch.t);
  const att = base.attention(o.layer);
  checkVisible(base, att, o);
  const outProj = new Map(); // each output projection read once for both positions
  const a = { ...base, outProj: (l) => outProj.get(l) ?? outProj.set(l, base.outProj(l)).get(l) };
  const run = runTraced(a, batch, o);
  const p = att.params();
  const { E, d } = a,
    kh = Math.floor(o.head / (a.heads(o.layer) / att.kvHeads)); // grouped-query heads: their key head
  const qSide = streamAt(a, run, o.layer, o.query);
  const kSide = o.key === o.query ? qSide : streamAt(a, run, o.layer, o.key);
  const qParts = normedParts(qSide.stream, p.inputNorm),
    kParts = o.key === o.query ? qParts : normedParts(kSide.stream, p.inputNorm);
  // Ministral 3: q × its position's temperature after RoPE (as the core rounds it, to float32)
  const tau = Math.fround(att.queryTemperature?.(o.query) ?? 1);
  const qv = sideVectors(qParts, p.q, p.qNorm, att.rope, o.head, d, E, o.query).map((v) =>
    tau === 1 ? v : v.map((x) => x * tau),
  );
  const kv = sideVectors(kParts, p.k, p.kNorm, att.rope, kh, d, E, o.key);
  const C = qv.length,
    matrix = new Float32Array(C * C);
  for (let i = 0; i < C; i++) for (let j = 0; j < C; j++) matrix[i * C + j] = att.scale * dot(qv[i], kv[j]);
  const gap = a.causal ? o.query - o.key : Math.abs(o.query - o.key);
  const positionBias = att.alibi ? Math.fround(-att.alibi[o.head] * gap) : 0;
  return {
    score: att.scale * run.raw + positionBias,
    components: Object.freeze(componentNames(a, o.layer, qSide.positionsAdded)),
    matrix: new Tensor(matrix, [C, C]),
    positionBias,
  };
}
