// SVG export of the tutorial views (third slice): <rope-explorer>, <softmax-playground>,
// <query-explorer>, <variance-experiment>, <mask-fill-compare>, <kv-cache-stepper> and <mask-editor>
// each return from toSVG() a document that parses as XML, refers to nothing outside itself (no link,
// no <image>, no <foreignObject>, no raster data), escapes its text, carries the widget's state in
// <metadata> (widgetState), and — where it draws cells or bars — has the canvas's colours: the fill
// of the shape covering each sampled point equals the canvas pixel there within 2/255, and so does
// Chromium's rendering of the SVG (loaded as an image). Cells are one <path> per colour level. The SVG
// buttons save toSVG(); light and dark themes; all under the strict CSP with no console error.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { assertCleanPage, launch, openWidgetPage } from './helpers.mjs';

const TOL = 2; // of 255
const W = 'style="display:block;width:900px"';
const BODY = `
  <rope-explorer id="rope" ${W} d="8" seed="2"></rope-explorer>
  <softmax-playground id="soft" ${W} logits="2,1,0.5,-1" scale="2" labels="a&lt;b,&quot;q&quot;,it's,&amp;"></softmax-playground>
  <query-explorer id="query" ${W} labels="cat,&lt;dog&gt;,car,bus"></query-explorer>
  <variance-experiment id="var" ${W} samples="300" dims="4,16,64"></variance-experiment>
  <mask-fill-compare id="fill" ${W} masked="1,3"></mask-fill-compare>
  <kv-cache-stepper id="kv" ${W} length="6" embed-dim="16" heads="4" kv-heads="2"></kv-cache-stepper>
  <mask-editor id="mask" ${W} text="the cat &lt;sat&gt; on the mat" mask="causal" toggles="3.1"></mask-editor>`;
const ALL = ['#rope', '#soft', '#query', '#var', '#fill', '#kv', '#mask'];

let b, page, watch;
before(async () => {
  b = await launch({ viewport: { width: 1100, height: 900 } });
  ({ page, watch } = await openWidgetPage(
    b,
    'svg',
    'svg-views',
    BODY,
    'rope-explorer, softmax-playground, query-explorer, variance-experiment, mask-fill-compare, kv-cache-stepper, mask-editor',
  ));
  await page.evaluate(() => {
    const kv = document.querySelector('#kv');
    for (let i = 0; i < 4; i++) kv.step();
  });
  await page.waitForFunction(() => document.querySelector('#kv').length === 4);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
});
after(async () => {
  await b?.close();
});

/**
 * In the page: el.toSVG() parsed and checked. Samples: heatmap cells (a quarter into each cell, clear
 * of its number, border and hatching) and the middle of every bar taller than 4 px, each as
 * { canvas: the pixel of the widget's canvas there, fill: the fill of the SVG shape there, image: the
 * SVG as Chromium renders it there }.
 */
function inspect(selector) {
  return page.evaluate(async (selector) => {
    const el = document.querySelector(selector);
    const svg = el.toSVG();
    const { readSvg } = await import('/tests/browser/svg-inspect.js');
    const {
      doc,
      parseError,
      external,
      state,
      fillAt,
      hex,
      image: { ctx: octx, dpr },
    } = await readSvg(svg);
    // One path per colour level within each cell size's scale() group.
    const onePerLevel = [...doc.querySelectorAll('g[transform^="scale("]')].every((g) => {
      const fills = [...g.querySelectorAll('path')].map((p) => p.getAttribute('fill'));
      return fills.length === new Set(fills).size;
    });
    const canvases = [...el.shadowRoot.querySelectorAll('canvas')];
    const samples = [];
    const sample = (panel, sx, sy, fill, what) => {
      const canvas = canvases[panel.canvas],
        box = canvas.getBoundingClientRect(),
        d = canvas.width / box.width;
      const canvasPx = [
        ...canvas
          .getContext('2d')
          .getImageData(Math.floor((sx - panel.x) * d), Math.floor((sy - panel.y) * d), 1, 1)
          .data.slice(0, 3),
      ];
      const imagePx = [
        ...octx.getImageData(Math.floor(sx * dpr), Math.floor(sy * dpr), 1, 1).data.slice(0, 3),
      ];
      samples.push({ what, canvas: canvasPx, fill, image: imagePx });
    };
    for (const panel of state.panels) {
      if (panel.kind === 'heatmap') {
        const { x, y, w, h } = panel.cells;
        for (let r = 0; r < panel.rows; r++)
          for (let c = 0; c < panel.cols; c++) {
            const sx = x + ((c + 0.25) * w) / panel.cols,
              sy = y + ((r + 0.25) * h) / panel.rows;
            sample(panel, sx, sy, fillAt(sx, sy), `cell ${r},${c}`);
          }
      } else if (panel.kind === 'bars') {
        for (const [i, bar] of panel.bars.entries())
          if (bar.h > 4) sample(panel, bar.x + bar.w / 2, bar.y + bar.h / 2, hex(panel.fill), `bar ${i}`);
      }
    }
    return {
      parseError,
      external,
      state,
      samples,
      onePerLevel,
      groups: doc.querySelectorAll('g[transform^="scale("]').length,
      texts: [...doc.querySelectorAll('text')].map((t) => t.textContent),
      kinds: state.panels.map((p) => p.kind),
      polylines: doc.querySelectorAll('polyline').length,
      bg: doc.querySelector('svg > rect').getAttribute('fill'),
      stateNow: JSON.stringify(el.state),
    };
  }, selector);
}

function assertWellFormed(r, label) {
  assert.equal(r.parseError, false, `${label}: parses as XML`);
  assert.deepEqual(r.external, [], `${label}: no external reference, no raster`);
  assert.equal(JSON.stringify(r.state.widgetState), r.stateNow, `${label}: the widget's state in <metadata>`);
}

function assertColoursMatch(r, label, min = 1) {
  assert.ok(r.samples.length >= min, `${label}: ${r.samples.length} points sampled`);
  const far = (a, c) => !c || a.some((v, i) => Math.abs(v - c[i]) > TOL);
  const badFill = r.samples.filter((s) => far(s.canvas, s.fill));
  assert.deepEqual(
    badFill.slice(0, 5),
    [],
    `${label}: SVG fill = canvas pixel (${badFill.length} of ${r.samples.length} differ)`,
  );
  const badImage = r.samples.filter((s) => far(s.canvas, s.image));
  assert.deepEqual(
    badImage.slice(0, 5),
    [],
    `${label}: the SVG rendered by Chromium = canvas (${badImage.length} of ${r.samples.length} differ)`,
  );
}

test('<kv-cache-stepper> and <mask-editor>: cells as vector paths (one per colour level) in the canvas colours', async () => {
  const kv = await inspect('#kv');
  assertWellFormed(kv, 'kv');
  assert.deepEqual(kv.kinds, ['heatmap', 'heatmap', 'heatmap'], 'x, the cached keys, the weights');
  assert.ok(kv.onePerLevel && kv.groups >= 1, 'one path per colour level (per cell size)');
  assertColoursMatch(kv, 'kv', 6 * 16 + 4 * 4 + 4 * 4);
  assert.equal(kv.state.length, 4);
  assert.ok(kv.texts.includes('The cached keys') && kv.texts.includes('new query 3'), 'headings and titles');
  const mask = await inspect('#mask');
  assertWellFormed(mask, 'mask');
  assert.deepEqual(mask.kinds, ['heatmap', 'heatmap']);
  assertColoursMatch(mask, 'mask', 2 * 7 * 7);
  assert.ok(mask.texts.includes('<'), 'token text (markup), escaped in the file, reads back as written');
  assert.ok(
    mask.texts.includes('masked (0 → score −∞)') && mask.texts.includes('Σ row'),
    'the mask key and the Σ column',
  );
  assert.equal(mask.state.mode, 'causal');
});

test('<softmax-playground> and <mask-fill-compare>: bars in the canvas colours, curves as polylines', async () => {
  const soft = await inspect('#soft');
  assertWellFormed(soft, 'softmax');
  assert.deepEqual(soft.kinds, ['bars', 'chart']);
  assertColoursMatch(soft, 'softmax', 3);
  assert.ok(soft.polylines >= 4, 'one curve per distinct logit');
  assert.ok(
    soft.texts.some((t) => t.startsWith('a<b = ')) && soft.texts.some((t) => t.startsWith('"q"')),
    'labels escaped and read back',
  );
  const fill = await inspect('#fill');
  assertWellFormed(fill, 'fill');
  assert.deepEqual(fill.kinds, ['bars', 'bars']);
  assertColoursMatch(fill, 'mask-fill', 4);
  assert.ok(fill.texts.includes('This library: boolean mask, scores → −∞'), 'the panel headings');
  assert.deepEqual(fill.state.masked, [1, 3]);
});

test('<rope-explorer>, <query-explorer>, <variance-experiment>: vector charts and planes', async () => {
  const rope = await inspect('#rope');
  assertWellFormed(rope, 'rope');
  assert.deepEqual(rope.kinds, ['plane', 'chart', 'chart']);
  assert.ok(rope.polylines >= 5, 'per-pair lines and totals as polylines');
  assert.ok(
    rope.texts.some((t) => t.startsWith('pair 0 (dims 0, 4)')),
    "the plane's title",
  );
  const q = await inspect('#query');
  assertWellFormed(q, 'query');
  assert.deepEqual(q.kinds, ['plane', 'plane']);
  assert.ok(q.texts.some((t) => t.startsWith('<dog> ')) && q.texts.includes('output'), 'labels as text');
  assert.equal(q.state.weights.length, 4);
  const v = await inspect('#var');
  assertWellFormed(v, 'variance');
  assert.deepEqual(v.kinds, ['chart']);
  assert.equal(v.state.results.length, 3);
  assert.ok(
    v.texts.includes('1/4') && v.texts.includes('d_k (log scale)'),
    "log axes with the screen's tick text",
  );
  const svg = await page.$eval('#var', (el) => el.toSVG());
  assert.equal((svg.match(/<circle /g) || []).length, 6, 'a marker per measured point');
});

test('the SVG buttons save toSVG(); dark theme has the page background and the screen colours', async () => {
  for (const sel of ALL) {
    const button = page.locator(`${sel} .exports button`, { hasText: 'SVG' });
    await button.scrollIntoViewIfNeeded();
    const [dl] = await Promise.all([page.waitForEvent('download'), button.click()]);
    assert.match(dl.suggestedFilename(), /\.svg$/);
    const text = (await readFile(await dl.path())).toString('utf8');
    assert.equal(text, await page.$eval(sel, (el) => el.toSVG()), `${sel}: the button saves toSVG()`);
  }
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.evaluate((all) => {
    for (const s of all) document.querySelector(s).refresh();
  }, ALL);
  for (const sel of ['#kv', '#soft', '#mask']) {
    const r = await inspect(sel);
    assertWellFormed(r, `${sel} dark`);
    assert.equal(r.state.theme, 'dark');
    assert.equal(r.bg, '#15171c', 'the page background');
    assertColoursMatch(r, `${sel} dark`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await assertCleanPage(page, watch);
});

test('<query-explorer> with 3-component vectors draws no plane: toSVG says so, the SVG button shows it as the error line', async () => {
  await page.evaluate(() => {
    const el = document.querySelector('#query');
    el.setAttribute('query', '1,0,0.5');
    el.setAttribute('keys', '1,0,0; 0,1,0; 0,0,1; 1,1,1');
    el.setAttribute('values', '1,2,3; 3,2,1; 0,1,0; 1,0,1');
  });
  // It has drawn the 3-component query (its result is what is shown).
  await page.waitForFunction(() => document.querySelector('#query').result?.query.length === 3, null, {
    timeout: 20_000,
  });
  const r = await page.evaluate(() => {
    const el = document.querySelector('#query');
    let message = null;
    try {
      el.toSVG();
    } catch (e) {
      message = e.message;
    }
    el.download('svg');
    const err = el.shadowRoot.querySelector('.error');
    return { message, shown: !err.hidden, text: err.textContent };
  });
  assert.match(r.message, /planes are drawn only for vectors of 2 components/);
  assert.ok(r.shown && r.text === r.message, 'the error line says why no SVG was saved');
  await assertCleanPage(page, watch);
});
