// Threads in pages (docs/threads.md): a host that sends no COOP/COEP gets the single-thread
// build on one thread with no warning, and web/coi-serviceworker.js (the opt-in shim for such hosts)
// makes the page cross-origin isolated after its one reload, so the threaded build runs there, with
// the same bits as without it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { ROOT } from './helpers.mjs';
import { startServer } from '../../scripts/serve.mjs';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
];
let site, server, browser;

// A static site as a header-less host would serve it: the shim at its root, a page that loads it
// first, the package's src/ and dist/ (linked).
before(async () => {
  site = mkdtempSync(join(tmpdir(), 'attention-wasm-coi-'));
  copyFileSync(join(ROOT, 'web', 'coi-serviceworker.js'), join(site, 'coi-serviceworker.js'));
  symlinkSync(join(ROOT, 'src'), join(site, 'src'));
  symlinkSync(join(ROOT, 'dist'), join(site, 'dist'));
  writeFileSync(
    join(site, 'main.js'),
    `import * as attn from './src/js/index.js';
const warnings = [];
const warn = console.warn;
console.warn = (...a) => { warnings.push(a.join(' ')); warn(...a); };
await attn.init({ variant: 'simd128' });
const x = attn.seededNormal([4, 8, 128, 32], 3);
const y = attn.scaledDotProductAttention(x, x, x, { causal: true }).output.data;
document.getElementById('result').textContent = JSON.stringify({ isolated: crossOriginIsolated, threads: attn.threadCount(),
  hardware: navigator.hardwareConcurrency, warnings, sum: y.reduce((s, v) => s + v, 0), first: Array.from(y.slice(0, 8)) });
`,
  );
  const page = (withShim) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>coi</title>
${withShim ? '<script src="/coi-serviceworker.js"></script>' : ''}<script type="module" src="/main.js"></script></head>
<body><pre id="result"></pre></body></html>`;
  writeFileSync(join(site, 'plain.html'), page(false));
  writeFileSync(join(site, 'shim.html'), page(true));
  server = await startServer({ port: 0, root: site, routes: {}, isolation: false });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
  });
});

after(async () => {
  await browser?.close();
  await server?.close();
  if (site) rmSync(site, { recursive: true, force: true });
});

async function resultOf(name) {
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(`${server.url}${name}`);
    // With the shim the page reloads once; the result that counts is the last load's.
    await page.waitForFunction(
      () =>
        document.getElementById('result').textContent.startsWith('{') &&
        (!document.querySelector('script[src="/coi-serviceworker.js"]') || crossOriginIsolated),
      null,
      { timeout: 30_000 },
    );
    return JSON.parse(await page.textContent('#result'));
  } finally {
    await context.close();
  }
}

test('no COOP/COEP: one thread, the single-thread build, no warning', async () => {
  const r = await resultOf('plain.html');
  assert.equal(r.isolated, false);
  assert.equal(r.threads, 1);
  assert.deepEqual(r.warnings, []);
});

test('web/coi-serviceworker.js: isolated after one reload, threaded, the same bits', async () => {
  const plain = await resultOf('plain.html');
  const r = await resultOf('shim.html');
  assert.equal(r.isolated, true);
  assert.equal(r.threads, Math.min(r.hardware, 8));
  assert.deepEqual(r.warnings, []);
  assert.deepEqual(r.first, plain.first);
  assert.equal(r.sum, plain.sum);
});
