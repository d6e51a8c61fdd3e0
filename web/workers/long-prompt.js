// The model worker's jobs for a long prompt (docs/demo.md "Long prompts"): above the page's threshold
// the demo never asks for a forward's (H, T, T) maps; it reads the prompt with model.prefill, which
// keeps the softmax layers' queries and keys (O(L·T·d)), and asks the session for one head's pooled
// overview or one exact tile at a time. One session per model, replaced by the next prefill.
//
// Jobs: longPlan { key, T } → what the run will hold | longPrefill { key, ids } (progress sent, a cancel
//   rejects it with ABORTED between chunks) | longOverview { key, layer, head } | longTile { key,
//   layer, head, rows, cols } | longDispose { key }.

// What the page lets a model and its run take of the 4 GiB heap (as model-worker.js's model limit).
const kHeapBudget = 3 * 2 ** 30;
const sessions = new Map(); // model key → { session, ids (a string of the ids the session read) }

const softmaxLayers = (model) => model.layers.flatMap((d, l) => (d.kind === 'attention' ? [l] : []));

/**
 * The bytes a prefill of T tokens holds: the weights in the heap, the map state (mapStateBytes of
 * every softmax layer) and the float32 KV cache the chunks read (2·T·H_kv·d floats a softmax layer
 * with its own keys); `fits` when their sum is within the page's budget, else `why` says by how much.
 */
export function plan(model, T) {
  const layers = softmaxLayers(model);
  const mapBytes = layers.length ? model.mapStateBytes(T, { layers }) : 0;
  const kvBytes = model.layers.reduce(
    (n, d, l) => n + (d.kind === 'attention' && (d.kvFrom ?? l) === l ? 8 * T * d.kvHeads * d.headDim : 0),
    0,
  );
  const total = model.weightBytes + mapBytes + kvBytes;
  const fits = layers.length > 0 && total <= kHeapBudget;
  const why = !layers.length
    ? 'the model has no softmax attention layer: its maps need the short-prompt path'
    : fits
      ? ''
      : `the run needs ${total} bytes, more than the ${kHeapBudget} bytes this page gives a model`;
  return { T, weightBytes: model.weightBytes, mapBytes, kvBytes, total, budget: kHeapBudget, fits, why };
}

function sessionOf(key) {
  const s = sessions.get(key);
  if (!s) throw new Error('no long prompt has been read for this model: read it first');
  return s.session;
}

function drop(key) {
  sessions.get(key)?.session.dispose();
  sessions.delete(key);
}

/** The model worker's long-prompt handlers, over its `modelOf(key)`. */
export function longHandlers(modelOf) {
  return {
    longPlan: ({ key, T }) => plan(modelOf(key).model, T),
    async longPrefill({ key, ids }, job) {
      const { model } = modelOf(key);
      const p = plan(model, ids.length);
      if (!p.fits) throw Object.assign(new Error(`The prompt cannot be read: ${p.why}.`), { code: 'INPUT' });
      drop(key); // the previous session's state goes before the new one is allocated
      const session = await model.prefill(ids, {
        maps: { layers: softmaxLayers(model) },
        onProgress: job.progress,
        signal: job.signal,
      });
      sessions.set(key, { session });
      return { T: session.length, mapBytes: session.mapBytes, layers: softmaxLayers(model) };
    },
    longOverview({ key, layer, head }) {
      const t = sessionOf(key).overview({ layer, head, pool: 'max' });
      return { data: t.data, shape: Array.from(t.shape) };
    },
    longTile({ key, layer, head, rows, cols }) {
      const t = sessionOf(key).tile({ layer, head, rows, cols });
      return { data: t.data, shape: Array.from(t.shape) };
    },
    longDispose: ({ key }) => drop(key),
  };
}
