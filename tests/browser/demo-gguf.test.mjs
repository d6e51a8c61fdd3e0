// The demo on a GGUF file, in Chromium under the strict CSP: qwen2-tiny written as llama.cpp's
// converter writes it (tests/js/gguf-from-fixture.js: its attention and MLP matrices Q8_0, the
// embeddings F16, the norms and biases F32, its tokenizer and a chat template in the metadata) opens
// through "Open a model…": the summary names the model, its architecture and the family it maps to,
// its weight types with their counts and its stored size; the model lives in the model worker; the
// tokens, the model view and the heatmap equal loadPretrained run in the page on the same bytes;
// generation, the chat form and the interpretability calls work; axe finds no violation. A split
// file's parts dropped together open it too. A truncated file, a tensor type the library lacks and
// an unknown architecture each get a clear message, and the page stays usable.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ROOT, axeViolations, demoReady, join, launch } from './helpers.mjs';
import { GGML, fixtureGGUF, toHalf } from '../js/gguf-from-fixture.js';
import { parseGGUF } from '../../src/js/formats/gguf.js';

const FIXTURE = join(ROOT, 'tests', 'golden', 'pretrained', 'qwen2-tiny');
const visible = (s) => String(s).replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥') || '∅';
const TEXT = 'Hello world! The cat';

let b;
before(async () => {
  b = await launch();
});
after(async () => {
  await b?.close();
});

// A matrix as Q8_0 blocks ({ fp16 d; int8 qs[32] }: 34 bytes per 32 values): any valid blocks will do.
function q8(values) {
  const blocks = values.length / 32,
    out = new Uint8Array(blocks * 34);
  for (let k = 0; k < blocks; k++) {
    const x = values.subarray(k * 32, k * 32 + 32);
    const d = x.reduce((m, v) => Math.max(m, Math.abs(v)), 0) / 127;
    const dh = toHalf(d);
    out[k * 34] = dh & 0xff;
    out[k * 34 + 1] = dh >> 8;
    x.forEach(
      (v, j) => (out[k * 34 + 2 + j] = (d ? Math.max(-127, Math.min(127, Math.round(v / d))) : 0) & 0xff),
    );
  }
  return { type: GGML.Q8_0, data: out };
}

// The fixture's tokenizer.json as llama.cpp's converter writes it (byte-level BPE, GPT-2's
// pre-tokenizer, control tokens for the special ones), and a chat template.
function tokenizerKeys() {
  const t = JSON.parse(readFileSync(join(FIXTURE, 'tokenizer.json'), 'utf8'));
  const tokens = Object.entries(t.model.vocab)
    .sort((x, y) => x[1] - y[1])
    .map(([s]) => s);
  for (const a of t.added_tokens) tokens[a.id] = a.content;
  const types = tokens.map((_, id) => (t.added_tokens.some((a) => a.id === id && a.special) ? 3 : 1));
  return [
    ['tokenizer.ggml.model', 'string', 'gpt2'],
    ['tokenizer.ggml.pre', 'string', 'gpt-2'],
    ['tokenizer.ggml.tokens', 'array<string>', tokens],
    ['tokenizer.ggml.token_type', 'array<int32>', types],
    [
      'tokenizer.ggml.merges',
      'array<string>',
      t.model.merges.map((m) => (Array.isArray(m) ? m.join(' ') : m)),
    ],
    ['tokenizer.ggml.add_bos_token', 'bool', false],
    ['tokenizer.chat_template', 'string', '{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}'],
  ];
}

/** qwen2-tiny as a GGUF file; `edit` changes its metadata and tensor lists (see fixtureGGUF). */
const qwenGGUF = ({ metadata = (md) => md, tensors } = {}) =>
  fixtureGGUF('qwen2-tiny', {
    type: 'F16',
    quantize: (name, values) => (/^blk\./.test(name) ? q8(values) : null),
    metadata: (md) => metadata([...md, ...tokenizerKeys()]),
    tensors,
  });

/** The file's tensor types with their counts as the summary writes them, read by the library's parser. */
async function typesOf(bytes) {
  const counts = new Map();
  for (const t of (await parseGGUF(bytes)).tensors) counts.set(t.typeName, (counts.get(t.typeName) ?? 0) + 1);
  return [...counts]
    .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
    .map(([t, n]) => `${t} ×${n}`)
    .join(', ');
}

/** The reference, in the page: loadPretrained on the same bytes. */
const reference = (page, bytes, text, layer, activations = 'exact') =>
  page.evaluate(
    async ({ bytes, text, layer, activations }) => {
      const attn = await import('/src/js/index.js');
      await attn.init();
      const m = await attn.loadPretrained({ gguf: new Uint8Array(bytes), activations });
      const ids = Array.from(m.encode(text));
      const out = [];
      for await (const t of m.generateStream(ids, { maxNewTokens: 20 })) out.push(t.id);
      const r = {
        ids,
        tokens: m.tokenStrings(ids),
        attention: Array.from(m.forward([ids], { attention: true }).attention[layer].data),
        generated: m.decode(out),
        weightBytes: m.weightBytes,
      };
      m.dispose();
      return r;
    },
    { bytes: Array.from(bytes), text, layer, activations },
  );

const modelShown = (page) =>
  page.waitForFunction(
    () =>
      document.querySelector('#model').value === 'folder' &&
      document.querySelector('attention-model-view').dataset.ready !== undefined,
    null,
    { timeout: 20_000 },
  );

/** Waits until the heatmap shows `want` (its matrices' values, flattened): the worker's answer, not a clock. */
const heatmapShows = (page, want) =>
  page.waitForFunction(
    (w) => {
      const got = document
        .querySelector('attention-heatmap')
        .shown.matrices.flatMap((m) => Array.from(m.data));
      return got.length === w.length && got.every((x, i) => x === w[i]);
    },
    want,
    { timeout: 20_000 },
  );

async function typeText(page, text, n) {
  await page.fill('#text', text);
  await page.waitForFunction((k) => document.querySelectorAll('#chips .chip').length === k, n);
  await page.waitForFunction(() => document.querySelector('#lens').dataset.state === 'ready', null, {
    timeout: 20_000,
  });
}

test('a GGUF file opens: its summary, tokens, model view, heatmap = the library in the page, generation, chat, interpretability; axe clean', async () => {
  const { page, watch } = await b.newPage();
  await page.goto(b.url('/'));
  await demoReady(page);
  const urlBefore = page.url();
  const bytes = qwenGGUF();
  const types = await typesOf(bytes);
  assert.match(types, /Q8_0 ×14/);
  await page.setInputFiles('#model-file', {
    name: 'qwen2-tiny-q8.gguf',
    mimeType: 'application/octet-stream',
    buffer: Buffer.from(bytes),
  });
  await modelShown(page);
  const ref = await reference(page, bytes, TEXT, 1);
  assert.ok(ref.generated, 'the reference generates');
  assert.equal(
    await page.$eval('#model option[value="folder"]', (o) => o.textContent),
    'GGUF: qwen2-tiny (Qwen2ForCausalLM)',
  );
  const note = await page.textContent('#model-note');
  assert.ok(
    note.startsWith(
      `Opened qwen2-tiny (GGUF): architecture qwen2 (Qwen2ForCausalLM), weights ${types}, ` +
        `${Math.round(ref.weightBytes / 1e3)} kB stored (${ref.weightBytes.toLocaleString('en-US')} bytes); 2 layers, 4 heads; ` +
        'activations exact (each block dequantized, float32 products).',
    ),
    note,
  );
  assert.equal(page.url(), urlBefore, 'a file is not written into the link');

  // The file's tokenizer: the chips show its tokens; the model view and layer 1's heatmap = the reference.
  await typeText(page, TEXT, ref.ids.length);
  assert.deepEqual(
    await page.$$eval('#chips .chip .t', (els) => els.map((e) => e.textContent)),
    ref.tokens.map(visible),
  );
  const mv = await page.$eval('attention-model-view', (el) => ({
    L: el.shown.L,
    H: el.shown.H,
    ids: el.shown.ids,
  }));
  assert.deepEqual(mv, { L: 2, H: 4, ids: ref.ids });
  await page.selectOption('#layer', '1');
  await page.waitForFunction(() => window.attentionDemo.state.layer === 1);
  // The heatmap redraws when the worker's answer for layer 1 arrives: wait for that, not a clock.
  await heatmapShows(page, ref.attention);
  assert.deepEqual(
    await page.$eval('attention-heatmap', (el) => el.shown.matrices.flatMap((m) => Array.from(m.data))),
    ref.attention,
  );

  // "Why this prediction?": the source answers the interpretability calls from the worker.
  const why = await page.evaluate(async (ids) => {
    const s = window.attentionDemo.source;
    const scores = await s.headScores(ids);
    const dla = await s.logitAttribution(ids, { token: ids.at(-1), against: ids[0] });
    return { kinds: Object.keys(scores).length, heads: dla.heads.shape };
  }, ref.ids);
  assert.ok(why.kinds > 0);
  assert.deepEqual(why.heads, [2, 4]);

  // Greedy generation: the worker's tokens, appended to the input.
  await page.click('#generate');
  await page.waitForFunction((t) => document.querySelector('#text').value === t, `${TEXT}${ref.generated}`, {
    timeout: 20_000,
  });
  assert.match(await page.textContent('#generate-note'), /Generated \d+ tokens/);

  // The chat template of the file.
  assert.ok(await page.isVisible('#chat'));
  await page.fill('#chat-message', 'hi');
  await page.click('#chat button[type="submit"]');
  await page.waitForFunction(() => document.querySelector('#text').value === '<user>hi');

  const found = await axeViolations(page);
  assert.deepEqual(found, [], `axe-core violations:\n${found.join('\n')}`);
  assert.deepEqual(watch.errors, []);
  assert.deepEqual(watch.offOrigin, []);
  await b.release(page);
});

test('GGUF activations int8: the label and the note say so, and the heatmap is the int8 mode in the page', async () => {
  const { page, watch } = await b.newPage();
  await page.goto(b.url('/'));
  await demoReady(page);
  const bytes = qwenGGUF();
  await page.selectOption('#gguf-activations', 'int8');
  await page.setInputFiles('#model-file', {
    name: 'q.gguf',
    mimeType: 'application/octet-stream',
    buffer: Buffer.from(bytes),
  });
  await modelShown(page);
  assert.equal(
    await page.$eval('#model option[value="folder"]', (o) => o.textContent),
    'GGUF: qwen2-tiny (Qwen2ForCausalLM, int8 activations)',
  );
  assert.match(
    await page.textContent('#model-note'),
    /; activations int8, as llama\.cpp \(8-bit blocks, integer dot products\)/,
  );
  const [exact, int8] = [
    await reference(page, bytes, TEXT, 0),
    await reference(page, bytes, TEXT, 0, 'int8'),
  ];
  assert.notDeepEqual(int8.attention, exact.attention, 'the modes differ on this file');
  await typeText(page, TEXT, int8.ids.length);
  await heatmapShows(page, int8.attention);
  assert.deepEqual(watch.errors, []);
  await b.release(page);
});

/** A split file's two parts (gguf-split's keys): the first half of the tensors and the rest. */
function splitParts() {
  const names = [];
  qwenGGUF({ tensors: (list) => (names.push(...list.map((t) => t.name)), list) });
  const half = new Set(names.slice(0, names.length >> 1));
  const part = (no) =>
    qwenGGUF({
      metadata: (md) => [
        ...(no === 0 ? md : []),
        ['split.no', 'uint16', no],
        ['split.count', 'uint16', 2],
        ['split.tensors.count', 'int32', names.length],
      ],
      tensors: (list) => list.filter((t) => half.has(t.name) === (no === 0)),
    });
  return [part(0), part(1)];
}

test('bad GGUF files get a clear message and the page stays usable; a split file dropped together opens', async () => {
  const { page, watch } = await b.newPage();
  await page.goto(b.url('/?model=reverse'));
  await demoReady(page);
  const note = () => page.textContent('#model-note');
  const open = async (name, bytes, pattern) => {
    await page.setInputFiles('#model-file', {
      name,
      mimeType: 'application/octet-stream',
      buffer: Buffer.from(bytes),
    });
    await page.waitForFunction(
      (p) => new RegExp(p).test(document.querySelector('#model-note').textContent),
      pattern.source,
      { timeout: 20_000 },
    );
    assert.equal(await page.$eval('#model-note', (n) => n.className), 'note bad');
    assert.match(await note(), /^Could not open the model: /);
  };
  // A figure of a GGUF model names the file to open again.
  const need = await page.evaluate(async () => {
    const { planFigure } = await import('/web/demo-figure.js');
    const model = { name: 'folder', ref: null, label: 'GGUF: m (X)', folderName: 'm', files: ['m.gguf'] };
    const ws = { widget: 'attention-heatmap', context: { search: 'model=folder', model } };
    return planFigure(ws, { loadedSource: () => null, stateDictName: '' }).need;
  });
  assert.match(
    need,
    /GGUF model “m”.*Open that file again \(Open a model \(\.safetensors, \.gguf\)…: m\.gguf\)/,
  );
  const good = qwenGGUF();
  await open('cut.gguf', good.subarray(0, 3000), /cut\.gguf is a GGUF file that this page cannot open: gguf/);
  const q81 = qwenGGUF({
    tensors: (list) =>
      list.map((t) =>
        t.name === 'blk.1.attn_v.weight' ? { ...t, type: 9, data: new Uint8Array((16 * 32 * 36) / 32) } : t,
      ),
  });
  await open('q81.gguf', q81, /tensor "blk\.1\.attn_v\.weight" is Q8_1/);
  const mamba = qwenGGUF({
    metadata: (md) => md.map((e) => (e[0] === 'general.architecture' ? [e[0], e[1], 'mamba'] : e)),
  });
  await open('mamba.gguf', mamba, /general\.architecture "mamba" is not supported/);
  assert.equal(
    await page.$eval('#model option[value="folder"]', (o) => o.hidden),
    true,
    'no entry after failures',
  );
  assert.equal(new URL(page.url()).searchParams.get('model'), 'reverse');
  assert.deepEqual(await page.evaluate(() => window.attentionDemo.predictionScore), { right: 5, scored: 5 });

  // A split file's parts dropped together (a synthetic drop: File objects).
  const parts = splitParts().map((p) => Array.from(p));
  await page.evaluate((parts) => {
    const dt = new DataTransfer();
    parts.forEach((p, i) =>
      dt.items.add(new File([new Uint8Array(p)], `qwen2-tiny-0000${i + 1}-of-00002.gguf`)),
    );
    document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, parts);
  await modelShown(page);
  assert.match(await note(), /^Opened qwen2-tiny \(GGUF, 2 parts\): architecture qwen2 \(Qwen2ForCausalLM\)/);
  assert.equal(new URL(page.url()).searchParams.get('model'), 'reverse', 'the link keeps the preset state');
  await page.selectOption('#model', 'sort');
  await page.waitForFunction(
    () =>
      new URL(location.href).searchParams.get('model') === 'sort' &&
      window.attentionDemo.predictionScore?.scored > 0,
  );
  assert.deepEqual(watch.errors, []);
  await b.release(page);
});
