// Interpretability over a model's own attention (issue #27): head-type scores and attention rollout.
// Pure functions of a forward's output (ids and the per-layer attention Tensors (1, H, T, T)); the
// model classes call them with one-line methods. Sums run in double; results are float32 Tensors.
import { AttentionError, check } from './errors.js';
import { checkOptions, describe } from './options.js';
import { idBatch } from './model.js';
import { Tensor, asFloatTensor, fromCore } from './tensor.js';

/** The head-score kinds headScores knows, in its default order. */
export const HEAD_SCORE_KINDS = Object.freeze(['previous-token', 'duplicate-token', 'induction']);

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);

// kinds as a checked array of known names (before any work, so a refused call changes nothing).
function checkKinds(kinds) {
  if (!Array.isArray(kinds)) throw invalid(`headScores kinds must be an array of ${HEAD_SCORE_KINDS.map((k) => `'${k}'`).join(', ')}; got ${describe(kinds)}`);
  for (const kind of kinds) {
    if (!HEAD_SCORE_KINDS.includes(kind)) {
      throw invalid(`headScores: unknown kind ${describe(kind)}; the known kinds are ${HEAD_SCORE_KINDS.map((k) => `'${k}'`).join(', ')}`);
    }
  }
  return kinds;
}

// The keys j whose weights a kind sums for query row i, or null when row i does not qualify.
//   previous-token: row i >= 1, key i - 1;
//   duplicate-token: keys j < i with ids[j] = ids[i];
//   induction: keys j with 1 <= j < i and ids[j - 1] = ids[i] (the token after an earlier copy).
function keysOf(kind, ids, i) {
  const keys = [];
  if (kind === 'previous-token') {
    if (i >= 1) keys.push(i - 1);
  } else if (kind === 'duplicate-token') {
    for (let j = 0; j < i; j++) if (ids[j] === ids[i]) keys.push(j);
  } else {
    for (let j = 1; j < i; j++) if (ids[j - 1] === ids[i]) keys.push(j);
  }
  return keys.length > 0 ? keys : null;
}

/**
 * { [kind]: Tensor (L, H) } of a batch-of-one forward: `ids` (length T) and `attention`, one Tensor
 * (1, H, T, T) per layer (rows = queries). Each score is the mean over the kind's qualifying rows of
 * the attention weight on that row's keys (see keysOf); no qualifying row gives NaN for every head.
 */
export function headScoresFromAttention(ids, attention, kinds = HEAD_SCORE_KINDS) {
  checkKinds(kinds);
  const L = attention.length;
  const T = ids.length;
  const H = L > 0 ? attention[0].shape[1] : 0;
  const out = {};
  for (const kind of kinds) {
    const rows = [];
    for (let i = 0; i < T; i++) {
      const keys = keysOf(kind, ids, i);
      if (keys) rows.push([i, keys]);
    }
    const scores = new Float32Array(L * H);
    for (let l = 0; l < L; l++) {
      const a = attention[l];
      if (!a || a.shape.length !== 4 || a.shape[0] !== 1 || a.shape[1] !== H || a.shape[2] !== T || a.shape[3] !== T) {
        throw invalid(`headScores: layer ${l}'s attention must be a Tensor (1, ${H}, ${T}, ${T}), got ${a ? `(${a.shape.join(', ')})` : describe(a)}`);
      }
      for (let h = 0; h < H; h++) {
        if (rows.length === 0) {
          scores[l * H + h] = NaN;
          continue;
        }
        const base = h * T * T;
        let total = 0;
        for (const [i, keys] of rows) {
          let s = 0;
          for (const j of keys) s += a.data[base + i * T + j];
          total += s;
        }
        scores[l * H + h] = total / rows.length;
      }
    }
    out[kind] = new Tensor(scores, [L, H]);
  }
  return out;
}

/**
 * model.headScores(ids, { kinds }): the options and the batch of one checked first (a refused call
 * runs nothing), then one forward with every layer's attention.
 */
export function modelHeadScores(model, ids, options = {}) {
  const { kinds = HEAD_SCORE_KINDS } = checkOptions(options, ['kinds'], 'headScores option');
  checkKinds(kinds);
  const batch = idBatch(ids, 'ids');
  if (batch.b !== 1) throw invalid(`headScores needs a batch of one: ids (T) or (1, T), got (${batch.b}, ${batch.t})`);
  const { attention } = model.forward(batch.tensor, { attention: true });
  return headScoresFromAttention(batch.data, attention, kinds);
}

/**
 * Attention rollout (Abnar & Zuidema 2020) of one forward's attention: `attentions` as forward
 * returns them for a batch of one, one Tensor (1, H, T, T) per layer, every layer present. Per layer
 * Â = (1 − w)·(mean over heads of A) + w·I, rows renormalised to sum 1; R_0 = Â_0, R_l = Â_l · R_{l−1}.
 * Returns Tensor (L, T, T), R_l at [l]. A row of Â that sums to 0 (w = 0 and a fully masked
 * attention row) stays 0.
 */
export function attentionRollout(attentions, options = {}) {
  const { residualWeight = 0.5 } = checkOptions(options, ['residualWeight'], 'attentionRollout option');
  if (typeof residualWeight !== 'number' || !(residualWeight >= 0 && residualWeight <= 1)) {
    throw invalid(`attentionRollout: residualWeight must be a number in [0, 1], got ${describe(residualWeight)}`);
  }
  if (!Array.isArray(attentions) || attentions.length === 0) {
    throw invalid(`attentionRollout needs forward's attention: a non-empty array of Tensors (1, H, T, T), one per layer; got ${describe(attentions)}`);
  }
  const layers = attentions.map((a, l) => {
    if (a == null) throw invalid(`attentionRollout: layer ${l}'s attention is missing (run forward with attention: true, every layer)`);
    const t = asFloatTensor(a, `attentions[${l}]`);
    const s = t.shape;
    if (s.length !== 4 || s[0] !== 1 || s[1] < 1 || s[2] !== s[3]) {
      throw invalid(`attentionRollout: attentions[${l}] must be (1, H, T, T) (a batch of one, H >= 1), got (${s.join(', ')})`);
    }
    return t;
  });
  const T = layers[0].shape[2];
  layers.forEach((t, l) => {
    if (t.shape[2] !== T) throw invalid(`attentionRollout: attentions[${l}] has T = ${t.shape[2]}, layer 0 has ${T}`);
  });
  const w = residualWeight;
  const L = layers.length;
  const out = new Float32Array(L * T * T);
  let prev = null; // R_{l-1}, float64 (T, T)
  for (let l = 0; l < L; l++) {
    const { data, shape } = layers[l];
    const H = shape[1];
    // Â_l in double
    const hat = new Float64Array(T * T);
    for (let h = 0; h < H; h++) {
      const base = h * T * T;
      for (let k = 0; k < T * T; k++) hat[k] += data[base + k];
    }
    for (let i = 0; i < T; i++) {
      let sum = 0;
      for (let j = 0; j < T; j++) {
        const v = (1 - w) * (hat[i * T + j] / H) + (i === j ? w : 0);
        hat[i * T + j] = v;
        sum += v;
      }
      if (sum !== 0) for (let j = 0; j < T; j++) hat[i * T + j] /= sum;
    }
    let r = hat;
    if (prev) {
      r = new Float64Array(T * T);
      for (let i = 0; i < T; i++) {
        for (let k = 0; k < T; k++) {
          const a = hat[i * T + k];
          if (a === 0) continue;
          for (let j = 0; j < T; j++) r[i * T + j] += a * prev[k * T + j];
        }
      }
    }
    out.set(r, l * T * T);
    prev = r;
  }
  return new Tensor(out, [L, T, T]);
}

// ---- direct logit attribution ----------------------------------------------------------------------
// The residual stream at one position is a sum of components (the embedding, each query head's output,
// each MLP's output) plus constants (biases, norm β's). With every norm's scale frozen at its actual
// input (LayerNorm s = 1/√(biased var + eps): c ↦ s·(c − mean c) ⊙ γ, β to the constants; RMSNorm:
// c ↦ s·c ⊙ γ), the logit difference is an affine function of them: each component's attribution is
// its image through every later norm, dotted with u = W_U[token] − W_U[against]. Everything in double.

const dot = (a, b) => { let s = 0; for (let i = 0; i < a.length; i++) s += a[i] * b[i]; return s; };

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
  const n = c.length, y = new Float64Array(n);
  let mean = 0;
  if (spec.kind === 'layer') { for (let i = 0; i < n; i++) mean += c[i]; mean /= n; }
  for (let i = 0; i < n; i++) y[i] = s * (c[i] - mean) * spec.weight[i] + (withBeta && spec.bias ? spec.bias[i] : 0);
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
  const comps = [Float64Array.from(plan.embed)];  // [0] embed; then heads and MLPs as they come; bias kept apart
  let bias = new Float64Array(E);
  const headIndex = [], mlpIndex = [];
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
  out.total = out.embed + out.bias + out.heads.flat().reduce((a, b) => a + b, 0) + out.mlp.reduce((a, b) => a + b, 0);
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
  const d = z.length, y = new Float64Array(E);
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
  let term = ax, sum = ax;
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
  const { position = T - 1, token, against } = checkOptions(options, ['position', 'token', 'against'], 'logitAttribution option');
  if (!Number.isInteger(position) || position < 0 || position >= T) throw invalid(`logitAttribution: position must be an integer in [0, ${T}), got ${describe(position)}`);
  if (!Number.isInteger(token) || token < 0 || token >= vocab) throw invalid(`logitAttribution: token must be an integer in [0, ${vocab}), got ${describe(token)}`);
  if (against !== undefined && (!Number.isInteger(against) || against < 0 || against >= vocab)) {
    throw invalid(`logitAttribution: against must be an integer in [0, ${vocab}) or left out, got ${describe(against)}`);
  }
  if (against === token) throw invalid(`logitAttribution: token and against are both ${token}: there is no difference to explain`);
  return { position, token, against };
}

// The result object of a walk: heads (L, H) and mlp (L) as Tensors, logitDiff from the real forward.
function attributionResult(parts, logitDiff) {
  const L = parts.heads.length, H = L > 0 ? parts.heads[0].length : 0;
  return {
    heads: new Tensor(Float32Array.from(parts.heads.flat()), [L, H]),
    mlp: new Tensor(Float32Array.from(parts.mlp), [L]),
    embed: parts.embed, bias: parts.bias, total: parts.total, logitDiff,
  };
}

// logits[position, token] − logits[position, against] (or the logit alone) of a (1, T, V) logits Tensor.
function logitDifference(logits, position, token, against) {
  const V = logits.shape[2], row = position * V;
  return logits.data[row + token] - (against === undefined ? 0 : logits.data[row + against]);
}

// The attention's context (1, H, T, d) of every layer's trace, at `position`: z[l][h] (d).
function contexts(traces, position) {
  return traces.map((steps) => {
    const c = steps.find((s) => s.name === 'context');
    const [, H, T, d] = c.shape;
    return Array.from({ length: H }, (_, h) => c.data.subarray((h * T + position) * d, (h * T + position + 1) * d));
  });
}

/** TinyTransformer.logitAttribution: the weights from stateDict(), z from the forward's trace. */
export function tinyLogitAttribution(model, ids, options = {}) {
  const batch = idBatch(ids, 'ids');
  if (batch.b !== 1) throw invalid(`logitAttribution needs a batch of one: ids (T) or (1, T), got (${batch.b}, ${batch.t})`);
  const cfg = model.config;
  const { position, token, against } = attributionOptions(options, batch.t, cfg.vocabSize);
  const r = model.forward(batch.tensor, { attention: false, trace: true });
  const sd = model.stateDict();
  const w = (name) => sd[name].data;
  const E = cfg.dModel, H = cfg.numHeads;
  const ln = (name) => ({ kind: 'layer', weight: w(`${name}.weight`), bias: w(`${name}.bias`), eps: 1e-5 });
  const embed = Float64Array.from(w('tok_emb.weight').subarray(batch.data[position] * E, (batch.data[position] + 1) * E));
  if (cfg.positional === 'learned') {
    const pe = w('pos_emb.weight');
    for (let i = 0; i < E; i++) embed[i] += pe[position * E + i];
  } else if (cfg.positional === 'sinusoidal') {
    for (let pair = 0; 2 * pair < E; pair++) {  // as src/core/positional.cpp: double, rounded to float32
      const angle = position * 10000 ** ((-2 * pair) / E);
      embed[2 * pair] += Math.fround(Math.sin(angle));
      if (2 * pair + 1 < E) embed[2 * pair + 1] += Math.fround(Math.cos(angle));
    }
  }
  const z = contexts(r.trace, position);
  const layers = z.map((zl, l) => {
    const p = `blocks.${l}.`;
    const wo = w(`${p}attn.out_proj.weight`);
    const mlp = cfg.mlp ? (x) => {
      const input = cfg.norm === 'pre' ? applyNorm(ln(`${p}ln2`), x) : x;
      const hid = matVec(w(`${p}mlp.fc1.weight`), cfg.mlpHidden, E, input, w(`${p}mlp.fc1.bias`)).map(geluErf);
      return matVec(w(`${p}mlp.fc2.weight`), E, cfg.mlpHidden, hid, w(`${p}mlp.fc2.bias`));
    } : null;
    return {
      heads: zl.map((zh, h) => headOutput(wo, E, E, zh, h)),
      attnBias: w(`${p}attn.out_proj.bias`),
      post1: cfg.norm === 'post' ? ln(`${p}ln1`) : null,
      mlp,
      post2: cfg.norm === 'post' && cfg.mlp ? ln(`${p}ln2`) : null,
    };
  });
  const head = w('head.weight'), hb = w('head.bias');
  const u = Float64Array.from(head.subarray(token * E, (token + 1) * E));
  if (against !== undefined) for (let i = 0; i < E; i++) u[i] -= head[against * E + i];
  const parts = attributeResidual({
    hidden: E, embed, layers, finalNorm: cfg.norm === 'pre' ? ln('ln_f') : null, u,
    constant: hb[token] - (against === undefined ? 0 : hb[against]),
  });
  return attributionResult(parts, logitDifference(r.logits, position, token, against));
}

/** A branch's parts through one norm frozen at the branch's total (OLMo 2's post-norms: x += norm(Σ parts)). */
export function normBranch(spec, parts) {
  const E = parts[0].length, sum = new Float64Array(E);
  for (const p of parts) for (let i = 0; i < E; i++) sum[i] += p[i];
  const s = normScale(spec, sum);
  return parts.map((p) => frozenNorm(spec, s, p, false));
}

// Every layer index 0 … L − 1.
const allLayers = (L) => Array.from({ length: L }, (_, l) => l);

// The blank options of a handle's interpForward.
const interpRun = (o) => ({
  traceLayers: [], hiddenStates: false, mlpOutputs: false, startLayer: 0, startResidual: null,
  deltaLayer: -1, attnDelta: null, logitsRow: -1, ...o,
});

// The names of a pretrained checkpoint's weights that attribution and patching read.
function pretrainedNames(core) {
  const gpt2 = core.arch === 0;
  const p = (l) => (gpt2 ? `h.${l}.` : `model.layers.${l}.`);
  return {
    gpt2,
    outProj: (l) => `${p(l)}${gpt2 ? 'attn.c_proj.weight' : 'self_attn.o_proj.weight'}`,
    outBias: (l) => (gpt2 ? `${p(l)}attn.c_proj.bias` : null),
    // OLMo 2's post-norms: after the attention, after the MLP
    post1: (l) => `${p(l)}post_attention_layernorm.weight`,
    post2: (l) => `${p(l)}post_feedforward_layernorm.weight`,
    unembed: core.tieEmbeddings ? (gpt2 ? 'wte.weight' : 'model.embed_tokens.weight') : 'lm_head.weight',
    finalNorm: gpt2 ? 'ln_f' : 'model.norm',
  };
}

/**
 * PretrainedModel.logitAttribution: one forward (traces for every head's z, the embedding output, every
 * MLP's output, the logits at `position`), the output projections, final norm and unembedding rows read
 * from the checkpoint; the walk is attributeResidual's.
 */
// Attribution and patching read the logits before any final soft-capping (issue #27); the forward gives
// them capped, so a model with final_logit_softcapping (Gemma 2) is refused rather than answered wrong.
function refuseCappedLogits(model, what) {
  if (model._core.finalSoftcap > 0) {
    throw invalid(`${what} needs the logits before final soft-capping, which ${model.architecture} applies (final_logit_softcapping): not implemented`);
  }
}

export function pretrainedLogitAttribution(model, ids, options = {}) {
  refuseCappedLogits(model, 'logitAttribution');
  const batch = idBatch(ids, 'ids');
  if (batch.b !== 1) throw invalid(`logitAttribution needs a batch of one: ids (T) or (1, T), got (${batch.b}, ${batch.t})`);
  const core = model._core;
  const { position, token, against } = attributionOptions(options, batch.t, core.vocabSize);
  const handle = model._live();
  const L = core.layers, E = core.hidden, H = core.heads;
  const names = pretrainedNames(core);
  const rows = (name, first = 0, count = 1) => check(handle.readRows(name, first, count)).data;
  const T = batch.t, d = core.headDim;
  const { first: r, z: zAll } = tracedForward((layers, first) => check(handle.interpForward(batch.data, 1, T,
    interpRun({ traceLayers: layers, hiddenStates: first, mlpOutputs: first, logitsRow: position }))), L, H, T);
  const at = (t) => t.data.subarray(position * E, (position + 1) * E);
  const z = zAll.map((zl) => allLayers(H).map((h) => zl.subarray((h * T + position) * d, (h * T + position + 1) * d)));
  const rms = (name) => ({ kind: 'rms', weight: rows(name), eps: core.normEps });
  const layers = z.map((zl, l) => {
    const wo = rows(names.outProj(l), 0, E);
    let heads = zl.map((zh, h) => headOutput(wo, E, H * core.headDim, zh, h));
    let mlpOut = Float64Array.from(at(r.mlpOutputs[l]));
    if (core.postNorms) {  // OLMo 2, Gemma 3: x += norm(attn(x)); x += norm(mlp(x)): each branch frozen at its own total
      heads = normBranch(rms(names.post1(l)), heads);
      mlpOut = applyNorm(rms(names.post2(l)), mlpOut);
    }
    const bias = names.outBias(l);
    return { heads, attnBias: bias ? rows(bias) : null, post1: null, mlp: () => mlpOut, post2: null };
  });
  const finalNorm = names.gpt2
    ? { kind: 'layer', weight: rows('ln_f.weight'), bias: rows('ln_f.bias'), eps: core.normEps }
    : rms('model.norm.weight');
  const u = Float64Array.from(rows(names.unembed, token));
  if (against !== undefined) {
    const v = rows(names.unembed, against);
    for (let i = 0; i < E; i++) u[i] -= v[i];
  }
  const parts = attributeResidual({
    hidden: E, embed: at(r.hiddenStates[0]), layers, finalNorm, u, constant: 0,
  });
  const logits = fromCore(r.logits);  // (1, 1, V): the row at position
  return attributionResult(parts, logitDifference(logits, 0, token, against));
}

// ---- activation patching ---------------------------------------------------------------------------
// A corrupted run with one activation taken from the clean run: a head's z (at every position, or at
// one) or the residual stream entering a block at one position. Each patched run restarts at the
// patched block from the corrupted run's residual stream there (the blocks before it are not run
// again); a head's z enters as W_O[:, head] · (z_clean − z_corrupted) added to that layer's attention
// output. Causal models run only the rows up to `position` and read the logits of `position` only.

/** The components patch knows. */
export const PATCH_COMPONENTS = Object.freeze(['head', 'head-position', 'residual']);
const PATCH_METRICS = Object.freeze(['logit-diff', 'probability']);

// clean/corrupted as lists of Int32Array, all of one length: ids (T), (1, T), a (B, T) batch (B pairs)
// or an array of ids.
function patchRuns(value, what) {
  const list = Array.isArray(value) && value.length > 0 && typeof value[0] !== 'number' ? value : [value];
  const out = [];
  for (const [i, v] of list.entries()) {
    const b = idBatch(v, list.length > 1 ? `${what}[${i}]` : what);
    for (let k = 0; k < b.b; k++) out.push(Int32Array.from(b.data.subarray(k * b.t, (k + 1) * b.t)));
  }
  return out;
}

/** patch's options checked (nothing runs before): the pairs, the component, the metric. */
function patchOptions(options, vocab) {
  const o = checkOptions(options, ['clean', 'corrupted', 'position', 'token', 'against', 'component', 'metric', 'onProgress', 'signal'], 'patch option');
  if (o.clean == null || o.corrupted == null) throw invalid('patch needs clean and corrupted ids');
  const clean = patchRuns(o.clean, 'clean'), corrupted = patchRuns(o.corrupted, 'corrupted');
  if (clean.length !== corrupted.length) throw invalid(`patch: ${clean.length} clean runs but ${corrupted.length} corrupted ones`);
  const T = clean[0].length;
  for (const ids of [...clean, ...corrupted]) {
    if (ids.length !== T) throw invalid(`patch: clean and corrupted ids must all have one length, got ${T} and ${ids.length}`);
  }
  if (T === 0) throw invalid('patch: the ids are empty');
  const component = o.component ?? 'head';
  if (!PATCH_COMPONENTS.includes(component)) throw invalid(`patch: component must be one of ${PATCH_COMPONENTS.map((c) => `'${c}'`).join(', ')}, got ${describe(component)}`);
  const metric = o.metric ?? 'logit-diff';
  if (!PATCH_METRICS.includes(metric)) throw invalid(`patch: metric must be 'logit-diff' or 'probability', got ${describe(metric)}`);
  if (o.onProgress != null && typeof o.onProgress !== 'function') throw invalid(`patch: onProgress must be a function, got ${describe(o.onProgress)}`);
  if (o.signal != null && typeof o.signal.aborted !== 'boolean') throw invalid(`patch: signal must be an AbortSignal, got ${describe(o.signal)}`);
  let picked;
  try {
    picked = attributionOptions({ position: o.position, token: o.token, against: o.against }, T, vocab);
  } catch (error) {
    throw invalid(error.message.replace('logitAttribution', 'patch'));
  }
  for (const ids of [...clean, ...corrupted]) {
    for (const id of ids) if (id < 0 || id >= vocab) throw invalid(`patch: token id ${id} is outside [0, ${vocab})`);
  }
  return { clean, corrupted, T, component, metric, onProgress: o.onProgress, signal: o.signal, ...picked };
}

function softmaxAt(row, token) {
  let max = -Infinity;
  for (const v of row) if (v > max) max = v;
  let z = 0;
  for (const v of row) z += Math.exp(v - max);
  return Math.exp(row[token] - max) / z;
}

const abortReason = (signal) => signal.reason ?? Object.assign(new Error('The operation was aborted'), { name: 'AbortError' });

/**
 * model.patch over an adapter: { L, H, E, d (head dim), vocab, causal, baseline(ids, position) →
 * { resid: [L] Float32Array (T·E) entering each block, z: [L] (H, T, d), row: logits at position (V) },
 * run(ids (b·T), b, T, startLayer, residual (b·T·E), deltaLayer, delta | null, position) → b rows (V),
 * outProj(l) → W_O (E, H·d) }.
 */
export async function runPatch(adapter, options) {
  const o = patchOptions(options, adapter.vocab);
  const { L, H, E, d } = adapter;
  const { T, component, position, token, against, signal, onProgress } = o;
  if (signal?.aborted) throw abortReason(signal);
  const rows = adapter.causal ? position + 1 : T;  // later rows cannot reach `position`
  const metric = (row) => (o.metric === 'probability' ? softmaxAt(row, token)
    : row[token] - (against === undefined ? 0 : row[against]));
  const shape = component === 'head' ? [L, H] : component === 'head-position' ? [L, H, T] : [L, T];
  const sums = new Float64Array(shape.reduce((a, b) => a * b, 1));
  // Baselines first: a pair with nothing to explain is refused before any patched run.
  const bases = o.clean.map((clean, i) => {
    const c = adapter.baseline(clean.subarray(0, rows), position);
    const x = adapter.baseline(o.corrupted[i].subarray(0, rows), position);
    const mc = metric(c.row), mx = metric(x.row);
    if (!(Math.abs(mc - mx) >= 1e-6 * Math.max(1, Math.abs(mc)))) {
      throw invalid(`patch: the clean and corrupted runs${o.clean.length > 1 ? ` of pair ${i}` : ''} give the same ${o.metric === 'probability' ? 'probability' : 'logit difference'} (${mc} and ${mx}): nothing to explain`);
    }
    return { c, x, mc, mx, ids: o.corrupted[i].subarray(0, rows) };
  });
  // The jobs: one batch of patched runs each; `entries` says where each run's ratio goes.
  const jobs = [];
  for (const base of bases) {
    for (let l = 0; l < L; l++) {
      if (component === 'head') jobs.push({ base, l, heads: allLayers(H).map((h) => ({ h, t: -1, entry: l * H + h })) });
      else if (component === 'head-position') {
        for (let h = 0; h < H; h++) jobs.push({ base, l, heads: allLayers(rows).map((t) => ({ h, t, entry: (l * H + h) * T + t })) });
      } else jobs.push({ base, l, positions: allLayers(rows).map((t) => ({ t, entry: l * T + t })) });
    }
  }
  const total = jobs.reduce((n, j) => n + (j.heads ?? j.positions).length, 0);
  const outProj = new Map();
  let done = 0;
  for (const job of jobs) {
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (signal?.aborted) throw abortReason(signal);
    const { base, l } = job;
    // A patch that changes nothing (the clean activation equals the corrupted one, e.g. at the rows
    // before the changed token of a causal model) is the corrupted run itself: its entry is 0, not run.
    const all = job.heads ?? job.positions;
    const differs = job.heads
      ? ({ h, t: only }) => {
        const zc = base.c.z[l], zx = base.x.z[l];
        const from = (h * rows + (only < 0 ? 0 : only)) * d, to = (h * rows + (only < 0 ? rows : only + 1)) * d;
        for (let i = from; i < to; i++) if (zc[i] !== zx[i]) return true;
        return false;
      }
      : ({ t }) => {
        const rc = base.c.resid[l], rx = base.x.resid[l];
        for (let i = t * E; i < (t + 1) * E; i++) if (rc[i] !== rx[i]) return true;
        return false;
      };
    const runs = all.filter(differs);
    done += all.length - runs.length;
    if (runs.length === 0) {
      onProgress?.(done, total);
      continue;
    }
    const b = runs.length, n = rows * E;
    const residual = new Float32Array(b * n);
    for (let k = 0; k < b; k++) residual.set(base.x.resid[l], k * n);
    let delta = null;
    if (job.heads) {
      if (!outProj.has(l)) outProj.set(l, adapter.outProj(l));
      const wo = outProj.get(l), inner = H * d, zc = base.c.z[l], zx = base.x.z[l];
      delta = new Float32Array(b * n);
      const dz = new Float64Array(d);
      runs.forEach(({ h, t: only }, k) => {
        for (let t = only < 0 ? 0 : only; t < (only < 0 ? rows : only + 1); t++) {
          const at = (h * rows + t) * d;
          for (let j = 0; j < d; j++) dz[j] = zc[at + j] - zx[at + j];
          const out = k * n + t * E;
          for (let r = 0; r < E; r++) {
            let s = 0;
            const w = r * inner + h * d;
            for (let j = 0; j < d; j++) s += wo[w + j] * dz[j];
            delta[out + r] = s;
          }
        }
      });
    } else {
      const clean = base.c.resid[l];
      runs.forEach(({ t }, k) => residual.set(clean.subarray(t * E, (t + 1) * E), k * n + t * E));
    }
    const ids = new Int32Array(b * rows);
    for (let k = 0; k < b; k++) ids.set(base.ids, k * rows);
    const logits = adapter.run(ids, b, rows, l, residual, job.heads ? l : -1, delta, position);
    const V = logits.length / b;
    runs.forEach(({ entry }, k) => {
      sums[entry] += (metric(logits.subarray(k * V, (k + 1) * V)) - base.mx) / (base.mc - base.mx);
    });
    done += b;
    onProgress?.(done, total);
  }
  const P = bases.length;
  const one = P === 1;
  return {
    result: new Tensor(Float32Array.from(sums, (v) => v / P), shape),
    cleanDiff: one ? bases[0].mc : bases.map((x) => x.mc),
    corruptedDiff: one ? bases[0].mx : bases.map((x) => x.mx),
  };
}

// Bytes of traced (T, T) steps held at once: a trace keeps scores, scaled, masked and weights, each
// (H, T, T) float32, per layer (and the binding copies them once more).
let traceBudgetBytes = 64 * 1024 * 1024;
/** Tests only: sets the trace budget (bytes), returns the previous one. */
export function _setTraceBudget(bytes) { const old = traceBudgetBytes; traceBudgetBytes = bytes; return old; }

/**
 * Every layer's z, (H, T, d) float32 each, of one run (a batch of one): run(layers, first) is a
 * forward tracing `layers` (first: the call whose other outputs the caller keeps). Short inputs trace
 * every layer in one forward; long ones a few layers per forward, so the traces' (T, T) steps stay
 * under the trace budget. Returns { first (that call's result, traces dropped), z }.
 */
function tracedForward(run, L, H, T) {
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

/** model.patch for a PretrainedModel: its interpForward and the output projections as stored. */
export function pretrainedPatch(model, options) {
  try {
    refuseCappedLogits(model, 'patch');
  } catch (error) {
    return Promise.reject(error);  // patch reports every failure through its promise
  }
  const handle = model._live();
  const core = model._core;
  const names = pretrainedNames(core);
  const L = core.layers, E = core.hidden;
  return runPatch({
    L, H: core.heads, E, d: core.headDim, vocab: core.vocabSize, causal: true,
    baseline(ids, position) {
      const { first: r, z } = tracedForward((layers, first) => check(handle.interpForward(ids, 1, ids.length,
        interpRun({ traceLayers: layers, hiddenStates: first, logitsRow: position }))), L, core.heads, ids.length);
      return { resid: r.hiddenStates.slice(0, L).map((t) => t.data), z, row: r.logits.data };
    },
    run(ids, b, t, startLayer, residual, deltaLayer, delta, position) {
      return check(handle.interpForward(ids, b, t, interpRun({ startLayer, startResidual: residual, deltaLayer, attnDelta: delta, logitsRow: position }))).logits.data;
    },
    outProj: (l) => check(handle.readRows(names.outProj(l), 0, E)).data,
  }, options);
}

/** model.patch for a TinyTransformer: its interpForward, out_proj from stateDict(). */
export function tinyPatch(model, options) {
  const handle = model._live();
  const cfg = model.config;
  const L = cfg.numLayers, E = cfg.dModel, H = cfg.numHeads;
  const rowAt = (logits, b, t, position) => {
    const V = cfg.vocabSize, out = new Float32Array(b * V);
    for (let k = 0; k < b; k++) out.set(logits.subarray((k * t + position) * V, (k * t + position + 1) * V), k * V);
    return out;
  };
  return runPatch({
    L, H, E, d: E / H, vocab: cfg.vocabSize, causal: cfg.causal,
    baseline(ids, position) {
      const { first: r, z } = tracedForward((layers, first) => check(handle.interpForward(ids, 1, ids.length,
        interpRun({ traceLayers: layers, hiddenStates: first }))), L, H, ids.length);
      return { resid: r.hiddenStates.map((t) => t.data), z, row: rowAt(r.logits.data, 1, ids.length, position) };
    },
    run(ids, b, t, startLayer, residual, deltaLayer, delta, position) {
      const r = check(handle.interpForward(ids, b, t, interpRun({ startLayer, startResidual: residual, deltaLayer, attnDelta: delta })));
      return rowAt(r.logits.data, b, t, position);
    },
    outProj: (l) => model.stateDict()[`blocks.${l}.attn.out_proj.weight`].data,
  }, options);
}
