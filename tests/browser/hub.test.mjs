// loadPretrained({ hub }) in Chromium against the local Hub (tests/js/hub-server.js, with its storage
// origin and CORS): a GGUF file loaded, cached in OPFS and equal to the same bytes loaded from memory;
// the cache listed; a second load with the servers stopped served from the cache in the same context;
// the entry deleted; and a quota failure (Chromium's own quota override through CDP) a QUOTA error
// that leaves nothing cached. One page; the page's CSP allows exactly the test Hub's two origins.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { CSP, launch, routeHtml } from './helpers.mjs';
import { ISOLATION_HEADERS } from '../../scripts/serve.mjs';
import { startHub } from '../js/hub-server.js';

const q8 = readFileSync(new URL('../golden/gguf/llama-tiny.q8_0.gguf', import.meta.url));
const repos = { 'test/llama-gguf': { files: { 'llama-tiny.Q8_0.gguf': q8, 'README.md': 'tiny' } } };

let b, hub, spare;
before(async () => {
  [hub, spare] = await Promise.all([startHub({ repos }), startHub({ repos })]);
  b = await launch();
  const origins = [hub.url, hub.storageUrl, spare.url, spare.storageUrl].join(' ');
  await routeHtml(
    b.context,
    b.url('/__hub.html'),
    '<!doctype html><html lang="en"><title>hub</title></html>',
    {
      'Content-Security-Policy': `${CSP}; connect-src 'self' ${origins}`,
      ...ISOLATION_HEADERS,
    },
  );
});
after(async () => {
  await b?.close();
  await Promise.all([hub?.stop(), spare?.stop()]);
});

// In the page: loads the repository from `hubUrl` and returns its logits, or the error's code and message.
const load = (page, hubUrl) =>
  page.evaluate(async (hubUrl) => {
    const { init, loadPretrained } = await import('/src/js/index.js');
    await init({ threads: 1 });
    try {
      const model = await loadPretrained({ hub: 'test/llama-gguf', hubUrl });
      const logits = Array.from(model.forward([[5, 17, 42]]).logits.data);
      model.dispose();
      return { logits };
    } catch (e) {
      return { code: e.code, message: e.message };
    }
  }, hubUrl);
const list = (page) => page.evaluate(async () => (await import('/src/js/index.js')).hubCache.list());
const blobCount = (page) =>
  page.evaluate(async () => {
    let n = 0;
    try {
      const root = await (await navigator.storage.getDirectory()).getDirectoryHandle('attention-wasm-hub');
      const repo = await root.getDirectoryHandle('models--test--llama-gguf');
      for await (const _ of (await repo.getDirectoryHandle('blobs')).keys()) n++;
    } catch {}
    return n;
  });

it('loads from the Hub into OPFS, again with the servers stopped, deletes, and names a quota failure', async () => {
  const { page } = await b.newPage();
  await page.goto(b.url('/__hub.html'));
  const reference = await page.evaluate(async (bytes) => {
    const { init, loadPretrained } = await import('/src/js/index.js');
    await init({ threads: 1 });
    const model = await loadPretrained({ gguf: new Uint8Array(bytes) });
    const logits = Array.from(model.forward([[5, 17, 42]]).logits.data);
    model.dispose();
    return logits;
  }, Array.from(q8));

  assert.deepEqual(await load(page, hub.url), { logits: reference });
  const [entry] = await list(page);
  assert.deepEqual(entry, {
    repo: 'test/llama-gguf',
    commit: hub.repo('test/llama-gguf').commit,
    revisions: ['main'],
    files: [{ path: 'llama-tiny.Q8_0.gguf', size: q8.length }],
    size: q8.length,
  });
  assert.ok(
    hub.log.some((r) => r.origin === 'storage' && r.range),
    'read from the storage origin by ranges',
  );

  await hub.stop();
  assert.deepEqual(await load(page, hub.url), { logits: reference }, 'served from OPFS offline');

  await page.evaluate(async (e) => (await import('/src/js/index.js')).hubCache.delete(e), entry);
  assert.deepEqual(await list(page), []);
  assert.equal(await blobCount(page), 0);
  assert.equal((await load(page, hub.url)).code, 'NETWORK');

  const cdp = await b.context.newCDPSession(page);
  await cdp.send('Storage.overrideQuotaForOrigin', { origin: b.origin, quotaSize: 1000 });
  const full = await load(page, spare.url);
  assert.equal(full.code, 'QUOTA', full.message);
  assert.match(full.message, /storage quota is full; nothing of this file was kept/);
  assert.deepEqual(await list(page), []);
  assert.equal(await blobCount(page), 0);
  await cdp.send('Storage.overrideQuotaForOrigin', { origin: b.origin });
  await cdp.detach();
  await page.close();
});
