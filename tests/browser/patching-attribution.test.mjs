// <patching-view method="both">: attribution patching beside exact patching on the induction preset
// (a model set as the property: both run in the page). The exact grid equals model.patch, the
// attribution grid model.attributionPatch (and the 'mlp' component on a model with MLPs), the
// correlation printed equals Pearson's r computed
// here from the two results, the scatter has one point per entry, the exports hold both, the second
// grid takes the keyboard, axe finds nothing and the widget fits 360 px. One page load.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertCleanPage, axeViolations, join, launch, openWidgetPage } from './helpers.mjs';

// The induction preset and the inputs of interp-widgets-page.mjs (not imported: its hooks would join
// this file's suite when the browser tests run grouped in one process).
const SRC = '/web/presets/induction.safetensors';
const CLEAN = [5, 12, 3, 9, 14, 0, 7, 11, 2, 3, 9, 14, 0];
const CORRUPTED = [5, 12, 3, 9, 14, 8, 7, 11, 2, 3, 9, 14, 0];
const kSameTol = 1e-6; // the same wasm code on the same float32 weights
const maxDiff = (a, b) =>
  a.length !== b.length
    ? Infinity
    : Math.max(0, ...a.map((x, i) => (Number.isNaN(x) && Number.isNaN(b[i]) ? 0 : Math.abs(x - b[i]))));

let b;
before(async () => {
  b = await launch({ viewport: { width: 1000, height: 900 } });
});
after(async () => {
  await b?.close();
});

/** In the page: window.__ref = { attn, model } with a TinyTransformer of the preset. */
async function reference(page) {
  await page.evaluate(async (src) => {
    const attn = await import('/src/js/index.js');
    await attn.init();
    const bytes = new Uint8Array(await (await fetch(src)).arrayBuffer());
    window.__ref = { attn, model: attn.TinyTransformer.fromSafetensors(bytes) };
  }, SRC);
}

/** Pearson's r in doubles, over the pairs where both are finite. */
function pearson(a, b) {
  const pairs = a.map((x, i) => [x, b[i]]).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const n = pairs.length;
  const mx = pairs.reduce((s, [x]) => s + x, 0) / n,
    my = pairs.reduce((s, [, y]) => s + y, 0) / n;
  let sxy = 0,
    sxx = 0,
    syy = 0;
  for (const [x, y] of pairs) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
    syy += (y - my) ** 2;
  }
  return sxy / Math.sqrt(sxx * syy);
}

/** Runs the widget (method both, component `component`) and the library on the same plan, in the page. */
function runBoth(page, component) {
  return page.evaluate(
    async ({ clean, corrupted, component }) => {
      const { model } = window.__ref;
      const el = document.querySelector('patching-view');
      el.clean = clean;
      el.corrupted = corrupted;
      el.component = component;
      const out = await el.run();
      const { token, against } = el.plan();
      const o = { clean, corrupted, token, against, component };
      const exact = await model.patch(o);
      const attribution = await model.attributionPatch(o);
      const s = el.shown;
      return {
        out: { result: Array.from(out.result), attribution: Array.from(out.attribution) },
        exact: Array.from(s.exact),
        attribution: Array.from(s.attribution),
        refExact: Array.from(exact.result.data),
        refAttribution: Array.from(attribution.result.data),
        correlation: s.correlation,
        agreement: el.shadowRoot.querySelector('.agreement').textContent,
        points: Number(
          /^Scatter of (\d+) entries/.exec(
            el.shadowRoot.querySelector('.scatter canvas').getAttribute('aria-label'),
          )[1],
        ),
        csv: el.getCSV().trim().split('\n'),
        json: JSON.parse(el.getJSON()),
        svg: el.toSVG(),
        png: (() => {
          const c = el.pngCanvas();
          return [c.height, el.shadowRoot.querySelector('canvas').height];
        })(),
      };
    },
    { clean: CLEAN, corrupted: CORRUPTED, component },
  );
}

test('exact and attribution patching side by side: the correlation, the scatter, the exports, keyboard, axe, 360 px', async () => {
  const { page, watch } = await openWidgetPage(
    b,
    'interp',
    'patching-attribution',
    `<head-scores src="${SRC}" ids="3 1 4"></head-scores><patching-view method="both"></patching-view>`,
    'head-scores',
  );
  await reference(page);
  await page.evaluate(() => {
    document.querySelector('patching-view').model = window.__ref.model;
  });
  const r = await runBoth(page, 'head');
  assert.ok(maxDiff(r.exact, r.refExact) <= kSameTol, 'the exact grid is model.patch');
  assert.ok(maxDiff(r.attribution, r.refAttribution) <= kSameTol, 'the attribution grid is attributionPatch');
  assert.deepEqual(r.out.result, r.exact);
  assert.deepEqual(r.out.attribution, r.attribution);
  const want = pearson(r.exact, r.attribution);
  assert.ok(Math.abs(r.correlation - want) <= 1e-9, `r = ${r.correlation}, computed ${want}`);
  assert.match(r.agreement, new RegExp(`r = ${want.toFixed(3)}`));
  assert.equal(r.points, r.exact.length, 'one point per entry');
  assert.equal(r.csv[0], 'layer,head,restored,attribution');
  assert.equal(r.csv.length, r.exact.length + 1);
  assert.equal(r.json.correlation, r.correlation);
  assert.equal(r.json.attribution.flat().length, r.exact.length);
  assert.ok(r.png[0] > r.png[1], 'the PNG holds more than the first grid');
  // The SVG: both grids and the scatter, its heading the correlation.
  assert.match(r.svg, />Exact \(activation patching\)</);
  assert.match(r.svg, />Attribution patching</);
  assert.match(r.svg, new RegExp(`Agreement: r = ${want.toFixed(3)}`));

  // The MLP outputs (layer × position) on a model with MLPs (the induction preset has none): a seeded
  // TinyTransformer of the preset's vocabulary, then the preset again.
  const swap = (mlp) =>
    page.evaluate((mlp) => {
      const { attn } = window.__ref;
      window.__ref.preset ??= window.__ref.model;
      window.__ref.model = mlp
        ? new attn.TinyTransformer({
            vocabSize: 16,
            maxLength: 16,
            dModel: 16,
            numHeads: 2,
            numLayers: 2,
            seed: 3,
          })
        : window.__ref.preset;
      document.querySelector('patching-view').model = window.__ref.model;
    }, mlp);
  await swap(true);
  const m = await runBoth(page, 'mlp');
  assert.equal(m.csv[0], 'layer,position,restored,attribution');
  assert.ok(maxDiff(m.exact, m.refExact) <= kSameTol && maxDiff(m.attribution, m.refAttribution) <= kSameTol);
  assert.ok(Math.abs(m.correlation - pearson(m.exact, m.attribution)) <= 1e-9);
  await swap(false);
  await runBoth(page, 'head');

  // The keyboard reaches the attribution grid; a cell names both values.
  const grids = await page.evaluate(
    () => [...document.querySelector('patching-view').shadowRoot.querySelectorAll('[role="grid"]')].length,
  );
  assert.equal(grids, 2);
  await page
    .locator('patching-view')
    .evaluate((el) =>
      el.shadowRoot.querySelectorAll('[role=grid]')[1].querySelector('[role=gridcell]').focus(),
    );
  await page.keyboard.press('ArrowRight');
  const readout = await page.evaluate(
    () => document.querySelector('patching-view').shadowRoot.querySelector('.readout').textContent,
  );
  assert.match(readout, /restores .* \(attribution estimate .*\)/);

  const found = await axeViolations(page);
  assert.deepEqual(found, [], `axe-core violations:\n${found.join('\n')}`);

  await page.setViewportSize({ width: 360, height: 800 });
  await page.evaluate(() => document.querySelector('patching-view').refresh());
  const widths = await page.evaluate(() => {
    const el = document.querySelector('patching-view');
    const inner = [...el.shadowRoot.querySelectorAll('canvas, select, input')]
      .filter((x) => !x.hidden)
      .map((x) => x.getBoundingClientRect().right);
    return {
      doc: document.documentElement.scrollWidth,
      right: el.getBoundingClientRect().right,
      inner: Math.max(...inner),
    };
  });
  assert.ok(widths.doc <= 360, `the page is ${widths.doc} px wide`);
  assert.ok(widths.inner <= widths.right + 0.5, `contents end at ${widths.inner} (box ${widths.right})`);
  await assertCleanPage(page, watch);
  await b.release(page);
});
