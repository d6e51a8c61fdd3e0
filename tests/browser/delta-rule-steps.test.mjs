// <delta-rule-steps> and the tutorial's "Attention without softmax" section (web/tutorial.html §10)
// in a real browser: the widget loads the seeded qwen3_5-tiny fixture by its src and draws the state
// before and after each step; its read o_t equals Σ_s A[t,s]·v_s over the library's effective
// attention (the math itself: tests/js/delta-rule-steps.test.mjs); the steps are reachable by
// keyboard; the section's signed map and prose follow; axe clean; nothing wider than a 360-px phone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { axeViolations } from './helpers.mjs';
import { useTutorialPage, page, w, inspectWidgets } from './tutorial-page.mjs';

useTutorialPage();

// The browser's float32 forward against the widget's float64 walk over float32 hooks.
const TOL = 1e-5;

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
    assert.ok(Math.abs(o[j] - mixed[j]) <= TOL * (1 + scale), `o[${j}] ${o[j]} vs Σ A v ${mixed[j]}`);
  const numbers = await page
    .locator('#delta-steps')
    .evaluate((el) => el.shadowRoot.querySelector('.numbers').textContent);
  assert.match(numbers, /effective attention/);
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
