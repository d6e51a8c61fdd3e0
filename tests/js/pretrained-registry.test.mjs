// The family registry (src/js/architectures/): every supported architecture has its entry and a
// fixture, its tensor names by role give exactly the tensors of the fixture's checkpoint, and the
// config's special ids outside the vocabulary are left out of stopIds instead of refused.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { init, checkpointTensors, PRETRAINED_CONFIG_KEYS } from '../../src/js/index.js';
import { ARCHITECTURES, FAMILIES, familyOf } from '../../src/js/architectures/index.js';
import { IGNORED_TENSORS } from '../../src/js/architectures/wrappers.js';
import { json, load, read } from './pretrained-files.mjs';
import { PRETRAINED_DIR } from './fixture.js';
import {
  DOC,
  TABLE_BEGIN,
  TABLE_END,
  docSection,
  renderArchitectures,
} from '../../scripts/config-keys-doc.mjs';

const FIXTURES = readdirSync(PRETRAINED_DIR, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);

// The tensor names and shapes a safetensors file holds (its header), without GPT-2's buffers and
// what a multimodal checkpoint's text model never reads (its towers: IGNORED_TENSORS).
function fileTensors(name) {
  const ignored = IGNORED_TENSORS;
  const bytes = read(name, 'model.safetensors');
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
  delete header.__metadata__;
  return Object.entries(header)
    .filter(([k]) => !/\.attn\.bias$/.test(k)) // GPT-2's causal-mask buffers, which the loader ignores
    .filter(([k]) => !ignored.some((re) => re.test(k)))
    .map(([k, v]) => [k.replace(/^transformer\./, ''), v.shape])
    .sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

describe('the family registry', () => {
  it('lists each architecture once, behind PRETRAINED_CONFIG_KEYS, and each has a fixture', () => {
    assert.deepEqual(Object.keys(PRETRAINED_CONFIG_KEYS), ARCHITECTURES);
    assert.equal(new Set(ARCHITECTURES).size, FAMILIES.length);
    const fixtured = new Set(FIXTURES.map((f) => json(f, 'config.json').architectures[0]));
    for (const a of ARCHITECTURES) {
      assert.equal(familyOf(a).keys, PRETRAINED_CONFIG_KEYS[a]);
      assert.ok(fixtured.has(a), `${a} has no fixture in tests/golden/pretrained/`);
    }
  });

  it("docs/checkpoints.md's architectures table is the registry's (node scripts/config-keys-doc.mjs)", () => {
    for (const f of FAMILIES)
      assert.ok(f.docs?.computes && f.docs?.fixtures, `${f.architecture} has no docs row`);
    assert.equal(docSection(readFileSync(DOC, 'utf8'), TABLE_BEGIN, TABLE_END), renderArchitectures());
  });

  for (const name of FIXTURES) {
    it(`${name}: the core's roles named by the registry are the checkpoint's tensors`, async () => {
      await init();
      assert.deepEqual(checkpointTensors(json(name, 'config.json')), fileTensors(name));
    });
    it(`${name}: the config the core read is the registry's core config`, async () => {
      await init();
      const m = await load(name);
      // One config type crosses the binding: what init read is the registry's core config.
      const back = m._live().config();
      for (const [key, value] of Object.entries(m._core)) {
        const got = Array.isArray(value) ? Array.from(back[key]) : back[key];
        assert.deepEqual(got, value, key);
      }
      m.dispose();
    });
  }
});

describe('special ids outside the vocabulary', () => {
  it('are left out of stopIds (loaded, as transformers does); non-integers are refused', async () => {
    await init();
    const config = json('llama-tiny', 'config.json');
    const vocab = config.vocab_size;
    const m = await load('llama-tiny', {
      ...config,
      eos_token_id: [vocab, 2, -1],
      bos_token_id: vocab + 5,
      pad_token_id: -1,
    });
    assert.deepEqual(m.stopIds, [2]);
    m.dispose();
    const single = await load('llama-tiny', { ...config, eos_token_id: vocab });
    assert.deepEqual(single.stopIds, []);
    single.dispose();
    await assert.rejects(load('llama-tiny', { ...config, eos_token_id: 2.5 }), /eos_token_id/);
    await assert.rejects(load('llama-tiny', { ...config, eos_token_id: '2' }), /eos_token_id/);
  });
});
