#!/usr/bin/env node
// `npm run bench:gpt2` (also the last section of `npm run bench`): the pretrained-forward benchmark. A
// GPT-2-small-shaped checkpoint (12 layers, 768 wide, 12 heads, vocab 50257, random weights) run by
// loadPretrained and by onnxruntime-web (wasm EP, 1 thread) on the same weights, exported from the
// same torch forward by bench/gpt2_export.py (Debian's python3-torch; cached in bench/.cache/).
//
//   forward at T = 128: median ms of each, the ratio (target ≥ 1.5×), and both runtimes' last-position
//   logits against torch's (they must agree: exit 1 otherwise);
//   generation: our tokens/s with the KV cache (greedy, 16-token prompt); onnxruntime-web's graph has no
//   cache, so its tokens/s re-runs the whole prefix per token (shown for scale, not as a peer figure);
//   heap: our wasm heap after loading and after the runs, against the safetensors file's size;
//   ceiling: the forward's multiply-add work over this machine's f32x4 FMA peak (bench/fma_peak.mjs)
//   is the fastest any wasm engine could run it here; onnxruntime-web's time over that is the
//   highest ratio reachable on this machine, printed beside the measured one.
//
//   node bench/gpt2_small.mjs [--quick] [--runs N] [--threads N]
//   --quick: T = 32, 3 runs (a smoke check); --threads N: both runtimes on N threads (ours:
//   init({ threads: N }); onnxruntime-web: numThreads N), default 1 (the thread tables)
// A full one-thread run rewrites the "Pretrained GPT-2-small forward" section of bench/README.md.
// ATTN_BENCH_PYTHON: the Python with torch that exports the checkpoint (default /usr/bin/python3).
import { spawnSync } from 'node:child_process';
import { existsSync, openAsBlob, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { measurePeak } from './fma_peak.mjs';
import { captureMemory, heapBytes, installMemoryProbe } from './wasm_memory.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const cache = path.join(here, '.cache', 'gpt2-small');
const kGeneratorVersion = '1'; // bench/gpt2_export.py's GENERATOR_VERSION
const kLogitTol = 2e-3; // |logit − torch's| (float32 over 12 layers; a wrong layer is ≳ 0.1)
const MB = 1e6;

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const runs = Number(args[args.indexOf('--runs') + 1]) || (quick ? 3 : 9);
const T = quick ? 32 : 128;
const threads = Number(args[args.indexOf('--threads') + 1]) || 1;

// Node 20 runs relaxed SIMD only behind a flag: re-run with it so our fastest build is measured.
const attn = await import('../src/js/index.js');
if (!attn.relaxedSimdSupported() && !process.env.ATTN_BENCH_RELAXED_RERUN) {
  const argv = ['--experimental-wasm-relaxed-simd', ...process.execArgv, ...process.argv.slice(1)];
  process.exit(
    spawnSync(process.execPath, argv, {
      stdio: 'inherit',
      env: { ...process.env, ATTN_BENCH_RELAXED_RERUN: '1' },
    }).status ?? 1,
  );
}
installMemoryProbe();

function ensureCheckpoint() {
  const version = path.join(cache, 'version.txt');
  if (existsSync(version) && readFileSync(version, 'utf8').trim() === kGeneratorVersion) return;
  console.log('gpt2_small: writing the checkpoint and its ONNX export (torch, once; ~1 min)…');
  const python = process.env.ATTN_BENCH_PYTHON ?? '/usr/bin/python3';
  const r = spawnSync(python, [path.join(here, 'gpt2_export.py'), cache], { stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(
      "gpt2_small: bench/gpt2_export.py failed: it needs Debian's python3-torch (apt-get install python3-torch)",
    );
    process.exit(1);
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const maxDiff = (a, b) => (b ? a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0) : NaN);
const V = 50257;

// Each contender: { forward() → logits, generate(prompt, n) → tokens/s, stats(), dispose() }.
async function prepareOurs() {
  await attn.init({ threads });
  if (attn.threadCount() !== threads)
    throw new Error(`init({ threads: ${threads} }) runs ${attn.threadCount()}`);
  const config = JSON.parse(readFileSync(path.join(cache, 'config.json'), 'utf8'));
  const t0 = performance.now();
  const model = await attn.loadPretrained({
    config,
    weights: await openAsBlob(path.join(cache, 'model.safetensors')),
  });
  const loadMs = performance.now() - t0;
  const heapAfterLoad = attn.memoryStats().heapBytes;
  return {
    forward: async (ids) => model.forward([ids], { attention: false }).logits.data,
    async generate(prompt, n) {
      const g0 = performance.now();
      model.generate([prompt], { maxNewTokens: n });
      return n / ((performance.now() - g0) / 1000);
    },
    stats: () => ({
      loadMs,
      heapAfterLoad,
      heapAfterRuns: attn.memoryStats().heapBytes,
      weightBytes: model.weightBytes,
      variant: attn.kernelVariant(),
    }),
    dispose: () => model.dispose(),
  };
}

async function prepareOrt() {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  ort.env.wasm.wasmPaths = path.join(root, 'node_modules/onnxruntime-web/dist') + path.sep;
  const session = await captureMemory('ort', () =>
    ort.InferenceSession.create(path.join(cache, 'gpt2.onnx'), {
      executionProviders: ['wasm'],
      graphOptimizationLevel: 'all',
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
    }),
  );
  const forward = async (tokens) => {
    const input = new ort.Tensor('int64', BigInt64Array.from(tokens, BigInt), [1, tokens.length]);
    const result = await session.run({ input_ids: input });
    const logits = result.logits.data;
    for (const t of Object.values(result)) t.dispose?.();
    return logits;
  };
  return {
    forward,
    async generate(prompt, n) {
      // no cache in the exported graph: every token re-runs the prefix
      const tokens = [...prompt];
      const g0 = performance.now();
      for (let i = 0; i < n; i++) {
        const last = (await forward(tokens)).subarray((tokens.length - 1) * V);
        tokens.push(last.indexOf(Math.max(...last)));
      }
      return n / ((performance.now() - g0) / 1000);
    },
    stats: () => ({ heap: heapBytes('ort'), version: ort.env.versions?.web ?? '?' }),
    dispose: () => session.release(),
  };
}

// Both runtimes on the same ids, their runs interleaved (ours, then onnxruntime-web, then ours …) so
// that the shared machine's slow and fast moments fall on both alike; two warm-up runs each.
async function measure(ours, ortr, ids, expected) {
  const out = { ours: { ms: [] }, ort: { ms: [] } };
  out.ours.diff = maxDiff((await ours.forward(ids)).subarray((T - 1) * V), expected);
  out.ort.diff = maxDiff((await ortr.forward(ids)).subarray((T - 1) * V), expected);
  await ours.forward(ids);
  await ortr.forward(ids);
  for (let i = 0; i < runs; i++) {
    for (const [who, c] of [
      ['ours', ours],
      ['ort', ortr],
    ]) {
      const t0 = performance.now();
      await c.forward(ids);
      out[who].ms.push(performance.now() - t0);
    }
  }
  out.ours.ms = median(out.ours.ms);
  out.ort.ms = median(out.ort.ms);
  out.ours.tokensPerSecond = await ours.generate(ids.slice(0, 16), quick ? 8 : 32);
  out.ort.tokensPerSecond = await ortr.generate(ids.slice(0, 16), quick ? 4 : 8);
  return { ours: { ...out.ours, ...ours.stats() }, ort: { ...out.ort, ...ortr.stats() } };
}

// Multiply-add FLOPs of one GPT-2 forward of T tokens (both engines compute all of them): per layer
// the q, k, v, o projections (4·e²), the MLP (2·e·inner), Q·Kᵀ and weights·V over full T×T rows
// (2·T·e each); then the tied output projection (e·V).
function forwardFlops(config, tokens) {
  const e = config.n_embd,
    inner = config.n_inner ?? 4 * e,
    L = config.n_layer;
  const gemm = 2 * tokens * (L * (4 * e * e + 2 * e * inner) + e * config.vocab_size);
  const attention = L * 2 * 2 * tokens * tokens * e;
  return { gemm, attention, total: gemm + attention };
}

function report(ours, ortr, fileBytes, flops, peak) {
  const ratio = ortr.ms / ours.ms;
  const gf = (ms) => (flops.total / ms / 1e6).toFixed(1);
  const floorMs = flops.total / (peak.gflops * 1e6);
  const lines = [
    `GPT-2-small-shaped forward, T = ${T}, batch 1, ${threads === 1 ? 'one thread' : `${threads} threads (both)`} (Node ${process.versions.node}; ours: ${ours.variant}; onnxruntime-web ${ortr.version} wasm EP)`,
    '',
    '| | ours | onnxruntime-web |',
    '|---|---|---|',
    `| forward T = ${T}, median of ${runs} (interleaved) | **${ours.ms.toFixed(0)} ms** | ${ortr.ms.toFixed(0)} ms |`,
    `| ratio (onnxruntime-web / ours; target ≥ 1.5×) | **${ratio.toFixed(2)}×** | |`,
    `| max abs logit diff vs torch (last position) | ${ours.diff.toExponential(1)} | ${ortr.diff.toExponential(1)} |`,
    `| generation, greedy, 16-token prompt | ${ours.tokensPerSecond.toFixed(1)} tokens/s (KV cache) | ${ortr.tokensPerSecond.toFixed(1)} tokens/s (no cache in the graph: whole prefix per token) |`,
    `| wasm heap after load / after the runs | ${(ours.heapAfterLoad / MB).toFixed(0)} / ${(ours.heapAfterRuns / MB).toFixed(0)} MB | ${ortr.heap ? (ortr.heap / MB).toFixed(0) + ' MB' : '?'} |`,
    `| weights in the heap / safetensors file | ${(ours.weightBytes / MB).toFixed(0)} / ${(fileBytes / MB).toFixed(0)} MB (heap after the runs = ${(ours.heapAfterRuns / fileBytes).toFixed(2)} × the file) | |`,
    `| load (Blob, tensor by tensor) | ${(ours.loadMs / 1000).toFixed(1)} s | |`,
    `| multiply-add work of the forward | ${(flops.total / 1e9).toFixed(1)} GFLOP (GEMMs ${(flops.gemm / 1e9).toFixed(1)}, attention ${(flops.attention / 1e9).toFixed(1)}) | the same graph |`,
    `| achieved | ${gf(ours.ms)} GFLOP/s (${((100 * floorMs) / ours.ms).toFixed(0)}% of the peak) | ${gf(ortr.ms)} GFLOP/s |`,
    `| this machine's f32x4 FMA peak in V8 (bench/fma_peak.mjs, ${peak.kind}) | ${peak.gflops.toFixed(1)} GFLOP/s | |`,
    `| forward at that peak (nothing but the FLOPs) → highest reachable ratio | ${floorMs.toFixed(0)} ms → **${(ortr.ms / floorMs).toFixed(2)}×** | |`,
  ];
  return { text: lines.join('\n'), ratio };
}

function updateReadme(table) {
  const file = path.join(here, 'README.md');
  const heading = '## Pretrained GPT-2-small forward';
  const body = `${heading}\n\n\`npm run bench:gpt2\` (\`node bench/gpt2_small.mjs\`; torch exports the ONNX graph once into\n\`bench/.cache/\`). Measured ${new Date().toISOString().slice(0, 10)} on the project's machine (2 shared cores: ± ~10%).\n\n${table}\n\n`;
  const text = readFileSync(file, 'utf8');
  const at = text.indexOf(heading);
  const end = at < 0 ? -1 : text.indexOf('\n## ', at + heading.length);
  const next =
    at < 0 ? `${text.trimEnd()}\n\n${body}` : text.slice(0, at) + body + (end < 0 ? '' : text.slice(end + 1));
  writeFileSync(file, next);
}

ensureCheckpoint();
const expectedJson = JSON.parse(readFileSync(path.join(cache, 'expected.json'), 'utf8'));
const ids = expectedJson.ids[0].slice(0, T);
// expected.json holds the last logits at T = 128; --quick checks position T − 1 against a fresh ORT run only.
const expected = Float32Array.from(expectedJson.last_logits);
const oursC = await prepareOurs();
const ortC = await prepareOrt();
const { ours, ort: ortr } = await measure(oursC, ortC, ids, quick ? null : expected);
oursC.dispose();
await ortC.dispose();
const config = JSON.parse(readFileSync(path.join(cache, 'config.json'), 'utf8'));
const kind = ours.variant === 'relaxed-simd' ? 'relaxed' : 'simd128';
const peak = { kind, ...(await measurePeak(kind)) };
const { text, ratio } = report(
  ours,
  ortr,
  statSync(path.join(cache, 'model.safetensors')).size,
  forwardFlops(config, T),
  peak,
);
console.log(text);
if (!quick && (!(ours.diff <= kLogitTol) || !(ortr.diff <= kLogitTol))) {
  console.error(`gpt2_small: the runtimes disagree with torch (tolerance ${kLogitTol})`);
  process.exit(1);
}
if (!quick && threads === 1) updateReadme(text);
console.log(ratio >= 1.5 ? 'target met (≥ 1.5×)' : 'target NOT met (< 1.5×)');
