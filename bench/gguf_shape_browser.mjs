#!/usr/bin/env node
// The Chromium half of bench/gguf_shapes.mjs (`node bench/gguf_shape_browser.mjs <model>
// [--memory-limit=<bytes>]`): the shaped GGUF file of one model (written by bench/gguf_shapes.mjs
// if missing) picked through an <input type=file> on a page under the strict
// Content-Security-Policy (handed over by path: Chromium reads it from disk, as a user's pick would),
// loaded with loadPretrained({ gguf: file, memoryLimit }) and checked by the same checkGGUF. Exit 1
// on a failed check, a console error or a request off the origin.
import { launch, routeHtml } from '../tests/browser/helpers.mjs';
import { describeGGUF } from './gguf_shape_check.mjs';
import { memoryLimitOf, writeGGUFShape } from './gguf_shapes.mjs';

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>GGUF-shaped check</title>
<script type="module" src="/bench/gguf_shape_page.js"></script></head>
<body><input type="file" id="gguf" aria-label="model.gguf"><output id="result"></output></body></html>`;

// The page's module: on a pick, checkGGUF with the library the page imports; the result as JSON.
const script = (memoryLimit) => `import * as attn from '/src/js/index.js';
import { checkGGUF } from '/bench/gguf_shape_check.mjs';
document.getElementById('gguf').addEventListener('change', async (event) => {
  const out = document.getElementById('result');
  try {
    await attn.init();
    const file = event.target.files[0];
    out.textContent = JSON.stringify(await checkGGUF(attn, file, file.size, { memoryLimit: ${memoryLimit} }));
  } catch (error) {
    out.textContent = JSON.stringify({ problems: [String((error && error.code) || '') + ' ' + String((error && error.message) || error)] });
  }
});`;

// Opens the page, picks the file and waits for the result (up to 10 minutes).
async function runPage(browser, file, memoryLimit) {
  const pageUrl = browser.url('/bench/gguf_shape_check.html');
  await routeHtml(browser.context, pageUrl, PAGE);
  await browser.context.route(browser.url('/bench/gguf_shape_page.js'), (route) =>
    route.fulfill({ status: 200, contentType: 'text/javascript; charset=utf-8', body: script(memoryLimit) }),
  );
  const { page, watch } = await browser.newPage();
  await page.goto(pageUrl);
  await page.setInputFiles('#gguf', file);
  await page.waitForFunction(() => document.getElementById('result').textContent !== '', null, {
    timeout: 600_000,
  });
  return { r: JSON.parse(await page.textContent('#result')), watch };
}

const name = process.argv[2];
const memoryLimit = memoryLimitOf(name);
const { file } = writeGGUFShape(name);
const browser = await launch();
let failed = false;
try {
  const { r, watch } = await runPage(browser, file, memoryLimit);
  if (r.problems.length) {
    console.error(`${name}: Chromium: ${r.problems.join('; ')}`);
    failed = true;
  }
  if (r.fileBytes) {
    console.log(describeGGUF(`${name}, Chromium, memoryLimit ${memoryLimit.toExponential(2)}`, r));
    console.log(`${name}: Chromium result ${JSON.stringify(r)}`);
  }
  if (watch.errors.length || watch.offOrigin.length) {
    console.error(
      `${name}: Chromium: console errors ${JSON.stringify(watch.errors)}, off-origin requests ${JSON.stringify(watch.offOrigin)}`,
    );
    failed = true;
  }
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
