// TinyTransformer.ablateHeads: the ablated head's output no longer reaches the logits (its value
// projection can change freely), every other head's still does, its attention weights are unchanged,
// the source model is untouched, and bad pairs are INVALID_ARGUMENT with nothing leaked.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { init, Tensor, TinyTransformer, memoryStats } from '../../src/js/index.js';
import { maxAbsDiff } from './close.js';

await init();

// Logits of a float32 model differ by rounding only when equal in exact arithmetic; a head's term
// in these logits is ~1e-2, far above it.
const kSame = 1e-6;
const kChanged = 1e-4;

const config = { vocabSize: 7, maxLength: 6, dModel: 8, numHeads: 2, numLayers: 2, seed: 11 };
const ids = [[1, 4, 2, 6, 0, 3]];

// A copy of `model` whose value projection rows of (layer, head) are replaced by other numbers:
// in_proj_weight stacks q, k, v (3·dModel rows); head h's v rows are 2·dModel + [h·dk, (h+1)·dk).
function withValuesPerturbed(model, layer, head) {
  const sd = model.stateDict();
  const { dModel, numHeads } = model.config;
  const dk = dModel / numHeads;
  const w = sd[`blocks.${layer}.attn.in_proj_weight`];
  const data = Float32Array.from(w.data);
  for (let r = 2 * dModel + head * dk; r < 2 * dModel + (head + 1) * dk; r++) {
    for (let c = 0; c < dModel; c++) data[r * dModel + c] += 0.5 * Math.sin(7 * r + c);
  }
  const copy = new TinyTransformer(model.config);
  copy.loadStateDict({ ...sd, [`blocks.${layer}.attn.in_proj_weight`]: new Tensor(data, w.shape) });
  return copy;
}

describe('TinyTransformer.ablateHeads', () => {
  it("removes exactly the listed head's output", () => {
    const model = new TinyTransformer(config);
    const before = model.forward(ids).logits.data.slice();
    const ablated = model.ablateHeads([[1, 0]]);
    const base = ablated.forward(ids);
    assert.ok(maxAbsDiff(base.logits.data, before) > kChanged, 'ablating a head changes the logits');
    assert.ok(maxAbsDiff(model.forward(ids).logits.data, before) === 0, 'the source model is unchanged');

    // The ablated head's values no longer matter; the other head's still do.
    const ablatedHeadValues = withValuesPerturbed(ablated, 1, 0);
    assert.ok(maxAbsDiff(ablatedHeadValues.forward(ids).logits.data, base.logits.data) < kSame);
    const otherHeadValues = withValuesPerturbed(ablated, 1, 1);
    assert.ok(maxAbsDiff(otherHeadValues.forward(ids).logits.data, base.logits.data) > kChanged);
    // The ablated head still attends exactly as before.
    const full = model.forward(ids);
    assert.ok(maxAbsDiff(base.attention[1].data, full.attention[1].data) === 0);
    for (const m of [model, ablated, ablatedHeadValues, otherHeadValues]) m.dispose();
  });

  it('ablating every head of layer 0 makes layer 0 ignore its values entirely', () => {
    const model = new TinyTransformer(config);
    const ablated = model.ablateHeads([
      [0, 0],
      [0, 1],
    ]);
    const a = withValuesPerturbed(ablated, 0, 0);
    const b = withValuesPerturbed(a, 0, 1);
    assert.ok(maxAbsDiff(b.forward(ids).logits.data, ablated.forward(ids).logits.data) < kSame);
    for (const m of [model, ablated, a, b]) m.dispose();
  });

  it('bad pairs are INVALID_ARGUMENT naming the range; nothing leaks', () => {
    const model = new TinyTransformer(config);
    const { heapUsedBytes, liveHandles } = memoryStats();
    for (const bad of [[[2, 0]], [[0, 2]], [[0]], [[-1, 0]], [[0.5, 0]], 'all', [[0, '1']]]) {
      assert.throws(
        () => model.ablateHeads(bad),
        (e) => e.code === 'INVALID_ARGUMENT' && /ablateHeads/.test(e.message),
      );
    }
    assert.equal(memoryStats().liveHandles, liveHandles);
    assert.equal(memoryStats().heapUsedBytes, heapUsedBytes);
    model.dispose();
  });
});
