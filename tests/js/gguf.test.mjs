// The GGUF reader (src/js/formats/gguf.js): files written by the test's own writer (gguf-writer.js) read
// back — metadata of every value type, tensor infos, data ranges, versions 2 and 3, alignment,
// Blobs with headers larger than the first read, split files — and the ggml type table against
// the C++ kernels' one. Hostile files are in gguf-hostile.test.mjs.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseGGUF, GGML_TYPES } from '../../src/js/formats/gguf.js';
import { WEIGHT_FORMAT } from '../../src/js/constants.js';
import { parseWeightTypes } from '../../scripts/gen-constants-tables.mjs';
import { writeGGUF, tensorBytes } from './gguf-writer.js';

const TENSORS = [
  { name: 'token_embd.weight', dims: [64, 3], type: 0 }, // F32
  { name: 'blk.0.attn_q.weight', dims: [256, 2], type: 12 }, // Q4_K
  { name: 'blk.0.attn_k.weight', dims: [32, 4], type: 8 }, // Q8_0
  { name: 'blk.0.ffn_down.weight', dims: [256, 1, 2], type: 14 }, // Q6_K
  { name: 'output_norm.weight', dims: [64], type: 1 }, // F16
  { name: 'blk.0.attn_v.weight', dims: [32, 2], type: 20 }, // IQ4_NL
  { name: 'blk.0.ffn_up.weight', dims: [256, 2], type: 16 }, // IQ2_XXS: read, not dequantized
];

const METADATA = [
  ['general.architecture', 'string', 'llama'],
  ['general.name', 'string', 'Tëst → 模型'],
  ['u8', 'uint8', 255],
  ['i8', 'int8', -128],
  ['u16', 'uint16', 65535],
  ['i16', 'int16', -32768],
  ['u32', 'uint32', 4294967295],
  ['i32', 'int32', -2147483648],
  ['f32', 'float32', 0.5],
  ['yes', 'bool', true],
  ['no', 'bool', false],
  ['u64', 'uint64', 2n ** 40n],
  ['u64.big', 'uint64', 2n ** 64n - 1n],
  ['i64', 'int64', -(2n ** 40n)],
  ['f64', 'float64', Math.PI],
  ['tokens', 'array<string>', ['<s>', 'hello', ' wörld', '']],
  ['scores', 'array<float32>', [0, -1.5, 2.25]],
  ['types', 'array<int32>', [1, -2, 3]],
  ['bytes', 'array<uint8>', [1, 2, 255]],
  ['flags', 'array<bool>', [true, false]],
  ['big', 'array<uint64>', [1n, 2n ** 63n]],
  ['halves', 'array<float64>', [0.25]],
  ['empty', 'array<string>', []],
  ['__proto__', 'string', 'a key like any other'],
];

// The data bytes a tensor of a file from the writer has (its region of the file).
function dataOf(bytes, t) {
  return bytes.subarray(t.begin, t.end);
}

describe('parseGGUF', () => {
  it('reads metadata of every value type, tensor infos and tensor bytes (version 3)', async () => {
    const bytes = writeGGUF({ metadata: METADATA, tensors: TENSORS });
    const g = await parseGGUF(bytes);
    assert.equal(g.version, 3);
    assert.equal(g.alignment, 32);
    const m = g.metadata;
    assert.equal(Object.getPrototypeOf(m), null);
    assert.equal(m['general.name'], 'Tëst → 模型');
    assert.deepEqual(
      [m.u8, m.i8, m.u16, m.i16, m.u32, m.i32, m.f32],
      [255, -128, 65535, -32768, 4294967295, -2147483648, 0.5],
    );
    assert.deepEqual(
      [m.yes, m.no, m.u64, m['u64.big'], m.i64, m.f64],
      [true, false, 2 ** 40, 2n ** 64n - 1n, -(2 ** 40), Math.PI],
    );
    assert.deepEqual(m.tokens, ['<s>', 'hello', ' wörld', '']);
    assert.deepEqual(m.scores, new Float32Array([0, -1.5, 2.25]));
    assert.deepEqual(m.types, new Int32Array([1, -2, 3]));
    assert.deepEqual(m.bytes, new Uint8Array([1, 2, 255]));
    assert.deepEqual(m.flags, [true, false]);
    assert.deepEqual(m.big, new BigUint64Array([1n, 2n ** 63n]));
    assert.deepEqual(m.halves, new Float64Array([0.25]));
    assert.deepEqual(m.empty, []);
    assert.equal(m.__proto__, 'a key like any other');
    assert.equal(g.metadataTypes.u32, 'uint32');
    assert.equal(g.metadataTypes.tokens, 'array<string>');
    assert.equal(g.metadataTypes.flags, 'array<bool>');
    assert.deepEqual(
      Object.keys(m),
      METADATA.map(([k]) => k),
    );
    assert.deepEqual(
      g.tensors.map((t) => [t.name, t.typeName, t.dims, t.shape, t.bytes]),
      TENSORS.map((t) => [
        t.name,
        GGML_TYPES.find((x) => x.id === t.type).name,
        t.dims,
        [...t.dims].reverse(),
        tensorBytes(t.type, t.dims),
      ]),
    );
    assert.equal(
      g.tensorBytes,
      TENSORS.reduce((n, t) => n + tensorBytes(t.type, t.dims), 0),
    );
    assert.equal(g.tensors[3].elements, 512);
    assert.equal(g.parts.length, 1);
    assert.equal(g.parts[0].dataStart % 32, 0);
    assert.equal(g.tensors.at(-1).end, bytes.length, 'the last tensor ends the file');
    for (const t of g.tensors) {
      assert.equal(t.begin, g.parts[0].dataStart + t.offset);
      assert.equal(t.offset % 32, 0);
      assert.deepEqual(await g.readTensor(t), dataOf(bytes, t));
      assert.deepEqual(await g.readTensor(t.name, 3, 17), dataOf(bytes, t).subarray(3, 17));
    }
  });

  it('reads version 2, a larger alignment, and the same file from an ArrayBuffer, a view at an offset and a Blob', async () => {
    const bytes = writeGGUF({
      version: 2,
      alignment: 64,
      metadata: [['general.alignment', 'uint32', 64]],
      tensors: TENSORS.slice(0, 3),
    });
    const shifted = new Uint8Array(bytes.length + 5);
    shifted.set(bytes, 5);
    for (const input of [
      bytes,
      bytes.slice().buffer,
      shifted.subarray(5),
      new Blob([bytes]),
      new File([bytes], 'm.gguf'),
    ]) {
      const g = await parseGGUF(input);
      assert.equal(g.version, 2);
      assert.equal(g.alignment, 64);
      assert.equal(g.parts[0].dataStart % 64, 0);
      for (const t of g.tensors) {
        assert.equal(t.offset % 64, 0);
        assert.deepEqual(await g.readTensor(t), dataOf(bytes, t));
      }
    }
  });

  it('reads a Blob whose header is larger than the first read (a 2.5 MB vocabulary)', async () => {
    const tokens = Array.from({ length: 150000 }, (_, i) => `token_${i}`);
    const bytes = writeGGUF({
      metadata: [['tokenizer.ggml.tokens', 'array<string>', tokens]],
      tensors: TENSORS.slice(0, 2),
    });
    assert.ok(bytes.length > 2 << 20);
    const g = await parseGGUF(new Blob([bytes]));
    assert.equal(g.metadata['tokenizer.ggml.tokens'].length, 150000);
    assert.equal(g.metadata['tokenizer.ggml.tokens'][149999], 'token_149999');
    assert.deepEqual(await g.readTensor('blk.0.attn_q.weight'), dataOf(bytes, g.tensors[1]));
  });

  it('refuses a range outside a tensor and a tensor not in the file', async () => {
    const g = await parseGGUF(writeGGUF({ tensors: TENSORS.slice(0, 1) }));
    const t = g.tensors[0];
    for (const [a, b] of [
      [-1, 4],
      [0, t.bytes + 1],
      [5, 4],
      [0.5, 2],
    ])
      await assert.rejects(g.readTensor(t, a, b), {
        code: 'INVALID_ARGUMENT',
        message: /not a range of tensor "token_embd.weight"/,
      });
    await assert.rejects(g.readTensor('nope'), { code: 'INVALID_ARGUMENT', message: /no tensor "nope"/ });
    await assert.rejects(g.readTensor({ ...t }), { code: 'INVALID_ARGUMENT', message: /no tensor/ });
  });
});

// Three parts of one file, as llama.cpp's gguf-split writes them: the metadata in the first.
function splitParts({ count = 3, total = 4 } = {}) {
  const keys = (no) => [
    ['split.no', 'uint16', no],
    ['split.count', 'uint16', count],
    ['split.tensors.count', 'int32', total],
  ];
  return [
    writeGGUF({
      metadata: [['general.architecture', 'string', 'qwen3'], ...keys(0)],
      tensors: TENSORS.slice(0, 2),
    }),
    writeGGUF({ metadata: keys(1), tensors: TENSORS.slice(2, 3) }),
    writeGGUF({ metadata: keys(2), tensors: TENSORS.slice(3, 4) }),
  ];
}

describe('parseGGUF of a split file', () => {
  it('reads the parts given in any order, tensors in part order, each read from its part', async () => {
    const parts = splitParts();
    const files = parts.map((b, i) => new File([b], `m-0000${i + 1}-of-00003.gguf`));
    const g = await parseGGUF([files[2], files[0], files[1]]);
    assert.equal(g.metadata['general.architecture'], 'qwen3');
    assert.deepEqual(
      g.tensors.map((t) => t.name),
      TENSORS.slice(0, 4).map((t) => t.name),
    );
    assert.deepEqual(
      g.tensors.map((t) => t.part),
      [0, 0, 1, 2],
    );
    assert.equal(g.parts.length, 3);
    for (const t of g.tensors)
      assert.deepEqual(await g.readTensor(t), parts[t.part].subarray(t.begin, t.end));
  });

  const refusals = [
    ['one part alone', () => splitParts()[1], /this is part 2 of 3 of a split GGUF file: give all 3 parts/],
    ['a part missing', () => splitParts().slice(0, 2), /split.count is 3, but 2 parts were given/],
    [
      'a part twice',
      () => {
        const p = splitParts();
        return [p[0], p[1], p[1]];
      },
      /part 3 of 3.*it is part 2 of 3, as is another/,
    ],
    [
      'a wrong tensor total',
      () => splitParts({ total: 5 }),
      /split.tensors.count is 5, but the 3 parts hold 4 tensors/,
    ],
    [
      'a part that is not split',
      () => [splitParts()[0], writeGGUF({}), splitParts()[2]],
      /part 2 of 3: split.count is missing/,
    ],
    [
      'a tensor in two parts',
      () => {
        const p = splitParts();
        p[2] = writeGGUF({
          metadata: [
            ['split.no', 'uint16', 2],
            ['split.count', 'uint16', 3],
          ],
          tensors: TENSORS.slice(0, 1),
        });
        return p;
      },
      /part 3 of 3: tensor "token_embd.weight" is also in gguf part 1 of 3/,
    ],
    ['an empty list', () => [], /no file given/],
  ];
  for (const [what, files, message] of refusals) {
    it(`refuses ${what}`, async () => {
      await assert.rejects(parseGGUF(files()), (error) => {
        assert.equal(error.name, 'AttentionError');
        assert.equal(error.code, 'INVALID_ARGUMENT');
        assert.match(error.message, message);
        return true;
      });
    });
  }
});

describe('GGML_TYPES', () => {
  it("is the C++ kernels' table (src/kernels/weight_types.h kTypes), entry for entry", () => {
    const cpp = readFileSync(new URL('../../src/kernels/weight_types.h', import.meta.url), 'utf8');
    const entries = parseWeightTypes(cpp);
    assert.ok(entries.length > 30);
    assert.deepEqual(
      GGML_TYPES.map((t) => ({ ...t })),
      entries,
    );
    assert.deepEqual(
      Object.keys(WEIGHT_FORMAT),
      entries.filter((t) => t.dequantized).map((t) => t.name),
    );
  });
});
