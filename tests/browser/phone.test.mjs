// Phones: at 360 x 800 with touch, the demo and the tutorial lay out at the screen's
// width (no sideways scrolling: scrollWidth <= 360) after load and after use; formulas wrap or
// scroll inside their own box; the query explorer's drag and the mask editor's cells work by touch.
// And typing is never a dead end: a fresh visit opens on the character model, and a sentence typed
// on a task preset switches to it with a note whose button goes back to the preset and its input.
// axe-core stays clean at that size.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import {
  SHOTS,
  axeViolations,
  demoMoveTo,
  demoReady,
  demoSettled,
  launch,
  widgetsReady,
} from './helpers.mjs';

const PHONE = { viewport: { width: 360, height: 800 }, hasTouch: true, isMobile: true };
const SENTENCE = 'the cat sat on the mat';

let b;
before(async () => {
  b = await launch(PHONE);
});
after(async () => {
  await b?.close();
});

/** The page is as wide as the screen; else the elements that stick out (outside any scrolling box). */
async function assertFits(page, when) {
  const r = await page.evaluate(() => {
    const out = [];
    const scrolls = (el) => ['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(el).overflowX);
    const walk = (root, clipped) => {
      for (const el of root.children) {
        const box = el.getBoundingClientRect();
        if (!clipped && box.width > 0 && box.right > 360.5)
          out.push(
            `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''} (right edge ${Math.round(box.right)})`,
          );
        const c = clipped || (el !== document.documentElement && el !== document.body && scrolls(el));
        if (el.shadowRoot) walk(el.shadowRoot, c);
        walk(el, c);
      }
    };
    walk(document, false);
    return { scrollWidth: document.documentElement.scrollWidth, innerWidth, out };
  });
  assert.ok(
    r.scrollWidth <= 360 && r.innerWidth === 360,
    `${when}: the page is ${r.scrollWidth} px wide (layout viewport ${r.innerWidth}); sticking out: ${r.out.slice(0, 8).join(', ')}`,
  );
}

async function axeClean(page) {
  const found = await axeViolations(page);
  assert.deepEqual(found, [], `axe-core violations at 360 px:\n${found.join('\n')}`);
}

const heatmapTokens = (page) => page.$eval('attention-heatmap', (el) => el.data?.queryTokens ?? null);
const chipTokens = (page) => page.$$eval('#chips .chip .t', (els) => els.map((e) => e.textContent));
const param = (page, name) => new URL(page.url()).searchParams.get(name);

test('demo at 360 px: opens on the character model, fits; a sentence on a task preset switches to it and back', async () => {
  const { page, watch } = await b.newPage();
  await page.goto(b.url('/'));
  await demoReady(page);
  await page.waitForFunction(() => window.attentionDemo.predictionScore, null, { timeout: 20_000 });
  // A fresh visit reads text: the character model, on a sentence, with no error under the input.
  assert.equal(await page.inputValue('#model'), 'text');
  assert.equal(
    param(page, 'model'),
    null,
    'the character model is the default: a link without model= opens it',
  );
  const first = await page.inputValue('#text');
  assert.deepEqual(
    await heatmapTokens(page),
    [...first],
    'the heatmap reads the shown sentence, character by character',
  );
  assert.equal(await page.$eval('#token-count', (el) => el.className), '');
  assert.ok(await page.isHidden('#switch-note'));
  await assertFits(page, 'the demo after load');
  await page.screenshot({ path: join(SHOTS, 'phone-demo.png') });

  // A task preset, then a sentence typed on it (by touch: tap the box, type).
  await page.selectOption('#model', 'reverse');
  await page.waitForFunction(() => window.attentionDemo.predictionScore?.scored === 5, null, {
    timeout: 20_000,
  });
  const digits = await page.inputValue('#text');
  assert.equal(digits, '3 1 4 1 5 9 | 9 5 1 4 1');
  assert.equal(param(page, 'model'), 'reverse');
  await page.tap('#text');
  await page.fill('#text', '');
  await page.type('#text', SENTENCE);
  await page.waitForFunction(
    (s) =>
      window.attentionDemo.state.model === 'text' &&
      window.attentionDemo.state.text === s &&
      document.querySelector('attention-heatmap').data?.queryTokens.join('') === s,
    SENTENCE,
    { timeout: 20_000 },
  );
  assert.equal(await page.inputValue('#model'), 'text', 'the Model control follows');
  assert.deepEqual(await heatmapTokens(page), [...SENTENCE], "the heatmap's tokens are the typed characters");
  assert.deepEqual(await chipTokens(page), [...SENTENCE]);
  assert.equal(await page.$eval('#token-count', (el) => el.className), '', 'no vocabulary error');
  assert.ok(await page.isVisible('#switch-note'));
  assert.match(
    await page.textContent('#switch-text'),
    /^“the” is not in the reverse model’s vocabulary, so the character model reads your text\.$/,
  );
  assert.equal(await page.textContent('#switch-back'), 'Back to reverse');
  assert.equal(param(page, 'model'), null, 'the link names the model in use (the default)');
  assert.equal(param(page, 't'), SENTENCE);
  await assertFits(page, 'the demo after typing a sentence');
  await page.screenshot({ path: join(SHOTS, 'phone-demo-switched.png') });
  await axeClean(page);

  // One tap goes back: the preset and its input.
  await page.tap('#switch-back');
  await page.waitForFunction(
    () =>
      window.attentionDemo.state.model === 'reverse' && window.attentionDemo.predictionScore?.scored === 5,
    null,
    { timeout: 20_000 },
  );
  assert.equal(await page.inputValue('#text'), digits);
  assert.equal(await page.inputValue('#model'), 'reverse');
  assert.deepEqual(await heatmapTokens(page), digits.split(' '));
  assert.deepEqual(await page.evaluate(() => window.attentionDemo.predictionScore), { right: 5, scored: 5 });
  assert.ok(await page.isHidden('#switch-note'));
  assert.equal(param(page, 'model'), 'reverse');
  assert.equal(param(page, 't'), digits);
  await assertFits(page, 'the demo after going back');

  // The back button returns to the sentence (and its note).
  await page.goBack();
  await page.waitForFunction(
    (s) => window.attentionDemo.state.model === 'text' && window.attentionDemo.state.text === s,
    SENTENCE,
  );
  assert.deepEqual(watch.errors, []);
  assert.deepEqual(watch.offOrigin, []);
  await b.release(page);
});

test('demo: a link whose text its preset cannot read opens on the character model; seeded mode fits too', async () => {
  const { page, watch } = await b.newPage();
  await page.goto(b.url(`/?model=sort&t=${encodeURIComponent('Hello there')}`));
  await demoReady(page);
  await page.waitForFunction(
    () => window.attentionDemo.state.model === 'text' && window.attentionDemo.predictionScore,
    null,
    { timeout: 20_000 },
  );
  assert.equal(param(page, 'model'), null, 'the link is replaced by the model in use');
  assert.equal(param(page, 't'), 'Hello there');
  assert.match(await page.textContent('#switch-text'), /“Hello” is not in the sort model’s vocabulary/);
  await page.tap('#switch-back');
  await page.waitForFunction(
    () => window.attentionDemo.state.model === 'sort' && window.attentionDemo.predictionScore?.scored > 0,
    null,
    { timeout: 20_000 },
  );
  assert.equal(await page.inputValue('#text'), '3 1 4 1 5 | 1 1 3 4', "back to the preset's own example");

  // The seeded layer, moved to in place (the back button's path; a load of it is demo.test.mjs's).
  await demoMoveTo(page, '?model=seeded&m=causal&x=1', 'seeded');
  await assertFits(page, 'the seeded layer (cross-attention)');
  await page.tap('#text');
  await page.type('#text', ' and a much longer sentence that goes on and on');
  await demoSettled(page);
  await assertFits(page, 'the seeded layer after typing');
  // A tap on a mask cell masks it (pointer events, not a mouse).
  await page.locator('mask-editor canvas').first().scrollIntoViewIfNeeded();
  const cell = await page.$eval('mask-editor', (el) => el.cellCenter('mask', 2, 0));
  await page.touchscreen.tap(cell.x, cell.y);
  await page.waitForFunction(() => new URL(location.href).searchParams.get('tg') === '2.0');
  await assertFits(page, 'the seeded layer after a tap in the mask editor');
  assert.deepEqual(watch.errors, []);
  await b.release(page);
});

test('tutorial at 360 px: fits, formulas wrap or scroll in their own box, the query explorer drags by touch; axe clean', async () => {
  const { page, watch } = await b.newPage();
  await page.goto(b.url('/tutorial.html'));
  await page.waitForFunction(() => document.documentElement.dataset.tutorialReady !== undefined, null, {
    timeout: 30_000,
  });
  await widgetsReady(
    page,
    'attention-steps, attention-heatmap, mask-editor, positional-encoding-heatmap, query-explorer',
  );
  await assertFits(page, 'the tutorial after load');
  const formulas = await page.$$eval('.math.display', (els) =>
    els.map((el) => {
      const box = el.getBoundingClientRect();
      return {
        tex: el.dataset.tex.slice(0, 40),
        right: box.right,
        overflow: getComputedStyle(el).overflowX,
        scrolls: el.scrollWidth > el.clientWidth + 1,
        tabIndex: el.tabIndex,
      };
    }),
  );
  for (const f of formulas) {
    assert.ok(f.right <= 360, `${f.tex}: inside the screen`);
    assert.equal(f.overflow, 'auto', `${f.tex}: scrolls in its own box`);
    if (f.scrolls)
      assert.equal(f.tabIndex, 0, `${f.tex}: a formula that scrolls is a tab stop (keys scroll it)`);
  }
  // The row of three formulas of section 1 wraps: "output = …" is on screen, not cut off.
  const output = await page.$eval('.math.display.split .math-part:last-child', (el) => {
    const box = el.getBoundingClientRect(),
      parent = el.parentElement.getBoundingClientRect();
    return { left: box.left, right: box.right, parentRight: parent.right, text: el.textContent };
  });
  assert.match(output.text, /output/);
  assert.ok(
    output.left >= 0 && output.right <= output.parentRight + 0.5,
    `output = … is inside its box (${JSON.stringify(output)})`,
  );

  // Drag the query by touch (real touch events: the browser's panning must not take the gesture).
  const qe = page.locator('#qe');
  await qe.scrollIntoViewIfNeeded();
  const canvas = await page.evaluateHandle(() =>
    document.querySelector('#qe').shadowRoot.querySelector('canvas[role="img"]'),
  );
  const box = await canvas.boundingBox();
  const before = await page.$eval('#qe', (el) => el.query);
  const scrollBefore = await page.evaluate(() => scrollY);
  const cdp = await b.context.newCDPSession(page);
  const at = (fx, fy) => [{ x: box.x + box.width * fx, y: box.y + box.height * fy }];
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: at(0.5, 0.5) });
  // Input reaches the page's main thread on its own schedule: wait for its effect, not a time.
  await page.waitForFunction((b) => String(document.querySelector('#qe').query) !== b, String(before), {
    timeout: 20_000,
  });
  const touched = await page.$eval('#qe', (el) => el.query);
  for (let i = 1; i <= 8; i++)
    await cdp.send('Input.dispatchTouchEvent', {
      type: 'touchMove',
      touchPoints: at(0.5 + 0.035 * i, 0.5 + 0.035 * i),
    });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await page.waitForFunction(
    (t) => {
      const q = document.querySelector('#qe').query;
      return q[0] > t[0] + 0.2 && q[1] < t[1] - 0.2;
    },
    touched,
    { timeout: 20_000 },
  );
  const dragged = await page.$eval('#qe', (el) => el.query);
  assert.notDeepEqual(touched, before, 'a touch puts the query under the finger');
  assert.ok(
    dragged[0] > touched[0] + 0.2 && dragged[1] < touched[1] - 0.2,
    `the query followed the finger right and down (${touched} → ${dragged})`,
  );
  assert.equal(await page.evaluate(() => scrollY), scrollBefore, 'the drag did not scroll the page');
  await assertFits(page, 'the tutorial after a drag');
  await axeClean(page);
  assert.deepEqual(watch.errors, []);
  assert.deepEqual(watch.offOrigin, []);
  await b.release(page);
});
