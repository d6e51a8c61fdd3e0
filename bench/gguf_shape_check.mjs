// The checks run on a shaped GGUF file, in Node and in a page (no Node imports here):
// loadPretrained({ gguf, memoryLimit }), a forward of 8 ids with the attention of the first and last
// layers, a generation of 3 tokens, the file's tokenizer and chat template; heap and times recorded
// and the heap held to 1.1 × the file plus what docs/checkpoints.md states for the call's buffers.
import { IDS } from './gguf_shape_models.mjs';

const NEW_TOKENS = 3;

/**
 * What the docs allow the heap beyond the weights for T tokens: a forward's buffers
 * T·(6·hidden + 2·intermediate + vocab)·4, the returned attention H·T²·4 per layer asked for, and a
 * KV cache of 2·layers·kvHeads·headDim·T·4 for the generation.
 */
export function callBytes(core, T, attentionLayers) {
  const forward = T * (6 * core.hidden + 2 * core.intermediate + core.vocab) * 4;
  const attention = attentionLayers * core.heads * T * T * 4;
  const kv = 2 * core.layers * core.kvHeads * core.headDim * T * 4;
  return forward + attention + kv;
}

// Problems of a forward's result: logits shape and finiteness, attention rows summing to 1 (the
// attention list has one entry per layer, null for the layers not asked for).
function forwardProblems(r, vocab) {
  const problems = [];
  if (String(r.logits.shape) !== String([1, IDS.length, vocab]))
    problems.push(`logits shape ${r.logits.shape}`);
  if (!r.logits.data.every(Number.isFinite)) problems.push('non-finite logits');
  const T = IDS.length;
  for (const a of r.attention.filter(Boolean)) {
    for (let row = 0; row < a.data.length / T; row++) {
      const s = a.data.subarray(row * T, (row + 1) * T).reduce((x, y) => x + y, 0);
      if (!(Math.abs(s - 1) <= 1e-5)) {
        problems.push(`attention row ${row} sums to ${s}`);
        return problems;
      }
    }
  }
  return problems;
}

// The file's tokenizer and chat template at work: ids of a text and of a chat, or why not.
function tokenizerCheck(model) {
  try {
    const ids = model.encode('Hello world, this is a test.');
    const chat = model.applyChatTemplate([{ role: 'user', content: 'Hi' }], { addGenerationPrompt: true });
    return { textIds: ids.length, bos: ids[0], chatIds: chat.length ?? chat.data.length };
  } catch (error) {
    return { why: String(error.message) };
  }
}

/** Loads the file (a Blob or File) and runs the checks; the measurements and problems. */
export async function checkGGUF(attn, gguf, fileBytes, { memoryLimit }) {
  const t0 = performance.now();
  const model = await attn.loadPretrained({ gguf, memoryLimit });
  const loadSeconds = (performance.now() - t0) / 1000;
  const heapAfterLoad = attn.memoryStats().heapBytes;
  const core = {
    hidden: model.config.hidden_size,
    intermediate: model.config.intermediate_size,
    vocab: model.config.vocab_size,
    layers: model.config.num_hidden_layers,
    heads: model.config.num_attention_heads,
    kvHeads: model.config.num_key_value_heads,
    headDim: model.config.head_dim ?? model.config.hidden_size / model.config.num_attention_heads,
  };
  const layers = [0, core.layers - 1];
  const f0 = performance.now();
  const r = model.forward(IDS, { attention: layers });
  const forwardSeconds = (performance.now() - f0) / 1000;
  const heapAfterForward = attn.memoryStats().heapBytes;
  const problems = forwardProblems(r, core.vocab);
  const g0 = performance.now();
  const next = model.generate(IDS, { maxNewTokens: NEW_TOKENS, stop: [] });
  const generateSeconds = (performance.now() - g0) / 1000;
  if (!Array.from(next.data).every((id) => id >= 0 && id < core.vocab))
    problems.push('generated ids out of range');
  const heapAfterRuns = attn.memoryStats().heapBytes;
  const bound = 1.1 * fileBytes + callBytes(core, IDS.length + NEW_TOKENS, layers.length);
  if (heapAfterRuns > bound) problems.push(`heap ${heapAfterRuns} over the bound ${Math.round(bound)}`);
  const tokenizer = tokenizerCheck(model);
  const result = {
    fileBytes,
    weightBytes: model.weightBytes,
    offHeapBytes: model.offHeapBytes,
    loadSeconds,
    forwardSeconds,
    generateSeconds,
    heapAfterLoad,
    heapAfterForward,
    heapAfterRuns,
    bound,
    generated: Array.from(next.data),
    tokenizer,
    architecture: model.config.architectures[0],
    variant: attn.kernelVariant(),
    problems,
  };
  model.dispose();
  return result;
}

/** One line of a result. */
export function describeGGUF(where, r) {
  const gb = (b) => `${(b / 1e9).toFixed(2)} GB`;
  const tok = r.tokenizer.why
    ? `tokenizer: ${r.tokenizer.why}`
    : `tokenizer: ${r.tokenizer.textIds} ids, chat ${r.tokenizer.chatIds} ids`;
  return (
    `${where} (${r.variant}, ${r.architecture}): file ${gb(r.fileBytes)}, weightBytes ${gb(r.weightBytes)}, ` +
    `offHeapBytes ${gb(r.offHeapBytes ?? 0)}; ` +
    `load ${r.loadSeconds.toFixed(1)} s, forward of ${IDS.length} ids ${r.forwardSeconds.toFixed(1)} s, ` +
    `${NEW_TOKENS} tokens ${r.generateSeconds.toFixed(1)} s; heap ${gb(r.heapAfterLoad)} after load, ` +
    `${gb(r.heapAfterForward)} after the forward, ${gb(r.heapAfterRuns)} after generating ` +
    `(${(r.heapAfterRuns / r.fileBytes).toFixed(3)} × the file; bound ${gb(r.bound)}); ${tok}`
  );
}
