// loadPretrained against tiny Hugging Face checkpoints written by hand-written torch
// references (tests/golden/make_pretrained_fixtures.py): GPT-2, Llama (grouped-query heads), Qwen2
// (q/k/v biases, tied head) and Llama 3 RoPE scaling, from F32, F16 and BF16 files; logits, every
// layer's attention, hidden states, greedy generation with the KV cache, the tokenizer; and hostile
// files and configs refused with an AttentionError before anything large is allocated.
import { wrapperOf } from '../../src/js/architectures/wrappers.js';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, loadPretrained, memoryStats, AttentionError, GENERATE_PAD } from '../../src/js/index.js';
import { listPretrained } from './fixture.js';

// The bounds the results are held to.
const kLogitAbs = 1e-4,
  kLogitRel = 1e-3; // logits, hidden states
const kAttnAbs = 1e-5,
  kAttnRel = 1e-4; // attention weights

await init();

const DIR = new URL('../golden/pretrained/', import.meta.url);
const read = (model, file) => readFileSync(new URL(`${model}/${file}`, DIR));
const json = (model, file) => JSON.parse(read(model, file).toString('utf8'));

function assertClose(got, want, abs, rel, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < got.length; i++) {
    if (!(Math.abs(got[i] - want[i]) <= abs + rel * Math.abs(want[i])))
      assert.fail(`${what}[${i}] = ${got[i]}, want ${want[i]}`);
  }
}

async function load(model, weightsFile = 'model.safetensors', extra = {}) {
  return loadPretrained({ config: json(model, 'config.json'), weights: read(model, weightsFile), ...extra });
}

// A generated row as generate() returns it with `stop`: up to and with the first stop id, then -1.
const stoppedRow = (row, stop) => {
  const end = row.findIndex((id) => stop.includes(id));
  return end < 0 ? row : row.map((id, i) => (i <= end ? id : GENERATE_PAD));
};

const ids2d = (t) =>
  Array.from({ length: t.shape[0] }, (_, b) => t.data.slice(b * t.shape[1], (b + 1) * t.shape[1]));

// every checkpoint folder, so a family added there is covered at once
const MODELS = listPretrained();

describe('the tiny checkpoints against their PyTorch references', () => {
  for (const name of MODELS) {
    it(`${name}: logits, attention of every layer and hidden states (F32)`, async () => {
      const expected = json(name, 'expected.json');
      const model = await load(name);
      const config = json(name, 'config.json');
      // a multimodal checkpoint's model is its text model (architectures/wrappers.js)
      const wrapper = wrapperOf(config.architectures[0]);
      assert.equal(
        model.architecture,
        wrapper ? wrapper.text[config.text_config.model_type] : config.architectures[0],
      );
      for (const c of expected.cases) {
        const r = model.forward(ids2d(c.input_ids), { hiddenStates: true });
        assertClose(r.logits.data, c.logits.data, kLogitAbs, kLogitRel, `${c.name} logits`);
        if (c.attention)
          c.attention.forEach((a, l) =>
            assertClose(r.attention[l].data, a.data, kAttnAbs, kAttnRel, `${c.name} attention ${l}`),
          );
        if (c.hidden_states) {
          assert.equal(r.hiddenStates.length, model.numLayers + 1);
          c.hidden_states.forEach((h, i) =>
            assertClose(r.hiddenStates[i].data, h.data, kLogitAbs, kLogitRel, `${c.name} hidden ${i}`),
          );
        }
      }
      if (expected.generate) {
        const g = expected.generate;
        const raw = model.generate(g.input_ids, { maxNewTokens: g.max_new_tokens, stop: [] });
        assert.deepEqual(Array.from(raw.data), g.new_ids.flat(), 'greedy generation');
        // By default a row stops at the checkpoint's EOS id (kept), then GENERATE_PAD.
        const out = model.generate(g.input_ids, { maxNewTokens: g.max_new_tokens });
        const config = json(name, 'config.json');
        assert.deepEqual(model.stopIds, [config.eos_token_id ?? config.text_config.eos_token_id]);
        assert.deepEqual(
          Array.from(out.data),
          g.new_ids.flatMap((row) => stoppedRow(row, model.stopIds)),
          'greedy generation, stopping at EOS',
        );
      }
      model.dispose();
    });

    for (const dtype of ['f16', 'bf16']) {
      it(`${name}: ${dtype.toUpperCase()} weights widened`, async () => {
        const expected = json(name, `expected_${dtype}.json`);
        const model = await load(name, `model.${dtype}.safetensors`);
        for (const c of expected.cases) {
          const r = model.forward(ids2d(c.input_ids), { attention: [0] });
          assertClose(r.logits.data, c.logits.data, kLogitAbs, kLogitRel, `${c.name} logits`);
          if (c.attention)
            assertClose(
              r.attention[0].data,
              c.attention[0].data,
              kAttnAbs,
              kAttnRel,
              `${c.name} attention 0`,
            );
        }
        model.dispose();
      });
    }
  }

  it('the tokenizer: expected ids, round trips, token strings; bytes as a Blob with progress', async () => {
    for (const name of ['gpt2-tiny', 'llama-tiny', 'qwen2-tiny']) {
      const progress = [];
      const model = await loadPretrained({
        config: json(name, 'config.json'),
        weights: new Blob([read(name, 'model.safetensors')]),
        tokenizer: json(name, 'tokenizer.json'),
        tokenizerConfig: json(name, 'tokenizer_config.json'),
        onProgress: (done, total) => progress.push([done, total]),
      });
      assert.ok(
        progress.length > 5 && progress.at(-1)[0] === progress.at(-1)[1],
        'progress reaches the total',
      );
      for (const { text, ids } of json(name, 'expected.json').tokenizer_cases) {
        assert.deepEqual(Array.from(model.encode(text)), ids, `${name} encode ${JSON.stringify(text)}`);
        const plain = ids.filter((id) => id < 94); // without the special tokens
        assert.equal(model.decode(plain), text, `${name} decode`);
      }
      if (name === 'gpt2-tiny')
        assert.deepEqual(model.tokenStrings(model.encode('Hello world')).join(''), 'Hello world');
      model.dispose();
    }
  });
});

describe('the logit lens', () => {
  it("(L + 1, B, T) top tokens and probabilities; the last row is the model's own argmax; llama's last hidden state agrees", async () => {
    for (const name of ['gpt2-tiny', 'llama-tiny']) {
      const model = await load(name);
      const c = json(name, 'expected.json').cases[1];
      const r = model.forward(ids2d(c.input_ids), { logitLens: true });
      const [B, T] = c.input_ids.shape,
        V = r.logits.shape[2],
        L = model.numLayers;
      assert.deepEqual(r.logitLens.ids.shape, [L + 1, B, T]);
      assert.equal(r.logitLens.ids.dtype, 'int32');
      for (let i = 0; i < B * T; i++) {
        const row = r.logits.data.subarray(i * V, (i + 1) * V);
        const top = row.indexOf(Math.max(...row));
        assert.equal(r.logitLens.ids.data[L * B * T + i], top, `${name} position ${i}`);
        const z = row.reduce((a, x) => a + Math.exp(x - row[top]), 0);
        assert.ok(Math.abs(r.logitLens.probs.data[L * B * T + i] - 1 / z) < 1e-5);
      }
      assert.ok(r.logitLens.probs.data.every((p) => p > 0 && p <= 1));
      model.dispose();
    }
  });
});

describe('hostile files and configs: AttentionError, nothing large allocated, the module usable', () => {
  const config = json('gpt2-tiny', 'config.json');
  const good = read('gpt2-tiny', 'model.safetensors');
  const expectReject = async (options, code, pattern) => {
    const before = memoryStats();
    await assert.rejects(
      loadPretrained(options),
      (e) => e instanceof AttentionError && e.code === code && pattern.test(e.message),
    );
    const after = memoryStats();
    assert.equal(after.liveHandles, before.liveHandles, 'no handle left behind');
    assert.ok(after.heapBytes - before.heapBytes < 16 << 20, 'the heap did not grow by a model');
  };
  const withHeaderLength = (n) => {
    const b = Uint8Array.from(good);
    new DataView(b.buffer).setUint32(0, n, true);
    return b;
  };
  const header = () => {
    const n = new DataView(good.buffer, good.byteOffset).getUint32(0, true);
    return {
      n,
      json: JSON.parse(Buffer.from(good.subarray(8, 8 + n)).toString('utf8')),
      data: good.subarray(8 + n),
    };
  };
  const rebuilt = (edit) => {
    const { json: h, data } = header();
    edit(h);
    const text = Buffer.from(JSON.stringify(h));
    const out = new Uint8Array(8 + text.length + data.length);
    new DataView(out.buffer).setUint32(0, text.length, true);
    out.set(text, 8);
    out.set(data, 8 + text.length);
    return out;
  };

  it('headers, offsets, truncation, dtypes and shapes', async () => {
    await expectReject(
      { config, weights: withHeaderLength(1e9) },
      'INVALID_ARGUMENT',
      /header length .* (past the end|over the limit)/,
    );
    await expectReject(
      { config, weights: good.subarray(0, good.length - 100) },
      'INVALID_ARGUMENT',
      /(out of range|after the last tensor|belong to no tensor)/,
    );
    await expectReject({ config, weights: good.subarray(0, 5) }, 'INVALID_ARGUMENT', /fewer than the 8/);
    await expectReject(
      {
        config,
        weights: rebuilt((h) => {
          h['transformer.wte.weight'].data_offsets[1] += 4;
        }),
      },
      'INVALID_ARGUMENT',
      /wte.weight/,
    );
    await expectReject(
      {
        config,
        weights: rebuilt((h) => {
          h['transformer.wte.weight'].dtype = 'I64';
        }),
      },
      'INVALID_ARGUMENT',
      /dtype/,
    );
    await expectReject(
      {
        config,
        weights: rebuilt((h) => {
          h['transformer.ln_f.other'] = h['transformer.ln_f.bias'];
          delete h['transformer.ln_f.bias'];
        }),
      },
      'INVALID_ARGUMENT',
      /the checkpoint has no tensor "ln_f.bias"/,
    );
    await expectReject(
      {
        config,
        weights: rebuilt((h) => {
          delete h['transformer.ln_f.bias'];
        }),
      },
      'INVALID_ARGUMENT',
      /belong to no tensor/,
    );
    await expectReject(
      { config: { ...config, n_embd: 16 }, weights: good },
      'SHAPE_MISMATCH',
      /wte.weight" has shape \[96,32\] but the config needs \[96,16\]/,
    );
  });

  it('configs: unsupported architectures and options, absurd sizes', async () => {
    await expectReject(
      { config: { ...config, architectures: ['BertModel'] }, weights: good },
      'INVALID_ARGUMENT',
      /BertModel.*GPT2LMHeadModel, LlamaForCausalLM, Qwen2ForCausalLM/,
    );
    await expectReject(
      { config: { ...config, activation_function: 'relu' }, weights: good },
      'INVALID_ARGUMENT',
      /gelu_new/,
    );
    await expectReject(
      { config: { ...config, vocab_size: 1e9 }, weights: good },
      'INVALID_ARGUMENT',
      /vocab_size must be in \[1, 1048576\]/,
    );
    await expectReject(
      { config: { ...config, n_embd: 65536, n_head: 1 }, weights: good },
      'TOO_LARGE',
      /pretrained model's weights/,
    );
    const llama = json('llama-tiny', 'config.json');
    await expectReject(
      {
        config: { ...llama, rope_scaling: { rope_type: 'yarn', factor: 4 } },
        weights: read('llama-tiny', 'model.safetensors'),
      },
      'INVALID_ARGUMENT',
      /rope_type "yarn" is not implemented/,
    );
    await expectReject(
      {
        config: { ...json('qwen2-tiny', 'config.json'), use_sliding_window: 'yes' },
        weights: read('qwen2-tiny', 'model.safetensors'),
      },
      'INVALID_ARGUMENT',
      /use_sliding_window must be true or false/,
    );
    // The module still works.
    const model = await load('gpt2-tiny');
    assert.throws(
      () => model.forward([[1, 96]]),
      (e) => e.code === 'INVALID_ARGUMENT' && /token id 96/.test(e.message),
    );
    assert.throws(
      () => model.forward([Array(65).fill(1)]),
      (e) => e.code === 'TOO_LARGE',
    );
    assert.throws(
      () => model.encode('x'),
      (e) => e.code === 'INVALID_ARGUMENT' && /without a tokenizer/.test(e.message),
    );
    model.dispose();
  });
});

describe("16-bit weights stay 16-bit; the model's memoryLimit", () => {
  it('F16 and BF16 checkpoints take about half the heap bytes of F32', async () => {
    for (const name of ['gpt2-tiny', 'llama-tiny']) {
      const f32 = await load(name);
      for (const dtype of ['f16', 'bf16']) {
        const half = await load(name, `model.${dtype}.safetensors`);
        const ratio = half.weightBytes / f32.weightBytes;
        assert.ok(
          ratio > 0.5 && ratio < 0.6,
          `${name} ${dtype}: ${half.weightBytes} / ${f32.weightBytes} bytes`,
        );
        half.dispose();
      }
      f32.dispose();
    }
  });

  it("memoryLimit bounds the weights and every call of the model; the library's limit is untouched", async () => {
    const before = memoryStats();
    const libraryLimit = (await import('../../src/js/index.js')).memoryLimit();
    await assert.rejects(
      load('gpt2-tiny', 'model.bf16.safetensors', { memoryLimit: 20_000 }),
      (e) => e.code === 'TOO_LARGE' && /memoryLimit option raises it/.test(e.message),
    );
    assert.equal(memoryStats().liveHandles, before.liveHandles);
    await assert.rejects(
      load('gpt2-tiny', 'model.safetensors', { memoryLimit: -1 }),
      (e) => e.code === 'INVALID_ARGUMENT' && /memoryLimit/.test(e.message),
    );
    const model = await load('gpt2-tiny', 'model.bf16.safetensors', { memoryLimit: 100_000 });
    assert.equal(model.memoryLimit, 100_000);
    assert.ok(model.weightBytes < 100_000);
    model.forward([[1, 2, 3]]); // a short forward fits
    assert.throws(
      () => model.forward([Array(64).fill(1)]),
      (e) => e.code === 'TOO_LARGE' && /attention: \[layers\]/.test(e.message),
    );
    assert.equal((await import('../../src/js/index.js')).memoryLimit(), libraryLimit);
    model.dispose();
  });

  it('a non-finite 16-bit weight is NON_FINITE naming the tensor; nothing is left behind', async () => {
    const bytes = Uint8Array.from(read('gpt2-tiny', 'model.bf16.safetensors'));
    const n = new DataView(bytes.buffer).getUint32(0, true);
    const entry = JSON.parse(Buffer.from(bytes.subarray(8, 8 + n)).toString('utf8'))[
      'transformer.h.1.mlp.c_fc.weight'
    ];
    assert.equal(entry.dtype, 'BF16');
    new DataView(bytes.buffer).setUint16(8 + n + entry.data_offsets[0] + 2 * 5, 0x7fc0, true); // element 5: NaN
    const before = memoryStats().liveHandles;
    await assert.rejects(
      loadPretrained({ config: json('gpt2-tiny', 'config.json'), weights: bytes }),
      (e) => e.code === 'NON_FINITE' && /h\.1\.mlp\.c_fc\.weight.*flat index 5/.test(e.message),
    );
    assert.equal(memoryStats().liveHandles, before);
  });
});
