// Threads (docs/threads.md): init({ threads }) loads the threaded build in Node, every
// result is bit-identical at 1 and 2 threads and to the single-thread build, work really ran in
// parallel (the pool's job count), a call that grows the heap at 2 threads reads back right, bad
// counts are INVALID_ARGUMENT, and a pool that cannot start falls back to one thread with one warning.
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import * as api from '../../src/js/index.js';
import * as single from '../../src/js/index.js?instance=threads-single';
import { resolveThreads, startThreaded, AUTO_THREADS_MAX } from '../../src/js/runtime/threads.js';
import { writeShapedCheckpoint } from '../../bench/shaped_checkpoint.mjs';

const POOL = 2; // explicit, so the test means the same on a 1-core and a 16-core machine
const here = path.dirname(fileURLToPath(import.meta.url));

const sameBits = (a, b, what) => {
  assert.deepEqual(a.shape, b.shape, `${what}: shape`);
  assert.ok(
    Buffer.from(a.data.buffer, a.data.byteOffset, a.data.byteLength).equals(
      Buffer.from(b.data.buffer, b.data.byteOffset, b.data.byteLength),
    ),
    `${what}: bits differ`,
  );
};

// Runs `compute(lib)` at 1 and at POOL threads on the threaded build, and once on the single-thread
// build; asserts the pool split work at POOL threads and returns the three results.
function atEveryCount(compute) {
  api.setThreadCount(1);
  const one = compute(api);
  api.setThreadCount(POOL);
  const jobsBefore = poolJobs();
  const many = compute(api);
  const jobs = poolJobs() - jobsBefore;
  const reference = compute(single);
  return { one, many, reference, jobs };
}

let poolJobs;
before(async () => {
  const m = await api.init({ threads: POOL });
  poolJobs = () => m._poolJobs();
  await single.init({ threads: 1 });
});

describe('init({ threads }) in Node', () => {
  it('loads the threaded build with the pool asked for; threads: 1 loads the single-thread build', () => {
    assert.equal(api.threadCount(), POOL);
    assert.equal(single.threadCount(), 1);
    assert.equal(api.kernelVariant(), single.kernelVariant());
  });

  it("'auto' is min(os.availableParallelism(), 8)", () => {
    assert.equal(resolveThreads('auto'), Math.min(os.availableParallelism(), AUTO_THREADS_MAX));
    assert.equal(resolveThreads(), resolveThreads('auto'));
    assert.equal(resolveThreads(3), 3);
  });

  it('refuses other thread counts, in init and setThreadCount, and stays usable', async () => {
    for (const bad of [0, -1, 65, 2.5, '2', 'many', true, NaN]) {
      await assert.rejects(
        import(`../../src/js/index.js?instance=threads-bad-${String(bad)}`).then((m) =>
          m.init({ threads: bad }),
        ),
        (e) => e.code === 'INVALID_ARGUMENT' && /threads/.test(e.message),
        `init threads ${String(bad)}`,
      );
    }
    for (const bad of [0, POOL + 1, 1.5, '1', NaN]) {
      assert.throws(
        () => api.setThreadCount(bad),
        (e) => e.code === 'INVALID_ARGUMENT' && /setThreadCount/.test(e.message),
      );
    }
    assert.throws(
      () => single.setThreadCount(2),
      (e) => e.code === 'INVALID_ARGUMENT' && /one thread/.test(e.message),
    );
    single.setThreadCount(1);
    assert.equal(api.threadCount(), POOL, 'a refused count leaves the pool as it was');
    await assert.rejects(
      import('../../src/js/index.js?instance=threads-custom').then((m) =>
        m.init({ threads: 2, moduleUrl: new URL('../../dist/attention_core.mjs', import.meta.url) }),
      ),
      (e) => e.code === 'INVALID_ARGUMENT',
    );
  });
});

describe('bit-identical at 1 and 2 threads and to the single-thread build (and really split)', () => {
  it('scaledDotProductAttention: causal, with weights, grouped-query heads and a window', () => {
    const q = api.seededNormal([2, 8, 96, 32], 1),
      k = api.seededNormal([2, 4, 96, 32], 2),
      v = api.seededNormal([2, 4, 96, 32], 3);
    const r = atEveryCount((lib) =>
      lib.scaledDotProductAttention(q, k, v, { causal: true, enableGQA: true, window: 40 }),
    );
    assert.ok(r.jobs > 0, 'the pool ran no job');
    for (const key of ['output', 'weights']) {
      sameBits(r.one[key], r.many[key], `${key} 1 vs ${POOL} threads`);
      sameBits(r.reference[key], r.many[key], `${key} single-thread build vs ${POOL} threads`);
    }
  });

  it('MultiHeadAttention forward and backward', () => {
    const x = api.seededNormal([4, 64, 128], 7),
      dy = api.seededNormal([4, 64, 128], 8);
    const r = atEveryCount((lib) => {
      const mha = new lib.MultiHeadAttention({ embedDim: 128, numHeads: 4, seed: 5 });
      try {
        const y = mha.forward(x, x, x, { causal: true, requiresGrad: true });
        const g = mha.backward(dy);
        return [y.output, g.inputs.query, ...Object.values(g.params)];
      } finally {
        mha.dispose();
      }
    });
    assert.ok(r.jobs > 0, 'the pool ran no job');
    assert.ok(r.many.length >= 2);
    r.many.forEach((t, i) => {
      sameBits(r.one[i], t, `tensor ${i}, 1 vs ${POOL} threads`);
      sameBits(r.reference[i], t, `tensor ${i}, single-thread build vs ${POOL} threads`);
    });
  });

  it('a TinyTransformer training run (Trainer, 3 steps) and its forward', () => {
    const config = { vocabSize: 64, maxLength: 64, dModel: 128, numHeads: 4, numLayers: 2, seed: 3 };
    const ids = { data: Int32Array.from({ length: 8 * 64 }, (_, i) => (i * 7) % 64), shape: [8, 64] };
    const targets = { data: Int32Array.from({ length: 8 * 64 }, (_, i) => (i * 5 + 1) % 64), shape: [8, 64] };
    const r = atEveryCount((lib) => {
      const model = new lib.TinyTransformer(config);
      const trainer = new lib.Trainer(model, { lr: 1e-3 });
      try {
        const losses = [0, 1, 2].map(() => trainer.step(ids, targets).loss);
        const logits = model.forward(ids).logits;
        return { losses, logits, weights: Object.values(model.stateDict()) };
      } finally {
        trainer.dispose();
        model.dispose();
      }
    });
    assert.ok(r.jobs > 0, 'the pool ran no job');
    assert.deepEqual(r.many.losses, r.one.losses);
    assert.deepEqual(r.many.losses, r.reference.losses);
    sameBits(r.one.logits, r.many.logits, 'logits 1 vs 2 threads');
    sameBits(r.reference.logits, r.many.logits, 'logits single-thread build vs 2 threads');
    r.many.weights.forEach((w, i) => sameBits(r.reference.weights[i], w, `weight ${i} after training`));
  });

  it('a pretrained Qwen3-shaped checkpoint: forward with logit lens, and greedy generation', async () => {
    const base = JSON.parse(
      readFileSync(path.join(here, '../golden/pretrained/qwen3-tiny/config.json'), 'utf8'),
    );
    const config = {
      ...base,
      hidden_size: 256,
      intermediate_size: 512,
      num_attention_heads: 4,
      num_key_value_heads: 2,
      head_dim: 64,
      vocab_size: 512,
      num_hidden_layers: 2,
      max_position_embeddings: 128,
    };
    const dir = mkdtempSync(path.join(os.tmpdir(), 'attn-threads-'));
    try {
      writeShapedCheckpoint(dir, config);
      const weights = readFileSync(path.join(dir, 'model.safetensors'));
      const models = [
        await api.loadPretrained({ config, weights }),
        await single.loadPretrained({ config, weights }),
      ];
      const ids = { data: Int32Array.from({ length: 48 }, (_, i) => (i * 37) % 512), shape: [1, 48] };
      const run = (model) => {
        const f = model.forward(ids, { logitLens: true });
        return {
          logits: f.logits,
          lens: f.logitLens.ids,
          gen: model.generate(ids, { maxNewTokens: 4, stop: [] }),
        };
      };
      const r = atEveryCount((lib) => run(lib === single ? models[1] : models[0]));
      models.forEach((m) => m.dispose());
      assert.ok(r.jobs > 0, 'the pool ran no job');
      for (const key of ['logits', 'lens', 'gen']) {
        sameBits(r.one[key], r.many[key], `${key} 1 vs 2 threads`);
        sameBits(r.reference[key], r.many[key], `${key} single-thread build vs 2 threads`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a call that grows the heap at 2 threads reads back right (heap views refreshed)', () => {
    const heapBefore = api.memoryStats().heapBytes;
    const shape = [2, 8, 1024, 32]; // weights alone: 2·8·1024·1024 floats = 64 MiB
    const [q, k, v] = [11, 12, 13].map((s) => api.seededNormal(shape, s));
    const r = atEveryCount((lib) => lib.scaledDotProductAttention(q, k, v, { causal: true }));
    assert.ok(api.memoryStats().heapBytes > heapBefore, 'the call did not grow the heap');
    sameBits(r.one.weights, r.many.weights, 'weights 1 vs 2 threads');
    sameBits(r.reference.output, r.many.output, 'output single-thread build vs 2 threads');
  });
});

describe('a pool that cannot start', () => {
  it('startThreaded rejects after its timeout when the module never starts (never a hang)', async () => {
    const never = () => new Promise(() => {});
    await assert.rejects(
      startThreaded(never, new URL('file:///nonexistent.wasm'), 2, { timeoutMs: 50 }),
      /did not finish within 50 ms/,
    );
  });

  it('init falls back to the single-thread build with one console warning (Node without worker permission)', () => {
    // --experimental-permission without --allow-worker: creating a worker_thread throws.
    const wrapper = new URL('../../src/js/index.js', import.meta.url).href;
    const code = `import * as api from ${JSON.stringify(wrapper)};
      const warnings = []; console.warn = (m) => warnings.push(String(m));
      await api.init({ threads: 2 });
      const y = api.softmax({ data: new Float32Array([0, 0]), shape: [2] });
      console.log(JSON.stringify({ threads: api.threadCount(), warnings, y: Array.from(y.data) }));`;
    const out = execFileSync(
      process.execPath,
      ['--experimental-permission', '--allow-fs-read=*', '--no-warnings', '--input-type=module', '-e', code],
      { encoding: 'utf8' },
    );
    const r = JSON.parse(out.trim().split('\n').pop());
    assert.equal(r.threads, 1);
    assert.deepEqual(r.y, [0.5, 0.5]);
    assert.equal(r.warnings.length, 1, JSON.stringify(r.warnings));
    assert.match(r.warnings[0], /threaded build did not start.*one thread/);
  });
});
