// A figure's state round trip through a link alone: for every trained preset and the
// seeded layer, the demo at a link that sets its views (layer, head, step, heatmap view, query) draws
// every view; its link (the demo's own URL, what "Copy link" copies), reached in place by one page
// that showed the previous case (the back button's path: pushState + popstate), draws the same SVG
// for every view, byte for byte, and the views' states are equal. No file is involved. Six loads
// and one page moving in place, where each case once loaded its link twice (twelve loads).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { demoMoveTo, demoReady, demoSettled, launch } from './helpers.mjs';

// Each preset with views set away from their defaults where the model has them.
const CASES = [
  ['reverse', 'model=reverse&t=3+1+4+1+%7C&step=weights&head=1&view=mean&q=2'],
  ['copy', 'model=copy&step=scores&head=0&view=1'],
  ['sort', 'model=sort&t=3+1+4+1+5+%7C+1+1+3&layer=1&step=weights&view=all&q=3'],
  ['induction', 'model=induction&layer=1&head=1&view=0'],
  ['text', 'model=text&t=the+cat+sat&step=output&head=1&view=mean'],
  ['seeded', 'model=seeded&t=one+two+three+four&pe=rope&kv=2&step=weights&view=1&q=1'],
];
const VIEWS = ['#model-view', '#steps', '#heatmap', '#mask-editor', '#pe'];

let b;
before(async () => {
  b = await launch();
});
after(async () => {
  await b?.close();
});

/** The demo's URL and, per drawn view, its SVG and state, once it shows `model`. */
async function viewsOf(page, watch, model) {
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
  const views = await page.evaluate((ids) => {
    const out = {};
    for (const id of ids) {
      const el = document.querySelector(id);
      if (!el || el.closest('[hidden]') || el.hidden || typeof el.toSVG !== 'function') continue;
      try {
        out[id] = { svg: el.toSVG(), state: JSON.stringify(el.state) };
      } catch (e) {
        out[id] = { error: e.message };
      }
    }
    return out;
  }, VIEWS);
  const link = await page.evaluate(() => location.href);
  assert.deepEqual(watch.errors, []);
  return { link, views };
}

/** A fresh page of the demo opened at `url`. */
async function opened(url, model) {
  const { page, watch } = await b.newPage();
  try {
    await page.goto(url);
    await demoReady(page);
    return await viewsOf(page, watch, model);
  } finally {
    await b.release(page);
  }
}

/**
 * The one page that moves from link to link in place, as the back and forward buttons move it: the
 * link becomes the address (history.pushState) and the page hears popstate. It moves through every
 * case in turn, so each starts from the previous case's model and views (text → seeded: a trained
 * model's views on the page before the seeded layer's).
 */
async function movedTo(link, model) {
  const { page, watch } = await b.shared('/?model=seeded', demoReady);
  await demoMoveTo(page, new URL(link).search, model);
  return viewsOf(page, watch, model);
}

for (const [model, query] of CASES) {
  test(`${model}: every view's SVG and state survive the link`, async () => {
    const first = await opened(b.url(`/?${query}`), model);
    const drawn = Object.entries(first.views).filter(([, v]) => v.svg);
    assert.ok(drawn.length >= 2, `views drawn: ${Object.keys(first.views)}`);
    // The link really set the views (the round trip is not of the defaults).
    const step = new URLSearchParams(query).get('step');
    if (step)
      assert.equal(
        JSON.parse(first.views['#steps'].state).attributes.step,
        step,
        'the steps view shows the linked step',
      );
    // The page's own link, reached in place on a page that showed another model and other views.
    const second = await movedTo(first.link, model);
    assert.equal(second.link, first.link, 'the link opens to itself');
    for (const [id, v] of drawn) {
      assert.ok(second.views[id]?.svg, `${id} drawn again`);
      assert.equal(second.views[id].state, v.state, `${id}: the same state`);
      assert.ok(
        second.views[id].svg === v.svg,
        `${id}: the same SVG (${v.svg.length} vs ${second.views[id].svg.length} bytes)`,
      );
    }
  });
}
