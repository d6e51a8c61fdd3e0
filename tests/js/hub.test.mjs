// loadPretrained({ hub }) against a local Hub (tests/js/hub-server.js; never the internet) serving the
// committed fixtures: a GGUF file by quantization (equal to the same file loaded from disk), a split
// GGUF, the safetensors folder (against its PyTorch reference), the Hub's refusals named, a cut
// download resumed from its last byte, the cache in huggingface_hub's layout served with the server
// stopped, abort, and hubCache.list / delete.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  existsSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  writeFileSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AttentionError, hubCache, hubFiles, init, loadPretrained } from '../../src/js/index.js';
import { fixtureGGUF } from './gguf-from-fixture.js';
import { startHub } from './hub-server.js';
import { expectRejection } from './expect-error.mjs';

const kLogitAbs = 1e-4,
  kLogitRel = 1e-3; // logits against the PyTorch reference, as pretrained.test.mjs
const TOKEN = 'hf_testtoken123';
const GGUF = new URL('../golden/gguf/', import.meta.url);
const TINY = new URL('../golden/pretrained/llama-tiny/', import.meta.url);
const f32 = readFileSync(new URL('llama-tiny.f32.gguf', GGUF));
const q8 = readFileSync(new URL('llama-tiny.q8_0.gguf', GGUF));
const IDS = [[5, 17, 42, 7]];

await init();

// No token of the machine's own (HF_TOKEN, ~/.cache/huggingface/token) may reach the test Hub: the
// implicit token comes from a file this suite controls.
delete process.env.HF_TOKEN;
delete process.env.HF_HUB_DISABLE_IMPLICIT_TOKEN;
const kNoTokenFile = join(mkdtempSync(join(tmpdir(), 'hub-token-')), 'absent');
process.env.HF_TOKEN_PATH = kNoTokenFile;

// The fixture written as two parts of a split GGUF file (llama.cpp's gguf-split).
function splitParts() {
  const names = [];
  fixtureGGUF('llama-tiny', { tensors: (list) => (names.push(...list.map((t) => t.name)), list) });
  const half = names.slice(0, names.length >> 1);
  const part = (no, first) =>
    fixtureGGUF('llama-tiny', {
      metadata: (md) => [
        ...(no === 0 ? md : []),
        ['split.no', 'uint16', no],
        ['split.count', 'uint16', 2],
        ['split.tensors.count', 'int32', names.length],
      ],
      tensors: (list) => list.filter((t) => half.includes(t.name) === first),
    });
  return { 'tiny-00001-of-00002.gguf': part(0, true), 'tiny-00002-of-00002.gguf': part(1, false) };
}

const folderFiles = Object.fromEntries(
  ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'].map((n) => [
    n,
    readFileSync(new URL(n, TINY)),
  ]),
);

let hub;
let local; // the F32 file loaded from disk: what every load of it from the Hub must equal
before(async () => {
  hub = await startHub({
    repos: {
      'test/llama-gguf': {
        files: { 'llama-tiny.F32.gguf': f32, 'llama-tiny.Q8_0.gguf': q8, 'README.md': 'tiny' },
      },
      'test/gated': { files: { 'llama-tiny.Q8_0.gguf': q8 }, token: TOKEN },
      'test/split': { files: splitParts() },
      'test/llama': { files: folderFiles },
    },
  });
  local = await loadPretrained({ gguf: f32 });
});
after(async () => {
  local?.dispose();
  await hub?.stop();
});

const tmp = () => mkdtempSync(join(tmpdir(), 'hub-cache-'));
const logits = (m) => m.forward(IDS).logits.data;
const rejects = expectRejection;

describe('loadPretrained({ hub })', () => {
  it('a GGUF file by its quantization, equal to the file read from disk; progress with a rate', async () => {
    const progress = [];
    const cacheDir = tmp();
    const model = await loadPretrained({
      hub: 'test/llama-gguf',
      file: 'f32',
      hubUrl: hub.url,
      cacheDir,
      onProgress: (...a) => progress.push(a),
    });
    assert.deepEqual(logits(model), logits(local));
    model.dispose();
    const downloads = progress.filter((p) => p[2]?.phase === 'download');
    assert.ok(
      downloads.length > 0 &&
        downloads.every((p) => p[2].file === 'llama-tiny.F32.gguf' && p[2].bytesPerSecond >= 0),
    );
    assert.deepEqual(downloads.at(-1).slice(0, 2), [f32.length, f32.length]);
    assert.ok(progress.some((p) => p[2]?.phase === 'load'));
    // huggingface_hub's layout: the blob by sha256, the snapshot's link, the ref
    const repo = hub.repo('test/llama-gguf');
    const dir = join(cacheDir, 'models--test--llama-gguf');
    const sha = repo.files.get('llama-tiny.F32.gguf').sha256;
    assert.deepEqual(readFileSync(join(dir, 'blobs', sha)), f32);
    const link = join(dir, 'snapshots', repo.commit, 'llama-tiny.F32.gguf');
    assert.ok(lstatSync(link).isSymbolicLink());
    assert.equal(readlinkSync(link), join('..', '..', 'blobs', sha));
    assert.equal(readFileSync(join(dir, 'refs', 'main'), 'utf8'), repo.commit);
  });

  it('Q8_0 from a gated repository with its token: equal to the file from disk, the token kept off storage and disk', async () => {
    const cacheDir = tmp();
    const model = await loadPretrained({
      hub: 'test/gated',
      file: 'Q8_0',
      hubUrl: hub.url,
      token: TOKEN,
      cacheDir,
    });
    const fromDisk = await loadPretrained({ gguf: q8 });
    assert.deepEqual(logits(model), logits(fromDisk));
    model.dispose();
    fromDisk.dispose();
    const storage = hub.log.filter((r) => r.origin === 'storage');
    assert.ok(
      storage.length > 0 && storage.every((r) => r.auth === undefined),
      'no Authorization sent to storage',
    );
    assert.ok(
      hub.log.every((r) => !r.path.includes(TOKEN)),
      'the token is in no URL',
    );
    const walk = (d) =>
      readdirSync(d, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)],
      );
    for (const file of walk(cacheDir))
      assert.ok(!readFileSync(file).includes(TOKEN), `${file} holds no token`);
  });

  it('the implicit token, as huggingface_hub: HF_TOKEN_PATH, HF_HOME/token, HF_TOKEN, disabled', async () => {
    const o = { hub: 'test/gated', hubUrl: hub.url };
    const dir = tmp();
    const listed = async () => (await hubFiles(o)).commit;
    const refused = () => rejects(hubFiles(o), 'NEEDS_TOKEN', /hf auth login/);
    try {
      writeFileSync(join(dir, 'token'), `  ${TOKEN}\n`); // as `hf auth login` writes it, padded
      process.env.HF_TOKEN_PATH = join(dir, 'token');
      assert.match(await listed(), /^[0-9a-f]{40}$/, 'the token file of HF_TOKEN_PATH was sent');
      delete process.env.HF_TOKEN_PATH;
      process.env.HF_HOME = dir;
      assert.match(await listed(), /^[0-9a-f]{40}$/, 'HF_HOME/token was sent');
      process.env.HF_HUB_DISABLE_IMPLICIT_TOKEN = '1';
      await refused();
      delete process.env.HF_HUB_DISABLE_IMPLICIT_TOKEN;
      writeFileSync(join(dir, 'token'), '\n');
      await refused(); // an empty file is no token
      process.env.HF_TOKEN = TOKEN;
      assert.match(await listed(), /^[0-9a-f]{40}$/, 'HF_TOKEN before the file');
      process.env.HF_TOKEN = 'hf_other';
      writeFileSync(join(dir, 'token'), TOKEN);
      await rejects(hubFiles(o), 'NO_ACCESS', /no access/); // HF_TOKEN wins over the file
    } finally {
      delete process.env.HF_TOKEN;
      delete process.env.HF_HOME;
      delete process.env.HF_HUB_DISABLE_IMPLICIT_TOKEN;
      process.env.HF_TOKEN_PATH = kNoTokenFile;
      rmSync(dir, { recursive: true });
    }
  });

  it('refusals named: a token needed, no access, a missing revision, quantization or repository', async () => {
    const o = { hubUrl: hub.url, cache: false };
    await rejects(loadPretrained({ hub: 'test/gated', ...o }), 'NEEDS_TOKEN', /needs a token/);
    await rejects(loadPretrained({ hub: 'test/gated', token: 'hf_other', ...o }), 'NO_ACCESS', /no access/);
    await rejects(
      loadPretrained({ hub: 'test/llama-gguf', revision: 'v9', ...o }),
      'NOT_FOUND',
      /no such revision/,
    );
    await rejects(
      loadPretrained({ hub: 'test/llama-gguf', file: 'Q4_K_M', ...o }),
      'NOT_FOUND',
      /has no GGUF file "Q4_K_M"; it has: F32, Q8_0/,
    );
    await rejects(
      loadPretrained({ hub: 'test/llama-gguf', ...o }),
      'INVALID_ARGUMENT',
      /2 GGUF files: choose one/,
    );
    await rejects(loadPretrained({ hub: 'nobody/none', ...o }), 'NEEDS_TOKEN', /needs a token/);
    await rejects(loadPretrained({ hub: '../etc', ...o }), 'INVALID_ARGUMENT', /owner\/name/);
    await rejects(
      loadPretrained({ hub: 'test/llama', gguf: f32, ...o }),
      'INVALID_ARGUMENT',
      /cannot be given with gguf/,
    );
  });

  it('a split GGUF file: its parts fetched and joined, equal to the whole file', async () => {
    const model = await loadPretrained({ hub: 'test/split', hubUrl: hub.url, cache: false, offHeap: false });
    const whole = await loadPretrained({ gguf: fixtureGGUF('llama-tiny') });
    assert.deepEqual(logits(model), logits(whole));
    // offHeap reaches the load: the untied embedding in the heap, outside it by default
    assert.equal(model.offHeapBytes, 0);
    assert.ok(whole.offHeapBytes > 0);
    assert.equal(model.weightBytes, whole.weightBytes + whole.offHeapBytes);
    model.dispose();
    whole.dispose();
  });

  it('the safetensors folder with its tokenizer, against the PyTorch reference', async () => {
    const expected = JSON.parse(readFileSync(new URL('expected.json', TINY), 'utf8'));
    const model = await loadPretrained({ hub: 'test/llama', hubUrl: hub.url, cacheDir: tmp() });
    for (const c of expected.cases) {
      const got = model.forward(c.input_ids).logits.data;
      got.forEach((v, i) =>
        assert.ok(
          Math.abs(v - c.logits.data[i]) <= kLogitAbs + kLogitRel * Math.abs(c.logits.data[i]),
          `${c.name} logit ${i}`,
        ),
      );
    }
    const { text, ids } = expected.tokenizer_cases[0];
    assert.deepEqual(Array.from(model.encode(text)), ids);
    model.dispose();
  });
});

describe('hubFiles', () => {
  it('lists what a load would download, sizes from the listing, no file fetched', async () => {
    const from = hub.log.length;
    const o = { hubUrl: hub.url };
    const q = await hubFiles({ hub: 'test/llama-gguf', file: 'q8_0', ...o });
    assert.deepEqual(q, {
      repo: 'test/llama-gguf',
      revision: 'main',
      commit: hub.repo('test/llama-gguf').commit,
      kind: 'gguf',
      files: [{ path: 'llama-tiny.Q8_0.gguf', size: q8.length }],
      size: q8.length,
    });
    const split = await hubFiles({ hub: 'test/split', ...o });
    const parts = Object.entries(splitParts());
    assert.deepEqual(
      split.files,
      parts.map(([path, bytes]) => ({ path, size: bytes.length })),
    );
    const folder = await hubFiles({ hub: 'test/llama', ...o });
    assert.equal(folder.kind, 'safetensors');
    assert.deepEqual(folder.files.map((f) => f.path).sort(), Object.keys(folderFiles).sort());
    assert.equal(
      folder.size,
      Object.values(folderFiles).reduce((n, b) => n + b.length, 0),
    );
    assert.ok(
      hub.log.slice(from).every((r) => r.origin === 'hub' && r.path.startsWith('/api/models/')),
      'only the listing was asked',
    );
    await rejects(hubFiles({ hub: 'test/llama-gguf', file: 'Q2_K', ...o }), 'NOT_FOUND', /it has: F32, Q8_0/);
    await rejects(hubFiles({ hub: 'test/gated', ...o }), 'NEEDS_TOKEN', /needs a token/);
    await rejects(hubFiles({ hub: 'test/llama', cache: false, ...o }), 'INVALID_ARGUMENT', /cache/);
  });
});

describe('interrupted downloads and the cache', () => {
  it('a connection cut mid-file is resumed from its last byte', async () => {
    const cut = 40_000;
    hub.cut('llama-tiny.F32.gguf', cut, 1);
    const from = hub.log.length;
    const model = await loadPretrained({
      hub: 'test/llama-gguf',
      file: 'llama-tiny.F32.gguf',
      hubUrl: hub.url,
      cacheDir: tmp(),
    });
    assert.deepEqual(logits(model), logits(local));
    model.dispose();
    const ranges = hub.log
      .slice(from)
      .filter((r) => r.origin === 'storage')
      .map((r) => Number(r.range.match(/bytes=(\d+)/)[1]));
    assert.ok(ranges.includes(cut), `a range from byte ${cut} (got ${ranges})`);
  });

  it('a network failure is NETWORK, the bytes kept; the next load resumes and the server stopped serves from the cache', async () => {
    const cacheDir = tmp();
    const cut = 50_000;
    hub.cut('llama-tiny.F32.gguf', cut, 10);
    const o = { hub: 'test/llama-gguf', file: 'F32', hubUrl: hub.url, cacheDir };
    await rejects(loadPretrained(o), 'NETWORK', /failed at byte 50000 of \d+ .*loading again resumes/);
    const sha = hub.repo('test/llama-gguf').files.get('llama-tiny.F32.gguf').sha256;
    const partial = join(cacheDir, 'models--test--llama-gguf', 'blobs', `${sha}.incomplete`);
    assert.equal(statSync(partial).size, cut);
    hub.cut('llama-tiny.F32.gguf', 0, 0);
    const from = hub.log.length;
    const model = await loadPretrained(o);
    const first = hub.log.slice(from).find((r) => r.origin === 'storage');
    assert.equal(first.range, `bytes=${cut}-${f32.length - 1}`);
    assert.ok(!existsSync(partial));
    model.dispose();
  });

  it('offline: a second open is served from the cache; without a cache or a snapshot it fails', async () => {
    const cacheDir = tmp();
    const offline = await startHub({
      repos: { 'test/llama-gguf': { files: { 'llama-tiny.Q8_0.gguf': q8 } } },
    });
    const o = { hub: 'test/llama-gguf', hubUrl: offline.url, cacheDir };
    (await loadPretrained(o)).dispose();
    await offline.stop();
    const model = await loadPretrained(o);
    const fromDisk = await loadPretrained({ gguf: q8 });
    assert.deepEqual(logits(model), logits(fromDisk));
    model.dispose();
    fromDisk.dispose();
    await rejects(loadPretrained({ ...o, cache: false }), 'NETWORK', /the network failed/);
    await rejects(
      loadPretrained({ ...o, revision: 'v2' }),
      'NETWORK',
      /the cache has no copy of test\/llama-gguf at v2/,
    );
  });

  it('abort: a signal stops a Hub load and a local one', async () => {
    const controller = new AbortController();
    const onProgress = () => controller.abort();
    await rejects(
      loadPretrained({
        hub: 'test/llama-gguf',
        file: 'F32',
        hubUrl: hub.url,
        cache: false,
        signal: controller.signal,
        onProgress,
      }),
      'ABORTED',
      /aborted/,
    );
    await rejects(loadPretrained({ gguf: f32, signal: AbortSignal.abort() }), 'ABORTED', /aborted/);
    await rejects(loadPretrained({ gguf: f32, signal: 'stop' }), 'INVALID_ARGUMENT', /AbortSignal/);
  });

  it('hubCache lists the snapshots with their sizes and deletes one with its blobs', async () => {
    const cacheDir = tmp();
    const o = { hub: 'test/llama-gguf', hubUrl: hub.url, cacheDir };
    (await loadPretrained({ ...o, file: 'Q8_0' })).dispose();
    (await loadPretrained({ ...o, hub: 'test/split' })).dispose();
    const list = await hubCache.list({ cacheDir });
    const gguf = list.find((e) => e.repo === 'test/llama-gguf');
    assert.deepEqual(gguf, {
      repo: 'test/llama-gguf',
      commit: hub.repo('test/llama-gguf').commit,
      revisions: ['main'],
      files: [{ path: 'llama-tiny.Q8_0.gguf', size: q8.length }],
      size: q8.length,
    });
    assert.equal(list.length, 2);
    await hubCache.delete(gguf, { cacheDir });
    assert.ok(!existsSync(join(cacheDir, 'models--test--llama-gguf')));
    assert.deepEqual(
      (await hubCache.list({ cacheDir })).map((e) => e.repo),
      ['test/split'],
    );
    await assert.rejects(
      hubCache.delete({ repo: '../x', commit: 'a'.repeat(40) }, { cacheDir }),
      AttentionError,
    );
    rmSync(cacheDir, { recursive: true });
  });
});
