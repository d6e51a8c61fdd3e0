// SVG export of <attention-heatmap>: toSVG() returns a document that parses as XML, refers to nothing
// outside itself (no link, no <image>, no <foreignObject>, no raster data), draws its cells in the colours
// the canvas shows (the fill of the path covering each cell centre equals the canvas pixel there within
// 2/255), and renders in Chromium — loaded as an image — to the same colours at the cell centres. A 64 × 64
// heatmap stays under 250 KB; token text is escaped.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useSvgExportPage, page, inspect, assertColoursMatch, assertWellFormed } from './svg-export-page.mjs';

useSvgExportPage();

test('<attention-heatmap> one head: valid, self-contained SVG whose cells are the canvas colours', async () => {
  const r = await inspect('#one');
  assertWellFormed(r, 'one head');
  assertColoursMatch(r, 'one head');
  assert.equal(r.state.widget, 'attention-heatmap');
  assert.equal(r.state.view, '1');
  assert.equal(r.state.config.text, 'The quick brown fox jumps over the lazy dog while the cat sleeps.');
  assert.ok(r.texts.includes('fox'), 'token labels are text');
  assert.ok(r.texts.includes('0.00') && r.texts.includes('1.00'), 'the colour bar with its values');
  assert.ok(r.paths <= 256, 'one path per colour level');
});

test('<attention-heatmap> all heads: one colour scale shown once, every tile matches its canvas', async () => {
  const r = await inspect('#all');
  assertWellFormed(r, 'all heads');
  assert.equal(r.state.panels.length, 4);
  assertColoursMatch(r, 'all heads');
  for (const t of ['Head 0', 'Head 1', 'Head 2', 'Head 3']) assert.ok(r.texts.includes(t), t);
  assert.equal(r.texts.filter((t) => t === '0.50').length, 1, 'one colour bar');
  // width and fontSize: a narrower figure with larger text is still the same cells.
  const narrow = await inspect('#all', { width: 500, fontSize: 16 });
  assertWellFormed(narrow, 'all heads at 500 px');
  assert.ok(/width="(\d+)"/.exec(narrow.svgStart.slice(narrow.svgStart.indexOf('<svg')))[1] <= 500);
  assert.deepEqual(narrow.state.options, { width: 500, fontSize: 16, bars: false });
  assert.match(narrow.svgStart, /font-size="16"|<svg/);
  assert.deepEqual(
    narrow.samples.map((s) => s.fill),
    r.samples.map((s) => s.fill),
    'same cell colours at another width',
  );
});

test('<attention-heatmap> bars: true adds the query row’s bar chart, in the colour the screen draws it', async () => {
  const r = await inspect('#one', { bars: true });
  assertWellFormed(r, 'with bars');
  assertColoursMatch(r, 'with bars');
  const check = await page.$eval('#one', (el) => {
    const svg = el.toSVG({ bars: true });
    const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
    const o = el._barsOpts,
      n = o.values.length,
      bw = (o.width - 54) / n,
      top = 28 + (bw >= 30 ? 12 : 0);
    let i = 0;
    for (let k = 1; k < n; k++) if (o.values[k] > o.values[i]) i = k;
    const c = el._barsCanvas,
      d = c.width / c.getBoundingClientRect().width;
    const px = [
      ...c
        .getContext('2d')
        .getImageData(Math.floor((44 + (i + 0.5) * bw) * d), Math.floor((top + 125) * d), 1, 1)
        .data.slice(0, 3),
    ];
    const fills = [...doc.querySelectorAll('path:not([fill="none"])')]
      .filter((p) => !p.closest('g[transform^="scale("]'))
      .map((p) => p.getAttribute('fill'));
    return {
      px,
      fills,
      title: [...doc.querySelectorAll('text')].some((t) => t.textContent.startsWith('Query “')),
      taller:
        +doc.documentElement.getAttribute('height') >
        +new DOMParser().parseFromString(el.toSVG(), 'image/svg+xml').documentElement.getAttribute('height'),
    };
  });
  const hex = `#${check.px.map((v) => v.toString(16).padStart(2, '0')).join('')}`;
  assert.ok(check.fills.includes(hex), `the bars' fill ${check.fills} includes the canvas colour ${hex}`);
  assert.ok(check.title && check.taller, 'the chart and its title are below the heatmap');
});

test('<attention-heatmap> numbers inside big cells are text in the SVG', async () => {
  const r = await inspect('#small');
  assertWellFormed(r, 'small');
  const shown = await page.$eval('#small', (el) =>
    Array.from(el.shown.matrices[0].data, (v) => v.toFixed(2)),
  );
  for (const v of shown) assert.ok(r.texts.includes(v), `value ${v} written`);
});

test('a 64 × 64 heatmap: ≤ 250 KB, hostile token text escaped, colours match', async () => {
  const r = await inspect('#big');
  assertWellFormed(r, '64 × 64');
  assert.ok(r.size <= 250 * 1024, `64 × 64 SVG is ${r.size} bytes`);
  assertColoursMatch(r, '64 × 64');
  assert.ok(
    r.texts.some((t) => t.startsWith('<b>&amp;')),
    'markup in a token stays text',
  );
  assert.ok(
    r.texts.some((t) => t.startsWith('a\uFFFDb')),
    'a control character becomes U+FFFD',
  );
  assert.equal(r.state.queryTokens[0], '<b>&amp;', 'state round-trips through <metadata>');
  console.log(`# 64x64 heatmap SVG: ${r.size} bytes, ${r.paths} colour paths`);
});

test('any token text (random UTF-16 code units: controls, lone surrogates, markup) gives a well-formed SVG', async () => {
  const results = await page.evaluate(async () => {
    const el = document.createElement('attention-heatmap');
    document.querySelector('main').append(el);
    let seed = 11;
    const rnd = (n) => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) % n;
    const pick = '<>&"\'\u0000\u0008\u000b\u001f\ud800\udfff\ufffe\uffff]]>-- =+@\n\t\r';
    const out = [];
    for (let round = 0; round < 20; round++) {
      const T = 6;
      const tokens = Array.from({ length: T }, () =>
        Array.from({ length: 1 + rnd(6) }, () =>
          rnd(2) ? pick[rnd(pick.length)] : String.fromCharCode(rnd(0x10000)),
        ).join(''),
      );
      el.data = {
        weights: Array.from({ length: T * T }, () => 1 / T),
        shape: [T, T],
        queryTokens: tokens,
        keyTokens: tokens,
      };
      // One task: the new element's prepare() (the wasm module, already loaded) settles in microtasks.
      await new Promise((r) => setTimeout(r, 0));
      const drawn = el.refresh(); // drawn now, with these tokens (false: not ready to draw)
      const svg = el.toSVG();
      const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
      const state = JSON.parse(doc.querySelector('metadata')?.textContent ?? 'null');
      out.push({
        drawn,
        ok: !doc.getElementsByTagName('parsererror').length,
        tokensBack: state?.queryTokens?.length === T,
      });
    }
    el.remove();
    return out;
  });
  assert.deepEqual(
    results.filter((r) => !r.drawn || !r.ok || !r.tokensBack),
    [],
    'every document parses and its metadata reads back',
  );
});
