// One drawing path, for every widget: one page holds each element of widgets.js's ELEMENTS, and one
// loop checks every canvas each one paints. A canvas is painted by paintFigure (figures/paint-canvas.js),
// which keeps the display list it painted (paintedList); for each canvas shown: its pixels are that
// list painted afresh onto a new canvas, and the widget's toSVG() holds every item of the same list
// where the SVG placed the panel (texts as <text> with their words and places, strokes, bars,
// arrows, the legend) and its cells in the list's colours. Every widget draws on canvases (none is
// left out for want of one); a canvas hidden by its widget's state (a plane of a vector that has no
// 2 components, say) is not shown and not checked. The figure-specific checks (layouts, fonts,
// kinds of items seen) stay in display-list.test.mjs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertCleanPage, launch, openWidgetPage } from './helpers.mjs';

const SRC = '/web/presets/induction.safetensors';
const IDS = '5 12 3 9 14 0 7 11 2 3 9 14 0';
const S = 'The quick brown fox jumps over the lazy dog.';
const BODY = `
  <attention-steps id="steps" style="display:block;width:560px" text="${S}" step="masked" mask="causal" head="1"></attention-steps>
  <attention-heatmap id="hm" style="display:block;width:480px" text="${S}" head="1" mask="causal"></attention-heatmap>
  <attention-heatmap id="hmall" text="${S}" head="all" heads="4"></attention-heatmap>
  <positional-encoding-heatmap id="pe" length="24" d-model="16" dims="0,3,9"></positional-encoding-heatmap>
  <mask-editor id="mask" text="the cat sat on the mat" mask="causal" toggles="3.1"></mask-editor>
  <attention-trainer id="tr" task="copy" length="5" layers="2" heads="2" d-model="16"></attention-trainer>
  <attention-model-view id="mv" src="${SRC}" ids="${IDS}"></attention-model-view>
  <query-explorer id="qe"></query-explorer>
  <variance-experiment id="ve"></variance-experiment>
  <softmax-playground id="sp" style="display:block;width:600px"></softmax-playground>
  <mask-fill-compare id="mf" masked="1,3"></mask-fill-compare>
  <rope-explorer id="re"></rope-explorer>
  <alibi-bias id="alibi" heads="4" length="12" seed="3"></alibi-bias>
  <gqa-heads id="gqa" heads="4" kv-heads="2" length="8" seed="5"></gqa-heads>
  <kv-cache-stepper id="kv" length="6" embed-dim="16" heads="4" kv-heads="2"></kv-cache-stepper>
  <head-scores id="hs" src="${SRC}" ids="${IDS}"></head-scores>
  <logit-attribution id="la" src="${SRC}" ids="${IDS}" limit="20"></logit-attribution>
  <patching-view id="pv" src="${SRC}" clean="${IDS}" corrupted="5 12 3 9 14 8 7 11 2 3 9 14 0" autorun></patching-view>
  <token-saliency id="ts" src="${SRC}" ids="${IDS}"></token-saliency>
  <delta-rule-steps id="drs" src="/tests/golden/pretrained/qwen3_5-tiny/" step="read"></delta-rule-steps>`;

// toSVG's options where its default leaves a canvas out (the heatmap's bars are in the figure on request).
const SVG_OPTIONS = { 'attention-heatmap': { bars: true } };

let b, page, watch;
before(async () => {
  b = await launch({ viewport: { width: 1100, height: 900 } });
  ({ page, watch } = await openWidgetPage(b, 'div', 'display-list-widgets', BODY, 'attention-heatmap'));
  await page.waitForFunction(
    () =>
      [...document.querySelectorAll('main > [id]')].every((e) => e.dataset.ready !== undefined) &&
      document.querySelector('#pv').shown &&
      document.querySelector('#la').shown &&
      // <token-saliency> draws once model.saliency has run
      document.querySelector('#ts').shown,
    null,
    { timeout: 60_000 },
  );
  // The KV cache after three tokens (its keys and the new query's weights shown), and the trainer's
  // curves and heads after a few steps.
  await page.$eval('#kv', async (el) => {
    for (let i = 0; i < 3; i++) await el.step();
  });
  await page.$eval('#tr', (el) => el.stepOnce(12));
  // ... and both drawn: the stepper draws each step at once; the trainer draws a snapshot's status
  // line and heads together.
  await page.waitForFunction(
    () => {
      const tr = document.querySelector('#tr'),
        step = tr.snapshot?.step;
      return (
        document.querySelector('#kv').length === 3 &&
        step >= 12 &&
        tr.shadowRoot.querySelector('.status').textContent.startsWith(`step ${step} ·`)
      );
    },
    null,
    { timeout: 30_000 },
  );
});
after(async () => {
  await b?.close();
});

test('every widget: each canvas is its display list, and its SVG holds the same list', async () => {
  const r = await page.evaluate(async (svgOptions) => {
    const { ELEMENTS } = await import('/web/widgets.js');
    const { checkCanvases } = await import('/tests/browser/display-list-page.js');
    const out = {},
      tags = [];
    for (const el of document.querySelectorAll('main > [id]')) {
      const tag = el.localName;
      tags.push(tag);
      out[`${tag}#${el.id}`] = await checkCanvases(el, el.toSVG(svgOptions[tag] || {}));
    }
    return { names: Object.keys(ELEMENTS), out, tags };
  }, SVG_OPTIONS);
  const tags = new Set(r.tags);
  assert.deepEqual(
    r.names.filter((n) => !tags.has(n)),
    [],
    'every element of widgets.js is on the page',
  );
  for (const [name, canvases] of Object.entries(r.out)) {
    const shown = canvases.filter((c) => c.shown);
    assert.ok(shown.length >= 1, `${name}: a canvas shown`);
    for (const c of shown) {
      const at = `${name} canvas ${c.index}`;
      assert.ok(c.list, `${at}: painted from a display list (paintFigure)`);
      assert.ok(c.n >= 3 && c.texts >= 1, `${at}: a list with its text (${c.kinds})`);
      assert.equal(c.pixels, 0, `${at}: canvas pixels that differ from the list painted afresh`);
      assert.deepEqual(c.missing, [], `${at}: list items missing from the SVG`);
      assert.equal(c.cells, 0, `${at}: SVG cells not in the list's colours`);
    }
  }
  await assertCleanPage(page, watch);
});
