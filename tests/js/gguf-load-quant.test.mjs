// Quantized GGUF weights kept as stored: each tiny checkpoint written with Q8_0 and Q4_0 matrices
// (a quantizer written here from ggml's block layouts and quantize_row_q8_0_ref / _q4_0_ref, on the
// matrices whose rows are whole blocks) gives the logits of the same model loaded from a
// GGUF whose F32 weights are the dequantized values, within 1e-5 relative — the q/k rows of the
// permuted families reordered as whole rows of blocks, the embeddings looked up from blocks; for
// T = 7 (the panel GEMM) and for 3 rows (decoding's fused GEMV).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { init, loadPretrained } from '../../src/js/index.js';
import { listPretrained } from './fixture.js';
import { GGML, fixtureGGUF, fromHalf, ggufFixtures, toHalf } from './gguf-from-fixture.js';

await init();

const f32 = Math.fround;

// One block of 32: Q8_0 { fp16 d; int8 qs[32] } (34 bytes) and its dequantized values.
function q8Block(x, out, at, deq) {
  const amax = x.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  const d = f32(amax / 127),
    id = d ? f32(1 / d) : 0;
  const dh = toHalf(d),
    dq = f32(fromHalf(dh));
  out[at] = dh & 0xff;
  out[at + 1] = dh >> 8;
  x.forEach((v, j) => {
    const q = Math.sign(v * id) * Math.round(Math.abs(f32(v * id))); // roundf: half away from zero
    out[at + 2 + j] = q & 0xff;
    deq[j] = f32(dq * q);
  });
}

// One block of 32: Q4_0 { fp16 d; uint8 qs[16] } (18 bytes): x[j] in the low nibbles, x[j + 16]
// in the high ones, each (q − 8)·d.
function q4Block(x, out, at, deq) {
  let amax = 0,
    max = 0;
  for (const v of x)
    if (amax < Math.abs(v)) {
      amax = Math.abs(v);
      max = v;
    }
  const d = f32(max / -8),
    id = d ? f32(1 / d) : 0;
  const dh = toHalf(d),
    dq = f32(fromHalf(dh));
  out[at] = dh & 0xff;
  out[at + 1] = dh >> 8;
  const nibble = (v) => Math.min(15, Math.trunc(f32(f32(v * id) + 8.5)));
  for (let j = 0; j < 16; j++) {
    const lo = nibble(x[j]),
      hi = nibble(x[j + 16]);
    out[at + 2 + j] = lo | (hi << 4);
    deq[j] = f32((lo - 8) * dq);
    deq[j + 16] = f32((hi - 8) * dq);
  }
}

const KINDS = { Q8_0: [GGML.Q8_0, 34, q8Block], Q4_0: [GGML.Q4_0, 18, q4Block] };

// A matrix quantized block by block: { type, data } and its dequantized values.
function quantize(kind, values) {
  const [type, blockBytes, block] = KINDS[kind];
  const blocks = values.length / 32;
  const data = new Uint8Array(blocks * blockBytes);
  const deq = new Float32Array(values.length);
  for (let b = 0; b < blocks; b++) {
    const d = new Float32Array(32);
    block(values.subarray(b * 32, b * 32 + 32), data, b * blockBytes, d);
    deq.set(d, b * 32);
  }
  return { type, data, deq };
}

// Q8_0 for the attention and the embeddings, Q4_0 for the MLP and the head: mixed per tensor.
const kindOf = (name) => (/ffn_|^output\./.test(name) ? 'Q4_0' : 'Q8_0');

// The quantized file and its F32 twin holding the dequantized values; a matrix whose rows are not
// whole blocks (LFM2's MLP width of 80, Gemma 4's per-layer tables) stays F32 in both.
function twins(model) {
  const quantized = fixtureGGUF(model, {
    quantize: (name, values, row) => {
      if (row % 32 !== 0) return null;
      const { type, data } = quantize(kindOf(name), values);
      return { type, data };
    },
  });
  const dequantized = fixtureGGUF(model, {
    quantize: (name, values, row) =>
      row % 32 !== 0
        ? null
        : { type: GGML.F32, data: new Uint8Array(quantize(kindOf(name), values).deq.buffer) },
  });
  return { quantized, dequantized };
}

describe('quantized GGUF weights (Q8_0, Q4_0) equal their dequantized values', () => {
  it('the quantizers: values within half a step of the input', () => {
    const x = Float32Array.from({ length: 64 }, (_, i) => Math.sin(i * 1.7) * (i % 5));
    for (const kind of ['Q8_0', 'Q4_0']) {
      const { deq, data } = quantize(kind, x);
      assert.equal(data.length, 2 * KINDS[kind][1]);
      for (let b = 0; b < 2; b++) {
        const block = x.subarray(b * 32, b * 32 + 32);
        const amax = Math.max(...block.map(Math.abs));
        const step = kind === 'Q8_0' ? amax / 127 : amax / 8;
        block.forEach((v, j) =>
          assert.ok(Math.abs(deq[b * 32 + j] - v) <= step * 0.51 + 1e-6, `${kind} ${j}`),
        );
      }
    }
  });

  for (const name of ggufFixtures(listPretrained())) {
    it(`${name}: logits of the quantized file = those of the dequantized F32 file`, async () => {
      const { quantized, dequantized } = twins(name);
      const q = await loadPretrained({ gguf: quantized });
      const d = await loadPretrained({ gguf: dequantized });
      assert.ok(q.weightBytes < 0.45 * d.weightBytes, 'the blocks are kept as stored');
      const ids = [
        [5, 17, 42, 88, 3, 61, 29],
        [1, 2, 3, 4, 5, 6, 7],
      ];
      const a = q.forward(ids, { attention: [0] }),
        b = d.forward(ids, { attention: [0] });
      // Three rows, as decoding has: the quantized products take the fused GEMV, q/k/v and gate/up
      // together (kernels::linear_nt_quant_group) — another order of the same float operations.
      const short = [[9, 4, 33]];
      for (const [got, want, what] of [
        [a.logits.data, b.logits.data, 'logits'],
        [a.attention[0].data, b.attention[0].data, 'attention 0'],
        [q.forward(short).logits.data, d.forward(short).logits.data, 'logits of 3 rows'],
      ]) {
        const scale = want.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
        got.forEach((v, i) => {
          if (!(Math.abs(v - want[i]) <= 1e-5 * scale))
            assert.fail(`${name} ${what}[${i}] = ${v}, want ${want[i]}`);
        });
      }
      q.dispose();
      d.dispose();
    });
  }
});
