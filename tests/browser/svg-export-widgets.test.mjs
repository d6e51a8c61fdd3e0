// SVG export of the other widgets (<attention-model-view>, <attention-steps>, <positional-encoding-heatmap>,
// <attention-trainer>, <alibi-bias>, <gqa-heads>): vector cells in the colours the canvas shows, the state
// in <metadata>; a model view over its size limit says so and offers one layer; the SVG buttons download
// the same documents; palettes and the dark theme. All under the strict CSP, no console error, axe clean.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { assertCleanPage, axeViolations, join } from './helpers.mjs';
import {
  useSvgExportPage,
  page,
  watch,
  inspect,
  assertColoursMatch,
  assertWellFormed,
} from './svg-export-page.mjs';

useSvgExportPage();

test('<attention-model-view>: layer × head grid, one colour bar, one layer on request, size limit offers one layer', async () => {
  const r = await inspect('#mv');
  assertWellFormed(r, 'model view');
  assert.equal(r.state.panels.length, 6);
  assertColoursMatch(r, 'model view');
  assert.ok(r.texts.includes('Layer 0') && r.texts.includes('Layer 1') && r.texts.includes('L1 · H2'));
  assert.equal(r.texts.filter((t) => t === '0.50').length, 1, 'one colour bar for all tiles');
  const one = await page.$eval('#mv', (el) => el.toSVG({ layer: 1 }));
  assert.match(one, /Layer 1/);
  assert.doesNotMatch(one, />Layer 0</);
  const tooBig = await page.$eval('#mv', (el) => {
    try {
      el.toSVG({ maxBytes: 2000 });
      return null;
    } catch (e) {
      return { code: e.code, message: e.message };
    }
  });
  assert.equal(tooBig.code, 'SVG_TOO_LARGE');
  assert.match(tooBig.message, /over the limit .*one layer.*toSVG\(\{ layer: n \}\)/);
  const bad = await page.$eval('#mv', (el) => {
    try {
      el.toSVG({ layer: 9 });
      return null;
    } catch (e) {
      return e.message;
    }
  });
  assert.match(bad, /layer must be an integer in 0…1/);
});

test('<attention-model-view>: over the limit, the SVG button saves the layer last opened and says so', async () => {
  const limit = await page.$eval('#mv', (el) => {
    const all = el.toSVG().length,
      one = el.toSVG({ layer: 1 }).length;
    const proto = Object.getPrototypeOf(el).toSVG,
      max = Math.floor((all + one) / 2);
    el.toSVG = (o = {}) => proto.call(el, { maxBytes: max, ...o }); // as if the model were large
    el.open(1, 2);
    return { all, one, max };
  });
  assert.ok(limit.one < limit.max && limit.max < limit.all);
  const button = page.locator('#mv .exports button', { hasText: 'SVG' });
  await button.scrollIntoViewIfNeeded();
  const [dl] = await Promise.all([page.waitForEvent('download'), button.click()]);
  assert.equal(dl.suggestedFilename(), 'attention-model-view-layer1.svg');
  const text = (await readFile(await dl.path())).toString('utf8');
  assert.match(text, />Layer 1</);
  assert.doesNotMatch(text, />Layer 0</);
  const readout = await page.$eval('#mv', (el) => {
    delete el.toSVG;
    return el.shadowRoot.querySelector('.readout').textContent;
  });
  assert.match(readout, /over the limit .*saved layer 1 only/);
});

test('the SVG buttons download the same documents; the page stays axe-clean under the CSP', async () => {
  for (const sel of ['#one', '#mv', '#steps', '#pe', '#alibi', '#gqa']) {
    const button = page.locator(`${sel} .exports button`, { hasText: 'SVG' });
    await button.scrollIntoViewIfNeeded();
    const [dl] = await Promise.all([page.waitForEvent('download'), button.click()]);
    assert.match(dl.suggestedFilename(), /\.svg$/);
    const text = (await readFile(await dl.path())).toString('utf8');
    assert.equal(text, await page.$eval(sel, (el) => el.toSVG()), `${sel}: the button saves toSVG()`);
  }
  assert.deepEqual(
    await page.$eval('#one', (el) =>
      [...el.shadowRoot.querySelectorAll('.exports button')].map((x) => x.textContent),
    ),
    ['PNG', 'SVG', 'CSV', 'JSON'],
  );
  // The whole page, the selected step tab of <attention-steps> included: white on the default accent
  // (#b94a08, for a page that does not set --aw-accent) is 5.2:1.
  const found = await axeViolations(page);
  assert.deepEqual(found, [], `axe-core violations:\n${found.join('\n')}`);
  await assertCleanPage(page, watch);
});

test('<attention-steps>: masked (−∞ hatched), signed scores (diverging) and weights (Σ column) as SVG', async () => {
  const masked = await inspect('#steps');
  assertWellFormed(masked, 'steps: masked');
  assert.equal(masked.state.step, 'masked');
  assert.equal(masked.state.head, 1);
  assert.ok(
    await page.$eval('#steps', (el) => Array.from(el.current.data).includes(-Infinity)),
    'the step has −∞ cells',
  );
  assertColoursMatch(masked, 'steps: masked');
  assert.ok(masked.texts.includes('masked (−∞)'), 'the legend explains the masked colour');
  for (const step of ['scores', 'weights']) {
    await page.$eval(
      '#steps',
      (el, s) => {
        el.goTo(s);
        el.refresh();
      },
      step,
    );
    const r = await inspect('#steps');
    assertWellFormed(r, `steps: ${step}`);
    assert.equal(r.state.step, step);
    assertColoursMatch(r, `steps: ${step}`);
    if (step === 'scores') assert.equal(r.state.domain.map, 'diverging');
    if (step === 'weights') assert.ok(r.texts.includes('Σ row') && r.texts.includes('1.000'), 'the Σ column');
  }
});

test('<positional-encoding-heatmap>: the encoding as vector cells and its curves as polylines', async () => {
  const r = await inspect('#pe');
  assertWellFormed(r, 'positional encoding');
  assertColoursMatch(r, 'positional encoding');
  assert.deepEqual([r.state.length, r.state.dModel, r.state.base, r.state.dims], [24, 16, 10000, [0, 3, 9]]);
  const lines = await page.$eval('#pe', (el) => (el.toSVG().match(/<polyline /g) || []).length);
  assert.equal(lines, 3, 'one polyline per curve');
  assert.ok(
    r.texts.some((t) => t.startsWith('dim 3 (cos')),
    "the curves' legend",
  );
});

test('<attention-trainer>: loss and accuracy curves as polylines, every head as vector cells, one colour bar', async () => {
  await page.$eval('#tr', (el) => el.stepOnce(12));
  await page.waitForFunction(
    () => {
      // ... and drawn: the status line and the heads are drawn together from the snapshot.
      const el = document.querySelector('#tr'),
        m = el.snapshot;
      return (
        m &&
        m.step >= 12 &&
        m.history.length >= 2 &&
        el.shadowRoot.querySelector('.status').textContent.startsWith(`step ${m.step} ·`)
      );
    },
    null,
    { timeout: 30_000 },
  );
  const r = await inspect('#tr');
  assertWellFormed(r, 'trainer');
  const { L, H, history } = await page.$eval('#tr', (el) => ({
    L: el.snapshot.attention.length,
    H: el.snapshot.heads,
    history: el.snapshot.history.length,
  }));
  assert.equal(r.state.panels.length, L * H);
  assertColoursMatch(r, 'trainer');
  assert.equal(r.state.widget, 'attention-trainer');
  assert.ok(r.state.step >= 12);
  const svg = await page.$eval('#tr', (el) => el.toSVG());
  assert.equal((svg.match(/<polyline /g) || []).length, 3, 'loss, token accuracy, sequence accuracy');
  assert.match(svg, /stroke-dasharray="5 4"/, 'the sequence accuracy is dashed, as on screen');
  for (const t of ['Loss', 'Accuracy', 'step', 'tokens', 'sequences', 'Layer 0 · head 1'])
    assert.ok(r.texts.includes(t), t);
  assert.equal((svg.match(/fill="url\(#aw-cbar-/g) || []).length, 1, 'one colour bar');
  assert.ok(history >= 2);
});

test('<alibi-bias> and <gqa-heads>: their heatmaps as vector cells, laid out as on screen', async () => {
  await page.waitForFunction(() =>
    ['#alibi', '#gqa'].every((s) => document.querySelector(s).dataset.ready !== undefined),
  );
  const a = await inspect('#alibi');
  assertWellFormed(a, 'alibi');
  assert.equal(a.state.widget, 'alibi-bias');
  assert.equal(a.state.panels.length, 2);
  assertColoursMatch(a, 'alibi');
  assert.ok(a.texts.includes('Σ row'), 'the weights keep their Σ column');
  const g = await inspect('#gqa');
  assertWellFormed(g, 'gqa');
  assert.deepEqual([g.state.heads, g.state.kvHeads, g.state.panels.length], [4, 2, 4]);
  assertColoursMatch(g, 'gqa');
});

test('palette: cividis and gray recolour screen and SVG alike; the colour bar follows', async () => {
  await page.evaluate(() => {
    document.querySelector('#all').palette = 'cividis';
    document.querySelector('#mv').setAttribute('palette', 'gray');
  });
  await page.waitForFunction(() => document.querySelector('#all')._domain?.map === 'cividis');
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(r)));
  const c = await inspect('#all');
  assertWellFormed(c, 'cividis');
  assert.equal(c.state.palette, 'cividis');
  assertColoursMatch(c, 'cividis');
  const lut = await page.evaluate(async () =>
    Array.from((await import('/web/widgets/figures/colormap.js')).colormap('cividis')),
  );
  const inLut = (f) => {
    for (let i = 0; i < 256; i++)
      if (lut[3 * i] === f[0] && lut[3 * i + 1] === f[1] && lut[3 * i + 2] === f[2]) return true;
    return false;
  };
  assert.ok(
    c.samples.every((s) => inLut(s.fill)),
    'every cell has a cividis colour',
  );
  const g = await inspect('#mv');
  assertColoursMatch(g, 'gray');
  assert.equal(g.state.palette, 'gray');
  assert.ok(
    g.samples.every((s) => s.fill[0] === s.fill[1] && s.fill[1] === s.fill[2]),
    'gray cells are grey',
  );
  const svg = await page.$eval('#mv', (el) => el.toSVG());
  assert.match(svg, /<linearGradient id="aw-cbar-gray"/);
  await page.evaluate(() => {
    document.querySelector('#all').removeAttribute('palette');
    document.querySelector('#mv').palette = 'nonsense';
  });
  await page.waitForFunction(() => document.querySelector('#all')._domain?.map === 'viridis');
  assert.equal(
    await page.$eval('#mv', (el) => el.palette),
    'viridis',
    'an unknown palette falls back to viridis',
  );
});

test('dark theme: the SVG has the page background and the screen colours', async () => {
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.evaluate(() => document.querySelector('#all').refresh());
  const r = await inspect('#all');
  assertWellFormed(r, 'dark');
  assert.equal(r.state.theme, 'dark');
  assert.equal(r.bg, '#15171c', 'the page background');
  assertColoursMatch(r, 'dark');
  await page.emulateMedia({ colorScheme: 'light' });
  await assertCleanPage(page, watch);
});
