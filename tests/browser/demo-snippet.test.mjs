// What a newcomer meets at the bottom and middle of the demo: the "Put these widgets in your own
// page" code box is filled on the default preset and follows every view and preset, naming the
// custom elements shown with their attributes; its count of elements is the widgets module's own
// (every name it registers is a defined custom element); the "What the model predicts next" table
// shows the last positions first, with a button (keys work) that shows every position and back; the
// page stays axe-clean and fits a 360-px phone with the table in either state.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { axeViolations, demoReady, launch } from './helpers.mjs';

const PHONE = { viewport: { width: 360, height: 800 }, hasTouch: true, isMobile: true };
const ROWS = 8; // PREDICTION_ROWS in web/demo-tables.js

let b, phone;
before(async () => {
  [b, phone] = await Promise.all([launch(), launch(PHONE)]);
});
after(async () => {
  await b?.close();
  await phone?.close();
});

const snippet = (page) => page.textContent('#embed-code');
const predictions = (page) =>
  page
    .waitForFunction(() => window.attentionDemo.predictionScore, null, { timeout: 20_000 })
    .then(() => page.evaluate(() => window.attentionDemo.predictionScore));

/** The custom elements the page shows (outside the hidden sections), by tag name. */
const shownElements = (page) =>
  page.evaluate(() =>
    [...document.querySelectorAll('main *')]
      .filter((el) => customElements.get(el.localName) && !el.hidden && el.offsetParent !== null)
      .map((el) => el.localName),
  );

/** Waits until the snippet is for `model` and says `text`. */
const snippetFor = (page, model, text) =>
  page.waitForFunction(
    ([m, t]) => {
      const code = document.getElementById('embed-code');
      return code.dataset.model === m && code.textContent.includes(t);
    },
    [model, text],
    { timeout: 20_000 },
  );

test('the embed code box is filled on the default preset and follows views and presets', async () => {
  const { page, watch } = await b.shared('/', demoReady);
  await predictions(page);
  const state = await page.evaluate(() => window.attentionDemo.state);
  assert.equal(state.model, 'text', 'the default preset is the character model');
  let code = await snippet(page);
  assert.ok(code.trim().length > 0, 'not empty on the default preset');
  assert.match(code, /<script type="module" src="http:\/\/[^"]+\/web\/widgets\.js"><\/script>/);
  assert.match(
    code,
    /<attention-model-view src="http:\/\/[^"]+\/web\/presets\/text\.safetensors" ids="[\d ]+"/,
  );
  assert.ok(code.includes(`<attention-steps id="steps" step="${state.step}"></attention-steps>`));
  for (const name of await shownElements(page)) assert.ok(code.includes(`<${name}`), `names <${name}>`);
  // The ids are the input's: one per character of the default sentence.
  const ids = /ids="([\d ]+)"/.exec(code)[1].split(' ');
  assert.equal(ids.length, [...state.text].length);

  // A view: another step and head of the steps view are in the snippet.
  await page.evaluate(() => window.attentionDemo.setState({ step: 'scores', head: 1 }));
  await snippetFor(page, 'text', 'step="scores" head="1"');

  // Another preset: its own file and input.
  await page.selectOption('#model', 'reverse');
  await snippetFor(page, 'reverse', '/web/presets/reverse.safetensors');
  code = await snippet(page);
  assert.match(code, /ids="[\d ]+" tokens="3 1 4 1 5 9 \| 9 5 1 4 1"/);
  for (const name of await shownElements(page)) assert.ok(code.includes(`<${name}`), `names <${name}>`);

  // The seeded layer: its four views with the settings that differ from the widgets' defaults.
  await page.selectOption('#model', 'seeded');
  await snippetFor(page, 'seeded', '<attention-heatmap');
  await page.evaluate(() => window.attentionDemo.setState({ mask: 'causal', view: 'mean', dModel: 32 }));
  await snippetFor(page, 'seeded', 'head="mean"');
  code = await snippet(page);
  for (const name of await shownElements(page)) assert.ok(code.includes(`<${name} `), `names <${name}>`);
  assert.match(code, /<attention-steps text="[^"]+" d-model="32" mask="causal"><\/attention-steps>/);
  assert.match(code, /<positional-encoding-heatmap d-model="32" base="10000">/);
  assert.deepEqual(watch.errors, []);
});

// Read on the page the test above leaves open (the count and the sentence do not depend on the model).
test('the element count is what widgets.js defines', async () => {
  const { page, watch } = await b.shared('/', demoReady);
  const { shown, defined, registered } = await page.evaluate(async () => {
    const { ELEMENTS } = await import('/web/widgets.js');
    return {
      shown: document.getElementById('element-count').textContent,
      registered: Object.keys(ELEMENTS).length,
      defined: Object.keys(ELEMENTS).filter((name) => customElements.get(name) === ELEMENTS[name]).length,
    };
  });
  assert.equal(defined, registered, 'every registered name is a defined custom element');
  assert.equal(shown, String(defined));
  const text = await page.$eval('#embed', (el) => el.textContent.replace(/\s+/g, ' '));
  assert.match(text, new RegExp(`then any of its ${defined} elements`));
  assert.doesNotMatch(text, /four elements/);
  assert.deepEqual(watch.errors, []);
});

/** The predictions table's rows: how many, how many shown, the first shown position. */
const tableRows = (page) =>
  page.$eval('#predictions-table', (t) => {
    const rows = [...t.tBodies[0].rows];
    const shown = rows.filter((r) => !r.hidden && r.offsetParent !== null);
    return { all: rows.length, shown: shown.length, first: shown[0]?.cells[0].textContent };
  });

async function axeClean(page, when) {
  // The whole page, the steps view included: its formula box scrolls on the scores step at 360 px,
  // and is then a tab stop (keepScrollFocusable in web/widgets/figures/a11y.js).
  const found = await axeViolations(page);
  assert.deepEqual(found, [], `axe-core violations (${when}):\n${found.join('\n')}`);
}

const pageWidth = (page) => page.evaluate(() => document.documentElement.scrollWidth);

test('the predictions table shows the last positions, and all of them on request (keyboard), axe-clean at 360 px', async () => {
  const { page, watch } = await phone.newPage();
  await page.goto(phone.url('/'));
  await demoReady(page);
  const score = await predictions(page);
  const T = [...(await page.evaluate(() => window.attentionDemo.state.text))].length;
  assert.ok(T > ROWS, `the default sentence has ${T} positions`);
  assert.deepEqual(await tableRows(page), { all: T, shown: ROWS, first: String(T - ROWS) });
  const toggle = page.locator('#predictions-toggle');
  assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
  assert.equal(await toggle.textContent(), `Show all ${T} positions`);
  assert.match(await page.textContent('#predictions-shown'), new RegExp(`last ${ROWS} of ${T}`));
  // The summary still counts every position.
  assert.match(await page.textContent('#predictions-summary'), new RegExp(`of ${score.scored} positions`));
  assert.ok((await pageWidth(page)) <= 360, 'fits a phone (collapsed)');
  await axeClean(page, 'collapsed');

  // Keyboard: focus the button and press Enter; then Space folds it back.
  await toggle.focus();
  await page.keyboard.press('Enter');
  assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
  assert.deepEqual(await tableRows(page), { all: T, shown: T, first: '0' });
  assert.equal(await page.textContent('#predictions-shown'), '');
  assert.ok((await pageWidth(page)) <= 360, 'fits a phone (expanded)');
  await axeClean(page, 'expanded');
  // A new input keeps the choice: every row of the new table is shown.
  await page.fill('#text', 'Attention is a weighted average of the values.');
  await page.waitForFunction(
    (n) => document.querySelectorAll('#predictions-table tbody tr').length === n,
    [...'Attention is a weighted average of the values.'].length,
  );
  assert.equal((await tableRows(page)).shown, (await tableRows(page)).all);
  await toggle.focus();
  await page.keyboard.press('Space');
  assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
  assert.equal((await tableRows(page)).shown, ROWS);

  // A short input (reverse: 12 positions) also starts with the last rows; the answers are all there.
  await page.selectOption('#model', 'reverse');
  await page.waitForFunction(() => window.attentionDemo.source?.name === 'reverse');
  await page.waitForFunction(() => document.querySelectorAll('#predictions-table td.ok').length === 5);
  assert.deepEqual(await tableRows(page), { all: 12, shown: ROWS, first: '4' });
  assert.deepEqual(watch.errors, []);
  await phone.release(page);
});
