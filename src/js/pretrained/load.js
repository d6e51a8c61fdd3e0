// The copy loop both loaders share (pretrained.js for safetensors, pretrained/from-gguf.js for GGUF):
// every tensor's bytes go from the file straight into their room in the wasm heap, chunk by chunk,
// in the file's format, after the memory for all of them is reserved.
import { AttentionError, check } from '../errors.js';
import { checkSignal } from '../hub/api.js';
import { loadTable, staysOutside } from './off-heap.js';

const kChunkBytes = 16 * 1024 * 1024; // a Blob is read this much at a time: JS never holds a whole large tensor

// A model's weights are bounded by its own limit: a TOO_LARGE names the option that raises it.
export function withLimitHint(fn) {
  try {
    return fn();
  } catch (error) {
    if (error instanceof AttentionError && error.code === 'TOO_LARGE') {
      throw new AttentionError(
        'TOO_LARGE',
        error.message.replace(
          '(setMemoryLimit raises it)',
          "(loadPretrained's memoryLimit option raises it)",
        ),
      );
    }
    throw error;
  }
}

// Copies a tensor's bytes into the heap at `address` as they are (the heap view is re-read for
// each chunk: a Blob read awaits, and the heap may grow meanwhile).
async function copyBytes(rt, p, address, progress) {
  for (let at = 0; at < p.bytes; at += kChunkBytes) {
    const stop = Math.min(p.bytes, at + kChunkBytes);
    const bytes = await p.read(at, stop);
    progress.check();
    rt.requireCore().HEAPU8.set(bytes, address + at);
    progress(stop - at);
  }
}

// Copies a tensor whose rows the file stores in another order: chunks of whole rows (quantized
// blocks stay intact), file row r written to row p.rowOrder(r).
async function copyRows(rt, p, address, progress) {
  const rows = p.shape[0];
  const rowBytes = p.bytes / rows;
  const perChunk = Math.max(1, Math.floor(kChunkBytes / rowBytes));
  for (let r0 = 0; r0 < rows; r0 += perChunk) {
    const r1 = Math.min(rows, r0 + perChunk);
    const bytes = await p.read(r0 * rowBytes, r1 * rowBytes);
    progress.check();
    const heap = rt.requireCore().HEAPU8;
    for (let r = r0; r < r1; r++) {
      const from = (r - r0) * rowBytes;
      heap.set(bytes.subarray(from, from + rowBytes), address + p.rowOrder(r) * rowBytes);
    }
    progress((r1 - r0) * rowBytes);
  }
}

/**
 * Loads the planned tensors into `handle`: plan = [{ name, role, layer, shape, format,
 * transposed, bytes, read(begin, end) (bytes of the tensor), rowOrder? (file row → model row) }].
 * With `offHeap`, a table the core only looks up by row stays in JS memory (off-heap.js). TOO_LARGE
 * before the first tensor is allocated when the stored bytes of the heap's tensors pass the model's
 * limit; onProgress(bytesDone, bytesTotal) after each chunk; ABORTED between chunks once `signal`
 * fires. Returns the tables kept outside the heap (the model drops them when disposed).
 */
export async function copyTensors(rt, handle, plan, onProgress, signal, offHeap = false) {
  const outside = plan.map((p) => staysOutside(handle, p, offHeap));
  const total = plan.reduce((n, p) => n + p.bytes, 0);
  const inHeap = plan.reduce((n, p, i) => n + (outside[i] ? 0 : p.bytes), 0);
  withLimitHint(() => check(handle.reserve(inHeap)));
  let done = 0;
  const progress = (n) => {
    done += n;
    onProgress?.(done, total);
  };
  progress.check = () => checkSignal(signal);
  progress.check();
  const tables = [];
  for (const [i, p] of plan.entries()) {
    if (outside[i]) {
      tables.push(await loadTable(rt, handle, p, progress));
      continue;
    }
    const { address } = check(handle.beginTensor(p.role, p.layer, p.shape, p.format, p.transposed, p.name));
    await (p.rowOrder ? copyRows : copyBytes)(rt, p, address, progress);
    check(handle.endTensor(p.role, p.layer));
  }
  return tables;
}
