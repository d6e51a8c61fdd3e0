// The tutorial page (web/tutorial.html) in a real browser: it loads offline with no console error,
// every widget on it draws, the numbers the prose promises are the numbers shown, the snippets of
// section 10 (Embed) work pasted alone into an empty page, and the attribute reference covers every attribute.
// Screenshots: test-results/screenshots/tutorial.png (light) and tutorial-dark.png.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { ROOT, SHOTS, join, launch, routeHtml, watch } from './helpers.mjs';

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
const ALL_WIDGETS = [
  'query-explorer',
  'variance-experiment',
  'softmax-playground',
  'mask-fill-compare',
  'attention-steps',
  'attention-heatmap',
  'mask-editor',
  'positional-encoding-heatmap',
  'attention-trainer',
  'attention-model-view',
  'rope-explorer',
  'alibi-bias',
  'gqa-heads',
  'kv-cache-stepper',
  'head-scores',
  'logit-attribution',
  'patching-view',
];

let env, page, w, badResponses;

/** Waits until the tutorial script and every custom element on the page have rendered once. */
async function pageReady(p) {
  await p.waitForFunction(
    () => {
      const els = [...document.querySelectorAll('*')].filter((e) => e.localName.includes('-'));
      return (
        document.documentElement.dataset.tutorialReady !== undefined &&
        els.length > 0 &&
        els.every((e) => e.dataset.ready !== undefined)
      );
    },
    null,
    { timeout: 30_000 },
  );
}

/** In the page: for each widget matching `selector`, how many distinct colours its canvases hold and whether it shows an error. */
function inspectWidgets(p, selector) {
  return p.evaluate(
    (sel) =>
      [...document.querySelectorAll(sel)].map((el) => {
        let colours = 0,
          drawn = 0;
        for (const c of el.shadowRoot.querySelectorAll('canvas')) {
          if (!c.width || !c.height || c.closest('[hidden]')) continue;
          const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
          const seen = new Set();
          for (let i = 0; i < d.length && seen.size < 64; i += 4 * 7)
            seen.add((d[i] << 24) | (d[i + 1] << 16) | (d[i + 2] << 8) | d[i + 3]);
          colours = Math.max(colours, seen.size);
          if (seen.size > 2) drawn++;
        }
        const error = el.shadowRoot.querySelector('.error:not([hidden])');
        return {
          tag: el.localName,
          id: el.id,
          ready: el.dataset.ready !== undefined,
          colours,
          drawn,
          error: error ? error.textContent : '',
          text: el.shadowRoot.textContent.trim().length,
        };
      }),
    selector,
  );
}

before(async () => {
  env = await launch();
  ({ page, watch: w } = await env.newPage());
  badResponses = [];
  page.on('response', (r) => {
    if (r.status() >= 400) badResponses.push(`${r.status()} ${r.url()}`);
  });
  await page.goto(env.url('/tutorial.html'));
  await pageReady(page);
});

after(async () => {
  await env?.close();
});

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

test('multi-head presets: the 512-dim, 8-head example and the shapes at each step', async () => {
  await page.locator('[data-preset="paper"]').click();
  await page.waitForFunction(() => document.querySelector('#steps').current?.shape?.includes(512 / 8));
  const rows = await page
    .locator('#shape-table tbody tr')
    .evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  const T = 11; // "The cat sat on the mat because it was tired ." has 11 tokens
  const find = (op) => rows.find((r) => r[0].startsWith(op));
  assert.equal(find('Input')[2], `(1, ${T}, 512)`);
  assert.equal(find('Split')[2], `(1, ${T}, 8, 64)`);
  assert.equal(find('Move the head axis forward')[2], `(1, 8, ${T}, 64)`);
  assert.equal(find('Scores')[2], `(1, 8, ${T}, ${T})`);
  assert.equal(find('Concatenate')[2], `(1, ${T}, 512)`);
  assert.equal(find('Output')[2], `(1, ${T}, 512)`);
  const heads = await page.locator('#heads').evaluate((e) => e.shown.matrices.length);
  assert.equal(heads, 8, 'the heatmap shows 8 heads side by side');
  // Clicking a row opens that step in <attention-steps>.
  await page.locator('#shape-table tbody tr', { hasText: 'Softmax' }).click();
  assert.equal(await page.locator('#steps').evaluate((e) => e.current.name), 'weights');
  await page.locator('[data-preset="small"]').click();
  await page.waitForFunction(() => document.querySelector('#steps').current?.shape?.[1] === 4);
});

test("watch heads learn: the reverse preset's mirror head, opened step by step; the text model reads a sentence", async () => {
  await page.waitForFunction(() => document.querySelector('#reverse-steps').trace, null, { timeout: 20_000 });
  const r = await page.evaluate(() => {
    const view = document.querySelector('#reverse-view'),
      steps = document.querySelector('#reverse-steps');
    const { layers, T } = view.shown;
    // Answer rows 6 … 11 of the only head: the argmax key mirrors the row (2L − 1 − t, L = 6).
    const mirrored = [6, 7, 8, 9, 10, 11].every((t) => {
      const row = layers[0].subarray(t * T, (t + 1) * T);
      return row.indexOf(Math.max(...row)) === 11 - t;
    });
    const shown = steps.current;
    return { mirrored, step: shown.name, same: Array.from(shown.data).every((v, i) => v === layers[0][i]) };
  });
  assert.ok(r.mirrored, 'the mirror head reads the input it repeats');
  assert.deepEqual([r.step, r.same], ['weights', true], "the steps view shows the preset's own weights");
  await page.waitForFunction(() => document.querySelector('#text-view').shown, null, { timeout: 20_000 });
  const text = await page.evaluate(() => ({
    T: document.querySelector('#text-view').shown.T,
    sentence: document.querySelector('[data-bind="text-sentence"]').textContent,
  }));
  assert.equal(text.T, text.sentence.length);
});

test('positional encoding: repeated words are identical without it and distinct with it', async () => {
  const text = await page.locator('[data-bind="pe-repeat"]').textContent();
  const m = /differ by at most (\d+\.\d+).*differ by up to (\d+\.\d+)/.exec(text);
  assert.ok(m, text);
  assert.equal(Number(m[1]), 0);
  assert.ok(Number(m[2]) > 1e-3);
  const bases = await page.evaluate(() => [
    document.querySelector('#pe-10000').base,
    document.querySelector('#pe-1000').base,
  ]);
  assert.deepEqual(bases, [10000, 1000]);
});

test("section 8, today's models: numbered before Embed (10, last); RoPE's offsets agree; stepping the KV cache matches the full forward and the prose follows", async () => {
  const toc = await page.evaluate(() => ({
    sections: [...document.querySelectorAll('main section > h2')].map((h) => [
      h.querySelector('.num').textContent,
      h.parentElement.id,
    ]),
    links: [...document.querySelectorAll('.toc a')].map((a) => a.getAttribute('href')),
  }));
  assert.deepEqual(toc.sections.slice(-4), [
    ['7', 'learn'],
    ['8', 'modern'],
    ['9', 'matter'],
    ['10', 'embed'],
  ]);
  assert.deepEqual(
    toc.sections.map(([n]) => n),
    ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10'],
    'sections numbered in order',
  );
  assert.deepEqual(
    toc.links,
    toc.sections.map(([, id]) => `#${id}`),
    'the contents list every section in order',
  );
  const rope = await page.evaluate(() => document.querySelector('#rope-widget').shown.maxDiff);
  assert.ok(rope <= 1e-4, `RoPE: offsets 0, 100, 1000 agree (${rope})`);
  assert.match(
    await page.locator('[data-bind="rope-diff"]').textContent(),
    /changes q·k by at most \d\.\de[+-]\d+/,
  );
  assert.match(await page.locator('[data-bind="kv-check"]').textContent(), /^The cache is empty\./);
  const kv = page.locator('#kv-widget');
  for (let i = 0; i < 4; i++) await kv.locator('button', { hasText: 'Step' }).first().click();
  const r = await kv.evaluate((el) => {
    const out = el.outputs,
      full = el.fullOutput();
    return {
      length: el.length,
      n: out.length,
      diff: Math.max(...Array.from(out, (v, i) => Math.abs(v - full[i]))),
    };
  });
  assert.deepEqual([r.length, r.n], [4, 4 * 16]);
  assert.ok(r.diff <= 1e-5, `stepped rows = the full forward's (${r.diff})`);
  assert.match(
    await page.locator('[data-bind="kv-check"]').textContent(),
    /^4 of 10 tokens cached\. Every stepped output row so far equals the full forward’s row/,
  );
  await kv.locator('button', { hasText: 'Reset' }).click();
  assert.equal(await kv.evaluate((el) => el.length), 0);
});

test('the attribute reference (page and docs/widgets.md) covers every attribute of every widget', async () => {
  const observed = await page.evaluate(
    (tags) =>
      Object.fromEntries(
        tags.map((t) => {
          const cls = customElements.get(t);
          return [t, { all: cls.observedAttributes, own: cls.ownAttributes }];
        }),
      ),
    ALL_WIDGETS,
  );
  const table = await page.evaluate(() => ({
    model: [...document.querySelectorAll('table[data-ref="model"] tbody tr td:first-child')].map((td) =>
      td.textContent.trim(),
    ),
    own: [...document.querySelectorAll('table[data-ref="own"] tbody tr')].map((tr) => [
      tr.dataset.widget,
      tr.querySelector('td:nth-last-child(3) code').textContent.trim(),
    ]),
  }));
  const docs = await readFile(join(ROOT, 'docs', 'widgets.md'), 'utf8');
  const section = (title) => {
    const i = docs.indexOf(`## ${title}`);
    assert.ok(i >= 0, `docs/widgets.md has "## ${title}"`);
    const j = docs.indexOf('\n## ', i + 3);
    return docs.slice(i, j < 0 ? undefined : j);
  };
  const modelDocs = section('Model attributes');
  for (const [tag, { all, own }] of Object.entries(observed)) {
    const docsOwn = section(`\`<${tag}>\``);
    for (const a of own) {
      assert.ok(
        table.own.some(([t, x]) => t === tag && x === a),
        `the page documents ${tag} ${a}`,
      );
      assert.ok(docsOwn.includes(`\`${a}\``), `docs/widgets.md documents ${tag} ${a}`);
    }
    for (const a of all.filter((x) => !own.includes(x))) {
      assert.ok(table.model.includes(a), `the page documents the model attribute ${a} (${tag})`);
      assert.ok(modelDocs.includes(`\`${a}\``), `docs/widgets.md documents the model attribute ${a}`);
    }
  }
});

test("section 9, finding the heads that matter: the scores find the preset's heads, patching and attribution confirm them, the prose follows, a selected head opens step by step", async () => {
  await page.waitForFunction(
    () => document.querySelector('#interp-patch').shown && document.querySelector('#interp-steps').trace,
    null,
    { timeout: 20_000 },
  );
  const r = await page.evaluate(() => {
    const scores = document.querySelector('#interp-scores').shown,
      patch = document.querySelector('#interp-patch').shown;
    const attr = document.querySelector('#interp-attr').shown;
    const argmax = (d) => Array.from(d).indexOf(Math.max(...d));
    return {
      previous: argmax(scores.scores['previous-token']),
      induction: Array.from(scores.scores.induction),
      patch: Array.from(patch.result),
      where: patch.where,
      topHead: attr.components.find((c) => c.kind === 'head'),
      total: attr.total,
      logitDiff: attr.logitDiff,
      prose: ['interp-scores', 'interp-patch', 'interp-attr'].map(
        (n) => document.querySelector(`[data-bind="${n}"]`).textContent,
      ),
    };
  });
  // docs/presets.md: the previous-token head is layer 0 head 1, the induction head layer 1 head 1 (H = 2).
  assert.equal(r.previous, 1, 'previous-token: layer 0 head 1');
  assert.ok(
    r.induction[3] > 0.9 && r.induction[3] >= Math.max(...r.induction) - 1e-3,
    `induction: layer 1 head 1 (${r.induction})`,
  );
  assert.equal(r.where, 'worker', 'the preset is patched in a worker');
  assert.ok(r.patch[1] > 0.9, `patching layer 0 head 1 restores the answer (${r.patch})`);
  assert.ok(r.patch[2] > 0.5 && r.patch[3] > 0.5, 'so do the layer-1 heads');
  assert.ok(Math.abs(r.patch[0]) < 0.05, 'layer 0 head 0 does not');
  assert.equal(r.topHead.layer, 1, 'a layer-1 head writes the most');
  assert.ok(Math.abs(r.total - r.logitDiff) <= 1e-4, 'the parts add up');
  assert.match(
    r.prose[0],
    /^Highest previous-token score: layer 0 head 1 \(0\.\d\d\)\. Highest induction score: layer 1 head [01] \(/,
  );
  assert.match(r.prose[1], /^Restored by each head alone: layer 0 head 0 −?0\.\d\d, layer 0 head 1 1\.00,/);
  assert.match(r.prose[2], /^Of the logit difference \d+\.\d\d \(“7” against “\d+”\): layer 1 head/);
  // A click on layer 0 head 1 in the patching grid opens that layer in the steps view, head 1.
  const p = await page.locator('#interp-patch').evaluate((el) => {
    el._view.canvas.scrollIntoView({ block: 'center', behavior: 'instant' });
    return el._view.cellCenter(0, 1);
  });
  await page.mouse.click(p.x, p.y);
  const opened = await page.evaluate(() => {
    const steps = document.querySelector('#interp-steps'),
      view = document.querySelector('#interp-view');
    const { layers, T } = view.shown;
    const w = steps.current;
    return {
      head: steps.getAttribute('head'),
      step: w.name,
      same: Array.from(w.data).every((v, i) => v === layers[0][T * T + i]),
    };
  });
  assert.deepEqual(opened, { head: '1', step: 'weights', same: true }, 'layer 0, head 1 opened step by step');
});

test('each snippet of section 10 (Embed), pasted alone into an empty page with the script tag, renders', async () => {
  const { snippets, scriptTag } = await page.evaluate(() => ({
    snippets: [...document.querySelectorAll('code[data-snippet]')].map((c) => ({
      name: c.dataset.snippet,
      html: c.textContent,
    })),
    scriptTag: document.querySelector('code[data-script-tag]').textContent,
  }));
  assert.match(scriptTag, /^<script type="module" src="[^"]*widgets\.js"><\/script>$/);
  assert.deepEqual(snippets.map((s) => s.name).sort(), [...ALL_WIDGETS].sort(), 'one snippet per widget');
  for (const { name, html } of snippets) {
    assert.ok(
      html.trim().startsWith(`<${name}`) && html.trim().endsWith(`</${name}>`),
      `the ${name} snippet is just the element`,
    );
    const url = env.url(`/snippet-${name}.html`);
    await routeHtml(
      env.context,
      url,
      `<!doctype html>\n<html><head><meta charset="utf-8">${scriptTag}</head><body>\n${html}\n</body></html>`,
    );
    const p = await env.context.newPage();
    const pw = watch(p, env.origin);
    await p.goto(url);
    await p.waitForFunction((sel) => document.querySelector(sel)?.dataset.ready !== undefined, name, {
      timeout: 20_000,
    });
    const [x] = await inspectWidgets(p, name);
    assert.equal(x.error, '', `${name} alone shows no error`);
    assert.ok(x.drawn >= 1 && x.colours > 2, `${name} alone draws (${x.colours} colours)`);
    assert.deepEqual(pw.errors, [], `${name} alone: no console error`);
    assert.deepEqual(pw.offOrigin, [], `${name} alone: nothing outside the origin`);
    await p.close();
  }
});

test('the demo links to the tutorial', async () => {
  const p = await env.context.newPage();
  await p.goto(env.url('/'));
  assert.ok((await p.locator('a[href="/tutorial.html"]').count()) >= 1);
  await p.close();
});

test('full-page screenshots, light and dark', async () => {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(SHOTS, 'tutorial.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.waitForTimeout(50);
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.notEqual(bg, 'rgb(251, 250, 247)', 'the page switches to its dark palette');
  await page.screenshot({ path: join(SHOTS, 'tutorial-dark.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'light' });
  assert.deepEqual(w.errors, [], 'no console error after all the interaction');
});
