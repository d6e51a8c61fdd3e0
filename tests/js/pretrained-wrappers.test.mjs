// The text model of a multimodal checkpoint (src/js/architectures/wrappers.js): a
// Mistral3ForConditionalGeneration folder made from the ministral3-tiny fixture — its config nested
// as text_config beside a vision tower's, its tensors renamed as transformers 5 and 4 save them, a
// vision tensor added — loads as the plain fixture does, to the same bits; what it ignores is said;
// a key of the composition we do not class, an unsupported text model or a contradictory tie is refused.
import test from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../src/js/index.js';
import { IDS, json, load, read, rejects } from './pretrained-files.mjs';
import { renamed } from './safetensors-rename.mjs';

await init();

const FIXTURE = 'ministral3-tiny';

function composition(overrides = {}) {
  const { architectures: _a, ...text } = json(FIXTURE, 'config.json');
  return {
    architectures: ['Mistral3ForConditionalGeneration'],
    model_type: 'mistral3',
    text_config: text,
    vision_config: { model_type: 'pixtral', hidden_size: 8, num_hidden_layers: 1 },
    image_token_index: 10,
    projector_hidden_act: 'gelu',
    vision_feature_layer: -1,
    multimodal_projector_bias: false,
    spatial_merge_size: 2,
    tie_word_embeddings: false,
    transformers_version: '5.17.0',
    ...overrides,
  };
}

const LAYOUTS = {
  'transformers 5': (n) => (n.startsWith('model.') ? `model.language_model.${n.slice(6)}` : n),
  'transformers 4': (n) => `language_model.${n}`,
};

test('a Mistral3ForConditionalGeneration folder runs its text model: the same bits, the tower ignored', async () => {
  const plain = await load(FIXTURE);
  const want = plain.forward(IDS, { attention: false }).logits.data;
  plain.dispose();
  for (const [layout, rename] of Object.entries(LAYOUTS)) {
    const weights = renamed(read(FIXTURE, 'model.safetensors'), rename, {
      name: layout === 'transformers 5' ? 'model.vision_tower.ln_pre.weight' : 'vision_tower.ln_pre.weight',
      values: [1, 2, 3, 4],
    });
    const model = await load(FIXTURE, composition(), { weights });
    try {
      assert.equal(model.architecture, 'Ministral3ForCausalLM', layout);
      assert.equal(model.ignored.length, 1, layout);
      assert.match(model.ignored[0], /vision tower.*vision_config/, layout);
      assert.deepEqual(model.stopIds, [95], layout);
      assert.deepEqual(model.forward(IDS, { attention: false }).logits.data, want, layout);
    } finally {
      model.dispose();
    }
  }
});

test('a composition key we do not class, an unsupported text model or a contradictory tie is refused', async () => {
  await rejects(
    composition({ image_newline_token: 12 }),
    FIXTURE,
    /key "image_newline_token".*not implemented/,
  );
  const text = { ...composition().text_config, model_type: 'llama' };
  await rejects(composition({ text_config: text }), FIXTURE, /model_type "llama" is not supported/);
  await rejects(composition({ tie_word_embeddings: true }), FIXTURE, /tie_word_embeddings is true but false/);
  await rejects(composition({ text_config: null }), FIXTURE, /text_config must be/);
  await rejects(composition({ model_type: 'llava' }), FIXTURE, /model_type "llava" is not "mistral3"/);
});
