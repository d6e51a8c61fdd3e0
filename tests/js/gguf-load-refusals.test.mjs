// loadPretrained({ gguf }) refusing what it cannot compute as llama.cpp does, each an AttentionError
// naming the problem before the first tensor is allocated (no handle left, the heap not grown by a
// model): an unknown architecture, a key not implemented, a tensor type the core lacks, a missing,
// misshapen or unread tensor, a memoryLimit too small, options that clash with the file. And what a
// GGUF model does without a tokenizer, Blob input with progress, a split file.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { init, loadPretrained, memoryStats, AttentionError } from '../../src/js/index.js';
import { GGML, fixtureGGUF } from './gguf-from-fixture.js';
import { writeGGUF } from './gguf-writer.js';
import { expectRejection } from './expect-error.mjs';
import { parseGGUF } from '../../src/js/formats/gguf.js';

await init();

async function expectReject(options, code, pattern) {
  const before = memoryStats();
  await expectRejection(loadPretrained(options), code, pattern);
  const after = memoryStats();
  assert.equal(after.liveHandles, before.liveHandles, 'no handle left behind');
  assert.ok(after.heapBytes - before.heapBytes < 16 << 20, 'the heap did not grow by a model');
}

const withKeys = (model, extra) => fixtureGGUF(model, { metadata: (md) => [...md, ...extra] });
const setKey = (model, key, type, value) =>
  fixtureGGUF(model, {
    metadata: (md) => md.map((e) => (e[0] === key ? [key, type, value] : e)),
  });

describe('GGUF files refused by name', () => {
  it('an architecture the registry does not know', async () => {
    await expectReject(
      { gguf: setKey('llama-tiny', 'general.architecture', 'string', 'mamba') },
      'INVALID_ARGUMENT',
      /general\.architecture "mamba" is not supported; supported: gpt2, llama, qwen2/,
    );
  });

  it("Qwen3.5's lineage by its own reason: qwen3next, qwen35moe", async () => {
    for (const [arch, why] of [
      ['qwen3next', /qwen3next: Qwen3-Next/],
      ['qwen35moe', /qwen35moe: Qwen3\.5-MoE/],
    ])
      await expectReject(
        { gguf: setKey('llama-tiny', 'general.architecture', 'string', arch) },
        'INVALID_ARGUMENT',
        why,
      );
  });

  it('a key that changes the computation and is not implemented, never defaulted', async () => {
    const cases = [
      [
        'llama-tiny',
        [['llama.expert_count', 'uint32', 8]],
        /key llama\.expert_count \(8\) is not implemented/,
      ],
      [
        'llama-tiny',
        [['llama.rope.scaling.type', 'string', 'yarn']],
        /rope\.scaling\.type "yarn" is not implemented/,
      ],
      [
        'olmo2-tiny',
        [['olmo2.attention.sliding_window', 'uint32', 4]],
        /key olmo2\.attention\.sliding_window/,
      ],
      ['gemma3-tiny', [['gemma3.final_logit_softcapping', 'float32', 30]], /gemma3\.final_logit_softcapping/],
      ['gpt2-tiny', [['gpt2.rope.freq_base', 'float32', 10000]], /key gpt2\.rope\.freq_base/],
      [
        'gpt2-tiny',
        [['gpt2.attention.head_count_kv', 'uint32', 1]],
        /key gpt2\.attention\.head_count_kv \(1\) is not implemented for gpt2 \(only \d+, the value gpt2 implies\)/,
      ],
      ['phi3-tiny', [['phi3.rope.scaling.attn_factor', 'float32', 1.19]], /phi3\.rope\.scaling\.attn_factor/],
      ['llama-tiny', [['clip.vision.block_count', 'uint32', 2]], /key clip\.vision\.block_count/],
      [
        'granite-tiny',
        [['granite.rope.scaling.finetuned', 'bool', false]],
        /granite\.rope\.scaling\.finetuned false \(Granite without RoPE\) is not implemented/,
      ],
    ];
    for (const [model, extra, pattern] of cases)
      await expectReject({ gguf: withKeys(model, extra) }, 'INVALID_ARGUMENT', pattern);
    for (const [key, type, value, pattern] of [
      [
        'mistral3.rope.scaling.type',
        'string',
        'linear',
        /rope\.scaling\.type "linear" is not implemented \(only yarn\)/,
      ],
      ['mistral3.rope.scaling.factor', 'float32', 8, /rope\.scaling\.factor 8 is not context_length/],
    ])
      await expectReject({ gguf: setKey('ministral3-tiny', key, type, value) }, 'INVALID_ARGUMENT', pattern);
    await expectReject(
      { gguf: withKeys('ministral3-tiny', [['mistral3.rope.scaling.yarn_ext_factor', 'float32', 1]]) },
      'INVALID_ARGUMENT',
      /key mistral3\.rope\.scaling\.yarn_ext_factor \(1\) is not implemented/,
    );
    await expectReject(
      { gguf: setKey('llama-tiny', 'llama.attention.value_length', 'uint32', 16) },
      'INVALID_ARGUMENT',
      /value_length 16 differs from attention\.key_length 8/,
    );
  });

  it('a key the architecture needs, missing', async () => {
    const gguf = fixtureGGUF('qwen2-tiny', {
      metadata: (md) => md.filter(([k]) => k !== 'qwen2.embedding_length'),
    });
    await expectReject({ gguf }, 'INVALID_ARGUMENT', /has no qwen2\.embedding_length, which qwen2 needs/);
    const noLogitScale = fixtureGGUF('granite-tiny', {
      metadata: (md) => md.filter(([k]) => k !== 'granite.logit_scale'),
    });
    await expectReject({ gguf: noLogitScale }, 'INVALID_ARGUMENT', /has no granite\.logit_scale/);
  });

  it('a tensor type the core cannot compute with, naming the type and the tensor', async () => {
    // Q8_1 rows of 32 in a tiny checkpoint; IQ2_XS (blocks of 256) in a model 256 wide
    const q81 = fixtureGGUF('llama-tiny', {
      tensors: (list) =>
        list.map((t) =>
          t.name === 'blk.1.attn_v.weight' ? { ...t, type: 9, data: new Uint8Array((16 * 32 * 36) / 32) } : t,
        ),
    });
    await expectReject({ gguf: q81 }, 'INVALID_ARGUMENT', /tensor "blk\.1\.attn_v\.weight" is Q8_1/);
    await expectReject(
      { gguf: wideLlama() },
      'INVALID_ARGUMENT',
      /tensor "blk\.0\.attn_q\.weight" is IQ2_XS/,
    );
  });

  it('a tensor missing, misshapen, or one the library would not read', async () => {
    const without = fixtureGGUF('llama-tiny', {
      tensors: (list) => list.filter((t) => t.name !== 'blk.1.ffn_down.weight'),
    });
    await expectReject({ gguf: without }, 'INVALID_ARGUMENT', /no tensor "blk\.1\.ffn_down\.weight"/);
    await expectReject(
      { gguf: setKey('llama-tiny', 'llama.feed_forward_length', 'uint32', 48) },
      'SHAPE_MISMATCH',
      /tensor "blk\.0\.ffn_gate\.weight" has shape \[64,32\] but the config needs \[48,32\]/,
    );
    const extra = (name) =>
      fixtureGGUF('qwen2-tiny', {
        tensors: (list) => [...list, { name, dims: [4], type: GGML.F32, data: new Uint8Array(16) }],
      });
    await expectReject(
      { gguf: extra('rope_factors_long.weight') },
      'INVALID_ARGUMENT',
      /LongRoPE needs both rope_factors_short\.weight and rope_factors_long\.weight, the file has one/,
    );
    await expectReject(
      { gguf: extra('rope_freqs.weight') },
      'INVALID_ARGUMENT',
      /"rope_freqs\.weight" is not read/,
    );
  });

  it('memoryLimit too small: TOO_LARGE before the first tensor, no progress reported', async () => {
    const calls = [];
    await expectReject(
      { gguf: new Blob([fixtureGGUF('llama-tiny')]), memoryLimit: 60000, onProgress: (d) => calls.push(d) },
      'TOO_LARGE',
      /memoryLimit option/,
    );
    assert.deepEqual(calls, []);
  });

  it('options for a folder clash with gguf', async () => {
    const gguf = fixtureGGUF('llama-tiny');
    await expectReject({ gguf, config: {} }, 'INVALID_ARGUMENT', /gguf cannot be given with config/);
    await expectReject(
      { gguf, weights: new Uint8Array(8), tokenizer: {} },
      'INVALID_ARGUMENT',
      /gguf cannot be given with weights, tokenizer/,
    );
    await expectReject({ gguf, memoryLimit: -1 }, 'INVALID_ARGUMENT', /memoryLimit must be/);
    await expectReject({ gguf: 42 }, 'INVALID_ARGUMENT', /must be a File, a Blob, an ArrayBuffer/);
  });
});

describe('GGUF input', () => {
  it('a Blob, read with progress to the total; the model usable after refusals', async () => {
    const progress = [];
    const bytes = fixtureGGUF('qwen2-tiny');
    const model = await loadPretrained({
      gguf: new Blob([bytes]),
      onProgress: (done, total) => progress.push([done, total]),
    });
    assert.ok(progress.length > 5);
    assert.equal(progress.at(-1)[0], progress.at(-1)[1]);
    assert.equal(progress.at(-1)[1], (await parseGGUF(bytes)).tensorBytes, 'every tensor read once');
    assert.equal(model.forward([[1, 2, 3]]).logits.shape.join(), '1,3,96');
    model.dispose();
  });

  it('a split file, its parts in any order', async () => {
    const one = fixtureGGUF('llama-tiny');
    const names = [];
    fixtureGGUF('llama-tiny', { tensors: (list) => (names.push(...list.map((t) => t.name)), list) });
    const half = names.slice(0, names.length >> 1);
    const part = (no, keep) =>
      fixtureGGUF('llama-tiny', {
        metadata: (md) => [
          ...(no === 0 ? md : []),
          ['split.no', 'uint16', no],
          ['split.count', 'uint16', 2],
          ['split.tensors.count', 'int32', names.length],
        ],
        tensors: (list) => list.filter((t) => keep(half.includes(t.name))),
      });
    const split = await loadPretrained({ gguf: [part(1, (h) => !h), part(0, (h) => h)] });
    const whole = await loadPretrained({ gguf: one });
    assert.deepEqual(split.forward([[5, 17, 42]]).logits.data, whole.forward([[5, 17, 42]]).logits.data);
    split.dispose();
    whole.dispose();
  });

  it('without a tokenizer the model takes ids, and encode() says why', async () => {
    const model = await loadPretrained({ gguf: fixtureGGUF('llama-tiny') });
    assert.throws(
      () => model.encode('hi'),
      (e) => e instanceof AttentionError && e.code === 'INVALID_ARGUMENT' && /tokenizer/.test(e.message),
    );
    assert.equal(model.generate([[5, 17]], { maxNewTokens: 2, stop: [] }).shape.join(), '1,2');
    model.dispose();
  });
});

// A llama 256 wide (rows of whole 256-blocks) whose attn_q is IQ2_XS; its bytes are never read.
function wideLlama() {
  const e = 256;
  const md = [
    ['general.architecture', 'string', 'llama'],
    ['llama.context_length', 'uint32', 16],
    ['llama.embedding_length', 'uint32', e],
    ['llama.feed_forward_length', 'uint32', e],
    ['llama.block_count', 'uint32', 1],
    ['llama.attention.head_count', 'uint32', 2],
    ['llama.attention.layer_norm_rms_epsilon', 'float32', 1e-5],
  ];
  const m = (name, rows, type = GGML.F32) => ({ name, dims: [e, rows], type });
  const v = (name) => ({ name, dims: [e], type: GGML.F32 });
  const tensors = [m('token_embd.weight', 8), v('output_norm.weight'), v('blk.0.attn_norm.weight')];
  tensors.push(v('blk.0.ffn_norm.weight'), m('blk.0.attn_q.weight', e, GGML.IQ2_XS));
  for (const n of ['attn_k', 'attn_v', 'attn_output', 'ffn_gate', 'ffn_up', 'ffn_down'])
    tensors.push(m(`blk.0.${n}.weight`, e));
  return writeGGUF({ metadata: md, tensors });
}
