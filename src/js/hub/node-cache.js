// The Node cache of Hub files, in huggingface_hub's layout so that files Python downloaded are read
// here and the other way round: <root>/models--owner--name/blobs/<LFS sha256 or git blob id> (a partial
// download is <key>.incomplete, appended to), snapshots/<commit>/<path> (relative links to the blobs),
// refs/<revision> (the commit). The root: cacheDir, else HF_HUB_CACHE, HF_HOME/hub or
// ~/.cache/huggingface/hub. Node's modules come through process.getBuiltinModule, so bundlers for the
// browser see no Node import.
import { AttentionError } from '../errors.js';
import { isCommit } from './api.js';

const builtin = (name) => globalThis.process.getBuiltinModule(name);
const fsp = () => builtin('node:fs/promises');
const pathMod = () => builtin('node:path');

/** Whether this is Node with process.getBuiltinModule (the Node cache needs it). */
export const hasNodeCache = () =>
  Boolean(globalThis.process?.versions?.node) && typeof globalThis.process.getBuiltinModule === 'function';

/** The cache folder: cacheDir, else HF_HUB_CACHE, HF_HOME/hub, XDG_CACHE_HOME/huggingface/hub, ~/.cache/huggingface/hub. */
export function cacheRoot(cacheDir) {
  const path = pathMod();
  const env = globalThis.process.env;
  if (cacheDir) return path.resolve(cacheDir);
  if (env.HF_HUB_CACHE) return path.resolve(env.HF_HUB_CACHE);
  if (env.HF_HOME) return path.join(path.resolve(env.HF_HOME), 'hub');
  const base = env.XDG_CACHE_HOME || path.join(builtin('node:os').homedir(), '.cache');
  return path.join(base, 'huggingface', 'hub');
}

export const repoFolder = (repo) => `models--${repo.replace('/', '--')}`;

// Reads bytes [begin, end) of an open file.
async function readAt(fh, begin, end) {
  const out = new Uint8Array(end - begin);
  for (let at = 0; at < out.length;) {
    const { bytesRead } = await fh.read(out, at, out.length - at, begin + at);
    if (bytesRead === 0) throw new AttentionError('NETWORK', `the cached file ended at byte ${begin + at}`);
    at += bytesRead;
  }
  return out;
}

// A store over a file already complete (a blob, or a snapshot file when offline).
async function completeStore(file, size) {
  const fh = await fsp().open(file, 'r');
  return {
    have: size,
    append: null,
    read: (b, e) => readAt(fh, b, e),
    finish: async () => {},
    close: () => fh.close(),
  };
}

/** The store of one file's blob (remote.js): complete, or its partial download opened for appending. */
export async function nodeStore(root, repo, { key, size }) {
  const fs = fsp();
  const blobs = pathMod().join(root, repoFolder(repo), 'blobs');
  await fs.mkdir(blobs, { recursive: true });
  const blob = pathMod().join(blobs, key);
  if ((await fs.stat(blob).catch(() => null))?.size === size) return completeStore(blob, size);
  const partial = `${blob}.incomplete`;
  let fh = await fs.open(partial, 'a+');
  let have = (await fh.stat()).size;
  if (have > size) {
    await fh.truncate(0);
    have = 0;
  }
  return {
    get have() {
      return have;
    },
    async append(bytes) {
      for (let at = 0; at < bytes.length;) at += (await fh.write(bytes, at, bytes.length - at)).bytesWritten;
      have += bytes.length;
    },
    read: (b, e) => readAt(fh, b, e),
    async finish() {
      await fh.close();
      await fs.rename(partial, blob);
      fh = await fs.open(blob, 'r');
    },
    close: () => fh.close(),
  };
}

/** Links snapshots/<commit>/<path> to each file's blob and writes refs/<revision> (a branch or tag). */
export async function linkSnapshot(root, repo, revision, commit, files) {
  const fs = fsp();
  const path = pathMod();
  const dir = path.join(root, repoFolder(repo));
  for (const f of files) {
    const link = path.join(dir, 'snapshots', commit, ...f.path.split('/'));
    const blob = path.join(dir, 'blobs', f.key);
    await fs.mkdir(path.dirname(link), { recursive: true });
    await fs.rm(link, { force: true });
    // huggingface_hub copies where links are not allowed (Windows without developer mode); so do we
    await fs.symlink(path.relative(path.dirname(link), blob), link).catch(() => fs.copyFile(blob, link));
  }
  if (!isCommit(revision)) {
    const ref = path.join(dir, 'refs', ...revision.split('/'));
    await fs.mkdir(path.dirname(ref), { recursive: true });
    await fs.writeFile(ref, commit);
  }
}

// Every file under a folder: [{ path (with "/"), full }].
async function walk(dir, prefix = '') {
  const out = [];
  for (const e of await fsp()
    .readdir(dir, { withFileTypes: true })
    .catch(() => [])) {
    const full = pathMod().join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(full, `${prefix}${e.name}/`)));
    else out.push({ path: `${prefix}${e.name}`, full });
  }
  return out;
}

/**
 * The listing of a revision from the cache alone (no network): { commit, files: [{ path, size, key,
 * local }] }, or null when the cache has no snapshot of it.
 */
export async function cachedListing(root, repo, revision) {
  const path = pathMod();
  const dir = path.join(root, repoFolder(repo));
  let commit = revision;
  if (!isCommit(revision)) {
    commit = (
      await fsp()
        .readFile(path.join(dir, 'refs', ...revision.split('/')), 'utf8')
        .catch(() => '')
    ).trim();
    if (!isCommit(commit)) return null;
  }
  const files = [];
  for (const f of await walk(path.join(dir, 'snapshots', commit))) {
    const stat = await fsp()
      .stat(f.full)
      .catch(() => null); // a link to a deleted blob is left out
    if (!stat?.isFile()) continue;
    const target = await fsp()
      .readlink(f.full)
      .catch(() => null);
    files.push({ path: f.path, size: stat.size, key: target ? path.basename(target) : null, local: f.full });
  }
  return files.length ? { commit, files } : null;
}

/** The store of a snapshot file served offline. */
export const localStore = (file) => completeStore(file.local, file.size);

// The refs of a repository folder: commit → [revision names].
async function refsOf(dir) {
  const byCommit = new Map();
  for (const f of await walk(pathMod().join(dir, 'refs'))) {
    const commit = (await fsp().readFile(f.full, 'utf8')).trim();
    byCommit.set(commit, [...(byCommit.get(commit) ?? []), f.path]);
  }
  return byCommit;
}

/** Every snapshot of the cache: [{ repo, commit, revisions, files: [{ path, size }], size }]. */
export async function listNodeCache(root) {
  const entries = [];
  const repos = await fsp()
    .readdir(root, { withFileTypes: true })
    .catch(() => []);
  for (const r of repos.filter((e) => e.isDirectory() && e.name.startsWith('models--'))) {
    const dir = pathMod().join(root, r.name);
    const repo = r.name.slice('models--'.length).replace('--', '/');
    const refs = await refsOf(dir);
    for (const c of await fsp()
      .readdir(pathMod().join(dir, 'snapshots'))
      .catch(() => [])) {
      const files = [];
      for (const f of await walk(pathMod().join(dir, 'snapshots', c))) {
        const stat = await fsp()
          .stat(f.full)
          .catch(() => null);
        if (stat?.isFile()) files.push({ path: f.path, size: stat.size });
      }
      const size = files.reduce((n, f) => n + f.size, 0);
      entries.push({ repo, commit: c, revisions: refs.get(c) ?? [], files, size });
    }
  }
  return entries;
}

/** Deletes a snapshot, the refs naming it and the blobs (and partial downloads) no snapshot links to. */
export async function deleteNodeEntry(root, { repo, commit }) {
  const fs = fsp();
  const path = pathMod();
  const dir = path.join(root, repoFolder(repo));
  await fs.rm(path.join(dir, 'snapshots', commit), { recursive: true, force: true });
  for (const f of await walk(path.join(dir, 'refs')))
    if ((await fs.readFile(f.full, 'utf8')).trim() === commit) await fs.rm(f.full);
  const kept = new Set();
  for (const f of await walk(path.join(dir, 'snapshots')))
    kept.add(await fs.realpath(f.full).catch(() => f.full));
  if (kept.size === 0) return fs.rm(dir, { recursive: true, force: true });
  for (const b of await walk(path.join(dir, 'blobs')))
    if (!kept.has(await fs.realpath(b.full))) await fs.rm(b.full);
}
