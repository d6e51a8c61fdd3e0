// Direct logit attribution: each component's share of a logit difference (the embedding,
// every query head, every MLP, the constants), one path for both model classes over their
// interpretability adapters (interp/adapter.js); and the pieces activation patching (interp/patch.js)
// shares with it. Everything in double.
import { AttentionError } from '../errors.js';
import { checkOptions, describe } from '../options.js';
import { idBatch } from '../ids.js';
import { Tensor, fromCore } from '../tensor.js';

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);

// ---- direct logit attribution ----------------------------------------------------------------------
// The residual stream at one position is a sum of components (the embedding, each query head's output,
// each MLP's output) plus constants (biases, norm β's). With every norm's scale frozen at its actual
// input (LayerNorm s = 1/√(biased var + eps): c ↦ s·(c − mean c) ⊙ γ, β to the constants; RMSNorm:
// c ↦ s·c ⊙ γ), the logit difference is an affine function of them: each component's attribution is
// its image through every later norm, dotted with u = W_U[token] − W_U[against]. Everything in double.

export const dot = (a, b) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

// s of a norm spec { kind: 'layer' | 'rms', weight, bias?, eps } at input x.
export function normScale(spec, x) {
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
export function frozenNorm(spec, s, c, withBeta) {
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
 * One position's residual stream kept apart in components: `inputs` first (the embedding, and the
 * positions where they are added to the stream), then whatever add() appends (heads, MLPs), the
 * constants (biases, norm β's) in `bias`. freeze(spec) sends everything through a norm frozen at the
 * stream's total. Shared by logitAttribution and qkAttribution (interp/qk.js).
 */
export function residualStream(E, inputs) {
  const comps = inputs.map((v) => Float64Array.from(v));
  const stream = {
    comps,
    bias: new Float64Array(E),
    add: (v) => comps.push(Float64Array.from(v)) - 1,
    addBias: (v) => {
      for (let i = 0; i < E; i++) stream.bias[i] += v[i];
    },
    total: () => {
      const r = Float64Array.from(stream.bias);
      for (const c of comps) for (let i = 0; i < E; i++) r[i] += c[i];
      return r;
    },
    freeze: (spec) => {
      const s = normScale(spec, stream.total());
      for (let k = 0; k < comps.length; k++) comps[k] = frozenNorm(spec, s, comps[k], false);
      stream.bias = frozenNorm(spec, s, stream.bias, true);
    },
  };
  return stream;
}

/**
 * The blocks of attributeResidual's plan.layers over a residualStream: each layer's heads (or its
 * headless mixer's output), its attention bias, post-norms and MLP output in order. Returns
 * { headIndex (per layer, per head), mixerIndex (per layer, -1 where the mixer has heads), mlpIndex
 * (per layer, -1 without an MLP) }: the components' indices in stream.comps.
 */
export function walkLayers(stream, layers) {
  const headIndex = [],
    mixerIndex = [],
    mlpIndex = [];
  for (const layer of layers) {
    headIndex.push(layer.heads.map((h) => stream.add(h)));
    mixerIndex.push(layer.mixer ? stream.add(layer.mixer) : -1);
    if (layer.attnBias) stream.addBias(layer.attnBias);
    if (layer.post1) stream.freeze(layer.post1);
    mlpIndex.push(layer.mlp ? stream.add(layer.mlp(stream.total())) : -1);
    if (layer.post2) stream.freeze(layer.post2);
  }
  return { headIndex, mixerIndex, mlpIndex };
}

/**
 * Walks one position's residual stream through the blocks, keeping every component apart.
 * plan: { hidden, embed (E), layers: [{ heads: (E)[] per query head (none for a headless mixer),
 *   mixer: (E) | null (a headless mixer's output), attnBias (E) | null, post1: norm | null (after the
 *   attention's residual add), mlp: (residual) => (E) | null (it applies its own input norm), post2:
 *   norm | null }], finalNorm: norm | null, u (E), constant (number: the output head's bias difference) }.
 * Returns { heads: number[][], mixers: number[] (NaN where the mixer has heads), mlp: number[], embed,
 * bias, total }.
 */
export function attributeResidual(plan) {
  const stream = residualStream(plan.hidden, [plan.embed]); // comps[0]: the embedding
  const { headIndex, mixerIndex, mlpIndex } = walkLayers(stream, plan.layers);
  if (plan.finalNorm) stream.freeze(plan.finalNorm);
  const part = (k) => (k < 0 ? 0 : dot(stream.comps[k], plan.u));
  const out = {
    heads: headIndex.map((ks) => ks.map(part)),
    mixers: mixerIndex.map((k) => (k < 0 ? NaN : part(k))),
    mlp: mlpIndex.map(part),
    embed: part(0),
    bias: dot(stream.bias, plan.u) + plan.constant,
  };
  const sum = (list) => list.reduce((a, b) => (Number.isNaN(b) ? a : a + b), 0);
  out.total = out.embed + out.bias + sum(out.heads.flat()) + sum(out.mixers) + sum(out.mlp);
  return out;
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

// The result object of a walk: heads (L, H: NaN past a layer's heads), mixers and mlp (L) as Tensors,
// logitDiff from the real forward.
function attributionResult(parts, H, logitDiff) {
  const L = parts.heads.length;
  const heads = new Float32Array(L * H).fill(NaN);
  parts.heads.forEach((row, l) => heads.set(row, l * H));
  return {
    heads: new Tensor(heads, [L, H]),
    mixers: new Tensor(Float32Array.from(parts.mixers), [L]),
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
 * under the trace budget. onTrace(l, steps), when given, sees each layer's trace before it is
 * dropped. `traced(l)`: whether layer l has heads to trace (z[l] is null where not; at least one
 * forward runs). Returns { first (that call's result, traces dropped), z }.
 */
export function tracedForward(run, L, H, T, onTrace, traced = () => true) {
  const per = Math.max(1, Math.floor(traceBudgetBytes / (2 * 4 * 4 * H * T * T)));
  const z = new Array(L).fill(null);
  const all = allLayers(L).filter(traced);
  let first = null;
  for (let i0 = 0; i0 < Math.max(all.length, 1); i0 += per) {
    const layers = all.slice(i0, i0 + per);
    const r = run(layers, first === null);
    for (const l of layers) {
      // "z": the rows the output projection reads (after an output gate; a DeltaNet layer's value
      // heads' gated-norm output), else the attention's context
      const steps = r.traces[l];
      z[l] = (steps.find((s) => s.name === 'z') ?? steps.find((s) => s.name === 'context')).data;
      onTrace?.(l, r.traces[l]);
    }
    r.traces = null;
    if (first === null) first = r;
  }
  return { first, z };
}

// Layer l of the walk (attributeResidual's plan): each head's output W_O,h · z_h (z null: a headless
// mixer, whose output `mixerOut` is one component), the MLP's output at the position (the core's,
// bias included), and the norms after them: a norm on a branch is frozen here at the branch's own
// output (OLMo 2, Gemma: x += norm(f(x))), one on the stream in the walk; each branch then × the
// layer's branch scale (Granite: x += m · f(x)), its bias included.
export function layerPlan(a, l, z, mlpOut, mixerOut = null) {
  let heads = z ? z.map((zh, h) => headOutput(a.outProj(l), a.E, a.heads(l) * a.zDim(l), zh, h)) : [];
  let mixer = z ? null : mixerOut;
  let mlp = mlpOut;
  const afterAttn = a.normAfter(l, 'attn'),
    afterMlp = a.normAfter(l, 'mlp');
  if (afterAttn?.branch && z) heads = normBranch(afterAttn.spec, heads);
  if (afterAttn?.branch && mixer) mixer = applyNorm(afterAttn.spec, mixer);
  if (afterMlp?.branch && mlp) mlp = applyNorm(afterMlp.spec, mlp);
  const m = a.branchScale(l);
  const scaled = (v) => (v && m !== 1 ? Float64Array.from(v, (x) => x * m) : v);
  return {
    heads: heads.map(scaled),
    mixer: scaled(mixer),
    attnBias: z ? scaled(a.outBias(l)) : null,
    post1: afterAttn && !afterAttn.branch ? afterAttn.spec : null,
    mlp: mlp ? () => scaled(mlp) : null,
    post2: afterMlp && !afterMlp.branch ? afterMlp.spec : null,
  };
}

/**
 * model.logitAttribution for both model classes: one forward (traces for every head's z, the
 * embedding output, every MLP's output, the logits at `position`, before any final cap), the output
 * projections, norms and unembedding rows from the model's adapter; the walk is attributeResidual's.
 */
export function logitAttribution(model, ids, options = {}) {
  const batch = idBatch(ids, 'ids');
  if (batch.b !== 1)
    throw invalid(`logitAttribution needs a batch of one: ids (T) or (1, T), got (${batch.b}, ${batch.t})`);
  const { position, token, against } = attributionOptions(options, batch.t, model.vocabSize);
  const a = model._interp();
  const { L, H, E } = a,
    T = batch.t;
  const { first: r, z: zAll } = tracedForward(
    (layers, first) =>
      a.forward(batch.data, 1, T, {
        traceLayers: layers,
        hiddenStates: first,
        capture: first ? branchHooks(a) : [],
        logitsRow: position,
      }),
    L,
    H,
    T,
    undefined,
    (l) => a.heads(l) > 0,
  );
  const at = (t) => t.data.subarray(position * E, (position + 1) * E);
  const layers = zAll.map((zl, l) =>
    layerPlan(
      a,
      l,
      zl &&
        allLayers(a.heads(l)).map((h) =>
          zl.subarray((h * T + position) * a.zDim(l), (h * T + position + 1) * a.zDim(l)),
        ),
      a.mlp ? Float64Array.from(at(r.activations[`blocks.${l}.mlp.hook_out`])) : null,
      zl ? null : Float64Array.from(at(r.activations[a.mixerHook(l)])),
    ),
  );
  const finalNorm = a.finalNorm();
  const want = a.unembed(token);
  const u = Float64Array.from(want.row);
  let constant = want.bias;
  if (against !== undefined) {
    const v = a.unembed(against);
    for (let i = 0; i < E; i++) u[i] -= v.row[i];
    constant -= v.bias;
  }
  const parts = attributeResidual({
    hidden: E,
    embed: at(r.hiddenStates[0]),
    layers,
    finalNorm,
    u,
    constant,
  });
  const logits = fromCore(r.logits); // (1, 1, V): the row at position
  return attributionResult(parts, H, logitDifference(logits, 0, token, against));
}

/** The hooks the walks capture: every MLP's output and each headless mixer's (adapter.mixerHook). */
export function branchHooks(a) {
  const mixers = allLayers(a.L)
    .map((l) => a.mixerHook(l))
    .filter(Boolean);
  return [...(a.mlp ? ['blocks.*.mlp.hook_out'] : []), ...mixers];
}
