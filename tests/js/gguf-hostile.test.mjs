// Hostile GGUF files refused by parseGGUF (src/js/formats/gguf.js) with INVALID_ARGUMENT naming the problem
// before anything large is allocated: out-of-range counts, lengths, dimensions, offsets and
// alignment, tensors past the end or overlapping, partial blocks, duplicate names, unknown types,
// big-endian and old files, every truncation of a file; and random corruption never throws
// anything but an AttentionError.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseGGUF } from '../../src/js/formats/gguf.js';
import { writeGGUF } from './gguf-writer.js';

const F32 = 0;
const Q4_K = 12;
const tensor = (name, dims = [8, 2], type = F32, extra = {}) => ({ name, dims, type, ...extra });
const huge = 2n ** 63n;

// [what, file bytes, message]
const CASES = [
  [
    'a file that is not GGUF',
    () => new TextEncoder().encode('{"a": 1}________'),
    /not a GGUF file: it starts with bytes 7b 22 61 22/,
  ],
  ['a pre-GGUF ggml file', () => writeGGUF({ magic: 'GGJT' }), /ggml file from before GGUF \(magic "GGJT"\)/],
  [
    'a big-endian file',
    () => writeGGUF({ littleEndian: false, tensors: [tensor('a')] }),
    /big-endian GGUF file \(version 3 byte-swapped\)/,
  ],
  ['version 1', () => writeGGUF({ version: 1 }), /GGUF version 1 is not read/],
  ['version 4', () => writeGGUF({ version: 4 }), /GGUF version 4 is not read \(versions 2 and 3 are\)/],
  [
    'a tensor count past the file',
    () => writeGGUF({ tensorCount: huge }),
    /the tensor count is 9223372036854775808, more than the file can hold/,
  ],
  [
    'a metadata count past the file',
    () => writeGGUF({ kvCount: 1000 }),
    /the metadata count is 1000, more than the file can hold/,
  ],
  [
    'a key length past the file',
    () => keyLength(2n ** 64n - 1n),
    /the length of the key of metadata entry 0 is 18446744073709551615, more than the \d+ bytes left/,
  ],
  [
    'a string value length past the file',
    () => stringLength(1000n),
    /the length of the value of metadata "k" is 1000, more than the \d+ bytes left/,
  ],
  [
    'an array count past the file',
    () => arrayCount(huge),
    /the element count of the value of metadata "a" is 9223372036854775808, more than the bytes left/,
  ],
  [
    'an unknown value type',
    () => writeGGUF({ metadata: [['k', 'uint8', 0, 13]] }),
    /the value of metadata "k" has unknown value type 13/,
  ],
  [
    'an unknown array element type',
    () => writeGGUF({ metadata: [['k', 'array<99>', []]] }),
    /the value of metadata "k"'s elements has unknown value type 99/,
  ],
  [
    'an array of arrays',
    () => writeGGUF({ metadata: [['k', 'array<array<uint8>>', [[1]]]] }),
    /"k" is an array of arrays/,
  ],
  [
    'a bool that is not 0 or 1',
    () => writeGGUF({ metadata: [['k', 'bool', 2]] }),
    /"k" is a bool of value 2/,
  ],
  [
    'a key that is not UTF-8',
    () => writeGGUF({ metadata: [[new Uint8Array([0xff, 0xfe]), 'uint8', 0]] }),
    /the key of metadata entry 0 is not valid UTF-8/,
  ],
  [
    'a duplicate key',
    () =>
      writeGGUF({
        metadata: [
          ['k', 'uint8', 0],
          ['k', 'uint8', 1],
        ],
      }),
    /metadata key "k" appears twice/,
  ],
  ['general.alignment 0', () => aligned('uint32', 0), /general.alignment 0 is not a power of two/],
  ['general.alignment 48', () => aligned('uint32', 48), /general.alignment 48 is not a power of two/],
  [
    'general.alignment of another type',
    () => aligned('float32', 32),
    /general.alignment must be a uint32, got a float32/,
  ],
  [
    '5 dimensions',
    () => writeGGUF({ tensors: [tensor('t', [1, 1, 1, 1, 1])] }),
    /tensor "t" has 5 dimensions, more than ggml's 4/,
  ],
  [
    'a dimension past 2^53',
    () => writeGGUF({ tensors: [tensor('t', [2n ** 60n], F32, { data: new Uint8Array(4) })] }),
    /dimension 0 of tensor "t" is 1152921504606846976, more than 2\^53 - 1/,
  ],
  [
    'dimensions of more than 2^53 elements',
    () => writeGGUF({ tensors: [tensor('t', [2 ** 30, 2 ** 30], F32, { data: new Uint8Array(4) })] }),
    /tensor "t" has dimensions \[1073741824,1073741824\] of more than 2\^53 elements/,
  ],
  [
    'an unknown ggml type',
    () => writeGGUF({ tensors: [tensor('t', [8], 99, { data: new Uint8Array(32) })] }),
    /tensor "t" has unknown ggml type 99/,
  ],
  [
    'rows that are not whole blocks',
    () => writeGGUF({ tensors: [tensor('t', [100, 2], Q4_K, { data: new Uint8Array(288) })] }),
    /tensor "t" has rows of 100 elements, not a whole number of Q4_K blocks of 256/,
  ],
  [
    'an offset that is not aligned',
    () => writeGGUF({ tensors: [tensor('a'), tensor('b', [8, 2], F32, { offset: 80 })] }),
    /tensor "b" has data offset 80, not a multiple of the alignment 32/,
  ],
  [
    'an offset past the file',
    () => writeGGUF({ tensors: [tensor('a', [8], F32, { offset: 2n ** 40n })] }),
    /the data offset of tensor "a" is 1099511627776, more than the file's \d+ bytes/,
  ],
  [
    'a tensor past the end',
    () => writeGGUF({ tensors: [tensor('a', [64], F32, { data: new Uint8Array(100) })] }),
    /tensor "a" \(F32 \[64\], 256 bytes at byte \d+\) runs past the end of the \d+-byte file/,
  ],
  [
    'overlapping tensors',
    () => writeGGUF({ tensors: [tensor('a', [64]), tensor('b', [8], F32, { offset: 64 })] }),
    /tensors "a" and "b" overlap \(bytes \d+ to \d+\)/,
  ],
  [
    'a duplicate tensor name',
    () => writeGGUF({ tensors: [tensor('a'), tensor('a')] }),
    /tensor "a" appears twice/,
  ],
  [
    'a tensor name that is not UTF-8',
    () => writeGGUF({ tensors: [tensor(new Uint8Array([0xc3]))] }),
    /the name of tensor 0 is not valid UTF-8/,
  ],
  [
    'a truncated header',
    () => writeGGUF({ metadata: [['k', 'string', 'value']] }).subarray(0, 40),
    /the file ends \(at byte 40\) inside the length of the value of metadata "k", which needs bytes up to 45/,
  ],
];

// A file whose first key claims `n` bytes.
function keyLength(n) {
  const b = writeGGUF({ metadata: [['k', 'uint8', 0]] });
  new DataView(b.buffer).setBigUint64(24, n, true);
  return b;
}

// A file whose string value "k" claims `n` bytes.
function stringLength(n) {
  const b = writeGGUF({ metadata: [['k', 'string', 'v']] });
  new DataView(b.buffer).setBigUint64(24 + 8 + 1 + 4, n, true);
  return b;
}

// A file whose array "a" claims `n` elements.
function arrayCount(n) {
  const b = writeGGUF({ metadata: [['a', 'array<uint32>', [1, 2]]] });
  new DataView(b.buffer).setBigUint64(24 + 8 + 1 + 4 + 4, n, true);
  return b;
}

const aligned = (type, value) =>
  writeGGUF({ metadata: [['general.alignment', type, value]], tensors: [tensor('a')] });

async function refuses(input, message) {
  await assert.rejects(parseGGUF(input), (error) => {
    assert.equal(error.name, 'AttentionError', error.stack);
    assert.equal(error.code, 'INVALID_ARGUMENT');
    assert.match(error.message, message);
    return true;
  });
}

describe('parseGGUF refuses hostile files', () => {
  for (const [what, make, message] of CASES) {
    it(`${what}, from bytes and from a Blob`, async () => {
      const bytes = make();
      await refuses(bytes, new RegExp(`^gguf: .*${message.source}`));
      await refuses(new File([bytes], 'x.gguf'), new RegExp(`^gguf \\(x.gguf\\): .*${message.source}`));
    });
  }

  it('refuses what is not a file', async () => {
    for (const input of [null, 'model.gguf', 42, {}])
      await refuses(input, /the file must be a File, a Blob, an ArrayBuffer/);
  });

  it('refuses every truncation of a valid file', async () => {
    const bytes = writeGGUF({
      metadata: [
        ['general.architecture', 'string', 'llama'],
        ['scores', 'array<float32>', [1, 2, 3]],
      ],
      tensors: [tensor('a', [8]), tensor('b', [256], Q4_K)],
    });
    for (let n = 0; n < bytes.length; n++)
      await refuses(
        bytes.subarray(0, n),
        /the file ends|runs past the end|more than the file can hold|bytes left/,
      );
  });

  it('throws nothing but AttentionError for randomly corrupted files (fuzz)', async () => {
    const base = writeGGUF({
      metadata: [
        ['general.architecture', 'string', 'llama'],
        ['tokens', 'array<string>', ['a', 'bc']],
        ['n', 'uint32', 7],
      ],
      tensors: [tensor('a', [8]), tensor('b', [256, 2], Q4_K), tensor('c', [32], 8)],
    });
    let seed = 12345;
    const next = () => (seed = (seed * 1103515245 + 12345) >>> 0);
    let refused = 0;
    for (let i = 0; i < 2000; i++) {
      const b = base.slice();
      for (let k = 1 + (next() % 4); k > 0; k--) b[next() % 320] = next() >>> 24; // the header's bytes
      try {
        await parseGGUF(b);
      } catch (error) {
        assert.equal(error.name, 'AttentionError', error.stack);
        refused++;
      }
    }
    assert.ok(refused > 100, `${refused} of 2000 corrupted files refused`);
  });
});
