// model.prefill with maps on demand (src/model/map_session.h, src/js/pretrained/prefill.js): the
// overview, tiles and top-k of a chunked prefill against the exact (T, T) weights of
// forward(ids, { attention: true }) on the tiny fixtures — GQA (llama), sliding windows (qwen2-sliding,
// gemma2 with its soft-cap), no RoPE (gpt2), Gemma 4's per-layer head sizes and shared keys — at tile
// edges and the causal and window boundaries; the heap's peak during a T = 8,192 prefill; refusals.
import test from 'node:test';
import assert from 'node:assert/strict';
import {
  init,
  AttentionError,
  memoryStats,
  resetMemoryPeak,
  setThreadCount,
  threadCount,
} from '../../src/js/index.js';
import { json, load } from './pretrained-files.mjs';

await init();

// The map state holds q and k in float16 (2^-11 relative): a score of magnitude |s| moves by about
// |s|·2^-10, a weight by w·that. The tiny fixtures' scores stay below ~4.
const WEIGHT_TOL = 5e-3;

// ids of length t in [0, vocab) from a fixed linear congruence (no clock, no Math.random)
function idsOf(t, vocab) {
  const ids = new Int32Array(t);
  let x = 12345;
  for (let i = 0; i < t; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    ids[i] = x % vocab;
  }
  return ids;
}

// exact (H, T, T) weights of each layer, from the forward
function exactMaps(model, ids) {
  const r = model.forward(ids, { attention: true });
  return r.attention.map((a) => a && { data: a.data, h: a.shape[1], t: a.shape[2] });
}

// The last row's logits of the chunked prefill against the forward without caches: float32 both,
// summed in another order (the pretrained fixtures' logit bound).
const LOGIT_TOL = 1e-4;

function assertClose(actual, expected, what, tol = WEIGHT_TOL) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  let worst = 0;
  for (let i = 0; i < actual.length; i++) {
    // a masked weight is 0 in both, exactly
    if (expected[i] === 0) assert.equal(actual[i], 0, `${what}: [${i}] masked`);
    worst = Math.max(worst, Math.abs(actual[i] - expected[i]));
  }
  assert.ok(worst <= tol, `${what}: max |Δ| ${worst} > ${tol}`);
}

// tile of the exact (T, T) map of head h
function exactTile(m, h, [r0, r1], [c0, c1]) {
  const out = new Float32Array((r1 - r0) * (c1 - c0));
  for (let i = r0; i < r1; i++)
    for (let j = c0; j < c1; j++) out[(i - r0) * (c1 - c0) + (j - c0)] = m.data[(h * m.t + i) * m.t + j];
  return out;
}

// Tiles of every map layer and head at the edges: first/last rows, a diagonal window, the window's
// boundary, and a top-k of the last and a middle row.
async function checkFixture(name, t, config = json(name, 'config.json')) {
  const model = await load(name, config);
  try {
    const ids = idsOf(t, model.vocabSize);
    const exact = exactMaps(model, ids);
    const progress = [];
    const session = await model.prefill(ids, {
      maps: { layers: true },
      prefillChunk: 7,
      onProgress: (done, total) => progress.push([done, total]),
    });
    try {
      assert.equal(progress.length, Math.ceil(t / 7));
      assert.deepEqual(progress.at(-1), [t, t]);
      assert.equal(session.length, t);
      const logits = model.forward(ids, { attention: false }).logits;
      const last = logits.data.subarray((t - 1) * model.vocabSize, t * model.vocabSize);
      assertClose(session.logits, last, `${name} last logits`, LOGIT_TOL);
      for (const l of session.layers) {
        for (let h = 0; h < exact[l].h; h++) {
          const windows = [
            [
              [0, t],
              [0, t],
            ],
            [
              [0, 1],
              [0, 3],
            ],
            [
              [t - 5, t],
              [t - 9, t],
            ],
            [
              [3, 11],
              [2, 10],
            ],
            [
              [t - 1, t],
              [0, t],
            ],
          ];
          for (const [rows, cols] of windows)
            assertClose(
              session.tile({ layer: l, head: h, rows, cols }).data,
              exactTile(exact[l], h, rows, cols),
              `${name} layer ${l} head ${h} tile ${rows}×${cols}`,
            );
          for (const query of [t - 1, t >> 1]) {
            const row = exactTile(exact[l], h, [query, query + 1], [0, t]);
            const { indices, weights } = session.topK({ layer: l, head: h, query, k: 4 });
            const order = [...row.keys()].sort((a, b) => row[b] - row[a] || a - b);
            for (let i = 0; i < 4; i++) assert.ok(Math.abs(weights[i] - row[indices[i]]) <= WEIGHT_TOL);
            // the same keys unless two exact weights lie within the tolerance
            for (let i = 0; i < 4; i++)
              assert.ok(Math.abs(row[indices[i]] - row[order[i]]) <= 2 * WEIGHT_TOL, `${name} topK ${i}`);
          }
        }
      }
    } finally {
      session.dispose();
    }
  } finally {
    model.dispose();
  }
}

test('tiles and top-k equal the exact weights: GQA, windows, soft-caps, no RoPE, Gemma 4', async () => {
  await checkFixture('llama-tiny', 40);
  await checkFixture('qwen2-sliding-tiny', 30);
  await checkFixture('gemma2-tiny', 30);
  await checkFixture('gpt2-tiny', 20);
  await checkFixture('gemma4-tiny', 30);
});

test('mapStateBytes states the map state before the run: shared keys once (Gemma 4)', async () => {
  const model = await load('gemma4-tiny');
  try {
    // layers 0, 1 own their keys (head sizes 8, 16; 2 key heads); 2 and 3 read 0's and 1's
    const perToken = 4 * 8 + 4 * 16 + 4 * 8 + 4 * 16 + 2 * 8 + 2 * 16;
    assert.equal(model.mapStateBytes(30, { layers: true }), 30 * perToken * 2);
    const session = await model.prefill(idsOf(30, model.vocabSize), { maps: { layers: [2] } });
    assert.equal(session.mapBytes, model.mapStateBytes(30, { layers: [2] }));
    assert.equal(session.mapBytes, 30 * (4 * 8 + 2 * 8) * 2);
    session.dispose();
    assert.throws(() => model.mapStateBytes(0, { layers: [0] }), /length must be an integer >= 1/);
  } finally {
    model.dispose();
  }
});

// the max or mean of every block of the exact map, blocks cut at ⌊a·T/n⌋
function pooled(m, h, n, max) {
  const t = m.t;
  const out = new Float64Array(n * n);
  const edge = (a) => Math.floor((a * t) / n);
  for (let a = 0; a < n; a++)
    for (let b = 0; b < n; b++) {
      let acc = max ? 0 : 0;
      for (let i = edge(a); i < edge(a + 1); i++)
        for (let j = edge(b); j < edge(b + 1); j++) {
          const w = m.data[(h * t + i) * t + j];
          acc = max ? Math.max(acc, w) : acc + w;
        }
      out[a * n + b] = max ? acc : acc / ((edge(a + 1) - edge(a)) * (edge(b + 1) - edge(b)));
    }
  return out;
}

test('the overview (max and mean) pools the exact map in blocks cut at ⌊a·T/n⌋, n = 512', async () => {
  const t = 700; // not a multiple of 512: blocks of 1 and 2 rows
  const config = { ...json('llama-tiny', 'config.json'), max_position_embeddings: 1024 };
  const model = await load('llama-tiny', config);
  try {
    const ids = idsOf(t, model.vocabSize);
    const exact = exactMaps(model, ids);
    const session = await model.prefill(ids, { maps: { layers: [1] } });
    try {
      for (const pool of ['max', 'mean']) {
        const map = session.overview({ layer: 1, head: 2, pool });
        assert.deepEqual(map.shape, [512, 512]);
        assertClose(map.data, pooled(exact[1], 2, 512, pool === 'max'), `overview ${pool}`);
      }
      // cell rows split over the threads: the same bits on one thread
      const threads = threadCount();
      const split = session.overview({ layer: 1, head: 0, pool: 'mean' });
      setThreadCount(1);
      const single = session.overview({ layer: 1, head: 0, pool: 'mean' });
      setThreadCount(threads);
      assert.deepEqual(split.data, single.data);
      const both = session.overview({ layer: 1, heads: [0, 3], pool: 'mean' });
      assert.deepEqual(both.shape, [2, 512, 512]);
      assertClose(both.data.subarray(512 * 512), pooled(exact[1], 3, 512, false), 'overview of heads[1]');
    } finally {
      session.dispose();
    }
  } finally {
    model.dispose();
  }
});

test('a T = 8,192 prefill with maps: the heap peak stays within caches + map state + one chunk', async () => {
  const t = 8192;
  const config = { ...json('llama-tiny', 'config.json'), max_position_embeddings: t };
  const model = await load('llama-tiny', config);
  try {
    const ids = idsOf(t, model.vocabSize);
    resetMemoryPeak();
    const base = memoryStats().bytesInUse;
    const session = await model.prefill(ids, { maps: { layers: true } });
    try {
      const { layers, kvHeads, headDim, heads } = { layers: 2, kvHeads: 2, headDim: 8, heads: 4 };
      const caches = 2 * layers * t * kvHeads * headDim * 4; // float32 K and V
      const mapState = layers * t * (heads + kvHeads) * headDim * 2; // float16 q and k
      assert.equal(session.mapBytes, mapState);
      assert.equal(model.mapStateBytes(t, { layers: true }), mapState, 'stated before the run');
      // one chunk's forward (256 rows of this model: the stream's and the MLP's buffers, the captured
      // q and k, the attention's tiles) stays under 1 MiB; the attention engine keeps a scratch block
      // of up to 256 KiB per thread for the module's life (src/core/attention_engine.h)
      const chunk = 2 ** 20 + 2 ** 18 * threadCount();
      const peak = memoryStats().peakBytesInUse - base;
      assert.ok(peak <= caches + mapState + chunk, `peak ${peak} > ${caches + mapState + chunk}`);
      assert.ok(peak < (t * t * 4) / 32, `peak ${peak} is not far below one (T, T) float32 map`);
      resetMemoryPeak();
      const before = memoryStats().bytesInUse;
      // a tile past 2^22 weights is refused before anything is allocated
      assert.throws(
        () => session.tile({ layer: 0, head: 0, rows: [0, 4096], cols: [0, 1025] }),
        (e) => e instanceof AttentionError && e.code === 'TOO_LARGE' && /smaller window/.test(e.message),
      );
      assert.ok(memoryStats().peakBytesInUse - before < 4096, 'only the message was allocated');
      const map = session.overview({ layer: 0, head: 1, pool: 'max' });
      assert.deepEqual(map.shape, [512, 512]);
      // an overview holds its cells (a double and a float each), a block of scores (at most 2^21
      // floats, with its widened rows) and each position's cell
      const overviewPeak = memoryStats().peakBytesInUse - before;
      assert.ok(
        overviewPeak <= 12 * 512 * 512 + 4 * 2 ** 21 + 8 * t + 2 ** 16,
        `overview peak ${overviewPeak}`,
      );
      // the caches went with the last chunk: what dispose frees is the map state (and the logits)
      const held = memoryStats().bytesInUse;
      session.dispose();
      const freed = held - memoryStats().bytesInUse;
      assert.ok(freed >= mapState && freed <= mapState + 4096, `the session held ${freed}`);
    } finally {
      session.dispose();
    }
  } finally {
    model.dispose();
  }
});

// an AttentionError of `code` whose message matches `pattern`
function refused(f, code, pattern) {
  assert.throws(f, (e) => e instanceof AttentionError && e.code === code && pattern.test(e.message));
}

test('bad arguments are refused by name before anything is allocated; dispose ends the session', async () => {
  const model = await load('llama-tiny');
  try {
    const ids = idsOf(12, model.vocabSize);
    await assert.rejects(
      model.prefill(ids, { maps: { layers: [2] } }),
      /layer 2 is not in \[0, numLayers = 2\)/,
    );
    await assert.rejects(model.prefill(ids, { maps: { layers: [0, 0] } }), /lists layer 0 twice/);
    await assert.rejects(model.prefill(ids, { maps: { layer: [0] } }), (e) => e instanceof AttentionError);
    await assert.rejects(model.prefill(ids, { prefillChunk: 0 }), /prefillChunk must be an integer >= 1/);
    await assert.rejects(
      model.prefill([Array.from(ids), Array.from(ids)]),
      /prefill takes one sequence, got 2/,
    );
    await assert.rejects(model.prefill(idsOf(65, model.vocabSize)), (e) => e.code === 'TOO_LARGE');
    await assert.rejects(model.prefill([]), (e) => e.code === 'EMPTY_INPUT');
    const session = await model.prefill(ids, { maps: { layers: [1] } });
    resetMemoryPeak();
    const before = memoryStats().bytesInUse;
    const bad = [
      [() => session.tile({ layer: 0, head: 0, rows: [0, 1], cols: [0, 1] }), /layer 0 was not asked for/],
      [() => session.tile({ layer: 1, head: 4, rows: [0, 1], cols: [0, 1] }), /head 4 is not in \[0, 4\)/],
      [() => session.tile({ layer: 1, head: 0, rows: [0, 13], cols: [0, 1] }), /rows must be \[start, end\)/],
      [() => session.tile({ layer: 1, head: 0, rows: [3, 3], cols: [0, 1] }), /rows must be/],
      [() => session.tile({ layer: 1, head: 0, rows: [0, 1.5], cols: [0, 1] }), /rows must be/],
      [() => session.tile({ layer: 1, head: 0.5, rows: [0, 1], cols: [0, 1] }), /head 0.5/],
      [() => session.topK({ layer: 1, head: 0, query: 12, k: 1 }), /query must be an integer in \[0, 12\)/],
      [() => session.topK({ layer: 1, head: 0, query: 3, k: 0 }), /k must be an integer in \[1, 12\]/],
      [() => session.topK({ layer: 1, head: 0, query: 3, k: 2.5 }), /k must be an integer/],
      [() => session.overview({ layer: 1, head: 0, heads: [1] }), /one of head or heads/],
      [() => session.overview({ layer: 1, head: 0, pool: 'sum' }), /pool must be 'max' or 'mean'/],
      [() => session.overview({ layer: 1, heads: [0, 9] }), /head 9 is not in/],
    ];
    for (const [f, pattern] of bad) refused(f, 'INVALID_ARGUMENT', pattern);
    assert.equal(memoryStats().peakBytesInUse, before, 'no refusal allocated anything in the heap');
    session.dispose();
    refused(
      () => session.tile({ layer: 1, head: 0, rows: [0, 1], cols: [0, 1] }),
      'DISPOSED',
      /MapSession was disposed/,
    );
    session.dispose(); // twice is harmless
  } finally {
    model.dispose();
  }
});

test('signal aborts between chunks (ABORTED, nothing left behind); onProgress counts the chunks', async () => {
  const model = await load('llama-tiny');
  try {
    const ids = idsOf(40, model.vocabSize);
    const live = memoryStats().liveHandles;
    const stop = new AbortController();
    const seen = [];
    const run = model.prefill(ids, {
      maps: { layers: [0] },
      prefillChunk: 16,
      signal: stop.signal,
      onProgress: (done) => {
        seen.push(done);
        if (done === 16) stop.abort();
      },
    });
    await assert.rejects(run, (e) => e instanceof AttentionError && e.code === 'ABORTED');
    assert.deepEqual(seen, [16]);
    assert.equal(memoryStats().liveHandles, live, 'the aborted session was disposed');
    await assert.rejects(model.prefill(ids, { signal: stop.signal }), (e) => e.code === 'ABORTED');
    // without maps a prefill still gives the last row's logits
    const plain = await model.prefill(ids, { prefillChunk: 16 });
    assert.deepEqual(plain.layers, []);
    assert.equal(plain.mapBytes, 0);
    assert.equal(plain.logits.length, model.vocabSize);
    plain.dispose();
  } finally {
    model.dispose();
  }
});

test('short-convolution (LFM2) and DeltaNet (Qwen3.5) layers are refused by name; layers: true skips them', async () => {
  for (const [name, kind] of [
    ['lfm2-tiny', /short convolution \(LFM2\)/],
    ['qwen3_5-tiny', /gated DeltaNet \(Qwen3.5\)/],
  ]) {
    const model = await load(name);
    try {
      const other = model.layers.findIndex((s) => s.kind !== 'attention');
      const ids = idsOf(10, model.vocabSize);
      await assert.rejects(model.prefill(ids, { maps: { layers: [other] } }), (e) => {
        assert.ok(e instanceof AttentionError && e.code === 'INVALID_ARGUMENT');
        assert.match(e.message, new RegExp(`layer ${other} is`));
        assert.match(e.message, kind);
        return true;
      });
      const session = await model.prefill(ids, { maps: { layers: true } });
      const attention = model.layers.flatMap((s, l) => (s.kind === 'attention' ? [l] : []));
      assert.deepEqual(session.layers, attention);
      const exact = exactMaps(model, ids);
      const l = attention[0];
      assertClose(
        session.tile({ layer: l, head: 1, rows: [0, 10], cols: [0, 10] }).data,
        exactTile(exact[l], 1, [0, 10], [0, 10]),
        `${name} layer ${l}`,
      );
      session.dispose();
    } finally {
      model.dispose();
    }
  }
});
