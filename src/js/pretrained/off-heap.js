// Tables the core only looks up by token id (an untied token embedding, Gemma 4's per-layer table:
// PretrainedModel::lookup_only in src/model/pretrained.h) kept in JS memory instead of the wasm heap.
// forward and generate are synchronous, so the rows must be in memory already (a Blob cannot be read
// mid-call): the table is held as ArrayBuffers of whole rows, in the file's format (quantized blocks
// stay quantized), and the core copies in the row of each id a call needs (JsTableRows in
// src/wasm/bindings_pretrained.cpp), widening it with the same routine as an in-heap row.
import { check } from '../errors.js';

const kTableChunkBytes = 16 * 1024 * 1024; // one ArrayBuffer holds this much (or one row, if larger)

/**
 * One table's rows in ArrayBuffers of whole rows, about `chunkBytes` each: copy(row, address, bytes)
 * is what the core calls.
 */
export class TableChunks {
  constructor(rt, rows, rowBytes, chunkBytes = kTableChunkBytes) {
    this._rt = rt;
    this.rowBytes = rowBytes;
    this.perChunk = Math.max(1, Math.floor(chunkBytes / rowBytes));
    this.chunks = [];
    for (let r = 0; r < rows; r += this.perChunk)
      this.chunks.push(new Uint8Array(Math.min(this.perChunk, rows - r) * rowBytes));
    this.bytes = rows * rowBytes;
  }

  // Row r's bytes into the heap at `address` (HEAPU8 re-read: the heap may have grown in the call).
  // In the threaded build a pool worker may have grown the shared memory since this thread's views
  // were made: a view too short for the address is made again over the memory's buffer.
  copy(row, address, bytes) {
    const chunk = this.chunks[Math.floor(row / this.perChunk)];
    const at = (row % this.perChunk) * this.rowBytes;
    const core = this._rt.requireCore();
    let heap = core.HEAPU8;
    if (address + bytes > heap.length && core.wasmMemory) heap = new Uint8Array(core.wasmMemory.buffer);
    heap.set(chunk.subarray(at, at + bytes), address);
  }

  // The file's rows r0 … r1 (`bytes`), file row r at model row rowOrder(r).
  place(bytes, r0, r1, rowOrder) {
    for (let r = r0; r < r1; r++) {
      const to = rowOrder ? rowOrder(r) : r;
      const from = (r - r0) * this.rowBytes;
      const at = (to % this.perChunk) * this.rowBytes;
      this.chunks[Math.floor(to / this.perChunk)].set(bytes.subarray(from, from + this.rowBytes), at);
    }
  }

  drop() {
    this.chunks = [];
  }
}

/** Whether plan entry p stays outside the heap (loadPretrained's offHeap, a table the core only looks up). */
export function staysOutside(handle, p, offHeap) {
  return offHeap && !p.transposed && p.shape.length === 2 && handle.lookupOnly(p.role);
}

/**
 * Reads plan entry p (pretrained/load.js) into JS chunks, whole rows at a time (`progress` as
 * copyTensors'), and attaches them to the model: its TableChunks, dropped by the model's dispose().
 */
export async function loadTable(rt, handle, p, progress) {
  const rows = p.shape[0];
  const table = new TableChunks(rt, rows, p.bytes / rows);
  for (let r0 = 0; r0 < rows; r0 += table.perChunk) {
    const r1 = Math.min(rows, r0 + table.perChunk);
    const bytes = await p.read(r0 * table.rowBytes, r1 * table.rowBytes);
    progress.check();
    table.place(bytes, r0, r1, p.rowOrder);
    progress((r1 - r0) * table.rowBytes);
  }
  try {
    check(handle.attachTable(p.role, p.layer, p.shape, p.format, p.name, table));
  } catch (error) {
    table.drop();
    throw error;
  }
  return table;
}
