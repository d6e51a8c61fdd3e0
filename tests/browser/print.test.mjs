// Print: with print media emulated and `beforeprint` dispatched, every widget with toSVG()
// shows its figure as SVG in place of its canvases, and no widget shows its controls (export buttons,
// selects, tabs, buttons, readouts); `afterprint` brings the canvases back and removes the figures.
// A PDF of the page is printed without error. All under the strict CSP, with no console error.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SHOTS, assertCleanPage, demoReady, join, launch, openWidgetPage } from './helpers.mjs';

const BODY = `
  <attention-heatmap id="hm" text="Printed as vectors." head="all" heads="2"></attention-heatmap>
  <attention-steps id="steps" text="Printed as vectors." step="weights"></attention-steps>
  <positional-encoding-heatmap id="pe" length="12" d-model="8"></positional-encoding-heatmap>
  <alibi-bias id="alibi" heads="4" length="6"></alibi-bias>
  <mask-editor id="mask" text="no vectors here" mask="causal"></mask-editor>`;
const SVG_WIDGETS = ['#hm', '#steps', '#pe', '#alibi'];

let b, page, watch;
before(async () => {
  b = await launch({ viewport: { width: 1000, height: 900 } });
  ({ page, watch } = await openWidgetPage(
    b,
    'print',
    'print',
    BODY,
    'attention-heatmap, attention-steps, positional-encoding-heatmap, alibi-bias, mask-editor',
  ));
  // Every widget of the library has toSVG() now: this mask editor stands for an element without one
  // (a page's own AwElement subclass), so its method is taken away.
  await page.$eval('#mask', (el) => {
    el.toSVG = undefined;
  });
});
after(async () => {
  await b?.close();
});

/** In the page, per widget: shown SVG figures, shown canvases, shown controls. */
function look() {
  return page.evaluate(() =>
    Object.fromEntries(
      [...document.querySelectorAll('main > *')]
        .filter((e) => e.shadowRoot)
        .map((el) => {
          const shown = (n) => {
            const r = n.getBoundingClientRect();
            return getComputedStyle(n).display !== 'none' && r.width > 0 && r.height > 0;
          };
          const root = el.shadowRoot;
          return [
            `#${el.id}`,
            {
              svg: [...root.querySelectorAll('.aw-print-figure > svg')].filter(shown).length,
              canvases: [...root.querySelectorAll('canvas')].filter(shown).length,
              controls: [
                ...root.querySelectorAll('.exports, button, select, input, .tabs, .nav, .readout'),
              ].filter(shown).length,
              printing: el.hasAttribute('data-aw-printing'),
            },
          ];
        }),
    ),
  );
}

test('beforeprint under print media: SVG instead of canvases, no controls; afterprint restores', async () => {
  const screen = await look();
  for (const [id, v] of Object.entries(screen)) {
    assert.equal(v.svg, 0, `${id}: no figure on screen`);
    assert.ok(v.canvases > 0 && v.controls > 0, `${id}: canvases and controls on screen`);
  }
  await page.emulateMedia({ media: 'print' });
  await page.evaluate(() => window.dispatchEvent(new Event('beforeprint')));
  const printed = await look();
  for (const id of SVG_WIDGETS) {
    assert.equal(printed[id].svg, 1, `${id}: its SVG is shown`);
    assert.equal(printed[id].canvases, 0, `${id}: no canvas shown`);
    assert.ok(printed[id].printing, `${id}: data-aw-printing`);
  }
  for (const [id, v] of Object.entries(printed))
    assert.equal(v.controls, 0, `${id}: no control shown in print`);
  assert.ok(
    printed['#mask'].canvases > 0 && !printed['#mask'].printing,
    'a widget without toSVG keeps its canvases',
  );
  // The figure is the widget's own SVG (the heatmap's with its query bars).
  const same = await page.evaluate(() => {
    const el = document.querySelector('#hm');
    const fig = el.shadowRoot.querySelector('.aw-print-figure > svg');
    const doc = new DOMParser().parseFromString(el.toSVG({ bars: true }), 'image/svg+xml');
    return fig.querySelector('metadata').textContent === doc.querySelector('metadata').textContent;
  });
  assert.ok(same, 'the heatmap prints toSVG({ bars: true })');
  await page.screenshot({ path: join(SHOTS, 'print-media.png'), fullPage: true });
  const pdf = await page.pdf({ format: 'A4' });
  assert.ok(pdf.length > 1000 && pdf.subarray(0, 5).toString() === '%PDF-', 'a PDF is printed');
  await page.evaluate(() => window.dispatchEvent(new Event('afterprint')));
  await page.emulateMedia({ media: 'screen' });
  const back = await look();
  assert.deepEqual(back, screen, 'afterprint: as before');
  assert.equal(
    await page.evaluate(
      () =>
        [...document.querySelectorAll('main > *')].filter((e) =>
          e.shadowRoot?.querySelector('.aw-print-figure'),
        ).length,
    ),
    0,
  );
  await assertCleanPage(page, watch);
});

test('print media alone (no beforeprint) hides the controls too', async () => {
  await page.emulateMedia({ media: 'print' });
  const printed = await look();
  for (const [id, v] of Object.entries(printed)) {
    assert.equal(v.controls, 0, `${id}: no control`);
    assert.ok(v.canvases > 0, `${id}: canvases stay without the swap`);
  }
  await page.emulateMedia({ media: 'screen' });
  const { preparePrint, restorePrint } = await page.evaluate(async () => {
    const m = await import('/web/widgets.js');
    const n = m.preparePrint();
    const during = document.querySelectorAll('[data-aw-printing]').length;
    m.restorePrint();
    return {
      preparePrint: [n, during],
      restorePrint: document.querySelectorAll('[data-aw-printing]').length,
    };
  });
  assert.deepEqual(preparePrint, [4, 4], 'preparePrint() swaps the four widgets with toSVG');
  assert.equal(restorePrint, 0);
});

// The tutorial prints the same way: tutorial.test.mjs checks it on the page it has open.
test('the demo prints as one column of views: no settings, contents or controls', async () => {
  for (const [path, ready, hidden] of [
    ['/', () => document.documentElement.dataset.ready !== undefined, ['aside.controls', 'nav.links']],
  ]) {
    const p = await b.newPage();
    await p.page.goto(b.url(path));
    await p.page.waitForFunction(ready, null, { timeout: 30_000 });
    if (path === '/') await demoReady(p.page);
    await p.page.emulateMedia({ media: 'print' });
    await p.page.evaluate(() => window.dispatchEvent(new Event('beforeprint')));
    const r = await p.page.evaluate(
      (hidden) => ({
        hidden: hidden.map((s) => [s, getComputedStyle(document.querySelector(s)).display]),
        figures: [...document.querySelectorAll('[data-aw-printing]')].length,
        buttons: [...document.querySelectorAll('button')].filter((x) => x.getBoundingClientRect().width > 0)
          .length,
      }),
      hidden,
    );
    for (const [s, display] of r.hidden) assert.equal(display, 'none', `${path}: ${s} hidden in print`);
    assert.ok(r.figures >= 1, `${path}: ${r.figures} widgets print as SVG`);
    assert.equal(r.buttons, 0, `${path}: no page button shown`);
    await p.page.evaluate(() => window.dispatchEvent(new Event('afterprint')));
    assert.equal(await p.page.evaluate(() => document.querySelectorAll('[data-aw-printing]').length), 0);
    assert.deepEqual(p.watch.errors, [], `${path}: no console error`);
    await p.page.close();
  }
});
