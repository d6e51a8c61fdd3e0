// Property tests of the JS API (fast-check): random shapes, options, masks and values.
// Every call either matches an independent float64 reference within a named tolerance (ordinary
// values) or throws AttentionError with a documented code — never another exception, never a NaN
// from finite inputs — and after a throw the heap's bytes in use and the live handles are where
// they were. The seed is printed, so a failure reproduces with PROPERTY_SEED=<seed>.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  init,
  AttentionError,
  Tensor,
  scaledDotProductAttention,
  scaledDotProductAttentionBackward,
  softmax,
  layerNorm,
  MultiHeadAttention,
  memoryStats,
  seededNormal,
} from '../../src/js/index.js';
import { isClose } from './close.js';

await init();
// The engine keeps one scratch block between calls, grown to the largest a call has needed (capped
// at 256 KB, attention_engine.h): a cache, not a leak. Grow it first with the largest case each
// property can draw, so that "bytes in use unchanged after a throw" measures everything else exactly.
function warmScratch() {
  const t = (shape, seed) => seededNormal(shape, seed);
  for (const needWeights of [true, false]) {
    for (const causal of [true, false]) {
      const q = t([3, 3, 6, 6], 1),
        k = t([3, 3, 6, 6], 2),
        v = t([3, 3, 6, 6], 3);
      const r = scaledDotProductAttention(q, k, v, { needWeights, causal });
      scaledDotProductAttentionBackward(q, k, v, r.output, { needWeights, causal });
    }
  }
  softmax(t([4, 40], 4));
  layerNorm(t([4, 40], 5));
  for (const numHeads of [1, 2, 3, 4]) {
    for (const layerNorm of [true, false]) {
      const mha = new MultiHeadAttention({ embedDim: 12, numHeads, layerNorm, residual: true });
      for (const causal of [true, false]) mha.forward(t([2, 5, 12], 6), null, null, { causal });
      mha.dispose();
    }
  }
}
warmScratch();

const SEED = Number(process.env.PROPERTY_SEED ?? Math.floor(Math.random() * 2 ** 31));
const RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);
console.log(`property tests: seed ${SEED}, ${RUNS} runs each (PROPERTY_SEED / PROPERTY_RUNS to change)`);
const params = { seed: SEED, numRuns: RUNS };

const CODES = new Set([
  'INVALID_ARGUMENT',
  'SHAPE_MISMATCH',
  'HEADS_DO_NOT_DIVIDE',
  'EMPTY_INPUT',
  'NON_FINITE',
  'TOO_LARGE',
  'INVALID_MASK',
  'UNKNOWN_PARAMETER',
]);
// float32 attention on values in [-4, 4] against float64: scores up to ~16·d rounded, then softmax.
const kSdpaTol = 2e-5;
const kSoftmaxTol = 1e-6;
const kLayerNormTol = 2e-5;

const SPECIAL = [NaN, Infinity, -Infinity, 3e38, -3e38, 1e-40, -0, 1e30, 65504, 1e20];
const ordinary = fc.float({ min: -4, max: 4, noNaN: true, noDefaultInfinity: true });
const hostile = fc.oneof(
  { weight: 6, arbitrary: ordinary },
  { weight: 1, arbitrary: fc.constantFrom(...SPECIAL) },
);

const numel = (shape) => shape.reduce((a, b) => a * b, 1);
const tensorOf = (valueArb, shape) =>
  fc
    .array(valueArb, { minLength: numel(shape), maxLength: numel(shape) })
    .map((v) => new Tensor(Float32Array.from(v), shape));

/** Runs `call`; a throw must be a documented AttentionError that leaks nothing. Returns the result or null. */
function guarded(call) {
  const before = memoryStats();
  try {
    return call();
  } catch (error) {
    if (!(error instanceof AttentionError))
      throw new Error(`not an AttentionError: ${error?.stack ?? error}`);
    assert.ok(CODES.has(error.code), `undocumented code ${error.code}`);
    assert.ok(error.message.length > 10, 'the message names the problem');
    const after = memoryStats();
    assert.equal(
      after.heapUsedBytes,
      before.heapUsedBytes,
      `heap bytes in use after ${error.code}: ${error.message}`,
    );
    assert.equal(after.liveHandles, before.liveHandles);
    return null;
  }
}

const allFinite = (a) => a.every(Number.isFinite);

/** softmax(q kᵀ · scale + masks) v in float64, batch by batch (lead dims flattened). */
function referenceSdpa(q, k, v, { causal, scale, mask }) {
  const [tq, dk] = q.shape.slice(-2),
    [tk, dv] = v.shape.slice(-2);
  const batches = numel(q.shape.slice(0, -2));
  const s = scale ?? 1 / Math.sqrt(dk);
  const out = new Float64Array(batches * tq * dv);
  for (let b = 0; b < batches; b++) {
    for (let i = 0; i < tq; i++) {
      const scores = [];
      for (let j = 0; j < tk; j++) {
        const allowed = (!causal || j <= i) && (!mask || mask[i * tk + j]);
        let dot = 0;
        for (let c = 0; c < dk; c++) dot += q.data[(b * tq + i) * dk + c] * k.data[(b * tk + j) * dk + c];
        scores.push(allowed ? dot * s : -Infinity);
      }
      const m = Math.max(...scores);
      if (m === -Infinity) continue; // fully masked row: zeros
      const e = scores.map((x) => Math.exp(x - m));
      const z = e.reduce((a, b2) => a + b2, 0);
      for (let j = 0; j < tk; j++)
        for (let c = 0; c < dv; c++) out[(b * tq + i) * dv + c] += (e[j] / z) * v.data[(b * tk + j) * dv + c];
    }
  }
  return out;
}

const sdpaCase = (valueArb) =>
  fc
    .record({
      lead: fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 2 }),
      tq: fc.integer({ min: 1, max: 6 }),
      tk: fc.integer({ min: 1, max: 6 }),
      dk: fc.integer({ min: 1, max: 6 }),
      dv: fc.integer({ min: 1, max: 6 }),
      causal: fc.boolean(),
      needWeights: fc.boolean(),
      scale: fc.option(fc.oneof(ordinary, fc.constantFrom(...SPECIAL))),
      masked: fc.boolean(),
      wrongK: fc.integer({ min: 0, max: 9 }),
    })
    .chain((c) =>
      fc.record({
        c: fc.constant(c),
        q: tensorOf(valueArb, [...c.lead, c.tq, c.dk]),
        k: tensorOf(valueArb, [...c.lead, c.tk, c.wrongK === 0 ? c.dk + 1 : c.dk]),
        v: tensorOf(valueArb, [...c.lead, c.tk, c.dv]),
        mask: fc.array(fc.boolean(), { minLength: c.tq * c.tk, maxLength: c.tq * c.tk }),
      }),
    );

describe('scaledDotProductAttention properties', () => {
  it('ordinary values: matches float64, or a documented error for a bad shape or scale', () => {
    fc.assert(
      fc.property(sdpaCase(ordinary), ({ c, q, k, v, mask }) => {
        const maskTensor = c.masked ? new Tensor(Uint8Array.from(mask, Number), [c.tq, c.tk]) : undefined;
        const r = guarded(() =>
          scaledDotProductAttention(q, k, v, {
            causal: c.causal,
            needWeights: c.needWeights,
            scale: c.scale ?? undefined,
            mask: maskTensor,
          }),
        );
        if (!r) return;
        assert.ok(c.wrongK !== 0, 'a k of the wrong width must be refused');
        const want = referenceSdpa(q, k, v, {
          causal: c.causal,
          scale: c.scale ?? undefined,
          mask: c.masked ? mask : null,
        });
        const scaleBig = Math.abs(c.scale ?? 1) > 1e3; // a huge scale makes softmax ill-conditioned
        r.output.data.forEach((x, i) =>
          assert.ok(
            scaleBig ? Number.isFinite(x) : isClose(x, want[i], kSdpaTol * 10),
            `output[${i}] = ${x}, want ${want[i]}`,
          ),
        );
      }),
      params,
    );
  });

  it('hostile values (NaN, ±∞, huge, denormal): finite results or a documented error, nothing leaked', () => {
    fc.assert(
      fc.property(sdpaCase(hostile), ({ c, q, k, v, mask }) => {
        const maskTensor = c.masked ? new Tensor(Uint8Array.from(mask, Number), [c.tq, c.tk]) : undefined;
        const options = {
          causal: c.causal,
          needWeights: c.needWeights,
          scale: c.scale ?? undefined,
          mask: maskTensor,
        };
        const r = guarded(() => scaledDotProductAttention(q, k, v, options));
        if (!r) return;
        assert.ok(
          allFinite(q.data) && allFinite(k.data) && allFinite(v.data),
          'a non-finite input must be refused',
        );
        assert.ok(allFinite(r.output.data), 'no NaN/∞ from finite inputs');
        if (r.weights) assert.ok(allFinite(r.weights.data));
        const g = guarded(() => scaledDotProductAttentionBackward(q, k, v, r.output, options));
        if (g) for (const t of [g.q, g.k, g.v]) assert.ok(allFinite(t.data), 'finite gradients');
      }),
      params,
    );
  });
});

describe('softmax and layerNorm properties', () => {
  const rowCase = (valueArb) =>
    fc
      .record({ rows: fc.integer({ min: 1, max: 4 }), n: fc.integer({ min: 1, max: 40 }) })
      .chain(({ rows, n }) => tensorOf(valueArb, [rows, n]));

  it('softmax: rows of float64 softmax, or NON_FINITE for NaN/+∞', () => {
    fc.assert(
      fc.property(rowCase(hostile), (x) => {
        const r = guarded(() => softmax(x));
        if (!r) return;
        const [rows, n] = x.shape;
        for (let i = 0; i < rows; i++) {
          const row = Array.from(x.data.subarray(i * n, (i + 1) * n));
          const m = Math.max(...row);
          const e = row.map((t) => (m === -Infinity ? 0 : Math.exp(t - m)));
          const z = e.reduce((a, b) => a + b, 0);
          for (let j = 0; j < n; j++) {
            const want = z ? e[j] / z : 0;
            assert.ok(
              isClose(r.data[i * n + j], want, kSoftmaxTol),
              `softmax[${i},${j}] = ${r.data[i * n + j]}, want ${want}`,
            );
          }
        }
      }),
      params,
    );
  });

  it('layerNorm: float64 normalisation, also with a large common offset, or a documented error', () => {
    const offset = fc.constantFrom(0, 1e4, -3e5);
    fc.assert(
      fc.property(rowCase(ordinary), offset, (x, off) => {
        const shifted = new Tensor(
          x.data.map((t) => t + off),
          x.shape,
        );
        const r = guarded(() => layerNorm(shifted));
        if (!r) return;
        const [rows, n] = x.shape;
        for (let i = 0; i < rows; i++) {
          const row = Array.from(shifted.data.subarray(i * n, (i + 1) * n));
          const mean = row.reduce((a, b) => a + b, 0) / n;
          const variance = row.reduce((a, b) => a + (b - mean) ** 2, 0) / n;
          for (let j = 0; j < n; j++) {
            const want = (row[j] - mean) / Math.sqrt(variance + 1e-5);
            assert.ok(
              isClose(r.data[i * n + j], want, kLayerNormTol),
              `layerNorm[${i},${j}] = ${r.data[i * n + j]}, want ${want}`,
            );
          }
        }
      }),
      params,
    );
  });
});

describe('MultiHeadAttention properties', () => {
  it('random configs and inputs: finite output or a documented error, nothing leaked', () => {
    const mhaCase = fc
      .record({
        embedDim: fc.integer({ min: 1, max: 12 }),
        numHeads: fc.integer({ min: 1, max: 4 }),
        batch: fc.integer({ min: 1, max: 2 }),
        t: fc.integer({ min: 1, max: 5 }),
        widthError: fc.integer({ min: 0, max: 9 }),
        causal: fc.boolean(),
        residual: fc.boolean(),
        layerNorm: fc.boolean(),
        seed: fc.integer({ min: 0, max: 1000 }),
      })
      .chain((c) =>
        fc.record({
          c: fc.constant(c),
          x: tensorOf(hostile, [c.batch, c.t, c.widthError === 0 ? c.embedDim + 1 : c.embedDim]),
        }),
      );
    fc.assert(
      fc.property(mhaCase, ({ c, x }) => {
        const mha = guarded(
          () =>
            new MultiHeadAttention({
              embedDim: c.embedDim,
              numHeads: c.numHeads,
              residual: c.residual,
              layerNorm: c.layerNorm,
              seed: c.seed,
            }),
        );
        if (!mha) {
          assert.ok(c.embedDim % c.numHeads !== 0, 'only a non-dividing head count is refused');
          return;
        }
        try {
          const r = guarded(() => mha.forward(x, null, null, { causal: c.causal }));
          if (r) {
            assert.ok(allFinite(x.data) && c.widthError !== 0);
            assert.ok(allFinite(r.output.data), 'no NaN/∞ from finite inputs');
          }
        } finally {
          mha.dispose();
        }
      }),
      params,
    );
  });
});
