// A long prompt in the demo (web/demo-long.js): tests/golden/pretrained/llama-tiny's weights opened
// as a folder (its config's max_position_embeddings raised to 1024, no tokenizer: ids are typed), 700
// ids typed. The page states the run's memory before it (the map state = model.mapStateBytes) and
// its progress chunk by chunk; a Stop while it reads aborts it and the page reads again afterwards;
// the drawn overview, a head switched, another layer, and the exact tile of a cell picked by keys and
// by a click equal the library's MapSession run independently in the page on the same files; the
// tile's token labels; nothing wider than a 360-px phone; axe clean. On lfm2-tiny the conv layer says
// it needs the short-prompt path and the attention layer draws.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { ROOT, SHOTS, axeViolations, demoReady, join, launch } from './helpers.mjs';

const T = 700;
const IDS = Array.from({ length: T }, (_, i) => (i * 37 + 11) % 96);
// The page and the reference run the same library on the same float16 state: equal to float32 rounding.
const TOL = 1e-7;

let b, tmp, dir;

/** A copy of fixture `name` without its tokenizer, max_position_embeddings raised to 1024. */
async function longFolder(name) {
  const from = join(ROOT, 'tests', 'golden', 'pretrained', name);
  const to = join(tmp, name);
  await mkdir(to);
  const config = JSON.parse(await readFile(join(from, 'config.json'), 'utf8'));
  await writeFile(join(to, 'config.json'), JSON.stringify({ ...config, max_position_embeddings: 1024 }));
  await copyFile(join(from, 'model.safetensors'), join(to, 'model.safetensors'));
  return to;
}

before(async () => {
  b = await launch();
  tmp = await mkdtemp(join(tmpdir(), 'attn-long-'));
  dir = await longFolder('llama-tiny');
});
after(async () => {
  await b?.close();
  await rm(tmp, { recursive: true, force: true });
});

/**
 * The library in the page on the fixture's files: a MapSession of its own, asked `asks` (overviews,
 * or tiles where rows are given); the answers stay in the page (appended to window.longReference), the plan's
 * map bytes come back.
 */
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
      window.longReference ??= [];
      window.longReference.push(
        ...asks.map((a) => (a.rows ? s.tile(a) : s.overview({ ...a, pool: 'max' })).data),
      );
      const mapBytes = m.mapStateBytes(ids.length, { layers: true });
      s.dispose();
      m.dispose();
      return mapBytes;
    },
    { ids: IDS, asks },
  );

/** The panel's drawn overview and tile (their numbers left in the page). */
const shown = (page) =>
  page.$eval('#long', (el) => ({
    overview: { ...el.shown.overview, data: null },
    tile: el.shown.tile && { ...el.shown.tile, data: null },
  }));

/** max |shown − reference answer k| of the overview or tile drawn, compared in the page. */
async function assertNear(page, what, k) {
  const r = await page.$eval(
    '#long',
    (el, { what, k }) => {
      const got = el.shown[what].data,
        want = window.longReference[k];
      let worst = 0;
      for (let i = 0; i < want.length; i++) {
        const d = Math.abs(got[i] - want[i]);
        worst = Math.max(worst, Number.isNaN(d) ? Infinity : d);
      }
      return { length: [got.length, want.length], worst };
    },
    { what, k },
  );
  assert.equal(r.length[0], r.length[1], `${what} ${k}: length`);
  assert.ok(r.worst <= TOL, `${what} ${k}: max |Δ| ${r.worst} > ${TOL}`);
}

const state = (page, s) =>
  page.waitForFunction((s) => document.querySelector('#long').dataset.state === s, s, { timeout: 10_000 });
const range = ([a, z]) => Array.from({ length: z - a }, (_, k) => a + k);

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
  const mapBytes = await reference(page, [
    { layer: 1, head: 0 },
    { layer: 1, head: 3 },
    { layer: 1, head: 3, rows: blockOf(5), cols: blockOf(3) },
    { layer: 0, head: 3 },
  ]);
  const plan = await page.textContent('#long-plan');
  const mb = (x) => `${(x / 1e6).toFixed(1)} MB`;
  assert.match(plan, /^700 tokens: more than 512/);
  assert.ok(plan.includes(`map state ${mb(mapBytes)}`), plan);

  // Stop right after Read (the worker checks it between chunks): nothing drawn, the page reads again.
  await page.evaluate(() => {
    document.querySelector('#long-read').click();
    document.querySelector('#long-stop').click();
  });
  await state(page, 'idle');
  assert.match(await page.textContent('#long-note'), /^Stopped: nothing was kept/);
  assert.ok(await page.isHidden('#long-canvas'));

  // The progress the note says while it reads (chunks of 256 tokens), recorded as it changes.
  await page.$eval('#long-note', (note) => {
    window.longNotes = [];
    new MutationObserver(() => window.longNotes.push(note.textContent)).observe(note, { childList: true });
  });
  await page.selectOption('#layer', '1');
  await page.click('#long-read');
  await state(page, 'drawn');
  const notes = await page.evaluate(() => window.longNotes.filter((t) => /^Read \d/.test(t)));
  assert.deepEqual(
    notes,
    [256, 512, 700].map((n) => `Read ${n} of ${T} tokens…`),
  );
  let s = await shown(page);
  assert.deepEqual([s.overview.layer, s.overview.head, s.overview.n, s.overview.T], [1, 0, 512, T]);
  await assertNear(page, 'overview', 0);
  assert.match(await page.textContent('#long-note'), /pooled overview of 512 × 512 cells.*max pooling/);

  await page.selectOption('#long-head', '3');
  await page.waitForFunction(() => document.querySelector('#long').shown.overview.head === 3);
  await assertNear(page, 'overview', 1);

  // Zoom by keys: the cursor moved to cell (5, 3), Enter; then a click on the canvas's centre.
  await page.focus('#long-canvas');
  for (const key of ['ArrowRight', 'ArrowRight', 'ArrowRight', ...Array(5).fill('ArrowDown'), 'Enter'])
    await page.keyboard.press(key);
  await state(page, 'zoomed');
  const byKeys = (await shown(page)).tile;
  assert.deepEqual([byKeys.rows, byKeys.cols], [blockOf(5), blockOf(3)]);
  await assertNear(page, 'tile', 2);
  const labels = await page.$$eval('#long-tile th', (ths) => ths.map((t) => t.textContent));
  assert.deepEqual(labels, [
    'query \\ key',
    ...range(byKeys.cols).map((j) => `${j} ${IDS[j]}`),
    ...range(byKeys.rows).map((i) => `${i} ${IDS[i]}`),
  ]);
  // A click in the middle of cell (300, 100), under the diagonal, at the point the canvas's box gives.
  await page.$eval('#long', (el) => (el.dataset.state = 'drawn'));
  await page.$eval('#long-canvas', (c) => {
    const r = c.getBoundingClientRect(),
      css = getComputedStyle(c);
    const px = (name) => parseFloat(css[name]) || 0;
    const w = r.width - px('borderLeftWidth') - px('borderRightWidth'),
      h = r.height - px('borderTopWidth') - px('borderBottomWidth');
    const at = { clientX: r.left + px('borderLeftWidth') + (100.5 / 512) * w };
    at.clientY = r.top + px('borderTopWidth') + (300.5 / 512) * h;
    c.dispatchEvent(new MouseEvent('click', { ...at, bubbles: true }));
  });
  await state(page, 'zoomed');
  // A cell is one CSS pixel and a MouseEvent's clientX/Y are whole pixels: the cell hit is within one.
  const byClick = (await shown(page)).tile;
  const [a, c] = byClick.cell;
  assert.ok(Math.abs(a - 300) <= 1 && Math.abs(c - 100) <= 1, `clicked cell (${a}, ${c})`);
  assert.deepEqual([byClick.rows, byClick.cols], [blockOf(a), blockOf(c)]);
  await reference(page, [{ layer: 1, head: 3, rows: blockOf(a), cols: blockOf(c) }]);
  await assertNear(page, 'tile', 4);

  // Another layer: the page's render asks the worker's session for it (no second read).
  await page.selectOption('#layer', '0');
  await page.waitForFunction(() => document.querySelector('#long').shown.overview.layer === 0);
  await assertNear(page, 'overview', 3);

  await (await page.$('#long')).screenshot({ path: join(SHOTS, 'demo-long.png') });
  // On a 360-px phone nothing of the panel is wider than the screen (the tile scrolls in its box).
  await page.setViewportSize({ width: 360, height: 800 });
  const wide = await page.$$eval('#long, #long *', (els) =>
    els
      .filter((e) => e.getBoundingClientRect().right > 360 && !e.closest('table'))
      .map((e) => e.id || e.tagName),
  );
  assert.deepEqual(wide, []);

  // The demo page as a whole is axe-checked by its own tests; here the panel, drawn and zoomed.
  const found = await axeViolations(page, '#long');
  assert.deepEqual(found, [], `axe-core violations:\n${found.join('\n')}`);
  assert.deepEqual(watch.errors, []);
  await b.release(page);
});

test('a hybrid model (lfm2-tiny): its conv layer says it needs the short-prompt path, its attention layer draws', async () => {
  const { page, watch } = await b.newPage();
  await page.goto(b.url('/'));
  await demoReady(page);
  await page.setInputFiles('#model-folder', await longFolder('lfm2-tiny'));
  await page.waitForFunction(() => document.querySelector('#model').value === 'folder', null, {
    timeout: 10_000,
  });
  await page.fill('#text', IDS.join(' '));
  await page.waitForFunction(() => /^700 tokens/.test(document.querySelector('#long-plan').textContent));
  await page.selectOption('#layer', '0');
  await page.click('#long-read');
  await state(page, 'read');
  assert.match(
    await page.textContent('#long-note'),
    /^Layer 0 is a short convolution: its maps need the short-prompt path \(at most 512 tokens\)/,
  );
  assert.ok(await page.isHidden('#long-canvas'));
  await page.selectOption('#layer', '1');
  await state(page, 'drawn');
  assert.deepEqual([(await shown(page)).overview.layer, await page.isVisible('#long-canvas')], [1, true]);
  assert.deepEqual(watch.errors, []);
  await b.release(page);
});
