// The interpretability worker of <patching-view> and <token-saliency>: its own wasm instance and its
// own copy of a TinyTransformer opened from the safetensors bytes the widget loaded (its `src`), so
// the long runs — activation patching (one model run per patched head or position), integrated
// gradients (a backward per step) — never hold up the page.
//
// Jobs (web/workers/rpc.js, one at a time, in order): open { bytes } → { layers, heads };
// patch { options } (model.patch's options less onProgress and signal) → { result: { data, shape },
// cleanDiff, corruptedDiff }; attributionPatch { options } (model.attributionPatch's) → the same
// shape; saliency { options } (model.saliency's options, with `ids`) → { scores: { data, shape },
// value, delta }. Each reports progress [done, total] while it runs; a cancel rejects it with an
// AbortError at its next batch, and the model stays usable.
import { init, TinyTransformer } from '../../src/js/index.js';
import { serve, transfer } from './rpc.js';

let model = null;

/** A result whose `key` is a Tensor, with that Tensor as a transferred { data, shape } copy. */
function plainResult(r, key, rest) {
  const data = Float32Array.from(r[key].data);
  const value = { [key]: { data, shape: Array.from(r[key].shape) } };
  for (const k of rest) value[k] = r[k];
  return transfer(value, [data.buffer]);
}

function openModel() {
  if (!model) throw new Error('no model is open');
  return model;
}

const handlers = {
  open({ bytes }) {
    model?.dispose();
    model = null;
    model = TinyTransformer.fromSafetensors(new Uint8Array(bytes));
    return { layers: model.numLayers, heads: model.numHeads };
  },
  async patch({ options }, job) {
    const r = await openModel().patch({ ...options, signal: job.signal, onProgress: job.progress });
    return plainResult(r, 'result', ['cleanDiff', 'corruptedDiff']);
  },
  async attributionPatch({ options }, job) {
    const m = openModel();
    const r = await m.attributionPatch({ ...options, signal: job.signal, onProgress: job.progress });
    return plainResult(r, 'result', ['cleanDiff', 'corruptedDiff']);
  },
  async saliency({ options }, job) {
    const { ids, ...rest } = options;
    const r = await openModel().saliency(ids, { ...rest, signal: job.signal, onProgress: job.progress });
    return plainResult(r, 'scores', ['value', 'delta']);
  },
};

serve(handlers, { ready: init(), serial: true });
