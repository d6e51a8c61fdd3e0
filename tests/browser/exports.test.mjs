// Every widget's PNG / CSV / JSON buttons download a file whose content is what the widget shows:
// the CSV and JSON numbers equal the displayed matrix, the PNG is a real image of the drawn size.
import { after, afterEach, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { launch, routeHtml, widgetsReady } from './helpers.mjs';

let b, page, watch;
before(async () => {
  b = await launch({ viewport: { width: 1100, height: 900 } });
  await routeHtml(
    b.context,
    b.url('/__exports.html'),
    `<!doctype html><meta charset="utf-8">
    <script type="module" src="/web/widgets.js"></script>
    <attention-steps text="Exports, checked." step="masked" mask="causal" head="1"></attention-steps>
    <attention-heatmap id="one" text="Exports, checked." head="2"></attention-heatmap>
    <attention-heatmap id="all" text="Exports, checked." head="all"></attention-heatmap>
    <positional-encoding-heatmap length="12" d-model="8"></positional-encoding-heatmap>
    <mask-editor text="Exports, checked." mask="padding" pad="2"></mask-editor>`,
  );
});
after(async () => {
  await b?.close();
});

// A fresh page per test: Chromium pauses a page's downloads after ten in quick succession.
beforeEach(async () => {
  ({ page, watch } = await b.newPage());
  await page.goto(b.url('/__exports.html'));
  await widgetsReady(page);
});
afterEach(async () => {
  assert.deepEqual(watch.errors, []);
  assert.deepEqual(watch.offOrigin, []);
  await b.release(page);
});

/** Clicks a widget's export button and returns { name, bytes }. */
async function exportFile(selector, format) {
  const button = page.locator(`${selector} .exports button`, { hasText: format.toUpperCase() });
  await button.scrollIntoViewIfNeeded();
  const [dl] = await Promise.all([page.waitForEvent('download'), button.click()]);
  return { name: dl.suggestedFilename(), bytes: await readFile(await dl.path()) };
}

/** Parses our CSV (RFC 4180 quoting). */
function parseCSV(text) {
  const rows = [];
  let row = [],
    field = '',
    quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += ch;
  }
  return rows;
}
const num = (s) => (s === '-Infinity' ? -Infinity : Number(s));

/** PNG width and height from the IHDR chunk. */
function pngSize(bytes) {
  assert.deepEqual([...bytes.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], 'PNG signature');
  assert.equal(bytes.subarray(12, 16).toString('latin1'), 'IHDR');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

test('<attention-steps>: CSV and JSON hold the shown step (−∞ included), PNG its picture', async () => {
  const cur = await page.$eval('attention-steps', (el) => ({
    ...el.current,
    data: Array.from(el.current.data),
  }));
  assert.equal(cur.name, 'masked');
  const csv = await exportFile('attention-steps', 'csv');
  assert.equal(csv.name, 'attention-steps-masked-head1.csv');
  const rows = parseCSV(csv.bytes.toString('utf8'));
  assert.deepEqual(rows[0].slice(1), cur.colLabels);
  assert.deepEqual(
    rows.slice(1).map((r) => r[0]),
    cur.rowLabels.map((l) => (/^[=+\-@]/.test(l) ? `'${l}` : l)),
  );
  const values = rows.slice(1).flatMap((r) => r.slice(1).map(num));
  assert.deepEqual(values, cur.data, 'every number, exactly');
  assert.ok(values.includes(-Infinity), 'masked cells are -Infinity');
  const json = JSON.parse((await exportFile('attention-steps', 'json')).bytes);
  assert.equal(json.step, 'masked');
  assert.equal(json.head, 1);
  assert.deepEqual(
    json.data.flat(),
    cur.data.map((v) => (v === -Infinity ? null : v)),
  );
  const png = await exportFile('attention-steps', 'png');
  const canvas = await page.$eval('attention-steps', (el) => {
    const c = el.shadowRoot.querySelector('canvas');
    return { w: c.width, h: c.height };
  });
  assert.deepEqual(pngSize(png.bytes), { width: canvas.w, height: canvas.h });
});

test('<attention-heatmap>: one head as a matrix CSV, all heads in long form, PNG of every tile', async () => {
  const shown = await page.$eval('#one', (el) => ({
    ...el.shown,
    matrices: el.shown.matrices.map((m) => ({ ...m, data: Array.from(m.data) })),
  }));
  const csv = parseCSV((await exportFile('#one', 'csv')).bytes.toString('utf8'));
  assert.equal(csv[0][0], 'query \\ key');
  assert.deepEqual(
    csv.slice(1).flatMap((r) => r.slice(1).map(num)),
    shown.matrices[0].data,
  );
  const json = JSON.parse((await exportFile('#one', 'json')).bytes);
  assert.deepEqual(
    json.heads.map((h) => h.head),
    [2],
  );
  assert.deepEqual(json.heads[0].weights.flat(), shown.matrices[0].data);
  const all = await page.$eval('#all', (el) =>
    el.shown.matrices.map((m) => ({ head: m.head, data: Array.from(m.data) })),
  );
  const long = parseCSV((await exportFile('#all', 'csv')).bytes.toString('utf8'));
  assert.deepEqual(long[0], ['head', 'row', 'row_label', 'col', 'col_label', 'value']);
  const T = Math.sqrt(all[0].data.length);
  for (const r of long.slice(1)) {
    const [h, i, , j, , v] = r;
    assert.equal(num(v), all[Number(h)].data[Number(i) * T + Number(j)]);
  }
  assert.equal(long.length - 1, all.length * T * T);
  const png = pngSize((await exportFile('#all', 'png')).bytes);
  const box = await page.$eval('#all', (el) => {
    const cs = [...el.shadowRoot.querySelectorAll('canvas')].filter((c) => !c.hidden);
    const r0 = el.shadowRoot.querySelector('.tiles').getBoundingClientRect();
    const bottom = Math.max(...cs.map((c) => c.getBoundingClientRect().bottom));
    return { dpr: devicePixelRatio, height: bottom - r0.top };
  });
  assert.ok(
    png.width > 300 && Math.abs(png.height - box.height * box.dpr) <= 16 * box.dpr,
    `PNG holds the tiles and the bars (${png.height} vs ${box.height})`,
  );
});

test('<positional-encoding-heatmap>: CSV/JSON equal sinusoidalEncoding; PNG has heatmap and curves', async () => {
  const ref = await page.evaluate(async () => {
    const lib = await import('/src/js/index.js');
    return Array.from(lib.sinusoidalEncoding(12, 8, { base: 10000 }).data);
  });
  const csv = parseCSV((await exportFile('positional-encoding-heatmap', 'csv')).bytes.toString('utf8'));
  assert.deepEqual(csv[0], ['position \\ dim', '0', '1', '2', '3', '4', '5', '6', '7']);
  assert.deepEqual(
    csv.slice(1).flatMap((r) => r.slice(1).map(num)),
    ref,
  );
  const json = JSON.parse((await exportFile('positional-encoding-heatmap', 'json')).bytes);
  assert.deepEqual([json.base, json.length, json.dModel], [10000, 12, 8]);
  assert.deepEqual(json.data.flat(), ref);
  const png = await exportFile('positional-encoding-heatmap', 'png');
  assert.equal(png.name, 'positional-encoding-base10000.png');
  const sizes = await page.$eval('positional-encoding-heatmap', (el) =>
    [...el.shadowRoot.querySelectorAll('canvas')].map((c) => c.height),
  );
  assert.ok(pngSize(png.bytes).height >= sizes[0] + sizes[1], 'both pictures');
});

test('<mask-editor>: mask and weights per cell; PNG of both panels', async () => {
  const s = await page.$eval('mask-editor', (el) => ({
    allowed: Array.from(el.allowed.data),
    weights: Array.from(el.weights.data),
    cols: el.allowed.cols,
  }));
  const csv = parseCSV((await exportFile('mask-editor', 'csv')).bytes.toString('utf8'));
  assert.deepEqual(csv[0], ['row', 'row_label', 'col', 'col_label', 'may_attend', 'weight']);
  for (const [i, , j, label, may, w] of csv.slice(1)) {
    const k = Number(i) * s.cols + Number(j);
    assert.equal(Number(may), s.allowed[k]);
    assert.equal(num(w), s.weights[k]);
    if (label === '<pad>') assert.equal(Number(may), 0, 'padding keys are masked');
  }
  const json = JSON.parse((await exportFile('mask-editor', 'json')).bytes);
  assert.equal(json.mode, 'padding');
  assert.deepEqual(json.mayAttend.flat(), s.allowed);
  assert.deepEqual(json.weights.flat(), s.weights);
  const png = pngSize((await exportFile('mask-editor', 'png')).bytes);
  const w = await page.$eval('mask-editor', (el) =>
    [...el.shadowRoot.querySelectorAll('canvas')].reduce((a, c) => a + c.width, 0),
  );
  assert.ok(png.width >= w, 'both panels side by side');
});
