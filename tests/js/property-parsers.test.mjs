// The JS parsers of outside data under fast-check: the safetensors decoder behind
// TinyTransformer.fromSafetensors (mutated valid files, forged headers, arbitrary bytes) and the
// widgets' tokenizer (arbitrary Unicode). A decode returns a model or throws AttentionError
// INVALID_ARGUMENT / TOO_LARGE naming the problem — never another exception — and after a throw the
// heap has neither grown (nothing large was allocated first) nor kept a byte or a handle. New
// parsers (presets, tokenizer.json) join by adding a `describe` here.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  init,
  AttentionError,
  TinyTransformer,
  memoryStats,
  readSafetensorsMetadata,
} from '../../src/js/index.js';
import { tokenizeWithInfo, MAX_TOKENS } from '../../web/widgets/tokenizer.js';

await init();

const SEED = Number(process.env.PROPERTY_SEED ?? Math.floor(Math.random() * 2 ** 31));
const RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);
console.log(`parser property tests: seed ${SEED}, ${RUNS} runs each`);
const params = { seed: SEED, numRuns: RUNS };

const model = new TinyTransformer({ vocabSize: 5, maxLength: 4, dModel: 4, numHeads: 2, seed: 3 });
const VALID = model.toSafetensors();
model.dispose();
const headerLength = Number(new DataView(VALID.buffer, VALID.byteOffset).getBigUint64(0, true));
const HEADER = JSON.parse(new TextDecoder().decode(VALID.subarray(8, 8 + headerLength)));
const DATA = VALID.subarray(8 + headerLength);

/** A safetensors file from a header object and data bytes. */
function fileOf(header, data = DATA, lengthOverride) {
  const json = new TextEncoder().encode(typeof header === 'string' ? header : JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(lengthOverride ?? json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

/** Decodes; a throw must be INVALID_ARGUMENT / TOO_LARGE with nothing grown, kept or leaked. */
function decodeGuarded(bytes) {
  const before = memoryStats();
  let m;
  try {
    m = TinyTransformer.fromSafetensors(bytes);
  } catch (error) {
    if (!(error instanceof AttentionError))
      throw new Error(`not an AttentionError: ${error?.stack ?? error}`);
    assert.ok(['INVALID_ARGUMENT', 'TOO_LARGE'].includes(error.code), `${error.code}: ${error.message}`);
    assert.match(error.message, /safetensors|config|parameter|memory|TinyTransformer/i);
    const after = memoryStats();
    assert.equal(after.heapBytes, before.heapBytes, `the heap grew before refusing: ${error.message}`);
    assert.equal(after.heapUsedBytes, before.heapUsedBytes);
    assert.equal(after.liveHandles, before.liveHandles);
    return false;
  }
  m.dispose();
  return true;
}

describe('safetensors decoder under hostile files', () => {
  it('the valid file decodes (the generator starts from a real file)', () => assert.ok(decodeGuarded(VALID)));

  it('byte flips, truncations and extensions of a valid file', () => {
    const mutation = fc.record({
      flips: fc.array(fc.tuple(fc.nat(VALID.length - 1), fc.integer({ min: 0, max: 255 })), { maxLength: 6 }),
      cut: fc.option(fc.nat(VALID.length)),
      extra: fc.uint8Array({ maxLength: 16 }),
    });
    fc.assert(
      fc.property(mutation, ({ flips, cut, extra }) => {
        let bytes = Uint8Array.from(VALID);
        for (const [at, value] of flips) bytes[at] = value;
        if (cut != null) bytes = bytes.subarray(0, cut);
        const out = new Uint8Array(bytes.length + extra.length);
        out.set(bytes);
        out.set(extra, bytes.length);
        decodeGuarded(out);
      }),
      params,
    );
  });

  it('forged headers: dtypes, shapes, offsets, lengths, metadata and configs', () => {
    const names = Object.keys(HEADER).filter((n) => n !== '__metadata__');
    const entryEdit = fc.record({
      name: fc.constantFrom(...names),
      dtype: fc.option(fc.constantFrom('F16', 'BF16', 'F64', 'I32', 'U8', '', 7, null)),
      shape: fc.option(
        fc.array(fc.oneof(fc.integer({ min: -2, max: 9 }), fc.constant(2 ** 40), fc.constant(1.5)), {
          maxLength: 4,
        }),
      ),
      offsets: fc.option(
        fc.tuple(
          fc.integer({ min: -8, max: 4096 }),
          fc.oneof(fc.integer({ min: -8, max: 4096 }), fc.constant(2 ** 53)),
        ),
      ),
    });
    const configEdit = fc.option(
      fc.record({
        key: fc.constantFrom(
          'vocabSize',
          'maxLength',
          'dModel',
          'numHeads',
          'numLayers',
          'mlp',
          'positional',
          'norm',
          'seed',
          'extra',
        ),
        value: fc.oneof(
          fc.integer({ min: -5, max: 5 }),
          fc.constant(1e9),
          fc.constant(2 ** 31),
          fc.string({ maxLength: 4 }),
          fc.boolean(),
          fc.constant(null),
        ),
      }),
    );
    const forged = fc.record({
      edits: fc.array(entryEdit, { maxLength: 3 }),
      config: configEdit,
      dropName: fc.option(fc.constantFrom(...names)),
      lengthOverride: fc.option(fc.oneof(fc.nat(4000), fc.constant(2 ** 53), fc.constant(0))),
      metadata: fc.option(
        fc.oneof(
          fc.constant(null),
          fc.constant([]),
          fc.constant({ format: 'x' }),
          fc.constant({ format: HEADER.__metadata__.format, config: '{' }),
        ),
      ),
    });
    fc.assert(
      fc.property(forged, ({ edits, config, dropName, lengthOverride, metadata }) => {
        const header = structuredClone(HEADER);
        for (const e of edits) {
          if (e.dtype != null) header[e.name].dtype = e.dtype;
          if (e.shape != null) header[e.name].shape = e.shape;
          if (e.offsets != null) header[e.name].data_offsets = e.offsets;
        }
        if (config)
          header.__metadata__.config = JSON.stringify({
            ...JSON.parse(HEADER.__metadata__.config),
            [config.key]: config.value,
          });
        if (dropName) delete header[dropName];
        if (metadata !== null && metadata !== undefined) header.__metadata__ = metadata;
        decodeGuarded(fileOf(header, DATA, lengthOverride ?? undefined));
      }),
      params,
    );
  });

  it('arbitrary bytes and arbitrary JSON headers', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        decodeGuarded(bytes);
      }),
      params,
    );
    fc.assert(
      fc.property(fc.json({ maxDepth: 3 }), (json) => {
        decodeGuarded(fileOf(json));
      }),
      params,
    );
  });
});

describe("readSafetensorsMetadata (a preset's description) under hostile headers", () => {
  it('returns an object of strings or throws INVALID_ARGUMENT, never anything else', () => {
    const file = fc.oneof(
      fc.uint8Array({ maxLength: 64 }),
      fc.json({ maxDepth: 3 }).map((j) => fileOf(j)),
      fc
        .dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string(), fc.integer(), fc.constant(null)), {
          maxKeys: 4,
        })
        .map((meta) => fileOf({ __metadata__: meta })),
    );
    fc.assert(
      fc.property(file, (bytes) => {
        let meta;
        try {
          meta = readSafetensorsMetadata(bytes);
        } catch (error) {
          if (!(error instanceof AttentionError))
            throw new Error(`not an AttentionError: ${error?.stack ?? error}`);
          assert.equal(error.code, 'INVALID_ARGUMENT');
          return;
        }
        assert.ok(
          meta && typeof meta === 'object' && Object.values(meta).every((v) => typeof v === 'string'),
        );
      }),
      params,
    );
  });
});

describe('the widgets tokenizer under arbitrary text', () => {
  it('returns non-empty, whitespace-free tokens in order, at most MAX_TOKENS, never throws', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 200 }),
        fc.integer({ min: 1, max: 600 }),
        (text, max) => {
          const { tokens, truncated } = tokenizeWithInfo(text, Math.min(max, MAX_TOKENS));
          assert.ok(tokens.length <= Math.min(max, MAX_TOKENS));
          let at = 0;
          for (const t of tokens) {
            assert.ok(t.length > 0 && !/\s/u.test(t), JSON.stringify(t));
            const found = text.indexOf(t, at);
            assert.ok(found >= at, 'tokens are substrings, in order');
            at = found + t.length;
          }
          if (!truncated) assert.equal(text.slice(at).trim() === '' || tokens.length < MAX_TOKENS, true);
        },
      ),
      params,
    );
  });
});
