// The package as a bundled app uses it: `npm pack`, installed into a temp app (tests/bundler/app),
// built with Vite (the current major, Rolldown inside) and with esbuild (docs/bundlers.md's recipe: copy
// the two .wasm files and KaTeX's fonts, pass `wasmBaseUrl`), each output served alone under the
// strict Content-Security-Policy and loaded in Chromium: init() picks a build (and the SIMD128 one
// when asked), a forward matches a float64 reference, the widgets draw (KaTeX formula included; under
// Vite also <attention-trainer>, whose Web Worker is a bundle of its own),
// no console error, no CSP violation, no request for a missing file; both .wasm files are in the
// output and nothing that is not for the browser (.d.ts, .md) is.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { build as viteBuild } from 'vite';
import * as esbuild from 'esbuild';
import { ROOT } from './helpers.mjs';
import { fnv1a } from '../bundler/app/fnv1a.js';
import { CSP, startServer } from '../../scripts/serve.mjs';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
// The forward against float64: float32 rounding of a 5×8 attention.
const kForwardTol = 1e-5;

let work, app, browser;

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'attention-wasm-bundler-'));
  app = join(work, 'app');
  const [{ filename }] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: ROOT, encoding: 'utf8' }),
  );
  cpSync(join(ROOT, 'tests', 'bundler', 'app'), app, { recursive: true });
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'bundled-app', private: true, type: 'module' }),
  );
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', join(work, filename)], {
    cwd: app,
    stdio: 'ignore',
  });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
  });
});

after(async () => {
  await browser?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Every file below `dir`, as paths relative to it. */
function listFiles(dir, prefix = '') {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listFiles(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`],
  );
}

/** Causal softmax(q qᵀ / √d) q in float64, row-major (T, d). */
function referenceCausalSelfAttention(q, t, d) {
  const out = new Float64Array(t * d);
  for (let i = 0; i < t; i++) {
    const scores = [];
    for (let j = 0; j <= i; j++) {
      let s = 0;
      for (let c = 0; c < d; c++) s += q[i * d + c] * q[j * d + c];
      scores.push(s / Math.sqrt(d));
    }
    const m = Math.max(...scores);
    const e = scores.map((s) => Math.exp(s - m));
    const z = e.reduce((a, b) => a + b, 0);
    for (let j = 0; j <= i; j++) for (let c = 0; c < d; c++) out[i * d + c] += (e[j] / z) * q[j * d + c];
  }
  return out;
}

/**
 * Serves `dir` alone under the strict policy (and cross-origin isolated unless isolation is false),
 * opens `?variant=…`, and returns what the page saw.
 */
async function loadApp(dir, variant, withTrainer = false, isolation = true) {
  const server = await startServer({ port: 0, root: dir, routes: {}, isolation });
  const page = await browser.newPage();
  const seen = { errors: [], failed: [], csp: [], requests: [], header: null };
  page.on('console', (m) => {
    if (m.type() === 'error') seen.errors.push(m.text());
  });
  page.on('pageerror', (e) => seen.errors.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => seen.failed.push(r.url()));
  page.on('response', (r) => {
    seen.requests.push(r.url());
    if (r.status() >= 400) seen.failed.push(`${r.status()} ${r.url()}`);
  });
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener(
      'securitypolicyviolation',
      (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`),
      true,
    );
  });
  try {
    const response = await page.goto(`${server.url}?variant=${variant}`);
    seen.header = response.headers()['content-security-policy'];
    await page.waitForFunction(() => document.getElementById('result').textContent.startsWith('{'), null, {
      timeout: 30_000,
    });
    seen.result = JSON.parse(await page.textContent('#result'));
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll('attention-steps, attention-heatmap')].every(
          (e) => e.dataset.ready !== undefined,
        ),
      null,
      { timeout: 30_000 },
    );
    await page.waitForFunction(
      () => document.querySelector('attention-steps').shadowRoot.querySelector('.formula .katex'),
      null,
      { timeout: 30_000 },
    );
    await page.evaluate(() => document.fonts.ready);
    seen.fontsLoaded = await page.evaluate(
      () => [...document.fonts].filter((f) => f.family.startsWith('KaTeX') && f.status === 'loaded').length,
    );
    if (withTrainer) {
      // its Web Worker (a separate bundle) loads the library and sends a first snapshot
      await page.waitForFunction(() => document.querySelector('attention-trainer').snapshot, null, {
        timeout: 30_000,
      });
      seen.trainerStep = await page.$eval('attention-trainer', (el) => el.snapshot.step);
    }
    seen.csp = await page.evaluate(() => window.__csp);
  } finally {
    await page.close();
    await server.close();
  }
  return seen;
}

// The page's larger forward (tests/bundler/app/app.js: SDPA of seededNormal([4, 8, 128, 32], 2),
// causal) computed here by the package in Node, single-thread SIMD128 build: the bits every build
// of the SIMD128 kernels must give, at any thread count.
let nodeHash = null;
async function nodeBigHash() {
  if (nodeHash !== null) return nodeHash;
  const lib = await import(
    `${pathToFileURL(join(app, 'node_modules', 'attention-wasm', 'src', 'js', 'index.js')).href}?instance=bundler-node`
  );
  await lib.init({ variant: 'simd128', threads: 1 });
  const big = lib.seededNormal([4, 8, 128, 32], 2);
  nodeHash = fnv1a(lib.scaledDotProductAttention(big, big, big, { causal: true }).output.data);
  return nodeHash;
}

// Threads where the page is cross-origin isolated (min(hardware threads, 8), init's 'auto'); one
// where it is not. The SIMD128 build's bits are Node's either way.
async function checkThreads(seen, isolated) {
  assert.equal(seen.result.isolated, isolated, 'crossOriginIsolated');
  assert.equal(seen.result.threads, isolated ? Math.min(seen.result.hardware, 8) : 1, 'threadCount()');
  if (seen.result.kernel === 'simd128')
    assert.equal(seen.result.bigHash, await nodeBigHash(), 'the same bits as Node');
}

function checkApp(seen, wantKernel) {
  assert.equal(seen.header, CSP, 'the page was served under the strict policy');
  assert.deepEqual(seen.failed, [], 'no failed request (a missing .wasm or font would show here)');
  assert.deepEqual(seen.errors, [], 'no console error');
  assert.deepEqual(seen.csp, [], 'no CSP violation');
  assert.ok(seen.result.ok, `the app ran: ${seen.result.error}`);
  assert.match(seen.result.kernel, wantKernel);
  const ref = referenceCausalSelfAttention(seen.result.q, 5, 8);
  seen.result.output.forEach((v, i) =>
    assert.ok(Math.abs(v - ref[i]) <= kForwardTol, `output[${i}] = ${v}, want ${ref[i]}`),
  );
  assert.ok(seen.fontsLoaded >= 1, 'KaTeX fonts were found and loaded');
}

function checkOutputFiles(dir) {
  const files = listFiles(dir);
  const wasm = files.filter((f) => f.endsWith('.wasm'));
  assert.ok(
    wasm.some((f) => /attention_core_relaxed[^/]*\.wasm$/.test(f)),
    `relaxed-SIMD .wasm in ${wasm}`,
  );
  assert.ok(
    wasm.some((f) => /attention_core(?!_relaxed)[^/]*\.wasm$/.test(f)),
    `SIMD128 .wasm in ${wasm}`,
  );
  const stray = files.filter((f) => /\.(d\.ts|ts|md)$/.test(f));
  assert.deepEqual(stray, [], 'no type declarations or docs in the browser output');
}

describe('Vite 8 (Rolldown)', () => {
  let out;
  before(async () => {
    out = join(app, 'dist-vite');
    await viteBuild({
      root: app,
      logLevel: 'error',
      configFile: false,
      build: { outDir: out, emptyOutDir: true },
    });
  });
  it('emits both .wasm files and no stray asset', () => checkOutputFiles(out));
  it("runs under the strict policy, relaxed-SIMD build picked by init(), threaded; the trainer's worker runs", async () => {
    const seen = await loadApp(out, 'auto', true);
    checkApp(seen, /relaxed/);
    await checkThreads(seen, true);
    assert.equal(seen.trainerStep, 0, 'the worker sent its first snapshot');
  });
  it("runs the SIMD128 build when asked (the file Safari and older Firefox load), threaded, Node's bits", async () => {
    const seen = await loadApp(out, 'simd128');
    checkApp(seen, /simd128/);
    await checkThreads(seen, true);
  });
  it('without COOP/COEP: the single-thread build, no warning, the same bits', async () => {
    const seen = await loadApp(out, 'simd128', false, false);
    checkApp(seen, /simd128/);
    await checkThreads(seen, false);
  });
});

describe('esbuild (docs/bundlers.md recipe: copy the .wasm files and fonts, init({ wasmBaseUrl }))', () => {
  let out;
  before(async () => {
    out = join(app, 'dist-esbuild');
    await esbuild.build({
      entryPoints: [join(app, 'main-esbuild.js')],
      bundle: true,
      format: 'esm',
      splitting: true,
      outdir: out,
      platform: 'browser',
      logLevel: 'error',
    });
    const pkg = join(app, 'node_modules', 'attention-wasm');
    for (const f of ['attention_core.wasm', 'attention_core_relaxed.wasm'])
      cpSync(join(pkg, 'dist', f), join(out, f));
    cpSync(join(pkg, 'dist', 'threads'), join(out, 'threads'), { recursive: true }); // the threaded builds, whole
    cpSync(join(pkg, 'web', 'vendor', 'katex', 'fonts'), join(out, 'fonts'), { recursive: true });
    mkdirSync(out, { recursive: true });
    // esbuild does not bundle Web Workers (new Worker(new URL(…))): the trainer is left out (docs/bundlers.md).
    writeFileSync(
      join(out, 'index.html'),
      readFileSync(join(app, 'index.html'), 'utf8')
        .replace('./main.js', './main-esbuild.js')
        .replace(/\s*<attention-trainer[^>]*><\/attention-trainer>/, ''),
    );
  });
  it('the output holds both .wasm files and no stray asset', () => checkOutputFiles(out));
  it('runs under the strict policy, relaxed-SIMD build picked by init(), threaded', async () => {
    const seen = await loadApp(out, 'auto');
    checkApp(seen, /relaxed/);
    await checkThreads(seen, true);
  });
  it("runs the SIMD128 build when asked, threaded, Node's bits", async () => {
    const seen = await loadApp(out, 'simd128');
    checkApp(seen, /simd128/);
    await checkThreads(seen, true);
  });
});
