// The demo on the tiny checkpoints, in Chromium under the strict CSP: every committed tiny checkpoint
// folder opens through the folder input (its architecture in the Model control, its layers × heads
// in the model view, the top 10 next tokens); a folder with chat_template.jinja gets the Chat form,
// whose templated text (special tokens included, none added again) becomes the input; generation
// streams its tokens and Stop ends it; a folder holding only pytorch_model.bin or a GGUF file is
// named; no console error, axe clean.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { ROOT, axeViolations, demoReady, join, launch } from './helpers.mjs';
import { listPretrained } from '../js/fixture.js';
import { wrapperOf } from '../../src/js/architectures/wrappers.js';

const GOLDEN = join(ROOT, 'tests', 'golden', 'pretrained');
const FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'model.safetensors'];

let b, tmp;
before(async () => {
  b = await launch();
  tmp = await mkdtemp(join(tmpdir(), 'attn-chat-'));
});
after(async () => {
  await b?.close();
  await rm(tmp, { recursive: true, force: true });
});

async function copyFolder(from, name, extra = {}) {
  const dir = join(tmp, name);
  await mkdir(dir, { recursive: true });
  for (const f of FILES) await copyFile(join(GOLDEN, from, f), join(dir, f));
  for (const [f, text] of Object.entries(extra)) await writeFile(join(dir, f), text);
  return dir;
}

async function openFolder(page, dir) {
  await page.setInputFiles('#model-folder', dir);
  await page.waitForFunction(
    () => /Opened|Could not open/.test(document.querySelector('#model-note').textContent),
    null,
    { timeout: 20_000 },
  );
  return page.textContent('#model-note');
}

test('every checkpoint folder opens in the demo: model view, next tokens', async () => {
  const { page, watch } = await b.newPage();
  await page.goto(b.url('/'));
  await demoReady(page);
  // every folder of tests/golden/pretrained/, so a family added there is opened too
  const families = Object.fromEntries(
    listPretrained().map((name) => [
      name,
      JSON.parse(readFileSync(join(GOLDEN, name, 'config.json'), 'utf8')),
    ]),
  );
  for (const [name, config] of Object.entries(families)) {
    // a multimodal checkpoint opens as its text model (src/js/architectures/wrappers.js)
    const wrapper = wrapperOf(config.architectures[0]);
    const text = wrapper ? config.text_config : config;
    const layers = text.num_hidden_layers ?? text.n_layer;
    const heads = text.num_attention_heads ?? text.n_head;
    assert.match(
      await openFolder(page, await copyFolder(name, name)),
      new RegExp(`Opened .*${layers} layers, ${heads} heads`),
      name,
    );
    assert.match(
      await page.$eval('#model option[value="folder"]', (o) => o.textContent),
      new RegExp(`\\(${wrapper ? wrapper.text[text.model_type] : config.architectures[0]}\\)`),
    );
    await page.waitForFunction(() => document.querySelectorAll('#next-table tbody tr').length === 10, null, {
      timeout: 20_000,
    });
    // A layer's tiles are its own maps: an LFM2 conv layer's one (its token mixing), the others' heads.
    const maps = Array.from({ length: layers }, (_, l) => (text.layer_types?.[l] === 'conv' ? 1 : heads));
    // The next-token table can be back before the model view has drawn this model's maps (the
    // previous folder's may still show): wait for the view to change, then check its tiles.
    await page
      .waitForFunction(
        (n) => document.querySelector('attention-model-view')._tiles.length === n,
        maps.reduce((a, m) => a + m, 0),
        {
          timeout: 20_000,
        },
      )
      .catch(() => {}); // the assertion below names what was drawn instead
    assert.equal(
      await page.$eval('attention-model-view', (el) => el._tiles.length),
      maps.reduce((a, m) => a + m, 0),
      `${name}: ${layers} layers of ${maps} maps`,
    );
    if (name === 'gemma3-tiny') {
      // what differs between its layers, shown with the layer (model.layers)
      await page.waitForFunction(() =>
        /^Layer 0: a sliding window: each query sees its 3 latest keys.*RoPE with base 10000;.*q and k RMS-normalised/.test(
          document.querySelector('#layer-note').textContent,
        ),
      );
      await page.selectOption('#layer', '1');
      await page.waitForFunction(() =>
        /^Layer 1: full causal attention; RoPE with base 1000000, scaled frequencies/.test(
          document.querySelector('#layer-note').textContent,
        ),
      );
    }
    if (name === 'smollm3-tiny') {
      await page.selectOption('#layer', '1');
      await page.waitForFunction(() =>
        /no RoPE in this layer/.test(document.querySelector('#layer-note').textContent),
      );
    }
    if (name === 'gemma2-tiny')
      await page.waitForFunction(() =>
        /soft-capped at 5/.test(document.querySelector('#layer-note').textContent),
      );
  }
  assert.deepEqual(watch.errors, []);
  await b.release(page);
});

test('chat template, streamed generation with Stop, and files we do not read', async () => {
  const { page, watch } = await b.newPage();
  await page.goto(b.url('/'));
  await demoReady(page);
  // qwen3-tiny's own special token stands in for ChatML's markers (the tiny vocabulary has no others).
  const template =
    '{% for m in messages %}<|endoftext|>{{ m.role }}: {{ m.content }}\n{% endfor %}{% if add_generation_prompt %}<|endoftext|>assistant:{% endif %}';
  const dir = await copyFolder('qwen3-tiny', 'qwen3-chat', {
    'chat_template.jinja': template,
    'generation_config.json': JSON.stringify({ eos_token_id: [95] }),
  });
  assert.match(await openFolder(page, dir), /Opened/);
  await page.waitForSelector('#chat:not([hidden])');
  await page.fill('#chat-system', 'Be kind.');
  await page.fill('#chat-message', 'cat sat');
  await page.click('#chat button[type=submit]');
  const want = '<|endoftext|>system: Be kind.\n<|endoftext|>user: cat sat\n<|endoftext|>assistant:';
  await page.waitForFunction((t) => document.querySelector('#text').value === t, want);
  await page.waitForFunction(() => document.querySelectorAll('#next-table tbody tr').length === 10);
  // The model view redraws once the templated text's forward is back (the previous text's may show first).
  await page.waitForFunction(
    () => Array.from(document.querySelector('attention-model-view').shown?.ids ?? []).includes(94),
    null,
    { timeout: 20_000 },
  );
  const ids = await page.$eval('attention-model-view', (el) => Array.from(el.shown.ids));
  assert.equal(ids.filter((id) => id === 94).length, 3, 'each <|endoftext|> is one token, none added');
  assert.equal(ids[0], 94);

  // Generate, then Stop as the first token shows, before the 20 are done (the stream gives the page a
  // turn per token; a Stop before the prompt's prefill is done would end with none).
  const before = await page.inputValue('#text');
  await page.evaluate(() => {
    const note = document.querySelector('#generate-note');
    const first = new MutationObserver(() => {
      if (!/Generating \(1 of/.test(note.textContent)) return;
      first.disconnect();
      document.querySelector('#generate-stop').click();
    });
    first.observe(note, { childList: true, characterData: true, subtree: true });
    document.querySelector('#generate').click();
  });
  await page.waitForFunction(
    () => /Generated \d+ tokens/.test(document.querySelector('#generate-note').textContent),
    null,
    { timeout: 20_000 },
  );
  const note = await page.textContent('#generate-note');
  const n = Number(note.match(/Generated (\d+) tokens/)[1]);
  assert.ok(n >= 1 && n < 20, note);
  assert.match(note, /stopped by you/);
  assert.ok((await page.inputValue('#text')).startsWith(before));
  assert.equal(await page.$eval('#generate-stop', (s) => s.hidden), true);
  // Without Stop it runs on (up to 20 tokens or the end-of-sequence id 95 of generation_config.json).
  await page.click('#generate');
  await page.waitForFunction(
    () =>
      /Generated \d+ tokens \(greedy(, stopped at its end-of-sequence token)?\)/.test(
        document.querySelector('#generate-note').textContent,
      ),
    null,
    { timeout: 20_000 },
  );

  const found = await axeViolations(page);
  assert.deepEqual(found, [], `axe-core violations:\n${found.join('\n')}`);

  const bin = join(tmp, 'bin-only');
  await mkdir(bin, { recursive: true });
  await copyFile(join(GOLDEN, 'llama-tiny', 'config.json'), join(bin, 'config.json'));
  await writeFile(join(bin, 'pytorch_model.bin'), 'PK\u0003\u0004');
  assert.match(
    await openFolder(page, bin),
    /pytorch_model\.bin holds PyTorch pickled weights.*convert them to safetensors/,
  );
  const gguf = join(tmp, 'gguf-only');
  await mkdir(gguf, { recursive: true });
  await copyFile(join(GOLDEN, 'llama-tiny', 'config.json'), join(gguf, 'config.json'));
  await writeFile(join(gguf, 'model-q4.gguf'), 'GGUF');
  assert.match(await openFolder(page, gguf), /model-q4\.gguf is a GGUF file/);
  assert.deepEqual(watch.errors, []);
  await b.release(page);
});
