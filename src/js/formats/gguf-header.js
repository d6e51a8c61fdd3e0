// The header of one GGUF file (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md), read from
// its first bytes: every count, length and size is checked against the bytes the file has left
// before anything of that size is made, so a hostile header cannot make a large allocation.
//   magic "GGUF", version (uint32), tensor count and metadata count (uint64)
//   metadata: key (string), value type (uint32), value; a string is a uint64 length and UTF-8 bytes,
//             an array an element type (uint32), a uint64 count and the elements
//   tensor infos: name (string), dimension count (uint32), dimensions (uint64 each, ggml order:
//             the row length first), ggml type (uint32), offset in the data section (uint64)
// Little-endian only. The data section starts at the first multiple of general.alignment after.
import { AttentionError } from '../errors.js';
import { GGUF_VALUE_TYPES } from './gguf-types.js';

const littleEndianHost = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const kMaxDims = 4; // GGML_MAX_DIMS
// The fewest bytes a metadata entry (key length, type, a 1-byte value) and a tensor info (name
// length, dimension count, type, offset) take: the counts are bounded by the bytes left over these.
const kMinEntryBytes = 8 + 4 + 1;
const kMinTensorInfoBytes = 8 + 4 + 4 + 8;

// Every problem of a GGUF file is an INVALID_ARGUMENT naming it (formats/gguf.js adds which file).
export const ggufFail = (message) => {
  throw new AttentionError('INVALID_ARGUMENT', message);
};

/** Thrown when the header runs past the bytes read so far (but not past the file): read more. */
export class NeedMore extends Error {
  constructor(end) {
    super(`the header needs at least ${end} bytes`);
    this.end = end;
  }
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });
const lenientUtf8 = new TextDecoder('utf-8');

// Reads little-endian fields from the first bytes `u8` of a file of `fileSize` bytes.
class Cursor {
  constructor(u8, fileSize) {
    this.u8 = u8;
    this.view = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
    this.fileSize = fileSize;
    this.pos = 0;
  }

  // Makes sure n more bytes are there: past the file's end is a truncated file, past the bytes read
  // a NeedMore.
  need(n, what) {
    const end = this.pos + n;
    if (end > this.fileSize)
      ggufFail(`the file ends (at byte ${this.fileSize}) inside ${what}, which needs bytes up to ${end}`);
    if (end > this.u8.length) throw new NeedMore(end);
  }

  get left() {
    return this.fileSize - this.pos;
  }

  scalar(type, what) {
    this.need(type.size, what);
    const v = this.view[type.get](this.pos, true);
    this.pos += type.size;
    return v;
  }

  u32(what) {
    return this.scalar(GGUF_VALUE_TYPES[4], what);
  }

  // A uint64 count, length, dimension or offset, which must be at most `limit` (a safe integer).
  size(what, limit, why) {
    const v = this.scalar(GGUF_VALUE_TYPES[10], what);
    if (v > BigInt(limit)) ggufFail(`${what} is ${v}, more than ${why}`);
    return Number(v);
  }

  // A string: keys and tensor names must be valid UTF-8; values are decoded leniently (U+FFFD).
  string(what, strict) {
    const n = this.size(
      `the length of ${what}`,
      this.left - 8,
      `the ${this.left - 8} bytes left in the file`,
    );
    this.need(n, what);
    const bytes = this.u8.subarray(this.pos, this.pos + n);
    this.pos += n;
    let ascii = n < 64;
    for (let i = 0; ascii && i < n; i++) ascii = bytes[i] < 0x80;
    if (ascii) return String.fromCharCode(...bytes);
    if (!strict) return lenientUtf8.decode(bytes);
    try {
      return fatalUtf8.decode(bytes);
    } catch {
      return ggufFail(`${what} is not valid UTF-8`);
    }
  }

  // A typed array of n numbers of `type` (a copy: aligned, and not holding the header's buffer).
  numbers(type, n, what) {
    this.need(n * type.size, what);
    const at = this.pos;
    this.pos += n * type.size;
    if (littleEndianHost) return new type.Array(this.u8.slice(at, this.pos).buffer);
    return type.Array.from({ length: n }, (_, i) => this.view[type.get](at + i * type.size, true));
  }
}

const numberOf = (v) =>
  typeof v === 'bigint' && v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(v)
    : v;

function valueType(id, what) {
  const type = GGUF_VALUE_TYPES[id];
  if (type === undefined) ggufFail(`${what} has unknown value type ${id} (GGUF's are 0 to 12)`);
  return type;
}

function bool(c, what) {
  const v = c.scalar(GGUF_VALUE_TYPES[0], what);
  if (v > 1) ggufFail(`${what} is a bool of value ${v}, neither 0 nor 1`);
  return v === 1;
}

// An array value: [typeName, value], numbers as a typed array, bools and strings as an Array.
function readArray(c, what) {
  const type = valueType(c.u32(`the element type of ${what}`), `${what}'s elements`);
  if (type.name === 'array') ggufFail(`${what} is an array of arrays, which GGUF readers (llama.cpp) refuse`);
  const min = type.size || 8; // a string takes at least its 8-byte length
  const n = c.size(
    `the element count of ${what}`,
    Math.floor(c.left / min),
    `the bytes left in the file hold`,
  );
  const name = `array<${type.name}>`;
  if (type.Array) return [name, c.numbers(type, n, what)];
  const out = new Array(n);
  for (let i = 0; i < n; i++)
    out[i] = type.name === 'bool' ? bool(c, what) : c.string(`element ${i} of ${what}`);
  return [name, out];
}

// One metadata value of type id `id`: [typeName, value]; 64-bit integers as numbers when exact.
function readValue(c, id, what) {
  const type = valueType(id, what);
  if (type.name === 'array') return readArray(c, what);
  if (type.name === 'string') return ['string', c.string(what)];
  if (type.name === 'bool') return ['bool', bool(c, what)];
  return [type.name, numberOf(c.scalar(type, what))];
}

// The magic and the version: a GGUF file of version 2 or 3, little-endian.
function readStart(c) {
  c.need(8, 'the magic and the version');
  const magic = String.fromCharCode(...c.u8.subarray(0, 4));
  if (magic !== 'GGUF') {
    if (['GGML', 'GGMF', 'GGJT', 'lmgg', 'fmgg', 'tjgg'].includes(magic))
      ggufFail(
        `this is a ggml file from before GGUF (magic "${magic}"), which is not read: convert it to GGUF`,
      );
    const hex = [...c.u8.subarray(0, 4)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
    ggufFail(`not a GGUF file: it starts with bytes ${hex}, not "GGUF"`);
  }
  c.pos = 4;
  const version = c.u32('the version');
  const swapped =
    ((version & 0xff) << 24) |
    (((version >>> 8) & 0xff) << 16) |
    (((version >>> 16) & 0xff) << 8) |
    (version >>> 24);
  if (version !== 2 && version !== 3) {
    if (swapped >= 1 && swapped <= 3)
      ggufFail(
        `this is a big-endian GGUF file (version ${swapped} byte-swapped), which is not read: only little-endian files are`,
      );
    if (version === 1) ggufFail('GGUF version 1 is not read (versions 2 and 3 are): convert the file again');
    ggufFail(`GGUF version ${version} is not read (versions 2 and 3 are)`);
  }
  return version;
}

// The metadata: { metadata, types }, null-prototype objects by key; duplicate keys refused.
function readMetadata(c, count) {
  const metadata = Object.create(null);
  const types = Object.create(null);
  for (let i = 0; i < count; i++) {
    const key = c.string(`the key of metadata entry ${i}`, true);
    if (key in types) ggufFail(`metadata key "${key}" appears twice`);
    const what = `the value of metadata "${key}"`;
    [types[key], metadata[key]] = readValue(c, c.u32(`the value type of metadata "${key}"`), what);
  }
  return { metadata, types };
}

// The tensor infos as stored: { name, dims, type, offset } (checked in gguf-tensors.js).
function readTensorInfos(c, count) {
  const infos = [];
  for (let i = 0; i < count; i++) {
    const name = c.string(`the name of tensor ${i}`, true);
    const nDims = c.u32(`the dimension count of tensor "${name}"`);
    if (nDims > kMaxDims) ggufFail(`tensor "${name}" has ${nDims} dimensions, more than ggml's ${kMaxDims}`);
    const dims = [];
    for (let d = 0; d < nDims; d++) {
      const what = `dimension ${d} of tensor "${name}"`;
      dims.push(c.size(what, Number.MAX_SAFE_INTEGER, `2^53 - 1`));
    }
    const type = c.u32(`the type of tensor "${name}"`);
    const offset = c.size(
      `the data offset of tensor "${name}"`,
      c.fileSize,
      `the file's ${c.fileSize} bytes`,
    );
    infos.push({ name, dims, type, offset });
  }
  return infos;
}

/**
 * The header of a GGUF file from its first bytes `u8` (all of them, or a prefix: NeedMore when the
 * header runs past it): { version, metadata, metadataTypes, infos, headerEnd }. INVALID_ARGUMENT
 * naming the problem for anything out of range or truncated.
 */
export function parseHeader(u8, fileSize) {
  const c = new Cursor(u8, fileSize);
  const version = readStart(c);
  const most = (bytes, each) => Math.max(0, Math.floor(bytes / each));
  const tensorCount = c.size('the tensor count', most(c.left - 16, kMinTensorInfoBytes), 'the file can hold');
  const infoBytes = tensorCount * kMinTensorInfoBytes;
  const kvCount = c.size(
    'the metadata count',
    most(c.left - 8 - infoBytes, kMinEntryBytes),
    'the file can hold',
  );
  const { metadata, types } = readMetadata(c, kvCount);
  const infos = readTensorInfos(c, tensorCount);
  return { version, metadata, metadataTypes: types, infos, headerEnd: c.pos };
}
