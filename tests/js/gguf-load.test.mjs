// loadPretrained({ gguf }) against the tiny checkpoints of tests/golden/pretrained/, each written as
// llama.cpp's converter writes it (tests/js/gguf-from-fixture.js), in F32 and F16: where llama.cpp
// computes what transformers computes, the logits and every layer's attention equal the PyTorch
// references (expected.json, the tolerances of pretrained.test.mjs); where llama.cpp fixes what
// config.json says (docs/gguf.md), `config` says what it computes and the model equals the
// safetensors checkpoint loaded with that config. Plus config, metadata, weightBytes and generation.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, loadPretrained } from '../../src/js/index.js';
import { PRETRAINED_DIR, listPretrained } from './fixture.js';
import { coreConfig } from '../../src/js/pretrained/config.js';
import { fixtureGGUF, ggufFixtures } from './gguf-from-fixture.js';

const kLogitAbs = 1e-4,
  kLogitRel = 1e-3; // logits
const kAttnAbs = 1e-5,
  kAttnRel = 1e-4; // attention weights

await init();

const DIR = new URL('../golden/pretrained/', import.meta.url);
const read = (model, file) => readFileSync(new URL(`${model}/${file}`, DIR));
const json = (model, file) => JSON.parse(read(model, file).toString('utf8'));
const ids2d = (t) =>
  Array.from({ length: t.shape[0] }, (_, b) => t.data.slice(b * t.shape[1], (b + 1) * t.shape[1]));

function assertClose(got, want, abs, rel, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < got.length; i++) {
    if (!(Math.abs(got[i] - want[i]) <= abs + rel * Math.abs(want[i])))
      assert.fail(`${what}[${i}] = ${got[i]}, want ${want[i]}`);
  }
}

// What llama.cpp computes differently from the fixture's config.json, as the GGUF model's config
// says it (docs/gguf.md): the keys that differ and the layers' windows / RoPE.
const DIFFERENT = {
  'mistral-tiny': (m) => {
    assert.equal(m.architecture, 'LlamaForCausalLM'); // Mistral files are "llama"
    assert.ok(
      m.layers.every((l) => l.window === 0),
      'no sliding window',
    );
  },
  'qwen2-sliding-tiny': (m) => {
    assert.equal(m.config.use_sliding_window, undefined);
    assert.ok(
      m.layers.every((l) => l.window === 0),
      'no sliding window',
    );
  },
  'phi3-tiny': (m) => {
    assert.equal(m.config.sliding_window, null);
    assert.equal(m.config.partial_rotary_factor, 0.5);
    assert.ok(
      m.layers.every((l) => l.window === 0),
      'no sliding window',
    );
  },
  'smollm3-tiny': (m) => {
    assert.deepEqual(m.config.no_rope_layers, [1, 1]); // every 4th layer, not the config's [1, 0]
    assert.ok(m.layers.every((l) => l.rope));
  },
  'gemma3-tiny': (m) => {
    assert.equal(m.config.query_pre_attn_scalar, 16); // head_dim, not the config's 24
    assert.deepEqual(m.config.layer_types, ['sliding_attention', 'sliding_attention']); // pattern 6
    assert.deepEqual(
      m.layers.map((l) => [l.window, l.ropeTheta]),
      [
        [3, 10000],
        [3, 10000],
      ],
    );
  },
};

// The reference a GGUF model is held to: the PyTorch one, or the checkpoint under the GGUF's config.
async function reference(name, model, dtype) {
  if (!DIFFERENT[name])
    return { expected: json(name, dtype === 'F32' ? 'expected.json' : 'expected_f16.json') };
  const weights = read(name, dtype === 'F32' ? 'model.safetensors' : 'model.f16.safetensors');
  return { model: await loadPretrained({ config: model.config, weights }) };
}

// A qwen35 file's DeltaNet maps (B, H_v, T, T) in the folder's value-head order: its head
// j·H_k + g (tiled) is the folder's g·(H_v / H_k) + j (grouped), layers[l].valueHeadOrder says which.
function folderHeads(map, info) {
  if (info.valueHeadOrder !== 'tiled') return map.data;
  const [b, h, t] = map.shape,
    k = info.kvHeads,
    perK = h / k,
    size = t * t;
  const out = new Float32Array(map.data.length);
  for (let s = 0; s < b; s++)
    for (let j = 0; j < perK; j++)
      for (let g = 0; g < k; g++) {
        const from = (s * h + j * k + g) * size;
        out.set(map.data.subarray(from, from + size), (s * h + g * perK + j) * size);
      }
  return out;
}

// Logits and attention (every layer in F32, layer 0 in F16) of each case against the reference.
async function compare(name, model, dtype) {
  const ref = await reference(name, model, dtype);
  for (const c of json(name, 'expected.json').cases) {
    const ids = ids2d(c.input_ids);
    const layers = dtype === 'F32' ? true : [0];
    const got = model.forward(ids, { attention: layers });
    let want;
    if (ref.model) {
      const r = ref.model.forward(ids, { attention: layers });
      want = { logits: r.logits.data, attention: r.attention.map((a) => a?.data) };
    } else {
      const e = ref.expected.cases.find((x) => x.name === c.name);
      if (!e) continue; // a case only the F32 reference has (Qwen3.5's 70 tokens)
      want = { logits: e.logits.data, attention: e.attention?.map((a) => a.data) };
    }
    assertClose(got.logits.data, want.logits, kLogitAbs, kLogitRel, `${name} ${dtype} ${c.name} logits`);
    if (!want.attention) continue;
    got.attention.forEach((a, l) => {
      if (a && want.attention[l])
        assertClose(
          folderHeads(a, model.layers[l]),
          want.attention[l],
          kAttnAbs,
          kAttnRel,
          `${name} ${dtype} ${c.name} attention ${l}`,
        );
    });
  }
  ref.model?.dispose();
}

describe('GGUF files of the tiny checkpoints, as llama.cpp computes them', () => {
  it('leaves out only fixtures of families the registry reads no GGUF files of', () => {
    const all = listPretrained(),
      converted = ggufFixtures(all);
    for (const name of all.filter((n) => !converted.includes(n))) {
      const config = JSON.parse(readFileSync(new URL(`${name}/config.json`, PRETRAINED_DIR), 'utf8'));
      // a multimodal checkpoint's family: its text model's (architectures/wrappers.js)
      assert.equal(coreConfig(config).family.gguf, undefined, `${name} has a GGUF mapping`);
    }
  });
  for (const name of ggufFixtures(listPretrained())) {
    for (const dtype of ['F32', 'F16']) {
      it(`${name} (${dtype}): logits and attention`, async () => {
        const model = await loadPretrained({ gguf: fixtureGGUF(name, { type: dtype }) });
        DIFFERENT[name]?.(model);
        await compare(name, model, dtype);
        model.dispose();
      });
    }
  }
});

describe('what a GGUF model says about itself', () => {
  it("Gemma 3's sliding_window_pattern and rope.freq_base_swa, read as llama.cpp reads them", async () => {
    const gguf = fixtureGGUF('gemma3-tiny', {
      metadata: (md) => [
        ...md,
        ['gemma3.attention.sliding_window_pattern', 'uint32', 2],
        ['gemma3.rope.freq_base_swa', 'float32', 5000],
      ],
    });
    const model = await loadPretrained({ gguf });
    // period 2: layer 0 slides (0 % 2 < 1), layer 1 is full; the sliding layers' RoPE at 5000
    assert.deepEqual(model.config.layer_types, ['sliding_attention', 'full_attention']);
    assert.deepEqual(
      model.layers.map((l) => [l.window > 0, l.ropeTheta]),
      [
        [true, 5000],
        [false, model.config.rope_theta],
      ],
    );
    model.dispose();
    const zero = fixtureGGUF('gemma3-tiny', {
      metadata: (md) => [...md, ['gemma3.attention.sliding_window_pattern', 'uint32', 0]],
    });
    await assert.rejects(loadPretrained({ gguf: zero }), /sliding_window_pattern must be a whole number ≥ 1/);
  });

  it('config: the config.json keys the file maps to', async () => {
    for (const name of ['llama-tiny', 'qwen3-tiny', 'gpt2-tiny', 'gemma2-tiny', 'olmo2-tiny']) {
      const fixture = json(name, 'config.json');
      const model = await loadPretrained({ gguf: fixtureGGUF(name) });
      assert.equal(model.architecture, fixture.architectures[0]);
      assert.deepEqual(model.config.architectures, fixture.architectures);
      for (const [key, value] of Object.entries(model.config)) {
        if (
          ['rms_norm_eps', 'layer_norm_epsilon', 'num_key_value_heads', 'head_dim', 'rope_theta'].includes(
            key,
          )
        )
          continue;
        if (fixture[key] != null && key !== 'layer_types')
          assert.deepEqual(value, fixture[key], `${name} ${key}`);
      }
      // float32 in the file: llama.cpp's epsilon is the float nearest the config's
      const eps = model.config.rms_norm_eps ?? model.config.layer_norm_epsilon;
      assert.equal(eps, Math.fround(fixture.rms_norm_eps ?? fixture.layer_norm_epsilon));
      model.dispose();
    }
  });

  it('metadata: scalars and short arrays kept, long arrays summarised, frozen', async () => {
    const tokens = Array.from({ length: 96 }, (_, i) => `t${i}`);
    const gguf = fixtureGGUF('llama-tiny', {
      metadata: (md) => [
        ...md,
        ['tokenizer.ggml.tokens', 'array<string>', tokens],
        ['tokenizer.ggml.scores', 'array<float32>', tokens.map(() => 0.5)],
        ['general.tags', 'array<string>', ['a', 'b']],
      ],
    });
    const model = await loadPretrained({ gguf });
    const m = model.metadata;
    assert.equal(m['general.architecture'], 'llama');
    assert.equal(m['llama.block_count'], 2);
    assert.equal(m['tokenizer.ggml.tokens'], 'array<string>[96]');
    assert.equal(m['tokenizer.ggml.scores'], 'array<float32>[96]');
    assert.deepEqual(m['general.tags'], ['a', 'b']);
    assert.ok(Object.isFrozen(m));
    model.dispose();
    const st = await loadPretrained({
      config: json('llama-tiny', 'config.json'),
      weights: read('llama-tiny', 'model.safetensors'),
    });
    assert.equal(st.metadata, null);
    st.dispose();
  });

  it('gpt2: attention.head_count_kv equal to head_count (as llama.cpp writes it) loads, same logits', async () => {
    const heads = json('gpt2-tiny', 'config.json').n_head;
    const withKv = fixtureGGUF('gpt2-tiny', {
      metadata: (md) => [...md, ['gpt2.attention.head_count_kv', 'uint32', heads]],
    });
    const plain = await loadPretrained({ gguf: fixtureGGUF('gpt2-tiny') });
    const kv = await loadPretrained({ gguf: withKv });
    const ids = [[1, 5, 9, 2]];
    assert.deepEqual(kv.forward(ids).logits.data, plain.forward(ids).logits.data);
    for (const m of [plain, kv]) m.dispose();
  });

  it('weightBytes: the stored bytes of the tensors read (F16 matrices half of F32)', async () => {
    for (const name of ['llama-tiny', 'gpt2-tiny', 'phi3-tiny']) {
      const f32 = await loadPretrained({ gguf: fixtureGGUF(name) });
      const f16 = await loadPretrained({ gguf: fixtureGGUF(name, { type: 'F16' }) });
      const st = await loadPretrained({
        config: json(name, 'config.json'),
        weights: read(name, 'model.safetensors'),
      });
      // GPT-2's GGUF holds its head as a copy of the embeddings (its embedding is then lookup-only:
      // outside the heap, offHeapBytes)
      const head = name === 'gpt2-tiny' ? 96 * 32 * 4 : 0;
      assert.equal(f32.weightBytes + f32.offHeapBytes, st.weightBytes + st.offHeapBytes + head, name);
      assert.ok(f16.weightBytes < 0.6 * f32.weightBytes, name);
      for (const m of [f32, f16, st]) m.dispose();
    }
  });

  it('generation: greedy ids as the PyTorch reference, stopping at the eos id of the file', async () => {
    for (const name of ['llama-tiny', 'qwen3-tiny', 'gpt2-tiny']) {
      const g = json(name, 'expected.json').generate;
      if (!g) continue;
      const model = await loadPretrained({ gguf: new Blob([fixtureGGUF(name)]) });
      const raw = model.generate(g.input_ids, { maxNewTokens: g.max_new_tokens, stop: [] });
      assert.deepEqual(Array.from(raw.data), g.new_ids.flat(), `${name} greedy`);
      assert.deepEqual(model.stopIds, [json(name, 'config.json').eos_token_id]);
      model.dispose();
    }
  });

  it('llama3-scaled-tiny: the rope_freqs tensor scales the RoPE (config has no rope_scaling)', async () => {
    const model = await loadPretrained({ gguf: fixtureGGUF('llama3-scaled-tiny') });
    assert.equal(model.config.rope_scaling, undefined);
    assert.ok(model.layers.every((l) => l.ropeScaled));
    model.dispose();
  });
});

// tokenizer.ggml.* of a byte-level tokenizer.json as llama.cpp's converter writes them (vocab by
// id, control tokens for the special added ones, merges, GPT-2's pre-tokenizer).
function tokenizerKeys(name) {
  const t = json(name, 'tokenizer.json');
  const tokens = Object.entries(t.model.vocab)
    .sort((a, b) => a[1] - b[1])
    .map(([s]) => s);
  for (const a of t.added_tokens) tokens[a.id] = a.content;
  const types = tokens.map((_, id) => (t.added_tokens.some((a) => a.id === id && a.special) ? 3 : 1));
  const merges = t.model.merges.map((m) => (Array.isArray(m) ? m.join(' ') : m));
  return [
    ['tokenizer.ggml.model', 'string', 'gpt2'],
    ['tokenizer.ggml.pre', 'string', 'gpt-2'],
    ['tokenizer.ggml.tokens', 'array<string>', tokens],
    ['tokenizer.ggml.token_type', 'array<int32>', types],
    ['tokenizer.ggml.merges', 'array<string>', merges],
    ['tokenizer.ggml.add_bos_token', 'bool', false],
    ['tokenizer.chat_template', 'string', '{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}'],
  ];
}

describe("the file's tokenizer (tokenizers/gguf-tokenizer.js)", () => {
  it('encode as the checkpoint, the chat template, stop ids from the file', async () => {
    for (const name of ['gpt2-tiny', 'qwen2-tiny']) {
      const gguf = fixtureGGUF(name, { metadata: (md) => [...md, ...tokenizerKeys(name)] });
      const model = await loadPretrained({ gguf });
      for (const { text, ids } of json(name, 'expected.json').tokenizer_cases)
        assert.deepEqual(
          Array.from(model.encode(text, { addSpecialTokens: false })),
          ids.filter((id) => id < 94),
          `${name} ${text}`,
        );
      assert.equal(
        model.applyChatTemplate([{ role: 'user', content: 'hi' }], { tokenize: false }),
        '<user>hi',
      );
      assert.deepEqual(model.stopIds, [json(name, 'config.json').eos_token_id]);
      assert.equal(model.metadata['tokenizer.ggml.model'], 'gpt2');
      model.dispose();
    }
  });

  it('a tokenizer the library cannot read: the model loads, takes ids, and encode() names why', async () => {
    const keys = tokenizerKeys('gpt2-tiny').map((e) =>
      e[0] === 'tokenizer.ggml.pre' ? [e[0], e[1], 'no-such-pre'] : e,
    );
    const model = await loadPretrained({
      gguf: fixtureGGUF('gpt2-tiny', { metadata: (md) => [...md, ...keys] }),
    });
    assert.throws(() => model.encode('hi'), /no-such-pre/);
    assert.equal(model.forward([[1, 2]]).logits.shape.join(), '1,2,96');
    model.dispose();
  });
});
