// The one worker protocol (web/workers/rpc.js) in Chromium, under the strict CSP, with a test worker
// (tests/browser/rpc-test-worker.js): errors arrive with their class and code, a job cancelled mid-job
// stops at a batch boundary and rejects with an AbortError, a worker that dies rejects the calls under
// way and the client says so, jobs run at once each get their own answer, progress and events arrive
// in order, buffers are transferred both ways.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, routeHtml } from './helpers.mjs';

let b, page, watch;
before(async () => {
  b = await launch();
  const url = b.url('/__test/rpc.html');
  await routeHtml(
    b.context,
    url,
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>rpc</title></head><body></body></html>',
  );
  ({ page, watch } = await b.newPage());
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective), true);
  });
  await page.goto(url);
  await page.evaluate(async () => {
    const rpc = await import('/web/workers/rpc.js');
    const { AttentionError } = await import('/src/js/errors.js');
    window.__t = {
      rpc,
      AttentionError,
      client: (query = '', options = {}) =>
        new rpc.WorkerClient(
          () => new Worker(`/tests/browser/rpc-test-worker.js${query}`, { type: 'module' }),
          options,
        ),
      outcome: (promise) =>
        promise.then(
          (value) => ({ value }),
          (e) => ({
            error: {
              name: e.name,
              code: e.code,
              message: e.message,
              attention: e instanceof AttentionError,
              dom: e instanceof DOMException,
            },
          }),
        ),
    };
  });
});
after(async () => {
  assert.deepEqual(await page?.evaluate(() => window.__csp), []);
  assert.deepEqual(watch?.errors ?? [], []);
  assert.deepEqual(watch?.offOrigin ?? [], []);
  await b?.close();
});

test('a job that throws: the AttentionError arrives with its class and code; other errors keep name and code', async () => {
  const r = await page.evaluate(async () => {
    const { client, outcome } = window.__t;
    const c = client();
    const out = {
      attention: await outcome(
        c.call('fail', { code: 'SHAPE_MISMATCH', message: 'q is (2, 3), k is (2, 4)' }),
      ),
      plain: await outcome(c.call('failPlain', { message: 'type some tokens' })),
      unknown: await outcome(c.call('nothing')),
      uncloneable: await outcome(c.call('echo', { value: () => 1 })),
      after: await outcome(c.call('echo', { value: 7 })), // the worker stays usable
    };
    c.terminate();
    return out;
  });
  assert.deepEqual(r.attention.error, {
    name: 'AttentionError',
    code: 'SHAPE_MISMATCH',
    message: 'q is (2, 3), k is (2, 4)',
    attention: true,
    dom: false,
  });
  assert.equal(r.plain.error.name, 'Error');
  assert.equal(r.plain.error.code, 'INPUT');
  assert.equal(r.plain.error.message, 'type some tokens');
  assert.equal(r.plain.error.attention, false);
  assert.match(r.unknown.error.message, /unknown request "nothing"/);
  assert.equal(r.uncloneable.error.name, 'DataCloneError');
  assert.equal(r.after.value, 7);
});

test('a job cancelled mid-job stops at its next batch boundary and rejects with an AbortError', async () => {
  const r = await page.evaluate(async () => {
    const { client, outcome } = window.__t;
    const c = client();
    const controller = new AbortController();
    const seen = [];
    let atAbort = null;
    const job = c.call(
      'batches',
      { batches: 100, ms: 100 },
      {
        signal: controller.signal,
        onProgress: (done, total) => {
          seen.push([done, total]);
          if (done === 3) {
            atAbort = done;
            controller.abort();
          }
        },
      },
    );
    const out = await outcome(job);
    // the worker is still there, and a signal aborted before the call never reaches it
    const after = await outcome(c.call('echo', { value: 'still here' }));
    const early = await outcome(c.call('echo', { value: 1 }, { signal: AbortSignal.abort() }));
    c.terminate();
    return { out, seen, atAbort, after, early };
  });
  assert.equal(r.out.error.name, 'AbortError');
  assert.equal(r.out.error.dom, true);
  assert.equal(r.atAbort, 3);
  // the batch under way when the cancel arrived may finish; none starts after it
  assert.ok(r.seen.length <= r.atAbort + 1, `progress after the cancel: ${JSON.stringify(r.seen)}`);
  assert.deepEqual(
    r.seen.map(([done]) => done),
    r.seen.map((_, i) => i + 1),
  );
  assert.equal(r.after.value, 'still here');
  assert.equal(r.early.error.name, 'AbortError');
});

test('a job cancelled while queued (serial worker) never starts; the one before it finishes', async () => {
  const r = await page.evaluate(async () => {
    const { client, outcome } = window.__t;
    const c = client('?serial');
    const controller = new AbortController();
    const order = [];
    const first = outcome(c.call('echo', { value: 'first', ms: 150 })).then((x) => (order.push('first'), x));
    const queued = outcome(c.call('batches', { batches: 5, ms: 1 }, { signal: controller.signal }));
    const last = outcome(c.call('echo', { value: 'last' })).then((x) => (order.push('last'), x));
    controller.abort();
    const out = { first: await first, queued: await queued, last: await last, order };
    c.terminate();
    return out;
  });
  assert.equal(r.first.value, 'first');
  assert.equal(r.queued.error.name, 'AbortError');
  assert.equal(r.last.value, 'last');
  assert.deepEqual(r.order, ['first', 'last']);
});

test('a worker that dies: the calls under way reject, the client says so, and the next call starts a new one', async () => {
  const r = await page.evaluate(async () => {
    const { client, outcome } = window.__t;
    const failures = [];
    const c = client('', {
      onFail: (e) => {
        failures.push(e.message ?? '');
        return `the test worker failed: ${e.message || 'see the console'}`;
      },
    });
    const waiting = outcome(c.call('echo', { value: 1, ms: 60_000 }));
    const dying = outcome(c.call('die'));
    const out = { waiting: await waiting, dying: await dying, failures, started: c.started };
    out.failure = c.failure?.message;
    out.next = await outcome(c.call('echo', { value: 'new worker' }));
    out.failureAfter = c.failure;
    c.terminate();
    return out;
  });
  assert.equal(r.failures.length, 1);
  assert.match(r.failures[0], /the test worker died/);
  for (const call of [r.waiting, r.dying]) {
    assert.match(call.error.message, /^the test worker failed: .*the test worker died/);
  }
  assert.equal(r.failure, r.waiting.error.message);
  assert.equal(r.started, false);
  assert.equal(r.next.value, 'new worker');
  assert.equal(r.failureAfter, null);
});

test('jobs at once: each gets its own answer, in the order they finish', async () => {
  const r = await page.evaluate(async () => {
    const { client } = window.__t;
    const c = client();
    const finished = [];
    const delays = [360, 60, 240, 0, 300, 120]; // 60 ms apart: the order they finish
    const values = await Promise.all(
      delays.map((ms, i) =>
        c.call('echo', { value: { i, ms }, ms }).then((v) => {
          finished.push(v.i);
          return v;
        }),
      ),
    );
    c.terminate();
    return { values, finished, delays };
  });
  assert.deepEqual(
    r.values,
    r.delays.map((ms, i) => ({ i, ms })),
  );
  assert.deepEqual(
    r.finished,
    r.delays
      .map((ms, i) => [ms, i])
      .sort((x, y) => x[0] - y[0])
      .map(([, i]) => i),
  );
});

test('progress and events arrive in order, before the answer; events of no call go to onEvent', async () => {
  const r = await page.evaluate(async () => {
    const { client } = window.__t;
    const log = [];
    const c = client('', { onEvent: (data) => log.push(['worker', data]) });
    const n = await c.call(
      'batches',
      { batches: 12, ms: 0 },
      { onProgress: (d, t) => log.push(['progress', d, t]) },
    );
    log.push(['answer', n]);
    const m = await c.call('events', { n: 5 }, { onEvent: (data) => log.push(['event', data.i]) });
    log.push(['answer', m]);
    c.terminate();
    return log;
  });
  assert.deepEqual(r, [
    ...Array.from({ length: 12 }, (_, i) => ['progress', i + 1, 12]),
    ['answer', 12],
    ...Array.from({ length: 5 }, (_, i) => ['event', i]),
    ['worker', { broadcast: 5 }],
    ['answer', 5],
  ]);
});

test('buffers are transferred both ways; terminate rejects the calls under way with an AbortError', async () => {
  const r = await page.evaluate(async () => {
    const { client, outcome } = window.__t;
    const c = client();
    const bytes = new Uint8Array(64);
    const v = await c.call('buffer', { bytes }, { transfer: [bytes.buffer] });
    const pending = outcome(c.call('echo', { value: 1, ms: 60_000 }));
    c.terminate();
    return {
      sentAfter: bytes.byteLength,
      got: v.got,
      out: [v.out.constructor.name, v.out.length, v.out[0]],
      pending: await pending,
      started: c.started,
    };
  });
  assert.equal(r.sentAfter, 0, 'the sent buffer was transferred (detached here)');
  assert.equal(r.got, 64);
  assert.deepEqual(r.out, ['Float32Array', 64, 2]);
  assert.equal(r.pending.error.name, 'AbortError');
  assert.equal(r.started, false);
});
