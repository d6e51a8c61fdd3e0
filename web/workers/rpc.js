// The one protocol every worker of the pages speaks (the demo's model worker, <patching-view>'s
// interp worker, <attention-trainer>'s train worker): the page's half is WorkerClient, the worker's
// half is serve(). Workers are same-origin module files (the pages' strict CSP allows no blob: or eval).
//
// Page → worker: { rpc: 'call', id, type, args } (id 0: no answer is awaited) | { rpc: 'cancel', id }.
// Worker → page: { rpc: 'result', id, value } | { rpc: 'error', id, error: { name, code, message } } |
//   { rpc: 'progress', id, done, total } | { rpc: 'event', id, data } (id null: an event of the worker,
//   not of a call — the trainer's snapshots).
// Errors are rebuilt in the page with their class and code: an AttentionError arrives as an
// AttentionError, an abort as a DOMException named AbortError. An AbortSignal cannot cross to a worker:
// the page sends a cancel, and the job (which sees its own AbortSignal, ctx.signal) stops at its next
// batch boundary. Values and events may carry transferables (transfer() in the worker, `transfer` here).
import { AttentionError } from '../../src/js/errors.js';

const kTransfer = Symbol('transfer');

/** An AbortError (a DOMException, as AbortSignal's own reasons are). */
export const abortError = (message = 'The operation was aborted') => new DOMException(message, 'AbortError');

/** A plain, cloneable description of an error: { name, code, message } (code only where it has one). */
export function serializeError(error) {
  const out = { name: error?.name ?? 'Error', message: error?.message ?? String(error) };
  if (error?.code !== undefined) out.code = error.code;
  return out;
}

/** The error that `serializeError` described, rebuilt with the same class and code. */
export function rebuildError({ name, code, message }) {
  if (name === 'AttentionError') return new AttentionError(code, message);
  if (name === 'AbortError') return abortError(message);
  const error = new Error(message);
  error.name = name;
  if (code !== undefined) error.code = code;
  return error;
}

// ---- the page's half ----------------------------------------------------------------------------

/**
 * A worker spoken to by calls. `create()` makes it — `() => new Worker(new URL('…', import.meta.url),
 * { type: 'module' })`, written out at the caller so that bundlers (Vite) see the worker and bundle it.
 * The worker starts on the first call (and again after it failed);
 * `onEvent(data)` hears its own events (those of no call), `onFail(event)` is told when it dies (an
 * uncaught error in it, or a script that did not load) and returns the message the calls under way
 * reject with.
 */
export class WorkerClient {
  #create;
  #onEvent;
  #onFail;
  #worker = null;
  #pending = new Map(); // id → { onProgress, onEvent, done(error, value) }
  #lastId = 0;

  constructor(create, { onEvent, onFail } = {}) {
    this.#create = create;
    this.#onEvent = onEvent;
    this.#onFail = onFail;
    /** The error of the last failure (null while none), set when the worker died. */
    this.failure = null;
  }

  /** Whether a worker is running now. */
  get started() {
    return this.#worker !== null;
  }

  #start() {
    if (this.#worker) return this.#worker;
    const worker = this.#create();
    worker.addEventListener('message', (e) => this.#onMessage(e.data));
    worker.addEventListener('error', (e) => {
      e.preventDefault(); // said by onFail and by the calls' rejections
      this.#fail(e);
    });
    this.failure = null;
    this.#worker = worker;
    return worker;
  }

  /** The worker died: it is stopped, the calls under way reject, and onFail says so. */
  #fail(event) {
    const message = this.#onFail?.(event) ?? `the worker failed: ${event?.message || 'see the console'}`;
    this.failure = new Error(message);
    this.#stop(this.failure);
  }

  #stop(error) {
    this.#worker?.terminate();
    this.#worker = null;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) p.done(error);
  }

  #onMessage(m) {
    if (m?.rpc === 'event' && m.id == null) {
      this.#onEvent?.(m.data);
      return;
    }
    const p = this.#pending.get(m?.id);
    if (!p) return;
    if (m.rpc === 'progress') p.onProgress?.(m.done, m.total);
    else if (m.rpc === 'event') p.onEvent?.(m.data);
    else if (m.rpc === 'result') p.done(null, m.value);
    else if (m.rpc === 'error') p.done(rebuildError(m.error));
  }

  /**
   * Runs the worker's job `type` on `args`. Resolves to its value, rejects with its error (rebuilt).
   * Options: transfer (of args), signal (its abort cancels the job in the worker, which then answers
   * as the job decides: an AbortError, or a shorter value), onProgress(done, total), onEvent(data).
   * The promise carries the call's `id`.
   */
  call(type, args = {}, { transfer = [], signal, onProgress, onEvent } = {}) {
    if (signal?.aborted) return Promise.reject(signal.reason ?? abortError());
    const id = ++this.#lastId;
    const onAbort = () => this.cancel(id);
    signal?.addEventListener('abort', onAbort, { once: true });
    const promise = new Promise((resolve, reject) => {
      const done = (error, value) => {
        this.#pending.delete(id);
        signal?.removeEventListener('abort', onAbort);
        if (error) reject(error);
        else resolve(value);
      };
      this.#pending.set(id, { onProgress, onEvent, done });
      try {
        this.#start().postMessage({ rpc: 'call', id, type, args }, transfer);
      } catch (error) {
        done(error); // args that cannot be cloned
      }
    });
    return Object.assign(promise, { id });
  }

  /** Runs job `type` without awaiting it, and only on a worker already running (e.g. freeing a model). */
  notify(type, args = {}) {
    this.#worker?.postMessage({ rpc: 'call', id: 0, type, args });
  }

  /** Asks the worker to stop call `id` at its next batch boundary. */
  cancel(id) {
    if (this.#pending.has(id)) this.#worker?.postMessage({ rpc: 'cancel', id });
  }

  /** Stops the worker now; the calls under way reject with an AbortError. */
  terminate() {
    this.#stop(abortError('The worker was stopped'));
  }
}

// ---- the worker's half --------------------------------------------------------------------------

/** A job's value with the buffers to transfer (not copy) to the page. */
export function transfer(value, list) {
  return { [kTransfer]: list, value };
}

const unwrap = (out) => (out && out[kTransfer] ? [out.value, out[kTransfer]] : [out, []]);

/** Sends an event of the worker (of no call) to the page: WorkerClient's onEvent hears it. */
export function emit(data, list = []) {
  postMessage({ rpc: 'event', id: null, data }, list);
}

/** A job's context: its signal, progress and events to the page, and a check for cancellation. */
function jobContext(id, signal) {
  return {
    id,
    signal,
    progress: (done, total) => postMessage({ rpc: 'progress', id, done, total }),
    emit: (data, list = []) => postMessage({ rpc: 'event', id, data }, list),
    /** Throws the AbortError once the page cancelled this job: call it at batch boundaries. */
    throwIfCancelled: () => signal.throwIfAborted(),
  };
}

async function runJob(handlers, ready, { id, type, args }, controller) {
  try {
    await ready;
    controller.signal.throwIfAborted(); // cancelled while it waited
    const handler = Object.hasOwn(handlers, type) ? handlers[type] : null;
    if (!handler) throw new Error(`unknown request "${type}"`);
    const [value, list] = unwrap(await handler(args ?? {}, jobContext(id, controller.signal)));
    if (id) postMessage({ rpc: 'result', id, value }, list);
  } catch (error) {
    if (id) postMessage({ rpc: 'error', id, error: serializeError(error) });
  }
}

/**
 * Answers the page's calls with `handlers` ({ type: (args, ctx) => value or a promise of it }), once
 * `ready` resolves. `serial`: one job at a time, in the order they came (else each starts as it comes,
 * still in order up to its first await). ctx: { id, signal, progress(done, total), emit(data, transfer),
 * throwIfCancelled() }.
 */
export function serve(handlers, { ready = Promise.resolve(), serial = false } = {}) {
  const jobs = new Map(); // id → AbortController of a job queued or running
  let queue = Promise.resolve();
  addEventListener('message', ({ data: m }) => {
    if (m?.rpc === 'cancel') {
      jobs.get(m.id)?.abort();
      return;
    }
    if (m?.rpc !== 'call') return;
    const controller = new AbortController();
    if (m.id) jobs.set(m.id, controller);
    const job = () => runJob(handlers, ready, m, controller).finally(() => jobs.delete(m.id));
    if (serial) queue = queue.then(job);
    else job();
  });
}
