// The demo's "Why this prediction?" section, in Chromium under the strict CSP: on the
// induction preset the head scores, the attribution and the patching tables equal the library's
// headScores / logitAttribution / patch run in the page on the same preset and ids, and a head named
// there opens in the steps view; on an opened GPT-2 folder (its model in the demo's worker) the IOI
// example is prefilled and explained; the seeded layer has no such section; axe clean.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT, axeViolations, demoReady, join, launch } from './helpers.mjs';

// A repeated segment (the induction preset's data): 5 12 3 9 14 0 7 11 2 3 9 14 0.
const TEXT = '5 12 3 9 14 0 7 11 2 3 9 14 0';
const CORRUPTED = '5 12 3 9 14 8 7 11 2 3 9 14 0';

let b;
before(async () => {
  b = await launch();
});
after(async () => {
  await b?.close();
});

const rowsOf = (page, selector) =>
  page.$$eval(`${selector} tbody tr`, (rows) =>
    rows.map((r) => [...r.querySelectorAll('td')].map((c) => c.textContent)),
  );

test('on the induction preset: the tables equal the library run in the page; a head opens step by step', async () => {
  const { page, watch } = await b.newPage();
  await page.goto(b.url(`/?model=induction&t=${encodeURIComponent(TEXT)}`));
  await demoReady(page);
  await page.waitForSelector('#why:not([hidden])');
  await page.click('#why-explain');
  await page.waitForFunction(
    () => /^Next token/.test(document.querySelector('#why-note').textContent),
    null,
    { timeout: 20_000 },
  );
  const ref = await page.evaluate(
    async ({ text, corrupted }) => {
      const attn = await import('/src/js/index.js');
      await attn.init();
      const bytes = new Uint8Array(await (await fetch('/web/presets/induction.safetensors')).arrayBuffer());
      const m = attn.TinyTransformer.fromSafetensors(bytes);
      const ids = text.split(' ').map(Number),
        bad = corrupted.split(' ').map(Number);
      const row = m.forward([ids]).logits.data.slice((ids.length - 1) * m.vocabSize);
      const order = Array.from(row.keys()).sort((x, y) => row[y] - row[x]);
      const scores = m.headScores(ids);
      const parts = m.logitAttribution(ids, { token: order[0], against: order[1] });
      const p = await m.patch({
        clean: ids,
        corrupted: bad,
        token: order[0],
        against: order[1],
        component: 'head',
      });
      const top = (t, by) =>
        Array.from(t.data, (v, i) => [i, v])
          .filter(([, v]) => !Number.isNaN(v))
          .sort((x, y) => by(y[1]) - by(x[1]));
      const out = {
        induction: top(scores.induction, (v) => v)
          .slice(0, 3)
          .map(([i, v]) => [`L${Math.floor(i / 2)} H${i % 2}`, v]),
        heads: top(parts.heads, Math.abs)
          .slice(0, 4)
          .map(([i, v]) => [`L${Math.floor(i / 2)} H${i % 2}`, v]),
        patch: top(p.result, Math.abs)
          .slice(0, 4)
          .map(([i, v]) => [`L${Math.floor(i / 2)} H${i % 2}`, v]),
      };
      m.dispose();
      return out;
    },
    { text: TEXT, corrupted: CORRUPTED },
  );
  const fmt = (x) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(3));
  const tables = await page.$$('#why-results table');
  assert.equal(tables.length, 4, 'three score kinds and the attribution');
  const induction = await page.$$eval('#why-results table', (ts) => {
    const t = ts.find((x) => /^Induction/.test(x.caption.textContent));
    return [...t.querySelectorAll('tbody tr')].map((r) =>
      [...r.querySelectorAll('td')].map((c) => c.textContent),
    );
  });
  assert.deepEqual(
    induction,
    ref.induction.map(([h, v]) => [h, fmt(v)]),
  );
  const attribution = await page.$$eval('#why-results table', (ts) =>
    [...ts.at(-1).querySelectorAll('tbody tr')]
      .slice(0, 4)
      .map((r) => [...r.querySelectorAll('td')].map((c) => c.textContent)),
  );
  assert.deepEqual(
    attribution,
    ref.heads.map(([h, v]) => [h, fmt(v)]),
  );

  await page.fill('#why-corrupted', CORRUPTED);
  await page.click('#why-patch');
  await page.waitForFunction(
    () => /Clean logit difference/.test(document.querySelector('#why-patch-note').textContent),
    null,
    { timeout: 20_000 },
  );
  assert.deepEqual(
    (await rowsOf(page, '#why-patch-results')).slice(0, 4),
    ref.patch.map(([h, v]) => [h, fmt(v)]),
  );
  assert.equal(await page.$eval('#why-cancel', (c) => c.hidden), true);
  // A different length is explained, not run.
  await page.fill('#why-corrupted', '5 12 3');
  await page.click('#why-patch');
  await page.waitForFunction(() => /same length/.test(document.querySelector('#why-patch-note').textContent));

  // A head's name opens it in the steps view.
  const [layer, head] = ref.patch[0][0].match(/\d+/g).map(Number);
  await page.fill('#why-corrupted', CORRUPTED);
  await page.click('#why-patch');
  await page.waitForFunction(
    () => /Clean logit difference/.test(document.querySelector('#why-patch-note').textContent),
    null,
    { timeout: 20_000 },
  );
  await page.click('#why-patch-results tbody tr:first-child button');
  await page.waitForFunction(
    ({ layer, head }) =>
      window.attentionDemo.state.layer === layer && window.attentionDemo.state.head === head,
    { layer, head },
  );

  const found = await axeViolations(page, '#why');
  assert.deepEqual(found, [], `axe-core violations:\n${found.join('\n')}`);
  assert.deepEqual(watch.errors, []);
  await b.release(page);
});

test('an opened GPT-2 folder: the IOI example, explained from the worker; the seeded layer has no section', async () => {
  const { page, watch } = await b.newPage();
  await page.goto(b.url('/?model=seeded'));
  await demoReady(page);
  assert.equal(await page.$eval('#why', (s) => s.hidden), true, 'the seeded layer has no why section');
  await page.setInputFiles('#model-folder', join(ROOT, 'tests', 'golden', 'pretrained', 'gpt2-tiny'));
  await page.waitForFunction(() => /Opened/.test(document.querySelector('#model-note').textContent), null, {
    timeout: 20_000,
  });
  await page.waitForSelector('#why:not([hidden])');
  await page.waitForSelector('#why-ioi:not([hidden])');
  await page.click('#why-ioi');
  await page.waitForFunction(() => document.querySelector('#text').value.startsWith('When Mary and John'));
  assert.match(await page.inputValue('#why-corrupted'), /Mary gave a drink to$/);
  await page.click('#why-explain');
  await page.waitForFunction(
    () => /^Next token|Could not/.test(document.querySelector('#why-note').textContent),
    null,
    { timeout: 30_000 },
  );
  assert.match(await page.textContent('#why-note'), /^Next token/);
  assert.equal((await page.$$('#why-results table')).length, 4);
  await page.click('#why-patch');
  await page.waitForFunction(
    () =>
      /Clean logit difference|same length|Could not/.test(
        document.querySelector('#why-patch-note').textContent,
      ),
    null,
    { timeout: 60_000 },
  );
  assert.match(await page.textContent('#why-patch-note'), /Clean logit difference/);
  assert.equal((await rowsOf(page, '#why-patch-results')).length, 6);
  assert.deepEqual(watch.errors, []);
  await b.release(page);
});
