// TinyTransformer safetensors files: the layout (read back here with an independent parser of the
// format: 8-byte little-endian header length, JSON header, raw little-endian float32), a bit-exact
// round trip from any byte offset, and hostile files refused with INVALID_ARGUMENT naming the
// problem before a model is allocated (heap and handle count unchanged).
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  init,
  AttentionError,
  TinyTransformer,
  memoryStats,
  readSafetensorsMetadata,
} from '../../src/js/index.js';
import { stateDictShapes } from '../../src/js/formats/safetensors.js';

await init();

const config = { vocabSize: 7, maxLength: 5, dModel: 8, numHeads: 2, numLayers: 2, mlpHidden: 12, seed: 11 };

// The file's parts, read without the library: { header (object), data (Uint8Array) }.
function split(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(view.getBigUint64(0, true));
  return {
    header: JSON.parse(Buffer.from(bytes.subarray(8, 8 + n)).toString('utf8')),
    data: bytes.subarray(8 + n),
  };
}

// A file from a header object and data bytes, as another writer would make it (no padding).
function join(header, data) {
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

describe('toSafetensors', () => {
  const model = new TinyTransformer(config);
  after(() => model.dispose());

  it('writes F32 little-endian tensors by state-dict name, contiguous, and the config as metadata strings', () => {
    const bytes = model.toSafetensors();
    assert.ok(bytes instanceof Uint8Array);
    const { header, data } = split(bytes);
    assert.equal((bytes.length - data.length) % 8, 0, 'the data starts 8-byte aligned');
    assert.deepEqual(header.__metadata__, {
      format: 'attention-wasm/tiny-transformer',
      config: JSON.stringify(model.config),
    });
    const sd = model.stateDict();
    assert.deepEqual(
      Object.keys(header).filter((k) => k !== '__metadata__'),
      Object.keys(sd),
    );
    let offset = 0;
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    for (const [name, t] of Object.entries(sd)) {
      const e = header[name];
      assert.equal(e.dtype, 'F32');
      assert.deepEqual(e.shape, t.shape);
      assert.deepEqual(e.data_offsets, [offset, offset + 4 * t.size]);
      for (let i = 0; i < t.size; i++) assert.equal(view.getFloat32(offset + 4 * i, true), t.data[i]);
      offset += 4 * t.size;
    }
    assert.equal(offset, data.length);
  });

  it('round-trips bit for bit, from an ArrayBuffer or a view at any byte offset', () => {
    const bytes = model.toSafetensors();
    const padded = new Uint8Array(bytes.length + 7);
    padded.set(bytes, 3);
    for (const input of [bytes, bytes.buffer, padded.subarray(3, 3 + bytes.length)]) {
      const copy = TinyTransformer.fromSafetensors(input);
      assert.deepEqual(copy.config, model.config);
      const a = copy.stateDict();
      for (const [name, t] of Object.entries(model.stateDict())) {
        assert.deepEqual(new Uint32Array(a[name].data.buffer), new Uint32Array(t.data.buffer), name);
      }
      assert.deepEqual(copy.forward([1, 2, 3]).logits.data, model.forward([1, 2, 3]).logits.data);
      copy.dispose();
    }
  });

  it('reads a file written by another writer: unpadded header, tensors stored in another order', () => {
    const { header, data } = split(model.toSafetensors());
    const names = Object.keys(header)
      .filter((k) => k !== '__metadata__')
      .reverse();
    const parts = [];
    const rewritten = { __metadata__: header.__metadata__ };
    let offset = 0;
    for (const name of names) {
      const [b, e] = header[name].data_offsets;
      parts.push(data.subarray(b, e));
      rewritten[name] = { ...header[name], data_offsets: [offset, offset + e - b] };
      offset += e - b;
    }
    const copy = TinyTransformer.fromSafetensors(join(rewritten, Buffer.concat(parts)));
    assert.deepEqual(copy.stateDict(), model.stateDict());
    copy.dispose();
  });

  it("stateDictShapes (the reader's expectation) matches real models of every variant", () => {
    for (const variant of [
      {},
      { mlp: false },
      { norm: 'post' },
      { norm: 'none', positional: 'none' },
      { positional: 'sinusoidal', numLayers: 3 },
    ]) {
      const m = new TinyTransformer({ ...config, ...variant });
      assert.deepEqual(
        stateDictShapes(m.config),
        Object.entries(m.stateDict()).map(([n, t]) => [n, t.shape]),
        JSON.stringify(variant),
      );
      m.dispose();
    }
  });
});

describe('fromSafetensors refuses hostile files before allocating', () => {
  const model = new TinyTransformer(config);
  const good = model.toSafetensors();
  const { header, data } = split(good);
  model.dispose();

  function refuse(bytes, message) {
    const before = memoryStats();
    assert.throws(
      () => TinyTransformer.fromSafetensors(bytes),
      (e) => e instanceof AttentionError && e.code === 'INVALID_ARGUMENT' && message.test(e.message),
      String(message),
    );
    assert.equal(memoryStats().heapUsedBytes, before.heapUsedBytes, `heap after ${message}`);
    assert.equal(memoryStats().liveHandles, before.liveHandles, `handles after ${message}`);
  }
  const edit = (name, change) => join({ ...header, [name]: { ...header[name], ...change } }, data);
  const withConfig = (c) =>
    join(
      {
        ...header,
        __metadata__: { ...header.__metadata__, config: typeof c === 'string' ? c : JSON.stringify(c) },
      },
      data,
    );

  it('not bytes, truncated, header length past the end or over 100 MB', () => {
    refuse('file', /bytes must be an ArrayBuffer or a Uint8Array, got "file"/);
    refuse(good.subarray(0, 5), /5 bytes, fewer than the 8 of the header length/);
    refuse(good.subarray(0, 100), /header length \d+ runs past the end of the 100-byte file/);
    refuse(good.subarray(0, good.length - 4), /the data has \d+ bytes|out of range/);
    const huge = good.slice();
    new DataView(huge.buffer).setUint32(4, 1, true); // 2^32 + n
    refuse(huge, /header length 42949\d+ is over the limit of 100000000 bytes/);
  });

  it('bad JSON, a header that is not an object, no or the wrong metadata', () => {
    const bad = good.slice();
    bad[8] = 0x5b; // '[' where '{' was: no longer JSON
    refuse(bad, /the header is not valid JSON/);
    refuse(join([1, 2], new Uint8Array(0)), /the header is not a JSON object/);
    const { __metadata__: _, ...noMeta } = header;
    refuse(join(noMeta, data), /no __metadata__ object/);
    refuse(
      join({ ...header, __metadata__: { ...header.__metadata__, format: 'pt' } }, data),
      /__metadata__.format must be "attention-wasm\/tiny-transformer", got "pt"/,
    );
  });

  it('a tensor of another dtype, offsets out of range, overlapping, a gap, trailing bytes, a size unlike its shape', () => {
    refuse(
      edit('head.bias', { dtype: 'F64' }),
      /tensor "head.bias" has dtype "F64"; "F32", "F16" and "BF16" are supported/,
    );
    refuse(
      edit('head.bias', { dtype: 'F16' }),
      /tensor "head.bias" has 28 bytes but shape \[7\] needs 14 as F16/,
    );
    refuse(
      edit('head.bias', { data_offsets: [data.length - 28, data.length + 4] }),
      /tensor "head.bias" data_offsets .* are out of range/,
    );
    refuse(edit('head.bias', { data_offsets: [-4, 24] }), /out of range/);
    refuse(
      edit('head.bias', { data_offsets: [0, 28] }),
      /tensors "tok_emb.weight" and "head.bias" overlap|overlap/,
    );
    const [b] = header['head.bias'].data_offsets;
    refuse(edit('head.bias', { data_offsets: [b + 4, b + 32] }), /out of range/);
    refuse(
      join(header, Buffer.concat([data, new Uint8Array(8)])),
      /the data has 8 bytes after the last tensor/,
    );
    const hb = header['head.weight'].data_offsets;
    refuse(
      join(
        { ...header, 'head.weight': { ...header['head.weight'], data_offsets: [hb[0] + 4, hb[1] + 4] } },
        Buffer.concat([data, new Uint8Array(4)]),
      ),
      /belong to no tensor \(the data must be contiguous\)|overlap/,
    );
    refuse(edit('head.bias', { shape: [6] }), /tensor "head.bias" has 28 bytes but shape \[6\] needs 24/);
  });

  it('NaN or ±Infinity weights', () => {
    const bad = good.slice();
    const at = bad.length - 4; // the last element of head.bias
    new DataView(bad.buffer).setFloat32(at, NaN, true);
    refuse(bad, /safetensors: .*head.bias.*NaN/);
    new DataView(bad.buffer).setFloat32(at, -Infinity, true);
    refuse(bad, /safetensors: .*head.bias/);
  });

  it("shapes or names unlike the config's state dict", () => {
    refuse(
      edit('head.bias', { shape: [1, 7] }),
      /tensor "head.bias" has shape \[1,7\] but the config needs \[7\]/,
    );
    const { 'ln_f.bias': lnb, ...missing } = header;
    const [mb, me] = lnb.data_offsets;
    const shifted = Object.fromEntries(
      Object.entries(missing).map(([n, e]) => [
        n,
        n === '__metadata__' || e.data_offsets[0] < mb
          ? e
          : { ...e, data_offsets: [e.data_offsets[0] - (me - mb), e.data_offsets[1] - (me - mb)] },
      ]),
    );
    refuse(
      join(shifted, Buffer.concat([data.subarray(0, mb), data.subarray(me)])),
      /tensor "ln_f.bias" is missing/,
    );
    refuse(
      join(
        { ...header, extra: { dtype: 'F32', shape: [1], data_offsets: [data.length, data.length + 4] } },
        Buffer.concat([data, new Uint8Array(4)]),
      ),
      /tensor "extra" is not a parameter of this config/,
    );
  });

  it('an invalid config', () => {
    const c = JSON.parse(header.__metadata__.config);
    refuse(withConfig('{"vocabSize": 7,'), /__metadata__.config is invalid: .*JSON/);
    refuse(
      withConfig({ ...c, heads: 2 }),
      /__metadata__.config is invalid: unknown TinyTransformer config key 'heads'/,
    );
    refuse(withConfig({ ...c, numLayers: 2 ** 31 - 1 }), /config numLayers = 2147483647 is not in \[1, 64\]/);
    refuse(withConfig({ ...c, numHeads: 3 }), /config numHeads 3 does not divide dModel 8/);
    refuse(withConfig({ ...c, dModel: 100000 }), /config dModel = 100000 is not in \[1, 65536\]/);
    refuse(withConfig({ ...c, numLayers: 1 }), /tensor "blocks.1.\S+" is not a parameter of this config/);
    refuse(withConfig({ ...c, positional: 'none' }), /tensor "pos_emb.weight" is not a parameter/);
    refuse(
      withConfig({ ...c, vocabSize: 6 }),
      /tensor "tok_emb.weight" has shape \[7,8\] but the config needs \[6,8\]/,
    );
  });
});

// float32 → binary16 / bfloat16 bits (round to nearest even), written here without the library.
function toHalfBits(x) {
  const f32 = new Float32Array([x]),
    u32 = new Uint32Array(f32.buffer)[0];
  const sign = (u32 >>> 16) & 0x8000,
    abs = Math.abs(x);
  if (abs === 0) return sign;
  const e = Math.floor(Math.log2(abs));
  if (e < -14) return sign | Math.round(abs / 2 ** -24); // subnormal
  const m = Math.round((abs / 2 ** e - 1) * 1024);
  return m === 1024 ? sign | ((e + 16) << 10) : sign | ((e + 15) << 10) | m;
}
const halfValue = (bits) => {
  const e = (bits >> 10) & 31,
    m = bits & 1023,
    s = bits & 0x8000 ? -1 : 1;
  return e === 0 ? s * m * 2 ** -24 : s * (1 + m / 1024) * 2 ** (e - 15);
};
function toBfloatBits(x) {
  const u = new Uint32Array(new Float32Array([x]).buffer)[0];
  return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
}
const bfloatValue = (bits) => new Float32Array(new Uint32Array([bits << 16]).buffer)[0];

describe('F16 and BF16 files (what presets use)', () => {
  for (const [dtype, toBits, value] of [
    ['F16', toHalfBits, halfValue],
    ['BF16', toBfloatBits, bfloatValue],
  ]) {
    it(`${dtype}: read and widened exactly to float32; metadata readable alone`, () => {
      const model = new TinyTransformer(config);
      const { header } = split(model.toSafetensors());
      const sd = model.stateDict();
      model.dispose();
      const chunks = [];
      let offset = 0;
      const h2 = { __metadata__: { ...header.__metadata__, preset: '{"name":"t"}' } };
      for (const [name, t] of Object.entries(sd)) {
        const bytes = new Uint8Array(2 * t.data.length);
        t.data.forEach((v, i) => new DataView(bytes.buffer).setUint16(2 * i, toBits(v), true));
        h2[name] = { dtype, shape: t.shape, data_offsets: [offset, offset + bytes.length] };
        offset += bytes.length;
        chunks.push(bytes);
      }
      const file = join(h2, Buffer.concat(chunks));
      assert.deepEqual(readSafetensorsMetadata(file).preset, '{"name":"t"}');
      const loaded = TinyTransformer.fromSafetensors(file);
      const got = loaded.stateDict();
      for (const [name, t] of Object.entries(sd)) {
        t.data.forEach((v, i) =>
          assert.equal(got[name].data[i], Math.fround(value(toBits(v))), `${name}[${i}]`),
        );
      }
      loaded.dispose();
    });
  }
});
