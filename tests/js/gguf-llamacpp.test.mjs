// The GGUF fixtures of tests/golden/gguf/ held to llama.cpp's own numbers (llamacpp-expected.json,
// written by tests/golden/check_with_llamacpp.mjs with node-llama-cpp 3.22.1; nothing of llama.cpp
// runs here): tokenization identical (with and without what the vocab adds), next-token
// probabilities at every prompt position within each fixture's tolerance (gguf-cases.mjs: measured
// agreement with headroom — llama.cpp keeps an F16 KV cache and quantizes activations to 8 bits
// for quantized weights), greedy ids equal while llama.cpp's choice is clear, the chat template
// rendered as llama.cpp's Jinja engine renders it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, loadPretrained } from '../../src/js/index.js';
import { CASES, EXPECTED_FILE, GGUF_DIR, INT8_TOLERANCE, greedyAgreement } from '../golden/gguf-cases.mjs';
import { makeFixtures } from '../golden/make_gguf_fixtures.mjs';

await init();

const expected = JSON.parse(readFileSync(EXPECTED_FILE, 'utf8'));

// softmax of row t of logits (1, T, V), in float64.
function softmaxRow(logits, t) {
  const V = logits.shape[2];
  const row = Array.from(logits.data.subarray(t * V, (t + 1) * V));
  const max = Math.max(...row);
  const e = row.map((x) => Math.exp(x - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / sum);
}

describe('gguf fixtures against llama.cpp (committed expectations)', () => {
  it('the committed fixtures are what make_gguf_fixtures.mjs writes (seeded)', () => {
    for (const [file, bytes] of makeFixtures())
      assert.ok(Buffer.from(bytes).equals(readFileSync(new URL(file, GGUF_DIR))), file);
    assert.deepEqual(
      Object.keys(expected.cases),
      CASES.map((c) => c.file),
    );
  });

  for (const c of CASES) {
    const want = expected.cases[c.file];
    const load = () => loadPretrained({ gguf: readFileSync(new URL(c.file, GGUF_DIR)) });

    it(`${c.file}: tokenization identical to llama.cpp's`, async () => {
      const model = await load();
      try {
        assert.deepEqual(
          want.texts.map((t) => t.text),
          c.texts,
        );
        for (const t of want.texts) {
          assert.deepEqual(
            Array.from(model.encode(t.text, { addSpecialTokens: false })),
            t.ids,
            JSON.stringify(t.text),
          );
          assert.deepEqual(
            Array.from(model.encode(t.text)),
            t.idsSpecial,
            `${JSON.stringify(t.text)} (special)`,
          );
        }
        assert.deepEqual(Array.from(model.encode(c.prompt)), want.prompt, 'the prompt');
      } finally {
        model.dispose();
      }
    });

    it(`${c.file}: probabilities within ${c.tolerance} of llama.cpp's, greedy ids, chat`, async () => {
      const model = await load();
      try {
        const { logits } = model.forward(want.prompt);
        assert.equal(logits.shape[2], want.vocab);
        want.top.forEach((top, t) => {
          const p = softmaxRow(logits, t);
          for (const [id, q] of top)
            assert.ok(
              Math.abs(p[id] - q) <= c.tolerance,
              `position ${t} token ${id}: ${p[id]} vs llama.cpp ${q}`,
            );
          // The rest of the vocabulary: its mass cannot hide a token further off than the tolerance.
          const rest = 1 - top.reduce((s, [id]) => s + p[id], 0);
          const restWant = 1 - top.reduce((s, [, q]) => s + q, 0);
          assert.ok(
            Math.abs(rest - restWant) <= c.tolerance * 2,
            `position ${t}: the rest ${rest} vs ${restWant}`,
          );
        });
        const greedy = Array.from(
          model.generate(want.prompt, { maxNewTokens: want.greedy.length, stop: [] }).data,
        );
        const g = greedyAgreement(want.greedy, want.greedyTop2, greedy, c.tolerance);
        assert.ok(g.ok, `greedy ${greedy} vs llama.cpp ${want.greedy}: ${g.text}`);
        if (want.chat !== null)
          assert.equal(
            model.applyChatTemplate(c.chat, { tokenize: false, addGenerationPrompt: true }),
            want.chat,
          );
      } finally {
        model.dispose();
      }
    });
  }
});

describe("gguf: the int8 activation mode computes what llama.cpp's CPU backend computes", () => {
  // llama.cpp run with a float32 KV cache (its 8-bit activations kept): check_with_llamacpp.mjs.
  for (const c of CASES.filter((x) => x.quantized)) {
    const tolerance = c.int8Tolerance ?? INT8_TOLERANCE;
    it(`${c.file}: int8 probabilities within ${tolerance} of llama.cpp's; the exact mode is not`, async () => {
      const want = expected.cases[c.file];
      assert.ok(want.int8, 'the expectations hold the float32-KV run');
      const bytes = readFileSync(new URL(c.file, GGUF_DIR));
      const worst = {};
      for (const activations of ['int8', 'exact']) {
        const model = await loadPretrained({ gguf: bytes, activations });
        try {
          assert.equal(model.activations, activations);
          const { logits } = model.forward(want.prompt);
          worst[activations] = Math.max(
            ...want.int8.top.map((top, t) => {
              const p = softmaxRow(logits, t);
              return Math.max(...top.map(([id, q]) => Math.abs(p[id] - q)));
            }),
          );
        } finally {
          model.dispose();
        }
      }
      assert.ok(worst.int8 <= tolerance, `int8: max |Δp| ${worst.int8}`);
      assert.ok(
        worst.exact > 10 * INT8_TOLERANCE,
        `exact: max |Δp| ${worst.exact} (8-bit activations matter here)`,
      );
    });
  }

  it('activations: refused for a file without quantized matrices, for a folder, and when misspelled', async () => {
    const f32 = readFileSync(new URL('llama-tiny.f32.gguf', GGUF_DIR));
    await assert.rejects(loadPretrained({ gguf: f32, activations: 'int8' }), /needs quantized matrices/);
    await assert.rejects(
      loadPretrained({ gguf: f32, activations: 'int4' }),
      /activations must be 'exact' or 'int8'/,
    );
    await assert.rejects(
      loadPretrained({ config: {}, weights: new Uint8Array(8), activations: 'int8' }),
      /give it as gguf/,
    );
    const model = await loadPretrained({ gguf: f32 });
    assert.equal(model.activations, 'exact');
    model.dispose();
  });
});
