// The demo on a Hugging Face checkpoint folder, in Chromium under the strict CSP: the
// committed tests/golden/pretrained/gpt2-tiny folder opened through the folder input (a directory,
// as a reader picks it) loads with no console error and no request outside the origin, and stays out
// of the link; its tokens, the model view (2 layers × 4 heads), the steps view and the heatmap of
// layer 1 (against the torch reference in expected.json, and against loadPretrained run in the page on
// the fetched files), the next-token top 10, the logit lens and greedy generation; the model is held by
// the model worker (the page's own wasm instance gets no handle), and its source answers the
// interpretability calls (head scores, logit attribution, abortable patching) as the library does in the
// page, as a preset's source does; axe finds no
// violation with the folder loaded. A folder with an unsupported architecture, one too large for the
// heap, one without config.json and one without weights each get their message, and the presets
// still work afterwards; a folder's files dropped on the page open it too.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { ROOT, SHOTS, axeViolations, demoReady, join, launch } from './helpers.mjs';

const FOLDER = join(ROOT, 'tests', 'golden', 'pretrained', 'gpt2-tiny');
const EXPECTED = JSON.parse(readFileSync(join(FOLDER, 'expected.json'), 'utf8'));
const visible = (s) => String(s).replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥') || '∅';

let b, tmp;
before(async () => {
  b = await launch();
  tmp = await mkdtemp(join(tmpdir(), 'attn-folders-'));
});
after(async () => {
  await b?.close();
  await rm(tmp, { recursive: true, force: true });
});

/** A copy of gpt2-tiny in a temp folder `name`, config.json patched (or dropped: null), files left out. */
async function folderLike(name, { config = {}, without = [] } = {}) {
  const dir = join(tmp, name);
  await mkdir(dir, { recursive: true });
  for (const f of ['tokenizer.json', 'tokenizer_config.json', 'model.safetensors'])
    if (!without.includes(f)) await copyFile(join(FOLDER, f), join(dir, f));
  if (config)
    await writeFile(
      join(dir, 'config.json'),
      JSON.stringify({ ...JSON.parse(await readFile(join(FOLDER, 'config.json'), 'utf8')), ...config }),
    );
  return dir;
}

/** The reference, in the page: loadPretrained on the fetched files (bytes, not File objects). */
const reference = (page, text, layer) =>
  page.evaluate(
    async ({ text, layer }) => {
      const attn = await import('/src/js/index.js');
      await attn.init();
      const get = async (f) => await fetch(`/tests/golden/pretrained/gpt2-tiny/${f}`);
      const m = await attn.loadPretrained({
        config: await (await get('config.json')).json(),
        weights: new Uint8Array(await (await get('model.safetensors')).arrayBuffer()),
        tokenizer: await (await get('tokenizer.json')).json(),
        tokenizerConfig: await (await get('tokenizer_config.json')).json(),
      });
      const ids = Array.from(m.encode(text));
      const r = m.forward([ids], { attention: true });
      const V = r.logits.shape[2],
        T = ids.length;
      const last = Array.from(r.logits.data.subarray((T - 1) * V));
      let lens = null;
      try {
        lens = Array.from(m.forward([ids], { attention: false, logitLens: true }).logitLens.ids.data);
      } catch {
        /* not there yet */
      }
      const out = {
        ids,
        tokens: m.tokenStrings(ids),
        attention: Array.from(r.attention[layer].data),
        last,
        lens,
        lensTokens: lens && m.tokenStrings(lens),
        generated: m.decode(m.generate([ids], { maxNewTokens: 20 }).data),
      };
      m.dispose();
      return out;
    },
    { text, layer },
  );

const heatmapWeights = (page) =>
  page.$eval('attention-heatmap', (el) => el.shown.matrices.flatMap((m) => Array.from(m.data)));

async function typeText(page, text, n) {
  await page.fill('#text', text);
  await page.waitForFunction((k) => document.querySelectorAll('#chips .chip').length === k, n);
  await page.waitForFunction(() => document.querySelector('#lens').dataset.state === 'ready', null, {
    timeout: 20_000,
  });
}

test('the gpt2-tiny folder opens: tokens, model view, steps, heatmap = the torch reference, top 10, logit lens, generation; axe clean', async () => {
  const { page, watch } = await b.newPage();
  await page.goto(b.url('/'));
  await demoReady(page);
  const urlBefore = page.url();
  const pageHandles = () =>
    page.evaluate(async () => (await import('/src/js/index.js')).memoryStats().liveHandles);
  const handlesBefore = await pageHandles();
  await page.setInputFiles('#model-folder', FOLDER);
  await page.waitForFunction(
    () =>
      document.querySelector('#model').value === 'folder' &&
      document.querySelector('attention-model-view').dataset.ready !== undefined,
    null,
    { timeout: 20_000 },
  );
  assert.equal(
    await pageHandles(),
    handlesBefore,
    "the folder's model lives in the model worker, not in the page's wasm instance",
  );
  assert.equal(
    await page.$eval('#model option[value="folder"]', (o) => o.textContent),
    'Folder: gpt2-tiny (GPT2LMHeadModel)',
  );
  assert.match(
    await page.textContent('#model-note'),
    /Opened gpt2-tiny \(GPT2LMHeadModel\): 2 layers, 4 heads/,
  );
  assert.equal(page.url(), urlBefore, 'a folder is not written into the link');
  assert.ok(
    (await page.isHidden('mask-editor')) &&
      (await page.isHidden('#predictions')) &&
      (await page.isHidden('#folder-progress-row')),
  );

  // The tokenizer case's text: its ids, and the chips show tokenStrings.
  const tc = EXPECTED.tokenizer_cases[0];
  await typeText(page, tc.text, tc.ids.length);
  const ref = await reference(page, tc.text, 1);
  assert.deepEqual(ref.ids, tc.ids, 'the tokenizer gives the committed ids');
  assert.deepEqual(
    await page.$$eval('#chips .chip .t', (els) => els.map((e) => e.textContent)),
    ref.tokens.map(visible),
  );

  // The model view: 2 layers × 4 heads, on these ids.
  const mv = await page.$eval('attention-model-view', (el) => ({
    L: el.shown.L,
    H: el.shown.H,
    ids: el.shown.ids,
    tiles: el.shadowRoot.querySelectorAll('canvas[aria-label^="Layer"]').length,
  }));
  assert.deepEqual(mv, { L: 2, H: 4, ids: tc.ids, tiles: 8 });

  // Layer 1 in the heatmap: the in-page reference (same library, bytes instead of File) bit for bit.
  await page.selectOption('#layer', '1');
  await page.waitForFunction(() => window.attentionDemo.state.layer === 1);
  // The heatmap redraws when the worker's answer for layer 1 arrives: wait for that, not a clock.
  await page.waitForFunction(
    (want) => {
      const got = document
        .querySelector('attention-heatmap')
        .shown.matrices.flatMap((m) => Array.from(m.data));
      return got.length === want.length && got.every((x, i) => x === want[i]);
    },
    ref.attention,
    { timeout: 20_000 },
  );
  assert.deepEqual(
    await heatmapWeights(page),
    ref.attention,
    'layer 1 = loadPretrained on the fetched files',
  );

  // Clicking head 2 of layer 1 in the model view opens it in the steps view, with the same weights.
  await page.$eval('attention-model-view', (el) =>
    el.shadowRoot.querySelectorAll('canvas[aria-label^="Layer"]')[6].scrollIntoView(),
  );
  const cell = await page.$eval('attention-model-view', (el) => el._tiles[6].view.cellCenter(2, 1)); // the tile of layer 1, head 2
  await page.mouse.click(cell.x, cell.y);
  await page.waitForFunction(
    () => window.attentionDemo.state.head === 2 && window.attentionDemo.state.step === 'weights',
  );
  const T = tc.ids.length;
  await page.waitForFunction(
    (want) => {
      const el = document.querySelector('attention-steps');
      return el.current?.head === 2 && Array.from(el.current.data).every((x, i) => x === want[i]);
    },
    ref.attention.slice(2 * T * T, 3 * T * T),
    { timeout: 20_000 },
  );
  const stepW = await page.$eval('attention-steps', (el) => ({
    name: el.current.name,
    head: el.current.head,
    data: Array.from(el.current.data),
  }));
  assert.equal(stepW.name, 'weights');
  assert.equal(stepW.head, 2);
  assert.deepEqual(
    stepW.data,
    ref.attention.slice(2 * T * T, 3 * T * T),
    'the steps view shows layer 1, head 2',
  );

  // Top 10: sorted, summing to at most 1, the reference's softmax of the last logits row.
  const top = await page.evaluate(() => window.attentionDemo.predictionScore);
  assert.equal(top.length, 10);
  for (let k = 1; k < 10; k++) assert.ok(top[k - 1].p >= top[k].p, 'sorted');
  const sum = top.reduce((s, t) => s + t.p, 0);
  assert.ok(sum <= 1 + 1e-12 && sum > 0, `sum ${sum}`);
  const order = ref.last
    .map((x, id) => [x, id])
    .sort((x, y) => y[0] - x[0])
    .slice(0, 10)
    .map(([, id]) => id);
  assert.deepEqual(
    top.map((t) => t.id),
    order,
  );
  assert.equal(await page.$$eval('#next-table tbody tr', (rows) => rows.length), 10);

  // Logit lens: embeddings + 2 layers; the last row is the model's own prediction (argmax of the logits).
  assert.ok(ref.lens, 'the library has the logit lens');
  const lens = await page.$$eval('#lens-table tbody tr', (rows) =>
    rows.map((r) => [...r.querySelectorAll('td')].map((c) => c.firstChild.textContent)),
  );
  assert.deepEqual(await page.$$eval('#lens-table tbody th', (ths) => ths.map((t) => t.textContent)), [
    'Embeddings',
    'Layer 1',
    'Layer 2 (output)',
  ]);
  assert.deepEqual(
    lens,
    [0, 1, 2].map((l) => ref.lensTokens.slice(l * T, (l + 1) * T).map(visible)),
  );
  assert.equal(ref.lens[2 * T + T - 1], order[0], 'row L, last position = the top next token');
  assert.match(await page.$eval('#lens-table caption', (c) => c.textContent), /rows are layers/);

  // The torch reference: case b1_t7's ids are the text "0Basea-tN"; layer 1 within 1e-5 + 1e-4·|x|.
  const c = EXPECTED.cases[0];
  await typeText(page, '0Basea-tN', 7);
  assert.deepEqual(await page.$eval('attention-model-view', (el) => el.shown.ids), c.input_ids.data);
  const got = await heatmapWeights(page),
    want = c.attention[1].data;
  assert.equal(got.length, want.length);
  got.forEach((x, i) =>
    assert.ok(
      Math.abs(x - want[i]) <= 1e-5 + 1e-4 * Math.abs(want[i]),
      `attention[1][${i}] ${x} vs ${want[i]}`,
    ),
  );

  // Generate 20 tokens (greedy): the decoded text is appended to the input.
  const refGen = (await reference(page, '0Basea-tN', 1)).generated;
  await page.click('#generate');
  await page.waitForFunction((t) => document.querySelector('#text').value === t, `0Basea-tN${refGen}`, {
    timeout: 20_000,
  });
  assert.match(await page.textContent('#generate-note'), /Generated 20 tokens/);
  await page.waitForFunction(() => document.querySelector('#lens').dataset.state === 'ready');
  assert.equal(page.url(), urlBefore, 'still no folder in the link');

  await page.screenshot({ path: join(SHOTS, 'demo-pretrained.png'), fullPage: true });
  const found = await axeViolations(page);
  assert.deepEqual(found, [], `axe-core violations:\n${found.join('\n')}`);
  assert.deepEqual(watch.errors, []);
  assert.deepEqual(watch.offOrigin, []);
  assert.ok(
    watch.requests.every((u) => !u.includes('/tests/golden/') || u.includes('gpt2-tiny/')),
    'only the reference fetched the fixtures',
  );
  await b.release(page);
});

test('the model-source interface for the interpretability views: the worker answers as the library does in the page, a patch can be aborted', async () => {
  const { page, watch } = await b.newPage();
  await page.goto(b.url('/?model=reverse'));
  await demoReady(page);
  // The same calls on a source and on the library in the page: { data, shape } tensors, equal numbers.
  const compare = () =>
    page.evaluate(async () => {
      const attn = await import('/src/js/index.js');
      const source = window.attentionDemo.source;
      const ids = (await source.tokenize(source.example)).ids;
      const T = ids.length,
        token = ids[T - 1],
        against = ids[0] === token ? ids[1] : ids[0];
      const corrupted = ids.map((x, i) => (i < T - 1 ? (x + 1) % source.info.vocabSize : x));
      let model;
      if (source.name === 'folder') {
        const get = async (f) => await fetch(`/tests/golden/pretrained/gpt2-tiny/${f}`);
        model = await attn.loadPretrained({
          config: await (await get('config.json')).json(),
          weights: new Uint8Array(await (await get('model.safetensors')).arrayBuffer()),
          tokenizer: await (await get('tokenizer.json')).json(),
          tokenizerConfig: await (await get('tokenizer_config.json')).json(),
        });
      } else
        model = attn.TinyTransformer.fromSafetensors(
          new Uint8Array(await (await fetch(`/web/presets/${source.name}.safetensors`)).arrayBuffer()),
        );
      const plain = (t) => ({ data: Array.from(t.data), shape: Array.from(t.shape) });
      const asArrays = (t) => ({ data: Array.from(t.data), shape: t.shape });
      const options = { clean: ids, corrupted, token, against };
      const progress = [];
      const [scores, dla, patched] = await Promise.all([
        source.headScores(ids),
        source.logitAttribution(ids, { token, against }),
        source.patch(options, { onProgress: (done, total) => progress.push([done, total]) }),
      ]);
      const want = {
        scores: Object.fromEntries(Object.entries(model.headScores(ids)).map(([k, t]) => [k, plain(t)])),
        dla: model.logitAttribution(ids, { token, against }),
        patched: await model.patch(options),
      };
      const out = {
        scores: [Object.fromEntries(Object.entries(scores).map(([k, t]) => [k, asArrays(t)])), want.scores],
        dla: [
          [asArrays(dla.heads), asArrays(dla.mlp), dla.total, dla.logitDiff],
          [plain(want.dla.heads), plain(want.dla.mlp), want.dla.total, want.dla.logitDiff],
        ],
        patch: [
          [asArrays(patched.result), patched.cleanDiff, patched.corruptedDiff],
          [plain(want.patched.result), want.patched.cleanDiff, want.patched.corruptedDiff],
        ],
        progress: progress.length > 0 && progress.at(-1)[0] === progress.at(-1)[1],
      };
      // Aborted before it starts, and while it runs: AbortError, and the source still answers.
      const aborted = async (when) => {
        const controller = new AbortController();
        if (when === 'before') controller.abort();
        const p = source.patch({ ...options, component: 'head-position' }, { signal: controller.signal });
        if (when === 'during') controller.abort();
        return p.then(
          () => 'finished',
          (e) => e.name,
        );
      };
      out.aborted = [await aborted('before'), await aborted('during')];
      out.after = (await source.logitAttribution(ids, { token, against })).total === dla.total;
      model.dispose();
      return out;
    });
  for (const where of ['preset', 'folder']) {
    if (where === 'folder') {
      await page.setInputFiles('#model-folder', FOLDER);
      await page.waitForFunction(() => window.attentionDemo.source?.name === 'folder', null, {
        timeout: 20_000,
      });
    }
    const r = await compare();
    assert.deepEqual(r.scores[0], r.scores[1], `${where}: head scores`);
    assert.deepEqual(r.dla[0], r.dla[1], `${where}: logit attribution`);
    assert.deepEqual(r.patch[0], r.patch[1], `${where}: activation patching`);
    assert.ok(r.progress, `${where}: patching reports its progress`);
    assert.deepEqual(r.aborted, ['AbortError', 'AbortError'], `${where}: an aborted patch rejects`);
    assert.ok(r.after, `${where}: the source answers after an abort`);
  }
  assert.deepEqual(watch.errors, []);
  await b.release(page);
});

test('clear messages for a bad folder; the presets keep working; dropped files open a folder', async () => {
  const { page, watch } = await b.newPage();
  await page.goto(b.url('/'));
  await demoReady(page);
  const note = () => page.textContent('#model-note');
  const open = async (dir, pattern) => {
    await page.setInputFiles('#model-folder', dir);
    await page.waitForFunction(
      (p) => new RegExp(p).test(document.querySelector('#model-note').textContent),
      pattern.source,
      { timeout: 20_000 },
    );
  };
  await open(
    await folderLike('bert-tiny', { config: { architectures: ['BertModel'] } }),
    /Could not open the folder/,
  );
  assert.match(await note(), /architecture "BertModel" is not supported; supported: GPT2LMHeadModel/);
  await open(
    await folderLike('huge', { config: { n_embd: 4096, n_head: 32, n_layer: 48, vocab_size: 50257 } }),
    /too large/,
  );
  assert.match(
    await note(),
    /\(158 kB of safetensors\) are too large for this page, which gives a model at most 3221 MB of the 4 GiB WebAssembly heap: .*memoryLimit option raises it/,
  );
  await open(await folderLike('no-weights', { without: ['model.safetensors'] }), /weights file is missing/);
  await open(await folderLike('no-config', { config: null }), /no config\.json/);
  assert.equal(
    await page.$eval('#model option[value="folder"]', (o) => o.hidden),
    true,
    'no folder entry after failures',
  );

  // A preset still works.
  await page.selectOption('#model', 'reverse');
  await page.waitForFunction(() => window.attentionDemo.predictionScore?.scored === 5, null, {
    timeout: 20_000,
  });
  assert.deepEqual(await page.evaluate(() => window.attentionDemo.predictionScore), { right: 5, scored: 5 });

  // The folder's files dropped on the page (a synthetic drop: File objects, no directory entry).
  await page.evaluate(async () => {
    const dt = new DataTransfer();
    for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'model.safetensors']) {
      dt.items.add(new File([await (await fetch(`/tests/golden/pretrained/gpt2-tiny/${f}`)).blob()], f));
    }
    document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  });
  await page.waitForFunction(() => document.querySelector('#model').value === 'folder', null, {
    timeout: 20_000,
  });
  assert.equal(
    await page.$eval('#model option[value="folder"]', (o) => o.textContent),
    'Folder: gpt2 (GPT2LMHeadModel)',
  );
  assert.equal(new URL(page.url()).searchParams.get('model'), 'reverse', 'the link keeps the preset state');
  await page.selectOption('#model', 'sort');
  await page.waitForFunction(
    () =>
      new URL(location.href).searchParams.get('model') === 'sort' &&
      window.attentionDemo.predictionScore?.scored > 0,
  );
  assert.ok(
    (await page.isVisible('mask-editor')) &&
      (await page.isHidden('#lens')) &&
      (await page.isHidden('attention-model-view')),
  );
  assert.deepEqual(watch.errors, []);
  assert.deepEqual(watch.offOrigin, []);
  await b.release(page);
});
