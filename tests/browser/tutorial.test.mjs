// The tutorial page (web/tutorial.html) in a real browser: it loads offline with no console error, every
// widget on it draws, and the numbers the prose of the first sections promises (softmax, variance, query
// explorer, masking) are the numbers shown (that the demo links to it is demo.test.mjs's first test).
// Screenshots: test-results/screenshots/tutorial.png (light) and tutorial-dark.png (the first
// screen; the whole page with ATTN_FULL_SCREENSHOTS=1). Last, the page in print (as print.test.mjs
// checks the demo's): one column of views, no contents or controls.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SHOTS, join } from './helpers.mjs';
import { useTutorialPage, ALL_WIDGETS, page, w, badResponses, inspectWidgets } from './tutorial-page.mjs';

useTutorialPage();

// Softmax of [1, 1, 1, 5] shown to 4 decimals; the float32 values may differ from the double
// reference by a few ulps, far below this.
const kSoftmaxTol = 1e-6;
// Variance experiment: a sample variance of N draws has a relative standard error of
// sqrt((2 + 6/d_k)/N) for q·k with q, k ~ N(0, 1)^{d_k} (σ² = d_k, μ4 = 3d_k² + 6d_k). We accept
// 5 standard errors: with N = 2000 and d_k = 64 that is ±16.2 % (a false failure has p < 1e-6).
const kSigmas = 5;
// 'scaled' is 'scores' × (1/√d_k) in float32, so the two variances differ by a factor d_k up to
// float32 rounding of each product.
const kScaleRatioTol = 1e-4;

test('the tutorial loads with no console error, no failed request and nothing outside its origin', async () => {
  assert.deepEqual(w.errors, []);
  assert.deepEqual(w.offOrigin, []);
  assert.deepEqual(w.dialogs, []);
  assert.deepEqual(badResponses, []);
  // Chromium has relaxed SIMD (since 114) and the test server sends COOP/COEP: init() loads the
  // threaded relaxed-SIMD build, and the page says how many threads it runs.
  assert.ok(
    w.requests.some((u) => u.endsWith('/dist/threads/attention_core_threads_relaxed.wasm')),
    'the wasm module is loaded from the same origin',
  );
  const threads = await page.evaluate(() => Math.min(navigator.hardwareConcurrency, 8));
  assert.equal(
    await page.textContent('[data-bind="runtime-threads"]'),
    threads > 1
      ? `${threads} threads (the page is cross-origin isolated)`
      : 'one thread (threads need a cross-origin-isolated page: docs/threads.md)',
  );
  // Every formula was typeset by the vendored KaTeX, without a parse error.
  const math = await page.evaluate(() => ({
    all: document.querySelectorAll('.math[data-tex]').length,
    // (a formula of several \qquad-separated parts is typeset part by part, so it may hold several)
    rendered: [...document.querySelectorAll('.math[data-tex]')].filter(
      (el) => el.matches('.rendered') && el.querySelector('.katex'),
    ).length,
    errors: document.querySelectorAll('.math .katex-error').length,
  }));
  assert.ok(math.all >= 10, `${math.all} formulas`);
  assert.equal(math.rendered, math.all);
  assert.equal(math.errors, 0);
});

test('every widget on the page renders', async () => {
  const widgets = await inspectWidgets(page, ALL_WIDGETS.join(','));
  for (const tag of ALL_WIDGETS)
    assert.ok(
      widgets.some((x) => x.tag === tag),
      `the page uses <${tag}>`,
    );
  for (const x of widgets) {
    assert.ok(x.ready, `${x.tag}#${x.id} is ready`);
    assert.equal(x.error, '', `${x.tag}#${x.id} shows no error`);
    assert.ok(
      x.drawn >= 1 && x.colours > 2,
      `${x.tag}#${x.id} draws a non-blank canvas (${x.colours} colours)`,
    );
  }
  // The live sentences were filled in from the widgets (no placeholder left).
  const binds = await page.evaluate(() =>
    [...document.querySelectorAll('[data-bind]')].map((e) => [e.dataset.bind, e.textContent.trim()]),
  );
  for (const [name, text] of binds) assert.ok(text && text !== '…', `data-bind="${name}" is filled in`);
});

test('the softmax playground shows 0.0174 / 0.9479 for [1, 1, 1, 5] and saturates as the scale grows', async () => {
  const el = page.locator('#softmax');
  const shown = await el.evaluate((e) => ({
    outputs: [...e.shadowRoot.querySelectorAll('.probs output')].map((o) => o.textContent),
    probabilities: Array.from(e.probabilities),
    data: e.dataset.probabilities,
    logits: e.logits,
  }));
  assert.deepEqual(shown.logits, [1, 1, 1, 5]);
  assert.deepEqual(shown.outputs, ['0.0174', '0.0174', '0.0174', '0.9479']);
  assert.equal(shown.data, '0.0174,0.0174,0.0174,0.9479');
  const z = 3 * Math.E + Math.exp(5); // independent double-precision reference
  const ref = [Math.E / z, Math.E / z, Math.E / z, Math.exp(5) / z];
  shown.probabilities.forEach((p, i) =>
    assert.ok(Math.abs(p - ref[i]) <= kSoftmaxTol, `p[${i}] = ${p}, reference ${ref[i]}`),
  );
  // Move the slider: 0 gives uniform weights, and the top weight grows with the scale.
  const slider = el.locator('input[type=range]');
  const tops = [];
  for (const s of ['0', '0.5', '1', '2', '4']) {
    await slider.fill(s);
    tops.push(await el.evaluate((e) => Math.max(...e.probabilities)));
  }
  assert.ok(Math.abs(tops[0] - 0.25) <= kSoftmaxTol, `scale 0 is uniform (${tops[0]})`);
  for (let i = 1; i < tops.length; i++)
    assert.ok(tops[i] > tops[i - 1], `top weight grows: ${tops.join(' < ')}`);
  assert.ok(tops.at(-1) > 0.9999, `saturated at scale 4 (${tops.at(-1)})`);
  assert.match(
    await page.locator('[data-bind="sm-top"]').textContent(),
    /^1\.0000$/,
    'the prose follows the slider',
  );
  await slider.fill('1');
});

test('the variance experiment measures ≈ d_k unscaled and ≈ 1 scaled (5 standard errors), through the library trace', async () => {
  const el = page.locator('#variance');
  const read = () =>
    el.evaluate((e) => ({
      results: e.results,
      dk: e.dataset.dk,
      unscaled: e.dataset.unscaled,
      scaled: e.dataset.scaled,
      samples: Number(e.dataset.samples),
      seed: Number(e.dataset.seed),
    }));
  const check = (r) => {
    const N = r.samples;
    assert.equal(N, 2000);
    const byDk = new Map(r.results.map((x) => [x.dk, x]));
    assert.deepEqual([...byDk.keys()], [4, 8, 16, 32, 64, 128, 256]);
    // The data attributes carry the plotted values too.
    assert.deepEqual(r.dk.split(',').map(Number), [...byDk.keys()]);
    const attrU = r.unscaled.split(',').map(Number),
      attrS = r.scaled.split(',').map(Number);
    r.results.forEach((x, i) => {
      assert.ok(
        Math.abs(attrU[i] - x.unscaled) <= 1e-5 * x.unscaled &&
          Math.abs(attrS[i] - x.scaled) <= 1e-5 * x.scaled,
        'data attributes = results',
      );
      const rel = kSigmas * Math.sqrt((2 + 6 / x.dk) / N);
      assert.ok(
        Math.abs(x.unscaled / x.dk - 1) <= rel,
        `d_k ${x.dk}: Var(q·k) = ${x.unscaled}, expected ${x.dk} ± ${(rel * 100).toFixed(1)} %`,
      );
      assert.ok(
        Math.abs(x.scaled - 1) <= rel,
        `d_k ${x.dk}: Var(q·k/√d_k) = ${x.scaled}, expected 1 ± ${(rel * 100).toFixed(1)} %`,
      );
      assert.ok(
        Math.abs(x.unscaled / x.scaled / x.dk - 1) <= kScaleRatioTol,
        `d_k ${x.dk}: the 'scaled' step divides by √d_k`,
      );
    });
    const x64 = byDk.get(64);
    const rel64 = kSigmas * Math.sqrt((2 + 6 / 64) / N);
    assert.ok(rel64 < 0.17, `tolerance at d_k = 64 is ±${(rel64 * 100).toFixed(1)} %`);
    assert.ok(Math.abs(x64.unscaled - 64) <= 64 * rel64 && Math.abs(x64.scaled - 1) <= rel64);
    // Saturation: over 8 keys the unscaled top weight grows with d_k, the scaled one does not.
    assert.ok(
      byDk.get(256).topUnscaled > byDk.get(4).topUnscaled + 0.2,
      'unscaled scores saturate the softmax as d_k grows',
    );
    assert.ok(Math.abs(byDk.get(256).topScaled - byDk.get(4).topScaled) < 0.1, 'scaled scores do not');
    return x64;
  };
  const first = await read();
  assert.equal(first.seed, 1);
  const a = check(first);
  await el.locator('button', { hasText: 'Draw new samples' }).click();
  await page.waitForFunction(() => document.querySelector('#variance').dataset.seed === '2');
  const second = await read();
  const b = check(second);
  assert.notEqual(a.unscaled, b.unscaled, 'a new draw gives new samples');
  const prose = await page.locator('[data-bind="var-64-unscaled"]').textContent();
  assert.equal(prose, b.unscaled.toFixed(2), 'the prose follows the new draw');
});

test('the query explorer moves the weights, and the prose follows', async () => {
  const el = page.locator('#qe');
  const before_ = await el.evaluate((e) => e.result);
  assert.equal(before_.weights.length, 4);
  assert.ok(Math.abs(before_.weights.reduce((a, b) => a + b, 0) - 1) < 1e-6, 'weights sum to 1');
  // Point the query at the vehicles: "car" (key (−0.3, 1.9)) must win.
  const sliders = el.locator('input[type=range]');
  await sliders.nth(0).fill('-0.5');
  await sliders.nth(1).fill('2.5');
  const r = await el.evaluate((e) => e.result);
  const top = r.weights.indexOf(Math.max(...r.weights));
  assert.equal(top, 2);
  // Independent check of the scores: q·k_j / √2.
  const K = [
    [1.8, 0.4],
    [1.3, -0.7],
    [-0.3, 1.9],
    [-1.2, 1.2],
  ];
  K.forEach((k, j) =>
    assert.ok(Math.abs(r.scaled[j] - (-0.5 * k[0] + 2.5 * k[1]) / Math.SQRT2) < 1e-5, `scaled score ${j}`),
  );
  assert.equal(await page.locator('[data-bind="qe-top-label"]').textContent(), '“car”');
  await el.locator('button', { hasText: 'Reset' }).click();
});

test('a fully masked row: zeros here, uniform weights with the −1e9 fill', async () => {
  const el = page.locator('#fill');
  let r = await el.evaluate((e) => e.result);
  assert.deepEqual(r.masked, [0, 1, 2, 3]);
  assert.deepEqual(r.booleanWeights, [0, 0, 0, 0]);
  assert.deepEqual(r.booleanOutput, [0, 0]);
  for (const x of r.fillWeights) assert.ok(Math.abs(x - 0.25) < 1e-6, `uniform ${x}`);
  // Unmask "cat": both rules now agree, all the weight on it.
  await el.locator('.keys button[data-index="1"]').click();
  r = await el.evaluate((e) => e.result);
  assert.deepEqual(r.booleanWeights, [0, 1, 0, 0]);
  assert.deepEqual(r.fillWeights, [0, 1, 0, 0]);
  assert.match(await page.locator('[data-bind="fill-summary"]').textContent(), /both rules give/);
  await el.locator('button', { hasText: 'Mask every key' }).click();
});

// The page is ~40,000 px tall: a full-page PNG costs ~2–3 s of CPU each, for a picture nobody
// asserts on, so the screenshots are its first screen unless ATTN_FULL_SCREENSHOTS=1 asks for the
// whole page (docs/demo.md).
const kFullPage = process.env.ATTN_FULL_SCREENSHOTS === '1';

test('screenshots, light and dark (the whole page with ATTN_FULL_SCREENSHOTS=1)', async () => {
  const light = 'rgb(251, 250, 247)';
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(SHOTS, 'tutorial.png'), fullPage: kFullPage });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.waitForFunction((bg) => getComputedStyle(document.body).backgroundColor !== bg, light);
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.notEqual(bg, light, 'the page switches to its dark palette');
  await page.screenshot({ path: join(SHOTS, 'tutorial-dark.png'), fullPage: kFullPage });
  await page.emulateMedia({ colorScheme: 'light' });
  assert.deepEqual(w.errors, [], 'no console error after all the interaction');
});

test('the tutorial prints as one column of views: no contents or controls', async () => {
  await page.emulateMedia({ media: 'print' });
  await page.evaluate(() => window.dispatchEvent(new Event('beforeprint')));
  const r = await page.evaluate(() => ({
    hidden: ['nav.toc', 'nav.top-links'].map((s) => [s, getComputedStyle(document.querySelector(s)).display]),
    figures: document.querySelectorAll('[data-aw-printing]').length,
    buttons: [...document.querySelectorAll('button')].filter((x) => x.getBoundingClientRect().width > 0)
      .length,
  }));
  for (const [s, display] of r.hidden) assert.equal(display, 'none', `${s} hidden in print`);
  assert.ok(r.figures >= 1, `${r.figures} widgets print as SVG`);
  assert.equal(r.buttons, 0, 'no page button shown');
  await page.evaluate(() => window.dispatchEvent(new Event('afterprint')));
  assert.equal(await page.evaluate(() => document.querySelectorAll('[data-aw-printing]').length), 0);
  await page.emulateMedia({ media: null });
  assert.deepEqual(w.errors, [], 'no console error');
});
