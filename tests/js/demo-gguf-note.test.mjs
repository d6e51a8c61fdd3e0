// The demo's note on an opened GGUF model (web/demo-gguf.js): its stored size is the whole file's
// tensors, and the part kept outside the wasm heap (an untied embedding, Gemma 4's per-layer table)
// is named from the model's own weightBytes / offHeapBytes — checked on an untied and a tied file.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, loadPretrained } from '../../src/js/index.js';
import { ggufNote, mb } from '../../web/demo-gguf.js';

await init();
const GGUF = new URL('../golden/gguf/', import.meta.url);

// The note for `file` as the model worker describes it (web/workers/model-worker.js).
async function noteOf(file) {
  const model = await loadPretrained({ gguf: readFileSync(new URL(file, GGUF)) });
  const info = {
    folderName: file,
    architecture: model.architecture,
    numLayers: model.numLayers,
    numHeads: model.numHeads,
    hasTokenizer: true,
    gguf: {
      architecture: 'x',
      types: 'F32',
      bytes: model.weightBytes + model.offHeapBytes,
      offHeapBytes: model.offHeapBytes,
      files: [file],
      activations: 'exact',
    },
  };
  const sizes = { heap: model.weightBytes, outside: model.offHeapBytes };
  model.dispose();
  return { note: ggufNote(info), ...sizes };
}

it('an untied file names the part outside the heap; a tied one does not', async () => {
  const untied = await noteOf('llama-tiny.f32.gguf');
  assert.ok(untied.outside > 0, 'llama-tiny keeps its embedding outside the heap');
  const total = untied.heap + untied.outside;
  assert.ok(
    untied.note.includes(
      `${mb(total)} stored (${total.toLocaleString('en-US')} bytes, ${mb(untied.outside)} of it outside the wasm heap (lookup-only tables))`,
    ),
    untied.note,
  );
  const tied = await noteOf('qwen2-tiny.f32.gguf');
  assert.equal(tied.outside, 0);
  assert.ok(tied.note.includes(`(${tied.heap.toLocaleString('en-US')} bytes)`), tied.note);
  assert.ok(!tied.note.includes('outside'), tied.note);
});
