// <attention-trainer> and <attention-model-view> in Chromium, under the strict CSP: the trainer's
// worker trains reverse (length 6) to ≥ 95% sequence accuracy within its step budget; pause, step,
// resume and reset behave; ablating a head changes the accuracy; exported weights load in the page
// with logits identical to the worker's; the model view draws every layer × head and opens a head in
// <attention-steps>; each embed snippet works pasted alone into an empty page. (The longest
// main-thread task while training is a number of bench/trainer_browser.mjs, not a test.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, routeHtml } from './helpers.mjs';

// The default model (2 layers, dModel 32, 4 heads, lr 0.01, batch 32) reaches 95% on reverse
// length 6 in ~300 steps in Node; the budget leaves room for a slow machine.
const kStepBudget = 1500;
const kTarget = 0.95;

let b;
before(async () => {
  b = await launch();
});
after(async () => {
  await b?.close();
});

/** A page of just `body` and the widgets script, watched for CSP violations. */
async function pageWith(name, body) {
  const url = b.url(`/__test/${name}.html`);
  await routeHtml(
    b.context,
    url,
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${name}</title>
    <script type="module" src="/web/widgets.js"></script></head><body><main>${body}</main></body></html>`,
  );
  const { page, watch } = await b.newPage();
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener(
      'securitypolicyviolation',
      (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`),
      true,
    );
  });
  await page.goto(url);
  return { page, watch };
}

const snapshot = (page) =>
  page.$eval(
    'attention-trainer',
    (el) =>
      el.snapshot && {
        step: el.snapshot.step,
        running: el.snapshot.running,
        sequenceAccuracy: el.snapshot.sequenceAccuracy,
        tokenAccuracy: el.snapshot.tokenAccuracy,
        ablation: el.snapshot.ablation,
      },
  );

async function waitFor(page, predicate, arg, timeout = 60_000) {
  await page.waitForFunction(predicate, arg, { timeout, polling: 50 });
}

test('the trainer learns reverse in its worker: ≥ 95% within the step budget', async () => {
  const { page, watch } = await pageWith(
    'trainer',
    '<attention-trainer task="reverse" length="6"></attention-trainer>',
  );
  await waitFor(page, () => document.querySelector('attention-trainer').snapshot);
  assert.equal((await snapshot(page)).step, 0);
  // The worker's module runs threaded in this cross-origin-isolated page (docs/threads.md) and the
  // widget says on how many threads.
  const threads = await page.evaluate(() => Math.min(navigator.hardwareConcurrency, 8));
  assert.equal(await page.$eval('attention-trainer', (el) => el.snapshot.threads), threads);
  assert.match(
    await page.$eval('attention-trainer', (el) => el.shadowRoot.textContent),
    new RegExp(`· ${threads} threads?`),
  );
  await page.click('attention-trainer >> text=Train');
  await waitFor(
    page,
    ([target, budget]) => {
      const s = document.querySelector('attention-trainer').snapshot;
      return s.sequenceAccuracy >= target || s.step >= budget;
    },
    [kTarget, kStepBudget],
    120_000,
  );
  const reached = await snapshot(page);
  console.log(
    `reverse length 6: ${(100 * reached.sequenceAccuracy).toFixed(1)}% of sequences at step ${reached.step}`,
  );
  assert.ok(reached.sequenceAccuracy >= kTarget, `${reached.sequenceAccuracy} at step ${reached.step}`);

  // Pause: the step stops moving. Step: exactly one more. Train again: it moves. Reset: step 0.
  await page.click('attention-trainer >> text=Pause');
  await waitFor(page, () => !document.querySelector('attention-trainer').snapshot.running);
  const paused = (await snapshot(page)).step;
  // A negative check: a worker still training would send a later step within this time; a slow
  // machine can only make it pass for the wrong reason, never fail for one.
  await page.waitForTimeout(400);
  assert.equal((await snapshot(page)).step, paused, 'paused means no steps');
  await page.click('attention-trainer >> text=Step');
  await waitFor(page, (n) => document.querySelector('attention-trainer').snapshot.step === n, paused + 1);
  await page.click('attention-trainer >> text=Train');
  await waitFor(page, (n) => document.querySelector('attention-trainer').snapshot.step > n + 5, paused + 1);
  await page.click('attention-trainer >> text=Pause');
  await waitFor(page, () => !document.querySelector('attention-trainer').snapshot.running);

  // Ablation: with 8 heads one alone is rarely needed (the accuracy is reported for it), but
  // without attention (every head ablated) the model cannot reverse: the accuracy collapses.
  const full = (await snapshot(page)).sequenceAccuracy;
  const ablateAndWait = async (heads) => {
    await page.$eval('attention-trainer', (el, hs) => el.ablate(hs), heads);
    await waitFor(
      page,
      (hs) =>
        JSON.stringify(document.querySelector('attention-trainer').snapshot.ablation?.heads) ===
        JSON.stringify(hs),
      heads,
    );
    return (await snapshot(page)).ablation;
  };
  const one = await ablateAndWait([[1, 0]]);
  assert.ok(
    one.sequenceAccuracy >= 0 && one.sequenceAccuracy <= 1 && one.tokenAccuracy >= one.sequenceAccuracy,
  );
  const all = await ablateAndWait([0, 1].flatMap((l) => [0, 1, 2, 3].map((hd) => [l, hd])));
  assert.ok(all.sequenceAccuracy <= full - 0.5, `every head ablated: ${all.sequenceAccuracy}, full ${full}`);
  const status = await page.$eval('attention-trainer', (el) => el.shadowRoot.textContent);
  assert.match(status, /Without layer 0 head 0, .*accuracy/);

  // Export: the bytes load in the page, with logits identical to the worker's.
  const same = await page.evaluate(async () => {
    const el = document.querySelector('attention-trainer');
    const bytes = await el.exportWeights();
    const { TinyTransformer } = await import('/src/js/index.js');
    const m = TinyTransformer.fromSafetensors(bytes);
    const ids = [[1, 2, 3, 4, 5, 6, 10, 6, 5, 4, 3, 2]];
    const mine = m.forward(ids, { attention: false }).logits.data;
    const theirs = (await el.logits(ids)).data;
    m.dispose();
    return mine.length === theirs.length && mine.every((v, i) => Object.is(v, theirs[i]));
  });
  assert.ok(same, 'exported weights give bit-identical logits');

  await page.click('attention-trainer >> text=Reset');
  await waitFor(page, () => document.querySelector('attention-trainer').snapshot.step === 0);
  assert.deepEqual(await page.evaluate(() => window.__csp), []);
  assert.deepEqual(watch.errors, []);
  await page.close();
});

test('the model view draws every layer × head and opens a head in <attention-steps>', async () => {
  const { page, watch } = await pageWith(
    'model-view',
    '<attention-model-view ids="1 2 3 4 10 4 3 2" steps="st"></attention-model-view><attention-steps id="st"></attention-steps>',
  );
  await waitFor(page, () => document.querySelector('attention-steps')?.dataset.ready !== undefined);
  await page.evaluate(async () => {
    const { TinyTransformer } = await import('/src/js/index.js');
    window.__model = new TinyTransformer({
      vocabSize: 11,
      maxLength: 8,
      dModel: 16,
      numHeads: 2,
      numLayers: 3,
      seed: 5,
    });
    document.querySelector('attention-model-view').model = window.__model;
  });
  // The view draws once it has a model and ids (its first draw sets data-ready).
  await waitFor(page, () => document.querySelector('attention-model-view').dataset.ready !== undefined);
  const drawn = await page.evaluate(() => {
    const view = document.querySelector('attention-model-view');
    const tiles = view.shadowRoot.querySelectorAll('canvas').length;
    const grids = view.shadowRoot.querySelectorAll('[role="grid"]').length;
    view.open(2, 1);
    return { tiles, grids };
  });
  // The steps widget has drawn the trace the view opened (what it shows is then that trace).
  await waitFor(page, () => {
    const steps = document.querySelector('attention-steps');
    return Boolean(steps.trace) && steps.result === steps.trace;
  });
  const result = {
    ...drawn,
    ...(await page.evaluate(() => {
      const shown = document.querySelector('attention-steps').current; // the step shown: weights of head 1
      const want = window.__model.forward([[1, 2, 3, 4, 10, 4, 3, 2]]).attention[2].data.subarray(64, 128);
      return {
        name: shown.name,
        head: shown.head,
        same: Array.from(shown.data).every((v, i) => v === want[i]),
      };
    })),
  };
  assert.equal(result.tiles, 6, '3 layers × 2 heads');
  assert.equal(result.grids, 6, 'each a keyboard grid');
  assert.deepEqual([result.name, result.head, result.same], ['weights', 1, true]);
  assert.deepEqual(await page.evaluate(() => window.__csp), []);
  assert.deepEqual(watch.errors, []);
  await page.close();
});

test('the embed snippet of <attention-trainer> works pasted alone into an empty page', async () => {
  const { page, watch } = await pageWith('snippet', '<attention-trainer autostart></attention-trainer>');
  await waitFor(page, () => document.querySelector('attention-trainer').snapshot?.step > 20);
  await page.click('attention-trainer >> text=Pause');
  assert.deepEqual(await page.evaluate(() => window.__csp), []);
  assert.deepEqual(watch.errors, []);
  await page.close();
});
