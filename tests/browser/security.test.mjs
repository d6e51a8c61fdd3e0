// Hostile token text must render as inert text everywhere — chips, canvas labels, tooltips,
// read-outs, exports — whether it is typed, arrives in a shared link, or is handed to a widget's
// `tokens` property: no element is created from it, no script runs, no dialog opens, no request.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { demoReady, launch, routeHtml, widgetsReady } from './helpers.mjs';

const LONG = `x${'y'.repeat(3000)}z`;
const HOSTILE = [
  '<img src=x onerror="window.__pwned=1;alert(1)">',
  '</script><script>window.__pwned=2</script>',
  '<svg onload=alert(3)>',
  '"><iframe src=javascript:alert(4)>',
  '=HYPERLINK("http://evil.example","x")',
  LONG,
  '👩‍👩‍👧',
  'שלום עולם',
  'مرحبا',
];

let b;
before(async () => {
  b = await launch();
});
after(async () => {
  await b?.close();
});

/** Every element in the document and in all (open) shadow roots, by tag name. */
function countTags(page, tags) {
  return page.evaluate((names) => {
    const out = Object.fromEntries(names.map((n) => [n, 0]));
    const walk = (root) => {
      for (const el of root.querySelectorAll('*')) {
        const n = el.localName;
        if (n in out) out[n]++;
        if (el.shadowRoot) walk(el.shadowRoot);
      }
    };
    walk(document);
    return out;
  }, tags);
}

async function assertInert(page, watch, label) {
  assert.equal(await page.evaluate(() => window.__pwned), undefined, `${label}: no injected script ran`);
  assert.deepEqual(watch.dialogs, [], `${label}: no dialog`);
  const tags = await countTags(page, ['img', 'iframe', 'svg', 'script']);
  // The page's own markup has exactly one script (the demo module) or one (the widgets) and one
  // <img> (the logo) on the demo; nothing created from token text.
  assert.equal(tags.iframe, 0, `${label}: no iframe`);
  assert.ok(tags.img <= 1, `${label}: no img from token text`);
  assert.ok(tags.script <= 1, `${label}: no script from token text`);
  assert.ok(
    !watch.requests.some((u) => /\/x$|javascript:|evil\.example/.test(u)),
    `${label}: no request from token text`,
  );
  assert.deepEqual(watch.offOrigin, [], `${label}: nothing outside the origin`);
  assert.deepEqual(watch.errors, [], `${label}: no console errors`);
}

test('typed hostile text becomes inert chips and canvas labels', async () => {
  const { page, watch } = await b.newPage();
  await page.goto(b.url('/?model=seeded'));
  await demoReady(page);
  const text = '<img src=x onerror=alert(1)> </script> 👩‍👩‍👧 שלום ' + 'w'.repeat(600);
  await page.fill('#text', text);
  await page.waitForFunction(() =>
    document.querySelector('attention-steps').result?.queryTokens.includes('</'.slice(0, 1)),
  );
  const chips = await page.$$eval('#chips .chip .t', (els) => els.map((e) => e.textContent));
  assert.deepEqual(chips, [
    '<',
    'img',
    'src',
    '=',
    'x',
    'onerror',
    '=',
    'alert',
    '(',
    '1',
    ')',
    '>',
    '<',
    '/',
    'script',
    '>',
    '👩‍👩‍👧',
    'שלום',
    'w'.repeat(600),
  ]);
  // Hover a cell whose labels are hostile: the tooltip shows them as text.
  await page.evaluate(() => window.attentionDemo.setState({ step: 'weights' }));
  await page.locator('attention-steps canvas').scrollIntoViewIfNeeded();
  const p = await page.$eval('attention-steps', (el) => el.cellCenter(0, 15));
  await page.mouse.move(p.x, p.y);
  const tip = await page.$eval(
    'attention-steps',
    (el) => el.shadowRoot.querySelector('.tooltip').textContent,
  );
  assert.ok(tip.startsWith('< · >'), `tooltip: ${tip}`);
  await assertInert(page, watch, 'typed');
  await b.release(page);
});

test('hostile text in a shared link stays text', async () => {
  const { page, watch } = await b.newPage();
  await page.goto(
    b.url(
      `/?model=seeded&t=${encodeURIComponent('"><img src=x onerror=alert(1)><script>window.__pwned=1</script>')}&x=1&s=${encodeURIComponent('</textarea><svg onload=alert(2)>')}`,
    ),
  );
  await demoReady(page);
  assert.equal(
    await page.inputValue('#text'),
    '"><img src=x onerror=alert(1)><script>window.__pwned=1</script>',
  );
  assert.equal(await page.inputValue('#source'), '</textarea><svg onload=alert(2)>');
  // The copy-paste snippet escapes the text for an attribute.
  assert.ok(
    (await page.textContent('#embed-code')).includes(
      'text="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;',
    ),
  );
  await assertInert(page, watch, 'link');
  await b.release(page);
});

test('whole hostile tokens given to widgets render inert, and export safely', async () => {
  const { page, watch } = await b.newPage();
  await routeHtml(
    b.context,
    b.url('/__hostile.html'),
    `<!doctype html><meta charset="utf-8">
    <script type="module" src="/web/widgets.js"></script>
    <attention-heatmap head="0"></attention-heatmap><attention-steps step="weights"></attention-steps><mask-editor></mask-editor>`,
  );
  await page.goto(b.url('/__hostile.html'));
  await page.evaluate((tokens) => {
    for (const el of document.querySelectorAll('attention-heatmap, attention-steps, mask-editor'))
      el.tokens = tokens;
  }, HOSTILE);
  await widgetsReady(page);
  await page.waitForFunction(
    (n) => document.querySelector('attention-heatmap').shown?.queryTokens.length === n,
    HOSTILE.length,
  );
  assert.deepEqual(await page.$eval('attention-heatmap', (el) => el.shown.queryTokens), HOSTILE);
  assert.deepEqual(await page.$eval('attention-steps', (el) => el.current.rowLabels), HOSTILE);
  // The read-out of a hovered cell holds the literal token text.
  await page.locator('attention-heatmap canvas').first().scrollIntoViewIfNeeded();
  const p = await page.$eval('attention-heatmap', (el) => el.cellCenter(0, 0, 1));
  await page.mouse.move(p.x, p.y);
  const readout = await page.$eval(
    'attention-heatmap',
    (el) => el.shadowRoot.querySelector('.readout').textContent,
  );
  assert.ok(readout.includes(`query “${HOSTILE[0]}” (0) → key “${HOSTILE[1]}” (1)`), readout);
  // CSV quotes the fields and defuses the spreadsheet formula.
  const csv = await page.$eval('attention-heatmap', (el) => el.getCSV());
  assert.ok(
    csv.includes(`"'=HYPERLINK(""http://evil.example"",""x"")"`),
    'formula-looking token is quoted and prefixed',
  );
  assert.ok(csv.includes('"<img src=x onerror=""window.__pwned=1;alert(1)"">"'), 'quotes doubled');
  const json = JSON.parse(await page.$eval('attention-heatmap', (el) => el.getJSON()));
  assert.deepEqual(json.queryTokens, HOSTILE);
  // A download of the JSON carries the same text.
  const [dl] = await Promise.all([
    page.waitForEvent('download'),
    page.locator('attention-heatmap button', { hasText: 'JSON' }).click(),
  ]);
  assert.deepEqual(JSON.parse(await readFile(await dl.path(), 'utf8')).keyTokens, HOSTILE);
  await assertInert(page, watch, 'tokens property');
  await b.release(page);
});
