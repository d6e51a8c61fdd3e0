// Accessibility, as a reader with a keyboard or a screen reader meets the pages: axe-core (the
// engine of Lighthouse's audit, default rules: WCAG 2 A/AA and best practices) finds no violation
// on the demo and the tutorial, in light and dark themes, after every widget has drawn; every
// heatmap is a role="grid" with one tab stop whose live cell names its row token, column token and
// value and moves with the arrow keys; charts carry their values as a table.
// axe is evaluated through the DevTools protocol (page.evaluate), which the pages' strict
// Content-Security-Policy does not govern; everything else on the pages still runs under it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { axeViolations, demoReady, demoSettled, launch, routeHtml, widgetsReady } from './helpers.mjs';

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

let light;
before(async () => {
  light = await launch();
});
after(async () => {
  await light?.close();
});

// Each page is loaded once (light.shared) and checked in both themes: the dark test switches the
// system's colour scheme under the open page, as a reader's system does. The pages' CSS follows the
// media query live and every widget redraws on the change (color-scheme.test.mjs proves it), so axe
// sees the dark page a dark load would show. The tests below read the same pages back in light.
const inScheme = async (page, scheme) => {
  await page.emulateMedia({ colorScheme: scheme });
  await page.waitForFunction((s) => matchMedia(`(prefers-color-scheme: ${s})`).matches, scheme);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
};

for (const [name, path, ready] of PAGES) {
  for (const theme of ['light', 'dark']) {
    test(`axe-core: no violation on the ${name} (${theme} theme)`, async () => {
      const { page, watch } = await light.shared(path, ready);
      await inScheme(page, theme);
      const found = await axeViolations(page);
      assert.deepEqual(found, [], `axe-core violations:\n${found.join('\n')}`);
      assert.deepEqual(watch.errors, []);
      if (theme === 'dark') await inScheme(page, 'light');
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
  // The demo page the axe tests read, moved from four heads in a grid to one head on a new text:
  // the tiles of the heads gone leave nothing behind in the Tab order.
  const { page, watch } = await light.shared('/?model=seeded', demoReady);
  await page.evaluate(() => window.attentionDemo.setState({ view: 'all' }, 'replace'));
  await demoSettled(page);
  const tiles = () =>
    page.$eval('attention-heatmap', (el) => el.shadowRoot.querySelectorAll('[role="grid"]').length);
  assert.equal(await tiles(), 4, 'four heads: four grids');
  await page.evaluate(() =>
    window.attentionDemo.setState({ text: 'The cat sat down', heads: 1, view: '0' }, 'replace'),
  );
  await demoSettled(page);
  assert.equal(await tiles(), 1, 'one head: one grid');
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
});

test('the steps view: every step matrix is a grid; masked cells are announced as masked', async () => {
  const { page } = await light.shared('/?model=seeded', demoReady);
  await page.evaluate(() =>
    window.attentionDemo.setState({ text: 'a b c', mask: 'causal', step: 'masked', heads: 1 }, 'replace'),
  );
  await demoSettled(page);
  await page.focus('attention-steps canvas'); // focus moves on to the grid's live cell
  await page.keyboard.press('ArrowRight');
  const f = await focused(page);
  assert.equal(f.role, 'gridcell');
  assert.match(f.text, /^query 0 “a”, key 1 “b”: masked \(−∞\)$/);
});

test('charts carry their values as a table', async () => {
  const { page } = await light.shared('/tutorial.html', PAGES.find(([name]) => name === 'tutorial')[2]);
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
});
