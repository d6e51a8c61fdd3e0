#!/usr/bin/env node
// `npm run bench:quant [-- --threads=1,2] [--rounds=5] [--models=qwen3-q4km,qwen3-q8,smollm2-q4km,qwen3-bf16]`:
// quantized models at llama.cpp's speed (bench/README.md, "Quantized GGUF against wllama"). In
// Chromium, on the same files, ours (exact and int8 activations; BF16 safetensors of the same
// shape) against wllama (@wllama/wllama 3.13.0, llama.cpp's wasm build, installed by this script
// into build/wllama — never a project dependency) at each thread count: prompt processing tokens/s
// (T = 128) and decode tokens/s (64 greedy tokens after an 8-token prompt), interleaved rounds, the
// medians printed with the ratios against wllama. Files: Qwen3-0.6B-shaped Q4_K_M and Q8_0 GGUF
// files (1024 wide: real K-quant blocks), a SmolLM2-360M-shaped Q4_K_M one (960 wide: llama.cpp's
// fallback types Q5_0 / Q8_0) and the Qwen3-0.6B BF16 safetensors — seeded random weights written
// to bench/.cache/ (bench/gguf_shapes.mjs, bench/shaped_checkpoint.mjs).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { launch, routeHtml } from '../tests/browser/helpers.mjs';
import { ISOLATION_HEADERS } from '../scripts/serve.mjs';
import { writeGGUFShape } from './gguf_shapes.mjs';
import { SHAPES } from './checkpoint_shapes.mjs';
import { writeShapedCheckpoint } from './shaped_checkpoint.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(here, '..');
const WLLAMA_VERSION = '3.13.0';
const PREFIX = path.join(ROOT, 'build', 'wllama');
const PROMPT_T = 128,
  DECODE_PROMPT_T = 8,
  DECODE_N = 64;

const arg = (name, fallback) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? a.slice(name.length + 3) : fallback;
};
const THREADS = arg('threads', '1,2').split(',').map(Number);
const ROUNDS = Number(arg('rounds', '5'));

// Each file measured: which engines read it.
const MODELS = {
  'qwen3-q4km': { shape: 'qwen3-0.6b', ftype: 'Q4_K_M', engines: ['exact', 'int8', 'wllama'] },
  'qwen3-q8': { shape: 'qwen3-0.6b', ftype: 'Q8_0', engines: ['exact', 'int8', 'wllama'] },
  'smollm2-q4km': { shape: 'smollm2-360m', ftype: 'Q4_K_M', engines: ['exact', 'int8', 'wllama'] },
  'qwen3-bf16': { shape: 'qwen3-0.6b', bf16: true, engines: ['bf16'] },
};
const WANTED = arg('models', Object.keys(MODELS).join(',')).split(',');

function installWllama() {
  const pkg = path.join(PREFIX, 'node_modules', '@wllama', 'wllama', 'package.json');
  if (existsSync(pkg) && JSON.parse(readFileSync(pkg, 'utf8')).version === WLLAMA_VERSION) return;
  const args = ['i', '-E', '--no-save', '--prefix', PREFIX, `@wllama/wllama@${WLLAMA_VERSION}`];
  console.log(`npm ${args.join(' ')}`);
  execFileSync('npm', [...args, '--no-audit', '--no-fund'], { stdio: 'inherit' });
}

// The file of a model (written on first use) and how the page loads it.
function modelFile(key) {
  const m = MODELS[key];
  if (!m.bf16) return { file: writeGGUFShape(m.shape, m.ftype).file, format: 'gguf' };
  const { config, memoryLimit } = SHAPES[m.shape];
  const dir = path.join(here, '.cache', `${m.shape}-bf16-shaped`);
  return { file: writeShapedCheckpoint(dir, config).file, format: 'safetensors', config, memoryLimit };
}

const pageHtml = (
  title,
) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<script type="module" src="/bench/quant_speed_page.js"></script></head>
<body><input type="file" id="model" aria-label="model file"><output id="ready"></output></body></html>`;

// A tab with one engine's model loaded. Ours runs under the strict CSP; wllama's page has none
// (it starts its workers from blob: URLs), with the same cross-origin isolation.
async function openEngine(browser, key, engine, threads) {
  const { file, format, config, memoryLimit = 1.6e9 } = modelFile(key);
  const url = browser.url(`/bench/quant_speed_${engine}_${key}_${threads}.html`);
  if (engine === 'wllama')
    await browser.context.route(url, (route) =>
      route.fulfill({
        status: 200,
        contentType: 'text/html',
        headers: ISOLATION_HEADERS,
        body: pageHtml('wllama'),
      }),
    );
  else await routeHtml(browser.context, url, pageHtml('ours'));
  const { page, watch } = await browser.newPage();
  await page.goto(url);
  await page.waitForFunction(() => document.getElementById('ready').textContent === 'ready');
  await page.setInputFiles('#model', file);
  const options = {
    engine,
    threads,
    format,
    config,
    memoryLimit,
    activations: engine === 'int8' ? 'int8' : 'exact',
  };
  const info = await page.evaluate((o) => window.quantBench.load(o), options);
  return { page, watch, info, engine };
}

// A prompt of about T tokens: words appended until our tokenizer (the file's vocabulary, which
// llama.cpp reads the same way) gives T ids; wllama gets the text, ours its ids.
async function promptOf(tab, T, seed) {
  if ((await tab.page.evaluate(() => window.quantBench.encode('a'))) === null)
    return {
      text: null,
      ids: Array.from({ length: T }, (_, i) => ((i * 7919 + seed * 104729) % 30000) + 100),
    };
  const words = ['the', 'model', 'reads', 'every', 'token', 'and', 'writes', 'one', 'more', 'line'];
  let text = '';
  for (let i = 0; ; i++) {
    text += ` ${words[(i * 7 + seed) % words.length]}${i % 13}`;
    const ids = await tab.page.evaluate((t) => window.quantBench.encode(t), text);
    if (ids.length >= T) return { text, ids };
  }
}

async function measure(tab, prompt, short) {
  const p = await tab.page.evaluate(
    ([ids, text]) => window.quantBench.prefill(ids, text),
    [prompt.ids, prompt.text],
  );
  const d = await tab.page.evaluate(
    ([ids, text, n]) => window.quantBench.decode(ids, text, n),
    [short.ids, short.text, DECODE_N],
  );
  const prefill = typeof p === 'number' ? { ms: p, tokens: prompt.ids.length } : p;
  const decode = typeof d === 'number' ? { ms: d, tokens: DECODE_N } : d;
  return { prefillTps: (1000 * prefill.tokens) / prefill.ms, decodeTps: 1000 / decode.ms, prefill, decode };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// One model at one thread count: every engine's tab, ROUNDS interleaved rounds, the medians.
async function runModel(browser, key, threads) {
  const tabs = [];
  for (const engine of MODELS[key].engines) tabs.push(await openEngine(browser, key, engine, threads));
  const ours = tabs.find((t) => t.engine !== 'wllama');
  const results = Object.fromEntries(tabs.map((t) => [t.engine, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const prompt = await promptOf(ours, PROMPT_T, round);
    const short = await promptOf(ours, DECODE_PROMPT_T, round);
    for (const tab of tabs) results[tab.engine].push(await measure(tab, prompt, short));
  }
  for (const tab of tabs) {
    if (tab.watch.errors.length)
      console.error(`${tab.engine}: console errors ${JSON.stringify(tab.watch.errors)}`);
    await tab.page.close();
  }
  return Object.fromEntries(
    tabs.map((t) => {
      const r = results[t.engine];
      return [
        t.engine,
        {
          info: t.info,
          prefillTps: median(r.map((x) => x.prefillTps)),
          decodeTps: median(r.map((x) => x.decodeTps)),
          runs: r,
        },
      ];
    }),
  );
}

function report(key, threads, r) {
  const peer = r.wllama;
  const rows = Object.entries(r).map(([engine, x]) => ({
    engine,
    'prefill tok/s': x.prefillTps.toFixed(1),
    'decode tok/s': x.decodeTps.toFixed(2),
    'prefill ×wllama': peer ? (x.prefillTps / peer.prefillTps).toFixed(2) : '-',
    'decode ×wllama': peer ? (x.decodeTps / peer.decodeTps).toFixed(2) : '-',
    info: JSON.stringify(x.info),
  }));
  console.log(`\n${key}, ${threads} thread(s), medians of ${ROUNDS} interleaved rounds`);
  console.table(rows);
  if (peer)
    console.log(
      `wllama prompt_n / predicted_n / cache_n: ${peer.runs.map((x) => `${x.prefill.tokens}/${x.decode.tokens}/${x.prefill.cached}`).join(', ')}`,
    );
}

async function main() {
  installWllama();
  const browser = await launch();
  const all = {};
  try {
    for (const threads of THREADS)
      for (const key of WANTED) {
        const r = await runModel(browser, key, threads);
        report(key, threads, r);
        all[`${key}@${threads}`] = r;
      }
  } finally {
    await browser.close();
  }
  console.log(
    `\nresult ${JSON.stringify(Object.fromEntries(Object.entries(all).map(([k, r]) => [k, Object.fromEntries(Object.entries(r).map(([e, x]) => [e, { prefillTps: x.prefillTps, decodeTps: x.decodeTps }]))])))}`,
  );
}

await main();
