// An element's side of web/workers/interp-worker.js (spoken to through web/workers/rpc.js), one for
// every widget that runs the interpretability jobs off the page (<token-saliency>, <patching-view>):
// an InterpWorker is the element's worker and the model opened in it. The worker is created on first
// use and opened with the model's bytes (a copy, passed with each job) once per model; the element
// calls modelChanged() when its model changes and end() when it leaves the page.
import { WorkerClient, abortError } from '../../workers/rpc.js';

export class InterpWorker {
  #what;
  #onError;
  #client = null; // the WorkerClient, created on first use
  #opened = null; // the `open` call of the current model: resolved once the worker holds it

  /**
   * `what` names the worker in an error ("saliency", "patching"); onError(message) is told when the
   * worker fails (the next job starts a new one and opens the model again).
   */
  constructor(what, onError) {
    this.#what = what;
    this.#onError = onError;
  }

  #worker() {
    const create = () =>
      new Worker(new URL('../../workers/interp-worker.js', import.meta.url), { type: 'module' });
    this.#client ??= new WorkerClient(create, {
      onFail: (e) => {
        const message = `The ${this.#what} worker failed: ${e.message ?? 'error'}`;
        this.#opened = null; // a new worker opens the model again
        this.#onError(message);
        return message;
      },
    });
    return this.#client;
  }

  /**
   * Runs the worker's job `type` ({ options } in) on the model of `bytes` (its safetensors file,
   * copied to the worker when it does not hold the model yet). `signal` aborting rejects it at once
   * (AbortError) and cancels the job in the worker, which stops at its next batch; onProgress gets
   * the job's progress.
   */
  async run(bytes, type, options, onProgress, signal) {
    const worker = this.#worker();
    if (!this.#opened) {
      const copy = bytes.slice();
      this.#opened = worker.call('open', { bytes: copy }, { transfer: [copy.buffer] });
    }
    await this.#opened;
    if (signal.aborted) throw abortError();
    return new Promise((resolve, reject) => {
      signal.addEventListener('abort', () => reject(abortError()), { once: true });
      worker.call(type, { options }, { signal, onProgress }).then(resolve, reject);
    });
  }

  /** The element's model changed: the next job opens the new one (the worker stays). */
  modelChanged() {
    this.#opened = null;
  }

  /** Ends the worker (the element left the page); a later job starts a new one. */
  end() {
    this.#client?.terminate();
    this.#client = null;
    this.#opened = null;
  }
}
