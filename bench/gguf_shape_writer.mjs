// A streaming GGUF writer for GB-sized shaped files (bench/gguf_shapes.mjs): the header (metadata
// and tensor infos, version 3, alignment 32) is built in memory, the tensor data is generated and
// written 16 MiB at a time, so the file is never held whole in memory. Blocks are seeded random
// bytes with their float16 scales replaced by small finite ones (weights of about ±0.05), norms are
// 1.0 and rope_freqs its real values.
import { closeSync, existsSync, mkdirSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import { BLOCK, GGML } from './gguf_shape_types.mjs';

const ALIGN = 32;
const VALUE = {
  uint8: 0,
  int8: 1,
  uint16: 2,
  int16: 3,
  uint32: 4,
  int32: 5,
  float32: 6,
  bool: 7,
  string: 8,
  array: 9,
};
const SIZE = { uint32: 4, int32: 4, float32: 4, bool: 1 };

// Little-endian fields appended to growing chunks.
class Header {
  constructor() {
    this.chunks = [];
    this.length = 0;
    this.enc = new TextEncoder();
  }
  raw(u8) {
    this.chunks.push(u8);
    this.length += u8.length;
  }
  num(type, v) {
    const b = new Uint8Array(type === 'uint64' ? 8 : SIZE[type]);
    const dv = new DataView(b.buffer);
    if (type === 'uint64') dv.setBigUint64(0, BigInt(v), true);
    else if (type === 'float32') dv.setFloat32(0, v, true);
    else if (type === 'int32') dv.setInt32(0, v, true);
    else if (type === 'bool') dv.setUint8(0, v ? 1 : 0);
    else dv.setUint32(0, v, true);
    this.raw(b);
  }
  string(s) {
    const b = this.enc.encode(s);
    this.num('uint64', b.length);
    this.raw(b);
  }
  // A key/value: type "string", a scalar, or "array<…>" of strings or scalars (typed arrays too).
  kv(key, type, value) {
    this.string(key);
    const array = /^array<(.+)>$/.exec(type);
    this.num('uint32', VALUE[array ? 'array' : type]);
    if (!array) return type === 'string' ? this.string(value) : this.num(type, value);
    this.num('uint32', VALUE[array[1]]);
    this.num('uint64', value.length);
    if (array[1] === 'string') for (const s of value) this.string(s);
    else {
      const Typed = array[1] === 'float32' ? Float32Array : Int32Array;
      this.raw(new Uint8Array(Typed.from(value).buffer));
    }
  }
  bytes() {
    const pad = (ALIGN - (this.length % ALIGN)) % ALIGN;
    const out = new Uint8Array(this.length + pad);
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}

/** The header of a file with these metadata entries and tensors (each given its offset). */
export function ggufHeader(metadata, tensors) {
  const h = new Header();
  h.raw(new TextEncoder().encode('GGUF'));
  h.num('uint32', 3);
  h.num('uint64', tensors.length);
  h.num('uint64', metadata.length);
  for (const [key, type, value] of metadata) h.kv(key, type, value);
  let offset = 0;
  for (const t of tensors) {
    h.string(t.name);
    h.num('uint32', t.dims.length);
    for (const d of t.dims) h.num('uint64', d);
    h.num('uint32', t.type);
    h.num('uint64', offset);
    t.offset = offset;
    offset += Math.ceil(t.bytes / ALIGN) * ALIGN;
  }
  return { head: h.bytes(), dataBytes: offset };
}

// A positive finite number below 65504 as float16 bits (rounded; a mantissa of 1024 carries).
function toHalf(x) {
  const e = Math.floor(Math.log2(x));
  if (e < -14) return Math.round(x / 2 ** -24); // subnormal
  return ((e + 15) << 10) + Math.round((x / 2 ** e - 1) * 1024);
}

// Where a block's float16 scales lie (in 16-bit words from the block's start) and the range of
// magnitudes drawn for them, chosen so that a weight is about ±0.05 at most with typical quants.
const SCALES = {
  [GGML.Q4_K]: [
    [0, 1e-4],
    [1, 2e-5],
  ], // d (× 6-bit scale × 4-bit q), dmin (× 6-bit min)
  [GGML.Q6_K]: [[104, 1e-5]], // d at byte 208 (× int8 scale × (q − 32))
  [GGML.Q5_0]: [[0, 2e-3]], // d × (q − 16)
  [GGML.Q8_0]: [[0, 2e-4]], // d × int8
};

// Fills buf (whole blocks of `type`) with seeded random bytes and sane scales; returns the new seed.
function fillBlocks(buf, type, seed) {
  const words = new Uint32Array(buf.buffer, buf.byteOffset, buf.length >> 2);
  for (let i = 0; i < words.length; i++) {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    words[i] = seed;
  }
  const half = new Uint16Array(buf.buffer, buf.byteOffset, buf.length >> 1);
  const blockWords = BLOCK[type][1] / 2;
  for (const [at, scale] of SCALES[type]) {
    const table = Array.from({ length: 256 }, (_, k) => toHalf(scale * (0.5 + k / 256)));
    for (let w = at; w < half.length; w += blockWords) half[w] = table[half[w] & 255];
  }
  return seed >>> 0 || 1;
}

// Writes one tensor's data: F32 values from `values(t)` (1-D tensors), else random blocks.
function writeTensor(fd, t, buf, seed, values) {
  if (t.type === GGML.F32) {
    writeSync(fd, new Uint8Array(values(t).buffer));
    return seed;
  }
  const blockBytes = BLOCK[t.type][1];
  const chunk = Math.floor(buf.length / blockBytes) * blockBytes;
  for (let left = t.bytes; left > 0; left -= chunk) {
    const n = Math.min(left, chunk);
    seed = fillBlocks(buf.subarray(0, n), t.type, seed);
    writeSync(fd, buf, 0, n);
  }
  return seed;
}

/**
 * Writes `file` (metadata entries, tensors [{ name, dims, type, bytes }]) unless a file with the
 * same header and size is there. values(t): the Float32Array of a 1-D F32 tensor.
 */
export function writeShapedGGUF(file, metadata, tensors, values, seed = 20261128) {
  const { head, dataBytes } = ggufHeader(metadata, tensors);
  const size = head.length + dataBytes;
  if (existsSync(file) && statSync(file).size === size) {
    const fd = openSync(file, 'r');
    const got = Buffer.alloc(head.length);
    readSync(fd, got, 0, head.length, 0);
    closeSync(fd);
    if (got.equals(head)) return { file, size, written: false };
  }
  mkdirSync(path.dirname(file), { recursive: true });
  const fd = openSync(file, 'w');
  const buf = new Uint8Array(16 << 20);
  try {
    writeSync(fd, head);
    let at = 0;
    for (const t of tensors) {
      if (t.offset > at) writeSync(fd, new Uint8Array(t.offset - at));
      seed = writeTensor(fd, t, buf, seed, values);
      at = t.offset + t.bytes;
    }
  } finally {
    closeSync(fd);
  }
  return { file, size, written: true };
}
