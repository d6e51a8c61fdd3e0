// Accessibility, as a reader with a keyboard or a screen reader meets the pages: axe-core (the
// engine of Lighthouse's audit, default rules: WCAG 2 A/AA and best practices) finds no violation
// on the demo and the tutorial, in light and dark themes, after every widget has drawn; every
// heatmap is a role="grid" with one tab stop whose live cell names its row token, column token and
// value and moves with the arrow keys; charts carry their values as a table.
// axe is evaluated through the DevTools protocol (page.evaluate), which the pages' strict
// Content-Security-Policy does not govern; everything else on the pages still runs under it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { axeViolations, demoReady, launch, routeHtml, widgetsReady } from './helpers.mjs';

const PAGES = [
  ['demo', '/?model=seeded', demoReady],
  [
    'demo on a trained preset',
    '/?model=sort',
    async (page) => {
      await demoReady(page);
      await page.waitForFunction(() => window.attentionDemo.predictionScore, null, { timeout: 20_000 });
    },
  ],
  [
    'tutorial',
    '/tutorial.html',
    async (page) => {
      await page.waitForFunction(() => document.documentElement.dataset.tutorialReady !== undefined, null, {
        timeout: 30_000,
      });
      await widgetsReady(
        page,
        'attention-steps, attention-heatmap, mask-editor, positional-encoding-heatmap',
      );
    },
  ],
];

let light, dark;
before(async () => {
  [light, dark] = await Promise.all([launch(), launch({ colorScheme: 'dark' })]);
});
after(async () => {
  await light?.close();
  await dark?.close();
});

// The tutorial in the light theme stays open for 'charts carry their values as a table' below
// (one load of the 40,000-px page fewer; that test loads it itself if this one failed first).
let lightTutorial = null;

for (const [name, path, ready] of PAGES) {
  for (const theme of ['light', 'dark']) {
    test(`axe-core: no violation on the ${name} (${theme} theme)`, async () => {
      const env = theme === 'light' ? light : dark;
      const { page, watch } = await env.newPage();
      await page.goto(env.url(path));
      await ready(page);
      const found = await axeViolations(page);
      assert.deepEqual(found, [], `axe-core violations:\n${found.join('\n')}`);
      assert.deepEqual(watch.errors, []);
      if (name === 'tutorial' && theme === 'light') lightTutorial = page;
      else await env.release(page);
    });
  }
}

test('axe-core: no violation on a page of <attention-trainer> and <attention-model-view>', async () => {
  const url = light.url('/__test/a11y-trainer.html');
  await routeHtml(
    light.context,
    url,
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>trainer</title>
    <script type="module" src="/web/widgets.js"></script></head><body><main><h1>Trainer</h1>
    <attention-trainer></attention-trainer><attention-model-view ids="1 2 3 10 3 2 1"></attention-model-view></main></body></html>`,
  );
  const { page, watch } = await light.newPage();
  await page.goto(url);
  await page.waitForFunction(() => document.querySelector('attention-trainer').snapshot, null, {
    timeout: 30_000,
  });
  await page.evaluate(async () => {
    const { TinyTransformer } = await import('/src/js/index.js');
    document.querySelector('attention-model-view').model = new TinyTransformer({
      vocabSize: 11,
      maxLength: 8,
      dModel: 8,
      numHeads: 2,
      numLayers: 2,
    });
  });
  // The view draws once it has a model and ids (its first draw sets data-ready).
  await page.waitForFunction(
    () => document.querySelector('attention-model-view').dataset.ready !== undefined,
    null,
    {
      timeout: 20_000,
    },
  );
  const found = await axeViolations(page);
  assert.deepEqual(found, [], `axe-core violations:\n${found.join('\n')}`);
  assert.deepEqual(watch.errors, []);
  await light.release(page);
});

/** The focused element inside shadow roots: its role and accessible text. */
const focused = (page) =>
  page.evaluate(() => {
    let el = document.activeElement;
    while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
    const grid = el?.closest('[role="grid"]');
    return {
      role: el?.getAttribute('role'),
      text: el?.textContent,
      tabIndex: el?.tabIndex,
      colindex: el?.getAttribute('aria-colindex'),
      rowindex: el?.parentElement?.getAttribute('aria-rowindex'),
      grid: grid
        ? {
            label: grid.getAttribute('aria-label'),
            rows: grid.getAttribute('aria-rowcount'),
            cols: grid.getAttribute('aria-colcount'),
            focusables: grid.querySelectorAll('[tabindex="0"]').length,
          }
        : null,
      host: el?.getRootNode()?.host?.localName,
    };
  });

test('a heatmap is one tab stop: a grid whose live cell names query, key and value and follows the arrows', async () => {
  const { page, watch } = await light.newPage();
  await page.goto(light.url('/?model=seeded&t=The+cat+sat+down&h=1&view=0'));
  await demoReady(page);
  const weights = await page.$eval('attention-heatmap', (el) => Array.from(el.shown.matrices[0].data));
  const tokens = await page.$eval('attention-heatmap', (el) => el.shown.queryTokens);
  // Tabbing on from the head selector reaches the grid's live cell, at (0, 0).
  await page.focus('attention-heatmap select');
  let f;
  for (let i = 0; i < 8 && f?.role !== 'gridcell'; i++) {
    await page.keyboard.press('Tab');
    f = await focused(page);
  }
  assert.equal(f.host, 'attention-heatmap');
  assert.equal(f.role, 'gridcell');
  assert.equal(f.grid.focusables, 1, 'one tab stop per heatmap');
  assert.deepEqual([f.grid.rows, f.grid.cols], [String(tokens.length), String(tokens.length)]);
  assert.match(f.grid.label, /Attention weights/);
  const name = (r, c) =>
    new RegExp(
      `^query ${r} “${tokens[r]}”, key ${c} “${tokens[c]}”: ${weights[r * tokens.length + c].toFixed(4)}$`,
    );
  assert.match(f.text, name(0, 0));
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  f = await focused(page);
  assert.match(f.text, name(2, 1));
  assert.deepEqual([f.rowindex, f.colindex], ['3', '2']);
  assert.equal(f.grid.focusables, 1, 'still one tab stop after moving (roving tabindex)');
  await page.keyboard.press('End');
  assert.match((await focused(page)).text, name(2, tokens.length - 1));
  // Tab leaves the grid at once (not cell by cell).
  await page.keyboard.press('Tab');
  f = await focused(page);
  assert.notEqual(f.role, 'gridcell');
  assert.deepEqual(watch.errors, []);
  await light.release(page);
});

test('the steps view: every step matrix is a grid; masked cells are announced as masked', async () => {
  const { page } = await light.newPage();
  await page.goto(light.url('/?model=seeded&t=a+b+c&m=causal&step=masked&h=1'));
  await demoReady(page);
  await page.focus('attention-steps canvas'); // focus moves on to the grid's live cell
  await page.keyboard.press('ArrowRight');
  const f = await focused(page);
  assert.equal(f.role, 'gridcell');
  assert.match(f.text, /^query 0 “a”, key 1 “b”: masked \(−∞\)$/);
  await light.release(page);
});

test('charts carry their values as a table', async () => {
  let page = lightTutorial;
  if (!page) {
    ({ page } = await light.newPage());
    await page.goto(light.url('/tutorial.html'));
    await PAGES.find(([name]) => name === 'tutorial')[2](page);
  }
  const tables = await page.evaluate(() =>
    [
      ...document.querySelectorAll('softmax-playground, variance-experiment, positional-encoding-heatmap'),
    ].map((el) =>
      [...el.shadowRoot.querySelectorAll('table[data-aw-chart-table]')].map((t) => ({
        caption: t.caption?.textContent,
        rows: t.tBodies[0].rows.length,
        first: t.tBodies[0].rows[0]?.textContent,
      })),
    ),
  );
  for (const list of tables) {
    assert.ok(list.length >= 1, 'each chart widget has a data table');
    for (const t of list) assert.ok(t.caption && t.rows >= 2, JSON.stringify(t));
  }
  await light.release(page);
});
