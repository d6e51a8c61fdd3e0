// The demo on trained weights: it opens on a preset from a link with no console error
// and no request outside its origin; the heatmap it shows (exported as JSON, as a reader would)
// has the pattern the preset's description claims; predictions are shown and marked; a
// multi-layer model gets a layer selector that moves every view; a model file exported from the
// library opens in the demo and gives the same logits; back to seeded weights restores the layer; text
// a preset cannot read switches to the character model and back. One load of the demo on the reverse
// preset serves every test (b.shared): the tests on the preset as linked come first (the mask test
// unmasks what it masked), then those that switch the model.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { demoReady, demoSettled, launch } from './helpers.mjs';

let b;
before(async () => {
  b = await launch();
});
after(async () => {
  await b?.close();
});

const scoreOf = (page) =>
  page
    .waitForFunction(() => window.attentionDemo.predictionScore, null, { timeout: 20_000 })
    .then(() => page.evaluate(() => window.attentionDemo.predictionScore));

test('a link opens the demo on the reverse preset: its mirror head, as claimed, and every answer right', async () => {
  const { page, watch } = await b.shared('/?model=reverse', demoReady);
  const score = await scoreOf(page);
  assert.equal(await page.inputValue('#text'), '3 1 4 1 5 9 | 9 5 1 4 1', "the preset's example input");
  assert.deepEqual(
    score,
    { right: 5, scored: 5 },
    'every answer position predicted right (the last has no next token)',
  );
  // The exported heatmap JSON: each answer row's largest weight is on the mirrored input (2L − 1 − t).
  const json = JSON.parse(await page.$eval('attention-heatmap', (el) => el.getJSON()));
  const w = json.heads?.[0]?.weights ?? json.weights;
  for (let t = 6; t < 12; t++) assert.equal(w[t].indexOf(Math.max(...w[t])), 11 - t, `row ${t}`);
  const text = await page.$eval('#preset-about', (el) => el.textContent);
  assert.match(text, /Reverse a sequence[\s\S]*mirror head/);
  assert.ok((await page.$eval('#predictions-table', (t) => t.querySelectorAll('td.ok').length)) === 5);
  assert.deepEqual(watch.errors, []);
  assert.deepEqual(watch.offOrigin, []);
});

test('the mask editor works on a trained layer: a click masks a key in every layer, a causal cell stays masked', async () => {
  const { page, watch } = await b.shared('/?model=reverse', demoReady);
  const before = await scoreOf(page);
  assert.ok(await page.isVisible('mask-editor'), 'the mask editor is shown in trained mode');
  // Row 6 (the first answer) attends its mirrored key 5 (the last input): mask that cell.
  await page.$eval('mask-editor', (el) => el.toggle(6, 5));
  await page.waitForFunction(() => new URLSearchParams(location.search).get('tg') === '6.5');
  await page.waitForFunction(() => document.querySelector('mask-editor').allowed?.data[6 * 12 + 5] === 0);
  const shown = await page.evaluate(() => {
    const ed = document.querySelector('mask-editor'),
      hm = document.querySelector('attention-heatmap');
    return {
      editor: ed.weights.data[6 * 12 + 5],
      heatmap: Array.from(hm.shown.matrices, (m) => m.data[6 * 12 + 5]),
      rowSum: Array.from(ed.weights.data.slice(6 * 12, 7 * 12)).reduce((a, x) => a + x, 0),
      summary: ed.shadowRoot.textContent,
    };
  });
  assert.equal(shown.editor, 0, 'the masked cell has weight 0 in the editor');
  assert.ok(
    shown.heatmap.every((w) => w === 0),
    'and in every head of the heatmap',
  );
  assert.ok(Math.abs(shown.rowSum - 1) < 1e-5, 'the row still sums to 1');
  assert.match(shown.summary, /clicks mask cells in every layer/);
  const after = await page.evaluate(() => window.attentionDemo.predictionScore);
  assert.ok(
    after.right < before.right,
    `masking the mirrored key breaks that answer (${before.right} → ${after.right} right)`,
  );
  // A key after the query is the model's own causal mask: a click explains that and changes nothing.
  await page.$eval('mask-editor', (el) => el.toggle(2, 9));
  await demoSettled(page);
  assert.equal(new URL(page.url()).searchParams.get('tg'), '6.5');
  assert.match(
    await page.$eval('mask-editor', (el) => el.shadowRoot.querySelector('.readout').textContent),
    /cannot unmask/,
  );
  // Clicking the cell again unmasks it: the predictions come back.
  await page.$eval('mask-editor', (el) => el.toggle(6, 5));
  await page.waitForFunction(() => !new URLSearchParams(location.search).get('tg'));
  await page.waitForFunction((n) => window.attentionDemo.predictionScore.right === n, before.right);
  assert.deepEqual(watch.errors, []);
});

test("in Chromium: ablating the reverse preset's mirror head drops its accuracy below 50%", async () => {
  const { page, watch } = await b.shared('/?model=reverse', demoReady);
  const r = await page.evaluate(async () => {
    const lib = await import('/src/js/index.js');
    const bytes = new Uint8Array(await (await fetch('/web/presets/reverse.safetensors')).arrayBuffer());
    const preset = JSON.parse(lib.readSafetensorsMetadata(bytes).preset);
    const { layer, head } = preset.heads.find((h) => h.claim.kind === 'mirror');
    const model = lib.TinyTransformer.fromSafetensors(bytes);
    const ablated = model.ablateHeads([[layer, head]]);
    const task = lib.createTask('reverse', {
      length: preset.task.length,
      numSymbols: preset.task.numSymbols,
      seed: 77,
    });
    const out = {
      full: lib.evaluate(model, task, { seed: 77 }).sequenceAccuracy,
      without: lib.evaluate(ablated, task, { seed: 77 }).sequenceAccuracy,
    };
    for (const h of [model, ablated, task]) h.dispose();
    return out;
  });
  assert.ok(r.full >= 0.9 && r.without < 0.5, JSON.stringify(r));
  assert.deepEqual(watch.errors, []);
});

test('sort has two layers: the layer selector moves the steps and the heatmap; seeded mode comes back', async () => {
  const { page, watch } = await b.shared('/?model=reverse', demoReady);
  await page.selectOption('#model', 'sort');
  await page.waitForFunction(() => document.querySelector('#text').value.startsWith('3 1 4 1 5 |'), null, {
    timeout: 20_000,
  });
  await demoSettled(page);
  assert.ok(await page.isVisible('#layer-row'));
  const weights = () => page.$eval('attention-heatmap', (el) => Array.from(el.shown.matrices[0].data));
  const layer0 = await weights();
  await page.selectOption('#layer', '1');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('layer') === '1');
  await demoSettled(page);
  const layer1 = await weights();
  assert.notDeepEqual(layer0, layer1, 'layer 1 shows other weights');
  const stepsWeights = await page.$eval('attention-steps', (el) => {
    el.goTo('weights');
    return Array.from(el.current.data);
  });
  assert.deepEqual(stepsWeights, layer1, 'the steps view shows the same layer');
  // An input outside the vocabulary is never a dead end: the character model reads it, a note says
  // why, and its button goes back to the preset on the input it last read.
  await page.fill('#text', '3 1 x');
  await page.waitForFunction(
    () =>
      window.attentionDemo.state.model === 'text' &&
      document.querySelector('attention-heatmap').data?.queryTokens.join('') === '3 1 x',
  );
  assert.equal(
    await page.textContent('#switch-text'),
    '“x” is not in the sort model’s vocabulary, so the character model reads your text.',
  );
  await page.click('#switch-back');
  await page.waitForFunction(
    () =>
      window.attentionDemo.state.model === 'sort' &&
      window.attentionDemo.state.layer === 1 &&
      window.attentionDemo.predictionScore?.scored > 0,
  );
  assert.equal(await page.inputValue('#text'), '3 1 4 1 5 | 1 1 3 4');
  assert.deepEqual(await weights(), layer1, 'the preset and its layer are back');
  await page.selectOption('#model', 'seeded');
  await page.waitForFunction(
    () =>
      !document.querySelector('mask-editor').hidden &&
      new URLSearchParams(location.search).get('model') === 'seeded' &&
      !document.querySelector('#seeded-controls').hidden,
  ); // seeded mode drawn
  assert.ok(await page.isHidden('#predictions'));
  assert.deepEqual(watch.errors, []);
});

test('a model exported by the library opens in the demo with identical logits', async () => {
  const { page, watch } = await b.shared('/?model=reverse', demoReady);
  const { bytes, ids, logits } = await page.evaluate(async () => {
    const { TinyTransformer } = await import('/src/js/index.js');
    const m = new TinyTransformer({
      vocabSize: 9,
      maxLength: 8,
      dModel: 16,
      numHeads: 2,
      numLayers: 2,
      seed: 7,
    });
    const ids = [0, 1, 2, 3, 4, 5];
    const out = {
      bytes: Array.from(m.toSafetensors()),
      ids,
      logits: Array.from(m.forward([ids], { attention: false }).logits.data),
    };
    m.dispose();
    return out;
  });
  await page.setInputFiles('#model-file', {
    name: 'exported.safetensors',
    mimeType: 'application/octet-stream',
    buffer: Buffer.from(bytes),
  });
  await page.waitForFunction(() => new URLSearchParams(location.search).get('model') === 'file', null, {
    timeout: 20_000,
  });
  await scoreOf(page);
  const theirs = await page.evaluate(
    async (x) => Array.from(await window.attentionDemo.trainedLogits(x)),
    ids,
  );
  assert.deepEqual(theirs, logits, 'bit-identical logits');
  assert.match(await page.textContent('#model-note'), /Opened “exported.safetensors”: 2 layer/);
  // An opened file is not left behind: an input outside its vocabulary is explained, not crashed.
  await page.fill('#text', '0 1 x');
  await page.waitForFunction(() =>
    /“x” is not in this model’s vocabulary/.test(document.querySelector('#token-count').textContent),
  );
  assert.equal(new URLSearchParams(new URL(page.url()).search).get('model'), 'file');
  assert.ok(await page.isHidden('#switch-note'));
  assert.deepEqual(watch.errors, []);
});
