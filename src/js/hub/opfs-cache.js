// The browser cache of Hub files, in the origin private file system (OPFS), laid out as the Node
// cache is: attention-wasm-hub/models--owner--name/blobs/<LFS sha256 or git blob id>/ holds the file
// in chunk files of kChunk bytes (the last one shorter; "done" written when the file is whole),
// snapshots/<commit>.json lists a revision's files and their blobs, refs/<revision> names the commit.
// A partial download resumes by appending chunks; a quota failure removes the partial blob and is a
// QUOTA AttentionError. Chunks, not one file: OPFS appends from a page (createWritable) copy the whole
// file each time, and sync access handles exist only in workers.
import { AttentionError } from '../errors.js';
import { isCommit } from './api.js';
import { repoFolder } from './node-cache.js';

const kRoot = 'attention-wasm-hub';
/** Bytes of one chunk file (JS holds at most one chunk of a download before it is written). */
export const kChunk = 8 * 1024 * 1024;
const chunkName = (i) => String(i).padStart(8, '0');

export const hasOpfs = () => typeof globalThis.navigator?.storage?.getDirectory === 'function';

async function folder(names, create = true) {
  let dir = await navigator.storage.getDirectory();
  for (const n of [kRoot, ...names]) dir = await dir.getDirectoryHandle(n, { create });
  return dir;
}
const missing = (error) => error?.name === 'NotFoundError' || error?.name === 'TypeError';
const present = (p) => p.catch((error) => (missing(error) ? null : Promise.reject(error)));

// A write, its quota failure named (after `undo` removed what the write had begun).
async function guarded(write, undo, what) {
  try {
    return await write();
  } catch (error) {
    if (error?.name !== 'QuotaExceededError') throw error;
    await undo().catch(() => {});
    throw new AttentionError(
      'QUOTA',
      `${what}: the browser's storage quota is full; nothing of this file was kept (delete cached models with hubCache.delete, or load with cache: false)`,
    );
  }
}

async function writeFile(dir, name, data) {
  const w = await (await dir.getFileHandle(name, { create: true })).createWritable();
  try {
    await w.write(data);
    await w.close();
  } catch (error) {
    await w.abort().catch(() => {});
    throw error;
  }
}

// The chunks of a blob folder already written: [File] in order, a short last one at most.
async function chunksOf(dir) {
  const files = [];
  for (let i = 0; ; i++) {
    const h = await present(dir.getFileHandle(chunkName(i)));
    if (!h) return files;
    files.push(await h.getFile());
  }
}

/** The store of one file (remote.js): its chunks read back, new bytes appended a chunk at a time. */
export async function opfsStore(repoDir, repo, { key, size, path }) {
  const blobs = await repoDir.getDirectoryHandle('blobs', { create: true });
  const dir = await blobs.getDirectoryHandle(key, { create: true });
  const done = Boolean(await present(dir.getFileHandle('done')));
  const chunks = await chunksOf(dir);
  // Bytes past the last whole chunk, not yet written: one chunk's buffer filled in place, so a
  // download arriving in small network pieces is copied once (growing a fresh array per piece
  // copied each chunk's bytes ~kChunk / piece times).
  let buffer = null;
  let filled = 0;
  const pending = () => (buffer ? buffer.subarray(0, filled) : new Uint8Array(0));
  if (!done && chunks.length && chunks.at(-1).size < kChunk) {
    const last = new Uint8Array(await chunks.pop().arrayBuffer());
    buffer = new Uint8Array(kChunk);
    buffer.set(last);
    filled = last.length;
  }
  let flushed = chunks.reduce((n, c) => n + c.size, 0);
  let dropped = false; // after a quota failure: nothing more is written, so no partial entry remains
  const undo = () => {
    dropped = true;
    filled = 0;
    return blobs.removeEntry(key, { recursive: true });
  };
  const flush = async () => {
    if (!filled || dropped) return;
    const i = chunks.length;
    await guarded(() => writeFile(dir, chunkName(i), pending()), undo, `${repo}: ${path}`);
    chunks.push(await (await dir.getFileHandle(chunkName(i))).getFile());
    flushed += filled;
    filled = 0;
  };
  return {
    get have() {
      return flushed + filled;
    },
    async append(bytes) {
      for (let at = 0; at < bytes.length;) {
        buffer ??= new Uint8Array(kChunk);
        const take = Math.min(bytes.length - at, kChunk - filled);
        buffer.set(bytes.subarray(at, at + take), filled);
        filled += take;
        at += take;
        if (filled === kChunk) await flush();
      }
    },
    async read(begin, end) {
      const out = new Uint8Array(end - begin);
      for (let at = begin; at < end;) {
        const i = Math.floor(at / kChunk);
        const stop = Math.min(end, (i + 1) * kChunk);
        const from = at - i * kChunk;
        const bytes =
          i < chunks.length
            ? new Uint8Array(await chunks[i].slice(from, from + stop - at).arrayBuffer())
            : pending().subarray(from, from + stop - at);
        out.set(bytes, at - begin);
        at = stop;
      }
      return out;
    },
    async finish() {
      if (done) return;
      await flush();
      if (flushed !== size)
        throw new AttentionError('NETWORK', `${repo}: ${path}: ${flushed} of ${size} bytes cached`);
      await guarded(() => writeFile(dir, 'done', String(size)), undo, `${repo}: ${path}`);
    },
    close: flush, // what was received is kept: the next load resumes after it
  };
}

const refName = (revision) => encodeURIComponent(revision);

async function readJson(dir, name) {
  const h = await present(dir.getFileHandle(name));
  return h ? JSON.parse(await (await h.getFile()).text()) : null;
}

/** The cache of one repository for loadPretrained({ hub }) (hub.js's backend). */
export async function opfsBackend(o) {
  const repoDir = await folder([repoFolder(o.repo)]);
  return {
    store: (f) => opfsStore(repoDir, o.repo, f),
    async offline() {
      let commit = o.revision;
      if (!isCommit(commit)) {
        const h = await present(
          (await folder([repoFolder(o.repo), 'refs'])).getFileHandle(refName(o.revision)),
        );
        commit = h ? (await (await h.getFile()).text()).trim() : null;
      }
      const snapshot =
        commit && (await readJson(await folder([repoFolder(o.repo), 'snapshots']), `${commit}.json`));
      return snapshot ? { commit, files: snapshot.files } : null;
    },
    async link(commit, files) {
      const snapshots = await folder([repoFolder(o.repo), 'snapshots']);
      const old = (await readJson(snapshots, `${commit}.json`))?.files ?? [];
      const byPath = new Map(
        [...old, ...files].map((f) => [f.path, { path: f.path, size: f.size, key: f.key }]),
      );
      const list = { repo: o.repo, commit, files: [...byPath.values()] };
      const undo = async () => {};
      await guarded(() => writeFile(snapshots, `${commit}.json`, JSON.stringify(list)), undo, o.repo);
      if (isCommit(o.revision)) return;
      const refs = await folder([repoFolder(o.repo), 'refs']);
      await guarded(() => writeFile(refs, refName(o.revision), commit), undo, o.repo);
    },
  };
}

// Each repository folder of the cache: [name, handle].
async function repoFolders() {
  const out = [];
  for await (const [name, h] of (await folder([])).entries())
    if (h.kind === 'directory' && name.startsWith('models--')) out.push([name, h]);
  return out;
}

/** Every snapshot cached: [{ repo, commit, revisions, files: [{ path, size }], size }]. */
export async function listOpfs() {
  const entries = [];
  for (const [, dir] of await repoFolders()) {
    const refs = new Map();
    const refsDir = await present(dir.getDirectoryHandle('refs'));
    if (refsDir)
      for await (const [name, h] of refsDir.entries()) {
        const c = (await (await h.getFile()).text()).trim();
        refs.set(c, [...(refs.get(c) ?? []), decodeURIComponent(name)]);
      }
    const snapshots = await present(dir.getDirectoryHandle('snapshots'));
    if (!snapshots) continue;
    for await (const [name] of snapshots.entries()) {
      const s = await readJson(snapshots, name);
      const files = s.files.map((f) => ({ path: f.path, size: f.size }));
      entries.push({
        repo: s.repo,
        commit: s.commit,
        revisions: refs.get(s.commit) ?? [],
        files,
        size: files.reduce((n, f) => n + f.size, 0),
      });
    }
  }
  return entries;
}

/** Deletes a snapshot, the refs naming it and the blobs (and partial downloads) no other snapshot lists. */
export async function deleteOpfsEntry({ repo, commit }) {
  const name = repoFolder(repo);
  const dir = await present(folder([name], false));
  if (!dir) return;
  const snapshots = await dir.getDirectoryHandle('snapshots', { create: true });
  await present(snapshots.removeEntry(`${commit}.json`));
  const refsDir = await dir.getDirectoryHandle('refs', { create: true });
  for await (const [ref, h] of refsDir.entries())
    if ((await (await h.getFile()).text()).trim() === commit) await refsDir.removeEntry(ref);
  const kept = new Set();
  for await (const [n] of snapshots.entries())
    for (const f of (await readJson(snapshots, n)).files) kept.add(f.key);
  if (kept.size === 0) return (await folder([])).removeEntry(name, { recursive: true });
  const blobs = await dir.getDirectoryHandle('blobs', { create: true });
  for (const key of await keysOf(blobs))
    if (!kept.has(key)) await blobs.removeEntry(key, { recursive: true });
}

async function keysOf(dir) {
  const keys = [];
  for await (const [k] of dir.entries()) keys.push(k);
  return keys;
}
