// generate / generateStream with a float16 KV cache (kvCache: 'f16') and the prompt's prefill in
// chunks: the options refused by name; float16 caches give the float32 caches' greedy ids on the tiny
// fixtures (llama-like, a sliding window, shared K/V, and the hybrids whose convolution and DeltaNet
// layers keep no KV cache; the probabilities are compared step by step natively,
// tests/cpp/test_pretrained_kv_f16.cpp); chunked prefills give the one-chunk ids, steered too; the
// core's cache bytes; onProgress counts the prompt's tokens; a signal stops between chunks and leaves
// the model usable; every prompt position through float16 caches against llama.cpp's F16 cache.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, loadPretrained } from '../../src/js/index.js';
import { fromCore } from '../../src/js/tensor.js';
import { CASES, EXPECTED_FILE, GGUF_DIR } from '../golden/gguf-cases.mjs';
import { load, IDS } from './pretrained-files.mjs';

await init();

const greedy = (m, ids, o = {}) => Array.from(m.generate(ids, { maxNewTokens: 8, stop: [], ...o }).data);

describe('generate with a float16 KV cache and a chunked prefill', () => {
  it('kvCache, prefillChunk, onProgress and signal are checked; kvCache defaults to f32', async () => {
    const m = await load('llama-tiny');
    for (const [o, re] of [
      [{ kvCache: 'bf16' }, /kvCache must be 'f32' or 'f16', got "bf16"/],
      [{ kvCache: 'F16' }, /kvCache.*"F16"/],
      [{ kvCache: 16 }, /kvCache.*16/],
      [{ prefillChunk: 0 }, /prefillChunk/],
      [{ prefillChunk: 2.5 }, /prefillChunk/],
      [{ onProgress: 'yes' }, /onProgress/],
      [{ signal: {} }, /signal must be an AbortSignal/],
    ]) {
      assert.throws(
        () => m.generate([IDS[0]], { maxNewTokens: 2, ...o }),
        (e) => e.code === 'INVALID_ARGUMENT' && re.test(e.message),
        JSON.stringify(o),
      );
      await assert.rejects(
        m.generateStream(IDS[0], { maxNewTokens: 2, ...o }).next(),
        (e) => e.code === 'INVALID_ARGUMENT' && re.test(e.message),
      );
    }
    assert.deepEqual(greedy(m, [IDS[0]]), greedy(m, [IDS[0]], { kvCache: 'f32' }));
    m.dispose();
  });

  it('float16 caches give the float32 caches’ greedy ids; chunked prefills the one-chunk ids', async () => {
    for (const name of ['llama-tiny', 'qwen2-sliding-tiny', 'gemma4-tiny', 'lfm2-tiny', 'qwen3_5-tiny']) {
      const m = await load(name);
      const want = greedy(m, IDS, { kvCache: 'f32' });
      assert.deepEqual(greedy(m, IDS, { kvCache: 'f16' }), want, `${name} f16`);
      for (const prefillChunk of [1, 3])
        assert.deepEqual(greedy(m, IDS, { prefillChunk }), want, `${name} chunks of ${prefillChunk}`);
      assert.deepEqual(greedy(m, IDS, { kvCache: 'f16', prefillChunk: 3 }), want, `${name} f16, chunks`);
      m.dispose();
    }
  });

  it('the core counts half the bytes in float16 caches: every attention layer that keeps its K/V', async () => {
    for (const name of ['llama-tiny', 'gemma4-tiny', 'lfm2-tiny', 'qwen3_5-tiny']) {
      const m = await load(name);
      // Independently of the core: 2 (K and V) · kvHeads · headDim values per token of each layer
      // whose keys and values are its own (conv and DeltaNet layers keep a state, not a KV cache).
      let values = 0;
      m.layers.forEach((s, l) => {
        if (s.kind === 'attention' && s.kvFrom === l) values += 2 * s.kvHeads * s.headDim;
      });
      assert.ok(values > 0, name);
      const handle = m._live();
      const f32 = handle.createCaches(10, 2, false);
      const f16 = handle.createCaches(10, 2, true);
      handle.dropCaches();
      assert.equal(f32.code, 0, f32.message);
      assert.equal(f16.code, 0, f16.message);
      assert.equal(f32.kvBytes, values * 10 * 2 * 4, name);
      assert.equal(f16.kvBytes, values * 10 * 2 * 2, name);
      m.dispose();
    }
  });

  it('steering edits land on the same positions whatever the chunks (every row, or the last one)', async () => {
    const m = await load('qwen3-tiny');
    const value = new Float32Array(m.hiddenSize).map((_, i) => 10 * Math.sin(i));
    const plain = greedy(m, [IDS[0]]);
    // Position 6, the prompt's last, is row 0 of the fourth chunk of 2 and row 0 of the third of 3:
    // an edit placed by chunk row instead of position would miss it and leave the plain ids.
    for (const positions of [undefined, [6]]) {
      const edits = [{ hook: 'blocks.1.hook_resid_pre', op: 'add', value, ...(positions && { positions }) }];
      const want = greedy(m, [IDS[0]], { edits });
      assert.notDeepEqual(want, plain, `the edit at ${positions} changes the continuation`);
      for (const prefillChunk of [2, 3])
        assert.deepEqual(greedy(m, [IDS[0]], { edits, prefillChunk, kvCache: 'f16' }), want, `${positions}`);
    }
    m.dispose();
  });

  it('onProgress(done, total) after each chunk of the prompt; generateStream yields between them', async () => {
    const m = await load('llama-tiny');
    const calls = [];
    greedy(m, IDS, { prefillChunk: 3, onProgress: (done, total) => calls.push([done, total]) });
    assert.deepEqual(calls, [
      [3, 7],
      [6, 7],
      [7, 7],
    ]);
    calls.length = 0;
    const ids = [];
    for await (const { id } of m.generateStream(IDS[0], {
      maxNewTokens: 3,
      stop: [],
      prefillChunk: 4,
      kvCache: 'f16',
      onProgress: (done, total) => calls.push([done, total, ids.length]),
    }))
      ids.push(id);
    assert.deepEqual(calls, [
      [4, 7, 0],
      [7, 7, 0],
    ]);
    assert.deepEqual(ids, greedy(m, [IDS[0]]).slice(0, 3));
    m.dispose();
  });

  it('a signal stops the prefill between chunks (generate: ABORTED; a stream ends); the model goes on', async () => {
    const m = await load('llama-tiny');
    const want = greedy(m, IDS);
    const controller = new AbortController();
    const seen = [];
    const stopAfterFirst = (done) => {
      seen.push(done);
      controller.abort();
    };
    assert.throws(
      () => greedy(m, IDS, { prefillChunk: 2, signal: controller.signal, onProgress: stopAfterFirst }),
      (e) => e.code === 'ABORTED',
    );
    assert.deepEqual(seen, [2]);
    assert.throws(
      () => greedy(m, IDS, { signal: controller.signal }),
      (e) => e.code === 'ABORTED',
    );
    const later = new AbortController();
    const streamed = [];
    seen.length = 0;
    for await (const { id } of m.generateStream(IDS[0], {
      maxNewTokens: 4,
      prefillChunk: 2,
      signal: later.signal,
      onProgress: (done) => {
        seen.push(done);
        if (done === 4) later.abort();
      },
    }))
      streamed.push(id);
    assert.deepEqual(seen, [2, 4]);
    assert.deepEqual(streamed, []);
    assert.deepEqual(greedy(m, IDS, { kvCache: 'f16' }), want, 'the caches of the stopped runs are gone');
    m.dispose();
  });
});

// llama.cpp's own probabilities (tests/golden/gguf/llamacpp-expected.json, written by
// tests/golden/check_with_llamacpp.mjs) come from its default F16 KV cache: the same float16
// rounding of the rotated keys and of the values. Its products also round q and the softmax's
// weights to float16 (ggml's F16 mat-mul), which ours keep in float32, so neither of our cache types
// reproduces it to float noise: measured max |Δp| over every prompt position, float16 cache vs
// float32 cache, 4.3e-4 vs 8.5e-4 (llama-tiny) and 4.6e-4 vs 3.4e-4 (qwen2-tiny). Both are held to
// the case's own tolerance (gguf-cases.mjs), the bound gguf-llamacpp.test.mjs holds the forward to.
describe('the float16 cache against llama.cpp’s default (F16) KV cache', () => {
  const expected = JSON.parse(readFileSync(EXPECTED_FILE, 'utf8'));
  const worstDp = (logits, top) =>
    Math.max(
      ...top.map((row, t) => {
        const V = logits.shape[2];
        const x = logits.data.subarray(t * V, (t + 1) * V);
        let max = -Infinity;
        for (const v of x) max = Math.max(max, v);
        let sum = 0;
        for (const v of x) sum += Math.exp(v - max);
        return Math.max(...row.map(([id, q]) => Math.abs(Math.exp(x[id] - max) / sum - q)));
      }),
    );
  for (const c of CASES.filter((x) => ['llama-tiny.f32.gguf', 'qwen2-tiny.f32.gguf'].includes(x.file))) {
    it(`${c.file}: every prompt position through float16 caches within ${c.tolerance} of llama.cpp`, async () => {
      const want = expected.cases[c.file];
      assert.equal(expected.kvCache, 'F16 (llama.cpp default)');
      const m = await loadPretrained({ gguf: readFileSync(new URL(c.file, GGUF_DIR)) });
      const handle = m._live();
      const T = want.prompt.length;
      const worst = {};
      try {
        for (const half of [false, true]) {
          assert.equal(handle.createCaches(T, 1, half).code, 0);
          const out = handle.forwardCached(Int32Array.from(want.prompt), 1, T, false);
          assert.equal(out.code, 0, out.message);
          worst[half ? 'f16' : 'f32'] = worstDp(fromCore(out.logits), want.top);
          handle.dropCaches();
        }
      } finally {
        m.dispose();
      }
      for (const [type, dp] of Object.entries(worst))
        assert.ok(dp <= c.tolerance, `${type} cache: max |Δp| ${dp} against llama.cpp's`);
      assert.notEqual(worst.f16, worst.f32, 'the float16 cache rounds something');
    });
  }
});
