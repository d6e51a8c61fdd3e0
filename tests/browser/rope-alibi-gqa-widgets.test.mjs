// The widgets of today's attention (RoPE, ALiBi, grouped-query heads) in Chromium, each under the strict
// CSP of the test pages (routeHtml): <rope-explorer>, <alibi-bias> and <gqa-heads> render with no console
// error and no CSP violation; their numbers are checked against the library called from the test page
// (q·k from the seeded vectors, the ALiBi slopes, SDPA with the bias as an additive mask, SDPA on
// k/v repeated per head without enableGQA); a bad head count shows the library's error; axe-core
// finds no violation on a page of the three (light and dark). Screenshots land in test-results/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SHOTS, assertCleanPage, axeViolations, join, launch, openWidgetPage } from './helpers.mjs';

// RoPE: rotations are float32 (angles in double), so scores at offsets 0, 100, 1000 and the plain
// q·k differ by float32 rounding of a handful of products (~1e-6 for |q·k| of a few units).
const kRopeTol = 1e-4;
// Softmax rows sum to 1 within float32 rounding.
const kSumTol = 1e-6;
// The same kernel on equal inputs by another route (GQA vs repeat_kv, alibi vs additive bias).
const kSameTol = 1e-6;
const ALL = 'rope-explorer, alibi-bias, gqa-heads';

let b;
before(async () => {
  b = await launch({ viewport: { width: 1000, height: 900 } });
});
after(async () => {
  await b?.close();
});

const open = (name, body, selector = ALL) => openWidgetPage(b, 'rope-alibi-gqa', name, body, selector);
const assertClean = assertCleanPage;

for (const [name, html] of Object.entries({
  'rope-explorer': '<rope-explorer></rope-explorer>',
  'alibi-bias': '<alibi-bias></alibi-bias>',
  'gqa-heads': '<gqa-heads></gqa-heads>',
})) {
  test(`<${name}> renders alone: labelled canvases and controls, exports, no error`, async () => {
    const { page, watch } = await open(name, html, name);
    const a = await page.$eval(name, (el) => {
      const root = el.shadowRoot;
      return {
        canvases: [...root.querySelectorAll('canvas')].map((c) => ({
          label: c.getAttribute('aria-label') || '',
          w: c.width,
          h: c.height,
          table: !!c.nextElementSibling?.matches('table[data-aw-chart-table], [role=grid]'),
        })),
        grids: root.querySelectorAll('[role=grid]').length,
        tables: root.querySelectorAll('table[data-aw-chart-table]').length,
        unnamed: [...root.querySelectorAll('select, input, button')].filter(
          (x) => !x.getAttribute('aria-label') && !x.closest('label') && !x.textContent.trim(),
        ).length,
        live: !!root.querySelector('[aria-live]'),
        exports: [...root.querySelectorAll('.exports button')].map((x) => x.textContent),
        svg: typeof el.toSVG === 'function',
        error: root.querySelector('.error').hidden,
        csv: el.getCSV().split('\n').length,
        json: JSON.parse(el.getJSON()).kind,
      };
    });
    assert.ok(a.canvases.length >= 2);
    for (const c of a.canvases) {
      assert.ok(c.label.length > 20, `canvas described: ${c.label}`);
      assert.ok(c.w > 50 && c.h > 50, 'drawn at a real size');
      assert.ok(c.table, 'each canvas is followed by its data table or its grid');
    }
    if (name === 'rope-explorer')
      assert.equal(a.tables, 3, 'the plane and both charts carry their values as tables');
    else assert.ok(a.grids >= 2, 'heatmaps are grids (HeatmapView)');
    assert.equal(a.unnamed, 0);
    assert.ok(a.live);
    assert.deepEqual(
      a.exports,
      a.svg ? ['PNG', 'SVG', 'CSV', 'JSON'] : ['PNG', 'CSV', 'JSON'],
      'an SVG button where there is toSVG()',
    );
    assert.equal(a.error, true, 'no error shown');
    assert.ok(a.csv > 10 && typeof a.json === 'string');
    await page.locator(name).screenshot({ path: join(SHOTS, `${name}.png`) });
    await assertClean(page, watch);
    await b.release(page);
  });
}

test('<rope-explorer>: scores at offsets 0, 100, 1000 coincide, δ = 0 is q·k, angles turn by p·θ', async () => {
  for (const [attrs, d, style, seed] of [
    ['', 8, 'half', 1],
    ['d="16" rotary-style="interleaved" seed="7" base="500"', 16, 'interleaved', 7],
  ]) {
    const { page, watch } = await open(
      `rope-${d}`,
      `<rope-explorer ${attrs}></rope-explorer>`,
      'rope-explorer',
    );
    const r = await page.evaluate(
      async ([dd, sd]) => {
        const el = document.querySelector('rope-explorer');
        const { seededNormal } = await import('/src/js/index.js');
        const qk = seededNormal([2, dd], sd).data;
        let dot = 0;
        for (let i = 0; i < dd; i++) dot += qk[i] * qk[dd + i];
        return {
          s: [0, 100, 1000].map((o) => Array.from(el.scores(o))),
          deltas: el.deltas,
          dot,
          q: Array.from(el.q),
          k: Array.from(el.k),
          seeded: Array.from(qk),
          style: el.rotaryStyle,
          base: el.base,
          angles: [0, 1, 2, 3].map((p) => [el.pairAngle(p, 0), el.pairAngle(p, 5)]),
        };
      },
      [d, seed],
    );
    assert.equal(r.style, style);
    assert.deepEqual([...r.q, ...r.k], r.seeded, 'q and k are rows 0 and 1 of seededNormal([2, d], seed)');
    assert.equal(r.deltas.length, 65);
    assert.equal(r.deltas[32], 0);
    for (const other of [r.s[1], r.s[2]]) {
      const diff = Math.max(...other.map((v, i) => Math.abs(v - r.s[0][i])));
      assert.ok(diff <= kRopeTol, `offset does not matter: max difference ${diff}`);
    }
    assert.ok(Math.abs(r.s[0][32] - r.dot) <= kRopeTol, `δ = 0: ${r.s[0][32]} vs q·k ${r.dot}`);
    assert.ok(Math.max(...r.s[0]) - Math.min(...r.s[0]) > 0.1, 'the score does change with δ');
    r.angles.forEach(([a0, a5], p) => {
      const turn = 5 * r.base ** ((-2 * p) / d);
      const wrapped = Math.atan2(Math.sin(a5 - a0 - turn), Math.cos(a5 - a0 - turn));
      assert.ok(Math.abs(wrapped) < 1e-4, `pair ${p} turns by 5θ: off by ${wrapped}`);
    });
    // Keyboard: the position slider moves with the arrow keys.
    await page.focus('rope-explorer input[type=range]');
    const before = await page.$eval('rope-explorer', (el) => el.position);
    await page.keyboard.press('ArrowRight');
    assert.equal(await page.$eval('rope-explorer', (el) => el.position), before + 1);
    await assertClean(page, watch);
    await b.release(page);
  }
});

test('<alibi-bias>: bias = −m_h·(i − j) from alibiSlopes, weights rows sum to 1, zero above the diagonal, = SDPA with that bias', async () => {
  const { page, watch } = await open(
    'alibi',
    '<alibi-bias heads="8" length="12" seed="3"></alibi-bias>',
    'alibi-bias',
  );
  const check = async (causal) =>
    page.evaluate(async (c) => {
      const attn = await import('/src/js/index.js');
      await attn.init();
      const el = document.querySelector('alibi-bias');
      const H = 8,
        T = 12;
      const slopes = Array.from(attn.alibiSlopes(H));
      const [q, k, v] = [0, 1, 2].map((i) => attn.seededNormal([1, H, T, 8], 3 + i));
      const bias = new Float32Array(H * T * T);
      for (let h = 0; h < H; h++)
        for (let i = 0; i < T; i++)
          for (let j = 0; j < T; j++) bias[(h * T + i) * T + j] = -slopes[h] * (c ? i - j : Math.abs(i - j));
      const ref = attn.scaledDotProductAttention(q, k, v, {
        additiveMask: new attn.Tensor(bias, [1, H, T, T]),
        causal: c,
      }).weights.data;
      return {
        slopes,
        mine: Array.from(el.slopes),
        causal: el.causal,
        bias: Array.from(bias),
        widgetBias: Array.from({ length: H }, (_, h) => Array.from(el.bias(h))).flat(),
        weights: Array.from({ length: H }, (_, h) => Array.from(el.weights(h))).flat(),
        ref: Array.from(ref),
      };
    }, causal);
  for (const causal of [true, false]) {
    if (!causal) {
      await page.click('alibi-bias input[type=checkbox]'); // the "Causal" box, by pointer
      await page.waitForFunction(
        () => document.querySelector('alibi-bias').getAttribute('causal') === 'false',
      );
    }
    const r = await check(causal);
    assert.equal(r.causal, causal);
    assert.deepEqual(r.mine, r.slopes, 'slopes are alibiSlopes(8)');
    assert.deepEqual(r.mine.slice(0, 2), [0.5, 0.25]);
    assert.ok(
      r.widgetBias.every((x, i) => Math.abs(x - r.bias[i]) <= 1e-6),
      'bias(h) = −slope·(i − j)',
    );
    const T = 12;
    for (let h = 0; h < 8; h++)
      for (let i = 0; i < T; i++) {
        const row = r.weights.slice((h * T + i) * T, (h * T + i + 1) * T);
        const s = row.reduce((a, x) => a + x, 0);
        assert.ok(Math.abs(s - 1) <= kSumTol, `head ${h} row ${i} sums to ${s}`);
        if (causal)
          assert.ok(
            row.slice(i + 1).every((x) => x === 0),
            `head ${h} row ${i}: zeros above the diagonal`,
          );
        else if (i < T - 1)
          assert.ok(
            row.slice(i + 1).some((x) => x > 0),
            `not causal: head ${h} row ${i} sees later keys`,
          );
      }
    const diff = Math.max(...r.weights.map((x, i) => Math.abs(x - r.ref[i])));
    assert.ok(diff <= kSameTol, `alibi: true = the bias as an additive mask (${diff})`);
  }
  // Keyboard: the head selector, then a heatmap cell announces its bias.
  await page.selectOption('alibi-bias select', '3');
  await page.focus('alibi-bias canvas');
  await page.keyboard.press('ArrowDown');
  const readout = await page.$eval('alibi-bias', (el) => el.shadowRoot.querySelector('.readout').textContent);
  assert.match(readout, /^head 3, query 1, key 0: bias −1\/16·\|1 − 0\| = −0\.0625/);
  await assertClean(page, watch);
  await b.release(page);
});

test('<gqa-heads>: groups, heads of a group differ, weights = SDPA on repeat_kv; a count that does not divide is an error', async () => {
  const { page, watch } = await open(
    'gqa',
    '<gqa-heads heads="8" kv-heads="2" length="10" seed="5"></gqa-heads>',
    'gqa-heads',
  );
  const r = await page.evaluate(async () => {
    const attn = await import('/src/js/index.js');
    await attn.init();
    const el = document.querySelector('gqa-heads');
    const H = 8,
      Hkv = 2,
      T = 10,
      d = 8,
      n = T * d;
    const q = attn.seededNormal([1, H, T, d], 5),
      k = attn.seededNormal([1, Hkv, T, d], 6),
      v = attn.seededNormal([1, Hkv, T, d], 7);
    // Hugging Face's repeat_kv: key/value head g repeated H / Hkv times, in order.
    const rep = (t) => {
      const out = new Float32Array(H * n);
      for (let h = 0; h < H; h++)
        out.set(t.data.subarray(Math.floor(h / (H / Hkv)) * n, (Math.floor(h / (H / Hkv)) + 1) * n), h * n);
      return new attn.Tensor(out, [1, H, T, d]);
    };
    const ref = attn.scaledDotProductAttention(q, rep(k), rep(v), { causal: true }).weights.data;
    return {
      groups: el.groups,
      weights: Array.from({ length: H }, (_, h) => Array.from(el.weights(h))),
      ref: Array.from(ref),
      diagram: [...el.shadowRoot.querySelectorAll('.group')].map((g) => g.textContent),
    };
  });
  assert.deepEqual(r.groups, [
    [0, 1, 2, 3],
    [4, 5, 6, 7],
  ]);
  assert.deepEqual(r.diagram, [
    'K/V head 0q head 0q head 1q head 2q head 3',
    'K/V head 1q head 4q head 5q head 6q head 7',
  ]);
  const T = 10;
  for (const g of r.groups)
    for (const h of g.slice(1)) {
      const diff = Math.max(...r.weights[h].map((x, i) => Math.abs(x - r.weights[g[0]][i])));
      assert.ok(diff > 1e-3, `heads ${g[0]} and ${h} share k and v but not q: they differ (${diff})`);
    }
  for (let h = 0; h < 8; h++) {
    const diff = Math.max(...r.weights[h].map((x, i) => Math.abs(x - r.ref[h * T * T + i])));
    assert.ok(diff <= kSameTol, `head ${h}: enableGQA = repeat_kv (${diff})`);
  }
  // 3 key/value heads for 8 query heads: the library's message, no crash, no console error.
  await page.$eval('gqa-heads', (el) => el.setAttribute('kv-heads', '3'));
  await page.waitForFunction(
    () => !document.querySelector('gqa-heads').shadowRoot.querySelector('.error').hidden,
  );
  const bad = await page.$eval('gqa-heads', (el) => ({
    error: el.shadowRoot.querySelector('.error').textContent,
    groups: el.groups,
    role: el.shadowRoot.querySelector('.error').getAttribute('role'),
  }));
  assert.match(bad.error, /divide/);
  assert.match(bad.error, /3 heads must divide q's 8/);
  assert.equal(bad.groups, null);
  assert.equal(bad.role, 'alert');
  // And back: 1 key/value head (multi-query attention).
  await page.$eval('gqa-heads', (el) => {
    el.kvHeads = 1;
  });
  await page.waitForFunction(() => document.querySelector('gqa-heads').groups?.length === 1);
  assert.equal(await page.$eval('gqa-heads', (el) => el.shadowRoot.querySelector('.error').hidden), true);
  await assertClean(page, watch);
  await b.release(page);
});

test('axe-core: no violation on a page of the three widgets (light and dark)', async () => {
  // Each widget under its own h2, as on the tutorial page (the widgets' panel titles are h3).
  const { page, watch } = await open(
    'axe',
    ['rope-explorer', 'alibi-bias', 'gqa-heads']
      .map((t) => `<section><h2>${t}</h2><${t}></${t}></section>`)
      .join('\n'),
  );
  for (const scheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.$$eval(ALL, (els) => els.forEach((el) => el.refresh()));
    const found = await axeViolations(page);
    assert.deepEqual(found, [], `axe-core violations (${scheme}):\n${found.join('\n')}`);
  }
  await assertClean(page, watch);
  await b.release(page);
});
