// Generation: sampling works on a 151 936-token vocabulary with no stack overflow, deterministically per
// seed; bad sampling options are refused; stop ids end a row; generateStream matches generate;
// decoding holds the same heap at every step (test_decode_allocations.cpp counts allocations).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { init, loadPretrained, memoryStats, GENERATE_PAD } from '../../src/js/index.js';
import { samplingOptions, tokenChooser } from '../../src/js/pretrained/sampling.js';
import { read, json, load, IDS } from './pretrained-files.mjs';

await init();

describe('generation: sampling on any vocabulary, stop ids', () => {
  const V = 151936;
  const row = new Float32Array(V).map((_, j) => Math.sin(j * 12.9898) * 4);

  it('sampling a 151 936-token row: in range, deterministic per seed, with and without topK/topP', () => {
    for (const o of [{}, { topK: 50 }, { topP: 0.9 }, { topK: 1000, topP: 0.5 }, { topK: V + 5 }]) {
      const a = tokenChooser(samplingOptions({ temperature: 0.8, seed: 7, ...o })),
        b = tokenChooser(samplingOptions({ temperature: 0.8, seed: 7, ...o }));
      const got = Array.from({ length: 20 }, () => a(row));
      assert.deepEqual(
        got,
        Array.from({ length: 20 }, () => b(row)),
        JSON.stringify(o),
      );
      for (const id of got) assert.ok(Number.isInteger(id) && id >= 0 && id < V);
    }
  });

  it('top-k 1 and a tiny top-p are the argmax; top-k keeps only the k best; ties go to the lower id', () => {
    let best = 0;
    row.forEach((v, j) => {
      if (v > row[best]) best = j;
    });
    for (const o of [{ topK: 1 }, { topP: 1e-9 }]) {
      const choose = tokenChooser(samplingOptions({ temperature: 1, seed: 3, ...o }));
      for (let i = 0; i < 5; i++) assert.equal(choose(row), best);
    }
    const sorted = Array.from(row.keys())
      .sort((x, y) => row[y] - row[x] || x - y)
      .slice(0, 5);
    const choose = tokenChooser(samplingOptions({ temperature: 2, seed: 1, topK: 5 }));
    for (let i = 0; i < 200; i++) assert.ok(sorted.includes(choose(row)));
    const flat = new Float32Array(10).fill(1);
    assert.equal(tokenChooser(samplingOptions({ temperature: 1, topK: 1 }))(flat), 0);
    assert.equal(tokenChooser(samplingOptions({ temperature: 1, topP: 0.05 }))(flat), 0);
  });

  it('sampled frequencies follow softmax(row / T) within the top-p nucleus', () => {
    const small = new Float32Array([2, 1, 0, -1, 3]),
      T = 1.5,
      p = 0.8;
    const w = Array.from(small, (v) => Math.exp(v / T)),
      z = w.reduce((x, y) => x + y);
    const order = [4, 0, 1, 2, 3]; // best first
    const kept = [];
    let mass = 0;
    for (const j of order) {
      if (mass >= p) break;
      kept.push(j);
      mass += w[j] / z;
    }
    const choose = tokenChooser(samplingOptions({ temperature: T, topP: p, seed: 11 }));
    const counts = new Map();
    const N = 20000;
    for (let i = 0; i < N; i++) {
      const j = choose(small);
      counts.set(j, (counts.get(j) ?? 0) + 1);
    }
    assert.deepEqual([...counts.keys()].sort(), [...kept].sort());
    const keptZ = kept.reduce((s, j) => s + w[j], 0);
    for (const j of kept) assert.ok(Math.abs(counts.get(j) / N - w[j] / keptZ) < 0.015, `id ${j}`);
  });

  it('bad sampling options are refused, never wrapped', async () => {
    const m = await load('llama-tiny');
    for (const [o, re] of [
      [{ seed: -1 }, /seed/],
      [{ seed: 2 ** 32 }, /seed/],
      [{ seed: 1.5 }, /seed/],
      [{ topP: 0 }, /topP/],
      [{ topP: 1.5 }, /topP/],
      [{ topK: -1 }, /topK/],
      [{ temperature: -1 }, /temperature/],
      [{ stop: [96] }, /stop/],
      [{ stop: 'x' }, /stop/],
    ]) {
      assert.throws(
        () => m.generate([[1, 2]], { maxNewTokens: 2, temperature: 1, ...o }),
        (e) => e.code === 'INVALID_ARGUMENT' && re.test(e.message),
      );
    }
    assert.equal(m.generate([[1, 2]], { maxNewTokens: 2 }).shape[1], 2);
    m.dispose();
  });

  it('stop ids: the row keeps its stop token, is padded after it, and generation ends when all rows stopped', async () => {
    const m = await load('llama-tiny');
    const raw = Array.from(m.generate([IDS[0]], { maxNewTokens: 12, stop: [] }).data);
    const stopAt = raw[3];
    const got = Array.from(m.generate([IDS[0]], { maxNewTokens: 12, stop: stopAt }).data);
    const end = raw.indexOf(stopAt);
    assert.deepEqual(
      got,
      raw.map((id, i) => (i <= end ? id : GENERATE_PAD)),
    );
    // Two rows: the one that does not stop keeps going; same seed, same ids.
    const both = m.generate([IDS[0], IDS[1]], { maxNewTokens: 12, stop: stopAt, temperature: 0.7, seed: 5 });
    assert.deepEqual(
      both.data,
      m.generate([IDS[0], IDS[1]], { maxNewTokens: 12, stop: stopAt, temperature: 0.7, seed: 5 }).data,
    );
    m.dispose();
    const withGen = await load('llama-tiny', undefined, { generationConfig: { eos_token_id: [stopAt, 94] } });
    assert.deepEqual(withGen.stopIds, [stopAt, 94]);
    withGen.dispose();
    // An id outside the vocabulary names no token: left out of stopIds, as transformers loads it.
    const outside = await load('llama-tiny', undefined, { generationConfig: { eos_token_id: [1000, 94] } });
    assert.deepEqual(outside.stopIds, [94]);
    outside.dispose();
    await assert.rejects(
      load('llama-tiny', undefined, { generationConfig: { eos_token_id: 1.5 } }),
      /eos_token_id/,
    );
  });

  it('generateStream yields the same ids as generate, with text, and ends on abort', async () => {
    const m = await loadPretrained({
      config: json('llama-tiny', 'config.json'),
      weights: read('llama-tiny', 'model.safetensors'),
      tokenizer: json('llama-tiny', 'tokenizer.json'),
    });
    const want = Array.from(m.generate([IDS[0]], { maxNewTokens: 8, stop: [] }).data);
    const got = [];
    for await (const { id, text } of m.generateStream(IDS[0], { maxNewTokens: 8, stop: [] })) {
      assert.equal(text, m.decode([id]));
      got.push(id);
    }
    assert.deepEqual(got, want);
    const controller = new AbortController();
    const some = [];
    for await (const { id } of m.generateStream(IDS[0], {
      maxNewTokens: 8,
      stop: [],
      signal: controller.signal,
    })) {
      some.push(id);
      if (some.length === 3) controller.abort();
    }
    assert.deepEqual(some, want.slice(0, 3));
    const stream = m.generateStream(IDS[0], { maxNewTokens: 8, stop: [] });
    await stream.next();
    assert.throws(() => m.generate([IDS[0]], { maxNewTokens: 2 }), /generateStream of this model is running/);
    await stream.return();
    assert.equal(m.generate([IDS[0]], { maxNewTokens: 2, stop: [] }).data[0], want[0]);
    m.dispose();
  });

  it('decoding holds the same wasm heap at every step; the end of a generation frees its buffers', async () => {
    const m = await loadPretrained({
      config: json('llama-tiny', 'config.json'),
      weights: read('llama-tiny', 'model.safetensors'),
    });
    // The first run grows the attention's scratch block, kept by design (core/attention_engine.h).
    const run = async () => {
      const used = [];
      for await (const _ of m.generateStream(IDS[0], { maxNewTokens: 12, stop: [] }))
        used.push(memoryStats().heapUsedBytes);
      return used;
    };
    await run();
    const before = memoryStats().heapUsedBytes;
    const used = await run();
    assert.equal(used.length, 12);
    assert.ok(used[0] > before, 'the caches are on the heap while the stream runs');
    assert.deepEqual(used, Array(12).fill(used[0]), 'bytes in use after each step');
    // What emmalloc counts as used includes its region headers (8 bytes each): freeing can leave the
    // free memory split differently, a few headers more or less.
    const REGION_HEADERS = 64;
    const after = memoryStats().heapUsedBytes;
    assert.ok(
      Math.abs(after - before) <= REGION_HEADERS,
      `the caches and step buffers freed: ${before} → ${after}`,
    );
    m.dispose();
  });
});
