// Threads (docs/threads.md): how many threads init() asks for, whether this engine can run
// them, loading a threaded build (Emscripten pthreads) with its pool started, and the fallback to one
// thread. Internal: index.js exports init's `threads` option, threadCount() and setThreadCount().
import { AttentionError } from '../errors.js';
import { describe } from '../options.js';

/** 'auto' asks for the hardware's threads, at most this many (more rarely pays on our shapes). */
export const AUTO_THREADS_MAX = 8;
/** The most threads init() accepts. */
export const MAX_THREADS = 64;
/** How long the threaded module and its pool may take to start before init() falls back to one thread. */
export const POOL_START_TIMEOUT_MS = 15_000;

const nodeProcess = () => (globalThis.process?.versions?.node ? globalThis.process : null);

/** Hardware threads: os.availableParallelism() in Node, navigator.hardwareConcurrency in browsers. */
export function hardwareThreads() {
  const os = nodeProcess()?.getBuiltinModule?.('node:os');
  const n = os?.availableParallelism?.() ?? globalThis.navigator?.hardwareConcurrency ?? 1;
  return Number.isInteger(n) && n >= 1 ? n : 1;
}

/** init's `threads` option as a count: 'auto' = min(hardware threads, 8), or a whole number ≥ 1. */
export function resolveThreads(value = 'auto') {
  if (value === 'auto') return Math.min(hardwareThreads(), AUTO_THREADS_MAX);
  if (Number.isInteger(value) && value >= 1 && value <= MAX_THREADS) return value;
  throw new AttentionError(
    'INVALID_ARGUMENT',
    `threads must be 'auto' or a whole number in [1, ${MAX_THREADS}], got ${describe(value)}`,
  );
}

/**
 * Why threads cannot run here, or null when they can: Node (≥ 20.16, whose
 * process.getBuiltinModule the threaded glue's shim needs) always; a browser page or worker only
 * when cross-origin isolated (SharedArrayBuffer exists only there).
 */
export function whyNoThreads() {
  if (typeof SharedArrayBuffer !== 'function' || typeof Atomics !== 'object') {
    return 'SharedArrayBuffer is not available (the page is not cross-origin isolated: serve it with COOP/COEP, docs/threads.md)';
  }
  const node = nodeProcess();
  if (node)
    return typeof node.getBuiltinModule === 'function'
      ? null
      : `Node ${node.versions.node} is older than 20.16`;
  if (globalThis.crossOriginIsolated !== true)
    return 'the page is not cross-origin isolated (docs/threads.md)';
  if (typeof Worker !== 'function') return 'this context cannot start Web Workers';
  return null;
}

async function wasmBytes(url) {
  if (url.protocol === 'file:') return nodeProcess().getBuiltinModule('node:fs').promises.readFile(url);
  const response = await fetch(url, { credentials: 'same-origin' });
  if (!response.ok) throw new Error(`fetching ${url} failed: HTTP ${response.status}`);
  return response.arrayBuffer();
}

function rejectAfter(ms, what) {
  let timer;
  const promise = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

// Node: the pool's worker_threads must not keep the process alive (browsers' Workers have no unref).
function unrefWorkers(m) {
  for (const w of [...(m.PThread?.unusedWorkers ?? []), ...(m.PThread?.runningWorkers ?? [])]) w.unref?.();
}

/**
 * Instantiates a threaded glue (`createModule`) with the .wasm at `wasmUrl` and starts a pool of
 * `threads` (the caller and threads − 1 workers, preallocated: a page's main thread cannot wait for
 * a worker to start). The .wasm is handed over through instantiateWasm, with its compiled module (the
 * glue posts it to every worker); locateFile would also answer the worker script's path. With
 * `workerBase` (init's wasmBaseUrl + 'threads/', for bundlers that copy dist/threads/ themselves) the
 * pool's worker script is taken from there; without it the glue finds it through its own
 * `new URL('….worker.js', import.meta.url)`, which Vite follows. Rejects when the module or the pool
 * does not start within `timeoutMs` (the caller falls back to one thread).
 */
export async function startThreaded(
  createModule,
  wasmUrl,
  threads,
  { workerBase = null, timeoutMs = POOL_START_TIMEOUT_MS } = {},
) {
  let failInstantiate;
  const instantiateFailed = new Promise((_, reject) => {
    failInstantiate = reject;
  });
  const settings = {
    attnThreads: threads - 1,
    instantiateWasm(imports, receive) {
      wasmBytes(wasmUrl)
        .then((bytes) => WebAssembly.instantiate(bytes, imports))
        .then((r) => receive(r.instance, r.module), failInstantiate);
      return {};
    },
  };
  // A URL object, not a string: Node's Worker takes file: URLs only as URL objects.
  if (workerBase) settings.locateFile = (path) => new URL(path, workerBase);
  const timeout = rejectAfter(timeoutMs, 'starting the threaded module');
  try {
    const m = await Promise.race([createModule(settings), instantiateFailed, timeout.promise]);
    unrefWorkers(m);
    const size = m._startThreadPool(threads);
    while (m._threadPoolReady() < size) {
      await Promise.race([new Promise((resolve) => setTimeout(resolve, 2)), timeout.promise]);
    }
    unrefWorkers(m);
    return m;
  } catch (error) {
    settings.PThread?.terminateAllThreads?.(); // the glue's Module is `settings`: stop what started
    throw error;
  } finally {
    timeout.cancel();
  }
}

/** threadCount / setThreadCount over one wrapper's runtime (a single-thread build has one thread). */
export function threadsApi({ requireCore }) {
  return {
    /** Threads the kernels use now (1 … the pool init() started). */
    threadCount() {
      const m = requireCore();
      return m._threadCount ? m._threadCount() : 1;
    },
    /** Uses n threads from now on: 1 … the pool size init() started; anything else is INVALID_ARGUMENT. */
    setThreadCount(n) {
      const m = requireCore();
      const size = m._threadPoolSize ? m._threadPoolSize() : 1;
      if (!Number.isInteger(n) || n < 1 || n > size) {
        const why = m._threadPoolSize
          ? `the pool init() started has ${size}`
          : 'this build runs on one thread';
        throw new AttentionError(
          'INVALID_ARGUMENT',
          `setThreadCount: n must be a whole number in [1, ${size}] (${why}), got ${describe(n)}`,
        );
      }
      if (m._setThreadCount && !m._setThreadCount(n)) {
        throw new AttentionError('INVALID_ARGUMENT', `setThreadCount: the pool refused ${n} threads`);
      }
    },
  };
}
