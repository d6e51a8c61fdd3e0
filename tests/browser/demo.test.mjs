// The demo page in a real browser: typing, every step against an independent library trace, hover
// read-outs (exact values, q·k term by term, softmax row sums), invalid heads, loading weights,
// screenshots and the recompute timing. Two loads of the demo serve every test: the page at QUERY
// and the seeded layer at its defaults (b.shared), each test setting the state it needs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import {
  SHOTS,
  block,
  demoReady,
  demoSettled,
  join,
  launch,
  maxAbsDiff,
  referenceTrace,
} from './helpers.mjs';

// Widget and reference run the same wasm code on the same inputs, so they agree exactly; the
// tolerance only allows for float32 → JS number → text round trips.
const kTraceTol = 1e-6;
const kSumTol = 1e-6; // softmax rows sum to 1 within float32 rounding
const kDotTol = 1e-5; // the read-out's printed q·k (6 decimals) vs the trace

const TEXT = 'The cat sat on the mat because it was tired.';
const TOKENS = ['The', 'cat', 'sat', 'on', 'the', 'mat', 'because', 'it', 'was', 'tired', '.'];
// Every optional step on: sinusoidal positions, causal mask, dropout, residual + LayerNorm.
const CONFIG = {
  tokens: TOKENS,
  dModel: 16,
  heads: 4,
  seed: 1,
  positional: 'sinusoidal',
  causal: true,
  dropout: 0.1,
  dropoutSeed: 7,
  residual: true,
  layerNorm: true,
};
const QUERY = `?model=seeded&t=${encodeURIComponent(TEXT)}&d=16&h=4&m=causal&p=0.1&ps=7&res=1&ln=1&step=input`;

let b;
before(async () => {
  b = await launch();
});
after(async () => {
  await b?.close();
});

const stepsCurrent = (page) =>
  page.$eval('attention-steps', (el) => {
    const c = el.current;
    return { ...c, data: Array.from(c.data, (v) => (v === -Infinity ? '-inf' : v)) };
  });

test('the demo loads, shows tokens as chips, and makes no request outside its origin', async () => {
  const { page, watch } = await b.shared(`/${QUERY}`, demoReady);
  const chips = await page.$$eval('#chips .chip .t', (els) => els.map((e) => e.textContent));
  assert.deepEqual(chips, TOKENS);
  assert.match((await page.textContent('.disclaimer')).replace(/\s+/g, ' '), /seeded random values/);
  assert.ok(await page.$('a[href="/tutorial.html"]'), 'links to the tutorial');
  await page.screenshot({ path: join(SHOTS, 'demo.png') });
  await page.screenshot({ path: join(SHOTS, 'demo-full.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.evaluate(() => window.attentionDemo.render());
  await page.screenshot({ path: join(SHOTS, 'demo-dark.png') });
  await page.emulateMedia({ colorScheme: 'light' }); // the page stays open for the tests below
  await page.evaluate(() => window.attentionDemo.render());
  assert.deepEqual(watch.errors, []);
  assert.deepEqual(watch.offOrigin, []);
  // Chromium has relaxed SIMD (since 114) and the test server sends COOP/COEP: init() loads the
  // threaded relaxed-SIMD build, and the page says so (kernels, and the threads in its timing line).
  assert.ok(
    watch.requests.some((u) => u.endsWith('/dist/threads/attention_core_threads_relaxed.wasm')),
    'the wasm module came from the origin',
  );
  assert.equal(await page.locator('#kernel').textContent(), 'kernels: relaxed-simd');
  const threads = await page.evaluate(() => Math.min(navigator.hardwareConcurrency, 8));
  assert.match(
    await page.textContent('#timing'),
    new RegExp(` in [0-9.]+ ms on ${threads} thread${threads === 1 ? '' : 's'}$`),
  );
});

test('typing recomputes live: chips, widgets and the URL follow every keystroke', async () => {
  const { page, watch } = await b.shared('/?model=seeded', demoReady);
  await page.fill('#text', '');
  await page.type('#text', 'Attention is all you need!', { delay: 5 });
  await page.waitForFunction(() => document.querySelectorAll('#chips .chip').length === 6);
  const want = ['Attention', 'is', 'all', 'you', 'need', '!'];
  assert.deepEqual(await page.$$eval('#chips .chip .t', (els) => els.map((e) => e.textContent)), want);
  await page.waitForFunction(
    (n) => document.querySelector('attention-steps').result?.queryTokens.length === n,
    want.length,
  );
  assert.deepEqual(await page.$eval('attention-heatmap', (el) => el.shown.queryTokens), want);
  assert.equal(new URL(page.url()).searchParams.get('t'), 'Attention is all you need!');
  assert.match(await page.textContent('#token-count'), /^6 tokens/);
  assert.deepEqual(watch.errors, []);
});

test('stepping through every step shows exactly the library trace, for every head', async () => {
  const { page, watch } = await b.shared(`/${QUERY}`, demoReady);
  const ref = await referenceTrace(page, CONFIG);
  const names = await page.$eval('attention-steps', (el) => el.steps);
  assert.deepEqual(names, Object.keys(ref.steps), 'the same steps, in trace order');
  assert.ok(names.includes('dropped') && names.includes('normalized') && names.includes('positional'));
  const next = page.locator('attention-steps button[aria-label$=": next step"]');
  for (let i = 0; i < names.length; i++) {
    let cur = await stepsCurrent(page);
    assert.equal(cur.name, names[i]);
    assert.equal(
      await page.textContent('#steps >> .title'),
      `Step ${i + 1} of ${names.length} · ${cur.title}`,
    );
    const heads = cur.hasHead ? CONFIG.heads : 1;
    for (let h = 0; h < heads; h++) {
      if (cur.hasHead) {
        await page.selectOption('attention-steps select', String(h));
        cur = await stepsCurrent(page);
        assert.equal(cur.head, h);
      }
      const want = block(ref.steps[names[i]], h);
      assert.ok(
        maxAbsDiff(cur.data, want) <= kTraceTol,
        `step ${names[i]} head ${h}: the widget shows the library's numbers`,
      );
    }
    // The formula is typeset by the bundled KaTeX.
    assert.ok(await page.$('attention-steps .formula .katex'), `step ${names[i]} has a KaTeX formula`);
    if (i < names.length - 1) await next.click();
  }
  assert.ok(await next.isDisabled(), 'the last step has no next');
  assert.deepEqual(watch.errors, []);
});

/** Hovers a cell of the steps matrix and returns the read-out. */
async function hoverSteps(page, row, col) {
  await page.locator('attention-steps canvas').scrollIntoViewIfNeeded();
  const p = await page.$eval('attention-steps', (el, [r, c]) => el.cellCenter(r, c), [row, col]);
  await page.mouse.move(p.x, p.y);
  return page.$eval('attention-steps', (el) => {
    const ro = el.shadowRoot.querySelector('.readout');
    return {
      value: Number(ro.dataset.value),
      text: ro.textContent,
      terms: ro.querySelector('.terms')?.textContent ?? '',
    };
  });
}

test('hover read-outs: exact values, q·k term by term, softmax rows summing to 1', async () => {
  const { page, watch } = await b.shared(`/${QUERY}`, demoReady);
  const ref = await referenceTrace(page, CONFIG);
  const dk = CONFIG.dModel / CONFIG.heads,
    T = TOKENS.length;
  // QKᵀ: head 2, query 5 ("mat"), key 1 ("cat").
  await page.evaluate(() => window.attentionDemo.setState({ step: 'scores', head: 2 }));
  let r = await hoverSteps(page, 5, 1);
  const score = block(ref.steps.scores, 2)[5 * T + 1];
  assert.equal(r.value, score, 'the read-out carries the exact value');
  assert.match(r.text, /head 2 · query “mat” \(5\), key “cat” \(1\) = /);
  const products = r.terms.match(/\([−\d.]+\)\([−\d.]+\)/g) || [];
  assert.equal(products.length, dk, 'one product per dimension of d_k');
  const printed = Number(/\n= ([−\d.]+)/.exec(r.terms)[1].replace('−', '-'));
  assert.ok(Math.abs(printed - score) <= kDotTol, `q·k printed ${printed} vs trace ${score}`);
  // The q and k values in the products are the trace's (rounded to 3 decimals).
  const q = block(ref.steps.q, 2).slice(5 * dk, 6 * dk),
    k = block(ref.steps.k, 2).slice(1 * dk, 2 * dk);
  products.forEach((p, d) => {
    const [a, c] = p
      .slice(1, -1)
      .split(')(')
      .map((s) => Number(s.replace('−', '-')));
    assert.ok(Math.abs(a - q[d]) <= 5e-4 && Math.abs(c - k[d]) <= 5e-4, `term ${d}`);
  });
  // Softmax: every row sums to 1; the read-out says so for the hovered row.
  await page.evaluate(() => window.attentionDemo.setState({ step: 'weights', head: 1 }));
  r = await hoverSteps(page, 3, 0);
  const sum = Number(/sums to ([\d.e−-]+)/.exec(r.terms)[1].replace('−', '-'));
  assert.ok(Math.abs(sum - 1) <= kSumTol, `row sum ${sum}`);
  const w = await stepsCurrent(page);
  for (let i = 0; i < T; i++) {
    const s = w.data.slice(i * T, (i + 1) * T).reduce((a, x) => a + x, 0);
    assert.ok(Math.abs(s - 1) <= kSumTol, `weights row ${i} sums to ${s}`);
    for (let j = i + 1; j < T; j++)
      assert.equal(w.data[i * T + j], 0, 'causal: no weight above the diagonal');
  }
  // Keyboard: Tab to the canvas, arrows move the focused cell, the read-out follows.
  await page.focus('attention-steps canvas');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowDown');
  const kb = await page.$eval('attention-steps', (el) => ({
    ...el.shadowRoot.querySelector('.readout').dataset,
  }));
  assert.deepEqual([kb.row, kb.col], ['1', '1']);
  assert.deepEqual(watch.errors, []);
});

test('an invalid head count is explained, not crashed; a valid one recovers', async () => {
  const { page, watch } = await b.shared('/?model=seeded', demoReady);
  await page.evaluate(() => window.attentionDemo.setState({ dModel: 16, heads: 4 }, 'replace'));
  await demoSettled(page);
  await page.selectOption('#heads', '3');
  await page.waitForFunction(() => document.querySelector('#heads-note').classList.contains('bad'));
  assert.match(
    await page.textContent('#heads-note'),
    /3 heads do not divide d_model = 16.*Pick 1, 2, 4, 8 or 16/,
  );
  const err = await page.$eval('attention-steps', (el) => el.shadowRoot.querySelector('.error').textContent);
  assert.match(err, /numHeads 3 does not divide embedDim 16/, 'the library error reaches the widget');
  await page.selectOption('#heads', '8');
  await page.waitForFunction(() => document.querySelector('attention-steps').result?.ok === true);
  assert.equal(await page.$eval('attention-steps', (el) => el.result.heads), 8);
  assert.ok(await page.$eval('attention-steps', (el) => el.shadowRoot.querySelector('.error').hidden));
  assert.deepEqual(watch.errors, []);
});

test('weights round-trip: save as a PyTorch state dict, edit, load back', async () => {
  const { page, watch } = await b.shared('/?model=seeded', demoReady);
  await page.evaluate(
    (t) => window.attentionDemo.setState({ text: t, dModel: 16, heads: 4, step: 'output' }, 'replace'),
    TEXT,
  );
  await demoSettled(page);
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#weights-save')]);
  const sd = JSON.parse(await readFile(await dl.path(), 'utf8'));
  assert.deepEqual(Object.keys(sd), ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']);
  assert.deepEqual(sd.in_proj_weight.shape, [48, 16]);
  const before = await stepsCurrent(page);
  const oldBias = sd['out_proj.bias'].data;
  sd['out_proj.bias'].data = oldBias.map(() => 0.5);
  await page.setInputFiles('#weights-file', {
    name: 'edited.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(sd)),
  });
  await page.waitForFunction(() =>
    /Loaded 4 tensors/.test(document.querySelector('#weights-note').textContent),
  );
  const afterLoad = await stepsCurrent(page);
  assert.equal(afterLoad.name, 'output');
  for (let i = 0; i < afterLoad.data.length; i++) {
    const e = i % 16;
    assert.ok(
      Math.abs(afterLoad.data[i] - before.data[i] - (0.5 - oldBias[e])) <= 1e-5,
      'only the output bias changed',
    );
  }
  // A state dict of the wrong shape is refused with the library's message; the page keeps working.
  const bad = {
    in_proj_weight: [
      [1, 2],
      [3, 4],
    ],
  };
  await page.setInputFiles('#weights-file', {
    name: 'bad.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(bad)),
  });
  await page.waitForFunction(() => document.querySelector('#weights-note').classList.contains('bad'));
  assert.match(await page.textContent('#weights-note'), /Could not load “bad.json”/);
  assert.equal(await page.$eval('attention-steps', (el) => el.result.ok), true);
  await page.click('#weights-reset');
  const reset = await stepsCurrent(page);
  assert.ok(maxAbsDiff(reset.data, before.data) === 0, 'back to the seeded weights');
  assert.deepEqual(watch.errors, []);
});

test('timing: recompute and redraw, 32 tokens, d_model 64, 4 heads (printed, not asserted)', async () => {
  const { page, watch } = await b.shared('/?model=seeded', demoReady);
  const words =
    'the quick brown fox jumps over the lazy dog while seven tired cats watch from a warm and sunny window ledge near an old quiet river bank today as birds sing loudly'.split(
      ' ',
    );
  assert.equal(words.length, 32);
  await page.evaluate(
    (t) => window.attentionDemo.setState({ text: t, dModel: 64, heads: 4, step: 'weights' }, 'replace'),
    words.join(' '),
  );
  assert.equal(await page.$eval('attention-steps', (el) => el.result.Tq), 32);
  const t = await page.evaluate(() => window.attentionDemo.measure(40));
  console.log(
    `# recompute + redraw (32 tokens, d_model 64, 4 heads, all four widgets): median ${t.median.toFixed(2)} ms ` +
      `(min ${t.min.toFixed(2)}, max ${t.max.toFixed(2)}, n = ${t.n}; target < 16 ms)`,
  );
  assert.deepEqual(watch.errors, []);
});

test('long input: capped at 512 tokens, said so, still drawn (timing printed)', async () => {
  const { page, watch } = await b.shared('/?model=seeded', demoReady);
  const words = Array.from({ length: 600 }, (_, i) => `w${i % 97}`).join(' ');
  await page.evaluate(
    (t) => window.attentionDemo.setState({ text: t, dModel: 16, heads: 4, step: 'weights' }, 'replace'),
    words,
  );
  assert.match(await page.textContent('#token-count'), /^512 tokens \(the first 512; the rest is cut\)/);
  assert.equal(await page.$eval('attention-heatmap', (el) => el.shown.queryTokens.length), 512);
  const rows = await page.$eval('attention-steps', (el) => [el.current.rows, el.current.cols]);
  assert.deepEqual(rows, [512, 512]);
  const t = await page.evaluate(() => window.attentionDemo.measure(5));
  console.log(
    `# recompute + redraw at 512 tokens (d_model 16, 4 heads, all widgets): median ${t.median.toFixed(1)} ms`,
  );
  assert.deepEqual(watch.errors, []);
});
