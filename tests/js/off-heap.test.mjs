// Tables kept outside the wasm heap (loadPretrained's offHeap, src/js/pretrained/off-heap.js): an
// untied token embedding (llama-tiny) and Gemma 4's per-layer table (gemma4-tiny), from folders and
// GGUF files (F32 and Q8_0), give bit-identical logits, greedy ids and tool results to the same model
// with every tensor in the heap (offHeap: false, the independent path: the heap view read by the GEMM
// loader). weightBytes + offHeapBytes is the in-heap model's weightBytes and offHeapBytes the table's
// stored bytes as the file's header gives them; a tied model keeps everything in the heap; an id out
// of range is refused before any row is copied; the memory check counts the heap's tensors only; a
// non-finite value of an off-heap table is refused at load; dispose() drops the chunks.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, loadPretrained, AttentionError } from '../../src/js/index.js';
import { parseGGUF } from '../../src/js/formats/gguf.js';
import { TableChunks } from '../../src/js/pretrained/off-heap.js';
import { IDS, json, load, read } from './pretrained-files.mjs';

await init();

const GGUF_DIR = new URL('../golden/gguf/', import.meta.url);
const ggufBytes = (name) => readFileSync(new URL(name, GGUF_DIR));
const ids = IDS[0];

// The same checkpoint loaded twice: its lookup-only tables outside the heap, and every tensor in it.
async function both(loadOne) {
  return { outside: await loadOne({}), inside: await loadOne({ offHeap: false }) };
}
const folder = (name) => (extra) => load(name, json(name, 'config.json'), extra);
const gguf = (file) => (extra) => loadPretrained({ gguf: ggufBytes(file), ...extra });

// Bytes of the named tensors in the safetensors header of a fixture folder (the independent count).
function safetensorsBytes(name, tensors) {
  const file = read(name, 'model.safetensors');
  const length = Number(file.readBigUInt64LE(0));
  const header = JSON.parse(file.subarray(8, 8 + length).toString('utf8'));
  return tensors.reduce((n, t) => n + header[t].data_offsets[1] - header[t].data_offsets[0], 0);
}

// forward (every hidden state), greedy generation and a decode through the caches: the same bits.
function assertSameRuns(outside, inside, label) {
  const a = outside.forward([ids], { hiddenStates: true, attention: false });
  const b = inside.forward([ids], { hiddenStates: true, attention: false });
  assert.deepEqual(a.logits.data, b.logits.data, `${label}: logits`);
  a.hiddenStates.forEach((h, l) => assert.deepEqual(h.data, b.hiddenStates[l].data, `${label}: hidden ${l}`));
  const g = { maxNewTokens: 5, stop: [] };
  assert.deepEqual(outside.generate([ids], g).data, inside.generate([ids], g).data, `${label}: generate`);
  const two = { maxNewTokens: 3, stop: [] }; // a batch of two through the decode caches
  assert.deepEqual(outside.generate(IDS, two).data, inside.generate(IDS, two).data, `${label}: batch`);
}

function release(...models) {
  for (const m of models) m.dispose();
}

describe('tables outside the heap', () => {
  it('llama-tiny (untied): the embedding outside, the same bits as in the heap, saliency and patch too', async () => {
    const { outside, inside } = await both(folder('llama-tiny'));
    try {
      const embed = safetensorsBytes('llama-tiny', ['model.embed_tokens.weight']);
      assert.equal(outside.offHeapBytes, embed);
      assert.equal(inside.offHeapBytes, 0);
      assert.equal(outside.weightBytes + outside.offHeapBytes, inside.weightBytes);
      assertSameRuns(outside, inside, 'llama-tiny');
      const o = { token: 2, against: 7 };
      const [sa, sb] = [await outside.saliency(ids, o), await inside.saliency(ids, o)];
      assert.deepEqual(sa.scores.data, sb.scores.data, 'saliency');
      const p = { clean: ids, corrupted: IDS[1], token: 2, against: 7, component: 'residual' };
      assert.deepEqual((await outside.patch(p)).result.data, (await inside.patch(p)).result.data, 'patch');
      const rows = outside._live().readRows('embed', -1, 40, 3);
      assert.deepEqual(rows.data, inside._live().readRows('embed', -1, 40, 3).data, 'rows read back');
    } finally {
      release(outside, inside);
    }
  });

  it('gemma4-tiny: the per-layer table outside (its embedding is tied: in the heap), run() hooks too', async () => {
    const { outside, inside } = await both(folder('gemma4-tiny'));
    try {
      assert.equal(
        outside.offHeapBytes,
        safetensorsBytes('gemma4-tiny', ['model.embed_tokens_per_layer.weight']),
      );
      assert.equal(outside.weightBytes + outside.offHeapBytes, inside.weightBytes);
      assertSameRuns(outside, inside, 'gemma4-tiny');
      const hooks = ['blocks.2.hook_per_layer_out', 'hook_embed'];
      const [ra, rb] = [outside.run(ids, { capture: hooks }), inside.run(ids, { capture: hooks })];
      for (const h of hooks) assert.deepEqual(ra.activations[h].data, rb.activations[h].data, h);
      assert.deepEqual(outside.headScores(ids).induction.data, inside.headScores(ids).induction.data);
    } finally {
      release(outside, inside);
    }
  });

  for (const file of [
    'llama-tiny.f32.gguf',
    'llama-tiny.q8_0.gguf',
    'gemma4-tiny.f32.gguf',
    'gemma4-tiny.q8_0.gguf',
  ]) {
    it(`${file}: the lookup-only tables outside, as stored, the same bits as in the heap`, async () => {
      const parsed = await parseGGUF(ggufBytes(file));
      const table = parsed.tensors.find(
        (t) => t.name === (file.startsWith('gemma4') ? 'per_layer_token_embd.weight' : 'token_embd.weight'),
      );
      const { outside, inside } = await both(gguf(file));
      try {
        assert.equal(outside.offHeapBytes, table.bytes, `${table.name} ${table.typeName}`);
        assert.equal(outside.weightBytes + outside.offHeapBytes, inside.weightBytes);
        assertSameRuns(outside, inside, file);
      } finally {
        release(outside, inside);
      }
    });
  }

  it('a tied embedding stays in the heap: offHeapBytes 0', async () => {
    const model = await folder('qwen2-tiny')({});
    try {
      assert.equal(model.offHeapBytes, 0);
    } finally {
      model.dispose();
    }
  });

  it('an id out of range is refused before any row is copied; the model stays usable', async () => {
    const model = await folder('llama-tiny')({});
    try {
      const [table] = model._offHeapTables;
      const copy = table.copy.bind(table);
      let copied = 0;
      table.copy = (...args) => {
        copied++;
        copy(...args);
      };
      const before = model.forward([ids], { attention: false }).logits.data;
      assert.equal(copied, ids.length, 'one row per id');
      assert.throws(
        () => model.forward([[1, model.vocabSize]], { attention: false }),
        (e) => e instanceof AttentionError && e.code === 'INVALID_ARGUMENT',
      );
      assert.equal(copied, ids.length, 'nothing copied for the refused call');
      assert.deepEqual(model.forward([ids], { attention: false }).logits.data, before);
    } finally {
      model.dispose();
    }
  });

  it('the memory check counts the heap only; dispose() drops the chunks', async () => {
    const { outside, inside } = await both(folder('llama-tiny'));
    const between = Math.floor((outside.weightBytes + inside.weightBytes) / 2);
    release(outside, inside);
    const small = await folder('llama-tiny')({ memoryLimit: between });
    const tables = small._offHeapTables;
    assert.ok(tables[0].chunks.length > 0);
    small.dispose();
    assert.equal(tables[0].chunks.length, 0, 'the chunks are dropped');
    assert.throws(
      () => small.offHeapBytes,
      (e) => e.code === 'DISPOSED',
    );
    await assert.rejects(
      folder('llama-tiny')({ memoryLimit: between, offHeap: false }),
      (e) => e.code === 'TOO_LARGE',
    );
    await assert.rejects(folder('llama-tiny')({ offHeap: 'yes' }), (e) => e.code === 'INVALID_ARGUMENT');
  });

  it('a non-finite value of an off-heap table is refused at load, as in the heap', async () => {
    const name = 'llama-tiny';
    const file = Buffer.from(read(name, 'model.safetensors'));
    const length = Number(file.readBigUInt64LE(0));
    const entry = JSON.parse(file.subarray(8, 8 + length).toString('utf8'))['model.embed_tokens.weight'];
    assert.equal(entry.dtype, 'F32');
    file.writeFloatLE(NaN, 8 + length + entry.data_offsets[0] + 4 * 37);
    for (const offHeap of [true, false]) {
      await assert.rejects(
        loadPretrained({ config: json(name, 'config.json'), weights: file, offHeap }),
        (e) => e.code === 'NON_FINITE' && /flat index 37\b/.test(e.message),
        `offHeap ${offHeap}`,
      );
    }
  });
});

describe('TableChunks', () => {
  it('rows across chunk boundaries, placed in a permuted order, copied back to the heap', () => {
    const heap = new Uint8Array(64);
    const rt = { requireCore: () => ({ HEAPU8: heap }) };
    const rows = 7,
      rowBytes = 3;
    const t = new TableChunks(rt, rows, rowBytes, 7); // 2 rows a chunk: 4 chunks, the last one row
    assert.deepEqual(
      t.chunks.map((c) => c.length),
      [6, 6, 6, 3],
    );
    const file = Uint8Array.from({ length: rows * rowBytes }, (_, i) => i + 1); // file row r: 3r+1 … 3r+3
    const order = (r) => rows - 1 - r;
    t.place(file.subarray(0, 4 * rowBytes), 0, 4, order);
    t.place(file.subarray(4 * rowBytes), 4, rows, order);
    for (let row = 0; row < rows; row++) {
      t.copy(row, 10, rowBytes);
      const r = order(row); // the file row that went to model row `row`
      assert.deepEqual(Array.from(heap.subarray(10, 13)), [3 * r + 1, 3 * r + 2, 3 * r + 3], `row ${row}`);
    }
  });

  it('a heap view older than the memory (grown by a pool worker) is made again over its buffer', () => {
    const memory = new Uint8Array(64);
    const stale = new Uint8Array(memory.buffer, 0, 16); // the views of this thread, before the growth
    const t = new TableChunks({ requireCore: () => ({ HEAPU8: stale, wasmMemory: memory }) }, 2, 4);
    t.place(Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]), 0, 2);
    t.copy(1, 40, 4);
    assert.deepEqual(Array.from(memory.subarray(40, 44)), [5, 6, 7, 8]);
  });
});
