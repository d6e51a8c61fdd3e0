// Shared by the SVG export tests (svg-export and svg-export-widgets .test.mjs): in each file that calls
// useSvgExportPage(), it launches Chromium and opens one page of widgets under the strict
// CSP before its tests (`b`, `page`, `watch`) and closes it after them; inspect() reads a widget's SVG and samples it against the canvas,
// and the assertions compare colours within TOL and check the document is well formed and self-contained.

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openWidgetPage } from './helpers.mjs';

const TOL = 2; // of 255
const SENTENCE = 'The quick brown fox jumps over the lazy dog while the cat sleeps.';
const EVIL = ['<b>&amp;', '"quoted"', "it's", ']]>', 'a\u0001b', '\uD800', '</svg>', 'x'];

const BODY = `
  <attention-heatmap id="one" style="display:block;width:480px" text="${SENTENCE}" head="1" mask="causal"></attention-heatmap>
  <attention-heatmap id="all" text="${SENTENCE}" head="all" heads="4"></attention-heatmap>
  <attention-heatmap id="small" style="display:block;width:600px" text="Tiny one." head="0"></attention-heatmap>
  <attention-heatmap id="big"></attention-heatmap>
  <attention-model-view id="mv" ids="1 2 3 4 5 6 7"></attention-model-view>
  <attention-steps id="steps" style="display:block;width:560px" text="${SENTENCE}" step="masked" mask="causal" head="1"></attention-steps>
  <positional-encoding-heatmap id="pe" length="24" d-model="16" dims="0,3,9"></positional-encoding-heatmap>
  <section><h2>ALiBi and GQA</h2>
  <alibi-bias id="alibi" heads="4" length="20" seed="3"></alibi-bias>
  <gqa-heads id="gqa" heads="4" kv-heads="2" length="8" seed="5"></gqa-heads></section>
  <attention-trainer id="tr" task="copy" length="5" layers="2" heads="2" d-model="16"></attention-trainer>`;

export let b, page, watch;
/**
 * Registers the hooks that open the page of widgets before the calling file's tests and close it after them:
 * each test file calls this once at its top level (a module is evaluated once per process, so
 * hooks registered at import would serve only the first file of a lane that imports it).
 */
export function useSvgExportPage() {
  before(async () => {
    b = await launch({ viewport: { width: 1100, height: 900 } });
    ({ page, watch } = await openWidgetPage(b, 'svg', 'svg-export', BODY, 'attention-heatmap'));
    await page.evaluate(async (evil) => {
      // A 64 × 64 heatmap of random-looking weights (rows sum to 1), with hostile token texts.
      const T = 64,
        w = new Float32Array(T * T);
      let seed = 7;
      const rnd = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
      for (let r = 0; r < T; r++) {
        let sum = 0;
        for (let c = 0; c < T; c++) sum += w[r * T + c] = rnd() ** 3;
        for (let c = 0; c < T; c++) w[r * T + c] /= sum;
      }
      const tokens = Array.from({ length: T }, (_, i) => evil[i % evil.length] + (i >= evil.length ? i : ''));
      document.querySelector('#big').data = {
        weights: w,
        shape: [T, T],
        queryTokens: tokens,
        keyTokens: tokens,
      };
      const { TinyTransformer } = await import('/src/js/index.js');
      document.querySelector('#mv').model = new TinyTransformer({
        vocabSize: 11,
        maxLength: 8,
        dModel: 12,
        numHeads: 3,
        numLayers: 2,
        seed: 3,
      });
    }, EVIL);
    // Every widget the tests read has drawn (the model view once it has its model; the trainer is
    // awaited by its own test), and the 64 × 64 heatmap shows its data.
    await page.waitForFunction(
      () =>
        ['#mv', '#steps', '#pe', '#alibi', '#gqa'].every(
          (s) => document.querySelector(s).dataset.ready !== undefined,
        ) && document.querySelector('#big').shown?.matrices[0].rows === 64,
      null,
      { timeout: 30_000 },
    );
  });
  after(async () => {
    await b?.close();
  });
}

/**
 * In the page: el.toSVG(options), parsed and checked. Returns { size, parseError, external, state,
 * texts, samples: [{ panel, row, col, canvas: [r,g,b], fill: [r,g,b] | null, image: [r,g,b] }] }.
 * Canvas pixels are read from each tile's own canvas at its cell centres; `fill` is the fill of the
 * path rectangle covering the same cell's centre in the SVG (cell area from the <metadata>);
 * `image` is the SVG drawn by Chromium (data: URL → <img> → canvas) at that point.
 */
export function inspect(selector, options = {}) {
  return page.evaluate(
    async ({ selector, options }) => {
      const el = document.querySelector(selector);
      const svg = el.toSVG(options);
      const { readSvg } = await import('/tests/browser/svg-inspect.js');
      const {
        doc,
        parseError,
        external,
        state,
        fillAt,
        image: { ctx: octx, dpr },
      } = await readSvg(svg);
      const tiles = el._tiles
        ? el._tiles.map((t) => t.view)
        : el._views
          ? el._views.map((v) => v.view)
          : el._biasView
            ? [el._biasView, el._weightView]
            : [el._view];
      const samples = [];
      state.panels.forEach((panel, k) => {
        const view = tiles[k],
          canvas = view.canvas,
          ctx = canvas.getContext('2d'),
          box = canvas.getBoundingClientRect();
        const d = canvas.width / box.width;
        for (let r = 0; r < panel.rows; r++)
          for (let c = 0; c < panel.cols; c++) {
            // Cell centres; a masked (−∞) cell is hatched along its diagonal, so it is read a quarter in.
            const f = view.opts.data[r * panel.cols + c] === -Infinity ? 0.25 : 0.5;
            const p = view.cellCenter(r, c),
              cw = view.geo.cw,
              ch = view.geo.ch;
            p.x += (f - 0.5) * cw;
            p.y += (f - 0.5) * ch;
            const canvasPx = [
              ...ctx
                .getImageData(Math.floor((p.x - box.left) * d), Math.floor((p.y - box.top) * d), 1, 1)
                .data.slice(0, 3),
            ];
            const sx = panel.cells.x + ((c + f) * panel.cells.w) / panel.cols,
              sy = panel.cells.y + ((r + f) * panel.cells.h) / panel.rows;
            const imagePx = [
              ...octx.getImageData(Math.floor(sx * dpr), Math.floor(sy * dpr), 1, 1).data.slice(0, 3),
            ];
            samples.push({
              panel: k,
              row: r,
              col: c,
              canvas: canvasPx,
              fill: fillAt(sx, sy),
              image: imagePx,
            });
          }
      });
      const texts = [...doc.querySelectorAll('text')].map((t) => t.textContent);
      return {
        size: new TextEncoder().encode(svg).length,
        parseError,
        external,
        state,
        texts,
        samples,
        paths: doc.querySelectorAll('path[fill^="#"]').length,
        bg: doc.querySelector('svg > rect').getAttribute('fill'),
        svgStart: svg.slice(0, 400),
      };
    },
    { selector, options },
  );
}

/** Every sample's SVG fill and rendered colour equal the canvas pixel within TOL. */
export function assertColoursMatch(r, label) {
  assert.ok(r.samples.length > 0, `${label}: cells sampled`);
  const far = (a, b2) => !b2 || a.some((v, i) => Math.abs(v - b2[i]) > TOL);
  const badFill = r.samples.filter((s) => far(s.canvas, s.fill));
  assert.deepEqual(
    badFill.slice(0, 5),
    [],
    `${label}: SVG fill = canvas pixel at cell centres (${badFill.length} of ${r.samples.length} differ)`,
  );
  const badImage = r.samples.filter((s) => far(s.canvas, s.image));
  assert.deepEqual(
    badImage.slice(0, 5),
    [],
    `${label}: the SVG rendered by Chromium = canvas at cell centres (${badImage.length} of ${r.samples.length} differ)`,
  );
}

export function assertWellFormed(r, label) {
  assert.equal(r.parseError, false, `${label}: parses as XML`);
  assert.deepEqual(r.external, [], `${label}: no external reference, no raster`);
}
