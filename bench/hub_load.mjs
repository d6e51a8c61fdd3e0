#!/usr/bin/env node
// `node bench/hub_load.mjs [model]` (default qwen3-0.6b, a ~0.4 GB Q4_K_M file of the released
// shape written by bench/gguf_shapes.mjs into bench/.cache/): loadPretrained from the local Hub
// (tests/js/hub-server.js, in its own process, so its copy of the file is not counted) against the
// same file read from disk (a Blob over it). Each load runs in a fresh process and reports the time
// to the first forward and its peak resident memory: the range reads must not hold the file twice.
// Modes: disk; hub with cache: false; hub into an empty cache; hub from that cache (server stopped).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, openAsBlob, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(import.meta.url);
const arg = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

// A child: the local Hub serving the file as test/shaped (prints its URL, runs until killed).
async function serve(file) {
  const { startHub } = await import('../tests/js/hub-server.js');
  const hub = await startHub({
    repos: { 'test/shaped': { files: { 'shaped-Q4_K_M.gguf': readFileSync(file) } } },
  });
  console.log(hub.url);
}

// A child: one load and its first forward, as a JSON line { mode, seconds, peakMB }.
async function measure(mode, file, hubUrl, cacheDir) {
  const { init, loadPretrained } = await import('../src/js/index.js');
  await init();
  const memoryLimit = 1.6e9;
  const t0 = performance.now();
  const model =
    mode === 'disk'
      ? await loadPretrained({ gguf: await openAsBlob(file), memoryLimit })
      : await loadPretrained({ hub: 'test/shaped', hubUrl, memoryLimit, cache: mode !== 'hub', cacheDir });
  model.forward([[1, 2, 3, 4]]);
  const seconds = (performance.now() - t0) / 1000;
  console.log(JSON.stringify({ mode, seconds, peakMB: process.resourceUsage().maxRSS / 1024 }));
  model.dispose();
}

function child(args) {
  const r = spawnSync(process.execPath, [here, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1));
}

async function main(name = 'qwen3-0.6b') {
  const { writeGGUFShape } = await import('./gguf_shapes.mjs');
  const { file, size } = writeGGUFShape(name);
  const server = spawn(process.execPath, [here, '--serve', `--file=${file}`], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const hubUrl = (await new Promise((resolve) => server.stdout.once('data', resolve))).toString().trim();
  const cacheDir = mkdtempSync(path.join(tmpdir(), 'hub-bench-'));
  const common = [`--file=${file}`, `--hub=${hubUrl}`, `--cache-dir=${cacheDir}`];
  const rows = [];
  try {
    for (const mode of ['disk', 'hub', 'hub-cache']) rows.push(child([`--mode=${mode}`, ...common]));
    server.kill();
    rows.push({ ...child(['--mode=hub-cache', ...common]), mode: 'cache, server stopped' });
  } finally {
    server.kill();
    rmSync(cacheDir, { recursive: true, force: true });
  }
  console.log(`${name}: ${(size / 1e6).toFixed(0)} MB GGUF (Q4_K_M shape), Node ${process.version}`);
  console.log('| read from | to the first forward | peak RSS |\n|---|---|---|');
  for (const r of rows) console.log(`| ${r.mode} | ${r.seconds.toFixed(2)} s | ${r.peakMB.toFixed(0)} MB |`);
}

if (process.argv.includes('--serve')) await serve(arg('file'));
else if (arg('mode')) await measure(arg('mode'), arg('file'), arg('hub'), arg('cache-dir'));
else await main(process.argv[2]);
