// A local Hugging Face Hub for the tests (Node and Chromium): never the internet. Two origins, as the
// Hub has: the Hub (API and resolve URLs) and its storage (where LFS files are redirected).
//
//   const hub = await startHub({ repos: { 'test/llama': { files: { 'a.gguf': bytes }, token: 'hf_x' } } });
//   hub.url                      // http://127.0.0.1:<port>, loadPretrained's hubUrl
//   hub.cut(path, byte, times)   // the next `times` downloads of `path` end at `byte` (socket closed)
//   hub.log                      // [{ origin: 'hub' | 'storage', method, path, range, auth }]
//   await hub.stop()             // both servers closed: a load after it finds no network
//
// What it speaks, as huggingface.co does:
//   GET /api/models/{repo}/revision/{rev}?blobs=true → { id, sha, siblings: [{ rfilename, size,
//       blobId, lfs?: { sha256, size, pointerSize } }] }
//   GET /{repo}/resolve/{rev}/{path} → LFS files (*.gguf, *.safetensors): 302 to the storage origin,
//       with X-Repo-Commit, X-Linked-Etag, X-Linked-Size; other files: the bytes, ETag the blob id
//   Range: bytes=a-b → 206 with Content-Range; 416 past the end
//   401 (no token) / 403 (another token) for a repository with a token; 404 with X-Error-Code
//       (RepoNotFound, RevisionNotFound, EntryNotFound)
//   CORS on every answer (redirects and errors too), OPTIONS preflights answered.
import { createServer } from 'node:http';
import { createHash } from 'node:crypto';

const kExposed = [
  'ETag',
  'Content-Range',
  'Content-Length',
  'Accept-Ranges',
  'X-Repo-Commit',
  'X-Linked-Etag',
  'X-Linked-Size',
  'X-Error-Code',
  'X-Error-Message',
].join(', ');
const isLfs = (path) => /\.(gguf|safetensors)$/.test(path);
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');
const gitBlobId = (bytes) => createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');

function cors(res) {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', kExposed);
  res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
}

function answer(res, status, body = '', headers = {}) {
  cors(res);
  res.writeHead(status, headers);
  res.end(body);
}

const fail = (res, status, code, message) =>
  answer(res, status, JSON.stringify({ error: message }), {
    'Content-Type': 'application/json',
    ...(code ? { 'X-Error-Code': code } : {}),
    'X-Error-Message': message,
  });

// Bytes of a file with a Range request answered (206, or 416 past the end), cut when asked.
function sendBytes(req, res, bytes, etag, cuts, key) {
  const m = req.headers.range?.match(/^bytes=(\d+)-(\d*)$/);
  const begin = m ? Number(m[1]) : 0;
  const end = m && m[2] !== '' ? Math.min(Number(m[2]) + 1, bytes.length) : bytes.length;
  if (m && begin >= bytes.length) return answer(res, 416, '', { 'Content-Range': `bytes */${bytes.length}` });
  const headers = { ETag: `"${etag}"`, 'Accept-Ranges': 'bytes', 'Content-Length': String(end - begin) };
  if (m) headers['Content-Range'] = `bytes ${begin}-${end - 1}/${bytes.length}`;
  cors(res);
  res.writeHead(m ? 206 : 200, headers);
  if (req.method === 'HEAD') return res.end();
  const cut = cuts.get(key);
  if (cut && cut.times > 0 && cut.byte >= begin && cut.byte < end) {
    cut.times--;
    // the bytes up to the cut reach the client, then the connection drops mid-body
    if (cut.byte === begin) return (res.flushHeaders(), setImmediate(() => res.destroy()));
    return res.write(bytes.subarray(begin, cut.byte), () => res.destroy());
  }
  res.end(bytes.subarray(begin, end));
}

// The repositories given, with their commit, blobs and listing.
function prepare(repos) {
  const out = new Map();
  for (const [name, r] of Object.entries(repos)) {
    const files = new Map();
    for (const [path, bytes] of Object.entries(r.files)) {
      const data = new Uint8Array(bytes);
      files.set(path, { path, data, sha256: sha256(data), blobId: gitBlobId(data), lfs: isLfs(path) });
    }
    const commit = r.commit ?? createHash('sha1').update(name).digest('hex');
    out.set(name, { name, files, commit, token: r.token, revisions: new Set(['main', commit]) });
  }
  return out;
}

function siblings(repo) {
  return [...repo.files.values()].map((f) => ({
    rfilename: f.path,
    size: f.data.length,
    blobId: f.blobId,
    ...(f.lfs ? { lfs: { sha256: f.sha256, size: f.data.length, pointerSize: 134 } } : {}),
  }));
}

// The repository of a request checked: present, revision known, token right; or the error sent.
function access(req, res, repos, name, revision) {
  const repo = repos.get(name);
  const auth = req.headers.authorization;
  if (!repo || (repo.token && !auth)) {
    // the Hub answers 401 for a private repository and for none at all: it does not tell them apart
    fail(res, 401, repo ? 'GatedRepo' : 'RepoNotFound', 'Access to this model is restricted: log in.');
    return null;
  }
  if (repo.token && auth !== `Bearer ${repo.token}`) {
    fail(res, 403, 'GatedRepo', 'Your request to access this model has not been accepted.');
    return null;
  }
  if (!repo.revisions.has(revision)) {
    fail(res, 404, 'RevisionNotFound', `Invalid rev id: ${revision}`);
    return null;
  }
  return repo;
}

function hubHandler(repos, storage, log) {
  return (req, res) => {
    const url = new URL(req.url, 'http://x');
    log.push({
      origin: 'hub',
      method: req.method,
      path: url.pathname,
      range: req.headers.range,
      auth: req.headers.authorization,
    });
    if (req.method === 'OPTIONS') return preflight(res);
    const api = url.pathname.match(/^\/api\/models\/([^/]+\/[^/]+)\/revision\/([^/]+)$/);
    if (api) {
      const repo = access(req, res, repos, api[1], decodeURIComponent(api[2]));
      if (!repo) return;
      const body = JSON.stringify({ id: repo.name, sha: repo.commit, siblings: siblings(repo) });
      return answer(res, 200, body, { 'Content-Type': 'application/json' });
    }
    const resolve = url.pathname.match(/^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/);
    if (!resolve) return fail(res, 404, null, 'Not found');
    const repo = access(req, res, repos, resolve[1], decodeURIComponent(resolve[2]));
    if (!repo) return;
    const path = resolve[3].split('/').map(decodeURIComponent).join('/');
    const f = repo.files.get(path);
    if (!f) return fail(res, 404, 'EntryNotFound', `${path} does not exist on "${resolve[2]}"`);
    if (!f.lfs) return sendBytes(req, res, f.data, f.blobId, storage.cuts, path);
    answer(res, 302, '', {
      Location: `${storage.url}/repos/${f.sha256}?signature=test`,
      'X-Repo-Commit': repo.commit,
      'X-Linked-Etag': `"${f.sha256}"`,
      'X-Linked-Size': String(f.data.length),
    });
  };
}

function preflight(res) {
  answer(res, 204, '', {
    'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
    'Access-Control-Allow-Headers': 'Authorization, Range, Content-Type',
    'Access-Control-Max-Age': '600',
  });
}

function storageHandler(repos, storage, log) {
  return (req, res) => {
    const url = new URL(req.url, 'http://x');
    log.push({
      origin: 'storage',
      method: req.method,
      path: url.pathname,
      range: req.headers.range,
      auth: req.headers.authorization,
    });
    if (req.method === 'OPTIONS') return preflight(res);
    const sha = url.pathname.match(/^\/repos\/([0-9a-f]{64})$/)?.[1];
    for (const repo of repos.values())
      for (const f of repo.files.values())
        if (f.sha256 === sha) return sendBytes(req, res, f.data, f.sha256, storage.cuts, f.path);
    fail(res, 404, null, 'NoSuchKey');
  };
}

function listen(server) {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}`)),
  );
}

/** Starts the Hub and its storage on free local ports (see the top of this file). */
export async function startHub({ repos }) {
  const prepared = prepare(repos);
  const log = [];
  const storage = { cuts: new Map(), url: null };
  const servers = [
    createServer(hubHandler(prepared, storage, log)),
    createServer(storageHandler(prepared, storage, log)),
  ];
  const [url, storageUrl] = await Promise.all(servers.map(listen));
  storage.url = storageUrl;
  return {
    url,
    storageUrl,
    log,
    repo: (name) => prepared.get(name),
    cut(path, byte, times = 1) {
      storage.cuts.set(path, { byte, times });
    },
    async stop() {
      await Promise.all(
        servers.map((s) => new Promise((resolve) => (s.closeAllConnections(), s.close(() => resolve())))),
      );
    },
  };
}
