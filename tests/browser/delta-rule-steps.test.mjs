// <delta-rule-steps> in the demo (web/index.html): the tests/golden/pretrained/qwen3_5-tiny folder
// opened through the folder input; a DeltaNet layer shows the step view, its float64 walk equal to the
// worker's hook_o and to Σ_s A[t,s]·v_s over the layer's map; a softmax layer hides it. The widget in
// the tutorial: tests/browser/tutorial-sections.test.mjs; its math: tests/js/delta-rule-steps.test.mjs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT, demoReady, join, launch } from './helpers.mjs';

// The browser's float32 forward against the widget's float64 walk over float32 hooks.
const TOL = 1e-5;

let b;
before(async () => (b = await launch()));
after(async () => b?.close());

test('the demo: a DeltaNet layer of the opened folder shows the step view, checked against hook_o', async () => {
  const { page: demo, watch } = await b.shared('/', demoReady);
  await demo.setInputFiles('#model-folder', join(ROOT, 'tests', 'golden', 'pretrained', 'qwen3_5-tiny'));
  await demo.waitForFunction(() => document.querySelector('#model').value === 'folder', null, {
    timeout: 20_000,
  });
  await demo.fill('#text', 'Hello world, the sea');
  await demo.selectOption('#layer', '1');
  const r = await demo.waitForFunction(
    () => {
      const el = document.querySelector('#delta-steps');
      const s = el.shown;
      return !el.hidden && s?.layer === 1 && s.T === 5 && s.captured
        ? { o: Array.from(s.walk.o), captured: s.captured, mixed: Array.from(s.mixed) }
        : null;
    },
    null,
    { timeout: 20_000 },
  );
  const { o, captured, mixed } = await r.jsonValue();
  const scale = Math.max(...o.map(Math.abs));
  for (let j = 0; j < o.length; j++) {
    assert.ok(Math.abs(o[j] - captured[j]) <= TOL * (1 + scale), `o[${j}] ${o[j]} vs hook_o ${captured[j]}`);
    assert.ok(Math.abs(o[j] - mixed[j]) <= TOL * (1 + scale), `o[${j}] ${o[j]} vs Σ A v ${mixed[j]}`);
  }
  await demo.selectOption('#layer', '2'); // the full (softmax) layer
  await demo.waitForFunction(() => document.querySelector('#delta-steps').hidden, null, { timeout: 20_000 });
  assert.deepEqual(watch.errors, []);
});
