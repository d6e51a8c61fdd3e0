// scripts/serve.mjs: routes, MIME types (application/wasm above all), revalidation (an unchanged
// file is answered 304, a changed one in full), pages held in memory (the tests' own), no way out
// of the project root, and the command line (PORT, the printed URL).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { ROOT } from './helpers.mjs';
import { CSP, resolvePath, startServer } from '../../scripts/serve.mjs';

let server;
before(async () => {
  server = await startServer({ port: 0 });
});
after(async () => {
  await server?.close();
});

/** A raw GET (the path is sent exactly as given, no client-side normalisation). */
function get(path, method = 'GET', headers = {}) {
  return new Promise((ok, fail) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, method, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () =>
        ok({
          status: res.statusCode,
          type: res.headers['content-type'],
          etag: res.headers.etag,
          cache: res.headers['cache-control'],
          body: Buffer.concat(chunks),
        }),
      );
    });
    req.on('error', fail);
    req.end();
  });
}

test('routes and MIME types', async () => {
  const cases = [
    ['/', 'text/html; charset=utf-8', /<title>attention-wasm/],
    ['/index.html', 'text/html; charset=utf-8', /attention-steps/],
    ['/web/widgets.js', 'text/javascript; charset=utf-8', /customElements\.define/],
    ['/src/js/index.js', 'text/javascript; charset=utf-8', /export const \{ init \} = loaderApi/],
    ['/dist/attention_core.mjs', 'text/javascript; charset=utf-8', null],
    ['/dist/attention_core.wasm', 'application/wasm', null],
    ['/dist/attention_core_relaxed.wasm', 'application/wasm', null],
    ['/web/demo.css', 'text/css; charset=utf-8', null],
    ['/web/favicon.svg', 'image/svg+xml', /<svg/],
    ['/favicon.ico', 'image/svg+xml', /<svg/],
    ['/web/vendor/katex/fonts/KaTeX_Main-Regular.woff2', 'font/woff2', null],
    ['/package.json', 'application/json; charset=utf-8', /"name": "attention-wasm"/],
  ];
  for (const [path, type, body] of cases) {
    const r = await get(path);
    assert.equal(r.status, 200, path);
    assert.equal(r.type, type, path);
    if (body) assert.match(r.body.toString('utf8'), body, path);
  }
  const wasm = await get('/dist/attention_core.wasm');
  assert.deepEqual([...wasm.body.subarray(0, 4)], [0, 0x61, 0x73, 0x6d], 'the wasm magic number');
});

test('revalidation: an unchanged file is answered 304 without its bytes, another ETag in full', async () => {
  const first = await get('/dist/attention_core.wasm');
  assert.equal(first.cache, 'no-cache', 'the browser asks every time');
  assert.match(first.etag, /^W\/"\d+-\d+"$/);
  const again = await get('/dist/attention_core.wasm', 'GET', { 'If-None-Match': first.etag });
  assert.equal(again.status, 304);
  assert.equal(again.body.length, 0);
  const other = await get('/dist/attention_core.wasm', 'GET', { 'If-None-Match': 'W/"1-2"' });
  assert.equal(other.status, 200);
  assert.equal(other.body.length, first.body.length);
});

test("pages held in memory: the house headers unless a page's own replace them, read at each request", async () => {
  const pages = new Map([['/__t/a.html', { body: '<p>a</p>' }]]);
  const held = await startServer({ port: 0, pages });
  const fetchPage = async (path) => {
    const r = await fetch(`${held.url}${path.slice(1)}`);
    return { status: r.status, headers: Object.fromEntries(r.headers), body: await r.text() };
  };
  try {
    const a = await fetchPage('/__t/a.html');
    assert.equal(a.status, 200);
    assert.equal(a.body, '<p>a</p>');
    assert.equal(a.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(a.headers['content-security-policy'], CSP);
    assert.equal(a.headers['cross-origin-embedder-policy'], 'require-corp');
    assert.equal(a.headers['cache-control'], 'no-store');
    pages.set('/__t/b.html', {
      body: '<p>b</p>',
      headers: { 'Content-Security-Policy': "default-src 'none'" },
    });
    const b = await fetchPage('/__t/b.html');
    assert.equal(b.body, '<p>b</p>', 'a page added while serving');
    assert.equal(b.headers['content-security-policy'], "default-src 'none'");
    assert.equal(b.headers['cross-origin-embedder-policy'], undefined, 'its headers replace the isolation');
    assert.equal((await fetchPage('/__t/c.html')).status, 404);
    assert.equal((await fetchPage('/__t/a.html?x=1')).body, '<p>a</p>', 'matched by path');
  } finally {
    await held.close();
  }
});

test('maxAge: files kept that long without asking again (the browser tests), still with a validator', async () => {
  const kept = await startServer({ port: 0, maxAge: 3600 });
  try {
    const r = await fetch(`${kept.url}web/widgets.js`);
    assert.equal(r.headers.get('cache-control'), 'max-age=3600');
    assert.match(r.headers.get('etag'), /^W\/"\d+-\d+"$/);
  } finally {
    await kept.close();
  }
});

test("connectSrc: a mirror's origins added to connect-src, on files and errors; the policy else unchanged", async () => {
  const mirror = ['http://127.0.0.1:9', 'https://files.mirror.example'];
  const served = await startServer({ port: 0, connectSrc: mirror });
  try {
    for (const path of ['web/widgets.js', 'no-such-file']) {
      const r = await fetch(`${served.url}${path}`);
      await r.arrayBuffer();
      assert.equal(r.headers.get('content-security-policy'), `${CSP} ${mirror.join(' ')}`, path);
    }
    assert.match(
      CSP,
      /; connect-src 'self' https:\/\/huggingface\.co [^;]*$/,
      'connect-src is the last directive',
    );
  } finally {
    await served.close();
  }
});

test('nothing outside the project root, no dot-files, only GET/HEAD', async () => {
  // Dot segments are resolved (as URLs are) and clamped at the root: '/../package.json' is ours.
  assert.match((await get('/../package.json')).body.toString('utf8'), /"name": "attention-wasm"/);
  for (const path of [
    '/web/../../../etc/passwd',
    '/%2e%2e/%2e%2e/etc/passwd',
    '/..%2f..%2fetc%2fpasswd',
    '/web/%2e%2e%2f%2e%2e%2fetc/passwd',
    '/.git/config',
    '/web/..%5c..%5cetc%5cpasswd',
    '/%00',
    '/%E0%A4%A',
  ]) {
    const r = await get(path);
    assert.ok(r.status === 403 || r.status === 404 || r.status === 400, `${path} → ${r.status}`);
    assert.ok(!/root:/.test(r.body.toString('utf8')), path);
  }
  assert.equal((await get('/no/such/file.js')).status, 404);
  assert.equal((await get('/', 'POST')).status, 405);
  assert.equal((await get('/', 'HEAD')).status, 200);
  assert.equal(resolvePath(ROOT, '/../x'), null);
  assert.equal(resolvePath(ROOT, '/web/index.html'), join(ROOT, 'web', 'index.html'));
  assert.equal(resolvePath(ROOT, '/tutorial.html'), join(ROOT, 'web', 'tutorial.html'));
});

test('the command line honours PORT and prints the URL', async () => {
  const child = spawn(process.execPath, [join(ROOT, 'scripts', 'serve.mjs')], {
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    let timer;
    const url = await new Promise((ok, fail) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        const m = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
        if (m) ok(m[1]);
      });
      child.on('exit', (code) => fail(new Error(`serve.mjs exited with ${code}`)));
      timer = setTimeout(() => fail(new Error('no URL printed')), 10_000);
    }).finally(() => clearTimeout(timer));
    assert.notEqual(new URL(url).port, '0');
    const res = await fetch(url, { headers: { connection: 'close' } });
    assert.equal(res.status, 200);
    assert.match(await res.text(), /attention-wasm/);
  } finally {
    child.kill('SIGTERM');
  }
});
