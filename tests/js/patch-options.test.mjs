// patch: lists of pairs, onProgress and abort, TinyTransformers that are not causal or have grouped-query
// heads, long inputs traced a few layers at a time, and refused calls that leave the model usable.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { init, TinyTransformer, Tensor } from '../../src/js/index.js';
import { _setTraceBudget } from '../../src/js/interp/head-scores.js';
import { assertClose, code, loadCheckpoint } from './interp-checks.mjs';

await init();

describe('patch: lists of pairs, progress, abort, refusals', () => {
  const clean = [7, 52, 19, 83, 40, 11, 66, 90],
    corrupted = [7, 52, 19, 83, 40, 60, 66, 90];
  const clean2 = [9, 52, 19, 83, 40, 11, 66, 90],
    corrupted2 = [9, 52, 19, 83, 40, 12, 66, 90];
  const o = { token: 24, against: 95 };

  it('a list of pairs averages each entry; cleanDiff and corruptedDiff are then per pair', async () => {
    const model = await loadCheckpoint('gpt2-tiny');
    for (const component of ['head', 'head-position', 'residual']) {
      const a = await model.patch({ clean, corrupted, component, ...o });
      const b = await model.patch({ clean: clean2, corrupted: corrupted2, component, ...o });
      const both = await model.patch({
        clean: [clean, clean2],
        corrupted: [corrupted, corrupted2],
        component,
        ...o,
      });
      assert.deepEqual(both.cleanDiff, [a.cleanDiff, b.cleanDiff]);
      assert.deepEqual(both.corruptedDiff, [a.corruptedDiff, b.corruptedDiff]);
      assertClose(
        both.result.data,
        Array.from(a.result.data, (v, i) => (v + b.result.data[i]) / 2),
        `${component} mean`,
        1e-6,
      );
      // a (B, T) batch is a list of B pairs
      const batch = await model.patch({
        clean: new Tensor(Int32Array.from([...clean, ...clean2]), [2, 8]),
        corrupted: [corrupted, corrupted2],
        component,
        ...o,
      });
      assert.deepEqual(batch.result.data, both.result.data);
    }
    model.dispose();
  });

  it('onProgress counts every patched run; an aborted signal rejects with its reason and the model stays usable', async () => {
    for (const make of [
      () => loadCheckpoint('llama-tiny'),
      () =>
        new TinyTransformer({ vocabSize: 9, maxLength: 12, dModel: 8, numHeads: 2, numLayers: 2, seed: 3 }),
    ]) {
      const model = await make();
      const V = model.vocabSize ?? model.config.vocabSize;
      const c = clean.map((id) => id % V),
        x = corrupted.map((id) => id % V);
      const opts = { clean: c, corrupted: x, token: 1, against: 2, component: 'head-position' };
      const calls = [];
      const before = await model.patch({ ...opts, onProgress: (done, total) => calls.push([done, total]) });
      const L = model.numLayers ?? model.config.numLayers,
        H = model.numHeads ?? model.config.numHeads;
      assert.deepEqual(calls.at(-1), [L * H * 8, L * H * 8]);
      assert.ok(calls.every(([d], i) => i === 0 || d > calls[i - 1][0]));
      const ac = new AbortController();
      const reason = new Error('stop here');
      await assert.rejects(
        model.patch({
          ...opts,
          signal: ac.signal,
          onProgress: (done) => {
            if (done >= 8) ac.abort(reason);
          },
        }),
        (e) => e === reason,
      );
      const pre = new AbortController();
      pre.abort();
      await assert.rejects(model.patch({ ...opts, signal: pre.signal }), (e) => e.name === 'AbortError');
      const after = await model.patch(opts);
      assert.deepEqual(after.result.data, before.result.data);
      model.dispose();
    }
  });

  it('TinyTransformers that are not causal, or have grouped-query heads: every row runs; residual at block 0 is 1 at the changed token', async () => {
    for (const extra of [{ causal: false }, { numKVHeads: 1, positional: 'rope' }]) {
      const model = new TinyTransformer({
        vocabSize: 9,
        maxLength: 12,
        dModel: 8,
        numHeads: 2,
        numLayers: 2,
        seed: 11,
        ...extra,
      });
      const sd = model.stateDict(); // larger weights: the logits differ by O(1)
      for (const [n, t] of Object.entries(sd))
        if (n.endsWith('weight') && !n.includes('ln'))
          t.data.forEach((v, i) => {
            t.data[i] = v * 4;
          });
      model.loadStateDict(sd);
      const c = [1, 2, 3, 4, 5, 6],
        x = [1, 2, 7, 4, 5, 6];
      for (const position of [5, 3]) {
        const r = await model.patch({
          clean: c,
          corrupted: x,
          token: 1,
          against: 2,
          position,
          component: 'residual',
        });
        for (let t = 0; t < 6; t++)
          assert.equal(r.result.data[t], t === 2 ? 1 : 0, `${JSON.stringify(extra)} residual[0, ${t}]`);
        const h = await model.patch({
          clean: c,
          corrupted: x,
          token: 1,
          against: 2,
          position,
          component: 'head-position',
        });
        assert.deepEqual(h.result.shape, [2, 2, 6]);
        // causal: positions after `position` are not run, their entries are 0
        for (let hd = 0; hd < 2; hd++)
          for (let t = 0; t < 6; t++)
            if (extra.causal !== false && t > position) assert.equal(h.result.data[hd * 6 + t], 0);
      }
      if (extra.causal === false) {
        // later positions matter without a causal mask: some entry after position 1 is not 0
        const r = await model.patch({
          clean: c,
          corrupted: x,
          token: 1,
          against: 2,
          position: 1,
          component: 'residual',
        });
        assert.ok(Array.from(r.result.data).some((v, i) => i % 6 > 1 && v !== 0));
      }
      model.dispose();
    }
  });

  it('long inputs trace a few layers per forward: the same results as one traced forward', async () => {
    for (const make of [
      () => loadCheckpoint('qwen3-tiny'),
      () =>
        new TinyTransformer({ vocabSize: 9, maxLength: 12, dModel: 8, numHeads: 2, numLayers: 3, seed: 4 }),
    ]) {
      const model = await make();
      const V = model.vocabSize;
      const c = clean.map((id) => id % V),
        x = corrupted.map((id) => id % V);
      const opts = { clean: c, corrupted: x, token: 1, against: 2 };
      const want = [
        await model.patch({ ...opts, component: 'head' }),
        await model.patch({ ...opts, component: 'residual' }),
      ];
      const attribution =
        model instanceof TinyTransformer ? null : model.logitAttribution(c, { token: 1, against: 2 });
      const old = _setTraceBudget(1); // one layer per traced forward
      try {
        assert.deepEqual(await model.patch({ ...opts, component: 'head' }), want[0]);
        assert.deepEqual(await model.patch({ ...opts, component: 'residual' }), want[1]);
        if (attribution) assert.deepEqual(model.logitAttribution(c, { token: 1, against: 2 }), attribution);
      } finally {
        _setTraceBudget(old);
      }
      model.dispose();
    }
  });

  it('refuses ids of different lengths, runs with nothing to explain, bad options; nothing runs and the model stays usable', async () => {
    const model = await loadCheckpoint('qwen2-tiny');
    const before = await model.patch({ clean, corrupted, ...o, component: 'residual' });
    const rejects = (opts, pattern) =>
      assert.rejects(model.patch(opts), (e) => code('INVALID_ARGUMENT')(e) && pattern.test(e.message));
    await rejects({ clean, corrupted: corrupted.slice(1), ...o }, /one length/);
    await rejects({ clean: [clean, clean2], corrupted: [corrupted], ...o }, /2 clean runs but 1/);
    await rejects({ clean, corrupted: clean, ...o }, /nothing to explain/);
    await rejects({ clean, corrupted, token: 3, against: 3 }, /both 3/);
    await rejects({ clean, corrupted, token: model.vocabSize }, /token/);
    await rejects({ clean, corrupted, ...o, position: 8 }, /position must be an integer in \[0, 8\)/);
    await rejects({ clean, corrupted, ...o, position: -1 }, /position/);
    await rejects({ clean, corrupted, ...o, component: 'attn' }, /component/);
    await rejects({ clean, corrupted, ...o, metric: 'kl' }, /metric/);
    await rejects({ clean, corrupted, ...o, layer: 1 }, /'layer'/);
    await rejects({ clean, corrupted, ...o, onProgress: 3 }, /onProgress/);
    await rejects({ clean, corrupted, ...o, signal: {} }, /signal/);
    await rejects({ clean }, /clean and corrupted/);
    // a position before the differing token: nothing to explain
    await rejects({ clean, corrupted, ...o, position: 3 }, /nothing to explain/);
    const after = await model.patch({ clean, corrupted, ...o, component: 'residual' });
    assert.deepEqual(after.result.data, before.result.data);
    model.dispose();
  });
});
