// The demo's seeded layer with today's attention: RoPE and ALiBi as positional choices
// and a key/value head count (grouped-query attention). Each step the page shows equals the
// library's own trace of the same configuration, the link keeps the choices, nothing errors.
// One page serves the file (b.shared): it opens at the first link, and each later test moves it to
// its own link in place (the back button's path), from the previous test's configuration.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { demoMoveTo, demoReady, launch, maxAbsDiff, referenceTrace } from './helpers.mjs';

// Widget and reference run the same wasm code on the same inputs (as demo.test.mjs).
const kTraceTol = 1e-6;
const TEXT = 'The cat sat on the mat because it was tired.';
const TOKENS = ['The', 'cat', 'sat', 'on', 'the', 'mat', 'because', 'it', 'was', 'tired', '.'];

let b;
before(async () => {
  b = await launch();
});
after(async () => {
  await b?.close();
});

const link = (pe, heads, kv, extra = '') =>
  `?model=seeded&t=${encodeURIComponent(TEXT)}&d=16&h=${heads}&kv=${kv}&pe=${pe}${extra}`;
const FIRST = link('rope', 4, 2, '&m=causal&step=weights');
/** The file's one page at `search` (its first test finds it loaded there). */
async function demoAt(search) {
  const opened = await b.shared(`/${FIRST}`, demoReady);
  if (search !== FIRST) await demoMoveTo(opened.page, search, 'seeded');
  return opened;
}

const shown = (page, step, head) =>
  page.$eval(
    'attention-steps',
    (el, [s, h]) => {
      el.setAttribute('head', String(h));
      el.goTo(s);
      el.refresh(); // render now: attribute changes otherwise render in a microtask
      const c = el.current;
      return {
        name: c.name,
        rows: c.rows,
        cols: c.cols,
        data: Array.from(c.data, (v) => (v === -Infinity ? '-inf' : v)),
      };
    },
    [step, head],
  );

// Rows × cols block `head` of a reference step (B = 1): the heads axis is the second.
function block(step, head, group = 1) {
  const [, H, rows, cols] = step.shape;
  const h = Math.min(Math.floor(head / group), H - 1);
  return step.data.slice(h * rows * cols, (h + 1) * rows * cols);
}

for (const [pe, extra] of [
  ['rope', ['q_rotated', 'k_rotated']],
  ['alibi', ['alibi']],
]) {
  test(`positional ${pe} with 2 key/value heads for 4 query heads: the steps are the library's trace`, async () => {
    const { page, watch } = await demoAt(link(pe, 4, 2, '&m=causal&step=weights'));
    assert.equal(await page.inputValue('#kvHeads'), '2');
    assert.equal(await page.inputValue('select[name="positional"]'), pe);
    assert.match(await page.textContent('#heads-note'), /2 query heads share each of the 2 key\/value heads/);
    const names = await page.$eval('attention-steps', (el) => el.steps);
    for (const n of extra) assert.ok(names.includes(n), `${n} in ${names}`);
    assert.ok(!names.includes('positional'), 'no positional table is added');
    const ref = await referenceTrace(page, {
      tokens: TOKENS,
      dModel: 16,
      heads: 4,
      kvHeads: 2,
      seed: 1,
      positional: pe,
      causal: true,
    });
    for (const step of [...extra, 'k', 'scores', 'weights', 'context']) {
      for (const head of [0, 3]) {
        const s = await shown(page, step, head);
        const group = ['k', 'k_rotated'].includes(step) ? 2 : 1;
        const diff = maxAbsDiff(s.data, block(ref.steps[step], head, group));
        assert.ok(diff <= kTraceTol, `${step} head ${head}: ${diff}`);
      }
    }
    // Weights are causal; switching back to sinusoidal drops the extra steps.
    const w = await shown(page, 'weights', 1);
    for (let i = 0; i < w.rows; i++)
      for (let j = i + 1; j < w.cols; j++) assert.equal(w.data[i * w.cols + j], 0);
    await page.selectOption('select[name="positional"]', 'sinusoidal');
    await page.waitForFunction(() => !new URLSearchParams(location.search).has('pe')); // the default is not in the link
    await page.waitForFunction((n) => !document.querySelector('attention-steps').steps.includes(n), extra[0]);
    assert.deepEqual(watch.errors, []);
  });
}

test('a key/value head count that no longer divides the heads falls back to one per head', async () => {
  const { page, watch } = await demoAt(link('rope', 8, 4));
  assert.equal(await page.inputValue('#kvHeads'), '4');
  await page.selectOption('#heads', '2');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('h') === '2');
  await page.waitForFunction(() => document.querySelector('#kvHeads').options.length === 3);
  assert.equal(await page.inputValue('#kvHeads'), '0');
  const options = await page.$$eval('#kvHeads option', (o) => o.map((x) => x.value));
  assert.deepEqual(options, ['0', '1', '2']);
  assert.deepEqual(watch.errors, []);
});
