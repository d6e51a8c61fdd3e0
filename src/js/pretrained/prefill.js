// model.prefill(ids, { maps, signal, onProgress }): a long prompt read in chunks over the model's
// caches, keeping what its attention maps need (src/model/map_session.h: each asked layer's queries
// and keys in float16, O(L·T·d)) and the last row's logits; the maps are computed on demand, in
// tiles, by the MapSession it returns. Nothing of size (T, T) or (T, vocab) is ever made.
import { AttentionError, check } from '../errors.js';
import { checkOptions, describe } from '../options.js';
import { idBatch, layerList } from '../ids.js';
import { Handle } from '../runtime/runtime.js';
import { Tensor } from '../tensor.js';
import { signalOption } from '../hub/api.js';
import { PREFILL_CHUNK } from './generation.js';

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);
const aborted = () => new AttentionError('ABORTED', 'the prefill was aborted (its signal)');

const isInt = (v) => Number.isInteger(v);

// The layers of maps.layers, each a softmax-attention layer (the others are refused by name).
function mapLayers(maps, model) {
  if (maps == null) return [];
  if (typeof maps !== 'object' || Array.isArray(maps))
    throw invalid(`maps must be { layers: [...] } or omitted, got ${describe(maps)}`);
  const { layers } = checkOptions(maps, ['layers'], 'maps option');
  if (layers === undefined) throw invalid('maps needs layers: true or an array of layer indices');
  // true: every softmax-attention layer (a conv or DeltaNet layer has no such map)
  const list =
    layers === true
      ? model.layers.flatMap((s, l) => (s.kind === 'attention' ? [l] : []))
      : layerList(layers, model.numLayers, 'maps.layers');
  const seen = new Set();
  for (const l of list) {
    if (seen.has(l)) throw invalid(`maps.layers lists layer ${l} twice`);
    seen.add(l);
    const { kind } = model.layers[l];
    if (kind !== 'attention') {
      const what = kind === 'conv' ? 'a short convolution (LFM2)' : 'a gated DeltaNet (Qwen3.5)';
      throw invalid(
        `maps.layers: layer ${l} is ${what}, not softmax attention: it has no map of queries and keys`,
      );
    }
  }
  return [...list];
}

/**
 * model.mapStateBytes(length, maps): the bytes prefill(ids of `length`, { maps }) will keep for its
 * maps, stated before the run: float16 queries of each layer and keys of each layer they are read
 * from (MapSession::state_bytes; session.mapBytes once it ran).
 */
export function mapStateBytes(model, length, maps) {
  if (!isInt(length) || length < 1) throw invalid(`length must be an integer >= 1, got ${describe(length)}`);
  const keySources = new Set();
  let values = 0;
  for (const l of mapLayers(maps, model)) {
    const { heads, kvHeads, headDim, kvFrom } = model.layers[l];
    values += heads * headDim;
    if (!keySources.has(kvFrom)) values += kvHeads * headDim;
    keySources.add(kvFrom);
  }
  return values * length * 2;
}

/**
 * A prefill's result (dispose it): `length`, `logits` (Float32Array of the vocabulary: the last
 * row's), `layers` (those with maps), `mapBytes` (the map state held in the heap), and the maps.
 */
class MapSession extends Handle {
  constructor(rt, handle, model, layers) {
    super(rt, handle);
    this.layers = Object.freeze(layers);
    this.length = 0;
    this.logits = null;
    this.mapBytes = 0;
    this._heads = new Map(layers.map((l) => [l, model.layers[l].heads]));
  }

  // Checks { layer, head } against the session; returns them.
  _where(o, what) {
    this._live();
    const { layer, head } = o;
    if (!isInt(layer) || !this._heads.has(layer))
      throw invalid(
        `${what}: layer ${describe(layer)} was not asked for in prefill's maps.layers [${this.layers}]`,
      );
    const heads = this._heads.get(layer);
    if (!isInt(head) || head < 0 || head >= heads)
      throw invalid(`${what}: head ${describe(head)} is not in [0, ${heads}) of layer ${layer}`);
    return { layer, head };
  }

  _range(value, name, what) {
    const ok = Array.isArray(value) && value.length === 2 && value.every(isInt);
    if (!ok || value[0] < 0 || value[1] > this.length || value[0] >= value[1])
      throw invalid(
        `${what}: ${name} must be [start, end) integers with 0 <= start < end <= ${this.length}, got ${describe(value)}`,
      );
    return value;
  }

  /**
   * A pooled map of at most 512×512 cells: n = min(T, 512) a side, cell (a, b) the max or the mean
   * of the exact weights of query rows [⌊a·T/n⌋, ⌊(a+1)·T/n⌋) and key columns [⌊b·T/n⌋, ⌊(b+1)·T/n⌋)
   * (masked weights count as 0). `head` gives a Tensor (n, n); `heads` (an array) one (heads, n, n).
   */
  overview(options) {
    const o = checkOptions(options, ['layer', 'head', 'heads', 'pool'], 'overview option');
    const { pool = 'max' } = o;
    if (pool !== 'max' && pool !== 'mean')
      throw invalid(`pool must be 'max' or 'mean', got ${describe(pool)}`);
    if ((o.head === undefined) === (o.heads === undefined))
      throw invalid('overview takes one of head or heads');
    const list = o.heads === undefined ? [o.head] : o.heads;
    if (!Array.isArray(list) || list.length === 0)
      throw invalid(`heads must be a non-empty array, got ${describe(list)}`);
    list.forEach((head) => this._where({ layer: o.layer, head }, 'overview'));
    const maps = list.map((head) =>
      check(this._handle.overview({ layer: o.layer, head, max: pool === 'max' })),
    );
    const n = maps[0].cells;
    if (o.heads === undefined) return new Tensor(maps[0].data, [n, n]);
    const data = new Float32Array(list.length * n * n);
    maps.forEach((m, i) => data.set(m.data, i * n * n));
    return new Tensor(data, [list.length, n, n]);
  }

  /** The exact weights of query rows [start, end) × key columns [start, end): a Tensor (rows, cols). */
  tile(options) {
    const o = checkOptions(options, ['layer', 'head', 'rows', 'cols'], 'tile option');
    const { layer, head } = this._where(o, 'tile');
    const [r0, r1] = this._range(o.rows, 'rows', 'tile');
    const [c0, c1] = this._range(o.cols, 'cols', 'tile');
    const { data } = check(this._handle.tile({ layer, head, r0, r1, c0, c1 }));
    return new Tensor(data, [r1 - r0, c1 - c0]);
  }

  /** The k largest weights of row `query`, largest first (ties: the earlier key): { indices, weights }. */
  topK(options) {
    const o = checkOptions(options, ['layer', 'head', 'query', 'k'], 'topK option');
    const { layer, head } = this._where(o, 'topK');
    if (!isInt(o.query) || o.query < 0 || o.query >= this.length)
      throw invalid(`topK: query must be an integer in [0, ${this.length}), got ${describe(o.query)}`);
    if (!isInt(o.k) || o.k < 1 || o.k > this.length)
      throw invalid(`topK: k must be an integer in [1, ${this.length}], got ${describe(o.k)}`);
    const { indices, weights } = check(this._handle.topK({ layer, head, query: o.query, k: o.k }));
    return { indices, weights };
  }

  dispose() {
    if (this._handle) this._handle.release();
    super.dispose();
  }
}

/**
 * model.prefill: ids (T) or (1, T); options { maps: { layers }, signal, onProgress(done, total),
 * prefillChunk }. Resolves to a MapSession; rejects with ABORTED when `signal` fires (checked before
 * each chunk; the page gets a turn between chunks).
 */
export async function prefill(rt, model, ids, options = {}) {
  const o = checkOptions(options, ['maps', 'signal', 'onProgress', 'prefillChunk'], 'prefill option');
  const handle = model._idle();
  const batch = idBatch(ids, 'ids');
  if (batch.b !== 1) throw invalid(`prefill takes one sequence, got ${batch.b}`);
  if (batch.t < 1) throw new AttentionError('EMPTY_INPUT', 'prefill needs at least one token');
  const layers = mapLayers(o.maps, model);
  const { prefillChunk = PREFILL_CHUNK, onProgress, signal } = o;
  if (!isInt(prefillChunk) || prefillChunk < 1)
    throw invalid(`prefillChunk must be an integer >= 1, got ${describe(prefillChunk)}`);
  if (onProgress != null && typeof onProgress !== 'function')
    throw invalid(`onProgress must be a function, got ${describe(onProgress)}`);
  signalOption(signal);
  if (signal?.aborted) throw aborted();
  const total = batch.t;
  const session = new MapSession(rt, new (rt.requireCore().MapSessionHandle)(), model, layers);
  try {
    check(handle.prefill(session._handle, { layers, total }));
    for (let done = 0; done < total;) {
      const chunk = batch.data.subarray(done, Math.min(total, done + prefillChunk));
      check(model._live().prefill(session._handle, { ids: chunk }));
      done += chunk.length;
      onProgress?.(done, total);
      if (done < total) await new Promise((resolve) => setTimeout(resolve, 0));
      if (signal?.aborted) throw aborted();
    }
    const info = session._handle.info();
    session.length = info.length;
    session.logits = info.logits;
    session.mapBytes = info.bytes;
    return session;
  } catch (error) {
    session.dispose();
    throw error;
  }
}
