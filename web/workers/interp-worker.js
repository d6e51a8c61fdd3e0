// The patching worker of <patching-view>: its own wasm instance and its own copy of a
// TinyTransformer opened from the safetensors bytes the widget loaded (its `src`), so activation
// patching — one model run per patched head or position — never holds up the page.
//
// Jobs (web/workers/rpc.js, one at a time, in order): open { bytes } → { layers, heads };
// patch { options } (model.patch's options less onProgress and signal) → { result: { data, shape },
// cleanDiff, corruptedDiff }, with progress [done, total] while it runs; a cancel rejects it with an
// AbortError at its next batch, and the model stays usable.
import { init, TinyTransformer } from '../../src/js/index.js';
import { serve, transfer } from './rpc.js';

let model = null;

const handlers = {
  open({ bytes }) {
    model?.dispose();
    model = null;
    model = TinyTransformer.fromSafetensors(new Uint8Array(bytes));
    return { layers: model.numLayers, heads: model.numHeads };
  },
  async patch({ options }, job) {
    if (!model) throw new Error('no model is open');
    const r = await model.patch({ ...options, signal: job.signal, onProgress: job.progress });
    const data = Float32Array.from(r.result.data);
    const value = {
      result: { data, shape: Array.from(r.result.shape) },
      cleanDiff: r.cleanDiff,
      corruptedDiff: r.corruptedDiff,
    };
    return transfer(value, [data.buffer]);
  },
};

serve(handlers, { ready: init(), serial: true });
