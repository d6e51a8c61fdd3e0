// Each widget alone in a minimal page (the script tag and one element, nothing else), one wasm
// instance shared by several widgets, masks that renormalise, keyboard operation, ARIA, events,
// and a screenshot of every widget.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  SHOTS,
  join,
  launch,
  referenceTrace,
  routeHtml,
  widgetsReady,
  block,
  maxAbsDiff,
} from './helpers.mjs';

const kSumTol = 1e-6; // softmax rows sum to 1 within float32 rounding
const kTraceTol = 1e-6;

const WIDGETS = {
  'attention-steps': '<attention-steps text="The cat sat on the mat." step="scores"></attention-steps>',
  'attention-heatmap':
    '<attention-heatmap text="The cat sat on the mat because it was tired." mask="causal"></attention-heatmap>',
  'positional-encoding-heatmap':
    '<positional-encoding-heatmap length="40" d-model="48"></positional-encoding-heatmap>',
  'mask-editor': '<mask-editor text="The cat sat on the mat." mask="causal" toggles="4.0"></mask-editor>',
};

let b;
before(async () => {
  b = await launch({ viewport: { width: 1000, height: 900 } });
});
after(async () => {
  await b?.close();
});

/** Opens a page whose whole source is the widgets script tag and `body`. */
async function minimalPage(name, body) {
  const path = `/__min/${name}.html`;
  await routeHtml(b.context, b.url(path), `<script type="module" src="/web/widgets.js"></script>\n${body}\n`);
  const { page, watch } = await b.newPage();
  await page.goto(b.url(path));
  await widgetsReady(page);
  return { page, watch };
}

for (const [name, html] of Object.entries(WIDGETS)) {
  test(`<${name}> works alone in a minimal page: renders, ARIA, no errors, screenshot`, async () => {
    const { page, watch } = await minimalPage(name, html);
    const a11y = await page.$eval(name, (el) => {
      const root = el.shadowRoot;
      return {
        canvases: [...root.querySelectorAll('canvas')]
          .filter((c) => !c.hidden)
          .map((c) => ({
            role: c.getAttribute('role'),
            label: c.getAttribute('aria-label') || '',
            w: c.width,
            h: c.height,
          })),
        unnamedButtons: [...root.querySelectorAll('button')].filter(
          (x) => !(x.getAttribute('aria-label') || x.textContent.trim()),
        ).length,
        unnamedSelects: [...root.querySelectorAll('select, input')].filter(
          (x) => !x.getAttribute('aria-label') && !x.closest('label'),
        ).length,
        live: !!root.querySelector('[aria-live]'),
        exports: [...root.querySelectorAll('.exports button')].map((x) => x.textContent),
        svg: typeof el.toSVG === 'function',
        error: root.querySelector('.error')?.hidden,
      };
    });
    assert.ok(a11y.canvases.length >= 1);
    for (const c of a11y.canvases) {
      assert.equal(c.role, 'img');
      assert.ok(c.label.length > 20, `canvas described: ${c.label}`);
      assert.ok(c.w > 50 && c.h > 50, 'canvas drawn at a real size');
    }
    assert.equal(a11y.unnamedButtons, 0);
    assert.equal(a11y.unnamedSelects, 0);
    assert.ok(a11y.live, 'an aria-live read-out');
    assert.deepEqual(
      a11y.exports,
      a11y.svg ? ['PNG', 'SVG', 'CSV', 'JSON'] : ['PNG', 'CSV', 'JSON'],
      'an SVG button where there is toSVG()',
    );
    assert.equal(a11y.error, true, 'no error shown');
    await page.locator(name).screenshot({ path: join(SHOTS, `${name}.png`) });
    assert.deepEqual(watch.errors, []);
    assert.deepEqual(watch.offOrigin, []);
    await b.release(page);
  });
}

test('several widgets share one wasm instance (one download, one instantiation)', async () => {
  await b.context.addInitScript(() => {
    window.__wasmInstantiations = 0;
    for (const fn of ['instantiate', 'instantiateStreaming']) {
      const orig = WebAssembly[fn];
      if (orig)
        WebAssembly[fn] = function (...args) {
          window.__wasmInstantiations++;
          return orig.apply(this, args);
        };
    }
  });
  const { page, watch } = await minimalPage(
    'all',
    Object.values(WIDGETS).join('\n') + '\n<attention-heatmap head="mean"></attention-heatmap>',
  );
  assert.equal(await page.evaluate(() => window.__wasmInstantiations), 1, 'WebAssembly instantiated once');
  assert.equal(watch.requests.filter((u) => u.endsWith('.wasm')).length, 1, 'the .wasm fetched once');
  const same = await page.evaluate(async () => {
    const widgets = await import('/web/widgets.js');
    const lib = await import('/src/js/index.js');
    return (
      widgets.attn === lib &&
      (await lib.init()) === (await widgets.ready) &&
      (await lib.init()) === (await lib.init())
    );
  });
  assert.ok(same, 'widgets and page code see the same library module and the same instance');
  assert.deepEqual(watch.errors, []);
  await b.release(page);
});

test('<mask-editor>: a clicked cell gets weight 0 and its row still sums to 1, in every head', async () => {
  const { page, watch } = await minimalPage(
    'mask',
    '<mask-editor text="a b c d e" mask="none" seed="3"></mask-editor>',
  );
  const events = [];
  await page.exposeFunction('__maskEvent', (d) => events.push(d));
  await page.$eval('mask-editor', (el) =>
    el.addEventListener('mask-change', (e) =>
      window.__maskEvent({ mask: e.detail.mask, toggles: e.detail.toggles }),
    ),
  );
  const T = 5;
  const click = async (r, c) => {
    const p = await page.$eval('mask-editor', (el, [i, j]) => el.cellCenter('mask', i, j), [r, c]);
    await page.mouse.click(p.x, p.y);
  };
  await click(2, 1);
  await page.waitForFunction(() => document.querySelector('mask-editor').allowed.data[2 * 5 + 1] === 0);
  assert.deepEqual(events.at(-1), { mask: 'custom', toggles: [[2, 1]] }, 'mask-change says what changed');
  const heads = await page.$eval('mask-editor', (el) => el.result.heads);
  for (const h of ['mean', ...Array.from({ length: heads }, (_, i) => String(i))]) {
    await page.selectOption('mask-editor select', h);
    const w = await page.$eval('mask-editor', (el) => Array.from(el.weights.data));
    assert.equal(w[2 * T + 1], 0, `head ${h}: the masked weight is exactly 0`);
    for (let i = 0; i < T; i++) {
      const s = w.slice(i * T, (i + 1) * T).reduce((a, x) => a + x, 0);
      assert.ok(Math.abs(s - 1) <= kSumTol, `head ${h}: row ${i} sums to ${s}`);
    }
  }
  // The library agrees: same mask through MultiHeadAttention.forward.
  const mask = Array(T * T).fill(1);
  mask[2 * T + 1] = 0;
  const ref = await referenceTrace(page, {
    tokens: ['a', 'b', 'c', 'd', 'e'],
    dModel: 16,
    heads: 4,
    seed: 3,
    positional: 'sinusoidal',
    mask,
  });
  const mine = await page.$eval('mask-editor', (el) => Array.from(el.result.byName.weights.data));
  assert.ok(maxAbsDiff(mine, ref.steps.weights.data) <= kTraceTol);
  // Masking a whole row gives zeros there (not NaN); the other rows are untouched.
  for (let j = 0; j < T; j++) await click(0, j);
  await page.waitForFunction(() =>
    document
      .querySelector('mask-editor')
      .allowed.data.slice(0, 5)
      .every((v) => v === 0),
  );
  await page.selectOption('mask-editor select', '1');
  const w = await page.$eval('mask-editor', (el) => Array.from(el.weights.data));
  assert.deepEqual(w.slice(0, T), [0, 0, 0, 0, 0], 'a fully masked row is all zeros');
  assert.ok(Math.abs(w.slice(T, 2 * T).reduce((a, x) => a + x, 0) - 1) <= kSumTol);
  // Keyboard: focus the mask (the last click left the cursor at (0, 4)); Home, then right three
  // times to (0, 3); Enter lets that key back in: the row is one-hot.
  await page.focus('mask-editor canvas');
  await page.keyboard.press('Home');
  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('mask-editor').allowed.data[3] === 1);
  const w2 = await page.$eval('mask-editor', (el) => Array.from(el.weights.data).slice(0, 5));
  assert.deepEqual(w2, [0, 0, 0, 1, 0]);
  // The mode buttons: causal clears the clicks.
  await page.locator('mask-editor button[data-mode=causal]').click();
  assert.deepEqual(events.at(-1), { mask: 'causal', toggles: [] });
  assert.deepEqual(watch.errors, []);
  await page.close();
});

test('<attention-heatmap>: click or Enter selects a query row; events; precomputed data', async () => {
  const { page, watch } = await minimalPage(
    'heat',
    '<attention-heatmap text="one two three four five" heads="2" d-model="8"></attention-heatmap>',
  );
  const clicks = [];
  await page.exposeFunction('__cell', (d) => clicks.push(d));
  await page.$eval('attention-heatmap', (el) =>
    el.addEventListener('cell-click', (e) => window.__cell(e.detail)),
  );
  const p = await page.$eval('attention-heatmap', (el) => el.cellCenter(1, 3, 2));
  await page.mouse.click(p.x, p.y);
  await page.waitForFunction(() => document.querySelector('attention-heatmap').getAttribute('query') === '3');
  assert.deepEqual(
    { ...clicks.at(-1), value: undefined },
    { head: 1, row: 3, col: 2, value: undefined, query: 'four', key: 'three' },
  );
  const caption = await page.$eval(
    'attention-heatmap',
    (el) => el.shadowRoot.querySelector('.dist .muted').textContent,
  );
  assert.match(caption, /sum to 1\.0000/);
  // Keyboard on the first tile: two rows down, Enter.
  await page.focus('attention-heatmap canvas');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('attention-heatmap').getAttribute('query') === '2');
  assert.equal(clicks.at(-1).head, 0);
  // Precomputed weights instead of the model (the CircuitsVis use case), nested arrays.
  await page.$eval('attention-heatmap', (el) => {
    el.data = {
      weights: [
        [
          [1, 0],
          [0.25, 0.75],
        ],
        [
          [0.5, 0.5],
          [0.9, 0.1],
        ],
      ],
      queryTokens: ['x', 'y'],
      keyTokens: ['x', 'y'],
    };
  });
  await page.waitForFunction(() => document.querySelector('attention-heatmap').shown.queryTokens[0] === 'x');
  const shown = await page.$eval('attention-heatmap', (el) =>
    el.shown.matrices.map((m) => Array.from(m.data)),
  );
  assert.deepEqual(shown, [
    [1, 0, 0.25, 0.75],
    [0.5, 0.5, 0.8999999761581421, 0.10000000149011612],
  ]);
  assert.deepEqual(watch.errors, []);
  await page.close();
});

test('<positional-encoding-heatmap>: the library values; base and dims respond', async () => {
  const { page, watch } = await minimalPage(
    'pe',
    '<positional-encoding-heatmap length="20" d-model="16" base="1000"></positional-encoding-heatmap>',
  );
  const same = await page.evaluate(async () => {
    const lib = await import('/src/js/index.js');
    const ref = lib.sinusoidalEncoding(20, 16, { base: 1000 }).data;
    const shown = document.querySelector('positional-encoding-heatmap').shown;
    return (
      shown.base === 1000 && shown.data.length === ref.length && shown.data.every((v, i) => v === ref[i])
    );
  });
  assert.ok(same, 'the heatmap shows sinusoidalEncoding(20, 16, { base: 1000 })');
  const p = await page.$eval('positional-encoding-heatmap', (el) => el.cellCenter(3, 5));
  await page.mouse.click(p.x, p.y);
  assert.deepEqual(await page.$eval('positional-encoding-heatmap', (el) => el.dims), [0, 2, 8, 5]);
  await page.$eval('positional-encoding-heatmap', (el) => {
    el.base = 10000;
  });
  await page.waitForFunction(
    () => document.querySelector('positional-encoding-heatmap').shown.base === 10000,
  );
  const readout = await page.$eval('positional-encoding-heatmap', (el) =>
    el.shadowRoot.querySelector('canvas').getAttribute('aria-label'),
  );
  assert.match(readout, /base 10000/);
  assert.deepEqual(watch.errors, []);
  await page.close();
});

test('<attention-steps>: the tab list is keyboard operable and emits step-change', async () => {
  const { page, watch } = await minimalPage(
    'steps',
    '<attention-steps text="a b c" positional="none"></attention-steps>',
  );
  const events = [];
  await page.exposeFunction('__step', (d) => events.push(d));
  await page.$eval('attention-steps', (el) =>
    el.addEventListener('step-change', (e) => window.__step(e.detail)),
  );
  const names = await page.$eval('attention-steps', (el) => el.steps);
  assert.deepEqual(names, [
    'input',
    'q',
    'k',
    'v',
    'scores',
    'scaled',
    'masked',
    'weights',
    'context',
    'concat',
    'output',
  ]);
  await page.focus('attention-steps [role=tab][aria-selected=true]');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  assert.deepEqual(
    events.map((e) => e.name),
    ['q', 'k'],
  );
  await page.keyboard.press('End');
  assert.equal(await page.$eval('attention-steps', (el) => el.current.name), 'output');
  assert.equal(
    await page.evaluate(() => document.activeElement.shadowRoot.activeElement.getAttribute('aria-selected')),
    'true',
    'focus follows the selected tab',
  );
  // Attributes drive it too.
  await page.$eval('attention-steps', (el) => el.setAttribute('step', 'weights'));
  await page.waitForFunction(() => document.querySelector('attention-steps').current.name === 'weights');
  const ref = await referenceTrace(page, {
    tokens: ['a', 'b', 'c'],
    dModel: 16,
    heads: 4,
    seed: 1,
    positional: 'none',
  });
  const cur = await page.$eval('attention-steps', (el) => Array.from(el.current.data));
  assert.ok(maxAbsDiff(cur, block(ref.steps.weights, 0)) <= kTraceTol);
  assert.deepEqual(watch.errors, []);
  await page.close();
});
