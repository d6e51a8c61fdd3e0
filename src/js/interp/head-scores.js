// Interpretability over a model's own attention: head-type scores and attention rollout.
// Pure functions of a forward's output (ids and the per-layer attention Tensors (1, H, T, T)); the
// model classes call them with one-line methods. Sums run in double; results are float32 Tensors.
import { AttentionError } from '../errors.js';
import { checkOptions, describe } from '../options.js';
import { idBatch } from '../ids.js';
import { Tensor, asFloatTensor } from '../tensor.js';

/** The head-score kinds headScores knows, in its default order. */
export const HEAD_SCORE_KINDS = Object.freeze(['previous-token', 'duplicate-token', 'induction']);

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);

// kinds as a checked array of known names (before any work, so a refused call changes nothing).
function checkKinds(kinds) {
  if (!Array.isArray(kinds))
    throw invalid(
      `headScores kinds must be an array of ${HEAD_SCORE_KINDS.map((k) => `'${k}'`).join(', ')}; got ${describe(kinds)}`,
    );
  for (const kind of kinds) {
    if (!HEAD_SCORE_KINDS.includes(kind)) {
      throw invalid(
        `headScores: unknown kind ${describe(kind)}; the known kinds are ${HEAD_SCORE_KINDS.map((k) => `'${k}'`).join(', ')}`,
      );
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
 * (1, H_l, T, T) per layer (rows = queries), or null for a layer without heads (LFM2's short
 * convolution). H is the widest layer's H_l; a layer's entries past its heads are NaN. Each score is
 * the mean over the kind's qualifying rows of the attention weight on that row's keys (see keysOf);
 * no qualifying row gives NaN for every head.
 */
export function headScoresFromAttention(ids, attention, kinds = HEAD_SCORE_KINDS) {
  checkKinds(kinds);
  const L = attention.length;
  const T = ids.length;
  const H = Math.max(0, ...attention.map((a) => (a ? a.shape?.[1] : 0)));
  const out = {};
  for (const kind of kinds) {
    const rows = [];
    for (let i = 0; i < T; i++) {
      const keys = keysOf(kind, ids, i);
      if (keys) rows.push([i, keys]);
    }
    const scores = new Float32Array(L * H).fill(NaN);
    for (let l = 0; l < L; l++) {
      const a = attention[l];
      if (a === null) continue; // no heads
      if (
        !a ||
        a.shape.length !== 4 ||
        a.shape[0] !== 1 ||
        !(a.shape[1] >= 1) ||
        a.shape[2] !== T ||
        a.shape[3] !== T
      ) {
        throw invalid(
          `headScores: layer ${l}'s attention must be a Tensor (1, H, ${T}, ${T}) or null, got ${a ? `(${a.shape.join(', ')})` : describe(a)}`,
        );
      }
      for (let h = 0; h < a.shape[1]; h++) {
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
  if (batch.b !== 1)
    throw invalid(`headScores needs a batch of one: ids (T) or (1, T), got (${batch.b}, ${batch.t})`);
  // a layer without heads (a short convolution: its map is no head's) is not asked for, its row NaN
  const headed = model.layers ? model.layers.map((s) => s.heads > 0) : null;
  const which = headed && headed.includes(false) ? headed.flatMap((h, l) => (h ? [l] : [])) : true;
  const { attention } = model.forward(batch.tensor, { attention: which });
  return headScoresFromAttention(
    batch.data,
    attention.map((a, l) => (headed && !headed[l] ? null : a)),
    kinds,
  );
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
    throw invalid(
      `attentionRollout: residualWeight must be a number in [0, 1], got ${describe(residualWeight)}`,
    );
  }
  if (!Array.isArray(attentions) || attentions.length === 0) {
    throw invalid(
      `attentionRollout needs forward's attention: a non-empty array of Tensors (1, H, T, T), one per layer; got ${describe(attentions)}`,
    );
  }
  const layers = attentions.map((a, l) => {
    if (a == null)
      throw invalid(
        `attentionRollout: layer ${l}'s attention is missing (run forward with attention: true, every layer)`,
      );
    const t = asFloatTensor(a, `attentions[${l}]`);
    const s = t.shape;
    if (s.length !== 4 || s[0] !== 1 || s[1] < 1 || s[2] !== s[3]) {
      throw invalid(
        `attentionRollout: attentions[${l}] must be (1, H, T, T) (a batch of one, H >= 1), got (${s.join(', ')})`,
      );
    }
    return t;
  });
  const T = layers[0].shape[2];
  layers.forEach((t, l) => {
    if (t.shape[2] !== T)
      throw invalid(`attentionRollout: attentions[${l}] has T = ${t.shape[2]}, layer 0 has ${T}`);
    // a signed map (LFM2's conv layers: forward's attentionKinds 'conv') is no distribution to roll out
    if (t.data.some((v) => v < 0))
      throw invalid(
        `attentionRollout: attentions[${l}] has negative entries: rollout needs softmax weights, not a signed mixing map (a short-convolution layer's)`,
      );
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

// Attribution, QK attribution and patching live in their own modules (one path each for both model
// classes, over their adapters: interp/adapter.js); the model classes import them from here.
export { logitAttribution, _setTraceBudget } from './attribution.js';
export { qkAttribution } from './qk.js';
export { PATCH_COMPONENTS, modelPatch, runPatch } from './patch.js';
export {
  GRADIENT_METRICS,
  SALIENCY_BASELINES,
  SALIENCY_METHODS,
  metricGradients,
  saliency,
} from './gradients.js';
export { ATTRIBUTION_PATCH_COMPONENTS, attributionPatch } from './attribution-patch.js';
