// Direct logit attribution: each component's share of a logit difference (the embedding,
// every query head, every MLP, the constants), for TinyTransformer and PretrainedModel; and the
// pieces activation patching (interp-patch.js) shares with it. Everything in double.
import { AttentionError, check } from './errors.js';
import { checkOptions, describe } from './options.js';
import { idBatch } from './model.js';
import { Tensor, fromCore } from './tensor.js';

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);

// ---- direct logit attribution ----------------------------------------------------------------------
// The residual stream at one position is a sum of components (the embedding, each query head's output,
// each MLP's output) plus constants (biases, norm β's). With every norm's scale frozen at its actual
// input (LayerNorm s = 1/√(biased var + eps): c ↦ s·(c − mean c) ⊙ γ, β to the constants; RMSNorm:
// c ↦ s·c ⊙ γ), the logit difference is an affine function of them: each component's attribution is
// its image through every later norm, dotted with u = W_U[token] − W_U[against]. Everything in double.

const dot = (a, b) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

// s of a norm spec { kind: 'layer' | 'rms', weight, bias?, eps } at input x.
function normScale(spec, x) {
  const n = x.length;
  if (spec.kind === 'rms') return 1 / Math.sqrt(dot(x, x) / n + spec.eps);
  let mean = 0;
  for (let i = 0; i < n; i++) mean += x[i];
  mean /= n;
  let v = 0;
  for (let i = 0; i < n; i++) v += (x[i] - mean) ** 2;
  return 1 / Math.sqrt(v / n + spec.eps);
}

// c through the norm frozen at scale s (β added when withBeta: the constants' row).
function frozenNorm(spec, s, c, withBeta) {
  const n = c.length,
    y = new Float64Array(n);
  let mean = 0;
  if (spec.kind === 'layer') {
    for (let i = 0; i < n; i++) mean += c[i];
    mean /= n;
  }
  for (let i = 0; i < n; i++)
    y[i] = s * (c[i] - mean) * spec.weight[i] + (withBeta && spec.bias ? spec.bias[i] : 0);
  return y;
}

/** The norm itself (not frozen) of x. */
export function applyNorm(spec, x) {
  return frozenNorm(spec, normScale(spec, x), x, true);
}

/**
 * Walks one position's residual stream through the blocks, keeping every component apart.
 * plan: { hidden, embed (E), layers: [{ heads: (E)[] per query head, attnBias (E) | null,
 *   post1: norm | null (after the attention's residual add), mlp: (residual) => (E) | null (it applies
 *   its own input norm), post2: norm | null }], finalNorm: norm | null, u (E), constant (number: the
 *   output head's bias difference) }.
 * Returns { heads: number[][], mlp: number[], embed, bias, total }.
 */
export function attributeResidual(plan) {
  const E = plan.hidden;
  const comps = [Float64Array.from(plan.embed)]; // [0] embed; then heads and MLPs as they come; bias kept apart
  let bias = new Float64Array(E);
  const headIndex = [],
    mlpIndex = [];
  const residual = () => {
    const r = Float64Array.from(bias);
    for (const c of comps) for (let i = 0; i < E; i++) r[i] += c[i];
    return r;
  };
  const freeze = (spec) => {
    const s = normScale(spec, residual());
    for (let k = 0; k < comps.length; k++) comps[k] = frozenNorm(spec, s, comps[k], false);
    bias = frozenNorm(spec, s, bias, true);
  };
  for (const layer of plan.layers) {
    headIndex.push(layer.heads.map((h) => comps.push(Float64Array.from(h)) - 1));
    if (layer.attnBias) for (let i = 0; i < E; i++) bias[i] += layer.attnBias[i];
    if (layer.post1) freeze(layer.post1);
    mlpIndex.push(layer.mlp ? comps.push(Float64Array.from(layer.mlp(residual()))) - 1 : -1);
    if (layer.post2) freeze(layer.post2);
  }
  if (plan.finalNorm) freeze(plan.finalNorm);
  const part = (k) => (k < 0 ? 0 : dot(comps[k], plan.u));
  const out = {
    heads: headIndex.map((ks) => ks.map(part)),
    mlp: mlpIndex.map(part),
    embed: part(0),
    bias: dot(bias, plan.u) + plan.constant,
  };
  out.total =
    out.embed + out.bias + out.heads.flat().reduce((a, b) => a + b, 0) + out.mlp.reduce((a, b) => a + b, 0);
  return out;
}

// out (rows) = W (rows, cols) row-major · x (cols) + b, in double.
function matVec(w, rows, cols, x, b) {
  const y = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let s = b ? b[r] : 0;
    const at = r * cols;
    for (let c = 0; c < cols; c++) s += w[at + c] * x[c];
    y[r] = s;
  }
  return y;
}

/** Head h's output at one position: W_O[:, h·d:(h+1)·d] · z (no bias); W_O (E, H·d) row-major. */
export function headOutput(wo, E, inner, z, h) {
  const d = z.length,
    y = new Float64Array(E);
  for (let r = 0; r < E; r++) {
    let s = 0;
    const at = r * inner + h * d;
    for (let k = 0; k < d; k++) s += wo[at + k] * z[k];
    y[r] = s;
  }
  return y;
}

// erf in double: 2/√π · e^(−x²) · Σ 2ⁿ x^(2n+1) / (1·3·…·(2n+1)) (all terms positive, no cancellation);
// |x| ≥ 6: ±1 (erfc(6) < 3e-17).
function erf(x) {
  const ax = Math.abs(x);
  if (ax >= 6) return Math.sign(x);
  let term = ax,
    sum = ax;
  for (let n = 1; n < 200; n++) {
    term *= (2 * ax * ax) / (2 * n + 1);
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return Math.sign(x) * (2 / Math.sqrt(Math.PI)) * Math.exp(-ax * ax) * sum;
}
/** torch's exact GELU, 0.5·x·(1 + erf(x/√2)), in double. */
export const geluErf = (x) => 0.5 * x * (1 + erf(x / Math.SQRT2));
/** GPT-2's gelu_new (tanh form), in double. */
export const geluTanh = (x) => 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));

/** position, token, against of logitAttribution's options, checked against T and the vocabulary. */
export function attributionOptions(options, T, vocab) {
  const {
    position = T - 1,
    token,
    against,
  } = checkOptions(options, ['position', 'token', 'against'], 'logitAttribution option');
  if (!Number.isInteger(position) || position < 0 || position >= T)
    throw invalid(`logitAttribution: position must be an integer in [0, ${T}), got ${describe(position)}`);
  if (!Number.isInteger(token) || token < 0 || token >= vocab)
    throw invalid(`logitAttribution: token must be an integer in [0, ${vocab}), got ${describe(token)}`);
  if (against !== undefined && (!Number.isInteger(against) || against < 0 || against >= vocab)) {
    throw invalid(
      `logitAttribution: against must be an integer in [0, ${vocab}) or left out, got ${describe(against)}`,
    );
  }
  if (against === token)
    throw invalid(`logitAttribution: token and against are both ${token}: there is no difference to explain`);
  return { position, token, against };
}

// The result object of a walk: heads (L, H) and mlp (L) as Tensors, logitDiff from the real forward.
function attributionResult(parts, logitDiff) {
  const L = parts.heads.length,
    H = L > 0 ? parts.heads[0].length : 0;
  return {
    heads: new Tensor(Float32Array.from(parts.heads.flat()), [L, H]),
    mlp: new Tensor(Float32Array.from(parts.mlp), [L]),
    embed: parts.embed,
    bias: parts.bias,
    total: parts.total,
    logitDiff,
  };
}

// logits[position, token] − logits[position, against] (or the logit alone) of a (1, T, V) logits Tensor.
function logitDifference(logits, position, token, against) {
  const V = logits.shape[2],
    row = position * V;
  return logits.data[row + token] - (against === undefined ? 0 : logits.data[row + against]);
}

// The attention's context (1, H, T, d) of every layer's trace, at `position`: z[l][h] (d).
function contexts(traces, position) {
  return traces.map((steps) => {
    const c = steps.find((s) => s.name === 'context');
    const [, H, T, d] = c.shape;
    return Array.from({ length: H }, (_, h) =>
      c.data.subarray((h * T + position) * d, (h * T + position + 1) * d),
    );
  });
}

/** TinyTransformer.logitAttribution: the weights from stateDict(), z from the forward's trace. */
export function tinyLogitAttribution(model, ids, options = {}) {
  const batch = idBatch(ids, 'ids');
  if (batch.b !== 1)
    throw invalid(`logitAttribution needs a batch of one: ids (T) or (1, T), got (${batch.b}, ${batch.t})`);
  const cfg = model.config;
  const { position, token, against } = attributionOptions(options, batch.t, cfg.vocabSize);
  const r = model.forward(batch.tensor, { attention: false, trace: true });
  const sd = model.stateDict();
  const w = (name) => sd[name].data;
  const E = cfg.dModel,
    H = cfg.numHeads;
  const ln = (name) => ({ kind: 'layer', weight: w(`${name}.weight`), bias: w(`${name}.bias`), eps: 1e-5 });
  const embed = Float64Array.from(
    w('tok_emb.weight').subarray(batch.data[position] * E, (batch.data[position] + 1) * E),
  );
  if (cfg.positional === 'learned') {
    const pe = w('pos_emb.weight');
    for (let i = 0; i < E; i++) embed[i] += pe[position * E + i];
  } else if (cfg.positional === 'sinusoidal') {
    for (let pair = 0; 2 * pair < E; pair++) {
      // as src/core/positional.cpp: double, rounded to float32
      const angle = position * 10000 ** ((-2 * pair) / E);
      embed[2 * pair] += Math.fround(Math.sin(angle));
      if (2 * pair + 1 < E) embed[2 * pair + 1] += Math.fround(Math.cos(angle));
    }
  }
  const z = contexts(r.trace, position);
  const layers = z.map((zl, l) => {
    const p = `blocks.${l}.`;
    const wo = w(`${p}attn.out_proj.weight`);
    const mlp = cfg.mlp
      ? (x) => {
          const input = cfg.norm === 'pre' ? applyNorm(ln(`${p}ln2`), x) : x;
          const hid = matVec(w(`${p}mlp.fc1.weight`), cfg.mlpHidden, E, input, w(`${p}mlp.fc1.bias`)).map(
            geluErf,
          );
          return matVec(w(`${p}mlp.fc2.weight`), E, cfg.mlpHidden, hid, w(`${p}mlp.fc2.bias`));
        }
      : null;
    return {
      heads: zl.map((zh, h) => headOutput(wo, E, E, zh, h)),
      attnBias: w(`${p}attn.out_proj.bias`),
      post1: cfg.norm === 'post' ? ln(`${p}ln1`) : null,
      mlp,
      post2: cfg.norm === 'post' && cfg.mlp ? ln(`${p}ln2`) : null,
    };
  });
  const head = w('head.weight'),
    hb = w('head.bias');
  const u = Float64Array.from(head.subarray(token * E, (token + 1) * E));
  if (against !== undefined) for (let i = 0; i < E; i++) u[i] -= head[against * E + i];
  const parts = attributeResidual({
    hidden: E,
    embed,
    layers,
    finalNorm: cfg.norm === 'pre' ? ln('ln_f') : null,
    u,
    constant: hb[token] - (against === undefined ? 0 : hb[against]),
  });
  return attributionResult(parts, logitDifference(r.logits, position, token, against));
}

/** A branch's parts through one norm frozen at the branch's total (OLMo 2's post-norms: x += norm(Σ parts)). */
export function normBranch(spec, parts) {
  const E = parts[0].length,
    sum = new Float64Array(E);
  for (const p of parts) for (let i = 0; i < E; i++) sum[i] += p[i];
  const s = normScale(spec, sum);
  return parts.map((p) => frozenNorm(spec, s, p, false));
}

// Every layer index 0 … L − 1.
export const allLayers = (L) => Array.from({ length: L }, (_, l) => l);

// The blank options of a handle's interpForward.
export const interpRun = (o) => ({
  traceLayers: [],
  hiddenStates: false,
  mlpOutputs: false,
  startLayer: 0,
  startResidual: null,
  deltaLayer: -1,
  attnDelta: null,
  logitsRow: -1,
  ...o,
});

// The tensors of a pretrained model that attribution and patching read, as { role, layer } keys of
// the core (handle.readRows), null where the model has none: the core lists which it holds.
export function pretrainedTensors(handle) {
  const roles = new Set(handle.expected().map((t) => t.role));
  const key = (role, layer = -1) => (roles.has(role) ? { role, layer } : null);
  return {
    outProj: (l) => key('o', l),
    outBias: (l) => key('o_bias', l),
    // OLMo 2's post-norms: after the attention, after the MLP
    post1: (l) => key('post_attn_norm', l),
    post2: (l) => key('post_mlp_norm', l),
    unembed: key('unembed') ?? key('embed'),
    finalNorm: key('final_norm'),
    finalNormBias: key('final_norm_bias'), // LayerNorm (GPT-2); RMSNorm has none
  };
}

/**
 * PretrainedModel.logitAttribution: one forward (traces for every head's z, the embedding output, every
 * MLP's output, the logits at `position`), the output projections, final norm and unembedding rows read
 * from the checkpoint; the walk is attributeResidual's.
 */
export function pretrainedLogitAttribution(model, ids, options = {}) {
  const batch = idBatch(ids, 'ids');
  if (batch.b !== 1)
    throw invalid(`logitAttribution needs a batch of one: ids (T) or (1, T), got (${batch.b}, ${batch.t})`);
  const core = model._core;
  const { position, token, against } = attributionOptions(options, batch.t, core.vocabSize);
  const handle = model._live();
  const L = core.layers,
    E = core.hidden,
    H = core.heads;
  const names = pretrainedTensors(handle);
  const rows = (key, first = 0, count = 1) => check(handle.readRows(key.role, key.layer, first, count)).data;
  const T = batch.t,
    d = core.headDim;
  const { first: r, z: zAll } = tracedForward(
    (layers, first) =>
      check(
        handle.interpForward(
          batch.data,
          1,
          T,
          interpRun({ traceLayers: layers, hiddenStates: first, mlpOutputs: first, logitsRow: position }),
        ),
      ),
    L,
    H,
    T,
  );
  const at = (t) => t.data.subarray(position * E, (position + 1) * E);
  const z = zAll.map((zl) =>
    allLayers(H).map((h) => zl.subarray((h * T + position) * d, (h * T + position + 1) * d)),
  );
  const rms = (key) => ({ kind: 'rms', weight: rows(key), eps: core.normEps });
  const layers = z.map((zl, l) => {
    const wo = rows(names.outProj(l), 0, E);
    let heads = zl.map((zh, h) => headOutput(wo, E, H * core.headDim, zh, h));
    let mlpOut = Float64Array.from(at(r.mlpOutputs[l]));
    if (core.postNorms) {
      // OLMo 2, Gemma 3: x += norm(attn(x)); x += norm(mlp(x)): each branch frozen at its own total
      heads = normBranch(rms(names.post1(l)), heads);
      mlpOut = applyNorm(rms(names.post2(l)), mlpOut);
    }
    const bias = names.outBias(l);
    return { heads, attnBias: bias ? rows(bias) : null, post1: null, mlp: () => mlpOut, post2: null };
  });
  const finalNorm = names.finalNormBias
    ? { kind: 'layer', weight: rows(names.finalNorm), bias: rows(names.finalNormBias), eps: core.normEps }
    : rms(names.finalNorm);
  const u = Float64Array.from(rows(names.unembed, token));
  if (against !== undefined) {
    const v = rows(names.unembed, against);
    for (let i = 0; i < E; i++) u[i] -= v[i];
  }
  const parts = attributeResidual({
    hidden: E,
    embed: at(r.hiddenStates[0]),
    layers,
    finalNorm,
    u,
    constant: 0,
  });
  const logits = fromCore(r.logits); // (1, 1, V): the row at position
  return attributionResult(parts, logitDifference(logits, 0, token, against));
}

// Bytes of traced (T, T) steps held at once: a trace keeps scores, scaled, masked and weights, each
// (H, T, T) float32, per layer (and the binding copies them once more).
let traceBudgetBytes = 64 * 1024 * 1024;
/** Tests only: sets the trace budget (bytes), returns the previous one. */
export function _setTraceBudget(bytes) {
  const old = traceBudgetBytes;
  traceBudgetBytes = bytes;
  return old;
}

/**
 * Every layer's z, (H, T, d) float32 each, of one run (a batch of one): run(layers, first) is a
 * forward tracing `layers` (first: the call whose other outputs the caller keeps). Short inputs trace
 * every layer in one forward; long ones a few layers per forward, so the traces' (T, T) steps stay
 * under the trace budget. Returns { first (that call's result, traces dropped), z }.
 */
export function tracedForward(run, L, H, T) {
  const per = Math.max(1, Math.floor(traceBudgetBytes / (2 * 4 * 4 * H * T * T)));
  const z = new Array(L);
  let first = null;
  for (let l0 = 0; l0 < L; l0 += per) {
    const layers = allLayers(Math.min(per, L - l0)).map((i) => l0 + i);
    const r = run(layers, first === null);
    for (const l of layers) z[l] = r.traces[l].find((s) => s.name === 'context').data;
    r.traces = null;
    if (first === null) first = r;
  }
  return { first, z };
}
