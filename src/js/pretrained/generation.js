// Generation for PretrainedModel: the options of generate/generateStream, and the decode loop over
// the model's KV caches (one prefill of the prompt, then one row per sequence and step).
import { AttentionError, check } from '../errors.js';
import { checkOptions, describe } from '../options.js';
import { samplingOptions, tokenChooser } from './sampling.js';
import { fromCore } from '../tensor.js';
import { hookEdits } from '../interp/hooks.js';

/** The id written after a row's stop token in generate()'s output (never a real token id). */
export const GENERATE_PAD = -1;

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);
const OPTIONS = ['maxNewTokens', 'temperature', 'topK', 'topP', 'seed', 'stop', 'edits'];

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

/** generate()'s options checked: { maxNewTokens, chooser, stop (Set), edits (the core's form) }, plus the `extra` keys given. */
export function generationOptions(options, { vocab, defaultStop, extra = [] }) {
  const o = checkOptions(options, [...OPTIONS, ...extra], 'generate option');
  if (!Number.isInteger(o.maxNewTokens) || o.maxNewTokens < 1)
    throw invalid(`maxNewTokens must be an integer >= 1, got ${describe(o.maxNewTokens)}`);
  const stop = new Set(o.stop === undefined ? defaultStop : idList(o.stop, vocab, 'stop'));
  return { ...o, choose: tokenChooser(samplingOptions(o)), stop, edits: hookEdits(o.edits) };
}

/**
 * Yields each step's next ids (Int32Array(b)); a row that has produced a stop id yields
 * GENERATE_PAD from then on, and the loop ends when every row has stopped. The caches live from
 * the first step until the generator finishes or is closed.
 */
export function* decodeSteps(handle, batch, { maxNewTokens, choose, stop, edits = [] }) {
  const { b, t } = batch;
  const stopped = new Uint8Array(b);
  // Steering: the edits (interp/hooks.js) at the prompt's rows and every step's, checked here first.
  check(handle.setDecodeEdits(edits));
  check(handle.createCaches(t + maxNewTokens, b));
  try {
    // Each step's logits of every sequence's last row only, (B, 1, V): all that decoding reads.
    let logits = fromCore(check(handle.forwardCached(batch.data, b, t, true)).logits);
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
