// The interpretability widgets (issue #27) in Chromium under the strict CSP of the test pages:
// <head-scores>, <logit-attribution>, <patching-view> and <attention-model-view mode="rollout">, on
// the induction preset. Each renders with no console error or CSP violation; what each shows equals
// the library called from the test page on the same model and ids (headScores, logitAttribution,
// patch — in the worker for `src`, in the page for a `model` property —, attentionRollout); keyboard
// and pointer select heads (head-select); Cancel stops a run and the next run still gives the
// result; axe-core finds nothing (light and dark); every widget fits a 360 px phone.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ROOT, SHOTS, join, launch, assertCleanPage, openWidgetPage } from './helpers.mjs';

// The widgets and the page run the same wasm code on the same float32 weights (the worker its own
// instance of the same build): results agree to float32 rounding of the same operations.
const kSameTol = 1e-6;
const AXE = readFileSync(join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
const SRC = '/web/presets/induction.safetensors';
const CLEAN = [5, 12, 3, 9, 14, 0, 7, 11, 2, 3, 9, 14, 0];
const CORRUPTED = [5, 12, 3, 9, 14, 8, 7, 11, 2, 3, 9, 14, 0];
const ALL = 'head-scores, logit-attribution, patching-view, attention-model-view';
const PAGE = `
  <head-scores src="${SRC}" ids="${CLEAN.join(' ')}"></head-scores>
  <logit-attribution src="${SRC}" ids="${CLEAN.join(' ')}"></logit-attribution>
  <patching-view src="${SRC}" clean="${CLEAN.join(' ')}" corrupted="${CORRUPTED.join(' ')}" autorun></patching-view>
  <attention-model-view src="${SRC}" ids="${CLEAN.join(' ')}" mode="rollout"></attention-model-view>`;

let b;
before(async () => {
  b = await launch({ viewport: { width: 1000, height: 900 } });
});
after(async () => {
  await b?.close();
});

async function openAll(name = 'all', body = PAGE) {
  const r = await openWidgetPage(b, 'interp', name, body, ALL);
  await r.page.waitForFunction(() => document.querySelector('patching-view')?.shown, null, {
    timeout: 20_000,
  });
  return r;
}

/** In the page: window.__ref = { attn, model } with a TinyTransformer of the preset, for the reference calls. */
async function reference(page) {
  await page.evaluate(async (src) => {
    const attn = await import('/src/js/index.js');
    await attn.init();
    const bytes = new Uint8Array(await (await fetch(src)).arrayBuffer());
    window.__ref = { attn, model: attn.TinyTransformer.fromSafetensors(bytes) };
  }, SRC);
}

const maxDiff = (a, b) =>
  a.length !== b.length
    ? Infinity
    : Math.max(0, ...a.map((x, i) => (Number.isNaN(x) && Number.isNaN(b[i]) ? 0 : Math.abs(x - b[i]))));

test('each widget renders: labelled grids and controls, exports with SVG, no error, no CSP violation', async () => {
  const { page, watch } = await openAll();
  for (const name of ['head-scores', 'logit-attribution', 'patching-view']) {
    const a = await page.$eval(name, (el) => {
      const root = el.shadowRoot;
      return {
        canvases: [...root.querySelectorAll('canvas')]
          .filter((c) => !c.hidden)
          .map((c) => ({ label: c.getAttribute('aria-label') || '', w: c.width, h: c.height })),
        grids: root.querySelectorAll('[role=grid]').length,
        tables: root.querySelectorAll('table').length,
        unnamed: [...root.querySelectorAll('select, input, button, progress')].filter(
          (x) =>
            !x.getAttribute('aria-label') &&
            !x.closest('label') &&
            !x.labels?.length &&
            !x.textContent.trim(),
        ).length,
        live: !!root.querySelector('[aria-live], [role=status]'),
        exports: [...root.querySelectorAll('.exports button')].map((x) => x.textContent),
        error: root.querySelector('.error').hidden,
        csv: el.getCSV().trim().split('\n').length,
        json: JSON.parse(el.getJSON()),
        svg: el.toSVG(),
      };
    });
    assert.ok(a.canvases.length >= 1, `${name} draws`);
    for (const c of a.canvases) {
      assert.ok(c.label.length > 20, `${name}: canvas described: ${c.label}`);
      assert.ok(c.w > 50 && c.h > 40, `${name}: drawn at a real size`);
    }
    if (name === 'logit-attribution') assert.equal(a.tables, 1, 'the components as a table');
    else assert.ok(a.grids >= 1, `${name}: its grids are keyboard grids`);
    assert.equal(a.unnamed, 0, `${name}: every control is named`);
    assert.ok(a.live, `${name}: a live readout`);
    assert.deepEqual(a.exports, ['PNG', 'SVG', 'CSV', 'JSON']);
    assert.ok(a.error, `${name}: no error shown`);
    assert.ok(a.csv >= 5, `${name}: CSV rows`);
    assert.equal(a.json.state.widget, name, `${name}: the JSON carries the state`);
    assert.match(
      a.svg,
      /^<\?xml[\s\S]*<svg[\s\S]*<metadata id="aw-state">[\s\S]*<\/svg>\n$/,
      `${name}: an SVG document`,
    );
  }
  await page.screenshot({ path: join(SHOTS, 'interp-widgets.png'), fullPage: true });
  await assertCleanPage(page, watch);
  await page.close();
});

test('the grids and bars equal headScores, logitAttribution, patch and attentionRollout computed in the page', async () => {
  const { page, watch } = await openAll();
  await reference(page);
  const r = await page.evaluate(
    async ({ clean, corrupted }) => {
      const { attn, model } = window.__ref;
      const hs = document.querySelector('head-scores').shown;
      const scores = model.headScores(clean);
      const la = document.querySelector('logit-attribution').shown;
      const a = model.logitAttribution(clean, { token: la.token, against: la.against });
      const pv = document.querySelector('patching-view');
      const plan = pv.plan();
      const p = await model.patch({ clean, corrupted, token: plan.token, against: plan.against });
      // The defaults: the clean run's top prediction against the corrupted run's.
      const f = (ids) => {
        const l = model.forward([ids]).logits;
        const V = l.shape[2],
          T = ids.length;
        const row = Array.from(l.data.slice((T - 1) * V, T * V));
        return row.indexOf(Math.max(...row));
      };
      const mv = document.querySelector('attention-model-view').shown;
      const R = attn.attentionRollout(model.forward([clean], { attention: true }).attention);
      const out = {
        kinds: hs.kinds,
        L: hs.L,
        H: hs.H,
        scores: Object.fromEntries(
          hs.kinds.map((k) => [k, [Array.from(hs.scores[k]), Array.from(scores[k].data)]]),
        ),
        attribution: {
          shown: Array.from(la.heads),
          ref: Array.from(a.heads.data),
          embed: [la.embed, a.embed],
          bias: [la.bias, a.bias],
          total: [la.total, a.total],
          logitDiff: [la.logitDiff, a.logitDiff],
          values: la.components.map((c) => c.value),
          rows: document.querySelector('logit-attribution').shadowRoot.querySelectorAll('tbody tr').length,
          token: la.token,
          top: f(clean),
        },
        patch: {
          shown: Array.from(pv.shown.result),
          ref: Array.from(p.result.data),
          where: pv.shown.where,
          diffs: [pv.shown.cleanDiff, p.cleanDiff, pv.shown.corruptedDiff, p.corruptedDiff],
          token: plan.token,
          against: plan.against,
          topClean: f(clean),
          topCorrupted: f(corrupted),
        },
        rollout: {
          mode: mv.mode,
          tiles: mv.layers.length,
          H: mv.H,
          diff: Math.max(
            ...mv.layers.flatMap((d, l) => Array.from(d, (v, i) => Math.abs(v - R.data[l * d.length + i]))),
          ),
        },
      };
      return out;
    },
    { clean: CLEAN, corrupted: CORRUPTED },
  );
  assert.deepEqual(r.kinds, ['previous-token', 'duplicate-token', 'induction']);
  assert.deepEqual([r.L, r.H], [2, 2]);
  for (const [k, [shown, ref]] of Object.entries(r.scores))
    assert.ok(maxDiff(shown, ref) <= kSameTol, `${k}: ${shown} vs ${ref}`);
  // The preset's claimed heads top their kinds (docs/presets.md): previous-token L0 H1, induction L1 H1.
  const pt = r.scores['previous-token'][0];
  assert.equal(pt.indexOf(Math.max(...pt)), 1, 'previous-token: layer 0 head 1');
  const at = r.attribution;
  assert.ok(maxDiff(at.shown, at.ref) <= kSameTol, 'head attributions');
  for (const k of ['embed', 'bias', 'total', 'logitDiff'])
    assert.ok(Math.abs(at[k][0] - at[k][1]) <= kSameTol, k);
  assert.equal(at.token, at.top, 'token defaults to the top prediction');
  assert.equal(at.rows, at.values.length, 'the table lists every component');
  for (let i = 1; i < at.values.length; i++)
    assert.ok(Math.abs(at.values[i - 1]) >= Math.abs(at.values[i]), 'sorted by |contribution|');
  const sum = at.values.reduce((s, v) => s + v, 0);
  assert.ok(Math.abs(sum - at.total[0]) <= 1e-4, `the parts add up to the total (${sum} vs ${at.total[0]})`);
  const pa = r.patch;
  assert.equal(pa.where, 'worker', 'a src model is patched in the worker');
  assert.ok(maxDiff(pa.shown, pa.ref) <= kSameTol, `patch: ${pa.shown} vs ${pa.ref}`);
  assert.ok(
    Math.abs(pa.diffs[0] - pa.diffs[1]) <= kSameTol && Math.abs(pa.diffs[2] - pa.diffs[3]) <= kSameTol,
    'clean and corrupted differences',
  );
  assert.deepEqual(
    [pa.token, pa.against],
    [pa.topClean, pa.topCorrupted],
    "token and against default to each run's top prediction",
  );
  assert.ok(pa.shown[1] > 0.9, `layer 0 head 1 carries the answer (${pa.shown[1]})`);
  assert.deepEqual([r.rollout.mode, r.rollout.tiles, r.rollout.H], ['rollout', 2, 1]);
  assert.ok(r.rollout.diff <= kSameTol, `rollout tiles = attentionRollout (${r.rollout.diff})`);
  await assertCleanPage(page, watch);
  await page.close();
});

test('a model set as a property: patched in the page, residual component, same numbers as patch', async () => {
  const { page, watch } = await openWidgetPage(
    b,
    'interp',
    'property',
    `<head-scores src="${SRC}" ids="3 1 4"></head-scores><patching-view component="residual"></patching-view>`,
    'head-scores',
  );
  await reference(page);
  const r = await page
    .evaluate(
      async ({ clean, corrupted }) => {
        const { model } = window.__ref;
        const el = document.querySelector('patching-view');
        el.model = model;
        el.clean = clean;
        el.corrupted = corrupted;
        let progress = 0;
        const orig = el.shadowRoot.querySelector('progress');
        const out = await el.run();
        progress = [orig.value, orig.max];
        const plan = el.plan();
        const p = await model.patch({
          clean,
          corrupted,
          token: plan.token,
          against: plan.against,
          component: 'residual',
        });
        return {
          where: el.shown.where,
          shape: [el.shown.L, el.shown.cols],
          shown: Array.from(out.result),
          ref: Array.from(p.result.data),
          progress,
          ready: el.dataset.ready !== undefined,
        };
      },
      { clean: CLEAN, corrupted: CORRUPTED },
    )
    .catch((e) => {
      throw e;
    });
  assert.equal(r.where, 'page');
  assert.deepEqual(r.shape, [2, CLEAN.length]);
  assert.ok(maxDiff(r.shown, r.ref) <= kSameTol);
  assert.equal(r.progress[0], r.progress[1], 'the progress bar ends full');
  assert.equal(r.shown[5], 1, 'block 0 at the changed token restores everything');
  await assertCleanPage(page, watch);
  await page.close();
});

test("a PretrainedModel (tiny GPT-2) as the model property: scores, attribution and patching equal the library's", async () => {
  const { page, watch } = await openWidgetPage(
    b,
    'interp',
    'pretrained',
    `<head-scores src="${SRC}" ids="3 1 4"></head-scores>
    <head-scores id="p-scores"></head-scores><logit-attribution id="p-attr"></logit-attribution><patching-view id="p-patch"></patching-view>`,
    'head-scores[src]',
  );
  const r = await page.evaluate(async () => {
    const attn = await import('/src/js/index.js');
    const dir = '/tests/golden/pretrained/gpt2-tiny/';
    const model = await attn.loadPretrained({
      config: await (await fetch(`${dir}config.json`)).json(),
      weights: new Uint8Array(await (await fetch(`${dir}model.safetensors`)).arrayBuffer()),
    });
    const ids = [5, 17, 3, 9, 5, 17, 3],
      corrupted = [5, 17, 3, 9, 8, 17, 3];
    const scores = document.querySelector('#p-scores'),
      attr = document.querySelector('#p-attr'),
      patch = document.querySelector('#p-patch');
    for (const el of [scores, attr]) {
      el.model = model;
      el.ids = ids;
    }
    patch.model = model;
    patch.clean = ids;
    patch.corrupted = corrupted;
    await new Promise((ok) => requestAnimationFrame(ok));
    const out = await patch.run();
    const plan = patch.plan();
    const ref = {
      scores: model.headScores(ids),
      attr: model.logitAttribution(ids, { token: attr.shown.token, against: attr.shown.against }),
      patch: await model.patch({ clean: ids, corrupted, token: plan.token, against: plan.against }),
    };
    const res = {
      shape: [scores.shown.L, scores.shown.H],
      scores: Math.max(
        ...scores.shown.kinds.flatMap((k) =>
          Array.from(scores.shown.scores[k], (v, i) => Math.abs(v - ref.scores[k].data[i])).filter(
            Number.isFinite,
          ),
        ),
      ),
      attr: Math.max(
        ...Array.from(attr.shown.heads, (v, i) => Math.abs(v - ref.attr.heads.data[i])),
        Math.abs(attr.shown.total - ref.attr.total),
      ),
      mlpBars: attr.shown.components.filter((c) => c.kind === 'mlp').length,
      patch: Math.max(...Array.from(out.result, (v, i) => Math.abs(v - ref.patch.result.data[i]))),
      where: patch.shown.where,
      errors: [scores, attr, patch].map((el) => el.shadowRoot.querySelector('.error').hidden),
    };
    for (const el of [scores, attr, patch]) el.model = null;
    model.dispose();
    return res;
  });
  assert.ok(r.shape[0] >= 2 && r.shape[1] >= 2, `${r.shape}`);
  assert.ok(r.scores <= kSameTol && r.attr <= kSameTol && r.patch <= kSameTol, JSON.stringify(r));
  assert.equal(r.mlpBars, r.shape[0], 'one MLP component per layer');
  assert.equal(r.where, 'page');
  assert.deepEqual(r.errors, [true, true, true], 'no error shown');
  await assertCleanPage(page, watch);
  await page.close();
});

test('the export buttons save what each widget shows (PNG, SVG, CSV, JSON)', async () => {
  for (const name of ['head-scores', 'logit-attribution', 'patching-view']) {
    // A page per widget (Chromium holds back a page's downloads after the first ten).
    const { page, watch } = await openAll(`exports-${name}`);
    const expected = await page.$eval(name, (el) => ({ csv: el.getCSV(), json: JSON.parse(el.getJSON()) }));
    for (const format of ['png', 'svg', 'csv', 'json']) {
      const button = page.locator(`${name} .exports button`, { hasText: format.toUpperCase() });
      await button.scrollIntoViewIfNeeded();
      const [dl] = await Promise.all([page.waitForEvent('download'), button.click()]);
      const bytes = readFileSync(await dl.path());
      assert.equal(dl.suggestedFilename(), `${name}.${format}`);
      if (format === 'png') assert.deepEqual([...bytes.subarray(1, 4)], [80, 78, 71], `${name}: a PNG`);
      if (format === 'svg') assert.match(bytes.toString('utf8'), /<svg[\s\S]*<\/svg>/);
      if (format === 'csv') assert.equal(bytes.toString('utf8'), expected.csv);
      if (format === 'json') assert.deepEqual(JSON.parse(bytes.toString('utf8')).state, expected.json.state);
    }
    await assertCleanPage(page, watch);
    await page.close();
  }
});

test("printing swaps each widget's pictures for its SVG figure, and back", async () => {
  const { page, watch } = await openAll('print');
  const r = await page.evaluate(async () => {
    const { preparePrint, restorePrint } = await import('/web/widgets.js');
    const names = ['head-scores', 'logit-attribution', 'patching-view', 'attention-model-view'];
    const n = preparePrint();
    const during = names.map((t) => {
      const root = document.querySelector(t).shadowRoot;
      return [
        t,
        root.querySelectorAll('.aw-print-figure svg').length,
        root.querySelectorAll('canvas:not([data-aw-print-hidden])').length -
          root.querySelectorAll('[data-aw-print-hidden] canvas').length,
      ];
    });
    restorePrint();
    const after = names.map(
      (t) => document.querySelector(t).shadowRoot.querySelectorAll('.aw-print-figure').length,
    );
    return { n, during, after };
  });
  assert.equal(r.n, 4);
  for (const [t, figures, visibleCanvases] of r.during) {
    assert.equal(figures, 1, `${t}: one figure`);
    assert.equal(visibleCanvases, 0, `${t}: no canvas left to print`);
  }
  assert.deepEqual(r.after, [0, 0, 0, 0]);
  await assertCleanPage(page, watch);
  await page.close();
});

test('keyboard and pointer: arrows move over heads, Enter and clicks emit head-select', async () => {
  const { page, watch } = await openAll('keys');
  await page.evaluate(() => {
    window.__sel = [];
    document.addEventListener('head-select', (e) =>
      window.__sel.push([e.target.localName, e.detail.layer, e.detail.head]),
    );
  });
  // <head-scores>: Tab into the first grid (previous-token), → then ↓ then Enter: layer 1, head 1.
  await page
    .locator('head-scores')
    .evaluate((el) => el.shadowRoot.querySelector('[role=grid] [role=gridcell]').focus());
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowDown');
  const name = await page.locator('head-scores').evaluate((el) => el.shadowRoot.activeElement?.textContent);
  assert.match(name, /layer 1 .*head 1 .*: 0\.\d+/, `the focused cell is named: ${name}`);
  await page.keyboard.press('Enter');
  // <patching-view>: the grid, → Enter: layer 0, head 1.
  await page
    .locator('patching-view')
    .evaluate((el) => el.shadowRoot.querySelector('[role=grid] [role=gridcell]').focus());
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('Enter');
  // A click on <patching-view>'s cell (1, 0) and on <logit-attribution>'s first bar (its largest head).
  const p = await page.locator('patching-view').evaluate((el) => {
    el._view.canvas.scrollIntoView({ block: 'center' });
    return el._view.cellCenter(1, 0);
  });
  await page.mouse.click(p.x, p.y);
  const top = await page.locator('logit-attribution').evaluate((el) => {
    el.shadowRoot.querySelector('canvas').scrollIntoView({ block: 'center' });
    const c = el.shadowRoot.querySelector('canvas').getBoundingClientRect();
    const first = el.shown.components.find((x) => x.kind === 'head');
    return {
      x: c.left + c.width / 2,
      y: c.top + 8 + 4 + el.shown.components.indexOf(first) * 22 + 11,
      layer: first.layer,
      head: first.head,
    };
  });
  await page.mouse.click(top.x, top.y);
  // The table's head buttons work by keyboard too.
  await page
    .locator('logit-attribution')
    .evaluate((el) => el.shadowRoot.querySelector('tbody button').focus());
  await page.keyboard.press('Enter');
  const sel = await page.evaluate(() => window.__sel);
  const firstButton = await page
    .locator('logit-attribution')
    .evaluate((el) => el.shadowRoot.querySelector('tbody button').textContent);
  assert.deepEqual(sel.slice(0, 4), [
    ['head-scores', 1, 1],
    ['patching-view', 0, 1],
    ['patching-view', 1, 0],
    ['logit-attribution', top.layer, top.head],
  ]);
  assert.deepEqual(sel[4].slice(0, 1), ['logit-attribution']);
  assert.equal(`L${sel[4][1]} H${sel[4][2]}`, firstButton);
  await assertCleanPage(page, watch);
  await page.close();
});

test('steps="id": a selected head opens step by step in that <attention-steps>, the model\'s own weights', async () => {
  const ids = CLEAN.join(' ');
  const { page, watch } = await openWidgetPage(
    b,
    'interp',
    'steps',
    `
    <head-scores src="${SRC}" ids="${ids}" steps="s1"></head-scores>
    <logit-attribution src="${SRC}" ids="${ids}" steps="s1"></logit-attribution>
    <patching-view src="${SRC}" clean="${ids}" corrupted="${CORRUPTED.join(' ')}" autorun steps="s1"></patching-view>
    <attention-steps id="s1" text="${ids}" d-model="32" heads="2"></attention-steps>`,
    'head-scores, logit-attribution, patching-view, attention-steps',
  );
  await reference(page);
  const r = await page.evaluate(async () => {
    const { model } = window.__ref;
    const steps = document.querySelector('#s1');
    const T = 13,
      attention = model.forward([[5, 12, 3, 9, 14, 0, 7, 11, 2, 3, 9, 14, 0]], { attention: true }).attention;
    const shown = async () => {
      await new Promise((ok) => requestAnimationFrame(ok));
      const c = steps.current;
      return { step: c.name, head: c.head, data: Array.from(c.data) };
    };
    const expect = (l, h) => Array.from(attention[l].data.subarray(h * T * T, (h + 1) * T * T));
    const out = [];
    document.querySelector('head-scores').select(0, 1, 'previous-token');
    out.push([await shown(), expect(0, 1)]);
    document.querySelector('logit-attribution').select(1, 0);
    out.push([await shown(), expect(1, 0)]);
    const pv = document.querySelector('patching-view');
    pv._view.canvas.dispatchEvent(
      new MouseEvent('click', {
        clientX: pv._view.cellCenter(1, 1).x,
        clientY: pv._view.cellCenter(1, 1).y,
        bubbles: true,
      }),
    );
    out.push([await shown(), expect(1, 1)]);
    return out.map(([s, e]) => ({
      step: s.step,
      head: s.head,
      diff: Math.max(...s.data.map((v, i) => Math.abs(v - e[i]))),
    }));
  });
  assert.deepEqual(
    r.map((x) => [x.step, x.head]),
    [
      ['weights', 1],
      ['weights', 0],
      ['weights', 1],
    ],
  );
  for (const x of r) assert.ok(x.diff <= kSameTol, `the steps view shows the head's weights (${x.diff})`);
  await assertCleanPage(page, watch);
  await page.close();
});

test('Cancel stops a patch run (worker and page), the widget stays usable and the next run gives the result', async () => {
  const { page, watch } = await openAll('cancel');
  await reference(page);
  const r = await page.evaluate(async () => {
    const el = document.querySelector('patching-view');
    const before = Array.from(el.shown.result);
    const results = {};
    // In the worker: Run, then the Cancel button at once.
    el.autorun = false;
    el.component = 'residual';
    await new Promise((ok) => requestAnimationFrame(ok));
    const cancelButton = el.shadowRoot.querySelector('.cancel-button');
    const cancelled = [];
    el.addEventListener('patch-cancel', () => cancelled.push(1));
    let pending = el.run();
    const midway = {
      running: el.running,
      cancelEnabled: !cancelButton.disabled,
      runDisabled: el.shadowRoot.querySelector('.run-button').disabled,
    };
    cancelButton.click();
    results.worker = {
      midway,
      value: await pending,
      running: el.running,
      status: el.shadowRoot.querySelector('[role=status]').textContent,
      cancelDisabled: cancelButton.disabled,
    };
    const again = await el.run();
    results.workerAgain = { where: el.shown.where, n: again.result.length };
    // In the page: the same with a model property.
    const { model } = window.__ref;
    el.component = 'head';
    el.model = model;
    await new Promise((ok) => requestAnimationFrame(ok));
    pending = el.run();
    el.cancel();
    results.page = { value: await pending, running: el.running };
    // Midway: Cancel at the first progress report (after layer 0's batch): layer 1's never runs.
    el.component = 'residual';
    await new Promise((ok) => requestAnimationFrame(ok));
    const seen = [];
    const onProgress = (e) => {
      seen.push([e.detail.done, e.detail.total]);
      if (seen.length === 1) el.shadowRoot.querySelector('.cancel-button').click();
    };
    el.addEventListener('patch-progress', onProgress);
    results.midway = {
      value: await el.run(),
      seen,
      bar: [el.shadowRoot.querySelector('progress').value, el.shadowRoot.querySelector('progress').max],
    };
    el.removeEventListener('patch-progress', onProgress);
    el.component = 'head';
    await new Promise((ok) => requestAnimationFrame(ok));
    const out = await el.run();
    results.pageAgain = {
      where: el.shown.where,
      result: Array.from(out.result),
      before,
      cancelled: cancelled.length,
    };
    return results;
  });
  assert.deepEqual(
    r.worker.midway,
    { running: true, cancelEnabled: true, runDisabled: true },
    'Run is disabled and Cancel enabled while running',
  );
  assert.equal(r.worker.value, null, 'a cancelled run resolves to null');
  assert.equal(r.worker.running, false);
  assert.match(r.worker.status, /^Cancelled/);
  assert.ok(r.worker.cancelDisabled);
  assert.deepEqual(
    r.workerAgain,
    { where: 'worker', n: 2 * CLEAN.length },
    'the worker runs again after a cancel',
  );
  assert.deepEqual([r.page.value, r.page.running], [null, false]);
  assert.equal(r.pageAgain.where, 'page');
  assert.ok(
    maxDiff(r.pageAgain.result, r.pageAgain.before) <= kSameTol,
    "the next run in the page gives the worker's first result",
  );
  assert.equal(r.pageAgain.cancelled, 3, 'patch-cancel fired for each cancel');
  assert.equal(r.midway.value, null);
  assert.equal(r.midway.seen.length, 1, `no progress after the cancel: ${JSON.stringify(r.midway.seen)}`);
  assert.ok(
    r.midway.seen[0][0] < r.midway.seen[0][1] && r.midway.bar[0] < r.midway.bar[1],
    'stopped part-way',
  );
  await assertCleanPage(page, watch);
  await page.close();
});

for (const scheme of ['light', 'dark']) {
  test(`axe-core: no violation on a page of the interpretability widgets (${scheme})`, async () => {
    const { page, watch } = await openAll(`axe-${scheme}`);
    await page.emulateMedia({ colorScheme: scheme });
    await page.evaluate(() => {
      for (const el of document.querySelectorAll('*')) if (el.localName.includes('-')) el.refresh?.();
    });
    await page.evaluate(AXE);
    const violations = await page.evaluate(async () =>
      (await window.axe.run(document)).violations.map(
        (v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
      ),
    );
    assert.deepEqual(violations, []);
    await assertCleanPage(page, watch);
    await page.close();
  });
}

test('every widget fits a 360 px phone (no sideways scrolling of the page)', async () => {
  const phone = await launch({ viewport: { width: 360, height: 800 } });
  try {
    const { page, watch } = await openWidgetPage(phone, 'interp', 'phone', PAGE, ALL);
    await page.waitForFunction(() => document.querySelector('patching-view')?.shown, null, {
      timeout: 20_000,
    });
    const r = await page.evaluate(() => ({
      doc: document.documentElement.scrollWidth,
      widgets: [
        ...document.querySelectorAll('head-scores, logit-attribution, patching-view, attention-model-view'),
      ].map((el) => {
        const box = el.getBoundingClientRect();
        const inner = [...el.shadowRoot.querySelectorAll('canvas, input, select, table, .controls, .run')]
          .filter((x) => !x.hidden && !x.closest('.table-wrap'))
          .map((x) => x.getBoundingClientRect().right);
        return { tag: el.localName, right: box.right, innerRight: Math.max(0, ...inner) };
      }),
    }));
    assert.ok(r.doc <= 360, `the page is ${r.doc} px wide`);
    for (const w of r.widgets) {
      assert.ok(w.right <= 360, `${w.tag} ends at ${w.right}`);
      assert.ok(w.innerRight <= w.right + 0.5, `${w.tag}'s contents end at ${w.innerRight} (box ${w.right})`);
    }
    await page.screenshot({ path: join(SHOTS, 'interp-widgets-phone.png'), fullPage: true });
    await assertCleanPage(page, watch);
    await page.close();
  } finally {
    await phone.close();
  }
});
