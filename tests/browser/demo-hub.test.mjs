// The demo's "Open from Hugging Face…" in Chromium against the local Hub (tests/js/hub-server.js: the
// API, a 302 to its storage origin, ranges), told through the link's `hub-url` (the documented mirror
// setting) and allowed by the server's CSP (connect-src: its two origins added, as for a mirror). One
// page: nothing reaches the Hub before the reader asks; Check size states the listing's size; a
// download stalled mid-file is stopped (Stop) and the next one resumes and opens the model, whose
// logits equal the same bytes loaded in the page; a safetensors repository opens; a 403 is named; the
// cached list gives the sizes, Open works with the Hub stopped and Delete empties it; the token
// reaches the Hub's origin only and never the link or storage; axe clean (both themes); a 360-px phone.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { axeViolations, demoReady, launch } from './helpers.mjs';
import { startHub } from '../js/hub-server.js';

const q8 = readFileSync(new URL('../golden/gguf/llama-tiny.q8_0.gguf', import.meta.url));
const GPT2 = new URL('../golden/pretrained/gpt2-tiny/', import.meta.url);
const gpt2 = Object.fromEntries(
  ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'].map((n) => [
    n,
    readFileSync(new URL(n, GPT2)),
  ]),
);
const FILE = 'llama-tiny.Q8_0.gguf';
const REPO = 'test/llama-gguf';
const TOKEN = 'hf_demotoken42';
const kLogitAbs = 1e-5; // the same file and kernels in the worker and in the page: equal up to rounding

let b, hub;
before(async () => {
  hub = await startHub({
    repos: {
      [REPO]: { files: { [FILE]: q8, 'README.md': 'tiny' } },
      'test/gpt2': { files: gpt2 },
      'test/gated': { files: { [FILE]: q8 }, token: 'hf_someone_else' },
    },
  });
  b = await launch({ connectSrc: [hub.url, hub.storageUrl] });
});
after(async () => {
  await b?.close();
  await hub?.stop();
});

const path = () => `/?hub-url=${encodeURIComponent(hub.url)}`;
const shared = () => b.shared(path(), demoReady);
const text = (page, id) => page.locator(`#${id}`).textContent();
const waitText = (page, id, pattern) =>
  page.waitForFunction(
    ([id, source]) => new RegExp(source).test(document.getElementById(id).textContent),
    [id, pattern.source],
  );

async function checkSize(page, repo = REPO, file = 'q8_0') {
  await page.fill('#hub-repo', repo);
  await page.fill('#hub-file', file);
  await page.click('#hub-check');
  await page.locator('#hub-confirm').waitFor({ state: 'visible' });
}

it('nothing reaches the Hub until asked; Check size states the size from the listing only', async () => {
  const { page } = await shared();
  await page.click('#hub-panel summary');
  await waitText(page, 'hub-cached', /Nothing yet/);
  assert.match(await text(page, 'hub-where'), new RegExp(`From ${hub.url} \\(a mirror`));
  assert.match(await text(page, 'hub-storage'), /This page stores .*; this browser allows it about/);
  assert.deepEqual(hub.log, [], 'no request before the reader asks');
  assert.deepEqual(await axeViolations(page, '#hub-panel'), []);

  await page.fill('#hub-token', TOKEN);
  await checkSize(page);
  const confirm = await text(page, 'hub-confirm-text');
  assert.match(
    confirm,
    new RegExp(`^${REPO} at main \\(${hub.repo(REPO).commit.slice(0, 7)}\\), gguf: ${FILE}`),
  );
  assert.ok(confirm.includes(`(${q8.length.toLocaleString('en-US')} bytes)`), confirm);
  assert.ok(
    hub.log.every((r) => r.origin === 'hub' && r.path.startsWith('/api/models/')),
    'only the listing was asked',
  );
  assert.deepEqual(await axeViolations(page, '#hub-panel'), []);

  // hub-url keeps an http(s) URL without credentials, query or fragment; anything else is the Hub itself
  const kept = await page.evaluate((url) => {
    const d = window.attentionDemo;
    const out = [
      'https://user:pw@mirror.example',
      'javascript:alert(1)',
      'https://mirror.example/?x=1',
      'https://mirror.example/hf/',
    ].map((hubUrl) => (d.setState({ hubUrl }, 'replace'), d.state.hubUrl));
    d.setState({ hubUrl: url }, 'replace');
    return out;
  }, hub.url);
  assert.deepEqual(kept, ['', '', '', 'https://mirror.example/hf']);
});

it('Stop ends a stalled download; the next one resumes, opens the model and lists it cached', async () => {
  const { page } = await shared();
  const held = hub.hold(FILE, q8.length >> 1);
  await page.click('#hub-download');
  await held;
  await waitText(page, 'hub-progress-text', /^Downloading: \d+ % \(/);
  await page.click('#hub-stop');
  await waitText(page, 'hub-note', /^Stopped\. What was downloaded of test\/llama-gguf is kept/);
  assert.ok(await page.locator('#hub-progress-row').isHidden());

  const from = hub.log.length;
  await checkSize(page);
  await page.click('#hub-download');
  await waitText(page, 'hub-note', /^Opened test\/llama-gguf from the Hub \(LlamaForCausalLM\)/);
  const resumed = hub.log.slice(from).filter((r) => r.origin === 'storage' && r.range);
  assert.ok(
    resumed.length > 0 && resumed.every((r) => !r.range.startsWith('bytes=0-')),
    'resumed, not again',
  );
  assert.equal(
    await page.locator('#model option[value="folder"]').textContent(),
    `Hub: ${REPO} (LlamaForCausalLM)`,
  );

  const ids = [5, 17, 42];
  const [shown, reference] = await page.evaluate(
    async ([ids, bytes]) => {
      await new Promise((ok) => {
        const wait = () => (window.attentionDemo.source?.name === 'folder' ? ok() : setTimeout(wait, 20));
        wait();
      });
      const shown = Array.from(await window.attentionDemo.trainedLogits(ids));
      const { init, loadPretrained } = await import('/src/js/index.js');
      await init();
      const model = await loadPretrained({ gguf: new Uint8Array(bytes) });
      const reference = Array.from(model.forward([ids]).logits.data);
      model.dispose();
      return [shown, reference];
    },
    [ids, Array.from(q8)],
  );
  assert.equal(shown.length, reference.length);
  shown.forEach((v, i) =>
    assert.ok(Math.abs(v - reference[i]) <= kLogitAbs, `logit ${i}: ${v} vs ${reference[i]}`),
  );

  await waitText(page, 'hub-cached', new RegExp(`${REPO} \\(main\\): ${FILE}, `));
  const kb = `${Math.round(q8.length / 1e3)} kB`;
  assert.ok((await text(page, 'hub-cached')).includes(kb), kb);
});

it('a safetensors repository; a refusal named; offline, a cached model opens; Delete; the token kept nowhere', async () => {
  const { page, watch } = await shared();
  await checkSize(page, 'test/gpt2', '');
  const sizes = Object.entries(gpt2).map(([n, b]) => `${n} (${Math.round(b.length / 1e3)} kB)`);
  assert.ok((await text(page, 'hub-confirm-text')).includes(`safetensors: ${sizes.join(', ')}.`));
  await page.click('#hub-download');
  await waitText(page, 'hub-note', /^Opened test\/gpt2 from the Hub \(GPT2LMHeadModel\): 2 layers/);

  await page.fill('#hub-repo', 'test/gated');
  await page.click('#hub-check');
  await waitText(page, 'hub-note', /^Could not list test\/gated: .*no access with this token \(403\)/);
  assert.ok(await page.locator('#hub-confirm').isHidden());

  const auth = hub.log.filter((r) => r.auth);
  assert.ok(auth.length > 0 && auth.every((r) => r.origin === 'hub' && r.auth === `Bearer ${TOKEN}`));
  assert.ok(
    hub.log.some((r) => r.origin === 'storage'),
    'the files came from the storage origin',
  );
  const kept = await page.evaluate(() => [
    location.href,
    JSON.stringify(localStorage),
    JSON.stringify(sessionStorage),
  ]);
  assert.ok(
    kept.every((s) => !s.includes(TOKEN)),
    'no token in the link or storage',
  );
  assert.ok(kept[0].includes('hub-url='), 'the mirror stays in the link');

  await hub.stop();
  await page.getByRole('button', { name: `Open ${REPO} (main) from this browser` }).click();
  await waitText(page, 'hub-note', /^Opened test\/llama-gguf from this browser \(LlamaForCausalLM\)/);
  for (const repo of [REPO, 'test/gpt2'])
    await page.getByRole('button', { name: `Delete ${repo} (main) from this browser` }).click();
  await waitText(page, 'hub-cached', /^Nothing yet\.$/);
  assert.deepEqual(await axeViolations(page, '#hub-panel'), []);
  await page.emulateMedia({ colorScheme: 'dark' });
  assert.deepEqual(await axeViolations(page, '#hub-panel'), [], 'dark theme');

  await page.setViewportSize({ width: 360, height: 800 });
  // Every element of the panel inside the phone's width (the rest of the page: phone.test.mjs).
  const outside = await page.evaluate(() =>
    [...document.querySelectorAll('#hub-panel, #hub-panel *')]
      .filter((e) => e.getClientRects().length)
      .map((e) => [e.id || e.localName, e.getBoundingClientRect()])
      .filter(([, r]) => r.left < 0 || r.right > 360)
      .map(([n, r]) => `${n} ${Math.round(r.left)}…${Math.round(r.right)}`),
  );
  assert.deepEqual(outside, [], 'the panel fits 360 px');

  const hubOrigins = [hub.url, hub.storageUrl];
  assert.deepEqual(
    watch.offOrigin.filter((u) => !hubOrigins.some((o) => u.startsWith(`${o}/`))),
    [],
    'nothing but the local Hub off the origin',
  );
  assert.deepEqual(watch.errors, []);
  await page.close();
});
