// The SmolLM2-360M-shaped checkpoint's config and the checks run on it, in Node and in a page
// (no Node imports here): bench/smollm2_shape.mjs writes the file, bench/smollm2_browser.mjs opens it
// in Chromium.
export const IDS = [1, 504, 2342, 314, 260, 3436, 30, 49151]; // fixed, in range, the last the top id

// SmolLM2-360M's config.json fields that matter (HuggingFaceTB/SmolLM2-360M).
export const CONFIG = {
  architectures: ['LlamaForCausalLM'],
  model_type: 'llama',
  hidden_size: 960,
  intermediate_size: 2560,
  num_hidden_layers: 32,
  num_attention_heads: 15,
  num_key_value_heads: 5,
  vocab_size: 49152,
  max_position_embeddings: 8192,
  rms_norm_eps: 1e-5,
  rope_theta: 100000,
  tie_word_embeddings: true,
  hidden_act: 'silu',
  torch_dtype: 'bfloat16',
  rope_scaling: null,
};

/**
 * Loads the checkpoint (weights: a Blob or File) with the given library and checks a forward (logits
 * finite and of their shape, layer 0's attention rows summing to 1) and a generation of 8 tokens.
 * `config`/`memoryLimit`: another checkpoint's (bench/checkpoint_shapes.mjs); ids must be in its vocabulary.
 */
export async function checkModel(attn, weights, fileBytes, { config = CONFIG, memoryLimit } = {}) {
  const CONFIG = config; // the checks below read the config given
  const t0 = performance.now();
  const model = await attn.loadPretrained({ config, weights, ...(memoryLimit ? { memoryLimit } : {}) });
  const loadSeconds = (performance.now() - t0) / 1000;
  const heapAfterLoad = attn.memoryStats().heapBytes;
  const f0 = performance.now();
  const r = model.forward(IDS, { attention: [0] });
  const forwardMs = performance.now() - f0;
  const problems = [];
  if (String(r.logits.shape) !== String([1, IDS.length, CONFIG.vocab_size]))
    problems.push(`logits shape ${r.logits.shape}`);
  if (!r.logits.data.every(Number.isFinite)) problems.push('non-finite logits');
  const a = r.attention[0],
    T = IDS.length;
  for (let row = 0; row < a.data.length / T; row++) {
    const s = a.data.subarray(row * T, (row + 1) * T).reduce((x, y) => x + y, 0);
    if (Math.abs(s - 1) > 1e-5) {
      problems.push(`attention row ${row} sums to ${s}`);
      break;
    }
  }
  const g0 = performance.now();
  const next = model.generate(IDS, { maxNewTokens: 8, stop: [] });
  const tokensPerSecond = 8 / ((performance.now() - g0) / 1000);
  if (!next.data.every((id) => id >= 0 && id < CONFIG.vocab_size))
    problems.push('generated ids out of range');
  const result = {
    loadSeconds,
    forwardMs,
    tokensPerSecond,
    heapAfterLoad,
    heapAfterRuns: attn.memoryStats().heapBytes,
    weightBytes: model.weightBytes,
    fileBytes,
    variant: attn.kernelVariant(),
    problems,
  };
  model.dispose();
  return result;
}

export function describe(where, r) {
  const mb = (b) => `${(b / 1e6).toFixed(0)} MB`;
  return (
    `${where} (${r.variant}): load ${r.loadSeconds.toFixed(1)} s, forward of ${IDS.length} ids ${r.forwardMs.toFixed(0)} ms, ` +
    `generation ${r.tokensPerSecond.toFixed(1)} tokens/s; weights ${mb(r.weightBytes)} of a ${mb(r.fileBytes)} file; ` +
    `heap ${mb(r.heapAfterLoad)} after load, ${mb(r.heapAfterRuns)} after the runs (${(r.heapAfterRuns / r.fileBytes).toFixed(2)} × the file)`
  );
}
