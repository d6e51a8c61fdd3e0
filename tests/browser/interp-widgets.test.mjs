// The interpretability widgets in Chromium under the strict CSP of the test pages: <head-scores>,
// <logit-attribution>, <patching-view> and <attention-model-view mode="rollout">, on the induction preset.
// Each renders with no console error or CSP violation; what each shows equals the library called from the
// test page on the same model and ids (headScores, logitAttribution, patch — in the worker for `src`, in
// the page for a `model` property —, attentionRollout), a TinyTransformer or a PretrainedModel.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SHOTS, join, assertCleanPage, openWidgetPage, routeHtml } from './helpers.mjs';
import {
  useInterpWidgetsPage,
  kSameTol,
  SRC,
  CLEAN,
  CORRUPTED,
  b,
  openAll,
  reference,
  maxDiff,
} from './interp-widgets-page.mjs';

useInterpWidgetsPage();

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
  await b.release(page);
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
  await b.release(page);
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
  await b.release(page);
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
  await b.release(page);
});

test('position, token and against: integer attributes; null is "none" (no comparison), or the default target for <patching-view>', async () => {
  // Elements made here, never connected: the accessors are attributes only (no model, no run).
  const { page, watch } = await b.newPage();
  await routeHtml(
    b.context,
    b.url('/__interp/accessors.html'),
    '<!doctype html><title>accessors</title><script type="module" src="/web/widgets.js"></script>',
  );
  await page.goto(b.url('/__interp/accessors.html'));
  await page.waitForFunction(
    () => customElements.get('patching-view') && customElements.get('token-saliency'),
  );
  const r = await page.evaluate(() =>
    ['logit-attribution', 'token-saliency', 'patching-view'].map((tag) => {
      const el = document.createElement(tag);
      el.position = 3;
      el.token = 7;
      el.against = null;
      const set = [el.getAttribute('position'), el.getAttribute('token'), el.getAttribute('against')];
      const read = [el.position, el.token, el.against];
      el.setAttribute('token', '2.5');
      const notInteger = el.token;
      el.position = undefined;
      return { tag, set, read, notInteger, removed: el.hasAttribute('position') };
    }),
  );
  assert.deepEqual(r, [
    {
      tag: 'logit-attribution',
      set: ['3', '7', 'none'],
      read: [3, 7, null],
      notInteger: undefined,
      removed: false,
    },
    {
      tag: 'token-saliency',
      set: ['3', '7', 'none'],
      read: [3, 7, null],
      notInteger: undefined,
      removed: false,
    },
    {
      tag: 'patching-view',
      set: ['3', '7', null],
      read: [3, 7, undefined],
      notInteger: undefined,
      removed: false,
    },
  ]);
  assert.deepEqual(watch.errors, []);
  await b.release(page);
});
