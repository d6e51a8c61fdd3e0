// The interpretability widgets in Chromium: exports (PNG, SVG, CSV, JSON) and printing; keyboard and
// pointer select heads (head-select) and open them in <attention-steps>; Cancel stops a run and the next
// run still gives the result; axe-core finds nothing (light and dark); every widget fits a 360 px phone.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SHOTS, assertCleanPage, axeViolations, join, launch, openWidgetPage } from './helpers.mjs';
import {
  useInterpWidgetsPage,
  kSameTol,
  SRC,
  CLEAN,
  CORRUPTED,
  ALL,
  PAGE,
  b,
  openAll,
  reference,
  maxDiff,
} from './interp-widgets-page.mjs';

useInterpWidgetsPage();

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
    await b.release(page);
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
  await b.release(page);
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
    el.shadowRoot.querySelector('canvas').scrollIntoView({ block: 'center' });
    return el.cellCenter(1, 0);
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
  await b.release(page);
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
    pv.shadowRoot.querySelector('canvas').dispatchEvent(
      new MouseEvent('click', {
        clientX: pv.cellCenter(1, 1).x,
        clientY: pv.cellCenter(1, 1).y,
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
  await b.release(page);
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
  await b.release(page);
});

for (const scheme of ['light', 'dark']) {
  test(`axe-core: no violation on a page of the interpretability widgets (${scheme})`, async () => {
    const { page, watch } = await openAll(`axe-${scheme}`);
    await page.emulateMedia({ colorScheme: scheme });
    await page.evaluate(() => {
      for (const el of document.querySelectorAll('*')) if (el.localName.includes('-')) el.refresh?.();
    });
    const found = await axeViolations(page);
    assert.deepEqual(found, [], `axe-core violations:\n${found.join('\n')}`);
    await assertCleanPage(page, watch);
    await b.release(page);
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
    await phone.release(page);
  } finally {
    await phone.close();
  }
});
