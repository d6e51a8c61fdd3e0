// Shared set-up for the real-browser tests: the project's static server on a free port, Debian's
// Chromium through playwright-core (never a downloaded browser), and a page watcher that records
// console errors, page errors, dialogs and any request that leaves the page's origin.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { CSP, startServer } from '../../scripts/serve.mjs';

export { CSP };

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Screenshots land here (docs/demo.md points at this folder). */
export const SHOTS = join(ROOT, 'test-results', 'screenshots');

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

// One Chromium per test process, shared by every launch() in it: each launch() gets its own browser
// context (a fresh profile in memory: no storage, cache or permission carried over). A group of
// test files run in one process (tests/browser/groups/, what `npm test` runs) starts Chromium once
// instead of once per file. It closes when the last context of the process closes and no other
// launch() follows within kCloseGraceMs (the next file of a group launches at once; a lone file's
// process then exits).
const kCloseGraceMs = 250;
/** The empty page of the test origin that a released page waits on (release() below). */
const BLANK_PATH = '/__test/blank.html';
/** The page events the tests and watch() listen to: what release() clears. */
const PAGE_EVENTS = ['console', 'pageerror', 'dialog', 'request', 'requestfailed', 'response', 'download'];
let sharedBrowser = null;
let browserUsers = 0;
let closeTimer = null;
/** Each launch()'s context → the pages its server holds in memory (routeHtml). */
const servedPages = new WeakMap();

function acquireBrowser() {
  browserUsers++;
  clearTimeout(closeTimer);
  sharedBrowser ??= chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
  });
  return sharedBrowser;
}

function releaseBrowser() {
  if (--browserUsers > 0) return;
  closeTimer = setTimeout(() => {
    const closing = sharedBrowser;
    sharedBrowser = null;
    closing?.then((b) => b.close()).catch(() => {});
  }, kCloseGraceMs);
}

/**
 * Starts the server and a fresh browser context (Chromium is shared within the process, see above).
 * `connectSrc`: origins the server's CSP adds to connect-src (a local Hub, tests/js/hub-server.js). Other options go to the browser context (a phone:
 * `{ viewport: { width: 360, height: 800 }, hasTouch: true, isMobile: true }`).
 * @returns {Promise<{ origin: string, url: (p: string) => string, context, newPage: Function, release: Function, close: Function }>}
 */
export async function launch({
  colorScheme = 'light',
  viewport = { width: 1280, height: 900 },
  connectSrc = [],
  ...contextOptions
} = {}) {
  const pages = new Map();
  // Files kept an hour: nothing a test loads changes during the run, and a demo load then costs ~7%
  // less CPU (no revalidation of its ~170 module requests on the next page of the context).
  const server = await startServer({ port: 0, pages, maxAge: 3600, connectSrc });
  const browser = await acquireBrowser();
  const context = await browser.newContext({
    viewport,
    colorScheme,
    acceptDownloads: true,
    ...contextOptions,
  });
  servedPages.set(context, pages);
  const origin = server.url.replace(/\/$/, '');
  pages.set(BLANK_PATH, { body: '<!doctype html><html lang="en"><title>blank</title></html>' });
  const idle = []; // released pages, for the next newPage()
  const kept = new Map(); // path → the page shared() opened there, kept open for the file's tests
  await mkdir(SHOTS, { recursive: true });
  return {
    origin,
    context,
    url: (p = '/') => `${origin}${p.startsWith('/') ? p : `/${p}`}`,
    /** A page with a watcher attached (see watch()): one a test released before, or a new one. */
    async newPage() {
      const page = idle.pop() ?? (await context.newPage());
      return { page, watch: watch(page, origin) };
    },
    /**
     * One load for several tests (tests/browser/README.md): the first call opens `path` in a page of
     * its own and waits on `ready(page)`; later calls with the same path get the same `{ page, watch }`
     * as the previous test left it (its watcher still recording since the load). The page stays
     * open until close(). A test that needs the page as loaded runs first, or loads its own.
     */
    async shared(path, ready) {
      if (!kept.has(path))
        kept.set(
          path,
          (async () => {
            const page = await context.newPage();
            const w = watch(page, origin);
            await page.goto(`${origin}${path}`);
            await ready(page);
            return { page, watch: w };
          })(),
        );
      return kept.get(path);
    },
    /**
     * Hands a page back for the next newPage() (tests/browser/README.md): the listeners of the
     * events tests listen to are removed, an empty page of the origin is loaded (same CSP and
     * isolation: Chromium keeps the renderer process), and the context's colour scheme and viewport
     * are set again. A page given an init script, a route or an exposed function keeps them across
     * navigations: close such a page instead.
     */
    async release(page) {
      for (const event of PAGE_EVENTS) page.removeAllListeners(event);
      if (page.isClosed() || idle.includes(page)) return; // a page released twice is lent once
      try {
        await page.goto(`${origin}${BLANK_PATH}`);
        await page.emulateMedia({ media: null, colorScheme, reducedMotion: null });
        await page.setViewportSize(viewport);
        idle.push(page);
      } catch {
        await page.close().catch(() => {});
      }
    },
    async close() {
      await context.close();
      await server.close();
      releaseBrowser();
    },
  };
}

/**
 * Records what must not happen on a page: console errors, uncaught errors, dialogs (alert/confirm),
 * and requests to anything but the page's own origin (data: and blob: URLs are local).
 */
export function watch(page, origin) {
  const w = { errors: [], offOrigin: [], dialogs: [], requests: [] };
  page.on('console', (m) => {
    if (m.type() === 'error') w.errors.push(m.text());
  });
  page.on('pageerror', (e) => w.errors.push(`pageerror: ${e.message}`));
  page.on('dialog', (d) => {
    w.dialogs.push(`${d.type()}: ${d.message()}`);
    d.dismiss().catch(() => {});
  });
  page.on('request', (r) => {
    const u = r.url();
    w.requests.push(u);
    if (!u.startsWith(`${origin}/`) && !u.startsWith('data:') && !u.startsWith('blob:')) w.offOrigin.push(u);
  });
  return w;
}

/**
 * Serves `html` at `url` on the test origin (a page that exists only for this test), with the same
 * strict Content-Security-Policy and cross-origin isolation (COOP/COEP) as the server's own pages,
 * or with `headers` instead of those when given. The context's own server holds the page: a
 * Playwright route would send every request of the context through the test process and turn the
 * browser's cache off (each module fetched and compiled anew on every page): tutorial-sections,
 * widgets and interp-widgets-interaction took 77 CPU-s with routes, 64 with these pages.
 */
export async function routeHtml(context, url, html, headers = undefined) {
  const pages = servedPages.get(context);
  if (!pages) throw new Error('routeHtml: a context of launch() serves the test pages');
  pages.set(new URL(url).pathname, { body: html, headers });
}

const AXE_SOURCE = readFileSync(join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

/**
 * axe-core's violations on the page (its default rules: WCAG 2 A/AA and best practices), one
 * readable line per element: `id (impact): target: summary`. `context` is what axe.run takes
 * (a CSS selector, or `{ include, exclude }` of selectors), the whole document by default. axe is
 * evaluated through the DevTools protocol, which the pages' CSP does not govern, once per page.
 * Only violations are gathered (`resultTypes`): axe still runs every rule but skips the details
 * of what passed (on the tutorial 1.5–1.7 s instead of 1.7–2.3 s).
 */
export async function axeViolations(page, context = null) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(
    async (ctx) => (await window.axe.run(ctx ?? document, { resultTypes: ['violations'] })).violations,
    context,
  );
  return violations.flatMap((v) =>
    v.nodes.map(
      (n) => `${v.id} (${v.impact}): ${n.target.join(' ')}: ${n.failureSummary.replace(/\s+/g, ' ')}`,
    ),
  );
}

/** Waits until every widget on the page has rendered once (data-ready on the host). */
export async function widgetsReady(
  page,
  selector = 'attention-steps, attention-heatmap, positional-encoding-heatmap, mask-editor',
) {
  await page.waitForFunction(
    (sel) => {
      const els = [...document.querySelectorAll(sel)];
      return els.length > 0 && els.every((e) => e.dataset.ready !== undefined);
    },
    selector,
    { timeout: 20_000 },
  );
}

/** Waits for the demo to finish its first full render. */
export async function demoReady(page) {
  await page.waitForFunction(() => document.documentElement.dataset.ready !== undefined, null, {
    timeout: 20_000,
  });
  await widgetsReady(page);
}

/**
 * Waits until the demo shows its state: no render scheduled and the newest one drawn
 * (`data-settled` on <html>). A model source answers asynchronously, so a changed control (or URL)
 * is drawn some time later: this, never a fixed sleep, is what a test waits on before reading views.
 */
export async function demoSettled(page) {
  await page.waitForFunction(() => document.documentElement.hasAttribute('data-settled'), null, {
    timeout: 20_000,
  });
}

/**
 * Moves an open demo page to the link `search` ('?model=…') in place, as the back and forward buttons
 * move it: the address changes (history.pushState) and the page hears popstate. Waits until it shows
 * `model` and has drawn it. Cheaper than a load, and the path a reader's back button takes: tests that
 * need several links of the demo move one page through them (a fresh load is a test of its own).
 */
export async function demoMoveTo(page, search, model) {
  await page.evaluate((s) => {
    history.pushState(null, '', `/${s}`);
    dispatchEvent(new PopStateEvent('popstate'));
  }, search);
  await page.waitForFunction((m) => window.attentionDemo.source?.name === m, model, { timeout: 20_000 });
  await demoSettled(page);
}

/**
 * The independent reference, run in the page: the documented embedding recipe re-implemented here
 * (FNV-1a over the UTF-8 bytes of the token, then the 4 little-endian bytes of the seed; then
 * seededNormal), and the library's MultiHeadAttention.forward with trace for the same config.
 * Returns { steps: { name: { shape, axes, data: number[] } }, meanWeights: number[] }.
 */
export async function referenceTrace(page, cfg) {
  return page.evaluate(async (c) => {
    const attn = await import('/src/js/index.js');
    await attn.init();
    const fnv = (token, seed) => {
      let h = 0x811c9dc5;
      const bytes = [
        ...new TextEncoder().encode(token),
        seed & 255,
        (seed >>> 8) & 255,
        (seed >>> 16) & 255,
        (seed >>> 24) & 255,
      ];
      for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
      return h >>> 0;
    };
    const E = c.dModel;
    const embed = (tokens) => {
      const out = new Float32Array(tokens.length * E);
      tokens.forEach((t, i) => out.set(attn.seededNormal([E], fnv(t, c.seed)).data, i * E));
      return out;
    };
    const T = c.tokens.length;
    const mha = new attn.MultiHeadAttention({
      embedDim: E,
      numHeads: c.heads,
      seed: c.seed,
      residual: !!c.residual,
      layerNorm: !!c.layerNorm,
      numKVHeads: c.kvHeads || c.heads,
      rope: c.positional === 'rope',
    });
    const opts = { trace: true };
    if (c.positional === 'alibi') opts.alibi = true;
    if (c.positional === 'sinusoidal')
      opts.positional = attn.sinusoidalEncoding(T, E, { base: c.base ?? 10000 });
    if (c.causal) opts.causal = true;
    if (c.mask) opts.mask = new attn.Tensor(Uint8Array.from(c.mask), [T, c.keys ? c.keys.length : T]);
    if (c.dropout) opts.dropout = { p: c.dropout, seed: c.dropoutSeed ?? 0 };
    if (c.scale !== undefined) opts.scale = c.scale;
    let key = null;
    if (c.keys) {
      const mem = embed(c.keys);
      if (c.positional === 'sinusoidal') {
        const pe = attn.sinusoidalEncoding(c.keys.length, E, { base: c.base ?? 10000 }).data;
        for (let i = 0; i < mem.length; i++) mem[i] += pe[i];
      }
      key = new attn.Tensor(mem, [1, c.keys.length, E]);
    }
    const r = mha.forward(new attn.Tensor(embed(c.tokens), [1, T, E]), key, key, opts);
    mha.dispose();
    const steps = {};
    for (const s of r.trace)
      steps[s.name] = {
        shape: [...s.shape],
        axes: [...s.axes],
        data: Array.from(s.data, (v) => (v === -Infinity ? '-inf' : v)),
      };
    return { steps, meanWeights: Array.from(r.weights.data) };
  }, cfg);
}

/** Max |a - b| over two arrays where '-inf' entries must coincide; Infinity if they differ in shape/masking. */
export function maxAbsDiff(a, b) {
  if (a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i],
      y = b[i];
    if (x === '-inf' || y === '-inf') {
      if (x !== y) return Infinity;
      continue;
    }
    m = Math.max(m, Math.abs(x - y));
  }
  return m;
}

/** The data of the (rows, cols) block of a (B=1, H, R, C) or (B=1, R, C) / (R, C) step for a head. */
export function block(step, head) {
  const { shape, axes, data } = step;
  const rows = shape[shape.length - 2],
    cols = shape[shape.length - 1];
  const h = axes.indexOf('H') >= 0 && axes.indexOf('H') < shape.length - 2 ? head : 0;
  return data.slice(h * rows * cols, (h + 1) * rows * cols);
}

export { dirname, join };

/**
 * A page at /__<folder>/<name>.html holding `body` and the widgets script, under the CSP, opened and
 * waited on until `selector` is ready; CSP violations land in window.__csp (csp-probe.js, read by
 * assertCleanPage).
 */
export async function openWidgetPage(b, folder, name, body, selector) {
  const path = `/__${folder}/${name}.html`;
  await routeHtml(
    b.context,
    b.url(path),
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${name}</title>
    <style>:root { color-scheme: light dark; } @media (prefers-color-scheme: dark) { body { background: #15171c; color: #e8e8ea; } }</style>
    <script src="/tests/browser/csp-probe.js"></script>
    <script type="module" src="/web/widgets.js"></script></head><body><main><h1>${name}</h1>\n${body}\n</main></body></html>`,
  );
  const { page, watch } = await b.newPage();
  await page.goto(b.url(path));
  await widgetsReady(page, selector);
  return { page, watch };
}

/** No CSP violation, console error or request outside the origin on a page of openWidgetPage. */
export async function assertCleanPage(page, watch) {
  assert.deepEqual(await page.evaluate(() => window.__csp), [], 'no CSP violation');
  assert.deepEqual(watch.errors, [], 'no console error');
  assert.deepEqual(watch.offOrigin, [], 'nothing outside the origin');
}
