// The demo's Steer panel (web/demo-steer.js), in Chromium under the strict CSP, in one page load: a
// link's recipe (hook, prompt sets, coefficient, prompt to continue, tokens) fills the panel; the
// panel's changes go into the link and the back button brings the previous recipe back. On the
// character preset (a TinyTransformer in the page) and on the gpt2-tiny folder (a PretrainedModel in
// the model worker): Run shows the plain and the steered continuations; with coefficient 0 they are
// the same text; with 10 × the vector of "Love", "Joy" minus "Hate", "Grief" they differ, and the
// steered one is the library's own (steeringVector and a steered greedy continuation, run in the
// page on the same files). A recipe without a negative prompt says so; Stop right after Run ends it
// with nothing continued. The panel fits a 360-px phone with both continuations side by side, and
// axe-core finds no violation.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT, SHOTS, axeViolations, demoReady, join, launch } from './helpers.mjs';

const FOLDER = join(ROOT, 'tests', 'golden', 'pretrained', 'gpt2-tiny');

let b;
before(async () => (b = await launch()));
after(async () => b?.close());

const param = (page, name) => new URL(page.url()).searchParams.get(name);

/** The panel's controls as the reader sees them. */
const panel = (page) =>
  page.evaluate(() => {
    const v = (id) => document.getElementById(id).value;
    return {
      layer: v('steer-layer'),
      hook: document.getElementById('steer-hook').textContent,
      positive: v('steer-positive'),
      negative: v('steer-negative'),
      coefficient: v('steer-coefficient'),
      shown: document.getElementById('steer-coefficient-out').textContent,
      prompt: v('steer-prompt'),
      tokens: v('steer-tokens'),
    };
  });

/** Run, then the two continuations' text once the panel says the run ended (`state`: done or stopped). */
async function run(page, state = 'done') {
  await page.evaluate(() => delete document.getElementById('steer').dataset.state);
  await page.click('#steer-run');
  await page.waitForFunction(
    () => ['done', 'stopped', 'error'].includes(document.getElementById('steer').dataset.state),
    null,
    { timeout: 30_000 },
  );
  const out = await page.evaluate(() => ({
    state: document.getElementById('steer').dataset.state,
    note: document.getElementById('steer-note').textContent,
    plain: document.getElementById('steer-plain').dataset.text,
    steered: document.getElementById('steer-steered').dataset.text,
    counts: ['plain', 'steered'].map((w) => Number(document.getElementById(`steer-${w}`).dataset.count)),
    shown: document.getElementById('steer-steered').lastChild.textContent,
  }));
  assert.equal(out.state, state, out.note);
  return out;
}

/** The character preset's steered continuation by the library in the page: steeringVector and one run() per token. */
const presetReference = (page, recipe) =>
  page.evaluate(async ({ hook, positive, negative, coefficient, prompt, n }) => {
    const attn = await import('/src/js/index.js');
    await attn.init();
    const bytes = new Uint8Array(await (await fetch('/web/presets/text.safetensors')).arrayBuffer());
    const { tokens, unknownToken } = JSON.parse(attn.readSafetensorsMetadata(bytes).preset);
    const m = attn.TinyTransformer.fromSafetensors(bytes);
    const ids = (text) => [...text].map((c) => tokens.indexOf(tokens.includes(c) ? c : unknownToken));
    const v = m.steeringVector({ positive: positive.map(ids), negative: negative.map(ids), hook });
    const edits = [{ hook, op: 'add', value: v.data.map((x) => coefficient * x) }];
    const seq = ids(prompt);
    let text = '';
    for (let k = 0; k < n; k++) {
      const { logits } = m.run(Int32Array.from(seq), { edits });
      const V = logits.shape[2];
      const row = Array.from(logits.data.subarray(logits.data.length - V));
      const next = row.indexOf(Math.max(...row));
      seq.push(next);
      text += tokens[next];
    }
    m.dispose();
    return text;
  }, recipe);

/** gpt2-tiny's steered continuation by the library in the page: loadPretrained on the fetched files, generate with the edit. */
const folderReference = (page, recipe) =>
  page.evaluate(async ({ hook, positive, negative, coefficient, prompt, n }) => {
    const attn = await import('/src/js/index.js');
    await attn.init();
    const get = async (f) => await fetch(`/tests/golden/pretrained/gpt2-tiny/${f}`);
    const m = await attn.loadPretrained({
      config: await (await get('config.json')).json(),
      weights: new Uint8Array(await (await get('model.safetensors')).arrayBuffer()),
      tokenizer: await (await get('tokenizer.json')).json(),
      tokenizerConfig: await (await get('tokenizer_config.json')).json(),
    });
    const v = m.steeringVector({ positive, negative, hook });
    const edits = [{ hook, op: 'add', value: v.data.map((x) => coefficient * x) }];
    const out = m.generate([Array.from(m.encode(prompt))], { maxNewTokens: n, edits });
    const text = m.decode(Array.from(out.data).filter((id) => id >= 0));
    m.dispose();
    return text;
  }, recipe);

it('the Steer panel: the recipe from and into the link, plain and steered continuations on a preset and a folder, Stop; axe clean', async () => {
  const { page, watch } = await b.newPage();
  const link = '/?hook=blocks.0.hook_resid_pre&pos=Love%0AJoy&neg=Hate&coef=-2.5&cont=The+cat&ntok=6';
  await page.goto(b.url(link));
  await demoReady(page);
  await page.waitForSelector('#steer:not([hidden])');

  // The link's recipe fills the panel (the character preset has 2 layers).
  assert.deepEqual(await panel(page), {
    layer: '0',
    hook: 'blocks.0.hook_resid_pre',
    positive: 'Love\nJoy',
    negative: 'Hate',
    coefficient: '-2.5',
    shown: '-2.5',
    prompt: 'The cat',
    tokens: '6',
  });
  assert.equal(await page.$$eval('#steer-layer option', (o) => o.length), 2);

  // The panel's changes go into the link.
  await page.selectOption('#steer-layer', '1');
  await page.fill('#steer-negative', 'Hate\nGrief');
  await page.fill('#steer-coefficient', '0');
  await page.fill('#steer-tokens', '8');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('ntok') === '8');
  assert.deepEqual(
    ['hook', 'pos', 'neg', 'coef', 'cont'].map((k) => param(page, k)),
    ['blocks.1.hook_resid_pre', 'Love\nJoy', 'Hate\nGrief', '0', 'The cat'],
  );

  // Coefficient 0: the steered continuation is the plain one.
  const zero = await run(page);
  assert.deepEqual(zero.counts, [8, 8]);
  assert.equal(zero.steered, zero.plain, 'an added zero vector changes nothing');
  assert.equal(zero.shown, zero.plain, 'the continuation is shown as text');

  // Coefficient 10: they differ, and the steered one is the library's.
  await page.fill('#steer-coefficient', '10');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('coef') === '10');
  const ten = await run(page);
  assert.equal(ten.plain, zero.plain);
  assert.notEqual(ten.steered, ten.plain, '10 × the vector at layer 1 changes the continuation');
  const recipe = {
    hook: 'blocks.1.hook_resid_pre',
    positive: ['Love', 'Joy'],
    negative: ['Hate', 'Grief'],
    prompt: 'The cat',
  };
  assert.equal(ten.steered, await presetReference(page, { ...recipe, coefficient: 10, n: 8 }));
  assert.match(ten.note, /Steering vector at blocks\.1\.hook_resid_pre: ‖v‖ = [\d.]+ over 40 dimensions/);

  // Another layer goes into the link; the back button brings the previous recipe back into the panel.
  await page.selectOption('#steer-layer', '0');
  await page.waitForFunction(
    () => new URL(location.href).searchParams.get('hook') === 'blocks.0.hook_resid_pre',
  );
  await page.goBack();
  await page.waitForFunction(() => document.getElementById('steer-layer').value === '1');
  assert.deepEqual(await panel(page), {
    layer: '1',
    hook: 'blocks.1.hook_resid_pre',
    positive: 'Love\nJoy',
    negative: 'Hate\nGrief',
    coefficient: '10',
    shown: '10',
    prompt: 'The cat',
    tokens: '8',
  });

  // A recipe the model cannot run says why (no negative prompt), and nothing is continued.
  await page.fill('#steer-negative', ' ');
  const refused = await run(page, 'error');
  assert.equal(refused.note, 'Type at least one negative prompt (one per line).');
  assert.deepEqual(refused.counts, [0, 0]);
  await page.fill('#steer-negative', 'Hate\nGrief');

  // Stop right after Run: nothing is continued and the panel says it stopped.
  await page.evaluate(() => {
    document.getElementById('steer-run').click();
    document.getElementById('steer-stop').click();
  });
  await page.waitForFunction(() => document.getElementById('steer').dataset.state === 'stopped');
  assert.match(await page.textContent('#steer-note'), /Stopped by you/);

  // The gpt2-tiny folder (its model in the worker): the same panel, its own two layers.
  await page.setInputFiles('#model-folder', FOLDER);
  await page.waitForFunction(
    () =>
      window.attentionDemo.source?.name === 'folder' &&
      document.querySelectorAll('#steer-layer option').length === 2,
    null,
    { timeout: 20_000 },
  );
  await page.selectOption('#steer-layer', '1');
  await page.fill('#steer-prompt', 'I hate you because');
  await page.fill('#steer-coefficient', '0');
  const plain = await run(page);
  assert.ok(plain.plain.length > 0);
  assert.equal(plain.steered, plain.plain, 'an added zero vector changes nothing (in the worker)');
  await page.fill('#steer-coefficient', '10');
  const steered = await run(page);
  assert.notEqual(steered.steered, steered.plain);
  const want = await folderReference(page, {
    ...recipe,
    prompt: 'I hate you because',
    coefficient: 10,
    n: 8,
  });
  assert.equal(steered.steered, want, "the worker's steered continuation is the library's");

  // Both continuations side by side on a 360-px phone; axe-core clean.
  await page.setViewportSize({ width: 360, height: 800 });
  // (The panel's own boxes: the folder's next-token table is wider than a phone, outside this panel.)
  const fit = await page.evaluate(() => {
    const inside = [...document.querySelectorAll('#steer, #steer *')].filter(
      (el) => el.getBoundingClientRect().right > 360.5,
    );
    const [a, c] = ['steer-plain', 'steer-steered'].map((id) =>
      document.getElementById(id).parentElement.getBoundingClientRect(),
    );
    return {
      outside: inside.map((el) => el.id || el.tagName),
      sideBySide: a.top === c.top && a.right <= c.left,
    };
  });
  assert.deepEqual(fit, { outside: [], sideBySide: true });
  await page.locator('#steer').screenshot({ path: join(SHOTS, 'demo-steer.png') });
  const found = await axeViolations(page);
  assert.deepEqual(found, [], `axe-core violations:\n${found.join('\n')}`);
  assert.deepEqual(watch.errors, []);
  assert.deepEqual(watch.offOrigin, []);
  await b.release(page);
});
