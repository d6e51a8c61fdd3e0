// loadPretrained({ hub: 'owner/name' }): the repository's files listed through the Hub's API (or, with
// the network gone, from the cache), the GGUF file or safetensors folder picked (select.js), each file
// opened as a range source over HTTP through the cache (remote.js), and the model loaded by the path
// that loads the reader's own files. After the load, the cache's copy is completed and linked under
// the revision's commit. hubCache lists and deletes what the cache holds.
import { AttentionError } from '../errors.js';
import { checkOptions, describe } from '../options.js';
import { fileUrl, hubOptions, modelInfo } from './api.js';
import { pickFiles, shardFiles } from './select.js';
import { downloadProgress, hubSource } from './remote.js';
import {
  cacheRoot,
  cachedListing,
  deleteNodeEntry,
  hasNodeCache,
  linkSnapshot,
  listNodeCache,
  localStore,
  nodeStore,
} from './node-cache.js';
import { deleteOpfsEntry, hasOpfs, listOpfs, opfsBackend } from './opfs-cache.js';

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);
const kHubKeys = ['hub', 'revision', 'file', 'hubUrl', 'token', 'cache', 'cacheDir', 'signal'];
/** The loadPretrained options a Hub load takes besides its own (the Hub gives the files). */
const kPassed = ['memoryLimit', 'onProgress', 'chatTemplate', 'activations', 'offHeap'];

// The cache of this engine: Node's folder, the browser's OPFS, or none (cache: false, or no OPFS).
async function cacheBackend(o) {
  if (!o.cache) return null;
  if (hasNodeCache()) {
    const root = cacheRoot(o.cacheDir);
    return {
      store: (f) => (f.local ? localStore(f) : nodeStore(root, o.repo, f)),
      offline: () => cachedListing(root, o.repo, o.revision),
      link: (commit, files) => linkSnapshot(root, o.repo, o.revision, commit, files),
    };
  }
  if (o.cacheDir !== undefined)
    throw invalid('cacheDir names the Node cache folder; a browser caches in its origin storage');
  return hasOpfs() ? opfsBackend(o) : null;
}

// The revision's files from the Hub, or from the cache when the network fails.
async function listing(o, backend) {
  try {
    return await modelInfo(o);
  } catch (error) {
    if (!(error instanceof AttentionError && error.code === 'NETWORK') || !backend) throw error;
    const cached = await backend.offline();
    if (!cached)
      throw new AttentionError(
        'NETWORK',
        `${error.message}; the cache has no copy of ${o.repo} at ${o.revision}`,
      );
    return { ...cached, offline: true };
  }
}

// loadPretrained's inputs of a safetensors folder: the JSON files parsed, the weights as range sources.
async function folderInputs(pick, files, o, open) {
  const text = async (f) => new TextDecoder().decode(await (await open(f)).read(0, f.size));
  const json = async (f) => {
    const t = await text(f);
    try {
      return JSON.parse(t);
    } catch (error) {
      throw invalid(`${o.repo}: ${f.path} is not JSON (${error.message})`);
    }
  };
  const e = pick.extra;
  const out = { config: await json(pick.config) };
  if (pick.weights) out.weights = await open(pick.weights);
  else {
    out.weightsIndex = await json(pick.index);
    const shards = shardFiles(out.weightsIndex, files, o.repo);
    out.weights = Object.fromEntries(await Promise.all(shards.map(async (f) => [f.path, await open(f)])));
  }
  if (e['tokenizer.json']) out.tokenizer = await json(e['tokenizer.json']);
  if (e['tokenizer_config.json']) out.tokenizerConfig = await json(e['tokenizer_config.json']);
  if (e['generation_config.json']) out.generationConfig = await json(e['generation_config.json']);
  if (e['chat_template.jinja']) out.chatTemplate = await text(e['chat_template.jinja']);
  return out;
}

// Every opened file completed in the cache (what the loader skipped: padding, unread ends) and linked.
async function keep(opened, list, backend) {
  for (const f of opened) {
    await f.complete();
    await f.store.finish();
  }
  await backend.link(
    list.commit,
    opened.map((f) => f.file),
  );
}

/**
 * Loads a Hub repository's model with `load` (loadPretrained over the files): options are the hub
 * options plus those of kPassed; onProgress(done, total, { phase: 'download' | 'load', … }).
 */
export async function loadFromHub(options, load) {
  const given = Object.keys(options).filter((k) => !kHubKeys.includes(k) && !kPassed.includes(k));
  if (given.length)
    throw invalid(
      `hub cannot be given with ${given.join(', ')}: the repository holds them (or the option is unknown)`,
    );
  const o = hubOptions(Object.fromEntries(kHubKeys.filter((k) => k in options).map((k) => [k, options[k]])));
  const { onProgress } = options;
  if (onProgress != null && typeof onProgress !== 'function')
    throw invalid(`onProgress must be a function, got ${describe(onProgress)}`);
  const backend = await cacheBackend(o);
  const list = await listing(o, backend);
  const pick = pickFiles(list.files, o.file, o.repo);
  const progress = downloadProgress(0, onProgress);
  const opened = [];
  const open = async (f) => {
    const store = backend ? await backend.store(f) : null;
    const url = fileUrl(o, list.commit, f.path);
    progress.total += f.size;
    const h = hubSource(
      { repo: o.repo, name: f.path, size: f.size, url, token: o.token, signal: o.signal },
      store,
      progress,
    );
    opened.push({ file: f, store, complete: h.complete });
    return h.source;
  };
  try {
    const inputs =
      pick.kind === 'gguf'
        ? { gguf: await Promise.all(pick.files.map(open)) }
        : await folderInputs(pick, list.files, o, open);
    const passed = Object.fromEntries(
      kPassed.filter((k) => options[k] !== undefined).map((k) => [k, options[k]]),
    );
    const model = await load({
      ...inputs,
      ...passed,
      signal: o.signal,
      onProgress: onProgress && ((done, total) => onProgress(done, total, { phase: 'load' })),
    });
    try {
      if (backend && !list.offline) await keep(opened, list, backend);
    } catch (error) {
      model.dispose();
      throw error;
    }
    return model;
  } finally {
    for (const f of opened) await f.store?.close().catch(() => {});
  }
}

// The files of a pick that a load reads: a GGUF file's parts, or the folder's files. A sharded folder
// counts every .safetensors file at the repository's root (its index, read at load time, names them).
function pickedFiles(pick, files) {
  if (pick.kind === 'gguf') return pick.files;
  const shards = pick.weights ? [pick.weights] : files.filter((f) => /^[^/]+\.safetensors$/.test(f.path));
  return [pick.config, ...(pick.index ? [pick.index] : []), ...shards, ...Object.values(pick.extra)];
}

/**
 * What loadPretrained({ hub }) with the same options would download, from the Hub's listing alone (no
 * byte of a file fetched): { repo, revision, commit, kind: 'gguf' | 'safetensors', files: [{ path,
 * size }], size }. Errors as a load's (NEEDS_TOKEN, NO_ACCESS, NOT_FOUND, NETWORK, ABORTED).
 */
export async function hubFiles(options) {
  const keys = ['hub', 'revision', 'file', 'hubUrl', 'token', 'signal'];
  const o = hubOptions(checkOptions(options, keys, 'hubFiles option'));
  const list = await modelInfo(o);
  const pick = pickFiles(list.files, o.file, o.repo);
  const files = pickedFiles(pick, list.files).map(({ path, size }) => ({ path, size }));
  return {
    repo: o.repo,
    revision: o.revision,
    commit: list.commit,
    kind: pick.kind === 'gguf' ? 'gguf' : 'safetensors',
    files,
    size: files.reduce((n, f) => n + f.size, 0),
  };
}

// hubCache's options: cacheDir (Node).
function cacheOptions(options) {
  const { cacheDir } = checkOptions(options, ['cacheDir'], 'hubCache option');
  if (cacheDir !== undefined && (typeof cacheDir !== 'string' || cacheDir === ''))
    throw invalid(`cacheDir must be a folder path, got ${describe(cacheDir)}`);
  return cacheDir;
}

/** hubCache: what the cache holds, [{ repo, commit, revisions, files: [{ path, size }], size }], and delete(entry). */
export const hubCache = Object.freeze({
  async list(options = {}) {
    const cacheDir = cacheOptions(options);
    if (hasNodeCache()) return listNodeCache(cacheRoot(cacheDir));
    return hasOpfs() ? listOpfs() : [];
  },
  async delete(entry, options = {}) {
    const cacheDir = cacheOptions(options);
    if (
      typeof entry?.repo !== 'string' ||
      !/^[0-9a-f]{40}$/.test(entry?.commit ?? '') ||
      !/^[\w.-]+\/[\w.-]+$/.test(entry.repo)
    )
      throw invalid(`delete takes an entry of hubCache.list() ({ repo, commit }), got ${describe(entry)}`);
    if (entry.repo.split('/').some((p) => p === '..' || p === '.'))
      throw invalid(`no repository ${describe(entry.repo)}`);
    if (hasNodeCache()) return deleteNodeEntry(cacheRoot(cacheDir), entry);
    if (hasOpfs()) return deleteOpfsEntry(entry);
  },
});
