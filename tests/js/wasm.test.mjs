// The built modules: SIMD128 instructions are really in the .wasm, the relaxed-SIMD build really
// uses f32x4.relaxed_madd (and nothing of clang 14's prototype encoding is left), init() picks the
// build the engine supports, and both binaries stay under the size targets.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync, constants } from 'node:zlib';
import { init, kernelVariant, relaxedSimdSupported } from '../../src/js/index.js';
import { maxAbsDiff } from './close.js';

const dist = (name) => fileURLToPath(new URL(`../../dist/${name}`, import.meta.url));
const WASM = dist('attention_core.wasm');
const RELAXED_WASM = dist('attention_core_relaxed.wasm');
const MJS = dist('attention_core.mjs');

/**
 * Size limits (docs/performance.md and README report the real numbers). Attention alone fit 150 KB / 60 KB; the gradients,
 * TinyTransformer, AdamW, the toy tasks and their bindings (training) add ~100 KB /
 * ~42 KB, so the limits rose to what training needs, with a little headroom. Today's attention
 * (positions, windows, ALiBi, grouped-query heads, RoPE, the KV cache) and pretrained
 * checkpoints (GPT-2 / Llama / Qwen2 models, their loader and bindings) add ~55 KB / ~25 KB
 * (the cold parts built -Os): 330 KB / 140 KB. GGUF's quantized weights (ggml's eleven block
 * formats, their dequantizers and the quantized GEMM, scalar and SIMD128) add ~18 KB / ~2 KB gzip:
 * 355 KB / 148 KB. The gradients through the pretrained families and TinyTransformer
 * (metric_gradients, the frozen attention backward and their bindings) add ~26 KB / ~10 KB gzip:
 * 395 KB / 163 KB. The int8 activation mode of quantized weights (the activations' quantization,
 * every type's unpacking and fused GEMV, scalar and SIMD128) adds ~25 KB / ~7 KB gzip: 440 KB / 178 KB.
 * The hook points (their names and checks, built -Os; the captures and edits at every point of both
 * models and inside the attention) with the weight-type table and LongRoPE add ~8 KB / ~3 KB gzip:
 * 448 KB / 182 KB; Granite's branch scale and Ministral 3's query temperature (forward, cache,
 * backward) ~1 KB / ~1 KB more: 450 KB / 184 KB. This round's block kinds — LFM2's short
 * convolution with its backward, Qwen3.5's gated DeltaNet (recurrence, chunked form, effective
 * attention) and output gate, Gemma 4's per-layer sizes, shared K/V and per-layer inputs — with the
 * fused exact-mode GEMV of every quantized type (SIMD128 and scalar) and the grouped decode products
 * add ~131 KB / ~32 KB gzip (measured 589 KB / 216 KB): 600 KB / 220 KB. Shrinking them (cold code
 * built -Os, as the hook names are) is follow-up work. The maps on demand (a prefill's float16 map
 * state, its tiles, overview and top-k, built -Os, and their bindings) with the heap peak counter
 * add ~18 KB / ~7 KB gzip (measured 607 KB / 223 KB): 615 KB / 227 KB. The float16 KV cache (its
 * narrowing/widening kernels and the tiled attention over float16 rows), the backward through gated
 * DeltaNet layers and the output gate, and the lookup tables read from outside the heap add ~36 KB /
 * ~14 KB gzip (measured 643 KB / 238 KB): 650 KB / 241 KB.
 */
const kWasmBytesTarget = 650_000;
const kWasmGzipBytesTarget = 241_000;
/**
 * The threaded builds (dist/threads/) carry Emscripten's pthreads runtime, thread-local
 * storage and the pool's bindings (+~24 KB / +~10 KB gzip over the single-thread builds): their own
 * limits, 360 KB / 150 KB, with GGUF's quantized weights (as above) 385 KB / 158 KB, and with the
 * gradients (as above) 425 KB / 173 KB, with the int8 mode (as above) 470 KB / 188 KB, and with
 * the hook points and the two families (as above) 480 KB / 194 KB, with this round's block kinds
 * and decode products (as above; measured 620 KB / 227 KB) 630 KB / 232 KB, with the maps on demand
 * and the peak counter (as above; measured 637 KB / 235 KB) 645 KB / 239 KB, with the float16 KV
 * cache, the DeltaNet backward and the outside tables (as above; measured 674 KB / 250 KB)
 * 682 KB / 253 KB.
 */
const kThreadedWasmBytesTarget = 682_000;
const kThreadedWasmGzipBytesTarget = 253_000;
const THREADED = ['attention_core_threads.wasm', 'attention_core_threads_relaxed.wasm'].map((f) =>
  dist(`threads/${f}`),
);

const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;

function count(bytes, pattern) {
  let n = 0;
  for (let i = 0; i + pattern.length <= bytes.length; i++)
    if (pattern.every((b, k) => bytes[i + k] === b)) n++;
  return n;
}

// Runs `code` (an ES module body importing the wrapper) in a child Node with the given flags.
function childNode(flags, code) {
  const wrapper = new URL('../../src/js/index.js', import.meta.url).href;
  const source = `import * as api from ${JSON.stringify(wrapper)};\n${code}`;
  return JSON.parse(
    execFileSync(process.execPath, [...flags, '--input-type=module', '-e', source], { encoding: 'utf8' }),
  );
}

describe('dist/attention_core.wasm', () => {
  it('contains SIMD128 instructions (wasm-dis … | grep -c f32x4 > 0)', (t) => {
    // grep -c exits 1 when it counts 0, so read its output rather than trusting the exit code.
    const n = Number(
      execFileSync('bash', ['-c', `wasm-dis '${WASM}' | grep -c f32x4 || true`], { encoding: 'utf8' }).trim(),
    );
    assert.ok(n > 0, `no f32x4 instruction in ${WASM}`);
    t.diagnostic(`f32x4 lines in wasm-dis output: ${n}`);
  });

  it('is the build init() loads unless the engine has relaxed SIMD', async () => {
    await init();
    assert.equal(kernelVariant(), relaxedSimdSupported() ? 'relaxed-simd' : 'simd128');
  });

  for (const file of [WASM, RELAXED_WASM]) {
    it(`${file.split('/').pop()}: size and gzip size (limits: < ${kWasmBytesTarget / 1000} KB, gzip < ${kWasmGzipBytesTarget / 1000} KB)`, (t) => {
      const wasm = readFileSync(file);
      const gzip = gzipSync(wasm, { level: constants.Z_BEST_COMPRESSION }).length;
      const mjs = readFileSync(MJS);
      const mjsGzip = gzipSync(mjs, { level: constants.Z_BEST_COMPRESSION }).length;
      t.diagnostic(
        `${file.split('/').pop()} ${wasm.length} bytes (${kib(wasm.length)}), gzip ${gzip} bytes ` +
          `(${kib(gzip)}); attention_core.mjs (shared glue) ${mjs.length} bytes (${kib(mjs.length)}), gzip ${mjsGzip} bytes (${kib(mjsGzip)})`,
      );
      assert.ok(
        wasm.length < kWasmBytesTarget,
        `.wasm is ${wasm.length} bytes, target < ${kWasmBytesTarget}`,
      );
      assert.ok(gzip < kWasmGzipBytesTarget, `gzip .wasm is ${gzip} bytes, target < ${kWasmGzipBytesTarget}`);
    });
  }
});

describe('dist/attention_core_relaxed.wasm (relaxed SIMD)', () => {
  it("uses f32x4.relaxed_madd and none of clang 14's prototype f32x4.fma opcodes", () => {
    const bytes = readFileSync(RELAXED_WASM);
    assert.ok(count(bytes, [0xfd, 0x85, 0x02]) >= 8, 'the 4×8 micro-kernel has at least 8 relaxed_madd');
    assert.equal(count(bytes, [0xfd, 0xaf, 0x01]), 0, 'prototype opcode left unpatched');
    assert.ok(
      WebAssembly.validate(readFileSync(WASM)),
      'the SIMD128 build validates everywhere SIMD128 does',
    );
  });

  it('has no glue of its own: it shares dist/attention_core.mjs', () => {
    assert.equal(existsSync(dist('attention_core_relaxed.mjs')), false);
  });

  it('validates exactly when relaxedSimdSupported() says so', () => {
    assert.equal(WebAssembly.validate(readFileSync(RELAXED_WASM)), relaxedSimdSupported());
  });

  it("is loaded by init() with --experimental-wasm-relaxed-simd, and gives the SIMD128 build's numbers", () => {
    // The same forward in both builds (child processes: each has its own module instance).
    const code = `await api.init({ variant: process.argv.at(-1) });
      const x = api.seededNormal([2, 40, 96], 3);
      const mha = new api.MultiHeadAttention({ embedDim: 96, numHeads: 6, seed: 5 });
      const y = mha.forward(x, null, null, { needWeights: false }).output.data;
      console.log(JSON.stringify({ supported: api.relaxedSimdSupported(), kernels: api.kernelVariant(), y: Array.from(y) }));`;
    const run = (variant) => {
      const source = code.replace('process.argv.at(-1)', JSON.stringify(variant));
      return childNode(['--experimental-wasm-relaxed-simd'], source);
    };
    const relaxed = run('auto');
    const plain = run('simd128');
    assert.equal(relaxed.supported, true);
    assert.equal(relaxed.kernels, 'relaxed-simd');
    assert.equal(plain.kernels, 'simd128');
    // Fused multiply-add rounds once instead of twice: the outputs agree to float32 rounding.
    const kTolerance = 1e-5;
    const worst = maxAbsDiff(relaxed.y, plain.y);
    assert.ok(worst <= kTolerance, `max |relaxed − simd128| = ${worst}`);
  });

  it('rejects an unknown variant, and a variant combined with an explicit build', async () => {
    const fresh = await import(
      new URL('../../src/js/index.js?instance=variant-errors', import.meta.url).href
    );
    const invalid = (e) => e instanceof fresh.AttentionError && e.code === 'INVALID_ARGUMENT';
    await assert.rejects(fresh.init({ variant: 'avx512' }), invalid);
    await assert.rejects(fresh.init({ variant: 'simd128', wasmUrl: WASM }), invalid);
    if (!fresh.relaxedSimdSupported()) await assert.rejects(fresh.init({ variant: 'relaxed-simd' }), invalid);
    await fresh.init({ variant: 'simd128' }); // a failed init may be retried
    assert.equal(fresh.kernelVariant(), 'simd128');
  });

  it('wasmBaseUrl: a folder holding both builds, the build still chosen by variant', async () => {
    const fresh = await import(new URL('../../src/js/index.js?instance=wasm-base-url', import.meta.url).href);
    const invalid = (e) =>
      e instanceof fresh.AttentionError && e.code === 'INVALID_ARGUMENT' && /wasmBaseUrl/.test(e.message);
    await assert.rejects(
      fresh.init({ wasmBaseUrl: new URL('../../dist/', import.meta.url), wasmUrl: WASM }),
      invalid,
    );
    await assert.rejects(fresh.init({ wasmBaseUrl: 'http://[bad' }), invalid);
    // No trailing slash: still the folder (dist/attention_core.wasm, not ./attention_core.wasm).
    await fresh.init({ wasmBaseUrl: new URL('../../dist', import.meta.url).href, variant: 'simd128' });
    assert.equal(fresh.kernelVariant(), 'simd128');
    const y = fresh.softmax(new fresh.Tensor(new Float32Array([0, Math.log(3)]), [2]));
    assert.ok(Math.abs(y.data[1] - 0.75) < 1e-6);
  });
});

describe('dist/threads/ (the threaded builds)', () => {
  for (const file of THREADED) {
    it(`${file.split('/').pop()}: size and gzip size (limits: < ${kThreadedWasmBytesTarget / 1000} KB, gzip < ${kThreadedWasmGzipBytesTarget / 1000} KB)`, (t) => {
      const wasm = readFileSync(file);
      const gzip = gzipSync(wasm, { level: constants.Z_BEST_COMPRESSION }).length;
      t.diagnostic(
        `${file.split('/').pop()} ${wasm.length} bytes (${kib(wasm.length)}), gzip ${gzip} bytes (${kib(gzip)})`,
      );
      assert.ok(
        wasm.length < kThreadedWasmBytesTarget,
        `.wasm is ${wasm.length} bytes, target < ${kThreadedWasmBytesTarget}`,
      );
      assert.ok(
        gzip < kThreadedWasmGzipBytesTarget,
        `gzip .wasm is ${gzip} bytes, target < ${kThreadedWasmGzipBytesTarget}`,
      );
    });
  }

  it('the relaxed one uses f32x4.relaxed_madd (no prototype opcode), the SIMD128 one validates everywhere', () => {
    const relaxed = readFileSync(THREADED[1]);
    assert.ok(count(relaxed, [0xfd, 0x85, 0x02]) >= 8);
    assert.equal(count(relaxed, [0xfd, 0xaf, 0x01]), 0);
    assert.ok(WebAssembly.validate(readFileSync(THREADED[0])));
  });

  it('each has its glue and worker script, and the worker scripts are read as CommonJS', () => {
    for (const name of ['attention_core_threads', 'attention_core_threads_relaxed']) {
      assert.ok(existsSync(dist(`threads/${name}.mjs`)), `${name}.mjs`);
      assert.ok(existsSync(dist(`threads/${name}.worker.js`)), `${name}.worker.js`);
    }
    assert.deepEqual(JSON.parse(readFileSync(dist('threads/package.json'), 'utf8')), { type: 'commonjs' });
  });
});
