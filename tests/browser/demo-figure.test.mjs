// "Open a figure…" in the demo: a view's JSON export (its `state`) or SVG figure (its
// <metadata> widgetState) carries what the demo showed, and opening it in the demo — reloaded on
// another model — redraws the same picture bit for bit: the heatmap's canvases equal the ones the
// figure was exported from, the demo's state (model, text, view, query …) and link are the figure's.
// A figure of an opened folder says which files to open; nothing changes. No console error.
// One page serves the file (b.shared): it moves in place from link to link (the back button's path),
// each time to a model that draws another picture before the figure is opened; the last test loads
// it anew, where a new page (no folder open) is the point.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { ROOT, demoMoveTo, demoReady, demoSettled, join, launch } from './helpers.mjs';

const FOLDER = join(ROOT, 'tests', 'golden', 'pretrained', 'gpt2-tiny');

let b, dir;
before(async () => {
  b = await launch();
  dir = await mkdtemp(join(tmpdir(), 'aw-figure-'));
});
after(async () => {
  await b?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Each canvas of the heatmap as [width, height, FNV-1a of its pixels]. */
function pictures(page) {
  return page.evaluate(() =>
    [...document.querySelector('#heatmap').shadowRoot.querySelectorAll('canvas')].map((c) => {
      const d = c.getContext('2d').getImageData(0, 0, Math.max(1, c.width), Math.max(1, c.height)).data;
      let h = 0x811c9dc5;
      for (let i = 0; i < d.length; i++) h = Math.imul(h ^ d[i], 0x01000193) >>> 0;
      return [c.width, c.height, c.hidden ? 'hidden' : h];
    }),
  );
}

/** The file's one page of the demo. */
const demo = () => b.shared('/?model=copy', demoReady);

/** The demo moved in place to `query` (a new load with `load`), with the heatmap drawn for its model. */
async function openDemo(page, query, model, { load = false } = {}) {
  if (load) {
    await page.goto(b.url(`/?${query}`));
    await demoReady(page);
  } else await demoMoveTo(page, `?${query}`, model);
  await page.waitForFunction(
    (m) =>
      window.attentionDemo.state.model === m &&
      window.attentionDemo.source?.name === m &&
      document.querySelector('#heatmap').shown !== null,
    model,
    { timeout: 20_000 },
  );
  await demoSettled(page);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
}

/** Saves the heatmap's export through its button ('JSON' | 'SVG'); returns the file's path. */
async function exportHeatmap(page, which, name) {
  const button = page.locator('#heatmap .exports button', { hasText: which });
  await button.scrollIntoViewIfNeeded();
  const [dl] = await Promise.all([page.waitForEvent('download'), button.click()]);
  const path = join(dir, name);
  await dl.saveAs(path);
  return path;
}

async function openFigure(page, path, outcome = 'opened') {
  await page.evaluate(() => {
    delete document.documentElement.dataset.figure;
  });
  await page.setInputFiles('#figure-file', path);
  await page.waitForFunction((o) => document.documentElement.dataset.figure === o, outcome, {
    timeout: 20_000,
  });
  await demoSettled(page);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
}

test("the heatmap's JSON from a preset, opened in the demo on another preset, redraws the same picture", async () => {
  const { page, watch } = await demo();
  await openDemo(page, 'model=sort&t=3+1+4+1+5+%7C+1+1+3&layer=1', 'sort');
  // A click on head 1's tile: its query row 2 becomes the bars (the tile is the widget's, the row the demo's).
  await page.locator('#heatmap').scrollIntoViewIfNeeded();
  const q = await page.$eval('#heatmap', (el) => el.cellCenter(1, 2, 1));
  await page.mouse.click(q.x, q.y);
  await page.waitForFunction(() => window.attentionDemo.state.query === 2);
  await page.evaluate(() => {
    const hm = document.querySelector('#heatmap');
    hm.shadowRoot.activeElement?.blur();
    for (const c of hm.shadowRoot.querySelectorAll('canvas'))
      c.dispatchEvent(new PointerEvent('pointerleave'));
  });
  await page.mouse.move(0, 0);
  await demoSettled(page);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
  const before = await pictures(page);
  const stateBefore = await page.evaluate(() => window.attentionDemo.state);
  const json = await exportHeatmap(page, 'JSON', 'heatmap.json');
  const exported = JSON.parse(await readFile(json, 'utf8'));
  assert.equal(exported.state.widget, 'attention-heatmap');
  assert.equal(exported.state.context.model.name, 'sort');
  assert.match(exported.state.context.search, /model=sort/);
  const svg = await exportHeatmap(page, 'SVG', 'heatmap.svg');

  await openDemo(page, 'model=copy', 'copy');
  assert.notDeepEqual(await pictures(page), before, 'another preset draws another picture');
  await openFigure(page, json);
  assert.deepEqual(await pictures(page), before, 'the heatmap canvases are pixel-identical');
  const s = await page.evaluate(() => window.attentionDemo.state);
  for (const k of ['model', 'text', 'layer', 'view', 'query', 'step', 'head'])
    assert.deepEqual(s[k], stateBefore[k], k);
  assert.equal(s.layer, 1);
  assert.match(page.url(), /model=sort/, "the link is the figure's");
  assert.match(
    await page.textContent('#figure-note'),
    /Opened “heatmap\.json”: a <attention-heatmap> figure of Trained: sort/,
  );

  // The SVG figure does the same, from its <metadata>.
  await openDemo(page, 'model=reverse', 'reverse');
  await openFigure(page, svg);
  assert.deepEqual(await pictures(page), before, 'from the SVG: pixel-identical');
  assert.deepEqual(watch.errors, []);
});

test("the seeded layer: a figure reproduces its settings; a folder's figure names the files to open", async () => {
  const { page, watch } = await demo();
  await openDemo(
    page,
    'model=seeded&t=Figures+you+can+open+again&d=24&h=3&m=causal&view=mean&pe=rope',
    'seeded',
  );
  const before = await pictures(page);
  const json = await exportHeatmap(page, 'JSON', 'seeded.json');
  await openDemo(page, 'model=seeded', 'seeded');
  assert.notDeepEqual(await pictures(page), before);
  await openFigure(page, json);
  assert.deepEqual(await pictures(page), before, 'pixel-identical');
  const s = await page.evaluate(() => window.attentionDemo.state);
  assert.deepEqual([s.dModel, s.heads, s.mask, s.view, s.positional], [24, 3, 'causal', 'mean', 'rope']);

  // The same figure as if it came from an opened folder: the demo says what to open and stays as it is.
  const fig = JSON.parse(await readFile(json, 'utf8'));
  fig.state.context.search = '?model=folder&t=Hello';
  fig.state.context.model = {
    name: 'folder',
    label: 'Folder: tiny-gpt2 (GPT2LMHeadModel)',
    ref: null,
    folderName: 'tiny-gpt2',
    files: ['config.json', 'model.safetensors', 'tokenizer.json'],
  };
  const folder = join(dir, 'folder.json');
  await writeFile(folder, JSON.stringify(fig));
  const url = page.url();
  await openFigure(page, folder, 'needs-files');
  const note = await page.textContent('#figure-note');
  assert.match(note, /tiny-gpt2/);
  assert.match(note, /config\.json, model\.safetensors, tokenizer\.json/);
  assert.equal(page.url(), url, 'nothing changed');
  assert.deepEqual(await pictures(page), before);
  // Not a figure at all: a readable error.
  const bad = join(dir, 'bad.json');
  await writeFile(bad, '{"nothing": 1}');
  await openFigure(page, bad, 'error');
  assert.match(await page.textContent('#figure-note'), /no widget state/);
  assert.deepEqual(watch.errors, []);
});

test('a figure of an opened folder: names its files until the folder is open again, then redraws the same picture', async () => {
  const { page, watch } = await demo();
  await openDemo(page, 'model=copy', 'copy');
  await page.setInputFiles('#model-folder', FOLDER);
  await page.waitForFunction(
    () => window.attentionDemo.source?.name === 'folder' && document.querySelector('#heatmap').data !== null,
    null,
    { timeout: 30_000 },
  );
  await demoSettled(page);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
  const before = await pictures(page);
  const json = await exportHeatmap(page, 'JSON', 'folder-heatmap.json');
  const ctx = JSON.parse(await readFile(json, 'utf8')).state.context;
  assert.equal(ctx.model.ref, null);
  assert.ok(
    ctx.model.files.includes('config.json') && ctx.model.files.includes('model.safetensors'),
    `files: ${ctx.model.files}`,
  );
  // A new page has no folder open: the figure says what to open.
  await openDemo(page, 'model=copy', 'copy', { load: true });
  await openFigure(page, json, 'needs-files');
  assert.match(
    await page.textContent('#figure-note'),
    /Open that folder again \(Open a model folder…: .*config\.json.*model\.safetensors/,
  );
  assert.equal(await page.evaluate(() => window.attentionDemo.state.model), 'copy');
  // With the folder open again, the figure opens.
  await page.setInputFiles('#model-folder', FOLDER);
  await page.waitForFunction(() => window.attentionDemo.source?.name === 'folder', null, { timeout: 30_000 });
  await openFigure(page, json);
  assert.deepEqual(await pictures(page), before, 'pixel-identical');
  assert.deepEqual(watch.errors, []);
});
