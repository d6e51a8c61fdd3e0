// Gemma 4 in JS (gemma4-tiny: sliding/full/sliding/full, head sizes 8 and 16, layers 2 and 3
// attending over layers 0 and 1): model.layers says each layer's own sizes and whose keys and values
// it reads, its hooks (no keys or values of its own where shared); the interpretability tools, which do not model per-layer inputs, shared K/V or layer
// scales yet, refuse by name before computing anything; a Gemma4ForConditionalGeneration folder runs
// its text model to the same bits as the plain fixture, its towers said to be ignored; its gguf file
// (tests/js/gguf-from-fixture.js) too, and what llama.cpp would compute otherwise is refused by name.
import test from 'node:test';
import assert from 'node:assert/strict';
import { init, loadPretrained, AttentionError } from '../../src/js/index.js';
import { fixtureGGUF } from './gguf-from-fixture.js';
import { coreConfig } from '../../src/js/pretrained/config.js';
import { IDS, json, load, read, rejects } from './pretrained-files.mjs';
import { renamed } from './safetensors-rename.mjs';

await init();

const FIXTURE = 'gemma4-tiny';

test('model.layers: per-layer head sizes, key/value sources and windows as the config gives them', async () => {
  const model = await load(FIXTURE);
  try {
    const pick = (field) => model.layers.map((s) => s[field]);
    assert.deepEqual(pick('headDim'), [8, 16, 8, 16]);
    assert.deepEqual(pick('kvHeads'), [2, 2, 2, 2]);
    assert.deepEqual(pick('heads'), [4, 4, 4, 4]);
    assert.deepEqual(pick('kvFrom'), [0, 1, 0, 1]);
    assert.deepEqual(pick('window'), [3, 0, 3, 0]);
    assert.deepEqual(pick('ropeTheta'), [10000, 1e6, 10000, 1e6]);
    assert.deepEqual(pick('ropeScaled'), [false, true, false, true]);
    // a shared layer has queries of its own, not keys or values; every layer adds its per-layer input
    const names = new Set(model.hookNames().map((h) => h.name));
    for (let l = 0; l < 4; l++) {
      assert.equal(names.has(`blocks.${l}.attn.hook_k`), l < 2, `layer ${l} hook_k`);
      assert.equal(names.has(`blocks.${l}.attn.hook_v`), l < 2, `layer ${l} hook_v`);
      assert.ok(names.has(`blocks.${l}.attn.hook_q`), `layer ${l} hook_q`);
      assert.ok(names.has(`blocks.${l}.hook_per_layer_out`), `layer ${l} hook_per_layer_out`);
    }
    // the head scores read the patterns only: they work on Gemma 4
    assert.deepEqual(model.headScores(IDS[0]).induction.shape, [4, 4]);
  } finally {
    model.dispose();
  }
});

test('the interpretability tools refuse Gemma 4 by name (what they do not model yet)', async () => {
  const model = await load(FIXTURE);
  const ids = IDS[0];
  const o = { position: 6, token: 3 };
  const tools = {
    logitAttribution: () => model.logitAttribution(ids, o),
    qkAttribution: () => model.qkAttribution(ids, { layer: 1, head: 0, query: 6, key: 2 }),
    metricGradients: () => model.metricGradients(ids, o),
    saliency: () => model.saliency(ids, o),
    patch: () => model.patch({ clean: ids, corrupted: IDS[1], ...o }),
    attributionPatch: () => model.attributionPatch({ clean: ids, corrupted: IDS[1], ...o }),
  };
  try {
    for (const [name, call] of Object.entries(tools)) {
      await assert.rejects(
        async () => call(),
        (e) => {
          assert.ok(e instanceof AttentionError, `${name}: ${e}`);
          assert.equal(e.code, 'INVALID_ARGUMENT', name);
          assert.match(e.message, /do not yet model Gemma4ForCausalLM's per-layer head sizes/, name);
          assert.match(e.message, /shared across layers, per-layer inputs, layer output scales/, name);
          return true;
        },
        name,
      );
    }
    // the forward itself is untouched by the refusals
    assert.equal(model.forward(ids, { attention: false }).logits.shape.join(), '1,7,96');
  } finally {
    model.dispose();
  }
});

test('layer_types as Gemma4TextConfig makes them: every 6th layer full, and the last layer full', () => {
  const base = { ...json(FIXTURE, 'config.json'), num_kv_shared_layers: 0, num_hidden_layers: 8 };
  const windows = (layerTypes) => coreConfig({ ...base, layer_types: layerTypes }).core.layerWindow;
  assert.deepEqual(windows(null), [3, 3, 3, 3, 3, 0, 3, 0]);
  const given = [...Array(7).fill('full_attention'), 'sliding_attention'];
  assert.deepEqual(windows(given), Array(8).fill(0)); // transformers forces the last one full
  // 0 shared layers and no per-layer inputs (null, as the larger Gemma 4 configs say) are allowed
  const core = coreConfig({ ...base, layer_types: null, hidden_size_per_layer_input: null }).core;
  assert.equal(core.perLayerWidth, 0);
  assert.deepEqual(core.layerKvFrom, Array(8).fill(-1));
  assert.throws(
    () => coreConfig({ ...base, layer_types: null, num_kv_shared_layers: -1 }),
    /num_kv_shared_layers must be a whole number/,
  );
});

function composition(overrides = {}) {
  const { architectures: _a, ...text } = json(FIXTURE, 'config.json');
  return {
    architectures: ['Gemma4ForConditionalGeneration'],
    model_type: 'gemma4',
    text_config: text,
    vision_config: { model_type: 'gemma4_vision', hidden_size: 8, num_hidden_layers: 1 },
    audio_config: null,
    boi_token_id: 90,
    eoi_token_id: 91,
    image_token_id: 92,
    video_token_id: 93,
    boa_token_id: 89,
    eoa_token_index: 88,
    audio_token_id: 87,
    initializer_range: 0.02,
    tie_word_embeddings: true,
    transformers_version: '5.17.0',
    ...overrides,
  };
}

const rename = (n) => (n.startsWith('model.') ? `model.language_model.${n.slice(6)}` : n);

test('a Gemma4ForConditionalGeneration folder runs its text model: the same bits, the towers ignored', async () => {
  const plain = await load(FIXTURE);
  const want = plain.forward(IDS, { attention: false }).logits.data;
  plain.dispose();
  const weights = renamed(read(FIXTURE, 'model.safetensors'), rename, {
    name: 'model.vision_tower.encoder.layers.0.input_layernorm.weight',
    values: [1, 2, 3, 4],
  });
  for (const audio of [null, { model_type: 'gemma4_audio', hidden_size: 8 }]) {
    const model = await load(FIXTURE, composition({ audio_config: audio }), { weights });
    try {
      assert.equal(model.architecture, 'Gemma4ForCausalLM');
      assert.equal(model.ignored.length, audio ? 2 : 1);
      assert.match(model.ignored[0], /vision tower.*vision_config/);
      if (audio) assert.match(model.ignored[1], /audio tower.*audio_config/);
      assert.deepEqual(
        model.layers.map((s) => s.kvFrom),
        [0, 1, 0, 1],
      );
      assert.deepEqual(model.forward(IDS, { attention: false }).logits.data, want);
    } finally {
      model.dispose();
    }
  }
  await rejects(composition({ vision_soft_tokens: 4 }), FIXTURE, /key "vision_soft_tokens".*not implemented/);
  const moe = { ...composition().text_config, enable_moe_block: true };
  await rejects(
    composition({ text_config: moe }),
    FIXTURE,
    /enable_moe_block = true.*26B-A4B.*not implemented/,
  );
  await rejects(composition({ model_type: 'gemma3' }), FIXTURE, /model_type "gemma3" is not "gemma4"/);
});

// The gemma4 GGUF file of the fixture with its metadata edited by `edit` (key → value).
const ggufWith = (edit) =>
  fixtureGGUF(FIXTURE, {
    metadata: (md) =>
      md.map(([k, t, v]) => {
        if (!Object.hasOwn(edit, k)) return [k, t, v];
        const array = Array.isArray(edit[k]) && !t.startsWith('array<'); // one value per layer
        return [k, array ? `array<${t}>` : t, edit[k]];
      }),
  });

test('a gemma4 GGUF file: the folder model to the bit; what llama.cpp would compute otherwise is refused', async () => {
  const plain = await load(FIXTURE);
  const gguf = await loadPretrained({ gguf: fixtureGGUF(FIXTURE) });
  try {
    assert.deepEqual(
      gguf.forward(IDS, { attention: false }).logits.data,
      plain.forward(IDS, { attention: false }).logits.data,
    );
    assert.deepEqual(
      gguf.layers.map((s) => [s.headDim, s.kvFrom, s.window]),
      [
        [8, 0, 3],
        [16, 1, 0],
        [8, 0, 3],
        [16, 1, 0],
      ],
    );
  } finally {
    plain.dispose();
    gguf.dispose();
  }
  const refused = async (edit, pattern) =>
    assert.rejects(loadPretrained({ gguf: ggufWith(edit) }), (e) => {
      assert.ok(e instanceof AttentionError && e.code === 'INVALID_ARGUMENT', String(e));
      assert.match(e.message, pattern);
      return true;
    });
  // llama.cpp would share layers 1 (full) and 0 (sliding) the other way round than transformers
  await refused(
    { 'gemma4.attention.sliding_window_pattern': [false, true, true, false] },
    /llama\.cpp's sharing rule/,
  );
  await refused(
    { 'gemma4.attention.sliding_window_pattern': [true, false, true, true] },
    /slides the last layer/,
  );
  await refused({ 'gemma4.feed_forward_length': [48, 64, 96, 96] }, /feed_forward_length \[48,64,96,96\]/);
  await refused({ 'gemma4.rope.dimension_count_swa': 4 }, /partial RoPE/);
  await refused(
    { 'gemma4.attention.head_count_kv': [2, 1, 2, 1] },
    /head_count_kv \[2,1,2,1\] differs by layer/,
  );
});
