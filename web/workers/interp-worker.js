// The patching worker of <patching-view>: its own wasm instance and its own copy of a
// TinyTransformer opened from the safetensors bytes the widget loaded (its `src`), so activation
// patching — one model run per patched head or position — never holds up the page.
//
// Requests: { id, type: 'open', bytes } | { id, type: 'patch', options } (model.patch's options less
// onProgress and signal) | { type: 'abort', of: id } (rejects that run with an AbortError at its next
// batch; the model stays usable). Replies: { id, value } | { id, error: { name, code, message } },
// and while a patch runs { id, progress: [done, total] }. Requests run one at a time, in order.
import { init, TinyTransformer } from '../../src/js/index.js';

const ready = init();
let model = null;
const running = new Map(); // request id → AbortController
let queue = Promise.resolve();

async function handle({ id, type, bytes, options }) {
  await ready;
  if (type === 'open') {
    model?.dispose();
    model = null;
    model = TinyTransformer.fromSafetensors(new Uint8Array(bytes));
    return { layers: model.numLayers, heads: model.numHeads };
  }
  if (type === 'patch') {
    if (!model) throw new Error('no model is open');
    const controller = running.get(id);
    const r = await model.patch({
      ...options,
      signal: controller.signal,
      onProgress: (done, total) => postMessage({ id, progress: [done, total] }),
    });
    const data = Float32Array.from(r.result.data);
    return {
      result: { data, shape: Array.from(r.result.shape) },
      cleanDiff: r.cleanDiff,
      corruptedDiff: r.corruptedDiff,
    };
  }
  throw new Error(`unknown request ${type}`);
}

onmessage = ({ data }) => {
  if (data.type === 'abort') {
    running.get(data.of)?.abort();
    return;
  }
  if (data.type === 'patch') running.set(data.id, new AbortController());
  queue = queue.then(async () => {
    try {
      if (running.get(data.id)?.signal.aborted)
        throw Object.assign(new Error('The operation was aborted'), { name: 'AbortError' });
      const value = await handle(data);
      postMessage({ id: data.id, value }, value?.result ? [value.result.data.buffer] : []);
    } catch (error) {
      postMessage({ id: data.id, error: { name: error.name, code: error.code, message: error.message } });
    } finally {
      running.delete(data.id);
    }
  });
};
