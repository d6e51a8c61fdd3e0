// Attention as today's models use it, from JS: scaledDotProductAttention and its
// backward with positionOffset, causal 'top-left' / 'bottom-right', window, alibi and enableGQA
// against the PyTorch fixtures (tests/golden/make_modern_fixtures.py); applyRotary, its backward and
// alibiSlopes against theirs; MultiHeadAttention with the same position options against SDPA on its
// own projections; every refusal an AttentionError with the contract's code, the heap unchanged.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  init,
  Tensor,
  AttentionError,
  scaledDotProductAttention,
  scaledDotProductAttentionBackward,
  applyRotary,
  applyRotaryBackward,
  alibiSlopes,
  MultiHeadAttention,
  seededNormal,
  memoryStats,
} from '../../src/js/index.js';
import { listFixtures, loadFixture } from './fixture.js';
import { assertClose, isClose, maxAbsDiff, FIXTURE_TOL } from './close.js';

// MHA with position options against SDPA run on its own projections (same kernels, other order).
const kMhaVsSdpaTol = 1e-5;

await init();

// The fixtures' bound (tests/cpp/test_golden_grad.cpp): 1e-5 absolute + 1e-4 relative.
const assertFixtureClose = (actual, expected, what) => assertClose(actual, expected, FIXTURE_TOL, what);

const tensor = (t) => new Tensor(t.data, t.shape);

/** The fixture's options in the API's spelling. */
function sdpaOptions(f) {
  const mode = f.scalar('causal_mode', 0);
  const o = {};
  if (mode === 1) o.causal = f.scalar('position_offset', 0) % 2 ? true : 'top-left'; // both spellings
  if (mode === 2) o.causal = 'bottom-right';
  if (mode === 1 && f.scalar('position_offset', 0) !== 0) o.positionOffset = f.scalar('position_offset');
  if (f.scalar('window', 0) > 0) o.window = f.scalar('window');
  if (f.scalar('alibi', 0)) o.alibi = f.has('alibi_slopes') ? Array.from(f.get('alibi_slopes').data) : true;
  if (f.scalar('enable_gqa', 0)) o.enableGQA = true;
  return o;
}

describe('scaledDotProductAttention: offset, causal alignment, window, ALiBi and GQA fixtures, forward and backward', () => {
  const names = listFixtures('index_modern.txt').filter((n) => n.startsWith('modern_sdpa_'));
  it('lists the 10 modern_sdpa_* fixtures', () => assert.equal(names.length, 10));
  for (const name of names) {
    it(name, () => {
      const f = loadFixture(name);
      const [q, k, v] = ['q', 'k', 'v'].map((n) => tensor(f.get(n)));
      const o = sdpaOptions(f);
      const r = scaledDotProductAttention(q, k, v, o);
      assertFixtureClose(r.output.data, f.get('output').data, 'output');
      assert.deepEqual(r.weights.shape, f.get('weights').shape);
      assertFixtureClose(r.weights.data, f.get('weights').data, 'weights');
      const lean = scaledDotProductAttention(q, k, v, { ...o, needWeights: false });
      assertFixtureClose(lean.output.data, f.get('output').data, 'output without weights');
      const g = scaledDotProductAttentionBackward(q, k, v, tensor(f.get('grad_output')), o);
      assert.deepEqual(g.k.shape, k.shape);
      assertFixtureClose(g.q.data, f.get('grad_q').data, 'grad q');
      assertFixtureClose(g.k.data, f.get('grad_k').data, 'grad k');
      assertFixtureClose(g.v.data, f.get('grad_v').data, 'grad v');
    });
  }

  it("alibi: true uses the paper's slopes, as alibiSlopes(H) gives them", () => {
    const f = loadFixture('modern_sdpa_alibi_h6');
    const [q, k, v] = ['q', 'k', 'v'].map((n) => tensor(f.get(n)));
    const o = sdpaOptions(f);
    assert.deepEqual(Float32Array.from(o.alibi), alibiSlopes(6));
    assert.deepEqual(
      scaledDotProductAttention(q, k, v, { ...o, alibi: true }).output.data,
      scaledDotProductAttention(q, k, v, o).output.data,
    );
  });

  it('a trace names the ALiBi bias step, between scaled and masked', () => {
    const q = seededNormal([1, 4, 3, 2], 1),
      k = seededNormal([1, 4, 3, 2], 2),
      v = seededNormal([1, 4, 3, 2], 3);
    const names = scaledDotProductAttention(q, k, v, { causal: true, alibi: true, trace: true }).trace.map(
      (s) => s.name,
    );
    assert.deepEqual(names.slice(0, 4), ['scores', 'scaled', 'alibi', 'masked']);
  });
});

describe('applyRotary and alibiSlopes: the rotary and slope fixtures', () => {
  for (const name of ['modern_rope_half', 'modern_rope_interleaved', 'modern_rope_partial_offset']) {
    it(name, () => {
      const f = loadFixture(name);
      const o = {
        base: f.scalar('base'),
        style: f.scalar('interleaved') ? 'interleaved' : 'half',
        dims: f.scalar('dims'),
        offset: f.scalar('offset'),
      };
      const y = applyRotary(tensor(f.get('x')), o);
      assert.deepEqual(y.shape, f.get('x').shape);
      assertFixtureClose(y.data, f.get('output').data, 'output');
      assertFixtureClose(
        applyRotaryBackward(tensor(f.get('grad_output')), o).data,
        f.get('grad_x').data,
        'grad x',
      );
    });
  }

  it('alibiSlopes for 4, 6, 8 and 12 heads', () => {
    const f = loadFixture('modern_alibi_slopes');
    for (const h of [4, 6, 8, 12])
      assertFixtureClose(alibiSlopes(h), f.get(`slopes_${h}`).data, `slopes_${h}`);
  });

  it('defaults: base 10000, half, every feature, offset 0; the same scores whatever the absolute offset', () => {
    const q = seededNormal([1, 8], 4),
      k = seededNormal([1, 8], 5);
    const dot = (a, b) => a.data.reduce((s, x, i) => s + x * b.data[i], 0);
    assert.deepEqual(
      applyRotary(q).data,
      applyRotary(q, { base: 10000, style: 'half', dims: 8, offset: 0 }).data,
    );
    const at = (offset) => dot(applyRotary(q, { offset: offset + 3 }), applyRotary(k, { offset }));
    for (const offset of [0, 7, 100, 5000])
      assert.ok(Math.abs(at(offset) - at(0)) < 1e-4, `offset ${offset}`);
  });
});

describe('MultiHeadAttention with position options: SDPA on its own projections', () => {
  it('window, ALiBi, bottom-right and positionOffset, with their backward', () => {
    const E = 8,
      H = 2;
    const mha = new MultiHeadAttention({ embedDim: E, numHeads: H, seed: 3 });
    const x = seededNormal([1, 5, E], 8),
      mem = seededNormal([1, 7, E], 9);
    const sd = mha.stateDict();
    const w = sd.in_proj_weight.data,
      b = sd.in_proj_bias.data;
    // (1, T, E) → (1, H, T, E/H) for rows [r0, r0 + E) of in_proj.
    const project = (input, r0) => {
      const T = input.shape[1],
        d = E / H,
        out = new Float32Array(H * T * d);
      for (let t = 0; t < T; t++)
        for (let o = 0; o < E; o++) {
          let s = b[r0 + o];
          for (let i = 0; i < E; i++) s += input.data[t * E + i] * w[(r0 + o) * E + i];
          out[(Math.floor(o / d) * T + t) * d + (o % d)] = s;
        }
      return new Tensor(out, [1, H, T, d]);
    };
    for (const o of [
      { causal: true, window: 2 },
      { alibi: true },
      { causal: 'bottom-right', alibi: [0.5, 0.125] },
      { causal: true, positionOffset: 3, window: 3 },
    ]) {
      const got = mha.forward(x, mem, mem, { ...o, averageWeights: false });
      const want = scaledDotProductAttention(project(x, 0), project(mem, E), project(mem, 2 * E), o);
      const diff = maxAbsDiff(got.weights.data, want.weights.data);
      assert.ok(diff < kMhaVsSdpaTol, `${JSON.stringify(o)}: weights differ by ${diff}`);
      mha.forward(x, mem, mem, { ...o, requiresGrad: true });
      const g = mha.backward(seededNormal([1, 5, E], 10));
      assert.ok(
        g.inputs.query.data.every(Number.isFinite) && g.params.in_proj_weight.data.some((v) => v !== 0),
      );
    }
    mha.dispose();
  });
});

describe("refusals: AttentionError with the contract's code, the heap unchanged", () => {
  const q = seededNormal([1, 4, 3, 2], 1),
    k2 = seededNormal([1, 2, 3, 2], 2),
    k3 = seededNormal([1, 3, 3, 2], 3);
  const expectError = (fn, code, pattern) =>
    assert.throws(fn, (e) => e instanceof AttentionError && e.code === code && pattern.test(e.message));
  it('every bad option', () => {
    const before = memoryStats().heapBytes;
    expectError(() => scaledDotProductAttention(q, k2, k2), 'SHAPE_MISMATCH', /enableGQA/);
    expectError(
      () => scaledDotProductAttention(q, k3, k3, { enableGQA: true }),
      'HEADS_DO_NOT_DIVIDE',
      /must divide/,
    );
    expectError(
      () => scaledDotProductAttention(q, q, q, { causal: 'bottom_right' }),
      'INVALID_ARGUMENT',
      /causal must be true, false, 'top-left' or 'bottom-right'/,
    );
    expectError(
      () => scaledDotProductAttention(q, q, q, { causal: 1 }),
      'INVALID_ARGUMENT',
      /causal must be/,
    );
    expectError(
      () => scaledDotProductAttention(q, q, q, { window: 0 }),
      'INVALID_ARGUMENT',
      /window must be an integer >= 1/,
    );
    expectError(
      () => scaledDotProductAttention(q, q, q, { window: 1.5 }),
      'INVALID_ARGUMENT',
      /window must be an integer/,
    );
    expectError(
      () => scaledDotProductAttention(q, q, q, { causal: 'bottom-right', positionOffset: 2 }),
      'INVALID_ARGUMENT',
      /contradicts/,
    );
    expectError(
      () => scaledDotProductAttention(q, q, q, { positionOffset: -1 }),
      'INVALID_ARGUMENT',
      /positionOffset must be >= 0/,
    );
    expectError(
      () => scaledDotProductAttention(q, q, q, { alibi: [1, 2] }),
      'INVALID_ARGUMENT',
      /one slope per head: 4 heads, got 2/,
    );
    expectError(
      () => scaledDotProductAttention(q, q, q, { alibi: 'yes' }),
      'INVALID_ARGUMENT',
      /alibi must be/,
    );
    expectError(
      () =>
        scaledDotProductAttention(seededNormal([3, 2], 1), seededNormal([3, 2], 1), seededNormal([3, 2], 1), {
          alibi: true,
        }),
      'INVALID_ARGUMENT',
      /head axis/,
    );
    expectError(() => applyRotary(seededNormal([3, 7], 1)), 'INVALID_ARGUMENT', /even/);
    expectError(
      () => applyRotary(seededNormal([3, 8], 1), { style: 'neox' }),
      'INVALID_ARGUMENT',
      /style must be 'half'/,
    );
    expectError(() => applyRotary(seededNormal([3, 8], 1), { dims: 10 }), 'INVALID_ARGUMENT', /dims/);
    expectError(() => alibiSlopes(0), 'INVALID_ARGUMENT', /heads/);
    const mha = new MultiHeadAttention({ embedDim: 4, numHeads: 2 });
    expectError(
      () => mha.forward(seededNormal([1, 3, 4], 1), null, null, { enableGQA: true }),
      'INVALID_ARGUMENT',
      /numKVHeads/,
    );
    expectError(
      () => mha.forward(seededNormal([1, 3, 4], 1), null, null, { causal: 'yes' }),
      'INVALID_ARGUMENT',
      /causal must be/,
    );
    mha.dispose();
    assert.equal(memoryStats().heapBytes, before);
  });
});

describe('MultiHeadAttention numKVHeads, rope and the KV cache: the PyTorch fixtures', () => {
  const names = listFixtures('index_modern.txt').filter(
    (n) => n.startsWith('modern_mha_') && n !== 'modern_mha_cache',
  );
  const PARAMS = [
    'q_proj_weight',
    'k_proj_weight',
    'v_proj_weight',
    'in_proj_bias',
    'out_proj.weight',
    'out_proj.bias',
  ];
  const moduleOf = (f) => {
    const rope = f.scalar('rope', 0)
      ? {
          base: f.scalar('rope_base'),
          style: f.scalar('rope_interleaved') ? 'interleaved' : 'half',
          dims: f.scalar('rope_dims'),
        }
      : null;
    const mha = new MultiHeadAttention({
      embedDim: f.scalar('embed_dim'),
      numHeads: f.scalar('num_heads'),
      numKVHeads: f.scalar('num_kv_heads'),
      rope,
    });
    mha.loadStateDict(Object.fromEntries(PARAMS.map((n) => [n, tensor(f.get(n))])));
    return mha;
  };
  const optionsOf = (f) => {
    const o = sdpaOptions(f);
    delete o.enableGQA;
    return o;
  };
  it('lists the 6 forward-and-backward fixtures', () => assert.equal(names.length, 6));
  for (const name of names) {
    it(name, () => {
      const f = loadFixture(name);
      const mha = moduleOf(f);
      const key = f.has('key') ? tensor(f.get('key')) : null,
        value = f.has('value') ? tensor(f.get('value')) : null;
      const r = mha.forward(tensor(f.get('query')), key, value, { ...optionsOf(f), requiresGrad: true });
      assertFixtureClose(r.output.data, f.get('output').data, 'output');
      const g = mha.backward(tensor(f.get('grad_output')));
      assertFixtureClose(g.inputs.query.data, f.get('grad_query').data, 'grad query');
      if (f.has('grad_key')) assertFixtureClose(g.inputs.key.data, f.get('grad_key').data, 'grad key');
      const sd = mha.stateDict();
      for (const n of PARAMS) {
        if (!(n in g.params)) continue; // numKVHeads == numHeads: q/k/v live in in_proj_weight
        const want = f.get(`grad.${n}`).data,
          got = g.params[n].data;
        for (let e = 0; e < want.length; e++) {
          if (Math.abs(want[e]) < 1e-6) assert.ok(Math.abs(got[e]) < 1e-5, `${n}[${e}] noise`);
          else
            assert.ok(isClose(got[e], want[e], FIXTURE_TOL), `grad.${n}[${e}] = ${got[e]}, want ${want[e]}`);
        }
      }
      assert.deepEqual(Object.keys(sd).sort(), Object.keys(g.params).sort());
      mha.dispose();
    });
  }

  it('modern_mha_cache: one token at a time and in chunks equals the full forward; then TOO_LARGE leaves it unchanged', () => {
    const f = loadFixture('modern_mha_cache');
    const mha = moduleOf(f);
    const x = tensor(f.get('query'));
    const E = x.shape[2];
    const rows = (t0, n) => new Tensor(x.data.slice(t0 * E, (t0 + n) * E), [1, n, E]);
    for (const chunks of [[1, 1, 1, 1, 1, 1, 1, 1, 1], [4, 1, 4], [9]]) {
      const cache = mha.createCache({ maxLength: 9 });
      const out = [];
      let t0 = 0;
      for (const n of chunks) {
        out.push(
          ...mha.forward(rows(t0, n), null, null, { cache, causal: true, needWeights: false }).output.data,
        );
        t0 += n;
        assert.equal(cache.length, t0);
      }
      assertFixtureClose(Float32Array.from(out), f.get('output').data, `chunks ${chunks}`);
      assert.throws(
        () => mha.forward(rows(0, 1), null, null, { cache, causal: true }),
        (e) => e.code === 'TOO_LARGE' && /maxLength = 9/.test(e.message),
      );
      assert.equal(cache.length, 9);
      assert.equal(cache.reset().length, 0);
      cache.dispose();
    }
    const other = new MultiHeadAttention({ embedDim: E, numHeads: 4, numKVHeads: 2 });
    const foreign = other.createCache({ maxLength: 4 });
    assert.throws(
      () => mha.forward(rows(0, 1), null, null, { cache: foreign }),
      (e) => e.code === 'INVALID_ARGUMENT' && /this module's createCache/.test(e.message),
    );
    const mine = mha.createCache({ maxLength: 4 });
    assert.throws(
      () => mha.forward(rows(0, 1), rows(0, 1), null, { cache: mine }),
      (e) => e.code === 'INVALID_ARGUMENT' && /self-attention/.test(e.message),
    );
    assert.throws(
      () => mha.forward(rows(0, 1), null, null, { cache: mine, mask: [[true]] }),
      (e) => e.code === 'INVALID_ARGUMENT' && /masks/.test(e.message),
    );
    for (const h of [other, foreign, mine, mha]) h.dispose();
  });

  it('config refusals: numKVHeads not dividing numHeads, odd rotary dims, a rope offset', () => {
    const expectError = (fn, code, pattern) =>
      assert.throws(fn, (e) => e instanceof AttentionError && e.code === code && pattern.test(e.message));
    expectError(
      () => new MultiHeadAttention({ embedDim: 16, numHeads: 4, numKVHeads: 3 }),
      'HEADS_DO_NOT_DIVIDE',
      /numKVHeads 3 does not divide numHeads 4/,
    );
    expectError(
      () => new MultiHeadAttention({ embedDim: 16, numHeads: 4, rope: { dims: 3 } }),
      'INVALID_ARGUMENT',
      /even/,
    );
    expectError(
      () => new MultiHeadAttention({ embedDim: 16, numHeads: 4, rope: { offset: 2 } }),
      'INVALID_ARGUMENT',
      /no offset/,
    );
    expectError(
      () => new MultiHeadAttention({ embedDim: 16, numHeads: 4, num_key_value_heads: 2 }),
      'INVALID_ARGUMENT',
      /numKVHeads/,
    );
    const m = new MultiHeadAttention({ embedDim: 16, numHeads: 4, numKVHeads: 1, rope: true });
    assert.deepEqual(m.config.rope, { base: 10000, style: 'half', dims: 4 });
    assert.equal(m.numKVHeads, 1);
    assert.deepEqual(Object.keys(m.stateDict()), [
      'q_proj_weight',
      'k_proj_weight',
      'v_proj_weight',
      'in_proj_bias',
      'out_proj.weight',
      'out_proj.bias',
    ]);
    assert.deepEqual(m.stateDict().k_proj_weight.shape, [4, 16]);
    m.dispose();
  });
});
