#!/usr/bin/env node
// The Chromium half of bench/smollm2_shape.mjs: the SmolLM2-360M-shaped checkpoint (written by that
// script if missing) picked through an <input type=file> on a page under the strict
// Content-Security-Policy (the file is handed over by path: Chromium reads it from disk, as a user's
// pick would), loaded with loadPretrained from the File, checked by the same checkModel. Reports the
// page's heap and timings; exit 1 on a failed check, a console error or a request off the origin.
import { launch, routeHtml } from '../tests/browser/helpers.mjs';
import { describe } from './smollm2_check.mjs';
import { SMOLLM2_DIR, writeSmolLM2Shaped } from './smollm2_shape.mjs';

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>SmolLM2-shaped check</title>
<script type="module" src="/bench/smollm2_page.js"></script></head>
<body><input type="file" id="weights" aria-label="model.safetensors"><output id="result"></output></body></html>`;

// The page's module: on a pick, checkModel with the library the page imports; the result as JSON.
const SCRIPT = `import * as attn from '/src/js/index.js';
import { checkModel } from '/bench/smollm2_check.mjs';
document.getElementById('weights').addEventListener('change', async (event) => {
  const out = document.getElementById('result');
  try {
    await attn.init();
    const file = event.target.files[0];
    out.textContent = JSON.stringify(await checkModel(attn, file, file.size));
  } catch (error) {
    out.textContent = JSON.stringify({ problems: [String(error && error.message || error)] });
  }
});`;

const { file } = writeSmolLM2Shaped(SMOLLM2_DIR);
const browser = await launch();
let failed = false;
try {
  const pageUrl = browser.url('/bench/smollm2_check.html');
  await routeHtml(browser.context, pageUrl, PAGE);
  await browser.context.route(browser.url('/bench/smollm2_page.js'), (route) =>
    route.fulfill({ status: 200, contentType: 'text/javascript; charset=utf-8', body: SCRIPT }),
  );
  const { page, watch } = await browser.newPage();
  await page.goto(pageUrl);
  await page.setInputFiles('#weights', file);
  await page.waitForFunction(() => document.getElementById('result').textContent !== '', null, {
    timeout: 300_000,
  });
  const r = JSON.parse(await page.textContent('#result'));
  if (r.problems.length) {
    console.error(`smollm2: Chromium: ${r.problems.join('; ')}`);
    failed = true;
  } else {
    console.log(describe('Chromium', r));
  }
  if (watch.errors.length || watch.offOrigin.length) {
    console.error(
      `smollm2: Chromium: console errors ${JSON.stringify(watch.errors)}, off-origin requests ${JSON.stringify(watch.offOrigin)}`,
    );
    failed = true;
  }
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
