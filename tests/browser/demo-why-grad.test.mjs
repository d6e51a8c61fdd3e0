// The demo's "Why this prediction?" with gradients, on the default preset (the character model), in
// Chromium under the strict CSP, one page load: a heatmap cell entered shows the QK components whose
// sum plus the position bias is the score shown (and the library's qkAttribution of that cell); a key
// the causal mask hides is refused with the reason; a token of the input (a generated one) can be
// explained where it was predicted; saliency and attribution patching are offered and equal the
// library's saliency / attributionPatch on the same target; axe clean; the section fits 360 px.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { axeViolations, demoReady, join, launch } from './helpers.mjs';

const TEXT = 'the cat sat on the mat';
const CORRUPTED = 'the dog sat on the mat';

let b;
before(async () => {
  b = await launch();
});
after(async () => {
  await b?.close();
});

/** In the page: the text preset's TinyTransformer and the ids of a text (its characters). */
async function reference(page) {
  await page.evaluate(async () => {
    const attn = await import('/src/js/index.js');
    await attn.init();
    const bytes = new Uint8Array(await (await fetch('/web/presets/text.safetensors')).arrayBuffer());
    const preset = JSON.parse(attn.readSafetensorsMetadata(bytes).preset);
    const index = new Map(preset.tokens.map((t, i) => [t, i]));
    const ids = (text) => [...text].map((c) => index.get(index.has(c) ? c : preset.unknownToken));
    window.__ref = { attn, model: attn.TinyTransformer.fromSafetensors(bytes), ids };
  });
}

/** Focuses cell (row, col) of the heatmap's first head and presses Enter; resolves to the QK note. */
async function enterCell(page, row, col) {
  await page.evaluate(() => {
    document.querySelector('#why-qk-note').textContent = '';
  });
  await page
    .locator('#heatmap')
    .evaluate((el) => el.shadowRoot.querySelector('[role=grid] [role=gridcell]').focus());
  // One live cell (a roving tabindex): back to (0, 0) first; the cells used here are all below 6.
  for (let i = 0; i < 6; i++) {
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowLeft');
  }
  for (let i = 0; i < row; i++) await page.keyboard.press('ArrowDown');
  for (let i = 0; i < col; i++) await page.keyboard.press('ArrowRight');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('#why-qk-note').textContent !== '', null, {
    timeout: 20_000,
  });
  return page.textContent('#why-qk-note');
}

const num = (s) => Number(s.replace('−', '-'));

test('default preset: QK attribution from a heatmap cell, a generated token, saliency and attribution patching', async () => {
  const { page, watch } = await b.newPage();
  await page.goto(b.url(`/?t=${encodeURIComponent(TEXT)}`));
  await demoReady(page);
  await page.waitForSelector('#why:not([hidden])');
  await reference(page);
  await page.evaluate(() => {
    document.querySelector('#heatmap').addEventListener('cell-click', (e) => {
      window.__cell = e.detail;
    });
  });

  // A cell: Σ matrix + position bias = the score shown, and the score is the library's.
  const note = await enterCell(page, 3, 1);
  const m = note.match(/^Score (\S+) = Σ of the (\d+) entries \((\S+)\) \+ position bias \((\S+)\)\.$/);
  assert.ok(m, note);
  assert.ok(Math.abs(num(m[1]) - (num(m[3]) + num(m[4]))) <= 2e-3, note);
  const ref = await page.evaluate((text) => {
    const { model, ids } = window.__ref;
    const d = window.__cell;
    const o = { layer: window.attentionDemo.state.layer, head: d.head, query: d.row, key: d.col };
    const r = model.qkAttribution(ids(text), o);
    return { score: r.score, shown: Number(document.querySelector('#why-qk-results').dataset.score), o };
  }, TEXT);
  assert.deepEqual([ref.o.query, ref.o.key], [3, 1]);
  assert.ok(Math.abs(ref.shown - ref.score) <= 1e-5, `${ref.shown} vs ${ref.score}`);
  assert.equal(await page.$$eval('#why-qk-results tbody tr', (r) => r.length), 8);
  // A key after the query: the causal mask hides it, and the section says so.
  assert.match(await enterCell(page, 1, 3), /^Refused: .*mask hides/);

  // A token of the input explained where it was predicted (as a generated one is).
  await page.click('#why-explain');
  await page.waitForFunction(() => /^Next token/.test(document.querySelector('#why-note').textContent));
  const T = [...TEXT].length;
  await page.selectOption('#why-target', String(T - 1));
  await page.click('#why-explain');
  await page.waitForFunction(() =>
    /^Token at position \d+: “/.test(document.querySelector('#why-note').textContent),
  );
  assert.match(
    await page.textContent('#why-results'),
    new RegExp(`at position ${T - 2}, where it was predicted`),
  );
  await page.selectOption('#why-target', '');

  // Saliency and attribution patching, offered and equal to the library's on the same target (the
  // next token against the runner-up), computed here on the page's own copy of the preset.
  const ref2 = await page.evaluate(
    async ({ text, corrupted }) => {
      const { model, ids } = window.__ref;
      const clean = ids(text),
        T = clean.length;
      const row = model.forward([clean]).logits.data.slice((T - 1) * model.vocabSize);
      const [token, against] = Array.from(row.keys()).sort((x, y) => row[y] - row[x]);
      const o = { position: T - 1, token, against };
      const s = await model.saliency(clean, { ...o, method: 'gradient-x-input' });
      const a = await model.attributionPatch({ ...o, clean, corrupted: ids(corrupted), component: 'head' });
      return { scores: Array.from(s.scores.data), heads: Array.from(a.result.data) };
    },
    { text: TEXT, corrupted: CORRUPTED },
  );
  assert.equal(await page.$eval('#why-saliency', (x) => !x.hidden), true);
  assert.equal(await page.$eval('#why-attribution', (x) => !x.hidden), true);
  await page.click('#why-saliency');
  await page.waitForFunction(
    () => /^Saliency/.test(document.querySelector('#why-saliency-note').textContent),
    null,
    {
      timeout: 30_000,
    },
  );
  const rows = await page.$$eval('#why-saliency-results tbody tr', (r) =>
    r.map((x) => x.cells[1].textContent),
  );
  const byAbs = (v) => v.filter(Number.isFinite).sort((x, y) => Math.abs(y) - Math.abs(x));
  assert.deepEqual(
    rows.map(num),
    byAbs(ref2.scores)
      .slice(0, 6)
      .map((v) => Number(v.toFixed(3))),
  );
  assert.equal(await page.$$eval('#why-saliency-results .why-token', (x) => x.length), [...TEXT].length);
  await page.fill('#why-corrupted', CORRUPTED);
  await page.click('#why-attribution');
  await page.waitForFunction(
    () => /^Attribution patching:/.test(document.querySelector('#why-patch-note').textContent),
    null,
    { timeout: 30_000 },
  );
  const est = await page.$$eval('#why-patch-results tbody tr', (r) => r.map((x) => x.cells[1].textContent));
  assert.deepEqual(
    est.map(num),
    byAbs(ref2.heads)
      .slice(0, 6)
      .map((v) => Number(v.toFixed(3))),
  );

  const found = await axeViolations(page, '#why');
  assert.deepEqual(found, [], `axe-core violations:\n${found.join('\n')}`);
  await page.setViewportSize({ width: 360, height: 800 });
  const right = await page.evaluate(() => ({
    doc: document.documentElement.scrollWidth,
    why: document.querySelector('#why').getBoundingClientRect().right,
  }));
  assert.ok(right.doc <= 360 && right.why <= 360, JSON.stringify(right));
  assert.deepEqual(watch.errors, []);
  await b.release(page);
});
