// The demo's whole state lives in the URL: a reload restores it, the back button steps through
// discrete changes, and a link opens exactly the configuration it names. One page, loaded once,
// serves every test in order (b.shared): a test reaches its link in place (pushState + popstate,
// the back button's path; a fresh load of a link is state-link.test.mjs's) and the last reloads it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { demoMoveTo, demoReady, launch } from './helpers.mjs';

let b;
before(async () => {
  b = await launch();
});
after(async () => {
  await b?.close();
});

const widgetConfig = (page) =>
  page.$eval('attention-steps', (el) => {
    const c = el.result.config;
    return {
      text: c.text,
      dModel: c.dModel,
      heads: c.heads,
      mask: c.mask,
      toggles: c.toggles,
      positional: c.positional,
      cross: c.cross,
    };
  });
const param = (page, name) => new URL(page.url()).searchParams.get(name);
/** The one page of the file (the seeded layer on four words, as the back-button test needs it). */
const demo = () => b.shared('/?model=seeded&t=one+two+three+four', demoReady);

test('the back button undoes discrete changes one at a time', async () => {
  // First: the page's history holds only its load, as a link opens it.
  const { page, watch } = await demo();
  await page.selectOption('select[name=mask]', 'causal');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('m') === 'causal');
  // A click in the mask editor is one more history entry.
  await page.locator('mask-editor canvas').first().scrollIntoViewIfNeeded();
  const p = await page.$eval('mask-editor', (el) => el.cellCenter('mask', 2, 0));
  await page.mouse.click(p.x, p.y);
  await page.waitForFunction(() => new URL(location.href).searchParams.get('tg') === '2.0');
  assert.deepEqual((await widgetConfig(page)).toggles, [[2, 0]]);
  // Step change in the walkthrough: another entry.
  await page.locator('attention-steps [role=tab]', { hasText: 'softmax' }).click();
  await page.waitForFunction(() => new URL(location.href).searchParams.get('step') === 'weights');

  await page.goBack();
  await page.waitForFunction(() => new URL(location.href).searchParams.get('step') === null);
  // The address changes first; the views follow when the page has applied the state it names.
  await page.waitForFunction(() => document.querySelector('attention-steps').current?.name === 'scores');
  assert.equal(await page.$eval('attention-steps', (el) => el.current.name), 'scores');
  await page.goBack();
  await page.waitForFunction(() => !new URL(location.href).searchParams.has('tg'));
  await page.waitForFunction(
    () => document.querySelector('attention-steps').result?.config.toggles?.length === 0,
  );
  assert.deepEqual((await widgetConfig(page)).toggles, []);
  assert.equal(
    await page.$eval('mask-editor', (el) => el.allowed.data[2 * 4 + 0]),
    1,
    'the clicked cell is allowed again',
  );
  await page.goBack();
  await page.waitForFunction(() => !new URL(location.href).searchParams.has('m'));
  await page.waitForFunction(() => document.querySelector('attention-steps').result?.config.mask === 'none');
  assert.equal(await page.inputValue('select[name=mask]'), 'none');
  assert.equal((await widgetConfig(page)).mask, 'none');
  await page.goForward();
  await page.waitForFunction(() => new URL(location.href).searchParams.get('m') === 'causal');
  await page.waitForFunction(
    () => document.querySelector('attention-steps').result?.config.mask === 'causal',
  );
  assert.equal(await page.inputValue('select[name=mask]'), 'causal');
  assert.equal((await widgetConfig(page)).mask, 'causal');
  assert.deepEqual(watch.errors, []);
});

test('typing replaces the history entry instead of adding one per keystroke', async () => {
  const { page } = await demo();
  const start = await page.evaluate(() => history.length);
  await page.fill('#text', '');
  await page.type('#text', 'abc def ghi', { delay: 10 });
  await page.waitForFunction(() => new URL(location.href).searchParams.get('t') === 'abc def ghi');
  const grown = (await page.evaluate(() => history.length)) - start;
  assert.ok(grown <= 2, `one burst of typing adds at most a couple of entries, not ${grown}`);
});

test('a shared link opens the configuration it names', async () => {
  const { page, watch } = await demo();
  const q = new URLSearchParams({
    model: 'seeded',
    t: 'Le chat dort',
    s: 'The cat sleeps now',
    x: '1',
    d: '24',
    h: '3',
    m: 'padding',
    pad: '3',
    pe: 'none',
    sc: '0',
    tau: '2',
    step: 'weights',
    head: '2',
    view: 'mean',
  });
  await demoMoveTo(page, `?${q}`, 'seeded');
  const c = await page.$eval('attention-steps', (el) => el.result.config);
  assert.equal(c.cross, true);
  assert.equal(c.dModel, 24);
  assert.equal(c.heads, 3);
  assert.equal(c.mask, 'padding');
  assert.equal(c.pad, 3);
  assert.equal(c.positional, 'none');
  assert.equal(c.scaling, false);
  assert.equal(c.temperature, 2);
  assert.deepEqual(await page.$eval('attention-steps', (el) => [el.current.name, el.current.head]), [
    'weights',
    2,
  ]);
  assert.equal(await page.$eval('attention-heatmap', (el) => el.shown.view), 'mean');
  assert.deepEqual(
    await page.$eval('attention-steps', (el) => [el.result.Tq, el.result.Tk]),
    [3, 7],
    '3 queries; 4 source tokens + 3 <pad>',
  );
  assert.equal(await page.isVisible('#source'), true);
  assert.equal(await page.inputValue('#source'), 'The cat sleeps now');
  assert.equal(param(page, 'x'), '1');
  assert.deepEqual(watch.errors, []);
});

test('back from a trained preset to the seeded layer: the mask editor shows what the link opens', async () => {
  // A trained model's render sets the mask editor's head from the heatmap's view; the seeded layer
  // leaves the head to the editor's own selector, which a link opens at its default (the mean).
  const { page, watch } = await demo();
  await demoMoveTo(page, '?model=text&t=the+cat+sat&view=1', 'text');
  assert.equal(await page.$eval('mask-editor', (el) => el.getAttribute('head')), '1');
  await demoMoveTo(page, '?model=seeded&t=one+two+three+four&view=1', 'seeded');
  const editor = await page.$eval('mask-editor', (el) => ({
    attribute: el.getAttribute('head'),
    head: el.head,
    data: el.data,
    attributes: el.state.attributes,
  }));
  assert.equal(editor.attribute, null, 'no head left by the trained model');
  assert.equal(editor.head, 'mean');
  assert.equal(editor.data, null, "the seeded layer's weights, not the trained model's");
  assert.equal('head' in editor.attributes, false, "the figure's state names no head");
  assert.equal(
    await page.$eval('attention-heatmap', (el) => el.shown.view),
    '1',
    'the heatmap follows the link',
  );
  assert.deepEqual(watch.errors, []);
});

test('a reload restores typed text and changed controls', async () => {
  // Last: the reload is a new load of the shared page.
  const { page, watch } = await demo();
  await demoMoveTo(page, '?model=seeded', 'seeded');
  await page.fill('#text', 'Time flies like an arrow.');
  await page.waitForFunction(
    () => new URL(location.href).searchParams.get('t') === 'Time flies like an arrow.',
  );
  await page.selectOption('#dModel', '32');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('d') === '32');
  await page.selectOption('select[name=positional]', 'learned');
  await page.check('input[name=residual]');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('res') === '1');
  await page.reload();
  await demoReady(page);
  assert.equal(await page.inputValue('#text'), 'Time flies like an arrow.');
  assert.equal(await page.inputValue('#dModel'), '32');
  assert.equal(await page.inputValue('select[name=positional]'), 'learned');
  assert.equal(await page.isChecked('input[name=residual]'), true);
  const c = await widgetConfig(page);
  assert.deepEqual([c.text, c.dModel, c.positional], ['Time flies like an arrow.', 32, 'learned']);
  assert.deepEqual(await page.$$eval('#chips .chip .t', (els) => els.map((e) => e.textContent)), [
    'Time',
    'flies',
    'like',
    'an',
    'arrow',
    '.',
  ]);
  assert.deepEqual(watch.errors, []);
});
