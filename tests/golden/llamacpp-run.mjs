// llama.cpp's side of check_with_llamacpp.mjs: node-llama-cpp 3.22.1 installed into build/llamacpp
// (never into the project's node_modules), and one GGUF fixture run through it on the CPU.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const NODE_LLAMA_CPP = '3.22.1';
const PREFIX = fileURLToPath(new URL('../../build/llamacpp/', import.meta.url));
const PACKAGE = `${PREFIX}node_modules/node-llama-cpp/`;

// npm i of the pinned node-llama-cpp and of its prebuilt CPU binary for this platform only: the
// optional GPU packages (CUDA, Vulkan) are left out, and so is the postinstall that would otherwise
// download or build llama.cpp (the prebuilt binary is there).
function install() {
  const os = { darwin: 'mac', win32: 'win' }[process.platform] ?? process.platform;
  const name = `${os}-${process.arch}${os === 'mac' && process.arch === 'arm64' ? '-metal' : ''}`;
  const binary = `@node-llama-cpp/${name}@${NODE_LLAMA_CPP}`; // its CPU build (linux-x64, mac-arm64-metal …)
  const args = ['i', '-E', '--no-save', '--prefix', PREFIX, `node-llama-cpp@${NODE_LLAMA_CPP}`, binary];
  console.log(`npm ${args.join(' ')} --no-audit --no-fund --omit=optional`);
  execFileSync('npm', [...args, '--no-audit', '--no-fund', '--omit=optional'], {
    stdio: 'inherit',
    env: { ...process.env, NODE_LLAMA_CPP_SKIP_DOWNLOAD: 'true' },
  });
}

/** node-llama-cpp (installed first if missing or of another version) and a CPU-only llama. */
export async function openLlama() {
  const installed = existsSync(`${PACKAGE}package.json`)
    ? JSON.parse(readFileSync(`${PACKAGE}package.json`, 'utf8')).version
    : null;
  if (installed !== NODE_LLAMA_CPP) install();
  const lib = await import(`${PACKAGE}dist/index.js`);
  const llama = await lib.getLlama({ gpu: false, build: 'never', logLevel: 'warn' });
  return { lib, llama };
}

// A probability Map (token → p; the greedy chain keeps every token) as a dense vector.
function dense(map) {
  const p = new Float64Array(map.size);
  for (const [id, v] of map) p[id] = v;
  return p;
}

// llama.cpp's tokenization: parse_special on (control tokens in the text are matched, as the
// library matches them), and with what the vocab adds (BOS / EOS as its flags say).
function tokenizer(model) {
  const { bos, eos } = model.tokens;
  const plain = (text) => Array.from(model.tokenize(text, true));
  const special = (text) => [
    ...(model.tokens.shouldPrependBosToken && bos !== null ? [bos] : []),
    ...plain(text),
    ...(model.tokens.shouldAppendEosToken && eos !== null ? [eos] : []),
  ];
  return { plain, special };
}

// The next-token probabilities after every prompt position, then `steps` greedy tokens (llama.cpp's
// greedy sampler: the first largest logit), each with its probabilities.
async function evaluate(sequence, prompt, steps) {
  const items = prompt.map((t, i) => [
    t,
    { generateNext: { probabilities: true, token: i === prompt.length - 1 } },
  ]);
  const results = await sequence.controlledEvaluate(items);
  const probs = results.map((r) => dense(r.next.probabilities));
  const greedy = [results.at(-1).next.token];
  const greedyProbs = [probs.at(-1)];
  while (greedy.length < steps) {
    const [r] = await sequence.controlledEvaluate([
      [greedy.at(-1), { generateNext: { probabilities: true, token: true } }],
    ]);
    greedy.push(r.next.token);
    greedyProbs.push(dense(r.next.probabilities));
  }
  return { probs, greedy, greedyProbs };
}

// The chat template rendered by llama.cpp's own Jinja engine (the AddonJinjaRenderer binding of
// common/jinja, which llama.cpp's chat code uses), with bos_token / eos_token the tokens' text.
function renderChat(llama, model, template, chat) {
  if (!template) return null;
  const renderer = new llama._bindings.AddonJinjaRenderer(template);
  return renderer.render({
    messages: chat,
    add_generation_prompt: true,
    bos_token: model.tokens.bosString ?? '',
    eos_token: model.tokens.eosString ?? '',
  });
}

// A float32 KV cache and no flash attention (LLAMACPP_F32_KV=1, or options.f32Kv): a diagnosis, what
// is left of the difference is then llama.cpp's 8-bit activations for quantized weights.
const F32_KV = {
  experimentalKvCacheKeyType: 'F32',
  experimentalKvCacheValueType: 'F32',
  flashAttention: false,
};

/**
 * One fixture through llama.cpp: { texts: [{ text, ids, idsSpecial }], prompt, probs (per
 * position, dense), greedy, greedyProbs, chat }.
 */
export async function runLlamaCpp(
  { llama },
  path,
  testCase,
  { f32Kv = Boolean(process.env.LLAMACPP_F32_KV) } = {},
) {
  const model = await llama.loadModel({ modelPath: path, gpuLayers: 0 });
  try {
    const tok = tokenizer(model);
    const texts = testCase.texts.map((text) => ({
      text,
      ids: tok.plain(text),
      idsSpecial: tok.special(text),
    }));
    const prompt = tok.special(testCase.prompt);
    const context = await model.createContext({
      contextSize: Math.min(128, model.trainContextSize),
      ...(f32Kv ? F32_KV : {}),
    });
    try {
      const run = await evaluate(context.getSequence(), prompt, testCase.greedySteps);
      const template = model.fileInfo.metadata.tokenizer.chat_template;
      const chat = renderChat(llama, model, template, testCase.chat);
      return { texts, prompt, ...run, chat };
    } finally {
      await context.dispose();
    }
  } finally {
    await model.dispose();
  }
}
