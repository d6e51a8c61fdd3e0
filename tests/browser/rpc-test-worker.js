// A worker for tests/browser/rpc.test.mjs: jobs that answer, throw, report progress, stop when
// cancelled, transfer buffers and die, all through web/workers/rpc.js's serve(). `?serial` in its URL
// runs one job at a time.
import { AttentionError } from '../../src/js/errors.js';
import { emit, serve, transfer } from '../../web/workers/rpc.js';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const handlers = {
  async echo({ value, ms = 0 }) {
    await sleep(ms);
    return value;
  },
  fail({ code, message }) {
    throw new AttentionError(code, message);
  },
  failPlain({ message }) {
    throw Object.assign(new Error(message), { code: 'INPUT' });
  },
  /** `batches` batches of `ms` each: progress after each, and a look at the cancel before each. */
  async batches({ batches, ms }, job) {
    for (let i = 0; i < batches; i++) {
      job.throwIfCancelled();
      await sleep(ms);
      job.progress(i + 1, batches);
    }
    return batches;
  },
  /** Events of the call (as a generation's tokens), then one of the worker (to no call). */
  events({ n }, job) {
    for (let i = 0; i < n; i++) job.emit({ i });
    emit({ broadcast: n });
    return n;
  },
  /** The bytes it got (a transferred buffer), and a new buffer transferred back. */
  buffer({ bytes }) {
    const out = new Float32Array(bytes.byteLength).fill(2);
    return transfer({ got: bytes.byteLength, out }, [out.buffer]);
  },
  /** An uncaught error outside any job: the worker fails, and this call never answers. */
  die() {
    setTimeout(() => {
      throw new Error('the test worker died');
    }, 0);
    return new Promise(() => {});
  },
};

serve(handlers, { serial: new URL(self.location.href).searchParams.has('serial') });
