// Every public function of attention-wasm, checked against float64 references written here
// (independent of the C++ core) or against properties the contract states (index.d.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  init,
  Tensor,
  AttentionError,
  softmax,
  layerNorm,
  scaledDotProductAttention,
  MultiHeadAttention,
  sinusoidalEncoding,
  LearnedPositionalEncoding,
  seededNormal,
  memoryStats,
  memoryLimit,
  setMemoryLimit,
  kernelVariant,
  relaxedSimdSupported,
} from '../../src/js/index.js';
import { assertClose } from './close.js';

// Named tolerances (absolute), float32 core vs float64 reference.
const kRefTol = 1e-5; // one attention / layer-norm pass vs the float64 reference
const kPeTol = 2e-6; // sinusoidal values are float32 casts of double sin/cos
const kTiledTol = 1e-5; // tiled (needWeights: false) path vs the weights path
const kAvgTol = 1e-6; // mean of per-head weights vs the averaged weights
const kSamePathTol = 1e-6; // two ways to express the same computation (packed vs split weights, …)

// ---- helpers ------------------------------------------------------------------------------------

const rand = (shape, seed) => seededNormal(shape, seed);

// Float64 softmax(q·kᵀ·scale + bias)·v over (B, Tq, d) × (B, Tk, d); allowed(b, i, j) → bool,
// bias(b, i, j) → number. A fully masked row gives zero weights (our convention).
function sdpaRef(q, k, v, { scale, allowed = () => true, bias = () => 0 } = {}) {
  const [B, Tq, dk] = q.shape;
  const Tk = k.shape[1];
  const dv = v.shape[2];
  const s = scale ?? 1 / Math.sqrt(dk);
  const out = new Float64Array(B * Tq * dv);
  const weights = new Float64Array(B * Tq * Tk);
  for (let b = 0; b < B; b++) {
    for (let i = 0; i < Tq; i++) {
      const row = new Float64Array(Tk).fill(-Infinity);
      for (let j = 0; j < Tk; j++) {
        if (!allowed(b, i, j)) continue;
        let dot = 0;
        for (let c = 0; c < dk; c++) dot += q.data[(b * Tq + i) * dk + c] * k.data[(b * Tk + j) * dk + c];
        row[j] = dot * s + bias(b, i, j);
      }
      const max = Math.max(...row);
      if (max === -Infinity) continue; // fully masked: zeros
      let sum = 0;
      for (let j = 0; j < Tk; j++) {
        row[j] = Math.exp(row[j] - max);
        sum += row[j];
      }
      for (let j = 0; j < Tk; j++) {
        const w = row[j] / sum;
        weights[(b * Tq + i) * Tk + j] = w;
        for (let c = 0; c < dv; c++) out[(b * Tq + i) * dv + c] += w * v.data[(b * Tk + j) * dv + c];
      }
    }
  }
  return { output: out, weights };
}

// Float64 y = x·Wᵀ + bias for x (N, in), W (out, in) given as flat arrays.
function linear(x, N, inDim, W, outDim, bias, wOffset = 0, bOffset = 0) {
  const y = new Float64Array(N * outDim);
  for (let n = 0; n < N; n++) {
    for (let o = 0; o < outDim; o++) {
      let acc = bias ? bias[bOffset + o] : 0;
      for (let c = 0; c < inDim; c++) acc += x[n * inDim + c] * W[wOffset + o * inDim + c];
      y[n * outDim + o] = acc;
    }
  }
  return y;
}

// Float64 nn.MultiheadAttention (packed in_proj_weight, biases, batch_first, no extras) from a
// state dict; returns the output (B, Tq, E) and per-head weights (B, H, Tq, Tk).
function mhaRef(sd, H, query, key) {
  const [B, Tq, E] = query.shape;
  const Tk = key.shape[1];
  const d = E / H;
  const W = sd.in_proj_weight.data;
  const bias = sd.in_proj_bias.data;
  const q = linear(query.data, B * Tq, E, W, E, bias, 0, 0);
  const k = linear(key.data, B * Tk, E, W, E, bias, E * E, E);
  const v = linear(key.data, B * Tk, E, W, E, bias, 2 * E * E, 2 * E);
  const concat = new Float64Array(B * Tq * E);
  const weights = new Float64Array(B * H * Tq * Tk);
  const head = (src, T, b, h) => {
    const t = { shape: [1, T, d], data: new Float64Array(T * d) };
    for (let i = 0; i < T; i++)
      for (let c = 0; c < d; c++) t.data[i * d + c] = src[(b * T + i) * E + h * d + c];
    return t;
  };
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      const r = sdpaRef(head(q, Tq, b, h), head(k, Tk, b, h), head(v, Tk, b, h));
      weights.set(r.weights, (b * H + h) * Tq * Tk);
      for (let i = 0; i < Tq; i++)
        for (let c = 0; c < d; c++) concat[(b * Tq + i) * E + h * d + c] = r.output[i * d + c];
    }
  }
  const output = linear(concat, B * Tq, E, sd['out_proj.weight'].data, E, sd['out_proj.bias'].data);
  return { output, weights };
}

// Top-level await: describe() bodies below build inputs with seededNormal at collection time.
await init();

// ---- init, Tensor ---------------------------------------------------------------------------------

describe('init', () => {
  it('is idempotent and every caller shares one instance', async () => {
    const p1 = init();
    const p2 = init();
    assert.equal(p1, p2, 'same promise');
    const [a, b] = await Promise.all([p1, p2]);
    assert.equal(a, b, 'same module instance');
    assert.equal(await init(), a);
  });

  it('reports the build init() chose, the default 1 GiB memory limit and no live handles', () => {
    assert.equal(kernelVariant(), relaxedSimdSupported() ? 'relaxed-simd' : 'simd128');
    assert.equal(memoryLimit(), 2 ** 30);
    setMemoryLimit(2 ** 20);
    assert.equal(memoryLimit(), 2 ** 20);
    setMemoryLimit(2 ** 30);
    const stats = memoryStats();
    assert.ok(stats.heapBytes > 0 && Number.isInteger(stats.heapBytes));
    assert.equal(stats.liveHandles, 0);
  });
});

describe('Tensor', () => {
  it('wraps a Float32Array without copying and indexes row-major', () => {
    const data = Float32Array.from({ length: 24 }, (_, i) => i);
    const t = new Tensor(data, [2, 3, 4]);
    assert.equal(t.data, data);
    assert.equal(t.dtype, 'float32');
    assert.deepEqual(t.shape, [2, 3, 4]);
    assert.equal(t.size, 24);
    assert.equal(t.rank, 3);
    assert.equal(t.get(1, 2, 3), 23);
    assert.equal(t.get(1, 0, 2), 14);
  });

  it('converts number[] to float32 and defaults the shape to [length]', () => {
    const t = new Tensor([1, 2.5, -3]);
    assert.ok(t.data instanceof Float32Array);
    assert.deepEqual(t.shape, [3]);
    assert.equal(t.get(1), 2.5);
  });

  it('infers the shape of nested arrays and toArray() round-trips', () => {
    const nested = [
      [
        [1, 2],
        [3, 4],
        [5, 6],
      ],
    ];
    const t = new Tensor(nested);
    assert.deepEqual(t.shape, [1, 3, 2]);
    assert.deepEqual(t.toArray(), nested);
  });

  it('makes boolean mask tensors from Uint8Array and boolean[]', () => {
    const m = new Tensor(new Uint8Array([1, 0, 0, 1]), [2, 2]);
    assert.equal(m.dtype, 'bool');
    assert.equal(m.get(0, 0), true);
    assert.equal(m.get(0, 1), false);
    const b = new Tensor([
      [true, false],
      [false, true],
    ]);
    assert.equal(b.dtype, 'bool');
    assert.ok(b.data instanceof Uint8Array);
    assert.deepEqual(Array.from(b.data), [1, 0, 0, 1]);
    assert.deepEqual(b.toArray(), [
      [true, false],
      [false, true],
    ]);
  });

  it('rejects a shape that does not match the data, bad shapes, ragged arrays and bad indices', () => {
    const code = (c) => (e) => e instanceof AttentionError && e.code === c;
    assert.throws(() => new Tensor([1, 2, 3, 4], [1, 1, 1, 5]), code('SHAPE_MISMATCH'));
    assert.throws(() => new Tensor([1, 2], [2, -1]), code('SHAPE_MISMATCH'));
    assert.throws(() => new Tensor([1, 2], [1.5, 2]), code('SHAPE_MISMATCH'));
    assert.throws(() => new Tensor([[1, 2], [3]]), code('SHAPE_MISMATCH'));
    assert.throws(() => new Tensor('abc', [3]), code('INVALID_ARGUMENT'));
    const t = new Tensor([1, 2, 3, 4], [2, 2]);
    assert.throws(() => t.get(0), code('SHAPE_MISMATCH'));
    assert.throws(() => t.get(2, 0), code('INVALID_ARGUMENT'));
  });
});

// ---- softmax, layerNorm -------------------------------------------------------------------------

describe('softmax', () => {
  it('softmax([1, 1, 1, 5]) = [0.0174, 0.0174, 0.0174, 0.9479] (the tutorial example)', () => {
    const y = softmax(new Tensor([1, 1, 1, 5], [1, 1, 1, 4]));
    assert.deepEqual(y.shape, [1, 1, 1, 4]);
    const e = Math.exp(4);
    assertClose(
      y.data,
      [1, 1, 1, e].map((v) => v / (3 + e)),
      kRefTol,
      'softmax',
    );
    assert.equal(y.data[0].toFixed(4), '0.0174');
    assert.equal(y.data[3].toFixed(4), '0.9479');
  });

  it('works over the last axis, stays finite near 1000, and gives zeros for an all -Infinity row', () => {
    const x = new Tensor([1000, 1001, 1002, -Infinity, -Infinity, -Infinity, 0, -Infinity, 2], [3, 3]);
    const y = softmax(x);
    const row = (a, b, c) => {
      const m = Math.max(a, b, c);
      const s = Math.exp(a - m) + Math.exp(b - m) + Math.exp(c - m);
      return [a, b, c].map((v) => Math.exp(v - m) / s);
    };
    assertClose(y.data.subarray(0, 3), row(1000, 1001, 1002), kRefTol, 'row near 1000');
    assert.deepEqual(Array.from(y.data.subarray(3, 6)), [0, 0, 0], 'all -inf row → zeros');
    assertClose(
      y.data.subarray(6, 9),
      [1 / (1 + Math.exp(2)), 0, Math.exp(2) / (1 + Math.exp(2))],
      kRefTol,
      '-inf entry',
    );
  });

  it('accepts nested arrays and { data, shape }', () => {
    assertClose(softmax([[0, 0]]).data, [0.5, 0.5], kRefTol, 'nested');
    assertClose(softmax({ data: [0, Math.log(3)], shape: [2] }).data, [0.25, 0.75], kRefTol, 'object');
  });
});

describe('layerNorm', () => {
  const x = rand([3, 7], 11);
  function ref(eps, w, b) {
    const out = [];
    for (let r = 0; r < 3; r++) {
      const row = Array.from(x.data.subarray(r * 7, r * 7 + 7));
      const mean = row.reduce((a, c) => a + c, 0) / 7;
      const variance = row.reduce((a, c) => a + (c - mean) ** 2, 0) / 7; // biased, as nn.LayerNorm
      row.forEach((c, i) =>
        out.push(((c - mean) / Math.sqrt(variance + eps)) * (w ? w[i] : 1) + (b ? b[i] : 0)),
      );
    }
    return out;
  }

  it('without weight and bias normalises each row (eps 1e-5 by default)', () => {
    assertClose(layerNorm(x).data, ref(1e-5), kRefTol, 'plain');
  });

  it('applies weight and bias, and eps matters for a near-constant row', () => {
    const w = [1, 2, 3, -1, 0.5, 0, 1];
    const b = [0, 0.1, -0.2, 0.3, 0, 5, -5];
    assertClose(layerNorm(x, { weight: w, bias: b }).data, ref(1e-5, w, b), kRefTol, 'weight+bias');
    assertClose(layerNorm(x, { weight: new Tensor(w) }).data, ref(1e-5, w), kRefTol, 'weight only');
    assertClose(layerNorm(x, { bias: b }).data, ref(1e-5, null, b), kRefTol, 'bias only');
    const flat = new Tensor([1, 1.001, 0.999, 1], [1, 4]);
    const big = layerNorm(flat, { eps: 1 }).data;
    const small = layerNorm(flat, { eps: 1e-9 }).data;
    assert.ok(Math.abs(small[1]) > 100 * Math.abs(big[1]), 'eps changes a near-constant row');
  });
});

// ---- positional encodings, seededNormal ---------------------------------------------------------

describe('sinusoidalEncoding', () => {
  const formula = (pos, col, d, base) => {
    const pair = Math.floor(col / 2);
    const angle = pos / base ** ((2 * pair) / d);
    return col % 2 === 0 ? Math.sin(angle) : Math.cos(angle);
  };
  const expected = (length, d, base) =>
    Array.from({ length: length * d }, (_, i) => formula(Math.floor(i / d), i % d, d, base));

  it('follows PE[pos, 2i] = sin(pos / base^(2i/d)), PE[pos, 2i+1] = cos(…)', () => {
    const pe = sinusoidalEncoding(50, 16);
    assert.deepEqual(pe.shape, [50, 16]);
    assertClose(pe.data, expected(50, 16, 10000), kPeTol, 'base 10000');
  });

  it('uses the base option', () => {
    const pe = sinusoidalEncoding(20, 8, { base: 100 });
    assertClose(pe.data, expected(20, 8, 100), kPeTol, 'base 100');
    assert.notDeepEqual(Array.from(pe.data), Array.from(sinusoidalEncoding(20, 8).data));
  });

  it('odd dModel keeps the last sine column and drops its cosine partner', () => {
    const pe = sinusoidalEncoding(10, 5);
    assert.deepEqual(pe.shape, [10, 5]);
    assertClose(pe.data, expected(10, 5, 10000), kPeTol, 'odd dModel');
  });
});

describe('seededNormal', () => {
  it('is deterministic for a seed, differs across seeds, and looks like N(0, 1)', () => {
    const a = seededNormal([40, 50], 7);
    const b = seededNormal([40, 50], 7);
    const c = seededNormal([40, 50], 8);
    assert.deepEqual(a.shape, [40, 50]);
    assert.deepEqual(Array.from(a.data), Array.from(b.data));
    assert.notDeepEqual(Array.from(a.data), Array.from(c.data));
    const n = a.size;
    const mean = a.data.reduce((s, v) => s + v, 0) / n;
    const variance = a.data.reduce((s, v) => s + (v - mean) ** 2, 0) / n;
    // 2000 deterministic samples: generous bounds, this is a sanity check of the distribution.
    assert.ok(Math.abs(mean) < 0.1, `mean ${mean}`);
    assert.ok(variance > 0.85 && variance < 1.15, `variance ${variance}`);
  });
});

describe('LearnedPositionalEncoding', () => {
  it('is seeded, encodes the first rows, accepts a new table, and disposes', () => {
    const start = memoryStats().liveHandles;
    const a = new LearnedPositionalEncoding({ maxLength: 6, dModel: 4, seed: 3 });
    const b = new LearnedPositionalEncoding({ maxLength: 6, dModel: 4, seed: 3 });
    const c = new LearnedPositionalEncoding({ maxLength: 6, dModel: 4, seed: 4 });
    assert.equal(memoryStats().liveHandles, start + 3);
    assert.equal(a.maxLength, 6);
    assert.equal(a.dModel, 4);
    assert.deepEqual(a.table.shape, [6, 4]);
    assert.deepEqual(Array.from(a.table.data), Array.from(b.table.data), 'same seed, same table');
    assert.notDeepEqual(Array.from(a.table.data), Array.from(c.table.data), 'other seed');

    const first3 = a.encode(3);
    assert.deepEqual(first3.shape, [3, 4]);
    assert.deepEqual(Array.from(first3.data), Array.from(a.table.data.subarray(0, 12)));
    assert.throws(() => a.encode(7), AttentionError, 'longer than maxLength');

    const table = Float32Array.from({ length: 24 }, (_, i) => i / 10);
    a.setTable(new Tensor(table, [6, 4]));
    assert.deepEqual(Array.from(a.table.data), Array.from(table));
    assert.deepEqual(Array.from(a.encode(2).data), Array.from(table.subarray(0, 8)));
    assert.throws(
      () => a.setTable(new Tensor(table, [4, 6])),
      (e) => e instanceof AttentionError && e.code === 'SHAPE_MISMATCH',
    );
    // The table getter returns a copy.
    a.table.data[0] = 99;
    assert.equal(a.table.data[0], 0);

    for (const pe of [a, b, c]) pe.dispose();
    a.dispose(); // twice is harmless
    assert.equal(memoryStats().liveHandles, start);
    assert.throws(
      () => a.encode(1),
      (e) => e instanceof AttentionError && e.code === 'DISPOSED',
    );
  });
});

// ---- scaledDotProductAttention -------------------------------------------------------------------

describe('scaledDotProductAttention', () => {
  const q = rand([2, 4, 8], 1);
  const k = rand([2, 6, 8], 2);
  const v = rand([2, 6, 5], 3);

  it('matches the float64 reference with the default scale 1/√d_k', () => {
    const r = scaledDotProductAttention(q, k, v);
    const ref = sdpaRef(q, k, v);
    assert.deepEqual(r.output.shape, [2, 4, 5]);
    assert.deepEqual(r.weights.shape, [2, 4, 6]);
    assertClose(r.output.data, ref.output, kRefTol, 'output');
    assertClose(r.weights.data, ref.weights, kRefTol, 'weights');
  });

  it('uses the scale option (a temperature t is scale 1/t)', () => {
    const r = scaledDotProductAttention(q, k, v, { scale: 1 / 1.7 });
    assertClose(r.output.data, sdpaRef(q, k, v, { scale: 1 / 1.7 }).output, kRefTol, 'scaled output');
  });

  it('bool mask (1 = may attend) broadcast over the batch; masked weights are exactly 0', () => {
    const allowed = [
      [1, 1, 0, 1, 0, 1],
      [0, 1, 1, 1, 1, 1],
      [1, 0, 0, 0, 0, 0],
      [1, 1, 1, 1, 1, 0],
    ];
    const mask = new Tensor(Uint8Array.from(allowed.flat()), [4, 6]);
    const r = scaledDotProductAttention(q, k, v, { mask });
    const ref = sdpaRef(q, k, v, { allowed: (b, i, j) => allowed[i][j] === 1 });
    assertClose(r.output.data, ref.output, kRefTol, 'masked output');
    for (let i = 0; i < r.weights.size; i++) {
      if (allowed[Math.floor(i / 6) % 4][i % 6] === 0) assert.equal(r.weights.data[i], 0, `weight ${i}`);
    }
    const boolArray = scaledDotProductAttention(q, k, v, { mask: allowed.map((row) => row.map(Boolean)) });
    assert.deepEqual(Array.from(boolArray.output.data), Array.from(r.output.data), 'boolean[][] mask');
  });

  it('a fully masked row gives zero weights and a zero output row (never NaN)', () => {
    const mask = new Tensor(
      Uint8Array.from({ length: 24 }, (_, i) => (i < 6 ? 0 : 1)),
      [4, 6],
    );
    const r = scaledDotProductAttention(q, k, v, { mask });
    for (let b = 0; b < 2; b++) {
      assert.deepEqual(Array.from(r.weights.data.subarray(b * 24, b * 24 + 6)), [0, 0, 0, 0, 0, 0]);
      assert.deepEqual(Array.from(r.output.data.subarray(b * 20, b * 20 + 5)), [0, 0, 0, 0, 0]);
    }
    assert.ok(r.output.data.every(Number.isFinite));
  });

  it('additiveMask is added to the scaled scores and may hold -Infinity', () => {
    const add = Float32Array.from({ length: 24 }, (_, i) => (i % 5 === 0 ? -Infinity : (i % 3) - 1));
    const r = scaledDotProductAttention(q, k, v, { additiveMask: new Tensor(add, [4, 6]) });
    const ref = sdpaRef(q, k, v, { bias: (b, i, j) => add[i * 6 + j] });
    assertClose(r.output.data, ref.output, kRefTol, 'additive');
  });

  it('causal is top-left aligned for square, wide and tall shapes', () => {
    for (const [Tq, Tk] of [
      [5, 5],
      [3, 6],
      [6, 4],
    ]) {
      const qq = rand([2, Tq, 4], 10 + Tq);
      const kk = rand([2, Tk, 4], 20 + Tk);
      const vv = rand([2, Tk, 3], 30 + Tk);
      const r = scaledDotProductAttention(qq, kk, vv, { causal: true });
      const ref = sdpaRef(qq, kk, vv, { allowed: (b, i, j) => j <= i });
      assertClose(r.output.data, ref.output, kRefTol, `causal ${Tq}x${Tk}`);
      assertClose(r.weights.data, ref.weights, kRefTol, `causal weights ${Tq}x${Tk}`);
    }
  });

  it('handles leading axes (B, H, T, d) with a mask broadcast over heads and queries', () => {
    const q4 = rand([2, 3, 4, 5], 41);
    const k4 = rand([2, 3, 6, 5], 42);
    const v4 = rand([2, 3, 6, 7], 43);
    const pad = [
      [1, 1, 1, 1, 0, 0],
      [1, 1, 1, 1, 1, 1],
    ];
    const r = scaledDotProductAttention(q4, k4, v4, {
      mask: new Tensor(Uint8Array.from(pad.flat()), [2, 1, 1, 6]),
    });
    assert.deepEqual(r.output.shape, [2, 3, 4, 7]);
    const flat = (t, T, d) => ({ shape: [6, T, d], data: t.data });
    const ref = sdpaRef(flat(q4, 4, 5), flat(k4, 6, 5), flat(v4, 6, 7), {
      allowed: (bh, i, j) => pad[Math.floor(bh / 3)][j] === 1,
    });
    assertClose(r.output.data, ref.output, kRefTol, 'leading axes');
  });

  it('dropout is deterministic for a seed; weights are before dropout; the trace shows both', () => {
    const opts = { dropout: { p: 0.4, seed: 1234 }, trace: true };
    const a = scaledDotProductAttention(q, k, v, opts);
    const b = scaledDotProductAttention(q, k, v, opts);
    const c = scaledDotProductAttention(q, k, v, { ...opts, dropout: { p: 0.4, seed: 99 } });
    const plain = scaledDotProductAttention(q, k, v);
    assert.deepEqual(Array.from(a.output.data), Array.from(b.output.data), 'same seed, same output');
    assert.notDeepEqual(Array.from(a.output.data), Array.from(c.output.data), 'other seed');
    assert.deepEqual(Array.from(a.weights.data), Array.from(plain.weights.data), 'weights are pre-dropout');

    const dropped = a.trace.find((s) => s.name === 'dropped');
    let zeros = 0;
    for (let i = 0; i < dropped.data.length; i++) {
      if (dropped.data[i] === 0) {
        zeros++;
        continue;
      }
      assertClose([dropped.data[i]], [a.weights.data[i] / (1 - 0.4)], kRefTol, `kept weight ${i}`);
    }
    assert.ok(
      zeros > 0 && zeros < dropped.data.length,
      `some weights dropped (${zeros}/${dropped.data.length})`,
    );
    // output = dropped · v
    const ref = new Float64Array(2 * 4 * 5);
    for (let bb = 0; bb < 2; bb++)
      for (let i = 0; i < 4; i++)
        for (let j = 0; j < 6; j++)
          for (let c2 = 0; c2 < 5; c2++) {
            ref[(bb * 4 + i) * 5 + c2] += dropped.data[(bb * 4 + i) * 6 + j] * v.data[(bb * 6 + j) * 5 + c2];
          }
    assertClose(a.output.data, ref, kRefTol, 'output = dropped·v');
  });

  it('needWeights: false returns no weights and the same output (tiled path) within kTiledTol', () => {
    // Long enough for several key tiles and a partial last one, with a mask and causal.
    const qq = rand([2, 70, 16], 51);
    const kk = rand([2, 300, 16], 52);
    const vv = rand([2, 300, 12], 53);
    const mask = new Tensor(
      Uint8Array.from({ length: 70 * 300 }, (_, i) => ((i * 7) % 11 === 0 ? 0 : 1)),
      [70, 300],
    );
    for (const options of [{}, { mask }, { causal: true }, { mask, causal: true, scale: 0.3 }]) {
      const full = scaledDotProductAttention(qq, kk, vv, options);
      const fast = scaledDotProductAttention(qq, kk, vv, { ...options, needWeights: false });
      assert.equal(fast.weights, undefined);
      assert.equal('weights' in fast, false);
      assertClose(
        fast.output.data,
        full.output.data,
        kTiledTol,
        `tiled vs full ${JSON.stringify(Object.keys(options))}`,
      );
    }
  });

  it('trace: scores, scaled, masked, weights, context with shapes; data agrees with the results', () => {
    const r = scaledDotProductAttention(q, k, v, { trace: true, causal: true });
    assert.deepEqual(
      r.trace.map((s) => s.name),
      ['scores', 'scaled', 'masked', 'weights', 'context'],
    );
    const shapes = Object.fromEntries(r.trace.map((s) => [s.name, s.shape]));
    assert.deepEqual(shapes, {
      scores: [2, 4, 6],
      scaled: [2, 4, 6],
      masked: [2, 4, 6],
      weights: [2, 4, 6],
      context: [2, 4, 5],
    });
    for (const step of r.trace) {
      assert.ok(step.data instanceof Float32Array);
      assert.equal(
        step.data.length,
        step.shape.reduce((a, b) => a * b, 1),
      );
      assert.equal(step.axes.length, step.shape.length, `${step.name} axes`);
    }
    const get = (name) => r.trace.find((s) => s.name === name).data;
    assertClose(
      get('scaled'),
      Array.from(get('scores'), (s) => s / Math.sqrt(8)),
      kRefTol,
      'scaled = scores/√d_k',
    );
    assert.equal(get('masked')[1], -Infinity, 'causal masks j > i with -inf');
    assert.deepEqual(Array.from(get('weights')), Array.from(r.weights.data));
    assert.deepEqual(Array.from(get('context')), Array.from(r.output.data));
  });
});

// ---- MultiHeadAttention ---------------------------------------------------------------------------

describe('MultiHeadAttention', () => {
  it('config defaults: numHeads 1, headDim = embedDim/numHeads, valueHeadDim = headDim', () => {
    const one = new MultiHeadAttention({ embedDim: 8 });
    assert.equal(one.numHeads, 1);
    assert.equal(one.headDim, 8);
    const m = new MultiHeadAttention({ embedDim: 12, numHeads: 3 });
    assert.equal(m.embedDim, 12);
    assert.equal(m.headDim, 4);
    assert.equal(m.valueHeadDim, 4);
    assert.equal(m.config.headDim, 4);
    assert.equal(m.config.bias, true);
    assert.equal(m.config.layerNorm, false);
    const explicit = new MultiHeadAttention({ embedDim: 8, numHeads: 3, headDim: 5 });
    assert.equal(explicit.headDim, 5);
    assert.equal(explicit.valueHeadDim, 5, 'valueHeadDim defaults to headDim');
    const both = new MultiHeadAttention({ embedDim: 8, numHeads: 2, headDim: 3, valueHeadDim: 5 });
    assert.deepEqual(both.stateDict()['out_proj.weight'].shape, [8, 10], 'out_proj takes H·d_v');
    assert.ok(Object.isFrozen(m.config));
    for (const x of [one, m, explicit, both]) x.dispose();
  });

  it('config resolves kdim and vdim to embedDim when omitted', () => {
    const m = new MultiHeadAttention({ embedDim: 8, numHeads: 2 });
    try {
      assert.equal(m.config.kdim, 8);
      assert.equal(m.config.vdim, 8);
    } finally {
      m.dispose();
    }
  });

  it('stateDict has PyTorch names and layouts', () => {
    const m = new MultiHeadAttention({ embedDim: 8, numHeads: 2 });
    const shapes = Object.fromEntries(Object.entries(m.stateDict()).map(([n, t]) => [n, t.shape]));
    assert.deepEqual(shapes, {
      in_proj_weight: [24, 8],
      in_proj_bias: [24],
      'out_proj.weight': [8, 8],
      'out_proj.bias': [8],
    });
    m.dispose();
    const kv = new MultiHeadAttention({
      embedDim: 8,
      numHeads: 2,
      kdim: 6,
      vdim: 10,
      addBiasKV: true,
      layerNorm: true,
    });
    const kvShapes = Object.fromEntries(Object.entries(kv.stateDict()).map(([n, t]) => [n, t.shape]));
    assert.deepEqual(kvShapes, {
      q_proj_weight: [8, 8],
      k_proj_weight: [8, 6],
      v_proj_weight: [8, 10],
      in_proj_bias: [24],
      bias_k: [1, 1, 8],
      bias_v: [1, 1, 8],
      'out_proj.weight': [8, 8],
      'out_proj.bias': [8],
      'layer_norm.weight': [8],
      'layer_norm.bias': [8],
    });
    kv.dispose();
    const noBias = new MultiHeadAttention({ embedDim: 8, numHeads: 2, bias: false });
    assert.deepEqual(Object.keys(noBias.stateDict()).sort(), ['in_proj_weight', 'out_proj.weight']);
    noBias.dispose();
  });

  it('forward matches a float64 reference computed from its stateDict (self and cross)', () => {
    const m = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 5 });
    const sd = m.stateDict();
    const x = rand([2, 5, 8], 61);
    const mem = rand([2, 7, 8], 62);
    const self = m.forward(x, null, null, { averageWeights: false });
    const selfRef = mhaRef(sd, 2, x, x);
    assertClose(self.output.data, selfRef.output, kRefTol, 'self output');
    assertClose(self.weights.data, selfRef.weights, kRefTol, 'self weights');
    const explicit = m.forward(x, x, x, { averageWeights: false });
    assertClose(explicit.output.data, self.output.data, kSamePathTol, 'forward(x) = forward(x, x, x)');
    const cross = m.forward(x, mem, mem, { averageWeights: false });
    assert.deepEqual(cross.output.shape, [2, 5, 8]);
    assert.deepEqual(cross.weights.shape, [2, 2, 5, 7]);
    assertClose(cross.output.data, mhaRef(sd, 2, x, mem).output, kRefTol, 'cross output');
    const valueDefaultsToKey = m.forward(x, mem);
    assertClose(valueDefaultsToKey.output.data, cross.output.data, kSamePathTol, 'value defaults to key');
    m.dispose();
  });

  it('stateDict / loadStateDict round trip reproduces another module; stateDict returns copies', () => {
    const a = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 1 });
    const b = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 2 });
    const x = rand([2, 4, 8], 70);
    assert.notDeepEqual(
      Array.from(a.forward(x).output.data),
      Array.from(b.forward(x).output.data),
      'seeds differ',
    );
    const sd = a.stateDict();
    assert.equal(b.loadStateDict(sd), b, 'loadStateDict returns this');
    assert.deepEqual(Array.from(b.forward(x).output.data), Array.from(a.forward(x).output.data));
    for (const [name, t] of Object.entries(b.stateDict())) {
      assert.deepEqual(Array.from(t.data), Array.from(sd[name].data), name);
    }
    sd.in_proj_weight.data.fill(0);
    assert.notEqual(a.stateDict().in_proj_weight.data[0], 0, 'stateDict() is a copy');
    // Values may also be nested arrays or { data, shape }.
    b.loadStateDict({ 'out_proj.bias': { data: new Array(8).fill(0.5), shape: [8] } });
    assert.deepEqual(Array.from(b.stateDict()['out_proj.bias'].data), new Array(8).fill(0.5));
    a.dispose();
    b.dispose();
  });

  it('packed in_proj_weight and the three q/k/v_proj_weight give the same output', () => {
    const packed = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 7 });
    const split = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 8 });
    const sd = packed.stateDict();
    const W = sd.in_proj_weight.data; // (3E, E): rows of W_q, then W_k, then W_v
    const block = (i) => new Tensor(W.slice(i * 64, (i + 1) * 64), [8, 8]);
    split.loadStateDict({
      q_proj_weight: block(0),
      k_proj_weight: block(1),
      v_proj_weight: block(2),
      in_proj_bias: sd.in_proj_bias,
      'out_proj.weight': sd['out_proj.weight'],
      'out_proj.bias': sd['out_proj.bias'],
    });
    const x = rand([2, 5, 8], 80);
    const mem = rand([2, 3, 8], 81);
    assertClose(split.forward(x).output.data, packed.forward(x).output.data, kSamePathTol, 'self');
    assertClose(split.forward(x, mem).output.data, packed.forward(x, mem).output.data, kSamePathTol, 'cross');
    packed.dispose();
    split.dispose();
  });

  it('unbatched (T, E) input gives (T, E) output equal to the batch of one', () => {
    const m = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 9 });
    const x2 = rand([5, 8], 90);
    const x3 = new Tensor(x2.data, [1, 5, 8]);
    const r2 = m.forward(x2, null, null, { averageWeights: false });
    const r3 = m.forward(x3, null, null, { averageWeights: false });
    assert.deepEqual(r2.output.shape, [5, 8]);
    assert.deepEqual(r2.weights.shape, [2, 5, 5]);
    assert.deepEqual(Array.from(r2.output.data), Array.from(r3.output.data));
    assert.deepEqual(m.forward(x2).weights.shape, [5, 5]);
    m.dispose();
  });

  it('averageWeights defaults to true: (B, Tq, Tk) = mean over heads of (B, H, Tq, Tk)', () => {
    const m = new MultiHeadAttention({ embedDim: 12, numHeads: 4, seed: 10 });
    const q = rand([2, 3, 12], 100);
    const kv = rand([2, 5, 12], 101);
    const avg = m.forward(q, kv);
    const perHead = m.forward(q, kv, null, { averageWeights: false });
    assert.deepEqual(avg.weights.shape, [2, 3, 5]);
    assert.deepEqual(perHead.weights.shape, [2, 4, 3, 5]);
    const mean = new Float64Array(30);
    for (let b = 0; b < 2; b++)
      for (let h = 0; h < 4; h++)
        for (let i = 0; i < 15; i++) {
          mean[b * 15 + i] += perHead.weights.data[(b * 4 + h) * 15 + i] / 4;
        }
    assertClose(avg.weights.data, mean, kAvgTol, 'average of heads');
    assert.deepEqual(Array.from(avg.output.data), Array.from(perHead.output.data));
    const none = m.forward(q, kv, null, { needWeights: false });
    assert.equal(none.weights, undefined);
    assertClose(none.output.data, avg.output.data, kTiledTol, 'needWeights false output');
    m.dispose();
  });

  it('trace: ordered steps with shapes, from input to output', () => {
    const m = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 11 });
    const q = rand([2, 3, 8], 110);
    const kv = rand([2, 4, 8], 111);
    const r = m.forward(q, kv, null, { trace: true, averageWeights: false });
    const shapes = r.trace.map((s) => [s.name, s.shape]);
    assert.deepEqual(shapes, [
      ['input', [2, 3, 8]],
      ['q', [2, 2, 3, 4]],
      ['k', [2, 2, 4, 4]],
      ['v', [2, 2, 4, 4]],
      ['scores', [2, 2, 3, 4]],
      ['scaled', [2, 2, 3, 4]],
      ['masked', [2, 2, 3, 4]],
      ['weights', [2, 2, 3, 4]],
      ['context', [2, 2, 3, 4]],
      ['concat', [2, 3, 8]],
      ['output', [2, 3, 8]],
    ]);
    const get = (name) => r.trace.find((s) => s.name === name).data;
    assert.deepEqual(Array.from(get('input')), Array.from(q.data));
    assert.deepEqual(Array.from(get('weights')), Array.from(r.weights.data));
    assert.deepEqual(Array.from(get('output')), Array.from(r.output.data));
    assert.deepEqual(r.trace[1].axes, ['B', 'H', 'T_q', 'd_k']);
    m.dispose();
  });

  it('trace with positional: input, positional, x = input + positional, then residual and normalized', () => {
    const m = new MultiHeadAttention({
      embedDim: 8,
      numHeads: 2,
      residual: true,
      layerNorm: { eps: 1e-6 },
      seed: 12,
    });
    assert.equal(m.config.layerNormEps, 1e-6);
    const q = rand([2, 3, 8], 120);
    const pe = sinusoidalEncoding(6, 8); // longer than Tq: the first Tq rows are used
    const r = m.forward(q, null, null, { trace: true, positional: pe, dropout: { p: 0.2, seed: 3 } });
    assert.deepEqual(
      r.trace.map((s) => s.name),
      [
        'input',
        'positional',
        'x',
        'q',
        'k',
        'v',
        'scores',
        'scaled',
        'masked',
        'weights',
        'dropped',
        'context',
        'concat',
        'output',
        'residual',
        'normalized',
      ],
    );
    const step = (name) => r.trace.find((s) => s.name === name);
    assert.deepEqual(step('positional').shape, [3, 8]);
    assert.deepEqual(step('x').shape, [2, 3, 8]);
    const expectedX = Array.from(q.data, (v, i) => v + pe.data[i % 24]);
    assertClose(step('x').data, expectedX, kRefTol, 'x = input + positional');
    assertClose(
      step('residual').data,
      Array.from(step('output').data, (v, i) => v + step('x').data[i]),
      kRefTol,
      'residual = output + x',
    );
    assert.deepEqual(
      Array.from(step('normalized').data),
      Array.from(r.output.data),
      'the result is the last step',
    );
    m.dispose();
  });

  it('masks and key padding (true = may attend / real token) match the reference', () => {
    const m = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 13 });
    const sd = m.stateDict();
    const q = rand([2, 3, 8], 130);
    const kv = rand([2, 5, 8], 131);
    const pad = [
      [1, 1, 1, 0, 0],
      [1, 1, 1, 1, 1],
    ];
    const r = m.forward(q, kv, null, {
      keyPaddingMask: new Tensor(Uint8Array.from(pad.flat()), [2, 5]),
      averageWeights: false,
    });
    // Reference: drop the padded keys of batch 0 (same result as masking them).
    const b0 = mhaRef(
      sd,
      2,
      new Tensor(q.data.slice(0, 24), [1, 3, 8]),
      new Tensor(kv.data.slice(0, 24), [1, 3, 8]),
    );
    assertClose(r.output.data.subarray(0, 24), b0.output, kRefTol, 'padded batch 0');
    for (let h = 0; h < 2; h++)
      for (let i = 0; i < 3; i++) {
        assert.deepEqual(
          Array.from(r.weights.data.subarray((h * 3 + i) * 5 + 3, (h * 3 + i) * 5 + 5)),
          [0, 0],
          'padded keys get 0',
        );
      }
    const causal = m.forward(q, null, null, { causal: true });
    for (let i = 0; i < 3; i++) for (let j = i + 1; j < 3; j++) assert.equal(causal.weights.get(0, i, j), 0);
    m.dispose();
  });

  it('causal never masks the bias_k / zero-attention keys (same as an explicit lower-triangular mask)', () => {
    const m = new MultiHeadAttention({
      embedDim: 8,
      numHeads: 2,
      addBiasKV: true,
      addZeroAttn: true,
      seed: 15,
    });
    const x = rand([2, 4, 8], 150);
    const causal = m.forward(x, null, null, { causal: true });
    const tril = new Tensor(
      Uint8Array.from({ length: 16 }, (_, i) => (i % 4 <= Math.floor(i / 4) ? 1 : 0)),
      [4, 4],
    );
    const explicit = m.forward(x, null, null, { mask: tril });
    assert.deepEqual(causal.weights.shape, [2, 4, 6], 'Tk + bias_k + zero key');
    assertClose(
      causal.output.data,
      explicit.output.data,
      kSamePathTol,
      'causal = tril mask over the real keys',
    );
    // Query 0: key 0 and the two extra keys (columns 4, 5) attended; keys 1..3 masked.
    assert.deepEqual(Array.from(causal.weights.data.subarray(1, 4)), [0, 0, 0]);
    assert.ok(causal.weights.data[4] > 0 && causal.weights.data[5] > 0, 'extra keys stay visible');
    m.dispose();
  });

  it('a fully padded batch gives zero weights and an output of out_proj.bias (never NaN)', () => {
    const m = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 16 });
    const bias = Float32Array.from({ length: 8 }, (_, i) => i / 8 - 0.5);
    m.loadStateDict({ 'out_proj.bias': new Tensor(bias, [8]) });
    const x = rand([2, 4, 8], 160);
    const padding = new Tensor(Uint8Array.from([0, 0, 0, 0, 1, 1, 1, 1]), [2, 4]);
    const r = m.forward(x, null, null, { keyPaddingMask: padding });
    assert.ok(r.output.data.every(Number.isFinite));
    assert.deepEqual(Array.from(r.weights.data.subarray(0, 16)), new Array(16).fill(0));
    for (let i = 0; i < 4; i++)
      assert.deepEqual(Array.from(r.output.data.subarray(i * 8, i * 8 + 8)), Array.from(bias), `row ${i}`);
    m.dispose();
  });

  it('positional is added to the query, and to key/value only in self-attention', () => {
    const m = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 17 });
    const x = rand([2, 4, 8], 170);
    const kv = rand([2, 5, 8], 171);
    const pe = sinusoidalEncoding(4, 8);
    const shifted = new Tensor(
      x.data.map((v, i) => v + pe.data[i % 32]),
      [2, 4, 8],
    );
    assertClose(
      m.forward(x, null, null, { positional: pe }).output.data,
      m.forward(shifted).output.data,
      kSamePathTol,
      'self',
    );
    assertClose(
      m.forward(x, kv, null, { positional: pe }).output.data,
      m.forward(shifted, kv).output.data,
      kSamePathTol,
      'cross',
    );
    m.dispose();
  });

  it('MHA weights are the softmax before dropout; dropout is deterministic per seed', () => {
    const m = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 18 });
    const x = rand([2, 4, 8], 180);
    const plain = m.forward(x);
    const a = m.forward(x, null, null, { dropout: { p: 0.5, seed: 1 } });
    const b = m.forward(x, null, null, { dropout: { p: 0.5, seed: 1 } });
    assert.deepEqual(Array.from(a.weights.data), Array.from(plain.weights.data));
    assert.deepEqual(Array.from(a.output.data), Array.from(b.output.data));
    assert.notDeepEqual(Array.from(a.output.data), Array.from(plain.output.data));
    m.dispose();
  });

  it('results stay valid after later calls and wasm memory growth', () => {
    const m = new MultiHeadAttention({ embedDim: 4, numHeads: 1, seed: 14 });
    const x = rand([2, 3, 4], 140);
    const first = m.forward(x, null, null, { trace: true });
    const saved = {
      output: Array.from(first.output.data),
      weights: Array.from(first.weights.data),
      trace: first.trace.map((s) => Array.from(s.data)),
    };
    // Big enough that its (T, T) weights alone need more than the current heap: it must grow.
    const heapBefore = memoryStats().heapBytes;
    const T = Math.ceil(Math.sqrt((1.5 * heapBefore) / 4));
    const big = m.forward(rand([1, T, 4], 141));
    assert.ok(memoryStats().heapBytes > heapBefore, 'the heap grew');
    assert.deepEqual(big.weights.shape, [1, T, T]);
    for (let i = 0; i < 20; i++) m.forward(rand([2, 3, 4], 142 + i));
    assert.deepEqual(Array.from(first.output.data), saved.output);
    assert.deepEqual(Array.from(first.weights.data), saved.weights);
    first.trace.forEach((s, i) => assert.deepEqual(Array.from(s.data), saved.trace[i], s.name));
    assert.equal(first.output.data.byteLength, 2 * 3 * 4 * 4, 'an own buffer, not a view of the heap');
    m.dispose();
  });

  it('dispose frees the handle once; later calls throw DISPOSED', () => {
    const start = memoryStats().liveHandles;
    const m = new MultiHeadAttention({ embedDim: 4 });
    assert.equal(memoryStats().liveHandles, start + 1);
    m.dispose();
    m.dispose();
    assert.equal(memoryStats().liveHandles, start);
    for (const call of [() => m.forward([[1, 2, 3, 4]]), () => m.stateDict(), () => m.loadStateDict({})]) {
      assert.throws(call, (e) => e instanceof AttentionError && e.code === 'DISPOSED');
    }
  });
});
