// Attribution patching on both model classes: patch's linear approximation, one backward per pair
// whatever L·H·T. Each entry is (a_clean − a_corrupted) · ∂M/∂a evaluated on the corrupted run,
// divided by (M_clean − M_corrupted), for a = a head's z (summed over positions, or at one), the
// residual stream entering a block at one position, or an MLP branch's output at one position. Two
// metric_gradients calls per pair (the clean run's activations, the corrupted run's activations and
// gradients) over the model's interpretability adapter (interp/adapter.js).
import { AttentionError } from '../errors.js';
import { Tensor } from '../tensor.js';
import { PATCH_COMPONENTS, abortReason, patchOptions } from './patch.js';
import { GRADIENT_METRICS } from './gradients.js';

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);

/** The components attributionPatch knows (patch's). */
export const ATTRIBUTION_PATCH_COMPONENTS = PATCH_COMPONENTS;

const METRIC_NAMES = {
  'logit-diff': 'logit difference',
  probability: 'probability',
  'log-probability': 'log-probability',
};

// Σ over [from, to) of (c − x)·g, in double.
function dot(c, x, g, from, to) {
  let s = 0;
  for (let i = from; i < to; i++) s += (c[i] - x[i]) * g[i];
  return s;
}

// One pair's entries (unnormalised) added into sums with weight w.
function addPair(sums, clean, corr, { L, H, E, zDim, heads }, component, T, w) {
  for (let l = 0; l < L; l++) {
    if (component === 'head' || component === 'head-position') {
      const zc = clean.z[l].data,
        zx = corr.z[l].data,
        g = corr.gradZ[l].data;
      const Hl = heads(l),
        d = zDim(l), // a DeltaNet layer's value heads: d_v
        HD = Hl * d;
      for (let h = 0; h < H; h++) {
        for (let t = 0; t < T; t++) {
          // NaN past the layer's heads (a short convolution has none)
          const v = h < Hl ? dot(zc, zx, g, t * HD + h * d, t * HD + (h + 1) * d) * w : NaN;
          sums[component === 'head' ? l * H + h : (l * H + h) * T + t] += v;
        }
      }
    } else {
      const mlp = component === 'mlp';
      const c = (mlp ? clean.mlpBranch : clean.hidden)[l].data,
        x = (mlp ? corr.mlpBranch : corr.hidden)[l].data,
        g = (mlp ? corr.gradMlp : corr.gradHidden)[l].data;
      for (let t = 0; t < T; t++) sums[l * T + t] += dot(c, x, g, t * E, (t + 1) * E) * w;
    }
  }
}

/**
 * model.attributionPatch for both model classes → { result, cleanDiff, corruptedDiff } as patch's
 * (lists of pairs average); see docs/interpretability.md.
 */
export async function attributionPatch(model, options = {}) {
  const a = model._interp();
  const o = patchOptions(options, a.vocab, 'attributionPatch');
  const { L, H, T } = { L: a.L, H: a.H, T: o.T };
  const { component, signal, onProgress } = o;
  if (component === 'mlp' && !a.mlp)
    throw invalid("attributionPatch: component 'mlp' needs a model with MLP blocks");
  if (o.metric !== 'logit-diff' && o.against !== undefined)
    throw invalid(
      `attributionPatch: against is only for metric 'logit-diff', got against with '${o.metric}'`,
    );
  if (signal?.aborted) throw abortReason(signal);
  const core = {
    metric: GRADIENT_METRICS.indexOf(o.metric),
    position: o.position,
    token: o.token,
    against: o.against ?? -1,
    activations: true,
  };
  const shape = component === 'head' ? [L, H] : component === 'head-position' ? [L, H, T] : [L, T];
  const sums = new Float64Array(shape.reduce((x, y) => x * y, 1));
  const P = o.clean.length;
  const mc = [],
    mx = [];
  for (let i = 0; i < P; i++) {
    await new Promise((resolve) => setTimeout(resolve, 0)); // the page (and an abort) get a turn
    if (signal?.aborted) throw abortReason(signal);
    const clean = a.gradients(o.clean[i], 1, T, core);
    const corr = a.gradients(o.corrupted[i], 1, T, core);
    const c = clean.values[0],
      x = corr.values[0];
    if (!(Math.abs(c - x) >= 1e-6 * Math.max(1, Math.abs(c)))) {
      throw invalid(
        `attributionPatch: the clean and corrupted runs${P > 1 ? ` of pair ${i}` : ''} give the same ${METRIC_NAMES[o.metric]} (${c} and ${x}): nothing to explain`,
      );
    }
    mc.push(c);
    mx.push(x);
    addPair(sums, clean, corr, a, component, T, 1 / (P * (c - x)));
    onProgress?.(i + 1, P);
  }
  return {
    result: new Tensor(Float32Array.from(sums), shape),
    cleanDiff: P === 1 ? mc[0] : mc,
    corruptedDiff: P === 1 ? mx[0] : mx,
  };
}
