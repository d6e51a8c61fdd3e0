// GGUF files (llama.cpp's format, docs/gguf.md): the header of one file or of the parts of a split
// file, the tensors' places checked, and a tensor's bytes read by range — from a Blob / File slice
// by slice, or from bytes already in memory — never the whole file into JS memory.
//
// Checked before anything large is allocated (each an INVALID_ARGUMENT naming the problem and the
// file): the magic, version 2 or 3 and little-endian; every count and length against the bytes the
// file has left; value types; duplicate keys and tensor names; general.alignment (a power of two);
// each tensor's dimensions (at most 4, their product a safe integer), ggml type (known), row length
// (a whole number of blocks), offset (aligned, within the file) and bytes (within the file, no two
// tensors overlapping); a split file's parts (all of them, each once, the tensor count).
import { AttentionError } from '../errors.js';
import { describe } from '../options.js';
import { asBytes } from './safetensors.js';
import { NeedMore, ggufFail as fail, parseHeader } from './gguf-header.js';
import { ggmlType } from './gguf-types.js';
import { isRangeSource } from '../range-source.js';

export { GGML_TYPES, ggmlType } from './gguf-types.js';

const kDefaultAlignment = 32; // GGUF_DEFAULT_ALIGNMENT
const kFirstRead = 1 << 20; // bytes of a Blob read first for its header; more when it runs past
/** The largest header read (metadata and tensor infos; a 256k-token vocabulary takes ~10 MB). */
export const kMaxGgufHeaderBytes = 256 * 1024 * 1024;

// A file to read ranges of: bytes already in memory (read as views), or a Blob/File read by slices.
function source(value, what) {
  if (isRangeSource(value)) return value;
  if (typeof Blob !== 'undefined' && value instanceof Blob) {
    return { size: value.size, read: async (b, e) => new Uint8Array(await value.slice(b, e).arrayBuffer()) };
  }
  let u8;
  try {
    u8 = asBytes(value);
  } catch {
    throw new AttentionError(
      'INVALID_ARGUMENT',
      `${what} must be a File, a Blob, an ArrayBuffer or a view of one, got ${describe(value)}`,
    );
  }
  return { size: u8.length, read: async (b, e) => u8.subarray(b, e) };
}

// The header of one file, reading a growing prefix of a Blob until the header fits in it.
async function readPartHeader(src) {
  let length = Math.min(src.size, kFirstRead);
  for (;;) {
    try {
      return parseHeader(await src.read(0, length), src.size);
    } catch (error) {
      if (!(error instanceof NeedMore)) throw error;
      if (error.end > kMaxGgufHeaderBytes)
        fail(`the header runs past ${kMaxGgufHeaderBytes} bytes, the most read`);
      length = Math.min(src.size, kMaxGgufHeaderBytes, Math.max(2 * length, error.end + (1 << 16)));
    }
  }
}

// general.alignment: a uint32 power of two, or the default 32.
function alignmentOf(header) {
  const type = header.metadataTypes['general.alignment'];
  if (type === undefined) return kDefaultAlignment;
  const a = header.metadata['general.alignment'];
  if (type !== 'uint32') fail(`general.alignment must be a uint32, got a ${type}`);
  if (a === 0 || (a & (a - 1)) !== 0) fail(`general.alignment ${a} is not a power of two`);
  return a;
}

// A tensor's element count and stored bytes from its dimensions and type, checked.
function tensorSize(info) {
  const { name, dims } = info;
  const type = ggmlType(info.type);
  if (type === undefined) fail(`tensor "${name}" has unknown ggml type ${info.type}`);
  let elements = 1;
  for (const d of dims) {
    if (d !== 0 && elements > Number.MAX_SAFE_INTEGER / d)
      fail(`tensor "${name}" has dimensions [${dims}] of more than 2^53 elements`);
    elements *= d;
  }
  const row = dims.length > 0 ? dims[0] : 1;
  if (row % type.blockElements !== 0) {
    fail(
      `tensor "${name}" has rows of ${row} elements, not a whole number of ${type.name} blocks of ${type.blockElements}`,
    );
  }
  return { type, elements, bytes: (elements / type.blockElements) * type.blockBytes };
}

// The tensors of one file, their places checked: [{ name, type, typeName, dims, shape, elements,
// bytes, offset, begin, end, part }] in the file's order.
function checkTensors(header, alignment, dataStart, fileSize, part) {
  const tensors = [];
  const names = new Set();
  for (const info of header.infos) {
    const { name, dims, offset } = info;
    if (names.has(name)) fail(`tensor "${name}" appears twice`);
    names.add(name);
    const { type, elements, bytes } = tensorSize(info);
    if (offset % alignment !== 0)
      fail(`tensor "${name}" has data offset ${offset}, not a multiple of the alignment ${alignment}`);
    const begin = dataStart + offset;
    if (begin + bytes > fileSize) {
      fail(
        `tensor "${name}" (${type.name} [${dims}], ${bytes} bytes at byte ${begin}) runs past the end of the ${fileSize}-byte file`,
      );
    }
    const shape = [...dims].reverse(); // row-major, the row last (as safetensors and PyTorch)
    tensors.push({ name, type: type.id, typeName: type.name, dims: [...dims], shape, elements, bytes });
    Object.assign(tensors.at(-1), { offset, begin, end: begin + bytes, part });
  }
  // By place: a tensor overlaps an earlier one iff it starts before the furthest end so far.
  let reach = null;
  for (const t of [...tensors].sort((a, b) => a.begin - b.begin || a.end - b.end)) {
    if (reach && t.bytes > 0 && t.begin < reach.end)
      fail(
        `tensors "${reach.name}" and "${t.name}" overlap (bytes ${t.begin} to ${Math.min(reach.end, t.end)})`,
      );
    if (!reach || t.end > reach.end) reach = t;
  }
  return tensors;
}

// One file: its header, alignment, data section start and checked tensors.
async function readPart(src, part) {
  const header = await readPartHeader(src);
  const alignment = alignmentOf(header);
  const dataStart = Math.ceil(header.headerEnd / alignment) * alignment;
  const tensors = checkTensors(header, alignment, dataStart, src.size, part);
  return { header, alignment, dataStart, tensors, src };
}

// An integer metadata value of a part, or undefined.
function intKey(header, key) {
  const v = header.metadata[key];
  if (v === undefined) return undefined;
  if (!Number.isSafeInteger(v)) fail(`${key} must be an integer, got ${describe(v)}`);
  return v;
}

// The parts in split.no order, after checking that they are the whole split file, each once.
function orderParts(parts, label) {
  if (parts.length === 1) {
    const count = intKey(parts[0].header, 'split.count');
    if (count > 1) {
      const no = intKey(parts[0].header, 'split.no') ?? 0;
      fail(`this is part ${no + 1} of ${count} of a split GGUF file: give all ${count} parts, as a list`);
    }
    return parts;
  }
  const ordered = new Array(parts.length);
  parts.forEach((p, i) => {
    const at = (message) => fail(`${label(i)}: ${message}`);
    const count = intKey(p.header, 'split.count');
    if (count !== parts.length)
      at(`split.count is ${count ?? 'missing'}, but ${parts.length} parts were given`);
    const no = intKey(p.header, 'split.no');
    if (!(no >= 0 && no < count)) at(`split.no ${no ?? 'is missing'} is not a part number below ${count}`);
    if (ordered[no]) at(`it is part ${no + 1} of ${count}, as is another file given`);
    ordered[no] = p;
  });
  const total = ordered.reduce((n, p) => n + p.tensors.length, 0);
  const stated = intKey(ordered[0].header, 'split.tensors.count');
  if (stated !== undefined && stated !== total)
    fail(`split.tensors.count is ${stated}, but the ${parts.length} parts hold ${total} tensors`);
  return ordered;
}

// Errors of part i named with it: "gguf: …", or "gguf part 2 of 3 (name): …".
function partLabel(list) {
  return (i) => {
    const name = typeof list[i]?.name === 'string' ? ` (${list[i].name})` : '';
    return list.length === 1 ? `gguf${name}` : `gguf part ${i + 1} of ${list.length}${name}`;
  };
}

/**
 * Reads the header of a GGUF file, or of the parts of a split file given as a list (any order), and
 * checks where every tensor lies; reads no tensor. `input`: a File, Blob, ArrayBuffer or view, or an
 * array of them. Resolves to { version, alignment, metadata, metadataTypes, tensors, tensorBytes,
 * parts, readTensor }: metadata is a null-prototype object of the file's key/values (split files:
 * the first part's), numbers as numbers (64-bit integers as BigInt when not exact), number arrays as
 * typed arrays, strings and bools as Arrays; metadataTypes names each value's GGUF type ("uint32",
 * "array<string>"); tensors are in file order, each { name, type (ggml id), typeName, dims (ggml
 * order, the row length first), shape (reversed: row-major), elements, bytes (stored), offset (in
 * its part's data section), begin, end (bytes of its part), part }; readTensor(tensor or name,
 * begin = 0, end = bytes) resolves to that byte range of the tensor's data as a Uint8Array (a view
 * of the input for in-memory bytes). INVALID_ARGUMENT naming the problem and the file otherwise.
 */
export async function parseGGUF(input) {
  const list = Array.isArray(input) ? input : [input];
  if (list.length === 0) fail('gguf: no file given (an empty list)');
  const label = partLabel(list);
  const parts = [];
  for (let i = 0; i < list.length; i++) {
    try {
      parts.push(await readPart(source(list[i], 'the file'), i));
    } catch (error) {
      if (error instanceof AttentionError)
        throw new AttentionError(error.code, `${label(i)}: ${error.message}`);
      throw error;
    }
  }
  let ordered;
  try {
    ordered = orderParts(parts, label);
  } catch (error) {
    if (error instanceof AttentionError && !error.message.startsWith('gguf'))
      throw new AttentionError(error.code, `gguf: ${error.message}`);
    throw error;
  }
  return describeFile(ordered, label);
}

// The parsed file of its ordered parts (each tensor's `part` its index in that order).
function describeFile(ordered, label) {
  const tensors = [];
  const byName = new Map();
  const given = new Map(); // name → the position of its file in the list given, for errors
  ordered.forEach((p, index) => {
    for (const t of p.tensors) {
      if (byName.has(t.name))
        fail(`${label(t.part)}: tensor "${t.name}" is also in ${label(given.get(t.name))}`);
      given.set(t.name, t.part);
      t.part = index;
      Object.freeze(t.dims);
      Object.freeze(t.shape);
      byName.set(t.name, Object.freeze(t)); // readTensor trusts its begin and end
      tensors.push(t);
    }
  });
  const first = ordered[0];
  const readTensor = async (tensor, begin = 0, end = undefined) => {
    const t = typeof tensor === 'string' ? byName.get(tensor) : tensor;
    if (!t || byName.get(t.name) !== t) fail(`gguf: no tensor ${describe(tensor)} in this file`);
    const stop = end ?? t.bytes;
    if (!(
      Number.isSafeInteger(begin) &&
      Number.isSafeInteger(stop) &&
      begin >= 0 &&
      begin <= stop &&
      stop <= t.bytes
    ))
      fail(`gguf: bytes [${begin}, ${stop}) are not a range of tensor "${t.name}"'s ${t.bytes} bytes`);
    return ordered[t.part].src.read(t.begin + begin, t.begin + stop);
  };
  return {
    version: first.header.version,
    alignment: first.alignment,
    metadata: first.header.metadata,
    metadataTypes: first.header.metadataTypes,
    tensors,
    tensorBytes: tensors.reduce((n, t) => n + t.bytes, 0),
    parts: ordered.map((p) => ({
      size: p.src.size,
      version: p.header.version,
      alignment: p.alignment,
      dataStart: p.dataStart,
      tensorCount: p.tensors.length,
    })),
    readTensor,
  };
}
