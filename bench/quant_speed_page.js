// The in-page half of bench/quant_speed.mjs: one model loaded in this tab by one engine — ours
// (src/js/index.js: a GGUF file in the exact or int8 activation mode, or a BF16 safetensors
// checkpoint) or wllama (llama.cpp's wasm build, installed into build/wllama by the driver) — and
// two measurements the driver calls in interleaved rounds through window.quantBench:
//   prefill(ids, text): ms to process the prompt (T = 128) and produce the next token's logits;
//   decode(ids, text, n): ms per generated token over n greedy tokens after a short prompt.
// ids are our tokenizer's ids of text (the same file, so llama.cpp tokenizes text into the same
// count; the driver checks wllama's prompt_n). wllama times itself (llama.cpp's own timings).
const WLLAMA = '/build/wllama/node_modules/@wllama/wllama/esm/';

let engine = null;

function pickedFile() {
  const files = document.getElementById('model').files;
  if (!files.length) throw new Error('no model file picked');
  return files[0];
}

async function loadOurs({ threads, format, activations, config, memoryLimit }) {
  const attn = await import('/src/js/index.js');
  await attn.init({ threads });
  const file = pickedFile();
  const model =
    format === 'gguf'
      ? await attn.loadPretrained({ gguf: file, activations, memoryLimit })
      : await attn.loadPretrained({ config, weights: file, memoryLimit });
  const time = (ids, n) => {
    const t0 = performance.now();
    model.generate([ids], { maxNewTokens: n, stop: [] });
    return performance.now() - t0;
  };
  engine = {
    info: { threads: attn.threadCount(), variant: attn.kernelVariant(), activations: model.activations },
    // null without a tokenizer (the BF16 checkpoint: the driver then gives it ids)
    encode: (text) => {
      try {
        return Array.from(model.encode(text, { addSpecialTokens: false }));
      } catch (error) {
        if (/without a tokenizer/.test(error.message)) return null;
        throw error;
      }
    },
    prefill: (ids) => time(ids, 1),
    // n tokens after the first: the difference of two runs over the same short prompt
    decode: (ids, _, n) => (time(ids, n + 1) - time(ids, 1)) / n,
  };
}

async function loadWllama({ threads }) {
  const { Wllama } = await import(`${WLLAMA}index.js`);
  const wllama = new Wllama({ default: `${WLLAMA}wasm/wllama.wasm` }, { suppressNativeLog: true });
  await wllama.loadModel([pickedFile()], { n_threads: threads, n_ctx: 512, n_batch: 512, n_gpu_layers: 0 });
  let round = 0;
  const complete = async (text, maxTokens) => {
    // A distinct first character each call, so no prompt cache is reused (cache_n is checked).
    const r = await wllama.createCompletion({
      prompt: `${String.fromCharCode(65 + (round++ % 26))}${text}`,
      max_tokens: maxTokens,
      temperature: 0,
      ignore_eos: true,
      // Random weights pick random tokens, and a lone byte token is not UTF-8, which wllama's JSON
      // reply refuses: the greedy choice is biased to token 97 ('a') after the logits are computed.
      logit_bias: { 97: 100 },
    });
    return r.timings;
  };
  engine = {
    info: { threads: wllama.getNumThreads?.() ?? threads, multiThread: wllama.isMultithread?.() ?? null },
    prefill: async (_, text) => {
      const t = await complete(text, 1);
      return { ms: t.prompt_ms, tokens: t.prompt_n, cached: t.cache_n };
    },
    decode: async (_, text, n) => {
      const t = await complete(text, n);
      return { ms: t.predicted_ms / t.predicted_n, tokens: t.predicted_n, cached: t.cache_n };
    },
  };
}

window.quantBench = {
  async load(options) {
    if (options.engine === 'wllama') await loadWllama(options);
    else await loadOurs(options);
    return engine.info;
  },
  encode: (text) => engine.encode(text),
  prefill: (ids, text) => engine.prefill(ids, text),
  decode: (ids, text, n) => engine.decode(ids, text, n),
};
document.getElementById('ready').textContent = 'ready';
