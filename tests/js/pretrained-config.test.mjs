// Issue #25: config.json read right. Both layouts (transformers 4: rope_theta + rope_scaling;
// transformers 5: rope_parameters) give the same bits; every key outside the architecture's table,
// a default-only key off its default, an unimplemented rope_type, quantization_config and auto_map
// are INVALID_ARGUMENT naming themselves; sampling works on a 151 936-token vocabulary with no stack
// overflow, deterministically per seed; stop ids end a row.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  init,
  loadPretrained,
  AttentionError,
  GENERATE_PAD,
  PRETRAINED_CONFIG_KEYS,
} from '../../src/js/index.js';
import { samplingOptions, tokenChooser } from '../../src/js/sampling.js';
import { coreConfig } from '../../src/js/pretrained-config.js';
import { DOC, docSection, renderKeyTables } from '../../scripts/config-keys-doc.mjs';

await init();

const DIR = new URL('../golden/pretrained/', import.meta.url);
const read = (model, file) => readFileSync(new URL(`${model}/${file}`, DIR));
const json = (model, file) => JSON.parse(read(model, file).toString('utf8'));
const load = (name, config = json(name, 'config.json'), extra = {}) =>
  loadPretrained({ config, weights: read(name, 'model.safetensors'), ...extra });

// The transformers-5 form of a transformers-4 config.json: rope_theta and rope_scaling move into
// rope_parameters (as PreTrainedConfig.to_dict writes it in 5.x).
// (`like`: a transformers-5 file whose key order and dtype key to copy, for comparisons.)
function asTransformers5(config, like = null) {
  const {
    rope_theta: theta,
    rope_scaling: scaling,
    partial_rotary_factor: partial,
    torch_dtype: dtype,
    ...rest
  } = config;
  const { type, rope_type: ropeType = type ?? 'default', ...params } = scaling ?? {};
  const out = {
    ...rest,
    transformers_version: '5.17.0',
    rope_parameters: { rope_type: ropeType, ...params, rope_theta: theta },
  };
  if (partial !== undefined) out.rope_parameters.partial_rotary_factor = partial;
  if (dtype !== undefined) out[like ? 'dtype' : 'torch_dtype'] = dtype;
  return out;
}

async function rejects(config, name, pattern) {
  await assert.rejects(load(name, config), (e) => {
    assert.ok(e instanceof AttentionError, String(e));
    assert.equal(e.code, 'INVALID_ARGUMENT', e.message);
    assert.match(e.message, pattern);
    return true;
  });
}

const IDS = [
  [5, 17, 42, 88, 3, 61, 29],
  [95, 0, 33, 71, 12, 8, 8],
];
const LLAMA_FAMILY = [
  'llama-tiny',
  'qwen2-tiny',
  'llama3-scaled-tiny',
  'llama-linear-tiny',
  'qwen3-tiny',
  'mistral-tiny',
  'qwen2-sliding-tiny',
  'smollm3-tiny',
  'olmo2-tiny',
  'phi3-tiny',
  'gemma3-tiny',
  'gemma2-tiny',
];

describe('both config layouts', () => {
  for (const name of LLAMA_FAMILY) {
    it(`${name}: transformers 4 and 5 layouts (and both at once) give identical logits and attention`, async () => {
      // config.transformers5.json: the fixture script's transformers-5 form of the same model.
      const v4 = json(name, 'config.json'),
        v5 = json(name, 'config.transformers5.json');
      assert.ok(!('rope_theta' in v5));
      if (v4.model_type === 'gemma3_text') {
        // one RoPE per layer type
        assert.equal(v5.rope_parameters.full_attention.rope_theta, v4.rope_theta);
        assert.equal(v5.rope_parameters.sliding_attention.rope_theta, v4.rope_local_base_freq);
      } else {
        assert.equal(v5.rope_parameters.rope_theta, v4.rope_theta);
        assert.deepEqual(v5, asTransformers5(v4, v5));
      }
      const outs = [];
      for (const config of [v4, v5, { ...v4, ...v5 }]) {
        const m = await load(name, config);
        const r = m.forward(IDS);
        outs.push([r.logits.data, ...r.attention.map((a) => a.data)]);
        m.dispose();
      }
      for (const other of outs.slice(1)) other.forEach((d, i) => assert.deepEqual(d, outs[0][i]));
    });
  }

  it('a transformers-5 file read as if it had no rope_parameters would differ (the bug of 0.5.0)', async () => {
    const v5 = asTransformers5(json('qwen2-tiny', 'config.json')); // rope_theta 1e6, default 10000
    const right = await load('qwen2-tiny', v5);
    const { rope_parameters: _, ...stripped } = v5;
    const wrong = await load('qwen2-tiny', stripped);
    assert.notDeepEqual(right.forward(IDS).logits.data, wrong.forward(IDS).logits.data);
    right.dispose();
    wrong.dispose();
  });

  it('both layouts present must agree', async () => {
    const v4 = json('llama3-scaled-tiny', 'config.json'),
      v5 = asTransformers5(v4);
    await rejects(
      { ...v4, rope_parameters: { ...v5.rope_parameters, rope_theta: 10000 } },
      'llama3-scaled-tiny',
      /disagrees with rope_theta/,
    );
    await rejects(
      { ...v4, rope_parameters: { ...v5.rope_parameters, factor: 2 } },
      'llama3-scaled-tiny',
      /disagrees/,
    );
    await rejects(
      {
        ...json('llama-tiny', 'config.json'),
        rope_parameters: { rope_type: 'linear', factor: 2, rope_theta: 10000 },
      },
      'llama-tiny',
      /disagrees/,
    );
  });

  it('rope_type "dynamic" equals the default up to original_max_position_embeddings and refuses longer inputs', async () => {
    const base = json('llama-tiny', 'config.json');
    const plain = await load('llama-tiny', base);
    const dynamic = await load('llama-tiny', {
      ...base,
      rope_scaling: { rope_type: 'dynamic', factor: 2, original_max_position_embeddings: 8 },
    });
    assert.equal(dynamic.maxPositions, 8);
    assert.deepEqual(dynamic.forward(IDS).logits.data, plain.forward(IDS).logits.data);
    assert.throws(() => dynamic.forward([[1, 2, 3, 4, 5, 6, 7, 8, 9]]), AttentionError);
    const v5 = await load(
      'llama-tiny',
      asTransformers5({ ...base, rope_scaling: { type: 'dynamic', factor: 2 } }),
    );
    assert.equal(v5.maxPositions, base.max_position_embeddings);
    for (const m of [plain, dynamic, v5]) m.dispose();
  });
});

describe('keys outside the table are refused, naming the key and value', () => {
  const llama = json('llama-tiny', 'config.json'),
    qwen = json('qwen2-tiny', 'config.json'),
    gpt2 = json('gpt2-tiny', 'config.json');
  const gemma = json('gemma3-tiny', 'config.json');
  const cases = [
    [
      'an unknown key',
      'llama-tiny',
      { ...llama, attn_logit_softcapping: 50 },
      /key "attn_logit_softcapping" \(50\) is not implemented for LlamaForCausalLM/,
    ],
    [
      'attention_bias: true',
      'llama-tiny',
      { ...llama, attention_bias: true },
      /attention_bias = true is not implemented.*only false/,
    ],
    ['mlp_bias: true', 'llama-tiny', { ...llama, mlp_bias: true }, /mlp_bias = true/],
    ['pretraining_tp 2', 'llama-tiny', { ...llama, pretraining_tp: 2 }, /pretraining_tp = 2/],
    [
      'GPT-2 scale_attn_by_inverse_layer_idx',
      'gpt2-tiny',
      { ...gpt2, scale_attn_by_inverse_layer_idx: true },
      /scale_attn_by_inverse_layer_idx = true/,
    ],
    [
      'GPT-2 untied head',
      'gpt2-tiny',
      { ...gpt2, tie_word_embeddings: false },
      /tie_word_embeddings = false/,
    ],
    [
      'quantization_config',
      'llama-tiny',
      { ...llama, quantization_config: { quant_method: 'gptq' } },
      /quantization_config: quantized checkpoints are not supported/,
    ],
    ['auto_map', 'llama-tiny', { ...llama, auto_map: { AutoModelForCausalLM: 'modeling_x.X' } }, /auto_map/],
    [
      'rope_type yarn (4.x)',
      'llama-tiny',
      { ...llama, rope_scaling: { rope_type: 'yarn', factor: 4 } },
      /rope_type "yarn" is not implemented/,
    ],
    [
      'rope_type longrope (5.x)',
      'llama-tiny',
      { ...asTransformers5(llama), rope_parameters: { rope_type: 'longrope', rope_theta: 1e4 } },
      /rope_type "longrope"/,
    ],
    [
      'an unknown rope key',
      'llama-tiny',
      { ...llama, rope_scaling: { rope_type: 'linear', factor: 2, attention_factor: 1.5 } },
      /rope key "attention_factor"/,
    ],
    [
      'partial_rotary_factor 0.5',
      'llama-tiny',
      asTransformers5({ ...llama, rope_scaling: { rope_type: 'default', partial_rotary_factor: 0.5 } }),
      /partial_rotary_factor = 0.5 is not implemented for LlamaForCausalLM/,
    ],
    [
      'rope per layer type',
      'llama-tiny',
      {
        ...asTransformers5(llama),
        rope_parameters: { full_attention: { rope_type: 'default', rope_theta: 1e4 } },
      },
      /per layer type/,
    ],
    [
      'an unknown architecture',
      'llama-tiny',
      { ...llama, architectures: ['MambaForCausalLM'] },
      /architecture "MambaForCausalLM" is not supported/,
    ],
    [
      'model_type disagreeing',
      'llama-tiny',
      { ...llama, model_type: 'mistral' },
      /model_type "mistral" does not match architecture LlamaForCausalLM/,
    ],
    [
      'Qwen2 sliding layers',
      'qwen2-tiny',
      { ...qwen, layer_types: ['sliding_attention', 'full_attention'] },
      /layer_types/,
    ],
    [
      'Gemma 2-style attention soft-capping',
      'gemma3-tiny',
      { ...gemma, attn_logit_softcapping: 50 },
      /attn_logit_softcapping = 50 is not implemented for Gemma3ForCausalLM \(only null\)/,
    ],
    [
      'Gemma final-logit soft-capping',
      'gemma3-tiny',
      { ...gemma, final_logit_softcapping: 30 },
      /final_logit_softcapping = 30/,
    ],
    [
      'Gemma bidirectional attention',
      'gemma3-tiny',
      { ...gemma, use_bidirectional_attention: true },
      /use_bidirectional_attention = true/,
    ],
    [
      'Gemma layer_types too short',
      'gemma3-tiny',
      { ...gemma, layer_types: ['sliding_attention'] },
      /layer_types must list/,
    ],
    [
      'Gemma rope layouts disagreeing',
      'gemma3-tiny',
      {
        ...gemma,
        rope_parameters: {
          full_attention: { rope_type: 'default', rope_theta: 1e6 },
          sliding_attention: { rope_type: 'default', rope_theta: 1e4 },
        },
      },
      /disagrees/,
    ],
    [
      'Gemma scaled local RoPE',
      'gemma3-tiny',
      {
        ...json('gemma3-tiny', 'config.transformers5.json'),
        rope_parameters: {
          full_attention: { rope_type: 'default', rope_theta: 1e6 },
          sliding_attention: { rope_type: 'linear', factor: 2, rope_theta: 1e4 },
        },
      },
      /sliding layers is not implemented/,
    ],
    [
      'Gemma rope_parameters without a layer type',
      'gemma3-tiny',
      {
        ...json('gemma3-tiny', 'config.transformers5.json'),
        rope_parameters: { rope_type: 'default', rope_theta: 1e6 },
      },
      /exactly "full_attention" and "sliding_attention"/,
    ],
    [
      'Gemma hidden_activation',
      'gemma3-tiny',
      { ...gemma, hidden_activation: 'gelu' },
      /hidden_activation "gelu" is not supported/,
    ],
    [
      'Qwen2 layer_types of the wrong length',
      'qwen2-tiny',
      { ...qwen, use_sliding_window: true, layer_types: ['sliding_attention'] },
      /layer_types must list/,
    ],
    [
      'a negative sliding_window',
      'qwen2-tiny',
      { ...qwen, use_sliding_window: true, sliding_window: -4, max_window_layers: 0 },
      /sliding_window must be a positive integer/,
    ],
  ];
  for (const [what, name, config, pattern] of cases) it(what, () => rejects(config, name, pattern));

  it("Gemma 2: attribution explains the logits before final soft-capping (the forward's are capped)", async () => {
    const m = await load('gemma2-tiny');
    const cap = m.config.final_logit_softcapping,
      ids = [5, 17, 42];
    const capped = m.forward([ids]).logits;
    for (const token of [1, 2, 60]) {
      const pre = m.logitAttribution(ids, { token }).logitDiff; // without `against`: the logit itself
      const want = capped.get(0, 2, token);
      assert.ok(
        Math.abs(cap * Math.tanh(pre / cap) - want) <= 1e-5,
        `cap·tanh(${pre} / cap) vs the forward's ${want}`,
      );
      assert.ok(Math.abs(pre) >= Math.abs(want) - 1e-6, 'the pre-cap logit is at least as large');
    }
    m.dispose();
  });

  it('inert keys load, whatever their value; the module stays usable', async () => {
    const m = await load('llama-tiny', {
      ...llama,
      attention_dropout: 0.3,
      initializer_range: 1,
      use_cache: false,
      _name_or_path: 'x',
      transformers_version: '5.17.0',
      dtype: 'bfloat16',
    });
    assert.equal(m.forward(IDS).logits.shape[2], 96);
    m.dispose();
  });

  it("docs/checkpoints.md lists exactly the code's tables (node scripts/config-keys-doc.mjs rewrites it)", () => {
    assert.equal(docSection(readFileSync(DOC, 'utf8')), renderKeyTables());
  });

  it('model.layers says what differs between layers', async () => {
    const gemma = await load('gemma3-tiny'),
      smol = await load('smollm3-tiny'),
      gpt2 = await load('gpt2-tiny'),
      gemma2 = await load('gemma2-tiny');
    assert.deepEqual(
      gemma.layers.map((l) => [l.window, l.rope, l.ropeTheta, l.ropeScaled, l.qkNorm, l.softcap]),
      [
        [3, true, 10000, false, true, 0],
        [0, true, 1000000, true, true, 0],
      ],
    );
    assert.deepEqual(
      smol.layers.map((l) => [l.rope, l.ropeTheta]),
      [
        [true, 2000000],
        [false, null],
      ],
    );
    assert.deepEqual(
      gpt2.layers.map((l) => [l.window, l.rope]),
      [
        [0, false],
        [0, false],
      ],
    );
    assert.deepEqual(
      gemma2.layers.map((l) => [l.window, l.softcap]),
      [
        [3, 5],
        [0, 5],
      ],
    );
    for (const m of [gemma, smol, gpt2, gemma2]) m.dispose();
  });

  it('the tables are exported and every key is in exactly one class', () => {
    for (const [arch, t] of Object.entries(PRETRAINED_CONFIG_KEYS)) {
      const all = [...Object.keys(t.implemented), ...t.inert, ...Object.keys(t.defaultOnly)];
      assert.equal(new Set(all).size, all.length, `${arch}: a key listed twice`);
    }
  });
});

describe('generation: sampling on any vocabulary, stop ids', () => {
  const V = 151936;
  const row = new Float32Array(V).map((_, j) => Math.sin(j * 12.9898) * 4);

  it('sampling a 151 936-token row: in range, deterministic per seed, with and without topK/topP', () => {
    for (const o of [{}, { topK: 50 }, { topP: 0.9 }, { topK: 1000, topP: 0.5 }, { topK: V + 5 }]) {
      const a = tokenChooser(samplingOptions({ temperature: 0.8, seed: 7, ...o })),
        b = tokenChooser(samplingOptions({ temperature: 0.8, seed: 7, ...o }));
      const got = Array.from({ length: 20 }, () => a(row));
      assert.deepEqual(
        got,
        Array.from({ length: 20 }, () => b(row)),
        JSON.stringify(o),
      );
      for (const id of got) assert.ok(Number.isInteger(id) && id >= 0 && id < V);
    }
  });

  it('top-k 1 and a tiny top-p are the argmax; top-k keeps only the k best; ties go to the lower id', () => {
    let best = 0;
    row.forEach((v, j) => {
      if (v > row[best]) best = j;
    });
    for (const o of [{ topK: 1 }, { topP: 1e-9 }]) {
      const choose = tokenChooser(samplingOptions({ temperature: 1, seed: 3, ...o }));
      for (let i = 0; i < 5; i++) assert.equal(choose(row), best);
    }
    const sorted = Array.from(row.keys())
      .sort((x, y) => row[y] - row[x] || x - y)
      .slice(0, 5);
    const choose = tokenChooser(samplingOptions({ temperature: 2, seed: 1, topK: 5 }));
    for (let i = 0; i < 200; i++) assert.ok(sorted.includes(choose(row)));
    const flat = new Float32Array(10).fill(1);
    assert.equal(tokenChooser(samplingOptions({ temperature: 1, topK: 1 }))(flat), 0);
    assert.equal(tokenChooser(samplingOptions({ temperature: 1, topP: 0.05 }))(flat), 0);
  });

  it('sampled frequencies follow softmax(row / T) within the top-p nucleus', () => {
    const small = new Float32Array([2, 1, 0, -1, 3]),
      T = 1.5,
      p = 0.8;
    const w = Array.from(small, (v) => Math.exp(v / T)),
      z = w.reduce((x, y) => x + y);
    const order = [4, 0, 1, 2, 3]; // best first
    const kept = [];
    let mass = 0;
    for (const j of order) {
      if (mass >= p) break;
      kept.push(j);
      mass += w[j] / z;
    }
    const choose = tokenChooser(samplingOptions({ temperature: T, topP: p, seed: 11 }));
    const counts = new Map();
    const N = 20000;
    for (let i = 0; i < N; i++) {
      const j = choose(small);
      counts.set(j, (counts.get(j) ?? 0) + 1);
    }
    assert.deepEqual([...counts.keys()].sort(), [...kept].sort());
    const keptZ = kept.reduce((s, j) => s + w[j], 0);
    for (const j of kept) assert.ok(Math.abs(counts.get(j) / N - w[j] / keptZ) < 0.015, `id ${j}`);
  });

  it('bad sampling options are refused, never wrapped', async () => {
    const m = await load('llama-tiny');
    for (const [o, re] of [
      [{ seed: -1 }, /seed/],
      [{ seed: 2 ** 32 }, /seed/],
      [{ seed: 1.5 }, /seed/],
      [{ topP: 0 }, /topP/],
      [{ topP: 1.5 }, /topP/],
      [{ topK: -1 }, /topK/],
      [{ temperature: -1 }, /temperature/],
      [{ stop: [96] }, /stop/],
      [{ stop: 'x' }, /stop/],
    ]) {
      assert.throws(
        () => m.generate([[1, 2]], { maxNewTokens: 2, temperature: 1, ...o }),
        (e) => e.code === 'INVALID_ARGUMENT' && re.test(e.message),
      );
    }
    assert.equal(m.generate([[1, 2]], { maxNewTokens: 2 }).shape[1], 2);
    m.dispose();
  });

  it('stop ids: the row keeps its stop token, is padded after it, and generation ends when all rows stopped', async () => {
    const m = await load('llama-tiny');
    const raw = Array.from(m.generate([IDS[0]], { maxNewTokens: 12, stop: [] }).data);
    const stopAt = raw[3];
    const got = Array.from(m.generate([IDS[0]], { maxNewTokens: 12, stop: stopAt }).data);
    const end = raw.indexOf(stopAt);
    assert.deepEqual(
      got,
      raw.map((id, i) => (i <= end ? id : GENERATE_PAD)),
    );
    // Two rows: the one that does not stop keeps going; same seed, same ids.
    const both = m.generate([IDS[0], IDS[1]], { maxNewTokens: 12, stop: stopAt, temperature: 0.7, seed: 5 });
    assert.deepEqual(
      both.data,
      m.generate([IDS[0], IDS[1]], { maxNewTokens: 12, stop: stopAt, temperature: 0.7, seed: 5 }).data,
    );
    m.dispose();
    const withGen = await load('llama-tiny', undefined, { generationConfig: { eos_token_id: [stopAt, 94] } });
    assert.deepEqual(withGen.stopIds, [stopAt, 94]);
    withGen.dispose();
    await assert.rejects(
      load('llama-tiny', undefined, { generationConfig: { eos_token_id: 1000 } }),
      /eos_token_id/,
    );
  });

  it('generateStream yields the same ids as generate, with text, and ends on abort', async () => {
    const m = await loadPretrained({
      config: json('llama-tiny', 'config.json'),
      weights: read('llama-tiny', 'model.safetensors'),
      tokenizer: json('llama-tiny', 'tokenizer.json'),
    });
    const want = Array.from(m.generate([IDS[0]], { maxNewTokens: 8, stop: [] }).data);
    const got = [];
    for await (const { id, text } of m.generateStream(IDS[0], { maxNewTokens: 8, stop: [] })) {
      assert.equal(text, m.decode([id]));
      got.push(id);
    }
    assert.deepEqual(got, want);
    const controller = new AbortController();
    const some = [];
    for await (const { id } of m.generateStream(IDS[0], {
      maxNewTokens: 8,
      stop: [],
      signal: controller.signal,
    })) {
      some.push(id);
      if (some.length === 3) controller.abort();
    }
    assert.deepEqual(some, want.slice(0, 3));
    const stream = m.generateStream(IDS[0], { maxNewTokens: 8, stop: [] });
    await stream.next();
    assert.throws(() => m.generate([IDS[0]], { maxNewTokens: 2 }), /generateStream of this model is running/);
    await stream.return();
    assert.equal(m.generate([IDS[0]], { maxNewTokens: 2, stop: [] }).data[0], want[0]);
    m.dispose();
  });
});

// What the real library writes (tests/golden/dump_transformers_configs.py, run once where transformers
// 5.17 was installed): a checkpoint saved by it carries every key of its config class.
describe('the config.json files transformers writes (transformers-default-configs.json)', () => {
  const dump = JSON.parse(
    readFileSync(new URL('../golden/transformers-default-configs.json', import.meta.url), 'utf8'),
  );
  const architectureOf = Object.fromEntries(
    Object.entries(PRETRAINED_CONFIG_KEYS).map(([a, t]) => [t.modelType, a]),
  );

  it('covers every architecture we load', () => {
    assert.deepEqual(
      Object.keys(dump.models)
        .map((mt) => architectureOf[mt])
        .sort(),
      Object.keys(PRETRAINED_CONFIG_KEYS).sort(),
    );
  });

  for (const [modelType, { saved, full }] of Object.entries(dump.models)) {
    const architecture = architectureOf[modelType];
    it(`${architecture}: the default config as saved and as to_dict() is accepted (every key known)`, () => {
      for (const config of [saved, full])
        assert.doesNotThrow(() => coreConfig({ ...config, architectures: [architecture] }));
    });

    it(`${architecture}: our class defaults equal transformers ${dump.transformers}'s where both are set`, () => {
      for (const [key, ours] of Object.entries(PRETRAINED_CONFIG_KEYS[architecture].implemented)) {
        const theirs = full[key];
        if (ours == null || theirs == null) continue; // derived (num_key_value_heads, head_dim, layer_types…)
        assert.deepEqual(ours, theirs, `${key}`);
      }
    });
  }

  it('Gemma 2: use_bidirectional_attention null (its class default) is accepted as false; true is refused', () => {
    const base = { ...dump.models.gemma2.saved, architectures: ['Gemma2ForCausalLM'] };
    assert.doesNotThrow(() => coreConfig({ ...base, use_bidirectional_attention: null }));
    assert.doesNotThrow(() => coreConfig({ ...base, use_bidirectional_attention: false }));
    assert.throws(
      () => coreConfig({ ...base, use_bidirectional_attention: true }),
      /use_bidirectional_attention = true/,
    );
  });
});
