// Quantized blocks for the GGUF fixtures of make_gguf_fixtures.mjs, as ggml lays them out
// (ggml-common.h): Q8_0 and Q4_0 from real weights (quantize_row_q8_0_ref / _q4_0_ref), and for the
// other types random blocks with sane float16 scales — random quants, d (and dmin) drawn so that the
// dequantized weights have about the standard deviation asked for. Every value is one rounding of
// an exact product in both llama.cpp and the library, so random blocks test the layouts as well as
// quantized ones would.
import { fromHalf, toHalf } from '../js/gguf-from-fixture.js';

export const TYPE_ID = {
  Q4_0: 2,
  Q5_0: 6,
  Q8_0: 8,
  Q2_K: 10,
  Q3_K: 11,
  Q4_K: 12,
  Q5_K: 13,
  Q6_K: 14,
  IQ4_NL: 20,
};

/** A seeded generator: uniform [0, 1) (mulberry32), and normal draws from it. */
export function seeded(seed) {
  let s = seed >>> 0;
  const uniform = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const normal = () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
  return { uniform, normal };
}

const f32 = Math.fround;
const putHalf = (out, at, x) => {
  const h = toHalf(x);
  out[at] = h & 0xff;
  out[at + 1] = h >> 8;
};

// Q8_0 { fp16 d; int8 qs[32] }: d = amax / 127, q = round(x / d).
function q8Block(x, out, at) {
  const amax = x.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  const d = f32(amax / 127),
    id = d ? f32(1 / d) : 0;
  putHalf(out, at, d);
  x.forEach((v, j) => {
    out[at + 2 + j] = (Math.sign(v * id) * Math.round(Math.abs(f32(v * id)))) & 0xff; // roundf
  });
}

// Q4_0 { fp16 d; uint8 qs[16] }: d = max / −8 (the signed extreme), x[j] low nibbles, x[j+16] high.
function q4Block(x, out, at) {
  let amax = 0,
    max = 0;
  for (const v of x)
    if (amax < Math.abs(v)) {
      amax = Math.abs(v);
      max = v;
    }
  const d = f32(max / -8),
    id = d ? f32(1 / d) : 0;
  putHalf(out, at, d);
  const nibble = (v) => Math.min(15, Math.trunc(f32(f32(v * id) + 8.5)));
  for (let j = 0; j < 16; j++) out[at + 2 + j] = nibble(x[j]) | (nibble(x[j + 16]) << 4);
}

const QUANTIZERS = { Q8_0: [34, q8Block], Q4_0: [18, q4Block] };

/** A row-major float matrix quantized to Q8_0 or Q4_0 (rows of whole blocks of 32): { type, data }. */
export function quantize(typeName, values) {
  const [bytes, block] = QUANTIZERS[typeName];
  const blocks = values.length / 32;
  const data = new Uint8Array(blocks * bytes);
  for (let b = 0; b < blocks; b++) block(values.subarray(b * 32, b * 32 + 32), data, b * bytes);
  return { type: TYPE_ID[typeName], data };
}

// Per type: block bytes, elements, where the float16 d (and dmin) lie, and the standard deviation of
// the dequantized value per unit of d for uniformly random quants and scales (from the value formula
// of each layout: e.g. Q4_K's d·sc·q − dmin·m with 6-bit sc, m and 4-bit q has std ≈ 218·d once
// dmin = 7.5·d centres it). dmin is set to `center`·d.
const RANDOM = {
  Q2_K: { bytes: 84, n: 256, d: 80, dmin: 82, spread: 13, center: 1.5 },
  Q3_K: { bytes: 110, n: 256, d: 108, spread: 45 },
  Q4_K: { bytes: 144, n: 256, d: 0, dmin: 2, spread: 250, center: 7.5 },
  Q5_K: { bytes: 176, n: 256, d: 0, dmin: 2, spread: 500, center: 15.5 },
  Q6_K: { bytes: 210, n: 256, d: 208, spread: 1400 },
  Q4_0: { bytes: 18, n: 32, d: 0, spread: 4.6 },
  Q5_0: { bytes: 22, n: 32, d: 0, spread: 9.2 },
  Q8_0: { bytes: 34, n: 32, d: 0, spread: 74 },
  IQ4_NL: { bytes: 18, n: 32, d: 0, spread: 66 },
};

/**
 * A matrix of `rows` × `cols` in `typeName` with random blocks whose dequantized values have a
 * standard deviation of about `std`: random bytes, then each block's d (and dmin) overwritten with a
 * float16 scale of ±30 % around the nominal one.
 */
export function randomBlocks(typeName, rows, cols, std, rng) {
  const t = RANDOM[typeName];
  if (cols % t.n) throw new Error(`${typeName}: a row of ${cols} is not whole blocks of ${t.n}`);
  const blocks = (rows * cols) / t.n;
  const data = new Uint8Array(blocks * t.bytes);
  for (let i = 0; i < data.length; i++) data[i] = Math.floor(rng.uniform() * 256);
  for (let b = 0; b < blocks; b++) {
    const at = b * t.bytes;
    const d = (std / t.spread) * (0.7 + 0.6 * rng.uniform());
    putHalf(data, at + t.d, d);
    if (t.dmin !== undefined) putHalf(data, at + t.dmin, d * t.center);
  }
  return { type: TYPE_ID[typeName], data };
}

/** The values of a Q8_0 or Q4_0 matrix ({ data } as quantize returns it), as ggml dequantizes them. */
export function dequantize(typeName, { data }) {
  const [bytes] = QUANTIZERS[typeName];
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const out = new Float32Array((data.length / bytes) * 32);
  for (let b = 0; b < data.length / bytes; b++) {
    const at = b * bytes,
      d = fromHalf(view.getUint16(at, true));
    for (let j = 0; j < 32; j++) {
      const q =
        typeName === 'Q8_0'
          ? view.getInt8(at + 2 + j)
          : ((data[at + 2 + (j % 16)] >> (j < 16 ? 0 : 4)) & 15) - 8;
      out[b * 32 + j] = f32(d * q);
    }
  }
  return out;
}
