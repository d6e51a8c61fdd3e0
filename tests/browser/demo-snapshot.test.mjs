// "Save as HTML" in the demo: the views on screen become one standalone HTML file — inline SVG
// and data tables, no script, no URL — named after the model, with the input and the link; the page
// stays clean under the strict CSP.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { demoReady, launch } from './helpers.mjs';

let b;
before(async () => {
  b = await launch();
});
after(async () => {
  await b?.close();
});

test('Save as HTML writes the shown views as inline SVG with their tables, and no script', async () => {
  const { page, watch } = await b.newPage();
  await page.goto(b.url('/?model=reverse&t=3+1+4+1+5+9+%7C'));
  await demoReady(page);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#save-html')]);
  assert.match(download.suggestedFilename(), /\.html$/);
  const html = await (await import('node:fs/promises')).readFile(await download.path(), 'utf8');
  assert.ok(!/<script/i.test(html), 'no script');
  assert.ok(!/(?:src|href)\s*=\s*["'](?:https?:|\/\/)/i.test(html), 'no external URL');
  assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'/);
  const svgs = html.match(/<svg\b/g) ?? [];
  assert.ok(svgs.length >= 2, `${svgs.length} figures`);
  assert.ok(/<table\b/.test(html), 'the data tables');
  assert.match(html, /reverse/);
  assert.match(html, /3 1 4 1 5 9 \|/);
  assert.match(html, /model=reverse/, 'a preset is in a link: the file names it');
  assert.deepEqual(watch.errors, []);
  await b.release(page);
});
