// The Hugging Face Hub's HTTP API as loadPretrained({ hub }) calls it (as huggingface_hub and
// huggingface.js do): the options checked, the model info of one revision with its files (sizes, LFS
// sha256), a file's resolve URL, and every HTTP failure as a named AttentionError. The token goes in
// an Authorization header to the Hub's origin only (fetch drops it on the redirect to the storage
// origin), never in a URL and never stored.
import { AttentionError } from '../errors.js';
import { checkOptions, describe } from '../options.js';
import { implicitToken } from './token.js';

export const HUB_URL = 'https://huggingface.co';
const kRepo = /^[A-Za-z0-9][\w.-]{0,95}\/[A-Za-z0-9][\w.-]{0,95}$/;
const kRevision = /^[\w.-]+(\/[\w.-]+)*$/;
const kCommit = /^[0-9a-f]{40}$/;

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);
const env = (name) => globalThis.process?.env?.[name] || undefined; // browsers have no environment

/** The AttentionError of an aborted load. */
export const aborted = () => new AttentionError('ABORTED', 'the load was aborted (its signal)');

/** Throws ABORTED when `signal` has fired. */
export function checkSignal(signal) {
  if (signal?.aborted) throw aborted();
}

/** The signal option checked: undefined, or an AbortSignal. */
export function signalOption(signal) {
  if (
    signal != null &&
    (typeof signal.aborted !== 'boolean' || typeof signal.addEventListener !== 'function')
  )
    throw invalid(`signal must be an AbortSignal, got ${describe(signal)}`);
  return signal ?? undefined;
}

// A repository name or revision that could leave its folder (".." parts) is refused: both become paths.
function noDotParts(value, what) {
  if (value.split('/').some((p) => p === '.' || p === '..'))
    throw invalid(`${what} ${describe(value)} has a "." or ".." part`);
}

/** loadPretrained's hub options checked, with HF_ENDPOINT and the implicit token (Node: token.js) as defaults. */
export function hubOptions(options) {
  const o = checkOptions(
    options,
    ['hub', 'revision', 'file', 'hubUrl', 'token', 'cache', 'cacheDir', 'signal'],
    'loadPretrained hub option',
  );
  const { hub, revision = 'main', file, cache = true, cacheDir } = o;
  if (typeof hub !== 'string' || !kRepo.test(hub))
    throw invalid(`hub must name a repository as "owner/name", got ${describe(hub)}`);
  noDotParts(hub, 'hub');
  if (typeof revision !== 'string' || !kRevision.test(revision))
    throw invalid(`revision must be a branch, tag or commit, got ${describe(revision)}`);
  noDotParts(revision, 'revision');
  if (file !== undefined && (typeof file !== 'string' || file === ''))
    throw invalid(`file must be a GGUF file name or a quantization such as 'Q4_K_M', got ${describe(file)}`);
  if (typeof cache !== 'boolean') throw invalid(`cache must be true or false, got ${describe(cache)}`);
  if (cacheDir !== undefined && (typeof cacheDir !== 'string' || cacheDir === ''))
    throw invalid(`cacheDir must be a folder path, got ${describe(cacheDir)}`);
  const token = o.token ?? implicitToken();
  if (token !== undefined && (typeof token !== 'string' || !/^[\x21-\x7e]+$/.test(token)))
    throw invalid('token must be a Hugging Face access token (a string of printable characters)');
  return {
    repo: hub,
    revision,
    file,
    hubUrl: hubOrigin(o.hubUrl ?? env('HF_ENDPOINT') ?? HUB_URL),
    token,
    cache,
    cacheDir,
    signal: signalOption(o.signal),
  };
}

// The Hub's base URL without a trailing slash, checked to be http(s) with no credentials in it.
function hubOrigin(value) {
  let url;
  try {
    url = new URL(value);
  } catch {
    throw invalid(`hubUrl must be a URL such as ${HUB_URL}, got ${describe(value)}`);
  }
  if (!/^https?:$/.test(url.protocol) || url.username || url.password || url.search || url.hash)
    throw invalid(
      `hubUrl must be an http(s) URL with no credentials, query or fragment, got ${describe(value)}`,
    );
  return url.href.replace(/\/+$/, '');
}

// The named error of an HTTP status (the Hub's X-Error-Code / X-Error-Message say which thing is missing).
function statusError(response, what, token) {
  const code = response.headers.get('x-error-code');
  const said = response.headers.get('x-error-message');
  const detail = said ? ` (the Hub says: ${said})` : '';
  if (response.status === 401)
    return new AttentionError(
      'NEEDS_TOKEN',
      token
        ? `${what}: the Hub refused the token (401)${detail}`
        : `${what} needs a token: the repository is gated, private or does not exist (401); pass loadPretrained({ token }), set HF_TOKEN or log in with "hf auth login"${detail}`,
    );
  if (response.status === 403)
    return new AttentionError(
      'NO_ACCESS',
      `${what}: no access with this token (403): a gated repository needs its terms accepted on its page${detail}`,
    );
  if (response.status === 404) {
    const which =
      code === 'RevisionNotFound'
        ? 'no such revision'
        : code === 'EntryNotFound'
          ? 'no such file'
          : 'not found';
    return new AttentionError('NOT_FOUND', `${what}: ${which} (404)${detail}`);
  }
  return new AttentionError('NETWORK', `${what}: the server answered HTTP ${response.status}${detail}`);
}

/** fetch with the token to the Hub, failures named: NETWORK, ABORTED, NEEDS_TOKEN, NO_ACCESS, NOT_FOUND. */
export async function hubFetch(url, { token, signal, headers = {}, what }) {
  checkSignal(signal);
  let response;
  try {
    const auth = token ? { Authorization: `Bearer ${token}` } : {};
    response = await fetch(url, { headers: { ...headers, ...auth }, signal, redirect: 'follow' });
  } catch (error) {
    if (signal?.aborted) throw aborted();
    throw new AttentionError(
      'NETWORK',
      `${what}: the network failed (${error.cause?.message ?? error.message})`,
    );
  }
  if (response.ok) return response;
  await response.body?.cancel().catch(() => {});
  throw statusError(response, what, token);
}

// One file of the listing checked: a relative path with no "." or ".." part, a size, a cache key.
function listedFile(s, repo) {
  const path = s?.rfilename;
  const size = s?.lfs?.size ?? s?.size;
  const key = s?.lfs?.sha256 ?? s?.blobId;
  const bad = (why) =>
    new AttentionError('NETWORK', `the Hub's file list of ${repo} is not understood: ${why}`);
  if (typeof path !== 'string' || path === '' || path.startsWith('/') || path.includes('\\'))
    throw bad(`file name ${describe(path)}`);
  if (path.split('/').some((p) => p === '' || p === '.' || p === '..'))
    throw bad(`file name ${describe(path)}`);
  if (!Number.isSafeInteger(size) || size < 0) throw bad(`${path} has no size`);
  if (typeof key !== 'string' || !/^[0-9a-f]{40,64}$/.test(key))
    throw bad(`${path} has no sha256 or blob id`);
  return { path, size, key };
}

/** The revision's commit and files: { commit, files: [{ path, size, key (LFS sha256, else git blob id) }] }. */
export async function modelInfo(o) {
  const url = `${o.hubUrl}/api/models/${o.repo}/revision/${encodeURIComponent(o.revision)}?blobs=true`;
  const what = `${o.repo} at ${o.revision}`;
  const response = await hubFetch(url, { token: o.token, signal: o.signal, what });
  let info;
  try {
    info = await response.json();
  } catch (error) {
    if (o.signal?.aborted) throw aborted();
    throw new AttentionError('NETWORK', `${what}: the model info could not be read (${error.message})`);
  }
  if (typeof info?.sha !== 'string' || !kCommit.test(info.sha) || !Array.isArray(info.siblings))
    throw new AttentionError('NETWORK', `${what}: the Hub's answer has no commit or file list`);
  return { commit: info.sha, files: info.siblings.map((s) => listedFile(s, o.repo)) };
}

/** The resolve URL of a file at a commit (the Hub redirects LFS files to its storage). */
export function fileUrl(o, commit, path) {
  return `${o.hubUrl}/${o.repo}/resolve/${commit}/${path.split('/').map(encodeURIComponent).join('/')}`;
}

export const isCommit = (revision) => kCommit.test(revision);
