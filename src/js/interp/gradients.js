// Gradients of one prediction's metric through a whole model (metricGradients) and input saliency
// on top of them (saliency: the gradient, gradient × input, integrated gradients), for both model
// classes over their interpretability adapters (interp/adapter.js: gradients(ids, b, t, options) is
// the core's metric_gradients, src/model/metric_gradients.h). The weights are frozen.
import { AttentionError } from '../errors.js';
import { checkOptions, describe } from '../options.js';
import { idBatch } from '../ids.js';
import { Tensor } from '../tensor.js';
import { attributionOptions } from './attribution.js';
import { gradientHooks, gradHookTensors } from './grad-hooks.js';

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);

/** The metrics the gradient tools know, in the core's order (MetricKind). */
export const GRADIENT_METRICS = Object.freeze(['logit-diff', 'probability', 'log-probability']);
/** saliency's methods and baselines. */
export const SALIENCY_METHODS = Object.freeze(['gradient', 'gradient-x-input', 'integrated-gradients']);
export const SALIENCY_BASELINES = Object.freeze(['zero', 'keep-positions']);

const quoted = (list) => list.map((m) => `'${m}'`).join(', ');

/**
 * The metric options every gradient tool shares, checked before anything runs (name: the method, for
 * the messages): { position, token, against, metric } → the core's { metric (0|1|2), position, token,
 * against (-1 none) } and the picked values.
 */
export function metricOptions(o, T, vocab, name) {
  const metric = o.metric ?? 'logit-diff';
  if (!GRADIENT_METRICS.includes(metric))
    throw invalid(`${name}: metric must be one of ${quoted(GRADIENT_METRICS)}, got ${describe(metric)}`);
  let picked;
  try {
    picked = attributionOptions({ position: o.position, token: o.token, against: o.against }, T, vocab);
  } catch (error) {
    throw invalid(error.message.replace('logitAttribution', name));
  }
  if (metric !== 'logit-diff' && picked.against !== undefined)
    throw invalid(`${name}: against is only for metric 'logit-diff', got against with ${describe(metric)}`);
  const core = {
    metric: GRADIENT_METRICS.indexOf(metric),
    position: picked.position,
    token: picked.token,
    against: picked.against ?? -1,
  };
  return { metric, core, ...picked };
}

// ids as a checked batch of one (T) with every id inside the vocabulary.
function oneSequence(ids, vocab, name) {
  const batch = idBatch(ids, 'ids');
  if (batch.b !== 1)
    throw invalid(`${name} needs a batch of one: ids (T) or (1, T), got (${batch.b}, ${batch.t})`);
  if (batch.t === 0) throw invalid(`${name}: the ids are empty`);
  for (const id of batch.data)
    if (id < 0 || id >= vocab) throw invalid(`${name}: token id ${id} is outside [0, ${vocab})`);
  return batch;
}

// The core's z gradient per layer, (1, T, H_l·d_l) each (empty for a layer without heads), as one
// Tensor (L, H, T, d), H and d the widest layer's (d_l: a DeltaNet layer's value head size).
function headMajor(gradZ, H, T, d, zDim, heads) {
  const L = gradZ.length;
  // NaN past a layer's heads (a conv layer has none) and past its d_l
  const out = new Float32Array(L * H * T * d).fill(NaN);
  gradZ.forEach((g, l) => {
    const Hl = g.data.length ? heads(l) : 0,
      dl = zDim(l);
    for (let t = 0; t < T; t++) {
      for (let h = 0; h < Hl; h++) {
        const from = (t * Hl + h) * dl;
        out.set(g.data.subarray(from, from + dl), ((l * H + h) * T + t) * d);
      }
    }
  });
  return new Tensor(out, [L, H, T, d]);
}

/**
 * model.metricGradients for both model classes → { value, gradHiddenStates (L + 1 of (T, E)), gradZ
 * (L, H, T, d_head), gradAttention (L of (1, H, T, T)) | null, gradHooks ({ [hook]: Tensor in the
 * hook's shape } for the `hooks` asked for, interp/grad-hooks.js) }; see docs/interpretability.md.
 */
export function metricGradients(model, ids, options = {}) {
  const o = checkOptions(
    options,
    ['position', 'token', 'against', 'metric', 'attention', 'hooks'],
    'metricGradients option',
  );
  if (o.attention != null && typeof o.attention !== 'boolean')
    throw invalid(`metricGradients: attention must be a boolean, got ${describe(o.attention)}`);
  const a = model._interp();
  const batch = oneSequence(ids, a.vocab, 'metricGradients');
  const T = batch.t;
  const { core } = metricOptions(o, T, a.vocab, 'metricGradients');
  const plan = gradientHooks(model, a, o.hooks);
  const attention = o.attention === true;
  const r = a.gradients(batch.data, 1, T, { ...core, attention: attention || plan.attention });
  return {
    value: r.values[0],
    gradHiddenStates: r.gradHidden.map((g) => new Tensor(g.data, [T, a.E])),
    gradZ: headMajor(r.gradZ, a.H, T, a.d, a.zDim, a.heads),
    // null for a layer without softmax attention weights (a short convolution, a DeltaNet layer)
    gradAttention: attention
      ? r.gradAttention.map((g) => (g.data.length ? new Tensor(g.data, g.shape) : null))
      : null,
    gradHooks: gradHookTensors(plan, r, T),
  };
}

// saliency's own options checked (before anything runs).
function saliencyOptions(o, a, name) {
  const method = o.method ?? 'gradient-x-input';
  if (!SALIENCY_METHODS.includes(method))
    throw invalid(`${name}: method must be one of ${quoted(SALIENCY_METHODS)}, got ${describe(method)}`);
  const steps = o.steps ?? 32;
  if (!Number.isInteger(steps) || steps < 1 || steps > 4096)
    throw invalid(`${name}: steps must be an integer in [1, 4096], got ${describe(steps)}`);
  const baseline = o.baseline ?? 'zero';
  if (!SALIENCY_BASELINES.includes(baseline))
    throw invalid(
      `${name}: baseline must be one of ${quoted(SALIENCY_BASELINES)}, got ${describe(baseline)}`,
    );
  if (baseline === 'keep-positions' && !a.embedding(0).positionsAdded)
    throw invalid(
      `${name}: baseline 'keep-positions' needs a model that adds positions to the stream (GPT-2, a learned or sinusoidal TinyTransformer)`,
    );
  if (o.onProgress != null && typeof o.onProgress !== 'function')
    throw invalid(`${name}: onProgress must be a function, got ${describe(o.onProgress)}`);
  if (o.signal != null && typeof o.signal.aborted !== 'boolean')
    throw invalid(`${name}: signal must be an AbortSignal, got ${describe(o.signal)}`);
  return { method, steps, baseline, onProgress: o.onProgress, signal: o.signal };
}

export const abortReason = (signal) =>
  signal.reason ?? Object.assign(new Error('The operation was aborted'), { name: 'AbortError' });

// The baseline b (T·E): 0, or the position part of hidden state 0 (e minus each token's embedding).
function baselineOf(a, ids, e, baseline) {
  const b = new Float32Array(e.length);
  if (baseline === 'zero') return b;
  const E = a.E;
  ids.forEach((id, t) => {
    const tok = a.embedding(id).token;
    for (let k = 0; k < E; k++) b[t * E + k] = e[t * E + k] - tok[k];
  });
  return b;
}

// Σ_{k=1..m} g(b + (k/m)(e − b)) (T·E, double), the steps batched through startEmbedding in chunks.
async function integratedSum(a, ids, e, b, core, s) {
  const n = e.length,
    m = s.steps;
  const chunk = Math.max(1, Math.min(m, Math.floor(2 ** 21 / (n * (a.L + 2)))));
  const sum = new Float64Array(n);
  for (let k0 = 1; k0 <= m; k0 += chunk) {
    await new Promise((resolve) => setTimeout(resolve, 0)); // the page (and an abort) get a turn
    if (s.signal?.aborted) throw abortReason(s.signal);
    const count = Math.min(chunk, m - k0 + 1);
    const start = new Float32Array(count * n);
    for (let j = 0; j < count; j++) {
      const alpha = (k0 + j) / m;
      for (let i = 0; i < n; i++) start[j * n + i] = b[i] + alpha * (e[i] - b[i]);
    }
    const ids2 = new Int32Array(count * ids.length);
    for (let j = 0; j < count; j++) ids2.set(ids, j * ids.length);
    const g = a.gradients(ids2, count, ids.length, { ...core, startEmbedding: start }).gradHidden[0].data;
    for (let j = 0; j < count; j++) for (let i = 0; i < n; i++) sum[i] += g[j * n + i];
    s.onProgress?.(k0 - 1 + count, m);
  }
  return sum;
}

/**
 * model.saliency for both model classes → { scores: Tensor (T), value, delta } with e = hidden state 0
 * and g = ∂M/∂e; see docs/interpretability.md for each method's definition.
 */
export async function saliency(model, ids, options = {}) {
  const o = checkOptions(
    options,
    ['position', 'token', 'against', 'metric', 'method', 'steps', 'baseline', 'onProgress', 'signal'],
    'saliency option',
  );
  const a = model._interp();
  const batch = oneSequence(ids, a.vocab, 'saliency');
  const T = batch.t,
    E = a.E;
  const { core } = metricOptions(o, T, a.vocab, 'saliency');
  const s = saliencyOptions(o, a, 'saliency');
  if (s.signal?.aborted) throw abortReason(s.signal);
  const first = a.gradients(batch.data, 1, T, { ...core, activations: true });
  const e = first.hidden[0].data,
    g = first.gradHidden[0].data;
  const value = first.values[0];
  const scores = new Float64Array(T);
  let delta = NaN;
  if (s.method === 'integrated-gradients') {
    const b = baselineOf(a, batch.data, e, s.baseline);
    const sum = await integratedSum(a, batch.data, e, b, core, s);
    for (let i = 0; i < T * E; i++) scores[Math.floor(i / E)] += (e[i] - b[i]) * (sum[i] / s.steps);
    const atBase = a.gradients(batch.data, 1, T, { ...core, startEmbedding: b }).values[0];
    delta = Math.abs(scores.reduce((x, y) => x + y, 0) - (value - atBase));
  } else {
    for (let i = 0; i < T * E; i++) {
      const t = Math.floor(i / E);
      scores[t] += s.method === 'gradient' ? g[i] * g[i] : e[i] * g[i];
    }
    if (s.method === 'gradient') for (let t = 0; t < T; t++) scores[t] = Math.sqrt(scores[t]);
    s.onProgress?.(1, 1);
  }
  return { scores: new Tensor(Float32Array.from(scores), [T]), value, delta };
}
