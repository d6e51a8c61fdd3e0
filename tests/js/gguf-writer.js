// A small GGUF writer for the tests (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md):
// valid files of any version, value type and tensor layout, and hostile ones through overrides
// (counts, raw value type ids, dimensions, types, offsets, big-endian fields).
import { GGML_TYPES } from '../../src/js/formats/gguf-types.js';

const SCALARS = {
  uint8: [0, 1, 'setUint8'],
  int8: [1, 1, 'setInt8'],
  uint16: [2, 2, 'setUint16'],
  int16: [3, 2, 'setInt16'],
  uint32: [4, 4, 'setUint32'],
  int32: [5, 4, 'setInt32'],
  float32: [6, 4, 'setFloat32'],
  bool: [7, 1, 'setUint8'],
  uint64: [10, 8, 'setBigUint64'],
  int64: [11, 8, 'setBigInt64'],
  float64: [12, 8, 'setFloat64'],
};
const TYPE_IDS = {
  ...Object.fromEntries(Object.entries(SCALARS).map(([k, [id]]) => [k, id])),
  string: 8,
  array: 9,
};
// The id of a type name: "array<…>" is 9; a number string is itself (a raw id).
const typeId = (name) => TYPE_IDS[name] ?? (/^array</.test(name) ? 9 : Number(name));

// Collects little-endian (or big-endian) fields into one byte array.
class Out {
  constructor(littleEndian) {
    this.le = littleEndian;
    this.chunks = [];
    this.length = 0;
  }
  bytes(u8) {
    this.chunks.push(u8);
    this.length += u8.length;
  }
  scalar(type, v) {
    const [, size, set] = SCALARS[type];
    const b = new Uint8Array(size);
    const big = set.includes('Big');
    new DataView(b.buffer)[set](0, big ? BigInt(v) : type === 'bool' ? Number(v) : v, this.le);
    this.bytes(b);
  }
  u32(v) {
    this.scalar('uint32', v);
  }
  u64(v) {
    this.scalar('uint64', v);
  }
  string(s) {
    const b = typeof s === 'string' ? new TextEncoder().encode(s) : s; // raw bytes allowed
    this.u64(b.length);
    this.bytes(b);
  }
  // A value of a type name ("uint32", "string", "array<float32>") or a raw type id (hostile files).
  value(type, v) {
    const array = /^array<(.+)>$/.exec(type);
    if (array) {
      this.u32(typeId(array[1]));
      this.u64(v.length);
      for (const e of v) this.value(array[1], e);
    } else if (type === 'string') this.string(v);
    else if (SCALARS[type]) this.scalar(type, v);
    else throw new Error(`writer: no value type ${type}`);
  }
  concat() {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}

/** Bytes of a tensor of ggml type `type` and dimensions `dims` (ggml order). */
export function tensorBytes(type, dims) {
  const t = GGML_TYPES.find((x) => x.id === type);
  return (dims.reduce((a, b) => a * b, 1) / t.blockElements) * t.blockBytes;
}

/**
 * A GGUF file. metadata: [[key, typeName, value]] (typeName may be a raw id for `rawType`, written
 * as [key, typeName, value, rawTypeId]); tensors: [{ name, dims, type, data?, offset?, nDims? }]
 * laid out in order, each aligned (data: its bytes, default a pattern of the right size; offset
 * overrides where the info says it is). Options: version, alignment (layout; general.alignment is
 * written only if in metadata), littleEndian, magic, tensorCount / kvCount overrides.
 */
export function writeGGUF({
  version = 3,
  metadata = [],
  tensors = [],
  alignment = 32,
  littleEndian = true,
  magic = 'GGUF',
  tensorCount,
  kvCount,
} = {}) {
  const out = new Out(littleEndian);
  out.bytes(new TextEncoder().encode(magic));
  out.u32(version);
  out.u64(tensorCount ?? tensors.length);
  out.u64(kvCount ?? metadata.length);
  for (const [key, type, value, rawTypeId] of metadata) {
    out.string(key);
    out.u32(rawTypeId ?? typeId(type));
    if (rawTypeId === undefined || SCALARS[type] || type === 'string' || /^array</.test(type))
      out.value(type, value);
  }
  const datas = tensors.map((t) => t.data ?? pattern(tensorBytes(t.type, t.dims), String(t.name)));
  let offset = 0;
  const offsets = [];
  for (let i = 0; i < tensors.length; i++) {
    offsets.push(offset);
    offset += Math.ceil(datas[i].length / alignment) * alignment;
  }
  tensors.forEach((t, i) => {
    out.string(t.name);
    out.u32(t.nDims ?? t.dims.length);
    for (const d of t.dims) out.u64(d);
    out.u32(t.type);
    out.u64(t.offset ?? offsets[i]);
  });
  const pad = (Math.ceil(out.length / alignment) * alignment - out.length) % alignment;
  out.bytes(new Uint8Array(pad));
  tensors.forEach((t, i) => {
    const padded = new Uint8Array(Math.ceil(datas[i].length / alignment) * alignment);
    padded.set(datas[i]);
    out.bytes(i === tensors.length - 1 ? datas[i] : padded);
  });
  return out.concat();
}

// n bytes that differ from tensor to tensor and from byte to byte.
function pattern(n, name) {
  let seed = [...name].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7);
  return Uint8Array.from({ length: n }, () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24);
}
