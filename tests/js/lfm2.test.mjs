// LFM2 (src/js/architectures/lfm2.js, the core's short convolution): what the config classes
// compute (the MLP width, layer kinds from layer_types or full_attn_idxs, the older key spellings),
// refusals by name, model.layers[l] and the forward's labels on the lfm2-tiny fixture, and the
// interpretability tools refusing a conv layer, and llama.cpp's lfm2 files as LFM2Model converts the
// folder (tests/js/gguf-from-fixture.js). Its logits, maps and generation against PyTorch are
// pretrained.test.mjs's (every fixture folder), the GGUF files' against llama.cpp
// gguf-llamacpp.test.mjs's; decoding and the map's float64 check are tests/cpp/test_short_conv.cpp's.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { init, loadPretrained, attentionRollout, AttentionError, Tensor } from '../../src/js/index.js';
import { coreConfig } from '../../src/js/pretrained/config.js';
import { lfm2Intermediate } from '../../src/js/architectures/lfm2.js';
import { json, load, rejects } from './pretrained-files.mjs';
import { fixtureGGUF } from './gguf-from-fixture.js';

await init();

const NAME = 'lfm2-tiny';
// Central differences of the float32 forward at step 1e-2 along a direction v: their own error is the
// forward's rounding / h plus O(h²) (measured ≤ 2e-5 of the bound); allowed: FD_TOL × |∇M on v's
// support|₂ · |v|₂ (the Cauchy–Schwarz bound on |∇M·v|). A conv backward off by a row or a channel
// misses by ~5e-2 of it.
const FD_TOL = 5e-4;
const base = () => json(NAME, 'config.json');

describe('LFM2 configs', () => {
  it('the MLP width as Lfm2MLP computes it (LFM2-1.2B: 12288 → 8192; the fixture: 72 → 80)', () => {
    assert.equal(lfm2Intermediate(12288, true, 1.0, 256), 8192);
    assert.equal(lfm2Intermediate(72, true, 1.0, 40), 80);
    assert.equal(lfm2Intermediate(72, true, null, 40), 48); // no multiplier: no rounding either
    assert.equal(lfm2Intermediate(72, false, 1.0, 40), 72);
    assert.equal(coreConfig(base()).core.intermediate, 80);
  });

  it('full_attn_idxs (older configs) and the older key spellings give the same core config', () => {
    const want = coreConfig(base()).core;
    const {
      layer_types: _t,
      intermediate_size: i,
      rope_theta: r,
      tie_word_embeddings: tie,
      ...rest
    } = base();
    const older = {
      ...rest,
      full_attn_idxs: [1],
      block_ff_dim: i,
      theta: r,
      tie_embedding: tie,
      block_dim: 32,
    };
    assert.deepEqual(coreConfig(older).core, want);
    assert.deepEqual(want.layerMixer, [1, 0]);
    assert.equal(want.convKernel, 3);
  });

  it('refuses what it does not compute, by name', async () => {
    await rejects({ ...base(), conv_bias: true }, NAME, /conv_bias/);
    await rejects({ ...base(), layer_types: ['conv', 'sliding_attention'] }, NAME, /layer_types/);
    await rejects({ ...base(), block_ff_dim: 64 }, NAME, /block_ff_dim.*intermediate_size.*disagree/);
    await rejects({ ...base(), architectures: ['Lfm2MoeForCausalLM'] }, NAME, /LFM2 MoE/);
    await rejects({ ...base(), architectures: ['Lfm2VlForConditionalGeneration'] }, NAME, /LFM2-VL/);
  });
});

describe('an LFM2 model', () => {
  it("says each layer's kind; forward labels its maps; a conv map is banded", async () => {
    const model = await load(NAME);
    assert.equal(model.layers[0].kind, 'conv');
    assert.equal(model.layers[0].heads, 0);
    assert.equal(model.layers[0].kernel, 3);
    assert.equal(model.layers[1].kind, 'attention');
    const r = model.forward([[5, 17, 42, 88, 3, 61, 29]]);
    assert.deepEqual(r.attentionKinds, ['conv', 'attention']);
    assert.deepEqual(r.attention[0].shape, [1, 1, 7, 7]);
    const a = r.attention[0].data;
    for (let t = 0; t < 7; t++)
      for (let s = 0; s < 7; s++) if (s > t || t - s >= 3) assert.equal(a[t * 7 + s], 0, `A[${t}, ${s}]`);
    const names = model.hookNames().map((h) => h.name);
    for (const n of ['blocks.0.conv.hook_in', 'blocks.0.conv.hook_out', 'blocks.0.conv.hook_result'])
      assert.ok(names.includes(n), n);
    assert.ok(!names.includes('blocks.0.attn.hook_pattern'));
    assert.ok(names.includes('blocks.1.attn.hook_pattern'));
    model.dispose();
  });

  it('(L, H) tools: NaN for the conv layer, the attention layer as any; a backward through it refused', async () => {
    const model = await load(NAME);
    const ids = [5, 17, 42, 88, 5, 17, 3];
    const T = ids.length;
    // headScores: layer 0 has no heads; layer 1's previous-token score is the mean weight on key t − 1
    const scores = model.headScores(ids)['previous-token'];
    assert.deepEqual(scores.shape, [2, 4]);
    assert.ok(scores.data.subarray(0, 4).every(Number.isNaN));
    const a = model.forward([ids], { attention: [1] }).attention[1].data;
    for (let h = 0; h < 4; h++) {
      let want = 0;
      for (let t = 1; t < T; t++) want += a[(h * T + t) * T + t - 1] / (T - 1);
      assert.ok(Math.abs(scores.data[4 + h] - want) <= 1e-6, `previous-token head ${h}`);
    }
    // qkAttribution of the attention layer: the conv layer's output is one component; Σ = the score
    // the trace's q and k give (scale 1/√d)
    const { trace } = model.forward([ids], { trace: true, attention: false });
    const q = trace[1].find((x) => x.name === 'q_rotated'),
      k = trace[1].find((x) => x.name === 'k_rotated');
    const d = q.shape[3];
    for (const [head, query, key] of [
      [0, 6, 2],
      [3, 4, 4],
    ]) {
      const r = model.qkAttribution(ids, { layer: 1, head, query, key });
      assert.deepEqual([...r.components], ['embed', 'L0CONV', 'L0MLP', 'bias']);
      const sum = r.matrix.data.reduce((x, y) => x + y, 0) + r.positionBias;
      assert.ok(Math.abs(sum - r.score) <= 1e-4 * Math.max(1, Math.abs(r.score)), `Σ ${sum} vs ${r.score}`);
      let want = 0;
      const kh = Math.floor(head / 2);
      for (let i = 0; i < d; i++) want += q.data[(head * T + query) * d + i] * k.data[(kh * T + key) * d + i];
      assert.ok(
        Math.abs(r.score - want / Math.sqrt(d)) <= 1e-4,
        `score ${r.score} vs ${want / Math.sqrt(d)}`,
      );
    }
    // rollout needs distributions: the conv layer's signed map is refused
    assert.throws(
      () => attentionRollout(model.forward([ids]).attention),
      (e) => e instanceof AttentionError && /attentions\[0\] has negative entries/.test(e.message),
    );
    assert.throws(
      () => model.qkAttribution(ids, { layer: 0, head: 0, query: 3, key: 1 }),
      (e) => e instanceof AttentionError && /layer 0 is of kind 'conv'/.test(e.message),
    );
    model.dispose();
  });

  it('metricGradients through the conv layer: ∂M/∂(the stream entering block 0) against central differences', async () => {
    const model = await load(NAME);
    const ids = [5, 17, 42, 88, 5, 17, 3];
    const T = ids.length,
      E = 32,
      hook = 'blocks.0.hook_resid_pre';
    const g = model.metricGradients(ids, { token: 3, against: 7 });
    assert.ok(g.gradZ.data.subarray(0, 4 * T * 8).every(Number.isNaN), 'the conv layer has no z');
    const grad = g.gradHiddenStates[0].data;
    const e0 = model.run([ids], { capture: [hook] }).activations[hook].data;
    // M from the stream entering block 0 (the float32 forward), as the metric: logit 3 − logit 7 at T − 1
    const M = (e) => {
      const { logits } = model.run([ids], { edits: [{ hook, op: 'set', value: new Tensor(e, [1, T, E]) }] });
      return logits.get(0, T - 1, 3) - logits.get(0, T - 1, 7);
    };
    assert.ok(Math.abs(M(e0) - g.value) <= 1e-5 * Math.max(1, Math.abs(g.value)), 'the value');
    // Directions: one per position (the conv and attention carry each back to later rows), two dense.
    let seed = 1;
    const rnd = () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1;
    const dirs = [...ids.map((_, t) => t), -1, -1].map((t) =>
      Float64Array.from({ length: T * E }, (_, i) => (t < 0 || Math.floor(i / E) === t ? rnd() : 0)),
    );
    const h = 1e-2;
    for (const v of dirs) {
      const shifted = (sign) => Float32Array.from(e0, (x, i) => x + sign * h * v[i]);
      const fd = (M(shifted(1)) - M(shifted(-1))) / (2 * h);
      let dot = 0,
        gg = 0,
        vv = 0;
      for (let i = 0; i < v.length; i++) {
        dot += grad[i] * v[i];
        if (v[i] !== 0) gg += grad[i] * grad[i];
        vv += v[i] * v[i];
      }
      assert.ok(Math.abs(fd - dot) <= FD_TOL * Math.sqrt(gg * vv), `directional ${fd} vs ${dot}`);
    }
    const pair = { clean: ids, corrupted: [5, 17, 42, 9, 5, 17, 3], token: 3, against: 7 };
    const ap = await model.attributionPatch(pair);
    assert.ok(
      ap.result.data.subarray(0, 4).every(Number.isNaN) && !ap.result.data.subarray(4).some(Number.isNaN),
    );
    model.dispose();
  });
});

// The fixture's GGUF file with lfm2.attention.head_count_kv set to `kv` (type `type`).
const withKv = (kv, type = 'array<int32>') =>
  fixtureGGUF(NAME, {
    metadata: (md) => md.map((e) => (e[0] === 'lfm2.attention.head_count_kv' ? [e[0], type, kv] : e)),
  });

describe("llama.cpp's lfm2 files", () => {
  it('layer kinds from head_count_kv, the adjusted MLP width, the kernel; generation as the folder', async () => {
    const model = await loadPretrained({ gguf: fixtureGGUF(NAME) });
    const c = model.config;
    assert.deepEqual(c.layer_types, ['conv', 'full_attention']);
    assert.deepEqual([c.intermediate_size, c.block_auto_adjust_ff_dim], [80, false]);
    assert.deepEqual([c.conv_L_cache, c.num_key_value_heads], [3, 2]);
    assert.deepEqual(
      model.layers.map((l) => l.kind),
      ['conv', 'attention'],
    );
    const folder = await load(NAME);
    const ids = [[5, 17, 42, 88, 3]];
    const options = { maxNewTokens: 6, stop: [] };
    assert.deepEqual(
      Array.from(model.generate(ids, options).data),
      Array.from(folder.generate(ids, options).data),
    );
    for (const m of [model, folder]) m.dispose();
  });

  it('refuses the head counts it cannot map, and keys it does not read, by name', async () => {
    const refused = (gguf, pattern) =>
      assert.rejects(loadPretrained({ gguf }), (e) => e instanceof AttentionError && pattern.test(e.message));
    await refused(withKv([0, 2, 2]), /head_count_kv must hold one count ≥ 0 per layer/);
    await refused(withKv([1, 2]), /different KV head counts/);
    await refused(withKv(2, 'uint32'), /head_count_kv must be an array/);
    const windowed = fixtureGGUF(NAME, {
      metadata: (md) => [...md, ['lfm2.attention.sliding_window', 'uint32', 4]],
    });
    await refused(windowed, /lfm2\.attention\.sliding_window/);
  });
});
