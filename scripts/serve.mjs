#!/usr/bin/env node
// A small static server for the demo, the tutorial and the browser tests (no dependencies).
//
//   node scripts/serve.mjs            serves the project root on http://127.0.0.1:8080 (PORT changes it)
//   node scripts/serve.mjs --no-isolation   the same without COOP/COEP (pages then run on one thread)
//   node scripts/serve.mjs --connect-src=https://hub.mirror.example   a Hub mirror's origins allowed too
//   import { startServer } from './scripts/serve.mjs'; const { url, close } = await startServer({ port: 0 });
//
// Every response carries the strict CSP below and, unless isolation is off, the two headers that make
// a page cross-origin isolated (ISOLATION_HEADERS): only there do browsers give pages
// SharedArrayBuffer, which the threaded build needs (docs/threads.md).
//
// `/` is web/index.html and `/tutorial.html` is web/tutorial.html; every other path is a file under the
// root, so pages import `/src/js/index.js` and `/dist/attention_core.wasm` directly. Paths that leave
// the root, or touch a dot-file/dot-folder (.git), are refused. Only 127.0.0.1 by default.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
};

/**
 * The Hugging Face Hub's origins, the only ones beyond 'self' the pages may connect to (the demo's
 * "Open from Hugging Face…", nothing before the reader asks): the Hub (its API and resolve URLs) and
 * the hosts its resolve URLs redirect files to, as https://huggingface.co/.well-known/meta.json lists
 * them (lfsDomains; cdnDomains, all under cdn.hf.co) plus the Xet bridge (docs/security.md).
 */
export const HUB_ORIGINS = [
  'https://huggingface.co',
  'https://cdn-lfs.hf.co',
  'https://cdn-lfs-us-1.hf.co',
  'https://cdn-lfs-eu-1.hf.co',
  'https://cas-bridge.xethub.hf.co',
  'https://*.cdn.hf.co',
];

/**
 * The Content-Security-Policy sent with every response: the strict policy the library and its pages
 * must run under (docs/security.md, "Content-Security-Policy"). WebAssembly compilation needs
 * 'wasm-unsafe-eval'; no string evaluation ('unsafe-eval') and no inline script. Inline styles stay
 * allowed (KaTeX and the widgets set style attributes). The pages' workers (the trainer, the demo's
 * model worker) are same-origin module files, which `script-src 'self'` already allows (worker-src falls back to it).
 * connect-src is last, so that cspWith() can add origins to it.
 */
export const CSP =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
  `connect-src 'self' ${HUB_ORIGINS.join(' ')}`;

/** The CSP with more origins allowed in connect-src (a Hub mirror: `--connect-src`, startServer's `connectSrc`). */
export const cspWith = (origins = []) => (origins.length ? `${CSP} ${origins.join(' ')}` : CSP);

/**
 * Cross-origin isolation: COOP same-origin + COEP require-corp. Everything the pages load is
 * same-origin, so require-corp blocks nothing of ours (docs/threads.md has the `credentialless`
 * alternative for pages that embed third-party images).
 */
export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

// Friendly routes onto files below web/.
const ROUTES = {
  '/': 'web/index.html',
  '/index.html': 'web/index.html',
  '/tutorial.html': 'web/tutorial.html',
  '/favicon.ico': 'web/favicon.svg',
};

/** Maps a request path to a file inside `root`, or null when it is not allowed. */
export function resolvePath(root, urlPath, routes = ROUTES) {
  let path;
  try {
    path = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (path.includes('\0') || path.includes('\\')) return null;
  if (Object.hasOwn(routes, path)) path = `/${routes[path]}`;
  // Refuse dot segments outright ('..' traversal, '.git', '.env'): nothing we serve starts with '.'.
  if (path.split('/').some((seg) => seg.startsWith('.'))) return null;
  const file = resolve(root, `.${path}`);
  if (file !== root && !file.startsWith(root + sep)) return null;
  return file;
}

function sendPlain(res, status, text, extra) {
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'X-Content-Type-Options': 'nosniff',
    ...extra,
  });
  res.end(text);
}

/** Answers a page held in memory (startServer's `pages`): never cached, its headers as given. */
function sendPage(req, res, extra, { body, headers }) {
  res.writeHead(200, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...(headers ?? extra),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

async function handle(root, routes, pages, cacheControl, extra, req, res) {
  const send = (r, status, text) => sendPlain(r, status, text, extra);
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'method not allowed\n');
  const { pathname } = new URL(req.url, 'http://localhost');
  if (pages.has(pathname)) return sendPage(req, res, extra, pages.get(pathname));
  let file = resolvePath(root, pathname, routes);
  if (!file) return send(res, 403, 'forbidden\n');
  let info = await stat(file).catch(() => null);
  if (info && info.isDirectory()) {
    file = join(file, 'index.html');
    info = await stat(file).catch(() => null);
  }
  if (!info || !info.isFile()) return send(res, 404, `not found: ${pathname}\n`);
  // no-cache with a validator (the default): the browser asks every time (an edited file is seen
  // at once) and a file it holds is answered 304 without its bytes, so its compiled code (scripts,
  // wasm) is reused.
  const etag = `W/"${info.size}-${Math.floor(info.mtimeMs)}"`;
  const headers = {
    'Cache-Control': cacheControl,
    ETag: etag,
    'X-Content-Type-Options': 'nosniff',
    ...extra,
  };
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, headers);
    return res.end();
  }
  res.writeHead(200, {
    'Content-Type': MIME[extname(file).toLowerCase()] || 'application/octet-stream',
    'Content-Length': info.size,
    ...headers,
  });
  if (req.method === 'HEAD') return res.end();
  createReadStream(file)
    .on('error', () => res.destroy())
    .pipe(res);
}

/**
 * Starts the server. port 0 picks a free port. Resolves to { url, port, close() }.
 * `routes` maps request paths onto files under `root` (default: the demo's and tutorial's); `{}`
 * serves `root` as it is (a bundled app's output, in the bundler test).
 * `pages` maps request paths onto HTML held in memory, `{ body, headers? }` (the browser tests' own
 * pages; read at each request, so a caller may add to it while serving): `headers` replaces the CSP
 * and isolation headers when given.
 * `isolation` (default true) sends ISOLATION_HEADERS with every response.
 * `connectSrc`: origins added to the CSP's connect-src (a Hub mirror, the tests' local Hub).
 * `maxAge` (seconds) lets the browser keep files that long without asking again (the browser tests:
 * nothing they load changes during a run, and a page's ~170 module requests then cost the browser
 * less); by default it asks every time (`no-cache`), so an edited file is seen at once.
 * @param {{ port?: number, host?: string, root?: string, routes?: Record<string, string>,
 *   pages?: Map<string, { body: string, headers?: Record<string, string> }>, isolation?: boolean,
 *   maxAge?: number, connectSrc?: string[] }} [options]
 */
export function startServer({
  port = 8080,
  host = '127.0.0.1',
  root = projectRoot,
  routes = ROUTES,
  pages = new Map(),
  isolation = true,
  maxAge = 0,
  connectSrc = [],
} = {}) {
  const cacheControl = maxAge > 0 ? `max-age=${Math.floor(maxAge)}` : 'no-cache';
  const base = resolve(root);
  const extra = { 'Content-Security-Policy': cspWith(connectSrc), ...(isolation ? ISOLATION_HEADERS : {}) };
  const server = createServer((req, res) => {
    handle(base, routes, pages, cacheControl, extra, req, res).catch((e) => {
      if (!res.headersSent) sendPlain(res, 500, `${e.message}\n`, extra);
      else res.destroy();
    });
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => {
      const actual = server.address().port;
      ok({
        url: `http://${host}:${actual}/`,
        port: actual,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
  });
}

// Run directly: `node scripts/serve.mjs`.
if (import.meta.url === pathToFileURL(process.argv[1] || '').href) {
  const port = Number(process.env.PORT ?? 8080);
  const isolation = !process.argv.includes('--no-isolation');
  // --connect-src=https://mirror.example,https://files.mirror.example: a Hub mirror's origins.
  const connect = process.argv.find((a) => a.startsWith('--connect-src='));
  const connectSrc = connect ? connect.slice(14).split(',').filter(Boolean) : [];
  startServer({ port, host: process.env.HOST || '127.0.0.1', isolation, connectSrc }).then(
    ({ url }) => {
      console.log(`attention-wasm demo:      ${url}`);
      console.log(`attention-wasm tutorial:  ${url}tutorial.html`);
      console.log(
        isolation
          ? 'Cross-origin isolated (COOP/COEP): the pages run threaded.'
          : 'Without COOP/COEP (--no-isolation): the pages run on one thread.',
      );
      console.log('Ctrl+C to stop.');
    },
    (e) => {
      console.error(`serve: cannot listen on port ${port}: ${e.message}`);
      process.exit(1);
    },
  );
}
