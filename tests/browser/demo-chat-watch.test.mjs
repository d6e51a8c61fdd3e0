// Attention sinks, selections and a watched chat in the demo, in Chromium under the strict CSP, on
// one shared page: the heatmap's "Hide the first token" renormalises every row without key 0 (against
// the map before, in double), Shift+click / Shift+Enter select several query rows whose bars are their
// mean or sum, all in the link; then qwen3-tiny with a chat template: the reply streams into the chat
// view, a reply token picked (click, arrow keys) draws its attention row — equal to the library's own
// forward run in the page (per layer, mean over layers and heads, rollout in double here) — the logit
// lens outlines the step, the chat's link brings it all back, axe clean, and nothing overflows at 360 px.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { ROOT, axeViolations, demoMoveTo, demoReady, demoSettled, join, launch } from './helpers.mjs';

const GOLDEN = join(ROOT, 'tests', 'golden', 'pretrained');
const FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'model.safetensors'];
/** float32 maps against double references of the same float32 inputs. */
const TOL = 2e-6;

let b, tmp;
let linked = null; // the chat's link, the state it was made from and its map (for the fresh page)
before(async () => {
  b = await launch();
  tmp = await mkdtemp(join(tmpdir(), 'attn-watch-'));
});
after(async () => {
  await b?.close();
  await rm(tmp, { recursive: true, force: true });
});

const shared = () => b.shared('/', demoReady);
const heatmapShown = (page, id) =>
  page.$eval(`#${id}`, (el) => ({
    matrices: el.shown.matrices.map((m) => ({ rows: m.rows, cols: m.cols, data: Array.from(m.data) })),
    bars: Array.from(el._barsRow.row),
  }));
const near = (a, b, what) => {
  assert.equal(a.length, b.length, what);
  a.forEach((v, i) => assert.ok(v === b[i] || Math.abs(v - b[i]) <= TOL, `${what}[${i}]: ${v} vs ${b[i]}`));
};

test('the sink toggle renormalises rows without key 0; Shift+click and Shift+Enter combine rows', async () => {
  const { page, watch } = await shared();
  await demoSettled(page);
  const before = (await heatmapShown(page, 'heatmap')).matrices[0];
  const { rows, cols } = before;
  await page.locator('#heatmap').getByLabel('Hide the first token').check();
  await page.waitForFunction(() => window.attentionDemo.state.hideColumns.join() === '0');
  await demoSettled(page);
  const after = (await heatmapShown(page, 'heatmap')).matrices[0];
  for (let r = 1; r < rows; r++) {
    const row = before.data.slice(r * cols, (r + 1) * cols);
    const left = row.slice(1).reduce((s, v) => s + v, 0); // double
    const got = after.data.slice(r * cols, (r + 1) * cols);
    assert.equal(got[0], -Infinity, `row ${r}: key 0 hidden`);
    near(
      got.slice(1),
      row.slice(1).map((v) => v / left),
      `row ${r}`,
    );
    assert.ok(Math.abs(got.slice(1).reduce((s, v) => s + v, 0) - 1) < 1e-5, `row ${r} sums to 1`);
  }
  // A causal first row sees only key 0: nothing is left to renormalise, so it is masked, and said so.
  assert.ok(after.data.slice(0, cols).every((v) => v === -Infinity));
  assert.match(await page.$eval('#heatmap', (el) => el.shadowRoot.textContent), /row 0 had no weight/);

  // Row 2 clicked, row 4 Shift+clicked, row 5 by Shift+Enter on a focused cell of it.
  const click = async (row, modifiers) => {
    const p = await page.$eval('#heatmap', (el, r) => el.cellCenter(0, r, 1), row);
    if (modifiers) await page.keyboard.down(modifiers);
    await page.mouse.click(p.x, p.y);
    if (modifiers) await page.keyboard.up(modifiers);
  };
  await page.evaluate(() => window.attentionDemo.setState({ view: '0' }));
  await demoSettled(page);
  await click(2);
  await click(4, 'Shift');
  await page.waitForFunction(() => window.attentionDemo.state.queries.join() === '2,4');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Shift+Enter');
  await page.waitForFunction(() => window.attentionDemo.state.queries.join() === '2,4,5');
  await demoSettled(page);
  let shown = await heatmapShown(page, 'heatmap');
  const m = shown.matrices[0];
  const rowOf = (r) => m.data.slice(r * cols, (r + 1) * cols).map((v) => (v === -Infinity ? 0 : v));
  const sum = rowOf(2).map((v, c) => v + rowOf(4)[c] + rowOf(5)[c]);
  near(
    shown.bars,
    sum.map((v) => v / 3),
    'the mean of rows 2, 4, 5',
  );
  await page.locator('#heatmap').getByLabel('Selected query rows').selectOption('sum');
  await page.waitForFunction(() => window.attentionDemo.state.combine === 'sum');
  await demoSettled(page);
  shown = await heatmapShown(page, 'heatmap');
  near(shown.bars, sum, 'the sum of rows 2, 4, 5');
  assert.ok(Math.abs(shown.bars.reduce((s, v) => s + v, 0) - 3) < 1e-5, 'three rows of 1');
  const q = new URLSearchParams(await page.evaluate(() => location.search));
  assert.deepEqual([q.get('hide'), q.get('qs'), q.get('comb')], ['0', '2,4,5', 'sum']);
  // H on the focused cell (row 5, key 1) hides its key too; again shows it.
  await page.keyboard.press('h');
  await page.waitForFunction(() => window.attentionDemo.state.hideColumns.join() === '0,1');
  await page.keyboard.press('h');
  await page.waitForFunction(() => window.attentionDemo.state.hideColumns.join() === '0');
  // A plain click selects one row again.
  await click(3);
  await page.waitForFunction(() => window.attentionDemo.state.queries.length === 0);
  await page.evaluate(() => window.attentionDemo.setState({ hideColumns: [], combine: 'mean' }));
  assert.deepEqual(watch.errors, []);
});

async function chatFolder() {
  const dir = join(tmp, 'qwen3-chat');
  await mkdir(dir, { recursive: true });
  for (const f of FILES) await copyFile(join(GOLDEN, 'qwen3-tiny', f), join(dir, f));
  // qwen3-tiny's own special token stands in for ChatML's markers (the tiny vocabulary has no others).
  await writeFile(
    join(dir, 'chat_template.jinja'),
    '{% for m in messages %}<|endoftext|>{{ m.role }}: {{ m.content }}\n{% endfor %}{% if add_generation_prompt %}<|endoftext|>assistant:{% endif %}',
  );
  return dir;
}

/** The library's own forward in the page on `ids` (qwen3-tiny's fetched files): every layer's (H, T, T). */
const reference = (page, ids) =>
  page.evaluate(async (ids) => {
    const attn = await import('/src/js/index.js');
    await attn.init();
    const get = (f) => fetch(`/tests/golden/pretrained/qwen3-tiny/${f}`);
    const m = await attn.loadPretrained({
      config: await (await get('config.json')).json(),
      weights: new Uint8Array(await (await get('model.safetensors')).arrayBuffer()),
    });
    const r = m.forward([ids], { attention: true });
    const out = r.attention.map((a) => ({ shape: a.shape.slice(1), data: Array.from(a.data) }));
    m.dispose();
    return out;
  }, ids);

/** Row p (keys 0 … p) of: layer 0's heads and their mean, the mean over layers and heads, the rollout (w = ½). */
function referenceRows(att, p) {
  const T = att[0].shape[1];
  const meanOf = (a) => {
    const [H] = a.shape;
    const m = new Float64Array(T * T);
    for (let h = 0; h < H; h++) for (let k = 0; k < T * T; k++) m[k] += a.data[h * T * T + k] / H;
    return m;
  };
  const layer0 = Array.from(meanOf(att[0]).slice(p * T, p * T + p + 1));
  const all = new Float64Array(p + 1);
  let n = 0;
  for (const a of att)
    for (let h = 0; h < a.shape[0]; h++, n++)
      for (let k = 0; k <= p; k++) all[k] += a.data[h * T * T + p * T + k];
  let R = null;
  for (const a of att) {
    const hat = meanOf(a).map((v, k) => 0.5 * v + (Math.floor(k / T) === k % T ? 0.5 : 0));
    for (let i = 0; i < T; i++) {
      const s = hat.slice(i * T, (i + 1) * T).reduce((x, y) => x + y, 0);
      for (let j = 0; j < T; j++) hat[i * T + j] /= s;
    }
    if (!R) R = hat;
    else {
      const next = new Float64Array(T * T);
      for (let i = 0; i < T; i++)
        for (let k = 0; k < T; k++)
          for (let j = 0; j < T; j++) next[i * T + j] += hat[i * T + k] * R[k * T + j];
      R = next;
    }
  }
  const [H0] = att[0].shape;
  const heads0 = Array.from({ length: H0 }, (_, h) =>
    att[0].data.slice(h * T * T + p * T, h * T * T + p * T + p + 1),
  );
  return {
    heads0,
    layer0,
    layers: Array.from(all, (v) => v / n),
    rollout: Array.from(R.slice(p * T, p * T + p + 1)),
  };
}

test('watch a chat: the reply streams, a picked token draws its attention row, the lens step, the link', async () => {
  const { page, watch } = await shared();
  await page.setInputFiles('#model-folder', await chatFolder());
  await page.waitForFunction(() => /Opened/.test(document.querySelector('#model-note').textContent), null, {
    timeout: 20_000,
  });
  await page.waitForSelector('#chat:not([hidden])');
  await page.fill('#chat-system', 'Be kind.');
  await page.fill('#chat-message', 'cat sat');
  // What the note said while the reply streamed (before the page read the reply back).
  await page.evaluate(() => {
    window.streamNotes = [];
    new MutationObserver(() =>
      window.streamNotes.push(document.querySelector('#chat-watch-note').textContent),
    ).observe(document.querySelector('#chat-watch-note'), {
      childList: true,
      characterData: true,
      subtree: true,
    });
  });
  await page.click('#chat-watch');
  await page.waitForFunction(
    () => /Generated \d+ tokens/.test(document.querySelector('#generate-note').textContent),
    null,
    {
      timeout: 20_000,
    },
  );
  await page.waitForSelector('#chat-reply button.reply-token');
  await demoSettled(page);
  const streamed = await page.evaluate(() =>
    window.streamNotes.filter((t) => /streamed: \d+ of up to 20/.test(t)),
  );
  assert.ok(streamed.length >= 1, 'the reply streamed token by token');
  const state = await page.evaluate(() => window.attentionDemo.state);
  assert.equal(state.chatUser, 'cat sat');
  assert.ok(state.chatReply.length > 0 && state.text.endsWith(state.chatReply));
  const n = await page.$$eval('#chat-reply button.reply-token', (bs) => bs.length);
  assert.ok(n >= 3, `${n} reply tokens`);

  // Token 1 clicked, then one to the right by the arrow key: its row in the map.
  await page.click('#chat-reply button[data-k="1"]');
  await page.waitForFunction(() => window.attentionDemo.state.chatToken === 1);
  await page.focus('#chat-reply button[data-k="1"]');
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => window.attentionDemo.state.chatToken === 2);
  await demoSettled(page);
  await page.waitForSelector('#chat-map:not([hidden])');
  const ids = await page.$eval('#model-view', (el) => Array.from(el.ids));
  const start = ids.length - n,
    p = start + 2;
  const ref = referenceRows(await reference(page, ids), p);
  const mapMean = async () => {
    await demoSettled(page);
    const s = await heatmapShown(page, 'chat-map');
    return s.matrices[0].data;
  };
  assert.equal(await page.$eval('#chat-map', (el) => el.shown.view), 'mean');
  near(await mapMean(), ref.layer0, 'layer 0, mean over heads');
  // Each head of layer 0 (the map's own head control: all heads as tiles).
  await page.evaluate(() => window.attentionDemo.setState({ chatHead: 'all' }));
  await demoSettled(page);
  const tiles = (await heatmapShown(page, 'chat-map')).matrices;
  assert.equal(tiles.length, ref.heads0.length);
  tiles.forEach((t, h) => near(t.data, ref.heads0[h], `layer 0, head ${h}`));
  await page.evaluate(() => window.attentionDemo.setState({ chatHead: 'mean' }));
  await page.selectOption('#chat-agg', 'layers');
  await page.waitForFunction(() => window.attentionDemo.state.chatAgg === 'layers');
  near(await mapMean(), ref.layers, 'mean over layers and heads');
  await page.selectOption('#chat-agg', 'rollout');
  await page.waitForFunction(() => window.attentionDemo.state.chatAgg === 'rollout');
  const rollout = await mapMean();
  near(rollout, ref.rollout, 'rollout');
  // The lens column of the step that wrote it.
  await page.waitForFunction(() => document.querySelector('#lens').dataset.state === 'ready');
  const outlined = await page.$$eval('#lens-table tr', (trs) =>
    trs.map((tr) => [...tr.cells].findIndex((c) => c.classList.contains('step'))),
  );
  assert.ok(outlined.length > 1);
  // Column p − 1 (after the layer names' column): the position whose next token the reply's p is.
  assert.deepEqual(outlined, Array(outlined.length).fill(p));
  // Greedy: what the output layer read at that step is the reply's token itself.
  const lens = await page.textContent('#chat-lens');
  const token = await page.textContent('#chat-reply button[data-k="2"]');
  assert.match(lens, new RegExp(`^The logit lens at that step \\(position ${p - 1}\\): Embeddings`));
  assert.ok(lens.includes(`(output) “${token}”`), `${lens} ends in the reply token ${token}`);
  // The sink toggle in the chat's map: the row renormalised without key 0.
  await page.locator('#chat-map').getByLabel('Hide the first token').check();
  await page.waitForFunction(() => window.attentionDemo.state.hideColumns.join() === '0');
  const hidden = await mapMean();
  assert.equal(hidden[0], -Infinity);
  const left = ref.rollout.slice(1).reduce((s, v) => s + v, 0);
  near(
    hidden.slice(1),
    ref.rollout.slice(1).map((v) => v / left),
    'rollout without key 0',
  );

  // The chat's link: elsewhere and back, everything as it was.
  const link = await page.$eval('#chat-link', (a) => new URL(a.href).search);
  assert.match(await page.textContent('#chat-link-note'), /cannot travel in a link/);
  const kept = await page.evaluate(() => window.attentionDemo.state);
  await demoMoveTo(page, '?model=seeded', 'seeded');
  await demoMoveTo(page, link, 'folder');
  const back = await page.evaluate(() => window.attentionDemo.state);
  for (const k of ['chatSystem', 'chatUser', 'chatReply', 'chatToken', 'chatAgg', 'hideColumns', 'text'])
    assert.deepEqual(back[k], kept[k], k);
  near(await mapMean(), hidden, 'the map from the link');
  linked = { link, kept, map: hidden };

  const found = await axeViolations(page);
  assert.deepEqual(found, [], `axe-core violations:\n${found.join('\n')}`);
  // A phone: the chat view fits 360 px (the reply's tokens wrap; the map scales to the width).
  await page.setViewportSize({ width: 360, height: 800 });
  await demoSettled(page);
  const overflow = await page.$eval('#chat-watch-view', (el) => el.scrollWidth - el.clientWidth);
  assert.ok(overflow <= 1, `the chat view overflows by ${overflow} px at 360 px`);
  assert.ok((await page.$eval('#chat-watch-view', (el) => el.getBoundingClientRect().right)) <= 360);
  assert.deepEqual(watch.errors, []);
});

test('the chat link in a fresh page: the model is asked for, then the chat comes back; a Hub model is named', async () => {
  assert.ok(linked, 'the chat test made a link');
  const { page, watch } = await b.newPage();
  await page.goto(b.url(`/${linked.link}`));
  await demoReady(page);
  assert.match(await page.textContent('#model-note'), /open the model folder again/);
  await page.setInputFiles('#model-folder', join(tmp, 'qwen3-chat'));
  await page.waitForFunction((t) => window.attentionDemo.state.text === t, linked.kept.text, {
    timeout: 20_000,
  });
  await page.waitForSelector('#chat-map:not([hidden])', { timeout: 20_000 });
  const state = await page.evaluate(() => window.attentionDemo.state);
  for (const k of ['chatUser', 'chatReply', 'chatToken', 'chatAgg', 'hideColumns'])
    assert.deepEqual(state[k], linked.kept[k], k);
  await demoSettled(page);
  near((await heatmapShown(page, 'chat-map')).matrices[0].data, linked.map, 'the map from a fresh page');
  // A link whose chat names a Hub model fills the Hub panel and asks: nothing is fetched.
  await demoMoveTo(page, '?model=seeded&cm=HuggingFaceTB/SmolLM2-135M-Instruct-GGUF:Q4_K_M', 'seeded');
  assert.equal(await page.inputValue('#hub-repo'), 'HuggingFaceTB/SmolLM2-135M-Instruct-GGUF');
  assert.equal(await page.inputValue('#hub-file'), 'Q4_K_M');
  assert.match(await page.textContent('#hub-link-note'), /Check size, then Download and open/);
  assert.deepEqual(watch.errors, []);
  await b.release(page);
});
