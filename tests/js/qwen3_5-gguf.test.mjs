// llama.cpp's qwen35 files (src/js/architectures/qwen3_5-gguf.js) beyond gguf-load.test.mjs (the
// converted qwen3_5-tiny's logits and every layer's map against the PyTorch reference) and
// gguf-llamacpp.test.mjs (a generated checkpoint against llama.cpp itself): what the file's keys
// become, the folder and its conversion (value heads reordered to tiled, −exp(A_log), norms + 1)
// giving the same logits, maps (head for head once renumbered) and greedy ids, decoding from the
// DeltaNet state, the MTP block left unread, and each key or value not implemented refused by name.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { AttentionError, captureToSafetensors, init, loadPretrained } from '../../src/js/index.js';
import { qwen35Checkpoint } from '../golden/gguf-qwen35-model.mjs';
import { EXPECTED_FILE } from '../golden/gguf-cases.mjs';
import { fixtureGGUF } from './gguf-from-fixture.js';
import { writeGGUF } from './gguf-writer.js';
import { parseGGUF } from '../../src/js/formats/gguf.js';
import { tokenizerFromGGUF } from '../../src/js/tokenizers/gguf-tokenizer.js';
import { makeTokenizer } from '../../src/js/pretrained/files.js';
import { json, load } from './pretrained-files.mjs';

await init();

const NAME = 'qwen3_5-tiny';
const kLogitAbs = 1e-4,
  kLogitRel = 1e-4; // two float32 paths over the same weights (the folder's and the file's order)
const IDS = [[5, 17, 42, 88, 3, 61, 29, 1, 2, 3, 4, 5, 6, 7, 8, 9, 70, 71, 72, 73]];
const edit = (metadata, tensors) => fixtureGGUF(NAME, { metadata, tensors });
const setKey = (key, type, value) => (md) =>
  md.some((e) => e[0] === key)
    ? md.map((e) => (e[0] === key ? [key, type, value] : e))
    : [...md, [key, type, value]];

function assertClose(got, want, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < got.length; i++)
    if (!(Math.abs(got[i] - want[i]) <= kLogitAbs + kLogitRel * Math.abs(want[i])))
      assert.fail(`${what}[${i}] = ${got[i]}, want ${want[i]}`);
}

async function refused(gguf, pattern) {
  await assert.rejects(
    loadPretrained({ gguf }),
    (e) => e instanceof AttentionError && e.code === 'INVALID_ARGUMENT' && pattern.test(e.message),
  );
}

describe("llama.cpp's qwen35 files", () => {
  it('the keys read back as the folder config: ssm.*, layer kinds, partial RoPE, tiled value heads', async () => {
    const folder = json(NAME, 'config.json');
    const model = await loadPretrained({ gguf: fixtureGGUF(NAME) });
    const c = model.config;
    for (const key of [
      'linear_conv_kernel_dim',
      'linear_key_head_dim',
      'linear_value_head_dim',
      'linear_num_key_heads',
      'linear_num_value_heads',
      'num_hidden_layers',
      'head_dim',
    ])
      assert.equal(c[key], folder[key], key);
    assert.equal(c.partial_rotary_factor, folder.rope_parameters.partial_rotary_factor);
    assert.deepEqual(c.layer_types, ['linear_attention', 'linear_attention', 'full_attention']);
    assert.deepEqual(
      model.layers.map((l) => [l.kind, l.heads, l.kvHeads, l.valueHeadOrder]),
      [
        ['delta', 4, 2, 'tiled'],
        ['delta', 4, 2, 'tiled'],
        ['attention', 4, 2, undefined],
      ],
    );
    model.dispose();
  });

  it('the folder and its conversion: logits, maps (renumbered) and greedy ids agree', async () => {
    const folder = await load(NAME);
    const file = await loadPretrained({ gguf: fixtureGGUF(NAME) });
    assert.equal(folder.layers[0].valueHeadOrder, 'grouped');
    const a = folder.forward(IDS, { attention: true }),
      b = file.forward(IDS, { attention: true });
    assertClose(b.logits.data, a.logits.data, 'logits');
    // the file's value head j·H_k + g is the folder's g·(H_v / H_k) + j (H_k 2, H_v 4)
    const T = IDS[0].length,
      size = T * T;
    for (const l of [0, 1])
      for (const [fileHead, folderHead] of [
        [0, 0],
        [1, 2],
        [2, 1],
        [3, 3],
      ])
        assertClose(
          b.attention[l].data.subarray(fileHead * size, (fileHead + 1) * size),
          a.attention[l].data.subarray(folderHead * size, (folderHead + 1) * size),
          `layer ${l} file head ${fileHead}`,
        );
    const greedy = (m) => Array.from(m.generate(IDS, { maxNewTokens: 8, stop: [] }).data);
    assert.deepEqual(greedy(file), greedy(folder)); // decoded from the DeltaNet states
    folder.dispose();
    file.dispose();
  });

  it('attention.recurrent_layers wins over full_attention_interval; the MTP block is left unread', async () => {
    const plain = await loadPretrained({ gguf: fixtureGGUF(NAME) });
    const want = plain.forward(IDS).logits.data;
    plain.dispose();
    const listed = edit(setKey('qwen35.attention.recurrent_layers', 'array<bool>', [true, true, false]));
    const a = await loadPretrained({ gguf: listed });
    assertClose(a.forward(IDS).logits.data, want, 'recurrent_layers');
    a.dispose();
    // the converter's MTP block: one more block (a full one), its tensors blk.3.*
    const mtp = edit(
      (md) => [
        ...setKey('qwen35.block_count', 'uint32', 4)(md),
        ['qwen35.nextn_predict_layers', 'uint32', 1],
        ['qwen35.attention.recurrent_layers', 'array<bool>', [true, true, false, false]],
      ],
      (ts) => [
        ...ts,
        ...ts
          .filter((t) => t.name.startsWith('blk.2.'))
          .map((t) => ({ ...t, name: `blk.3.${t.name.slice(6)}` })),
      ],
    );
    const m = await loadPretrained({ gguf: mtp });
    assert.equal(m.layers.length, 3);
    assertClose(m.forward(IDS).logits.data, want, 'with an MTP block');
    m.dispose();
    // a block past block_count is no MTP block: unread, so refused by name
    const stray = edit(undefined, (ts) => [
      ...ts,
      ...ts
        .filter((t) => t.name.startsWith('blk.2.'))
        .map((t) => ({ ...t, name: `blk.3.${t.name.slice(6)}` })),
    ]);
    await refused(stray, /tensor "blk\.3\.[a-z_.]+" is not read by this library's Qwen3_5ForCausalLM/);
  });

  it('keys and values not implemented refused by name; qwen3next and qwen35moe still refused', async () => {
    await refused(
      edit(setKey('qwen35.expert_count', 'uint32', 8)),
      /key qwen35\.expert_count \(8\) is not implemented/,
    );
    await refused(
      edit(setKey('qwen35.ssm.inner_size', 'uint32', 25)),
      /ssm\.inner_size 25 is not a multiple/,
    );
    await refused(
      edit(setKey('qwen35.attention.recurrent_layers', 'array<bool>', [true, false])),
      /recurrent_layers must hold one bool per block \(3\)/,
    );
    await refused(
      edit(setKey('qwen35.rope.dimension_sections', 'array<int32>', [4, 2, 2, 0])),
      /dimension_sections/,
    );
    await refused(edit(setKey('qwen35.full_attention_interval', 'uint32', 0)), /full_attention_interval/);
    await refused(edit(setKey('qwen35.nextn_predict_layers', 'uint32', 3)), /nextn_predict_layers/);
    await refused(
      edit(
        (md) => [
          ...setKey('qwen35.block_count', 'uint32', 4)(md),
          ['qwen35.nextn_predict_layers', 'uint32', 1],
          ['qwen35.attention.recurrent_layers', 'array<bool>', [true, true, false, true]],
        ],
        (ts) => ts,
      ),
      /marks an MTP block recurrent/,
    );
    // a missing ssm key: needed, never defaulted
    await refused(
      edit((md) => md.filter((e) => e[0] !== 'qwen35.ssm.group_count')),
      /no qwen35\.ssm\.group_count, which qwen35 needs/,
    );
    for (const [arch, why] of [
      ['qwen3next', /qwen3next: Qwen3-Next/],
      ['qwen35moe', /qwen35moe: Qwen3\.5-MoE/],
    ])
      await refused(edit(setKey('general.architecture', 'string', arch)), why);
  });

  it("the qwen35 pre-tokenizer keeps a letter's combining marks in its word (qwen2's splits them off)", async () => {
    // byte-level pieces: U+0308 is the bytes CC 88, "ÌĪ" in GPT-2's byte alphabet; a merge joins
    // it to the "i" before it, which only a split that keeps "nai\u0308ve" whole lets happen. The ids
    // are llama.cpp's (node-llama-cpp 3.22.1, this vocab in a vocab-only qwen35 file, per name)
    const tokens = ['n', 'a', 'i', 'v', 'e', 'Ì', 'Ī', 'ÌĪ', 'iÌĪ'];
    const encode = async (pre) => {
      const { metadata } = await parseGGUF(
        writeGGUF({
          metadata: [
            ['tokenizer.ggml.model', 'string', 'gpt2'],
            ['tokenizer.ggml.pre', 'string', pre],
            ['tokenizer.ggml.tokens', 'array<string>', tokens],
            ['tokenizer.ggml.merges', 'array<string>', ['Ì Ī', 'i ÌĪ']],
          ],
        }),
      );
      const { tokenizer, tokenizerConfig } = tokenizerFromGGUF(metadata);
      return (await makeTokenizer(tokenizer, tokenizerConfig)).encode('nai\u0308ve').ids;
    };
    assert.deepEqual(await encode('qwen35'), [0, 1, 8, 3, 4]); // n a iÌĪ v e
    assert.deepEqual(await encode('qwen2'), [0, 1, 2, 7, 3, 4]); // n a i | ÌĪ v e
  });

  it('the thinking template: an earlier thought dropped; enable_thinking through `variables`', async () => {
    const file = new URL('../golden/gguf/qwen35-tiny.f32.gguf', import.meta.url);
    const model = await loadPretrained({ gguf: readFileSync(file) });
    const chat = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: '<think>\nsay hello\n</think>\n\nhello' },
      { role: 'user', content: 'the sea?' },
    ];
    const render = (variables) =>
      model.applyChatTemplate(chat, { tokenize: false, addGenerationPrompt: true, variables });
    const turns =
      '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nhello<|im_end|>\n' +
      '<|im_start|>user\nthe sea?<|im_end|>\n<|im_start|>assistant\n';
    assert.equal(render(undefined), `${turns}<think>\n`);
    assert.equal(render({ enable_thinking: true }), `${turns}<think>\n`);
    assert.equal(render({ enable_thinking: false }), `${turns}<think>\n\n</think>\n\n`);
    for (const bad of [{ messages: [] }, { add_generation_prompt: false }, { True: false }, [1], 'x'])
      assert.throws(
        () => render(bad),
        (e) => e instanceof AttentionError && e.code === 'INVALID_ARGUMENT' && /variables/.test(e.message),
      );
    model.dispose();
  });

  it("a folder through llama.cpp: the generated checkpoint, read as a folder, gives llama.cpp's numbers of its conversion", async () => {
    // llama.cpp ran qwen35-tiny.f32.gguf (check_with_llamacpp.mjs); the same weights in the folder's
    // layout (grouped value heads, A_log, (1 + w) norms) must give its probabilities and greedy ids
    const want = JSON.parse(readFileSync(EXPECTED_FILE, 'utf8')).cases['qwen35-tiny.f32.gguf'];
    const { config, tensors } = qwen35Checkpoint();
    const model = await loadPretrained({
      config,
      weights: captureToSafetensors(Object.fromEntries(tensors)),
    });
    assert.equal(model.layers[0].valueHeadOrder, 'grouped');
    const { logits } = model.forward(want.prompt);
    const V = logits.shape[2];
    want.top.forEach((top, t) => {
      const row = logits.data.subarray(t * V, (t + 1) * V);
      const max = Math.max(...row);
      const sum = row.reduce((a, x) => a + Math.exp(x - max), 0);
      for (const [id, q] of top) {
        const p = Math.exp(row[id] - max) / sum;
        assert.ok(Math.abs(p - q) <= want.tolerance, `position ${t} token ${id}: ${p} vs llama.cpp ${q}`);
      }
    });
    const greedy = model.generate(want.prompt, { maxNewTokens: want.greedy.length, stop: [] });
    assert.deepEqual(Array.from(greedy.data), want.greedy);
    model.dispose();
  });

  it('decoding a qwen35 file from its DeltaNet states (tiled heads) = its full forward, past 64 rows', async () => {
    const want = JSON.parse(readFileSync(EXPECTED_FILE, 'utf8')).cases['qwen35-tiny.f32.gguf'];
    const file = new URL('../golden/gguf/qwen35-tiny.f32.gguf', import.meta.url);
    const model = await loadPretrained({ gguf: readFileSync(file) });
    const ids = want.prompt; // 76 tokens
    const full = model.forward([ids]).logits;
    const V = full.shape[2];
    const handle = model._live();
    assert.equal(handle.createCaches(ids.length, 1).code, 0);
    try {
      let worst = 0;
      const compare = (logits, row) => {
        for (let j = 0; j < V; j++) {
          const x = full.data[row * V + j];
          worst = Math.max(worst, Math.abs(logits[j] - x) / (1 + Math.abs(x)));
        }
      };
      const prefill = 66; // one 64-row chunk and two rows of the next
      const first = handle.forwardCached(Int32Array.from(ids.slice(0, prefill)), 1, prefill, true);
      assert.equal(first.code, 0, first.message);
      compare(first.logits.data, prefill - 1);
      for (let t = prefill; t < ids.length; t++) {
        const step = handle.forwardCached(Int32Array.of(ids[t]), 1, 1, true);
        assert.equal(step.code, 0, step.message);
        compare(step.logits.data, t);
      }
      assert.ok(worst <= 1e-5, `|decoded - full| / (1 + |full|) = ${worst}`);
    } finally {
      handle.dropCaches();
    }
    model.dispose();
  });
});
