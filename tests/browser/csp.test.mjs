// Every page runs under the strict Content-Security-Policy that scripts/serve.mjs sends (and that
// routeHtml() sends with the tests' own pages): the header is there (the tutorial's too), and
// nothing is blocked — no `securitypolicyviolation` event and no console error — on the demo (after
// its tokens render) and a page of widgets. A last test proves that a violation is seen, by the
// listener and on the console, where every test file's watcher looks: the tutorial's own file
// (tutorial.test.mjs: no console error after load, KaTeX typeset, and after all its interaction)
// is then the proof that nothing is blocked there, and no load of it here repeats it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CSP, demoReady, launch, routeHtml, widgetsReady } from './helpers.mjs';

// connect-src: 'self' and the Hugging Face Hub's origins only (docs/security.md), for the demo's
// "Open from Hugging Face…".
const EXPECTED =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
  "connect-src 'self' https://huggingface.co https://cdn-lfs.hf.co https://cdn-lfs-us-1.hf.co https://cdn-lfs-eu-1.hf.co " +
  'https://cas-bridge.xethub.hf.co https://*.cdn.hf.co';

let b;
before(async () => {
  b = await launch();
});
after(async () => {
  await b?.close();
});

/** A page whose every CSP violation (in the document or a shadow root) lands in window.__csp. */
async function watchedPage() {
  const { page, watch } = await b.newPage();
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener(
      'securitypolicyviolation',
      (e) => {
        window.__csp.push(
          `${e.violatedDirective} blocked ${e.blockedURI || '(inline)'} at ${e.sourceFile}:${e.lineNumber}`,
        );
      },
      true,
    );
  });
  return { page, watch };
}

async function assertClean(page, watch, label) {
  assert.deepEqual(await page.evaluate(() => window.__csp), [], `${label}: no CSP violation`);
  assert.deepEqual(watch.errors, [], `${label}: no console error`);
  assert.deepEqual(watch.offOrigin, [], `${label}: nothing outside the origin`);
}

test('the server sends the strict policy with pages, scripts, the wasm and errors', async () => {
  assert.equal(CSP, EXPECTED);
  for (const path of [
    '/',
    '/tutorial.html',
    '/web/widgets.js',
    '/src/js/index.js',
    '/dist/attention_core.wasm',
    '/no-such-file',
  ]) {
    const r = await fetch(b.url(path));
    assert.equal(r.headers.get('content-security-policy'), EXPECTED, path);
    await r.arrayBuffer();
  }
});

// The demo checked clean below stays open for the last test, which breaks the policy on it (that
// test loads it itself if this one failed).
let demo = null;

test('the demo runs under the policy: tokens render, nothing blocked', async () => {
  const { page, watch } = await watchedPage();
  const res = await page.goto(b.url('/'));
  assert.equal(res.headers()['content-security-policy'], EXPECTED);
  await demoReady(page);
  const chips = await page.$$eval('#chips .chip', (els) => els.length);
  assert.ok(chips > 0, 'the token chips rendered');
  // Submitting the form (the inline onsubmit="return false" is gone; a listener in demo.js took its
  // place) must not reload the page: a marker set on this window survives.
  await page.evaluate(() => {
    window.__noReload = 1;
    document.getElementById('controls').requestSubmit();
  });
  // A negative check: a submission would navigate away within this time; waiting longer proves no
  // more, and a slow machine can only make it pass for the wrong reason, never fail for one.
  await page.waitForTimeout(300);
  assert.equal(await page.evaluate(() => window.__noReload), 1, 'the form did not submit');
  await assertClean(page, watch, 'demo');
  demo = { page, watch };
});

test('a page of widgets runs under the policy: nothing blocked', async () => {
  await routeHtml(
    b.context,
    b.url('/__csp-widgets.html'),
    `<!doctype html><meta charset="utf-8">
    <script type="module" src="/web/widgets.js"></script>
    <attention-steps text="the cat sat on the mat"></attention-steps>
    <attention-heatmap text="the cat sat on the mat" head="mean"></attention-heatmap>
    <mask-editor text="the cat sat"></mask-editor>
    <positional-encoding-heatmap></positional-encoding-heatmap>
    <softmax-playground></softmax-playground>`,
  );
  const { page, watch } = await watchedPage();
  const res = await page.goto(b.url('/__csp-widgets.html'));
  assert.equal(res.headers()['content-security-policy'], EXPECTED);
  await widgetsReady(
    page,
    'attention-steps, attention-heatmap, mask-editor, positional-encoding-heatmap, softmax-playground',
  );
  await assertClean(page, watch, 'widgets');
  await page.close();
});

test('the listener does see a violation: an inline script is blocked', async () => {
  let { page, watch } = demo ?? {};
  if (!page) {
    ({ page, watch } = await watchedPage());
    await page.goto(b.url('/'));
  }
  await page.evaluate(() => {
    const s = document.createElement('script');
    s.textContent = 'window.__inlineRan = 1';
    document.head.append(s);
  });
  await page.waitForFunction(() => window.__csp.length > 0);
  assert.equal(await page.evaluate(() => window.__inlineRan), undefined, 'the inline script did not run');
  assert.match((await page.evaluate(() => window.__csp))[0], /^script-src/);
  assert.ok(
    watch.errors.some((e) => /Content Security Policy/.test(e)),
    'Chromium reports it on the console',
  );
  await page.close();
});
