// The tutorial page (web/tutorial.html), its later sections in a real browser: multi-head shapes, heads
// that learn, positional encoding, today's models (RoPE, the KV cache), finding the heads that matter, the
// snippets of section 11 (Embed) pasted alone into an empty page, and the attribute reference covering
// every attribute; section 10 (attention without softmax): <delta-rule-steps> on the seeded qwen3_5-tiny
// fixture (its read o_t = Σ_s A[t,s]·v_s over the library's map), keyboard, axe, a 360-px phone (the
// walk's math itself: tests/js/delta-rule-steps.test.mjs); no console error after all the interaction.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { ROOT, axeViolations, join, routeHtml } from './helpers.mjs';
import { useTutorialPage, ALL_WIDGETS, env, page, w, inspectWidgets } from './tutorial-page.mjs';

useTutorialPage();

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

test("section 8, today's models: numbered before Embed (11, last); RoPE's offsets agree; stepping the KV cache matches the full forward and the prose follows", async () => {
  const toc = await page.evaluate(() => ({
    sections: [...document.querySelectorAll('main section > h2')].map((h) => [
      h.querySelector('.num').textContent,
      h.parentElement.id,
    ]),
    links: [...document.querySelectorAll('.toc a')].map((a) => a.getAttribute('href')),
  }));
  assert.deepEqual(toc.sections.slice(-5), [
    ['7', 'learn'],
    ['8', 'modern'],
    ['9', 'matter'],
    ['10', 'no-softmax'],
    ['11', 'embed'],
  ]);
  assert.deepEqual(
    toc.sections.map(([n]) => n),
    ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11'],
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
    el.shadowRoot.querySelector('canvas').scrollIntoView({ block: 'center', behavior: 'instant' });
    return el.cellCenter(0, 1);
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

test('section 9, gradients: the saliency of every input token and attribution patching beside the exact patch', async () => {
  await page.waitForFunction(
    () =>
      document.querySelector('#interp-saliency').shown &&
      /Correlation|failed/.test(document.querySelector('[data-bind="interp-attrpatch"]').textContent),
    null,
    { timeout: 30_000 },
  );
  const r = await page.evaluate(async () => {
    const el = document.querySelector('#interp-saliency');
    const p = el.plan(),
      ref = await el.model.saliency(p.ids, p.options);
    return {
      method: el.shown.method,
      where: el.shown.where,
      diff: Math.max(...Array.from(el.shown.scores, (v, i) => Math.abs(v - ref.scores.data[i]))),
      prose: ['interp-saliency', 'interp-attrpatch'].map(
        (n) => document.querySelector(`[data-bind="${n}"]`).textContent,
      ),
    };
  });
  assert.equal(r.method, 'integrated-gradients');
  assert.equal(r.where, 'worker', 'integrated gradients run in the worker');
  assert.ok(r.diff <= 1e-5, `the scores are model.saliency's (${r.diff})`);
  assert.match(
    r.prose[0],
    /^The answer’s logit difference is \d+\.\d\d; they add up to it within \d\.\d{3}\. Largest scores: position \d+/,
  );
  assert.match(
    r.prose[1],
    /^Estimated share restored by each head: layer 0 head 0 −?\d+\.\d\d \(exact −?\d\.\d\d\),.* Correlation with the exact patch: −?\d\.\d\d\.$/,
  );
});

test('each snippet of section 11 (Embed), pasted alone into an empty page with the script tag, renders', async () => {
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
    const { page: p, watch: pw } = await env.newPage();
    await p.goto(url);
    await p.waitForFunction((sel) => document.querySelector(sel)?.dataset.ready !== undefined, name, {
      timeout: 20_000,
    });
    // <token-saliency> draws after its first run
    await p.waitForFunction(
      () => [...document.querySelectorAll('token-saliency')].every((e) => e.shown),
      null,
      {
        timeout: 20_000,
      },
    );
    const [x] = await inspectWidgets(p, name);
    assert.equal(x.error, '', `${name} alone shows no error`);
    assert.ok(x.drawn >= 1 && x.colours > 2, `${name} alone draws (${x.colours} colours)`);
    assert.deepEqual(pw.errors, [], `${name} alone: no console error`);
    assert.deepEqual(pw.offOrigin, [], `${name} alone: nothing outside the origin`);
    await env.release(p);
  }
});

// Section 10's step view against the library's float32 forward: a float64 walk over float32 hooks.
const DELTA_TOL = 1e-5;

test('the step view draws, and its read equals the effective attention row times the values', async () => {
  await page.waitForFunction(() => document.querySelector('#delta-steps').shown, null, { timeout: 20_000 });
  const [x] = await inspectWidgets(page, '#delta-steps');
  assert.equal(x.error, '');
  assert.ok(x.drawn >= 2 && x.colours > 2, `both states drawn (${x.drawn} canvases, ${x.colours} colours)`);
  await page.locator('#delta-steps').evaluate((el) => el.setAttribute('step', 'read'));
  const r = await page.waitForFunction(() => {
    const s = document.querySelector('#delta-steps').shown;
    return s?.step === 'read' && s.mixed
      ? { o: Array.from(s.walk.o), mixed: Array.from(s.mixed), t: s.t, T: s.T }
      : null;
  });
  const { o, mixed, t, T } = await r.jsonValue();
  assert.equal(T, 6); // "Hello world, the sea there": 6 tokens of the fixture's tokenizer
  assert.equal(t, T - 1);
  const scale = Math.max(...o.map(Math.abs));
  assert.ok(scale > 0);
  for (let j = 0; j < o.length; j++)
    assert.ok(Math.abs(o[j] - mixed[j]) <= DELTA_TOL * (1 + scale), `o[${j}] ${o[j]} vs Σ A v ${mixed[j]}`);
  const numbers = await page
    .locator('#delta-steps')
    .evaluate((el) => el.shadowRoot.querySelector('.numbers').textContent);
  assert.match(numbers, /effective attention/);
  // The exports: the step's two 8 × 6 matrices in the CSV, o_t and the vectors in the JSON.
  const out = await page
    .locator('#delta-steps')
    .evaluate((el) => ({ csv: el.getCSV(), json: JSON.parse(el.getJSON()) }));
  assert.equal(out.csv.trim().split('\n').length, 1 + 2 * 8 * 6);
  assert.deepEqual(out.json.o, o);
  assert.deepEqual(Object.keys(out.json.matrices), ['after', 'read']);
});

test('keyboard: Tab reaches the step buttons and the state, Enter walks the steps, arrows read cells', async () => {
  const steps = page.locator('#delta-steps');
  await steps.evaluate((el) => el.setAttribute('step', 'decay'));
  const button = steps.locator('.steps button', { hasText: '3 Write' });
  await button.focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('#delta-steps').shown?.step === 'write');
  assert.equal(await button.getAttribute('aria-pressed'), 'true');
  const formula = await steps.evaluate((el) => el.shadowRoot.querySelector('.formula').textContent);
  assert.match(formula, /^write: S₅ = S′ \+ k₅ uᵀ/);
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  await page.keyboard.press('ArrowRight');
  const readout = await steps.evaluate((el) => el.shadowRoot.querySelector('.readout').textContent);
  assert.match(readout, /key feature \d+, value feature \d+: −?\d/);
  await steps.locator('select').first().selectOption('3');
  await page.waitForFunction(() => document.querySelector('#delta-steps').shown?.head === 3);
  assert.equal(await steps.evaluate((el) => el.shown.keyHead), 1);
});

test('the section: the signed map, the prose, axe clean, nothing wider than a 360-px phone', async () => {
  await page.waitForFunction(() =>
    /negative/.test(document.querySelector('[data-bind="delta-summary"]').textContent),
  );
  const prose = await page.locator('[data-bind="delta-summary"]').textContent();
  const m = /^4 value heads on 2 key heads, 6 tokens: (\d+) of the 84 weights/.exec(prose);
  assert.ok(m && Number(m[1]) > 0, prose);
  const map = await page
    .locator('#delta-map')
    .evaluate((el) => ({ signed: el.hasAttribute('signed'), H: el.data?.H }));
  assert.deepEqual(map, { signed: true, H: 4 });
  // Enter on a cell of the map (head 2's tile, query 3) walks that head at that token below.
  await page.locator('#delta-map').locator('[role="grid"]').nth(2).locator('[tabindex]').first().focus();
  for (const key of ['PageDown', 'ArrowUp', 'ArrowUp', 'Enter']) await page.keyboard.press(key);
  await page.waitForFunction(() => {
    const s = document.querySelector('#delta-steps').shown;
    return s?.head === 2 && s.t === 3;
  });
  assert.deepEqual(await axeViolations(page, '#no-softmax'), []);
  await page.setViewportSize({ width: 360, height: 740 });
  await page.waitForFunction(() => {
    const el = document.querySelector('#delta-steps');
    return el.shown && el.getBoundingClientRect().width <= 360;
  });
  const wide = await page.evaluate(() =>
    [...document.querySelectorAll('#no-softmax, #delta-steps')].map((el) => [
      el.id,
      Math.max(
        el.scrollWidth,
        ...[...(el.shadowRoot?.querySelectorAll('*') ?? [])].map((c) => c.getBoundingClientRect().right),
      ),
    ]),
  );
  for (const [id, right] of wide) assert.ok(right <= 362, `#${id} fits 360 px (${right})`);
  assert.deepEqual(w.errors, []);
});

test('no console error after all the interaction', () => {
  assert.deepEqual(w.errors, []);
});
