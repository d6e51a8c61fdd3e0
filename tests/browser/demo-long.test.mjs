// A long prompt in the demo (web/demo-long.js): tests/golden/pretrained/llama-tiny's weights opened
// as a folder (its config's max_position_embeddings raised to 1024, no tokenizer: ids are typed), 700
// ids typed. The page states the run's memory before it (the map state = model.mapStateBytes), a
// Stop while it reads aborts it and the page reads again afterwards; the drawn overview, a head
// switched, and the exact tile of a cell picked by keys and by a click equal the library's
// MapSession run independently in the page on the same files; the tile's token labels; axe clean.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { ROOT, axeViolations, demoReady, join, launch } from './helpers.mjs';

const FIXTURE = join(ROOT, 'tests', 'golden', 'pretrained', 'llama-tiny');
const T = 700;
const IDS = Array.from({ length: T }, (_, i) => (i * 37 + 11) % 96);
// The page and the reference run the same library on the same float16 state: equal to float32 rounding.
const TOL = 1e-7;

let b, dir;
before(async () => {
  b = await launch();
  dir = join(await mkdtemp(join(tmpdir(), 'attn-long-')), 'llama-long');
  await mkdir(dir);
  const config = JSON.parse(await readFile(join(FIXTURE, 'config.json'), 'utf8'));
  await writeFile(join(dir, 'config.json'), JSON.stringify({ ...config, max_position_embeddings: 1024 }));
  await copyFile(join(FIXTURE, 'model.safetensors'), join(dir, 'model.safetensors'));
});
after(async () => {
  await b?.close();
  await rm(join(dir, '..'), { recursive: true, force: true });
});

/** The library in the page on the fixture's files: the plan's map bytes, overviews and tiles asked. */
const reference = (page, asks) =>
  page.evaluate(
    async ({ ids, asks }) => {
      const attn = await import('/src/js/index.js');
      await attn.init();
      const get = (f) => fetch(`/tests/golden/pretrained/llama-tiny/${f}`);
      const config = { ...(await (await get('config.json')).json()), max_position_embeddings: 1024 };
      const m = await attn.loadPretrained({
        config,
        weights: new Uint8Array(await (await get('model.safetensors')).arrayBuffer()),
      });
      const s = await m.prefill(ids, { maps: { layers: true } });
      const out = {
        mapBytes: m.mapStateBytes(ids.length, { layers: true }),
        results: asks.map((a) => Array.from((a.rows ? s.tile(a) : s.overview({ ...a, pool: 'max' })).data)),
      };
      s.dispose();
      m.dispose();
      return out;
    },
    { ids: IDS, asks },
  );

const shown = (page) =>
  page.$eval('#long', (el) => ({
    overview: { ...el.shown.overview, data: Array.from(el.shown.overview.data) },
    tile: el.shown.tile && { ...el.shown.tile, data: Array.from(el.shown.tile.data) },
  }));
const state = (page, s) =>
  page.waitForFunction((s) => document.querySelector('#long').dataset.state === s, s, { timeout: 10_000 });
const range = ([a, z]) => Array.from({ length: z - a }, (_, k) => a + k);
const near = (got, want, what) => {
  assert.equal(got.length, want.length, `${what}: length`);
  got.forEach((x, i) => assert.ok(Math.abs(x - want[i]) <= TOL, `${what}[${i}]: ${x} vs ${want[i]}`));
};

test('a 700-token prompt: plan stated, Stop aborts, overview and zoomed tiles = the MapSession, axe clean', async () => {
  const { page, watch } = await b.newPage();
  await page.goto(b.url('/'));
  await demoReady(page);
  await page.setInputFiles('#model-folder', dir);
  await page.waitForFunction(() => document.querySelector('#model').value === 'folder', null, {
    timeout: 10_000,
  });
  await page.fill('#text', IDS.join(' '));
  await page.waitForFunction(() => !document.querySelector('#long').hidden, null, { timeout: 10_000 });
  assert.ok(await page.isHidden('attention-heatmap#heatmap'), 'no full maps asked for a long prompt');
  // Cell (a, b) of the 512 × 512 overview: query rows and key columns blockOf(a) × blockOf(b).
  const blockOf = (a) => [Math.floor((a * T) / 512), Math.floor(((a + 1) * T) / 512)];
  const ref = await reference(page, [
    { layer: 1, head: 0 },
    { layer: 1, head: 3 },
    { layer: 1, head: 3, rows: blockOf(5), cols: blockOf(3) },
    { layer: 1, head: 3, rows: blockOf(100), cols: blockOf(200) },
  ]);
  const plan = await page.textContent('#long-plan');
  const mb = (x) => `${(x / 1e6).toFixed(1)} MB`;
  assert.match(plan, /^700 tokens: more than 512/);
  assert.ok(plan.includes(`map state ${mb(ref.mapBytes)}`), plan);

  // Stop right after Read (the worker checks it between chunks): nothing drawn, the page reads again.
  await page.evaluate(() => {
    document.querySelector('#long-read').click();
    document.querySelector('#long-stop').click();
  });
  await state(page, 'idle');
  assert.match(await page.textContent('#long-note'), /^Stopped: nothing was kept/);
  assert.ok(await page.isHidden('#long-canvas'));

  await page.selectOption('#layer', '1');
  await page.click('#long-read');
  await state(page, 'drawn');
  let s = await shown(page);
  assert.deepEqual([s.overview.layer, s.overview.head, s.overview.n, s.overview.T], [1, 0, 512, T]);
  near(s.overview.data, ref.results[0], 'overview of layer 1, head 0');
  assert.match(await page.textContent('#long-note'), /pooled overview of 512 × 512 cells.*max pooling/);

  await page.selectOption('#long-head', '3');
  await page.waitForFunction(() => document.querySelector('#long').shown.overview.head === 3);
  s = await shown(page);
  near(s.overview.data, ref.results[1], 'overview of layer 1, head 3');

  // Zoom by keys: the cursor moved to cell (5, 3), Enter; then a click on the canvas's centre.
  await page.focus('#long-canvas');
  for (const key of ['ArrowRight', 'ArrowRight', 'ArrowRight', ...Array(5).fill('ArrowDown'), 'Enter'])
    await page.keyboard.press(key);
  await state(page, 'zoomed');
  const byKeys = (await shown(page)).tile;
  assert.deepEqual([byKeys.rows, byKeys.cols], [blockOf(5), blockOf(3)]);
  near(byKeys.data, ref.results[2], 'tile by keys');
  const labels = await page.$$eval('#long-tile th', (ths) => ths.map((t) => t.textContent));
  assert.deepEqual(labels, [
    'query \\ key',
    ...range(byKeys.cols).map((j) => `${j} ${IDS[j]}`),
    ...range(byKeys.rows).map((i) => `${i} ${IDS[i]}`),
  ]);
  // A click in the middle of cell (100, 200).
  await page.$eval('#long', (el) => (el.dataset.state = 'drawn'));
  const box = await page.$eval('#long-canvas', (c) => [c.clientWidth, c.clientHeight]);
  await page.click('#long-canvas', { position: { x: (200.5 / 512) * box[0], y: (100.5 / 512) * box[1] } });
  await state(page, 'zoomed');
  const byClick = (await shown(page)).tile;
  assert.deepEqual([byClick.rows, byClick.cols], [blockOf(100), blockOf(200)]);
  near(byClick.data, ref.results[3], 'tile by click');

  const found = await axeViolations(page);
  assert.deepEqual(found, [], `axe-core violations:\n${found.join('\n')}`);
  assert.deepEqual(watch.errors, []);
  await b.release(page);
});
