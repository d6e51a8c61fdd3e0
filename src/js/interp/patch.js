// Activation patching on both model classes: runPatch's loop over patched runs, over the model's
// interpretability adapter (interp/adapter.js).
import { AttentionError } from '../errors.js';
import { checkOptions, describe } from '../options.js';
import { idBatch } from '../ids.js';
import { Tensor } from '../tensor.js';
import { allLayers, attributionOptions, tracedForward } from './attribution.js';
import { softmaxAt } from '../numeric.js';

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);

// ---- activation patching ---------------------------------------------------------------------------
// A corrupted run with one activation taken from the clean run: a head's z (at every position, or at
// one), the residual stream entering a block at one position, or an MLP branch's output (as it is
// added to the stream) at one position. Each patched run restarts at the patched block from the
// corrupted run's residual stream there (the blocks before it are not run again); a head's z enters
// as W_O[:, head] · (z_clean − z_corrupted) added to that layer's attention output, an MLP's as
// (branch_clean − branch_corrupted) added to that layer's MLP branch. Causal models run only the
// rows up to `position` and read the logits of `position` only.

/** The components patch knows. */
export const PATCH_COMPONENTS = Object.freeze(['head', 'head-position', 'residual', 'mlp']);
export const PATCH_METRICS = Object.freeze(['logit-diff', 'probability', 'log-probability']);

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

/** patch's options checked (nothing runs before): the pairs, the component, the metric (also
 * attributionPatch's, whose messages name it instead). */
export function patchOptions(options, vocab, name = 'patch') {
  try {
    return checkPatchOptions(options, vocab);
  } catch (error) {
    if (name !== 'patch' && error instanceof AttentionError)
      error.message = error.message.replace(/^patch/, name);
    throw error;
  }
}

function checkPatchOptions(options, vocab) {
  const o = checkOptions(
    options,
    ['clean', 'corrupted', 'position', 'token', 'against', 'component', 'metric', 'onProgress', 'signal'],
    'patch option',
  );
  if (o.clean == null || o.corrupted == null) throw invalid('patch needs clean and corrupted ids');
  const clean = patchRuns(o.clean, 'clean'),
    corrupted = patchRuns(o.corrupted, 'corrupted');
  if (clean.length !== corrupted.length)
    throw invalid(`patch: ${clean.length} clean runs but ${corrupted.length} corrupted ones`);
  const T = clean[0].length;
  for (const ids of [...clean, ...corrupted]) {
    if (ids.length !== T)
      throw invalid(`patch: clean and corrupted ids must all have one length, got ${T} and ${ids.length}`);
  }
  if (T === 0) throw invalid('patch: the ids are empty');
  const component = o.component ?? 'head';
  if (!PATCH_COMPONENTS.includes(component))
    throw invalid(
      `patch: component must be one of ${PATCH_COMPONENTS.map((c) => `'${c}'`).join(', ')}, got ${describe(component)}`,
    );
  const metric = o.metric ?? 'logit-diff';
  if (!PATCH_METRICS.includes(metric))
    throw invalid(
      `patch: metric must be one of ${PATCH_METRICS.map((m) => `'${m}'`).join(', ')}, got ${describe(metric)}`,
    );
  if (o.onProgress != null && typeof o.onProgress !== 'function')
    throw invalid(`patch: onProgress must be a function, got ${describe(o.onProgress)}`);
  if (o.signal != null && typeof o.signal.aborted !== 'boolean')
    throw invalid(`patch: signal must be an AbortSignal, got ${describe(o.signal)}`);
  let picked;
  try {
    picked = attributionOptions({ position: o.position, token: o.token, against: o.against }, T, vocab);
  } catch (error) {
    throw invalid(error.message.replace('logitAttribution', 'patch'));
  }
  for (const ids of [...clean, ...corrupted]) {
    for (const id of ids)
      if (id < 0 || id >= vocab) throw invalid(`patch: token id ${id} is outside [0, ${vocab})`);
  }
  return { clean, corrupted, T, component, metric, onProgress: o.onProgress, signal: o.signal, ...picked };
}

export const abortReason = (signal) =>
  signal.reason ?? Object.assign(new Error('The operation was aborted'), { name: 'AbortError' });

/**
 * The metric of one row of pre-cap logits: the logit difference (before any final soft-cap), or the
 * probability or its log in the model's output distribution, after the final soft-cap c (Gemma 2:
 * c · tanh(z / c), as the core computes it; `softcap` 0 = none).
 */
export function patchMetric({ metric, token, against }, softcap = 0) {
  const capped = (row) =>
    softcap > 0 ? Float64Array.from(row, (z) => Math.fround(softcap * Math.tanh(z / softcap))) : row;
  if (metric === 'probability') return (row) => softmaxAt(capped(row), token);
  if (metric === 'log-probability') return (row) => Math.log(softmaxAt(capped(row), token));
  return (row) => row[token] - (against === undefined ? 0 : row[against]);
}

const METRIC_NAMES = {
  'logit-diff': 'logit difference',
  probability: 'probability',
  'log-probability': 'log-probability',
};

// The clean and corrupted baselines of every pair; a pair with nothing to explain is refused before
// any patched run.
function baselines(adapter, o, rows, metric) {
  return o.clean.map((clean, i) => {
    const c = adapter.baseline(clean.subarray(0, rows), o.position);
    const x = adapter.baseline(o.corrupted[i].subarray(0, rows), o.position);
    const mc = metric(c.row),
      mx = metric(x.row);
    if (!(Math.abs(mc - mx) >= 1e-6 * Math.max(1, Math.abs(mc)))) {
      throw invalid(
        `patch: the clean and corrupted runs${o.clean.length > 1 ? ` of pair ${i}` : ''} give the same ${METRIC_NAMES[o.metric]} (${mc} and ${mx}): nothing to explain`,
      );
    }
    return { c, x, mc, mx, ids: o.corrupted[i].subarray(0, rows) };
  });
}

// The jobs: one batch of patched runs each (a layer of a pair); `entry` says where each run's ratio
// goes. A layer's heads only (none for a headless mixer: its entries stay NaN).
function patchJobs(bases, { L, H, heads }, component, rows, T) {
  const jobs = [];
  for (const base of bases) {
    for (let l = 0; l < L; l++) {
      if (component === 'head') {
        if (heads(l) > 0)
          jobs.push({ base, l, heads: allLayers(heads(l)).map((h) => ({ h, t: -1, entry: l * H + h })) });
      } else if (component === 'head-position') {
        for (let h = 0; h < heads(l); h++)
          jobs.push({ base, l, heads: allLayers(rows).map((t) => ({ h, t, entry: (l * H + h) * T + t })) });
      } else {
        const positions = allLayers(rows).map((t) => ({ t, entry: l * T + t }));
        jobs.push({ base, l, positions, mlp: component === 'mlp' });
      }
    }
  }
  return jobs;
}

// Whether a job's patch changes anything: the clean activation differs from the corrupted one. One
// that does not (the rows before the changed token of a causal model) is the corrupted run itself:
// its entry is 0 and it is not run.
function patchDiffers(job, { E, zDim }, rows) {
  const { base, l } = job;
  const d = zDim(l);
  if (job.heads) {
    const zc = base.c.z[l],
      zx = base.x.z[l];
    return ({ h, t: only }) => {
      const from = (h * rows + (only < 0 ? 0 : only)) * d,
        to = (h * rows + (only < 0 ? rows : only + 1)) * d;
      for (let i = from; i < to; i++) if (zc[i] !== zx[i]) return true;
      return false;
    };
  }
  const rc = job.mlp ? base.c.mlp[l] : base.c.resid[l],
    rx = job.mlp ? base.x.mlp[l] : base.x.resid[l];
  return ({ t }) => {
    for (let i = t * E; i < (t + 1) * E; i++) if (rc[i] !== rx[i]) return true;
    return false;
  };
}

// Each head run's change to the attention output, (b, rows, E): (z_clean − z_corrupted) of the head's
// rows (or its one row) through its slice of W_O (E, H·d), in double.
function headDeltas(runs, job, wo, { heads, E, zDim }, rows) {
  const { base, l } = job;
  const d = zDim(l); // a DeltaNet layer's value heads: d_v
  const n = rows * E,
    inner = heads(l) * d,
    zc = base.c.z[l],
    zx = base.x.z[l];
  const delta = new Float32Array(runs.length * n);
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
  return delta;
}

// The patched runs of one job as one batch; adds each run's normalised metric into `sums`.
function runJob(adapter, job, runs, outProj, ctx) {
  const { base, l } = job;
  const { E } = adapter,
    { rows, position, metric, sums } = ctx;
  const b = runs.length,
    n = rows * E;
  const residual = new Float32Array(b * n);
  for (let k = 0; k < b; k++) residual.set(base.x.resid[l], k * n);
  let delta = null;
  if (job.heads) {
    if (!outProj.has(l)) outProj.set(l, adapter.outProj(l));
    delta = headDeltas(runs, job, outProj.get(l), adapter, rows);
  } else if (job.mlp) {
    delta = new Float32Array(b * n); // the clean branch minus the corrupted one, at t alone
    const c = base.c.mlp[l],
      x = base.x.mlp[l];
    runs.forEach(({ t }, k) => {
      for (let i = t * E; i < (t + 1) * E; i++) delta[k * n + i] = c[i] - x[i];
    });
  } else {
    const clean = base.c.resid[l];
    runs.forEach(({ t }, k) => residual.set(clean.subarray(t * E, (t + 1) * E), k * n + t * E));
  }
  const ids = new Int32Array(b * rows);
  for (let k = 0; k < b; k++) ids.set(base.ids, k * rows);
  const logits = adapter.run(
    ids,
    b,
    rows,
    l,
    residual,
    job.heads || job.mlp ? l : -1,
    delta,
    position,
    job.mlp,
  );
  const V = logits.length / b;
  runs.forEach(({ entry }, k) => {
    sums[entry] += (metric(logits.subarray(k * V, (k + 1) * V)) - base.mx) / (base.mc - base.mx);
  });
}

// NaN in the (L, H[, T]) entries past each layer's heads: there is no such head to patch.
function noHeads(sums, { L, H, heads }, shape) {
  const per = shape.length === 3 ? shape[2] : 1;
  for (let l = 0; l < L; l++) sums.fill(NaN, (l * H + heads(l)) * per, (l + 1) * H * per);
}

/**
 * model.patch over an adapter: { L, H (the widest layer's), heads(l) (layer l's; 0: a headless mixer,
 * its head entries NaN), E, d (head dim), vocab, causal, baseline(ids, position) →
 * { resid: [L] Float32Array (T·E) entering each block, z: [L] (heads(l), T, d) or null, mlp: [L] (T·E) the MLP
 * branches, row: logits at position (V) }, run(ids (b·T), b, T, startLayer, residual (b·T·E),
 * deltaLayer, delta | null, position, mlp (delta is the MLP branch's, not the attention output's))
 * → b rows (V),
 * outProj(l) → W_O (E, H·d) }.
 */
export async function runPatch(given, options) {
  const adapter = { heads: () => given.H, ...given };
  const o = patchOptions(options, adapter.vocab);
  const { L, H } = adapter;
  const { T, component, position, signal, onProgress } = o;
  if (signal?.aborted) throw abortReason(signal);
  const rows = adapter.causal ? position + 1 : T; // later rows cannot reach `position`
  const metric = patchMetric(o, adapter.finalSoftcap ?? 0);
  const shape = component === 'head' ? [L, H] : component === 'head-position' ? [L, H, T] : [L, T];
  const sums = new Float64Array(shape.reduce((a, b) => a * b, 1));
  if (component === 'head' || component === 'head-position') noHeads(sums, adapter, shape);
  if (component === 'mlp' && !adapter.mlp)
    throw invalid("patch: component 'mlp' needs a model with MLP blocks");
  const bases = baselines(adapter, o, rows, metric);
  const jobs = patchJobs(bases, adapter, component, rows, T);
  const total = jobs.reduce((n, j) => n + (j.heads ?? j.positions).length, 0);
  const outProj = new Map();
  let done = 0;
  for (const job of jobs) {
    await new Promise((resolve) => setTimeout(resolve, 0)); // the page (and an abort) get a turn
    if (signal?.aborted) throw abortReason(signal);
    const all = job.heads ?? job.positions;
    const runs = all.filter(patchDiffers(job, adapter, rows));
    done += all.length - runs.length;
    if (runs.length > 0) runJob(adapter, job, runs, outProj, { rows, position, metric, sums });
    done += runs.length;
    onProgress?.(done, total);
  }
  const P = bases.length;
  const one = P === 1;
  return {
    result: new Tensor(
      Float32Array.from(sums, (v) => v / P),
      shape,
    ),
    cleanDiff: one ? bases[0].mc : bases.map((x) => x.mc),
    corruptedDiff: one ? bases[0].mx : bases.map((x) => x.mx),
  };
}

/**
 * model.patch for both model classes: runPatch over the model's adapter (model._interp()): the
 * baselines trace every layer's z and keep the stream entering each block (hidden states 0 … L − 1),
 * each patched run restarts from a residual with a head's delta, every forward computing the logits of
 * `position` only.
 */
export function modelPatch(model, options) {
  const a = model._interp();
  const { L, H } = a;
  return runPatch(
    {
      L,
      H,
      heads: a.heads,
      E: a.E,
      d: a.d,
      zDim: a.zDim,
      vocab: a.vocab,
      causal: a.causal,
      mlp: a.mlp,
      finalSoftcap: a.finalSoftcap ?? 0,
      baseline(ids, position) {
        const { first: r, z } = tracedForward(
          (layers, first) =>
            a.forward(ids, 1, ids.length, {
              traceLayers: layers,
              hiddenStates: first,
              capture: first && a.mlp ? ['blocks.*.hook_mlp_out'] : [],
              logitsRow: position,
            }),
          L,
          H,
          ids.length,
          undefined,
          (l) => a.heads(l) > 0,
        );
        const mlp = a.mlp ? allLayers(L).map((l) => r.activations[`blocks.${l}.hook_mlp_out`].data) : [];
        return { resid: r.hiddenStates.slice(0, L).map((t) => t.data), z, mlp, row: r.logits.data };
      },
      // A run from block startLayer's input (startAt) with the patched difference added where the
      // patched activation enters the stream: a head's W_O·Δz at attn.hook_out, an MLP's at hook_mlp_out.
      run(ids, b, t, startLayer, residual, deltaLayer, delta, position, mlp) {
        const start = `blocks.${startLayer}.hook_resid_pre`;
        const shape = [b, t, a.E];
        const edits = [{ hook: start, op: 'set', value: residual, shape }];
        if (deltaLayer >= 0) {
          const hook = mlp ? `blocks.${deltaLayer}.hook_mlp_out` : `blocks.${deltaLayer}.attn.hook_out`;
          edits.push({ hook, op: 'add', value: delta, shape });
        }
        return a.forward(ids, b, t, { startAt: start, edits, logitsRow: position }).logits.data;
      },
      outProj: (l) => a.outProj(l),
    },
    options,
  );
}
