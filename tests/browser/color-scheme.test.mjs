// A change of the system's colour scheme (light ↔ dark) redraws every widget on the page, in the
// demo and in a page of widgets alone: the canvases take their colours when they draw, so a widget
// that did not redraw would keep the other scheme's picture (web/widgets/base-element.js).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertCleanPage, demoReady, launch, openWidgetPage } from './helpers.mjs';

let b;
before(async () => {
  b = await launch();
});
after(async () => {
  await b?.close();
});

/** In the page: window.__pictures(selector), a hash of each matching widget's visible canvases. */
const installPictures = (page) =>
  page.evaluate(() => {
    window.__pictures = (sel) =>
      [...document.querySelectorAll(sel)].map((el) => {
        let h = 0x811c9dc5;
        for (const c of el.shadowRoot.querySelectorAll('canvas')) {
          if (!c.width || !c.height || c.closest('[hidden]')) continue;
          const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
          for (let i = 0; i < d.length; i++) h = Math.imul(h ^ d[i], 0x01000193);
        }
        return h >>> 0;
      });
  });

/** Switches the scheme and waits until every widget's picture differs from `before`; returns them. */
async function redrawnFor(page, scheme, selector, before) {
  await page.emulateMedia({ colorScheme: scheme });
  await page.waitForFunction(
    ({ sel, was }) => window.__pictures(sel).every((p, i) => p !== was[i]),
    { sel: selector, was: before },
    { timeout: 20_000 },
  );
  return page.evaluate((sel) => window.__pictures(sel), selector);
}

// The widgets on show (the chat view's map stays hidden until a chat model streams a reply).
const DEMO_WIDGETS =
  'attention-steps, attention-heatmap:not([hidden]), mask-editor, positional-encoding-heatmap';

test('the demo: every widget redraws when the system turns dark, and draws the same light picture back', async () => {
  const { page, watch } = await b.newPage();
  await page.goto(b.url('/?model=seeded&t=The+cat+sat+down'));
  await demoReady(page);
  await installPictures(page);
  const light = await page.evaluate((sel) => window.__pictures(sel), DEMO_WIDGETS);
  assert.equal(light.length, 4);
  const dark = await redrawnFor(page, 'dark', DEMO_WIDGETS, light);
  assert.deepEqual(await redrawnFor(page, 'light', DEMO_WIDGETS, dark), light, 'the light picture again');
  assert.deepEqual(watch.errors, []);
  await b.release(page);
});

test('widgets alone in a page redraw for the system scheme too', async () => {
  const sel = 'attention-heatmap, alibi-bias, softmax-playground';
  const { page, watch } = await openWidgetPage(
    b,
    'scheme',
    'widgets',
    '<attention-heatmap text="a b c d"></attention-heatmap><alibi-bias></alibi-bias><softmax-playground></softmax-playground>',
    sel,
  );
  await installPictures(page);
  const light = await page.evaluate((s) => window.__pictures(s), sel);
  await redrawnFor(page, 'dark', sel, light);
  await assertCleanPage(page, watch);
  await b.release(page);
});
