// The backward functions against an independent float64 reference written here: each forward in
// float64 JS, and its gradient by central finite differences (step 1e-4, in double) of
// sum(forward(inputs) ⊙ gradOutput). Small odd shapes; masks, causal, custom scale, fully masked
// rows, dropout (its mask read back from the forward's trace: `dropped` ÷ `weights`); then errors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  init,
  Tensor,
  AttentionError,
  softmax,
  scaledDotProductAttention,
  scaledDotProductAttentionBackward,
  softmaxBackward,
  layerNormBackward,
  seededNormal,
  memoryStats,
} from '../../src/js/index.js';
import { assertClose, isClose } from './close.js';

// Named tolerances (absolute), float32 core vs the float64 finite-difference reference (whose own
// error is ~1e-8 at step 1e-4: O(h²) truncation plus 1e-16/h rounding).
const kFdStep = 1e-4;
const kSdpaGradTol = 5e-6; // SDPA gradients of O(1) inputs
const kSoftmaxGradTol = 1e-6; // one row's softmax backward
const kLnGradTol = 5e-6; // LayerNorm gradients (rstd ~1 for N(0, 1) rows)
const kDropoutRatioTol = 1e-5; // dropped ÷ weights vs 0 or 1/(1 − p)

await init();

// ---- helpers ------------------------------------------------------------------------------------

const size = (shape) => shape.reduce((a, b) => a * b, 1);

// Central differences of loss(arrays) with respect to every element of arrays[which] (Float64Arrays).
function finiteDifferences(loss, arrays, which) {
  const x = arrays[which];
  const grad = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const keep = x[i];
    x[i] = keep + kFdStep;
    const plus = loss(arrays);
    x[i] = keep - kFdStep;
    const minus = loss(arrays);
    x[i] = keep;
    grad[i] = (plus - minus) / (2 * kFdStep);
  }
  return grad;
}

// Flat index into a tensor of `shape` broadcast (numpy rules, trailing-aligned) to `full`, from a
// multi-index over `full`.
function broadcastIndex(shape, full, index) {
  let flat = 0;
  const offset = full.length - shape.length;
  for (let a = 0; a < shape.length; a++) flat = flat * shape[a] + (shape[a] === 1 ? 0 : index[offset + a]);
  return flat;
}

// Float64 SDPA over q (..., Tq, dk), k (..., Tk, dk), v (..., Tk, dv) with the library's semantics:
// scores·scale + additive mask, boolean mask and causal as −∞, softmax (a fully masked row gives
// zeros), dropout as a multiplier keep[s, i, j] (0 or 1/(1 − p)), times v. Returns
// sum(output ⊙ gradOutput) for the finite differences.
function sdpaLoss(shapes, { scale, mask, additiveMask, causal = false, keep }, gradOutput) {
  const lead = shapes.q.slice(0, -2);
  const [Tq, dk] = shapes.q.slice(-2);
  const Tk = shapes.k.at(-2);
  const dv = shapes.v.at(-1);
  const slices = size(lead);
  const s = scale ?? 1 / Math.sqrt(dk);
  const full = [...lead, Tq, Tk];
  return ([q, k, v]) => {
    let loss = 0;
    const row = new Float64Array(Tk);
    for (let sl = 0; sl < slices; sl++) {
      const leadIndex = [];
      for (let a = lead.length - 1, rest = sl; a >= 0; a--) {
        leadIndex[a] = rest % lead[a];
        rest = Math.floor(rest / lead[a]);
      }
      for (let i = 0; i < Tq; i++) {
        let max = -Infinity;
        for (let j = 0; j < Tk; j++) {
          const index = [...leadIndex, i, j];
          let allowed = !(causal && j > i);
          if (mask) allowed &&= mask.data[broadcastIndex(mask.shape, full, index)] !== 0;
          if (!allowed) {
            row[j] = -Infinity;
            continue;
          }
          let dot = 0;
          for (let c = 0; c < dk; c++) dot += q[(sl * Tq + i) * dk + c] * k[(sl * Tk + j) * dk + c];
          row[j] =
            dot * s + (additiveMask ? additiveMask.data[broadcastIndex(additiveMask.shape, full, index)] : 0);
          max = Math.max(max, row[j]);
        }
        if (max === -Infinity) continue; // fully masked row: zero weights, zero output
        let sum = 0;
        for (let j = 0; j < Tk; j++) {
          row[j] = Math.exp(row[j] - max);
          sum += row[j];
        }
        for (let j = 0; j < Tk; j++) {
          const w = (row[j] / sum) * (keep ? keep[(sl * Tq + i) * Tk + j] : 1);
          for (let c = 0; c < dv; c++)
            loss += w * v[(sl * Tk + j) * dv + c] * gradOutput[(sl * Tq + i) * dv + c];
        }
      }
    }
    return loss;
  };
}

// Checks scaledDotProductAttentionBackward(q, k, v, g, options) against finite differences of the
// reference; refOptions adds what the reference needs beyond the options (the dropout multiplier).
function checkSdpaBackward(shapes, options = {}, refOptions = {}, seed = 1) {
  const q = seededNormal(shapes.q, seed);
  const k = seededNormal(shapes.k, seed + 1);
  const v = seededNormal(shapes.v, seed + 2);
  const out = scaledDotProductAttention(q, k, v, options).output;
  const g = seededNormal(out.shape, seed + 3);
  const grads = scaledDotProductAttentionBackward(q, k, v, g, options);
  const loss = sdpaLoss(shapes, { ...options, ...refOptions }, g.data);
  const arrays = [q, k, v].map((t) => Float64Array.from(t.data));
  ['q', 'k', 'v'].forEach((name, which) => {
    assert.deepEqual(grads[name].shape, shapes[name], `grad ${name} shape`);
    assert.equal(grads[name].dtype, 'float32');
    assertClose(grads[name].data, finiteDifferences(loss, arrays, which), kSdpaGradTol, `grad ${name}`);
  });
  return grads;
}

// ---- scaledDotProductAttentionBackward -----------------------------------------------------------

describe('scaledDotProductAttentionBackward vs float64 finite differences', () => {
  const shapes = { q: [3, 5, 3], k: [3, 7, 3], v: [3, 7, 5] };

  it('plain, (3, 5, 3) × (3, 7, 3) × (3, 7, 5)', () => checkSdpaBackward(shapes));

  it('custom scale', () => checkSdpaBackward(shapes, { scale: 0.8 }, {}, 11));

  it('causal, Tq < Tk and Tq > Tk', () => {
    checkSdpaBackward(shapes, { causal: true }, {}, 21);
    checkSdpaBackward({ q: [2, 7, 3], k: [2, 5, 3], v: [2, 5, 3] }, { causal: true }, {}, 22);
  });

  it('a broadcast boolean mask and a broadcast additive mask (with −∞), rank 4', () => {
    const qs = { q: [2, 3, 5, 3], k: [2, 3, 7, 3], v: [2, 3, 7, 1] };
    const mask = new Tensor(
      Uint8Array.from({ length: 5 * 7 }, (_, i) => (i % 3 === 2 ? 0 : 1)),
      [5, 7],
    );
    const bias = Float32Array.from(seededNormal([2, 1, 1, 7], 5).data);
    bias[3] = -Infinity;
    const additiveMask = new Tensor(bias, [2, 1, 1, 7]);
    checkSdpaBackward(qs, { mask, additiveMask, scale: 0.5 }, {}, 31);
    checkSdpaBackward(qs, { mask, causal: true }, {}, 32);
  });

  it('a fully masked query row gets zero gradients and adds nothing to k and v', () => {
    const allowed = Uint8Array.from({ length: 5 * 7 }, () => 1);
    allowed.fill(0, 2 * 7, 3 * 7); // query row 2 may attend nothing
    const mask = new Tensor(allowed, [5, 7]);
    const grads = checkSdpaBackward(shapes, { mask }, {}, 41);
    for (let b = 0; b < 3; b++) {
      const row = grads.q.data.subarray((b * 5 + 2) * 3, (b * 5 + 3) * 3);
      assert.ok(
        row.every((x) => x === 0),
        `batch ${b}: dq of the masked row is ${row}`,
      );
    }
    // Every row masked: all three gradients are zero.
    const none = new Tensor(new Uint8Array(5 * 7), [5, 7]);
    const zero = checkSdpaBackward(shapes, { mask: none }, {}, 42);
    for (const name of ['q', 'k', 'v'])
      assert.ok(
        zero[name].data.every((x) => x === 0),
        `${name} all zero`,
      );
  });

  it('dropout: the same seed replays the forward mask (read back from the trace: dropped ÷ weights)', () => {
    const p = 0.3;
    const options = { dropout: { p, seed: 1234 }, causal: true };
    const q = seededNormal(shapes.q, 51);
    const k = seededNormal(shapes.k, 52);
    const v = seededNormal(shapes.v, 53);
    const { trace } = scaledDotProductAttention(q, k, v, { ...options, trace: true });
    const weights = trace.find((s) => s.name === 'weights').data;
    const dropped = trace.find((s) => s.name === 'dropped').data;
    const keep = new Float64Array(weights.length);
    let kept = 0;
    let zeroed = 0;
    for (let e = 0; e < weights.length; e++) {
      if (weights[e] === 0) continue; // masked (causal): no gradient flows either way
      const ratio = dropped[e] / weights[e];
      assert.ok(
        isClose(ratio, 0, kDropoutRatioTol) || isClose(ratio, 1 / (1 - p), kDropoutRatioTol),
        `ratio ${ratio} at ${e}`,
      );
      keep[e] = ratio > 0.5 ? 1 / (1 - p) : 0;
      if (keep[e]) kept++;
      else zeroed++;
    }
    assert.ok(kept > 0 && zeroed > 0, `the mask both keeps (${kept}) and drops (${zeroed})`);
    checkSdpaBackward(shapes, options, { keep }, 51);
    // needWeights and trace are accepted and change nothing.
    const g = seededNormal([3, 5, 5], 54);
    const a = scaledDotProductAttentionBackward(q, k, v, g, options);
    const b = scaledDotProductAttentionBackward(q, k, v, g, { ...options, needWeights: false, trace: true });
    for (const name of ['q', 'k', 'v']) assert.deepEqual(b[name].data, a[name].data, name);
  });

  it('accepts { data, shape } objects and nested arrays, and a single (T, d) slice', () => {
    const q = seededNormal([3, 2], 61);
    const k = seededNormal([4, 2], 62);
    const v = seededNormal([4, 3], 63);
    const g = seededNormal([3, 3], 64);
    const a = scaledDotProductAttentionBackward(q, k, v, g);
    const b = scaledDotProductAttentionBackward(
      { data: q.data, shape: q.shape },
      k.toArray(),
      v,
      g.toArray(),
    );
    for (const name of ['q', 'k', 'v']) assert.deepEqual(b[name].data, a[name].data, name);
    checkSdpaBackward({ q: [3, 2], k: [4, 2], v: [4, 3] }, {}, {}, 61);
  });
});

// ---- softmaxBackward -----------------------------------------------------------------------------

// Float64 sum(softmax(x) ⊙ g) over rows of n (a row of all −∞ gives zeros).
function softmaxLoss(n, g) {
  return ([x]) => {
    let loss = 0;
    for (let r = 0; r < x.length / n; r++) {
      const row = x.subarray(r * n, (r + 1) * n);
      const max = Math.max(...row);
      if (max === -Infinity) continue;
      let sum = 0;
      for (const value of row) sum += Math.exp(value - max);
      for (let j = 0; j < n; j++) loss += (Math.exp(row[j] - max) / sum) * g[r * n + j];
    }
    return loss;
  };
}

describe('softmaxBackward vs float64 finite differences', () => {
  it('(3, 5, 7) from the output y = softmax(x)', () => {
    const x = seededNormal([3, 5, 7], 71);
    const g = seededNormal([3, 5, 7], 72);
    const dx = softmaxBackward(softmax(x), g);
    assert.deepEqual(dx.shape, [3, 5, 7]);
    assertClose(
      dx.data,
      finiteDifferences(softmaxLoss(7, g.data), [Float64Array.from(x.data)], 0),
      kSoftmaxGradTol,
      'dx',
    );
  });

  it('masked logits (−∞) get zero gradient; a fully masked row is all zeros', () => {
    const values = Float32Array.from(seededNormal([3, 5], 73).data);
    values[1] = -Infinity;
    values[4] = -Infinity;
    values.fill(-Infinity, 5, 10);
    const x = new Tensor(values, [3, 5]);
    const g = seededNormal([3, 5], 74);
    const dx = softmaxBackward(softmax(x), g);
    for (const e of [1, 4, 5, 6, 7, 8, 9]) assert.ok(dx.data[e] === 0, `dx[${e}] = ${dx.data[e]}, want ±0`);
    assertClose(
      dx.data,
      finiteDifferences(softmaxLoss(5, g.data), [Float64Array.from(values)], 0),
      kSoftmaxGradTol,
      'dx',
    );
  });
});

// ---- layerNormBackward ---------------------------------------------------------------------------

// Float64 sum(layerNorm(x; w, b) ⊙ g) over rows of n (biased variance); w or b null = ones / zeros.
function layerNormLoss(n, eps, g) {
  return ([x, w, b]) => {
    let loss = 0;
    for (let r = 0; r < x.length / n; r++) {
      const row = x.subarray(r * n, (r + 1) * n);
      const mean = row.reduce((a, c) => a + c, 0) / n;
      const variance = row.reduce((a, c) => a + (c - mean) ** 2, 0) / n;
      const rstd = 1 / Math.sqrt(variance + eps);
      for (let j = 0; j < n; j++) {
        const y = (row[j] - mean) * rstd * (w ? w[j] : 1) + (b ? b[j] : 0);
        loss += y * g[r * n + j];
      }
    }
    return loss;
  };
}

describe('layerNormBackward vs float64 finite differences', () => {
  it('(3, 5, 7) with weight and bias: gradients of x, weight and bias', () => {
    const x = seededNormal([3, 5, 7], 81);
    const g = seededNormal([3, 5, 7], 82);
    const weight = seededNormal([7], 83);
    const bias = seededNormal([7], 84);
    const grads = layerNormBackward(x, g, { weight, bias, eps: 1e-3 });
    assert.deepEqual(Object.keys(grads).sort(), ['bias', 'weight', 'x']);
    assert.deepEqual(grads.x.shape, [3, 5, 7]);
    assert.deepEqual(grads.weight.shape, [7]);
    assert.deepEqual(grads.bias.shape, [7]);
    const loss = layerNormLoss(7, 1e-3, g.data);
    const arrays = [x, weight, bias].map((t) => Float64Array.from(t.data));
    assertClose(grads.x.data, finiteDifferences(loss, arrays, 0), kLnGradTol, 'dx');
    assertClose(grads.weight.data, finiteDifferences(loss, arrays, 1), kLnGradTol, 'dweight');
    assertClose(grads.bias.data, finiteDifferences(loss, arrays, 2), kLnGradTol, 'dbias');
  });

  it('without weight and bias: only x (default eps); with weight only: x and weight', () => {
    const x = seededNormal([5, 3], 85);
    const g = seededNormal([5, 3], 86);
    const plain = layerNormBackward(x, g);
    assert.deepEqual(Object.keys(plain), ['x']);
    assertClose(
      plain.x.data,
      finiteDifferences(layerNormLoss(3, 1e-5, g.data), [Float64Array.from(x.data), null, null], 0),
      kLnGradTol,
      'dx',
    );
    const weight = [0.5, -1, 2];
    const withWeight = layerNormBackward(x, g, { weight });
    assert.deepEqual(Object.keys(withWeight).sort(), ['weight', 'x']);
    const arrays = [Float64Array.from(x.data), Float64Array.from(weight), null];
    const loss = layerNormLoss(3, 1e-5, g.data);
    assertClose(withWeight.x.data, finiteDifferences(loss, arrays, 0), kLnGradTol, 'dx');
    assertClose(withWeight.weight.data, finiteDifferences(loss, arrays, 1), kLnGradTol, 'dweight');
  });
});

// ---- errors --------------------------------------------------------------------------------------

describe("backward errors: the forward's, plus gradOutput's; the heap is unchanged after each", () => {
  const q = seededNormal([2, 3, 4], 91);
  const k = seededNormal([2, 5, 4], 92);
  const v = seededNormal([2, 5, 3], 93);
  const g = seededNormal([2, 3, 3], 94);
  const ids = new Tensor(new Int32Array(24), [2, 3, 4]);
  const withNaN = (t) => {
    const data = Float32Array.from(t.data);
    data[data.length - 1] = NaN;
    return new Tensor(data, t.shape);
  };

  function expectError(fn, code, message) {
    scaledDotProductAttentionBackward(q, k, v, g); // warm: anything allocated once is allocated now
    const before = memoryStats().heapUsedBytes;
    assert.throws(fn, (error) => {
      assert.ok(error instanceof AttentionError, String(error));
      assert.equal(error.code, code, error.message);
      assert.match(error.message, message);
      return true;
    });
    assert.equal(memoryStats().heapUsedBytes, before, `heap in use after ${code} ${message}`);
  }

  it('SDPA: gradOutput of the wrong shape → SHAPE_MISMATCH naming gradOutput', () => {
    expectError(
      () => scaledDotProductAttentionBackward(q, k, v, seededNormal([2, 3, 4])),
      'SHAPE_MISMATCH',
      /gradOutput.*\(2, 3, 3\).*\(2, 3, 4\)/,
    );
    expectError(
      () => scaledDotProductAttentionBackward(q, k, v, seededNormal([3, 3])),
      'SHAPE_MISMATCH',
      /gradOutput/,
    );
  });

  it("SDPA: the forward's shape, mask and option errors", () => {
    expectError(
      () => scaledDotProductAttentionBackward(q, seededNormal([2, 5, 3]), v, g),
      'SHAPE_MISMATCH',
      /d_k/,
    );
    expectError(
      () => scaledDotProductAttentionBackward(q, k, v, g, { mask: seededNormal([3, 5]) }),
      'INVALID_MASK',
      /mask must be a boolean tensor/,
    );
    expectError(
      () => scaledDotProductAttentionBackward(q, k, v, g, { attn_mask: null }),
      'INVALID_ARGUMENT',
      /unknown scaledDotProductAttentionBackward option 'attn_mask'/,
    );
    expectError(
      () => scaledDotProductAttentionBackward(q, k, v, g, { keyPaddingMask: null }),
      'INVALID_ARGUMENT',
      /keyPaddingMask/,
    );
    expectError(
      () => scaledDotProductAttentionBackward(q, k, v, g, { dropout: { p: 1.5 } }),
      'INVALID_ARGUMENT',
      /dropout/,
    );
    expectError(
      () => scaledDotProductAttentionBackward(q, k, v, g, { dropout: { p: 0.1, seed: -1 } }),
      'INVALID_ARGUMENT',
      /dropout.seed/,
    );
    expectError(
      () => scaledDotProductAttentionBackward(q, k, v, g, { scale: 'big' }),
      'INVALID_ARGUMENT',
      /scale must be a number/,
    );
  });

  it('NaN → NON_FINITE (in gradOutput and in the inputs)', () => {
    expectError(() => scaledDotProductAttentionBackward(q, k, v, withNaN(g)), 'NON_FINITE', /gradOutput/);
    expectError(() => scaledDotProductAttentionBackward(withNaN(q), k, v, g), 'NON_FINITE', /q|query/);
    expectError(() => softmaxBackward(softmax(q), withNaN(q)), 'NON_FINITE', /gradOutput/);
    expectError(() => layerNormBackward(q, withNaN(q)), 'NON_FINITE', /gradOutput/);
    expectError(() => layerNormBackward(withNaN(q), q), 'NON_FINITE', /./);
  });

  it('an int32 tensor where floats are expected → INVALID_ARGUMENT naming the argument', () => {
    expectError(
      () => scaledDotProductAttentionBackward(ids, k, v, g),
      'INVALID_ARGUMENT',
      /q must be a float32 tensor, got an int32 tensor/,
    );
    expectError(
      () => scaledDotProductAttentionBackward(q, k, v, new Tensor(new Int32Array(18), [2, 3, 3])),
      'INVALID_ARGUMENT',
      /gradOutput must be a float32 tensor/,
    );
    expectError(() => softmaxBackward(ids, q), 'INVALID_ARGUMENT', /y must be a float32 tensor/);
    expectError(() => layerNormBackward(q, ids), 'INVALID_ARGUMENT', /gradOutput must be a float32 tensor/);
    expectError(
      () => layerNormBackward(q, q, { weight: new Tensor(new Int32Array(4)) }),
      'INVALID_ARGUMENT',
      /weight must be a float32 tensor/,
    );
  });

  it('softmaxBackward and layerNormBackward: shapes and options', () => {
    expectError(() => softmaxBackward(softmax(q), seededNormal([2, 3, 5])), 'SHAPE_MISMATCH', /gradOutput/);
    expectError(() => layerNormBackward(q, seededNormal([2, 4, 4])), 'SHAPE_MISMATCH', /gradOutput/);
    expectError(() => layerNormBackward(q, q, { weight: [1, 2] }), 'SHAPE_MISMATCH', /weight has 2 values/);
    expectError(() => layerNormBackward(q, q, { eps: 0 }), 'INVALID_ARGUMENT', /eps must be > 0/);
    expectError(
      () => layerNormBackward(q, q, { epsilon: 1e-5 }),
      'INVALID_ARGUMENT',
      /unknown layerNormBackward option 'epsilon'/,
    );
  });
});
