// Phi-3's LongRoPE (Phi-4-mini, Phi-3-128k) from a folder and from a GGUF file: the short-factor
// frequencies and the attention factor as transformers computes them (expected.json of
// phi4-mini-tiny, float64), the input capped at original_max_position_embeddings, the GGUF file's
// factor tensors and rope.scaling.attn_factor read back as the folder's config; what is refused by
// name; and GPT-4o's pre-tokenizer (Phi-4-mini's GGUF vocab). The logits of every folder and GGUF
// form are checked by the suites that cover every fixture (pretrained, gguf-load, gguf-load-quant).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, loadPretrained, AttentionError } from '../../src/js/index.js';
import { coreConfig } from '../../src/js/pretrained/config.js';
import { preFlags } from '../../src/js/tokenizers/gguf-tokenizer-models.js';
import { makeTokenizer } from '../../src/js/pretrained/files.js';
import { fixtureGGUF } from './gguf-from-fixture.js';
import { PRETRAINED_DIR } from './fixture.js';

await init();

const NAME = 'phi4-mini-tiny';
const read = (file) => readFileSync(new URL(`${NAME}/${file}`, PRETRAINED_DIR));
const json = (file) => JSON.parse(read(file).toString('utf8'));
const config = json('config.json');
const expected = json('expected.json');
// The GGUF file stores the factors and the attention factor in float32.
const F32_REL = 2 ** -23;

const refused = (fn, pattern) =>
  assert.throws(
    fn,
    (e) => e instanceof AttentionError && e.code === 'INVALID_ARGUMENT' && pattern.test(e.message),
  );
const refusedAsync = (promise, pattern) =>
  assert.rejects(promise, (e) => e instanceof AttentionError && pattern.test(e.message));

describe('LongRoPE from a config.json', () => {
  it('short-factor frequencies and √(1 + ln(max/original) / ln original) as transformers computes them', () => {
    const { core } = coreConfig(config);
    const want = expected.rope_inv_freq.data;
    assert.equal(core.ropeInvFreq.length, want.length);
    core.ropeInvFreq.forEach((f, i) => assert.ok(Math.abs(f - want[i]) <= 1e-6 * want[i], `${i}: ${f}`));
    assert.equal(core.ropeAttentionFactor, Math.sqrt(1.25));
    assert.ok(Math.abs(core.ropeAttentionFactor - expected.rope_attention_factor) < 1e-6); // 7 digits
    assert.equal(core.maxPositions, config.original_max_position_embeddings);
    assert.equal(core.rotaryDims, 12);
  });

  it('both config layouts give the same core config', () => {
    assert.deepEqual(coreConfig(json('config.transformers5.json')).core, coreConfig(config).core);
  });

  it('an input past original_max_position_embeddings is refused (transformers would switch to long_factor)', async () => {
    const model = await loadPretrained({ config, weights: read('model.safetensors') });
    try {
      const ids = [Array.from({ length: config.original_max_position_embeddings + 1 }, (_, i) => i % 90)];
      assert.throws(() => model.forward(ids), AttentionError);
      const fits = [ids[0].slice(1)];
      assert.equal(model.forward(fits).logits.shape[1], config.original_max_position_embeddings);
    } finally {
      model.dispose();
    }
  });

  it('refusals name the problem', () => {
    const scaling = config.rope_scaling;
    const with_ = (over) => ({ ...config, ...over });
    refused(
      () => coreConfig(with_({ rope_scaling: { ...scaling, short_factor: [1, 2] } })),
      /short_factor must hold 6 numbers > 0/,
    );
    refused(
      () => coreConfig(with_({ rope_scaling: { ...scaling, long_factor: [1, 2, 3, 4, 5, -6] } })),
      /long_factor must hold 6 numbers > 0/,
    );
    refused(
      () => coreConfig(with_({ rope_scaling: { ...scaling, original_max_position_embeddings: 128 } })),
      /rope original_max_position_embeddings 128 disagrees with original_max_position_embeddings 256/,
    );
    refused(
      () => coreConfig(with_({ rope_scaling: { ...scaling, beta_fast: 32 } })),
      /rope key "beta_fast" .* is not implemented for rope_type "longrope"/,
    );
    const llama = JSON.parse(readFileSync(new URL('llama-tiny/config.json', PRETRAINED_DIR), 'utf8'));
    refused(
      () =>
        coreConfig({
          ...llama,
          rope_scaling: { rope_type: 'longrope', short_factor: [1], long_factor: [1] },
        }),
      /rope_type "longrope" is implemented for Phi-3 only/,
    );
  });

  it('an explicit attention_factor is used as given', () => {
    const { core } = coreConfig({
      ...config,
      rope_scaling: { ...config.rope_scaling, attention_factor: 1.5 },
    });
    assert.equal(core.ropeAttentionFactor, 1.5);
  });
});

describe('LongRoPE from a GGUF file', () => {
  it("the factor tensors and rope.scaling.attn_factor give the folder's config", async () => {
    const model = await loadPretrained({ gguf: fixtureGGUF(NAME) });
    try {
      const folder = coreConfig(config).core;
      const got = model.config.rope_scaling;
      assert.equal(got.rope_type, 'longrope');
      assert.deepEqual(got.short_factor, config.rope_scaling.short_factor);
      assert.deepEqual(got.long_factor, config.rope_scaling.long_factor);
      assert.ok(Math.abs(got.attention_factor - folder.ropeAttentionFactor) <= F32_REL * 2);
      assert.equal(model.config.original_max_position_embeddings, config.original_max_position_embeddings);
    } finally {
      model.dispose();
    }
  });

  it('refusals name the problem', async () => {
    const k = (key) => `phi3.${key}`;
    const drop = (names) => (list) => list.filter((t) => !names.includes(t.name));
    await refusedAsync(
      loadPretrained({ gguf: fixtureGGUF(NAME, { tensors: drop(['rope_factors_long.weight']) }) }),
      /LongRoPE needs both rope_factors_short\.weight and rope_factors_long\.weight/,
    );
    await refusedAsync(
      loadPretrained({
        gguf: fixtureGGUF(NAME, { tensors: drop(['rope_factors_long.weight', 'rope_factors_short.weight']) }),
      }),
      /phi3\.rope\.scaling\.attn_factor 1\.1180\d* without rope_factors_short\.weight/,
    );
    await refusedAsync(
      loadPretrained({
        gguf: fixtureGGUF(NAME, {
          metadata: (md) => md.filter(([key]) => key !== k('rope.scaling.original_context_length')),
        }),
      }),
      /has rope_factors_short\.weight but no phi3\.rope\.scaling\.original_context_length/,
    );
  });
});

describe("GPT-4o's pre-tokenizer (Phi-4-mini's GGUF vocab)", () => {
  it('is known by its llama.cpp name, with clean_up_tokenization_spaces off', () => {
    const flags = preFlags('gpt-4o');
    assert.equal(flags.cleanSpaces, false);
    assert.equal(flags.addBos, false);
    refused(() => preFlags('gpt-5o'), /tokenizer\.ggml\.pre "gpt-5o" is not supported; supported: .*gpt-4o/);
  });

  it("Phi-4-mini's tokenizer.json split (o200k, with (?i:…) groups) is read by the folder path", async () => {
    const tj = json('tokenizer.json');
    const O200K =
      "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|" +
      "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|" +
      '\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+';
    tj.pre_tokenizer = {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: O200K }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
      ],
    };
    const tok = await makeTokenizer(tj, json('tokenizer_config.json'));
    for (const { text } of expected.tokenizer_cases) {
      const { ids } = tok.encode(text, { add_special_tokens: false });
      assert.equal(tok.decode(ids, { skip_special_tokens: true }), text);
    }
  });
});
