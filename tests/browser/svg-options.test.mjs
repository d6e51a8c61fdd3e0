// The figure options of the widgets laid out as on screen: toSVG({ width, fontSize }).
// width: the document is that wide, the drawing (laid out as on screen) scaled to it as vectors,
// its text still the screen's size; fontSize: the text of the finished figure is that size (also
// with width), and panels stacked on screen do not overlap when their text grows; both are written
// into the metadata. Widgets: one of
// heatmap panels (<alibi-bias>, two panels side by side or stacked), one of canvases with headings
// and the widget's own drawing (<mask-editor>), one of charts (<softmax-playground>).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertCleanPage, launch, openWidgetPage } from './helpers.mjs';

const BODY = `
  <alibi-bias id="ab" style="display:block;width:420px" heads="4" length="8"></alibi-bias>
  <mask-editor id="me" style="display:block;width:700px" text="a small mask" mask="causal"></mask-editor>
  <softmax-playground id="sp" style="display:block;width:600px"></softmax-playground>`;
const kFontTol = 0.02; // px: font sizes are written with 2 decimals
const kScaledFontRel = 0.01; // with width: the scale solved for within 1% (the drawn width depends on it)

let b, page, watch;
before(async () => {
  b = await launch({ viewport: { width: 1000, height: 900 } });
  ({ page, watch } = await openWidgetPage(
    b,
    'div',
    'svg-options',
    BODY,
    'alibi-bias, mask-editor, softmax-playground',
  ));
});
after(async () => {
  await b?.close();
});

/** For el.toSVG(options): the document's width and viewBox, its text sizes in the finished figure, the metadata. */
function figure(id, options) {
  return page.evaluate(
    ([id, options]) => {
      const svg = new DOMParser().parseFromString(
        document.querySelector(`#${id}`).toSVG(options),
        'image/svg+xml',
      ).documentElement;
      const [, , vbW, vbH] = svg.getAttribute('viewBox').split(' ').map(Number);
      const k = Number(svg.getAttribute('width')) / vbW;
      const sizes = [...svg.querySelectorAll('text')].map((t) => Number(t.getAttribute('font-size')) * k);
      return {
        width: Number(svg.getAttribute('width')),
        height: Number(svg.getAttribute('height')),
        vbW,
        vbH,
        sizes,
        meta: JSON.parse(svg.querySelector('metadata').textContent),
      };
    },
    [id, options],
  );
}

const overlap = (a, c) =>
  a.x < c.x + c.w - 0.5 && c.x < a.x + a.w - 0.5 && a.y < c.y + c.h - 0.5 && c.y < a.y + a.h - 0.5;

for (const id of ['ab', 'me', 'sp']) {
  test(`#${id}: width scales the figure as vectors; fontSize sets the finished text size; both in the metadata`, async () => {
    const plain = await figure(id, {});
    assert.equal(plain.width, plain.vbW, 'by default the figure is as on screen');
    assert.equal(plain.meta.width, undefined);
    const wide = await figure(id, { width: 1200 });
    assert.equal(wide.width, 1200);
    assert.ok(wide.vbW < 1200, 'drawn as on screen, then scaled to the width as vectors');
    assert.ok(
      Math.abs(Math.max(...wide.sizes) / Math.max(...plain.sizes) - 1) <= kScaledFontRel,
      `the finished text keeps the screen's size: ${Math.max(...wide.sizes)} vs ${Math.max(...plain.sizes)}`,
    );
    assert.equal(wide.meta.width, 1200);
    const big = await figure(id, { fontSize: 18 });
    assert.ok(
      Math.abs(Math.max(...big.sizes) - Math.max(...plain.sizes) * 1.5) <= kFontTol * 1.5,
      `largest text ${Math.max(...big.sizes)} vs ${Math.max(...plain.sizes)} × 1.5`,
    );
    assert.equal(big.meta.fontSize, 18);
    const panels = big.meta.panels;
    for (let i = 0; i < panels.length; i++)
      for (let j = i + 1; j < panels.length; j++)
        assert.ok(!overlap(panels[i], panels[j]), `panels ${i} and ${j} overlap`);
    const both = await figure(id, { width: 500, fontSize: 18 });
    assert.equal(both.width, 500);
    assert.ok(
      Math.abs(Math.max(...both.sizes) / (Math.max(...plain.sizes) * 1.5) - 1) <= kScaledFontRel,
      `with width 500 the finished text is still 18/12 × the default: ${Math.max(...both.sizes)}`,
    );
  });
}

test('no console error', async () => {
  await assertCleanPage(page, watch);
});
