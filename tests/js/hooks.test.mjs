// The hook points through the API (src/js/interp/hooks.js over src/model/hooks.h): run()'s captures
// against the float64 torch references' hidden states and attention for two families; hookNames()
// and layers; refusals naming the hook before anything runs; steering: a steered generate gives the
// ids of a loop of full runs with the same edit; steeringVector; captureToSafetensors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, loadPretrained, AttentionError, captureToSafetensors, Tensor } from '../../src/js/index.js';

await init();

// The bounds of tests/js/pretrained.test.mjs: the stream as the logits, the weights tighter.
const kStreamAbs = 1e-4,
  kStreamRel = 1e-3,
  kAttnAbs = 1e-5,
  kAttnRel = 1e-4;

const DIR = new URL('../golden/pretrained/', import.meta.url);
const read = (model, file) => readFileSync(new URL(`${model}/${file}`, DIR));
const json = (model, file) => JSON.parse(read(model, file).toString('utf8'));
const load = (name) =>
  loadPretrained({ config: json(name, 'config.json'), weights: read(name, 'model.safetensors') });

function assertClose(got, want, abs, rel, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < got.length; i++)
    if (!(Math.abs(got[i] - want[i]) <= abs + rel * Math.abs(want[i])))
      assert.fail(`${what}[${i}] = ${got[i]}, want ${want[i]}`);
}

const argmax = (row) => row.reduce((best, v, i) => (v > row[best] ? i : best), 0);

describe('run(): captures against the float64 references', () => {
  for (const name of ['gpt2-tiny', 'qwen3-tiny']) {
    it(`${name}: hook_resid_pre, ln_final.hook_normalized and hook_pattern of every layer`, async () => {
      const model = await load(name);
      const L = model.numLayers;
      for (const c of json(name, 'expected.json').cases) {
        if (!c.hidden_states || c.input_ids.shape[0] !== 1) continue;
        const ids = Int32Array.from(c.input_ids.data);
        const capture = ['blocks.*.hook_resid_pre', 'ln_final.hook_normalized', 'blocks.*.attn.hook_pattern'];
        const { logits, activations } = model.run(ids, { capture });
        assertClose(logits.data, c.logits.data, kStreamAbs, kStreamRel, 'logits');
        for (let l = 0; l < L; l++) {
          const h = activations[`blocks.${l}.hook_resid_pre`];
          assert.deepEqual(h.shape, [1, ids.length, model.hiddenSize]);
          assertClose(h.data, c.hidden_states[l].data, kStreamAbs, kStreamRel, `resid_pre ${l}`);
          if (c.attention?.[l]) {
            const p = activations[`blocks.${l}.attn.hook_pattern`];
            assert.deepEqual(p.shape, [1, model.numHeads, ids.length, ids.length]);
            assertClose(p.data, c.attention[l].data, kAttnAbs, kAttnRel, `pattern ${l}`);
          }
        }
        const normalized = activations['ln_final.hook_normalized'].data;
        assertClose(normalized, c.hidden_states[L].data, kStreamAbs, kStreamRel, 'ln_final');
      }
      model.dispose();
    });
  }
});

describe('hookNames, layers and refusals', () => {
  it("gpt2-tiny: TransformerLens' names with their shapes; each layer described", async () => {
    const model = await load('gpt2-tiny');
    const names = new Map(model.hookNames().map((h) => [h.name, h.shape]));
    const { numHeads: H, headDim: d, hiddenSize: E } = model;
    assert.deepEqual(names.get('hook_embed'), ['B', 'T', E]);
    assert.deepEqual(names.get('hook_pos_embed'), ['B', 'T', E]);
    assert.deepEqual(names.get('blocks.0.attn.hook_q'), ['B', 'T', H, d]);
    assert.deepEqual(names.get('blocks.1.attn.hook_pattern'), ['B', H, 'T', 'T']);
    assert.deepEqual(names.get('blocks.1.mlp.hook_post'), ['B', 'T', model.config.n_inner ?? 4 * E]);
    assert.ok(names.has('ln_final.hook_normalized') && !names.has('blocks.0.mlp.hook_pre_linear'));
    assert.deepEqual(
      { ...model.layers[1] },
      { ...model.layers[1], kind: 'attention', heads: H, kvHeads: model.numKVHeads, headDim: d, kvFrom: 1 },
    );
    model.dispose();
  });

  it('an unknown hook, a wrong shape, positions or heads out of range: an AttentionError naming it', async () => {
    const model = await load('qwen3-tiny');
    const ids = Int32Array.from([5, 9, 14, 3]);
    const E = model.hiddenSize;
    const refused = (options, pattern) =>
      assert.throws(
        () => model.run(ids, options),
        (e) => e instanceof AttentionError && pattern.test(e.message),
      );
    refused({ capture: ['blocks.0.attn.hook_nope'] }, /blocks\.0\.attn\.hook_nope/);
    refused(
      { edits: [{ hook: 'blocks.0.hook_resid_pre', op: 'add', value: new Float32Array(E + 1) }] },
      /hook_resid_pre/,
    );
    refused(
      { edits: [{ hook: 'blocks.0.hook_resid_pre', op: 'add', value: new Float32Array(E), positions: [4] }] },
      /position 4/,
    );
    refused(
      {
        edits: [
          {
            hook: 'blocks.0.attn.hook_z',
            op: 'set',
            value: new Float32Array(model.headDim),
            heads: [model.numHeads],
          },
        ],
      },
      /head/,
    );
    refused(
      { edits: [{ hook: 'blocks.0.hook_resid_pre', op: 'mul', value: new Float32Array(E) }] },
      /'set' or 'add'/,
    );
    refused({ startAt: 'blocks.1.hook_resid_pre' }, /startAt/);
    const plain = model.run(ids).logits.data; // the model is usable and unchanged
    assert.deepEqual(model.forward(ids).logits.data, plain);
    model.dispose();
  });
});

describe('steering', () => {
  it('a steered generate gives the ids of a loop of full runs with the same edit', async () => {
    const model = await load('qwen3-tiny');
    const prompt = [5, 9, 14, 3];
    const vector = model.steeringVector({
      positive: [[7, 7, 2, 30]],
      negative: [[40, 1, 2, 11]],
      hook: 'blocks.1.hook_resid_pre',
    });
    assert.deepEqual(vector.shape, [model.hiddenSize]);
    const value = Float32Array.from(vector.data, (v) => 8 * v);
    const edits = [{ hook: 'blocks.1.hook_resid_pre', op: 'add', value }];
    const steered = Array.from(model.generate(prompt, { maxNewTokens: 5, edits, stop: [] }).data);
    const plain = Array.from(model.generate(prompt, { maxNewTokens: 5, stop: [] }).data);
    const seq = [...prompt];
    for (let step = 0; step < 5; step++) {
      const { logits } = model.run(Int32Array.from(seq), { edits });
      const V = logits.shape[2];
      seq.push(argmax(logits.data.subarray((seq.length - 1) * V, seq.length * V)));
    }
    assert.deepEqual(steered, seq.slice(prompt.length));
    assert.notDeepEqual(steered, plain, 'the edit changes the continuation');
    assert.throws(
      () =>
        model.generate(prompt, {
          maxNewTokens: 2,
          edits: [{ hook: 'blocks.0.attn.hook_pattern', op: 'add', value: new Float32Array(4) }],
        }),
      (e) => e instanceof AttentionError && /decoding step/.test(e.message),
    );
    model.dispose();
  });

  it('steeringVector is the mean difference of the hook at the position; captures export as safetensors', async () => {
    const model = await load('gpt2-tiny');
    const hook = 'blocks.1.hook_resid_pre';
    const pos = [
      [3, 4, 5],
      [8, 9, 10, 11],
    ];
    const neg = [[20, 21]];
    const last = (ids) => {
      const a = model.run(Int32Array.from(ids), { capture: [hook] }).activations[hook];
      const E = a.shape[2];
      return a.data.subarray((ids.length - 1) * E, ids.length * E);
    };
    const got = model.steeringVector({ positive: pos, negative: neg, hook });
    const [p0, p1, n0] = [last(pos[0]), last(pos[1]), last(neg[0])];
    assertClose(
      got.data,
      Float32Array.from(p0, (v, i) => (v + p1[i]) / 2 - n0[i]),
      1e-6,
      1e-6,
      'vector',
    );
    const { activations } = model.run(Int32Array.from([3, 4, 5]), {
      capture: [hook, 'blocks.0.attn.hook_pattern'],
    });
    const bytes = captureToSafetensors(activations);
    const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
    for (const [name, t] of Object.entries(activations)) {
      assert.deepEqual(header[name].shape, t.shape);
      const [b, e] = header[name].data_offsets;
      const back = new Float32Array(bytes.slice(8 + n + b, 8 + n + e).buffer);
      assert.deepEqual(back, t.data);
    }
    assert.throws(() => captureToSafetensors({ x: new Tensor([[1, 2]]).data }), AttentionError);
    model.dispose();
  });
});
