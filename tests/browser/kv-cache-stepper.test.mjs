// <kv-cache-stepper> in Chromium, under the strict CSP of the test pages (routeHtml): stepping every
// token one at a time through a real KV cache gives, row for row, the output of one full causal
// forward over the prefix (the widget's fullOutput() and an independent module built in the test
// page with the same config); `length` grows by one per step and reset() empties the cache; the keys
// shown are the cache's (the full forward's k_rotated / k rows); Run all, the buttons, a bad head count,
// disposal on removal (live handles back), no console error, no CSP violation, and axe-core finds no
// violation (light and dark). Screenshot: test-results/screenshots/kv-cache-stepper.png.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SHOTS, assertCleanPage, axeViolations, join, launch, openWidgetPage } from './helpers.mjs';

// The cached path and the full forward run the same float32 kernels over the same rows; they agree to
// a few ulps of outputs of order 1 (0 in practice). The brief's bound:
const kStepTol = 1e-5;
// Softmax rows sum to 1 within float32 rounding.
const kSumTol = 1e-6;

let b;
before(async () => {
  b = await launch({ viewport: { width: 1000, height: 900 } });
});
after(async () => {
  await b?.close();
});

const open = (name, body) => openWidgetPage(b, 'kv', name, body, 'kv-cache-stepper');
const assertClean = assertCleanPage;

/**
 * In the page: steps the widget through every token with step(), recording after each step its length,
 * outputs, fullOutput(), keys of every K/V head and weights; and an independent reference: a module built
 * here with the same config, one full causal forward with trace over the whole sequence.
 */
function stepAll(page, cfg) {
  return page.evaluate(async (c) => {
    const attn = await import('/src/js/index.js');
    await attn.init();
    const el = document.querySelector('kv-cache-stepper');
    const E = c.E,
      T = c.T,
      dk = E / c.H;
    const ref = new attn.MultiHeadAttention({
      embedDim: E,
      numHeads: c.H,
      numKVHeads: c.Hkv,
      rope: c.rope,
      seed: c.seed,
    });
    const x = attn.seededNormal([1, T, E], c.seed + 1);
    const r = ref.forward(x, null, null, { causal: true, averageWeights: false, trace: true });
    ref.dispose();
    const kFull = r.trace.find((s) => s.name === (c.rope ? 'k_rotated' : 'k')).data; // (1, Hkv, T, dk)
    const steps = [];
    const lengths = [el.length];
    for (let t = 0; t < T; t++) {
      const ret = el.step();
      const keys = [];
      for (let g = 0; g < c.Hkv; g++) {
        el.kvHead = g;
        keys.push(Array.from(el.keys));
      }
      el.kvHead = 0;
      steps.push({
        position: ret.position,
        length: el.length,
        outputs: Array.from(el.outputs),
        full: Array.from(el.fullOutput()),
        weights: Array.from(el.weights),
        retWeights: Array.from(ret.weights),
        keys,
        cost: el.shadowRoot.querySelector('.cost').textContent,
        check: el.shadowRoot.querySelector('.check').textContent,
        status: el.shadowRoot.querySelector('.status').textContent,
        data: el.dataset.length,
      });
      lengths.push(el.length);
    }
    return {
      steps,
      lengths,
      after: el.step(),
      x: Array.from(x.data),
      widgetX: Array.from(el.x),
      ref: Array.from(r.output.data),
      refWeights: Array.from(r.weights.data),
      kFull: Array.from(kFull),
      dk,
      maxDifference: el.maxDifference,
      stepDisabled: el.shadowRoot.querySelector('button[aria-label^="Step"]').disabled,
    };
  }, cfg);
}

function checkStepped(r, { E, H, Hkv, T }) {
  const dk = E / H;
  assert.deepEqual(r.widgetX, r.x, 'x = seededNormal([1, T, E], seed + 1)');
  assert.deepEqual(
    r.lengths,
    Array.from({ length: T + 1 }, (_, i) => i),
    'length grows by one per step',
  );
  assert.equal(r.after, null, 'step() past the end returns null');
  assert.equal(r.stepDisabled, true, 'the Step button is disabled once x is used up');
  r.steps.forEach((s, t) => {
    const n = t + 1;
    assert.equal(s.position, t);
    assert.equal(s.length, n);
    assert.equal(s.data, String(n), 'data-length');
    assert.equal(s.outputs.length, n * E);
    assert.equal(s.full.length, n * E);
    const diff = Math.max(...s.outputs.map((v, i) => Math.abs(v - s.full[i])));
    assert.ok(diff <= kStepTol, `after ${n} steps: outputs = fullOutput() (max |difference| ${diff})`);
    const refDiff = Math.max(...s.outputs.map((v, i) => Math.abs(v - r.ref[i])));
    assert.ok(
      refDiff <= kStepTol,
      `after ${n} steps: outputs = the first ${n} rows of an independent full forward (${refDiff})`,
    );
    // Weights of the new query: (H, n), rows sum to 1, = row t of the full forward's weights.
    assert.deepEqual(s.weights, s.retWeights);
    assert.equal(s.weights.length, H * n);
    for (let h = 0; h < H; h++) {
      const row = s.weights.slice(h * n, (h + 1) * n);
      assert.ok(Math.abs(row.reduce((a, v) => a + v, 0) - 1) <= kSumTol, `step ${n} head ${h} sums to 1`);
      const full = r.refWeights.slice((h * T + t) * T, (h * T + t) * T + n);
      assert.ok(
        Math.max(...row.map((v, j) => Math.abs(v - full[j]))) <= kStepTol,
        `step ${n} head ${h}: weights = the full forward's row ${t}`,
      );
    }
    // The keys shown for each K/V head are the cache's: rows 0…t of the full forward's keys.
    for (let g = 0; g < Hkv; g++) {
      assert.equal(s.keys[g].length, n * dk);
      const full = r.kFull.slice(g * T * dk, g * T * dk + n * dk);
      assert.ok(
        Math.max(...s.keys[g].map((v, i) => Math.abs(v - full[i]))) <= kStepTol,
        `step ${n}: K/V head ${g}'s cached keys`,
      );
    }
    assert.match(
      s.cost,
      new RegExp(
        `^Step ${n}: computed 1 new row \\(q·kᵀ over ${n} keys?\\); recomputing would project ${n} rows?\\.`,
      ),
    );
    assert.match(
      s.check,
      new RegExp(
        `^Check: stepped output row ${t} against row ${t} of one full causal forward over the ${n}-token prefix: max \\|difference\\| = \\d\\.\\d\\de[+-]\\d+`,
      ),
    );
    assert.equal(s.status, `cache.length = ${n} of ${T}`);
  });
  assert.ok(r.maxDifference <= kStepTol);
}

test('<kv-cache-stepper> renders alone, empty: labelled grids, named controls, exports, no error', async () => {
  const { page, watch } = await open('alone', '<kv-cache-stepper></kv-cache-stepper>');
  const a = await page.$eval('kv-cache-stepper', (el) => {
    const root = el.shadowRoot;
    return {
      length: el.length,
      outputs: el.outputs.length,
      full: el.fullOutput().length,
      keys: el.keys,
      weights: el.weights,
      cfg: [el.embedDim, el.heads, el.kvHeads, el.rope, el.sequenceLength, el.seed],
      visibleCanvases: [...root.querySelectorAll('canvas')]
        .filter((c) => !c.closest('[hidden]'))
        .map((c) => ({
          label: c.getAttribute('aria-label') || '',
          w: c.width,
          h: c.height,
          grid: !!c.nextElementSibling?.matches('[role=grid]'),
        })),
      unnamed: [...root.querySelectorAll('select, input, button')].filter(
        (x) => !x.getAttribute('aria-label') && !x.closest('label') && !x.textContent.trim(),
      ).length,
      buttons: [...root.querySelectorAll('.controls button')].map((x) => [x.textContent, x.disabled]),
      empty: root.querySelector('.empty').hidden,
      live: !!root.querySelector('[aria-live]'),
      exports: [...root.querySelectorAll('.exports button')].map((x) => x.textContent),
      error: root.querySelector('.error').hidden,
      json: JSON.parse(el.getJSON()),
    };
  });
  assert.deepEqual(
    a.cfg,
    [16, 4, 2, true, 10, 1],
    'defaults: embed-dim 16, 4 heads, 2 K/V heads, RoPE, 10 tokens, seed 1',
  );
  assert.deepEqual(
    [a.length, a.outputs, a.full, a.keys, a.weights],
    [0, 0, 0, null, null],
    'starts with an empty cache',
  );
  assert.equal(a.visibleCanvases.length, 1, 'only x is drawn while the cache is empty');
  for (const c of a.visibleCanvases) {
    assert.ok(c.label.length > 20, `canvas described: ${c.label}`);
    assert.ok(c.w > 50 && c.h > 50, 'drawn at a real size');
    assert.ok(c.grid, 'each heatmap is followed by its grid');
  }
  assert.deepEqual(a.buttons, [
    ['Step', false],
    ['Run all', false],
    ['Reset', true],
  ]);
  assert.equal(a.empty, false, 'the empty-cache note is shown');
  assert.equal(a.unnamed, 0);
  assert.ok(a.live);
  assert.deepEqual(a.exports, ['PNG', 'SVG', 'CSV', 'JSON'], 'the SVG figure too');
  assert.equal(a.error, true, 'no error shown');
  assert.equal(a.json.kind, 'kv-cache');
  assert.equal(a.json.length, 0);
  // Three steps by pointer: the cache panels appear, three grids in all.
  for (let i = 0; i < 3; i++) await page.click('kv-cache-stepper button[aria-label^="Step"]');
  const s = await page.$eval('kv-cache-stepper', (el) => ({
    length: el.length,
    grids: el.shadowRoot.querySelectorAll('[role=grid]').length,
    canvases: [...el.shadowRoot.querySelectorAll('canvas')]
      .filter((c) => !c.closest('[hidden]'))
      .map((c) => c.getAttribute('aria-label')),
    csv: el.getCSV().trim().split('\n'),
    reset: el.shadowRoot.querySelector('button[aria-label^="Reset"]').disabled,
  }));
  assert.equal(s.length, 3);
  assert.equal(s.grids, 3);
  assert.equal(s.canvases.length, 3);
  assert.match(
    s.canvases[1],
    /keys cached for key\/value head 0: 3 positions by 4 features; position 2 was just added/,
  );
  assert.match(
    s.canvases[2],
    /weights of the new query \(position 2\) over the 3 cached keys, one row per query head \(4\)/,
  );
  assert.equal(s.csv.length, 4, 'CSV: a header and one row per step');
  assert.equal(s.csv[0].split(',').length, 1 + 16 + 16 + 1);
  assert.equal(s.reset, false);
  await page.locator('kv-cache-stepper').screenshot({ path: join(SHOTS, 'kv-cache-stepper.png') });
  await assertClean(page, watch);
  await b.release(page);
});

test('stepping every token one by one: outputs = fullOutput() (1e-5), length +1 per step; reset empties it and replays the same rows', async () => {
  const cfg = { E: 16, H: 4, Hkv: 2, T: 10, rope: true, seed: 1 };
  const { page, watch } = await open('steps', '<kv-cache-stepper></kv-cache-stepper>');
  const r = await stepAll(page, cfg);
  checkStepped(r, cfg);
  // reset(): empty, and the event says so.
  const afterReset = await page.evaluate(() => {
    const el = document.querySelector('kv-cache-stepper');
    let detail = null;
    el.addEventListener(
      'kv-step',
      (e) => {
        detail = e.detail;
      },
      { once: true },
    );
    el.reset();
    return {
      length: el.length,
      outputs: el.outputs.length,
      full: el.fullOutput().length,
      keys: el.keys,
      detail,
      data: el.dataset.length,
      empty: el.shadowRoot.querySelector('.empty').hidden,
      panels: el.shadowRoot.querySelectorAll('.panels')[1].hidden,
    };
  });
  assert.deepEqual(afterReset, {
    length: 0,
    outputs: 0,
    full: 0,
    keys: null,
    detail: { length: 0, position: -1, maxDifference: 0 },
    data: '0',
    empty: false,
    panels: true,
  });
  // Stepping again from the reset cache gives the same rows (positions restart at 0).
  const again = await stepAll(page, cfg);
  assert.deepEqual(again.steps.at(-1).outputs, r.steps.at(-1).outputs, 'the same outputs after reset()');
  await assertClean(page, watch);
  await b.release(page);
});

test('multi-query without RoPE (kv-heads 1, rope="false", 6 tokens, seed 9): the same equality; Run all; a bad head count is the library\'s error', async () => {
  const cfg = { E: 24, H: 3, Hkv: 1, T: 6, rope: false, seed: 9 };
  const { page, watch } = await open(
    'mqa',
    '<kv-cache-stepper embed-dim="24" heads="3" kv-heads="1" rope="false" length="6" seed="9"></kv-cache-stepper>',
  );
  checkStepped(await stepAll(page, cfg), cfg);
  // Run all from an empty cache, by pointer, with reduced motion (no delay between steps).
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.click('kv-cache-stepper button[aria-label^="Reset"]');
  assert.equal(await page.$eval('kv-cache-stepper', (el) => el.length), 0);
  await page.click('kv-cache-stepper button[aria-label^="Run all"]');
  await page.waitForFunction(() => document.querySelector('kv-cache-stepper').length === 6);
  const run = await page.$eval('kv-cache-stepper', (el) => {
    const out = el.outputs,
      full = el.fullOutput();
    return {
      diff: Math.max(...Array.from(out, (v, i) => Math.abs(v - full[i]))),
      n: out.length,
      buttons: [...el.shadowRoot.querySelectorAll('.controls button')].map((x) => x.disabled),
    };
  });
  assert.equal(run.n, 6 * 24);
  assert.ok(run.diff <= kStepTol, `Run all: ${run.diff}`);
  assert.deepEqual(run.buttons, [true, true, false], 'Step and Run all disabled at the end, Reset enabled');
  // Changing an attribute starts again from an empty cache.
  await page.$eval('kv-cache-stepper', (el) => {
    el.seed = 4;
  });
  await page.waitForFunction(() => document.querySelector('kv-cache-stepper').length === 0);
  // 3 key/value heads for 4 query heads: the library's message in the widget, no crash, step() is null.
  await page.$eval('kv-cache-stepper', (el) => {
    el.setAttribute('embed-dim', '16');
    el.setAttribute('heads', '4');
    el.kvHeads = 3;
  });
  await page.waitForFunction(
    () => !document.querySelector('kv-cache-stepper').shadowRoot.querySelector('.error').hidden,
  );
  const bad = await page.$eval('kv-cache-stepper', (el) => ({
    error: el.shadowRoot.querySelector('.error').textContent,
    step: el.step(),
    length: el.length,
    shown: el.shown,
  }));
  assert.match(bad.error, /numKVHeads 3 does not divide numHeads 4/);
  assert.deepEqual([bad.step, bad.length, bad.shown], [null, 0, null]);
  await page.$eval('kv-cache-stepper', (el) => {
    el.kvHeads = 4;
  });
  await page.waitForFunction(
    () => document.querySelector('kv-cache-stepper').shadowRoot.querySelector('.error').hidden,
  );
  assert.ok(
    await page.$eval('kv-cache-stepper', (el) => el.step() !== null),
    'kv-heads 4 (plain multi-head) steps',
  );
  await assertClean(page, watch);
  await b.release(page);
});

test('removing the element disposes its module and cache (live handles back to where they were)', async () => {
  const { page, watch } = await open('dispose', '<kv-cache-stepper></kv-cache-stepper>');
  const { withIt, without } = await page.evaluate(async () => {
    const attn = await import('/src/js/index.js');
    const el = document.querySelector('kv-cache-stepper');
    el.step();
    el.step();
    const withIt = attn.memoryStats().liveHandles;
    el.remove();
    const without = attn.memoryStats().liveHandles;
    document.querySelector('main').append(el); // reconnected: a new module, an empty cache
    return { withIt, without };
  });
  // Reconnected, it draws again: `shown` (null once disposed) is back with its new module.
  await page.waitForFunction(() => document.querySelector('kv-cache-stepper').shown !== null, null, {
    timeout: 20_000,
  });
  const r = {
    withIt,
    without,
    ...(await page.evaluate(async () => {
      const attn = await import('/src/js/index.js');
      const el = document.querySelector('kv-cache-stepper');
      return { again: attn.memoryStats().liveHandles, length: el.length, stepped: el.step()?.position };
    })),
  };
  assert.equal(r.withIt - r.without, 2, 'the module and the cache were disposed');
  assert.equal(r.again, r.withIt, 'reconnecting creates them again');
  assert.equal(r.length, 0);
  assert.equal(r.stepped, 0);
  await assertClean(page, watch);
  await b.release(page);
});

test('axe-core: no violation with the cache empty and after steps (light and dark)', async () => {
  const { page, watch } = await open(
    'axe',
    '<section><h2>KV cache</h2><kv-cache-stepper></kv-cache-stepper></section>',
  );
  for (const steps of [0, 4]) {
    await page.$eval(
      'kv-cache-stepper',
      (el, n) => {
        for (let i = 0; i < n; i++) el.step();
      },
      steps,
    );
    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.$eval('kv-cache-stepper', (el) => el.refresh());
      const found = await axeViolations(page);
      assert.deepEqual(found, [], `axe-core violations (${steps} steps, ${scheme}):\n${found.join('\n')}`);
    }
  }
  await assertClean(page, watch);
  await b.release(page);
});
