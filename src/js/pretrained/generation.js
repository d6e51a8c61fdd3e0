// Generation for PretrainedModel: the options of generate/generateStream, and the decode loop over
// the model's KV caches (the prompt's prefill in chunks, then one row per sequence and step).
import { AttentionError, check } from '../errors.js';
import { checkOptions, describe } from '../options.js';
import { samplingOptions, tokenChooser } from './sampling.js';
import { fromCore } from '../tensor.js';
import { hookEdits } from '../interp/hooks.js';
import { signalOption } from '../hub/api.js';

/** The id written after a row's stop token in generate()'s output (never a real token id). */
export const GENERATE_PAD = -1;

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);
const OPTIONS = [
  'maxNewTokens',
  'temperature',
  'topK',
  'topP',
  'seed',
  'stop',
  'edits',
  'kvCache',
  'onProgress',
  'signal',
  'prefillChunk',
];
/** How the KV caches store keys and values: float32 (the default) or float16 (half the bytes). */
export const KV_CACHE_TYPES = ['f32', 'f16'];
/** Prompt tokens per prefill chunk unless `prefillChunk` says otherwise. */
export const PREFILL_CHUNK = 256;

/** The AttentionError of a generation stopped by its signal. */
const aborted = () => new AttentionError('ABORTED', 'the generation was aborted (its signal)');

// A list of token ids from a number, an array or null/undefined (none), each in [0, vocab).
function idList(value, vocab, what) {
  const list = value == null ? [] : Array.isArray(value) ? value : [value];
  for (const id of list) {
    if (!Number.isInteger(id) || id < 0 || id >= vocab)
      throw invalid(`${what} must be token ids in [0, ${vocab}), got ${describe(id)}`);
  }
  return list;
}

/** The checkpoint's end-of-sequence ids: generation_config.json's eos_token_id, else config.json's. */
export function defaultStopIds(config, generationConfig, vocab) {
  const eos = generationConfig?.eos_token_id ?? config?.eos_token_id;
  return idList(eos, vocab, 'eos_token_id');
}

/**
 * generate()'s options checked: { maxNewTokens, chooser, stop (Set), edits (the core's form),
 * kvCache ('f32' | 'f16'), onProgress, signal, prefillChunk }, plus the `extra` keys given.
 */
export function generationOptions(options, { vocab, defaultStop, extra = [] }) {
  const o = checkOptions(options, [...OPTIONS, ...extra], 'generate option');
  if (!Number.isInteger(o.maxNewTokens) || o.maxNewTokens < 1)
    throw invalid(`maxNewTokens must be an integer >= 1, got ${describe(o.maxNewTokens)}`);
  const kvCache = o.kvCache ?? 'f32';
  if (!KV_CACHE_TYPES.includes(kvCache))
    throw invalid(`kvCache must be 'f32' or 'f16', got ${describe(o.kvCache)}`);
  if (o.onProgress != null && typeof o.onProgress !== 'function')
    throw invalid(`onProgress must be a function, got ${describe(o.onProgress)}`);
  const prefillChunk = o.prefillChunk ?? PREFILL_CHUNK;
  if (!Number.isInteger(prefillChunk) || prefillChunk < 1)
    throw invalid(`prefillChunk must be an integer >= 1, got ${describe(o.prefillChunk)}`);
  const stop = new Set(o.stop === undefined ? defaultStop : idList(o.stop, vocab, 'stop'));
  return {
    ...o,
    kvCache,
    prefillChunk,
    signal: signalOption(o.signal),
    choose: tokenChooser(samplingOptions(o)),
    stop,
    edits: hookEdits(o.edits),
  };
}

/** Throws ABORTED when the generation's signal has fired. */
export function checkAborted(signal) {
  if (signal?.aborted) throw aborted();
}

// Columns [t0, t0 + n) of every row of the (B, T) ids, row-major.
function columns({ data, b, t }, t0, n) {
  if (t0 === 0 && n === t) return data;
  const out = new Int32Array(b * n);
  for (let i = 0; i < b; i++) out.set(data.subarray(i * t + t0, i * t + t0 + n), i * n);
  return out;
}

// The prompt through the caches in chunks of `chunk` tokens per sequence; yields { done, total }
// after each chunk (the caller reports progress and may stop there) and returns the last chunk's
// logits (B, 1, V) of each sequence's last row.
function* prefill(handle, batch, chunk) {
  const { b, t } = batch;
  let logits;
  for (let t0 = 0; t0 < t; t0 += chunk) {
    const n = Math.min(chunk, t - t0);
    logits = fromCore(check(handle.forwardCached(columns(batch, t0, n), b, n, true)).logits);
    yield { done: t0 + n, total: t };
  }
  return logits;
}

/**
 * Yields { done, total } after each chunk of the prompt's prefill, then each step's next ids
 * (Int32Array(b)); a row that has produced a stop id yields GENERATE_PAD from then on, and the loop
 * ends when every row has stopped. The caches (float16 with kvCache 'f16') live from the first
 * chunk until the generator finishes or is closed: a caller stops between chunks by closing it.
 */
export function* decodeSteps(
  handle,
  batch,
  { maxNewTokens, choose, stop, edits = [], kvCache = 'f32', prefillChunk = PREFILL_CHUNK },
) {
  const { b, t } = batch;
  const stopped = new Uint8Array(b);
  // Steering: the edits (interp/hooks.js) at the prompt's rows and every step's, checked here first.
  check(handle.setDecodeEdits(edits));
  try {
    check(handle.createCaches(t + maxNewTokens, b, kvCache === 'f16'));
    // Each step's logits of every sequence's last row only, (B, 1, V): all that decoding reads.
    let logits = yield* prefill(handle, batch, prefillChunk);
    for (let step = 0; step < maxNewTokens; step++) {
      const V = logits.shape[2];
      const next = new Int32Array(b);
      for (let i = 0; i < b; i++) {
        const row = logits.data.subarray(i * V, (i + 1) * V);
        next[i] = stopped[i] ? GENERATE_PAD : choose(row);
      }
      yield next;
      next.forEach((id, i) => {
        if (stop.has(id)) stopped[i] = 1;
      });
      if (step + 1 === maxNewTokens || stopped.every(Boolean)) return;
      // A stopped row is fed id 0: what it computes is never read.
      const feed = next.map((id, i) => (id === GENERATE_PAD ? 0 : id));
      logits = fromCore(check(handle.forwardCached(feed, b, 1, true)).logits);
    }
  } finally {
    handle.dropCaches();
    handle.setDecodeEdits(null);
  }
}
