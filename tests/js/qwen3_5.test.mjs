// Qwen3.5 from a folder (src/js/architectures/qwen3_5.js) beyond what every fixture is checked for
// (pretrained.test.mjs: logits, every layer's map, hidden states, greedy ids against the float64
// reference of tests/golden/make_qwen3_5_fixture.py): the layer kinds and how the config gives
// them, the mRoPE keys, the vision-language class's text model, the architectures refused by name, and decoding with the DeltaNet state
// equal to the full forward within 1e-5·(1 + |x|), past one 64-row chunk.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AttentionError, init, loadPretrained } from '../../src/js/index.js';
import { coreConfig } from '../../src/js/pretrained/config.js';
import { json, read } from './pretrained-files.mjs';

await init();

const NAME = 'qwen3_5-tiny';
const CONFIG = json(NAME, 'config.json');
const refused = (config, pattern) =>
  assert.throws(
    () => coreConfig(config),
    (e) => e instanceof AttentionError && e.code === 'INVALID_ARGUMENT' && pattern.test(e.message),
  );

describe('Qwen3.5: the config', () => {
  it('layer kinds from full_attention_interval, or layer_types (the same core config)', () => {
    const { core } = coreConfig(CONFIG);
    assert.deepEqual(core.layerMixer, [2, 2, 0]); // (i + 1) % 3 != 0: DeltaNet
    const types = ['linear_attention', 'linear_attention', 'full_attention'];
    assert.deepEqual(coreConfig({ ...CONFIG, layer_types: types }).core, core);
    const other = coreConfig({ ...CONFIG, full_attention_interval: 2 }).core.layerMixer;
    assert.deepEqual(other, [2, 0, 2]);
    refused(
      { ...CONFIG, layer_types: ['linear_attention', 'sliding_attention', 'full_attention'] },
      /layer_types/,
    );
    refused({ ...CONFIG, full_attention_interval: 0 }, /full_attention_interval/);
  });

  it('(1 + w) norms, the output gate, partial RoPE (0.25 by default), mRoPE keys checked', () => {
    const { core } = coreConfig(CONFIG);
    assert.equal(core.normWeightOffset, 1);
    assert.equal(core.attnOutputGate, true);
    assert.equal(core.rotaryDims, 8); // 0.5 · head_dim 16
    const { partial_rotary_factor: _p, ...noFactor } = CONFIG.rope_parameters;
    const defaulted = { ...CONFIG, rope_parameters: { ...noFactor, mrope_section: [1, 1, 0] } };
    assert.equal(coreConfig(defaulted).core.rotaryDims, 4);
    const rope = (extra) => ({ ...CONFIG, rope_parameters: { ...CONFIG.rope_parameters, ...extra } });
    refused(rope({ mrope_section: [2, 'a', 1] }), /mrope_section/);
    refused(rope({ mrope_section: [4, 2, 2] }), /mrope_section/); // 8 frequencies of the 4 rotated
    refused(rope({ mrope_interleaved: 1 }), /mrope_interleaved/);
    refused({ ...CONFIG, attn_output_gate: false }, /attn_output_gate/);
  });

  it('Qwen3_5ForConditionalGeneration: its text_config read as Qwen3_5ForCausalLM, the vision tower not', () => {
    const vl = json('qwen3_5-vl-tiny', 'config.json');
    assert.deepEqual(coreConfig(vl).core, coreConfig(CONFIG).core);
    refused(
      { ...vl, text_config: { ...vl.text_config, model_type: 'qwen3_next' } },
      /model_type "qwen3_next" is not supported/,
    );
    refused({ ...vl, text_config: { ...vl.text_config, tie_word_embeddings: true } }, /tie_word_embeddings/);
    refused({ ...vl, text_config: { ...vl.text_config, sliding_window: 4 } }, /sliding_window/);
  });

  it('Qwen3-Next and Qwen3.5-MoE are refused by name', () => {
    for (const [arch, what] of [
      ['Qwen3NextForCausalLM', /Qwen3-Next/],
      ['Qwen3_5MoeForCausalLM', /Qwen3\.5-MoE/],
      ['Qwen3_5MoeForConditionalGeneration', /Qwen3\.5-MoE/],
    ])
      refused({ ...CONFIG, architectures: [arch] }, what);
  });
});

describe('Qwen3.5: the model', () => {
  it('model.layers: two DeltaNet layers (4 value heads on 2 key heads), then a full layer', async () => {
    const model = await loadPretrained({ config: CONFIG, weights: read(NAME, 'model.safetensors') });
    assert.deepEqual(
      model.layers.map((l) => [l.kind, l.heads, l.kvHeads]),
      [
        ['delta', 4, 2],
        ['delta', 4, 2],
        ['attention', 4, 2],
      ],
    );
    model.dispose();
  });

  it('decoding from the state (a prefill, then one token a step) = the full forward, past 64 rows', async () => {
    const model = await loadPretrained({ config: CONFIG, weights: read(NAME, 'model.safetensors') });
    const ids = json(NAME, 'expected.json').cases.find((c) => c.name === 'b1_t70').input_ids.data;
    const full = model.forward([ids]).logits;
    const V = full.shape[2];
    const handle = model._live();
    for (const prefill of [5, 66]) {
      assert.equal(handle.createCaches(ids.length, 1).code, 0);
      try {
        let worst = 0;
        const compare = (logits, row) => {
          for (let j = 0; j < V; j++) {
            const want = full.data[row * V + j];
            worst = Math.max(worst, Math.abs(logits[j] - want) / (1 + Math.abs(want)));
          }
        };
        const first = handle.forwardCached(Int32Array.from(ids.slice(0, prefill)), 1, prefill, true);
        assert.equal(first.code, 0, first.message);
        compare(first.logits.data, prefill - 1);
        for (let t = prefill; t < ids.length; t++) {
          const step = handle.forwardCached(Int32Array.of(ids[t]), 1, 1, true);
          assert.equal(step.code, 0, step.message);
          compare(step.logits.data, t);
        }
        assert.ok(worst <= 1e-5, `prefill ${prefill}: |decoded - full| / (1 + |full|) = ${worst}`);
      } finally {
        handle.dropCaches();
      }
    }
    model.dispose();
  });
});
