// Type test of the tensor and the plain functions: init, Tensor, softmax, layerNorm, scaled
// dot-product attention and their backward passes.
// Compiled only, never run: `tsc -p tests/js/types --noEmit` (tests/js/types.test.mjs). Each file is
// a module of its own; `// @ts-expect-error` lines mark wrong usages (tsc fails if one compiles).
import {
  init,
  Tensor,
  softmax,
  layerNorm,
  scaledDotProductAttention,
  scaledDotProductAttentionBackward,
  softmaxBackward,
  layerNormBackward,
} from 'attention-wasm';
import type {
  TensorLike,
  NestedArray,
  InitOptions,
  DropoutOptions,
  AttentionOptions,
  AttentionResult,
  TraceStep,
  DType,
  TensorOptions,
  LayerNormOptions,
} from 'attention-wasm';

// ---- init ---------------------------------------------------------------------------------------
const initOptions: InitOptions = { wasmUrl: new URL('https://example.com/attention_core.wasm') };
await init();
await init(initOptions);
await init({ wasmBinary: new Uint8Array(8) });
await init({ wasmUrl: '/attention_core.wasm', moduleUrl: '/attention_core.mjs' });
// @ts-expect-error wasmUrl is a string or URL
await init({ wasmUrl: 5 });
// @ts-expect-error unknown option
await init({ wasm: '/x.wasm' });

// ---- Tensor -------------------------------------------------------------------------------------
const x = new Tensor(new Float32Array(24), [2, 3, 4]);
const fromNumbers = new Tensor([1, 2, 3]);
const nested = new Tensor([
  [1, 2],
  [3, 4],
]);
const mask = new Tensor(new Uint8Array([1, 0, 1, 1]), [2, 2]);
const boolMask = new Tensor([true, false, true, true], [2, 2]);
const dtype: 'float32' | 'int32' | 'bool' = x.dtype;
const data: Float32Array | Int32Array | Uint8Array = x.data;
const ids = new Tensor(new Int32Array([1, 2, 3, 4]), [2, 2]);
const intOptions: TensorOptions = { dtype: 'int32' };
const nestedIds = new Tensor(
  [
    [1, 2],
    [3, 4],
  ],
  null,
  intOptions,
);
const idsDtype: DType = nestedIds.dtype;
const shape: number[] = x.shape;
const size: number = x.size + x.rank;
const value: number | boolean = x.get(0, 1, 2);
const asArray: NestedArray<number> | NestedArray<boolean> = nested.toArray();
// @ts-expect-error a string is not tensor data
new Tensor('abc', [3]);
// @ts-expect-error shape is a number[]
new Tensor([1, 2], 2);
// @ts-expect-error dtype is read-only
x.dtype = 'bool';
// @ts-expect-error 'int64' is not a dtype
new Tensor([1, 2], [2], { dtype: 'int64' });
// @ts-expect-error get() returns number | boolean, not a number
const notNumber: number = x.get(0, 0, 0);

// ---- softmax, layerNorm -------------------------------------------------------------------------
const likes: TensorLike[] = [
  x,
  { data: [1, 2], shape: [2] },
  [[1, 2]],
  [true, false],
  { data: new Float32Array(2), shape: [2] },
];
const y: Tensor = softmax(x);
softmax([[1, 1, 1, 5]]);
layerNorm(x);
layerNorm(x, { eps: 1e-6, weight: [1, 1, 1, 1], bias: null });
layerNorm(x, { weight: new Tensor([1, 1, 1, 1]) });
// @ts-expect-error softmax needs its input
softmax();
// @ts-expect-error unknown layerNorm option
layerNorm(x, { epsilon: 1e-5 });
// @ts-expect-error a number is not a tensor
softmax(5);
const dSoftmax: Tensor = softmaxBackward(y, x);
const lnOptions: LayerNormOptions = { eps: 1e-6, weight: [1, 1, 1, 1], bias: [0, 0, 0, 0] };
const lnGrads = layerNormBackward(x, x, lnOptions);
const lnGradX: Tensor = lnGrads.x;
const lnGradWeight: Tensor | undefined = lnGrads.weight;
layerNormBackward(x, x);
// @ts-expect-error weight's gradient may be absent (no weight given)
layerNormBackward(x, x).weight.shape;
// @ts-expect-error softmaxBackward needs gradOutput
softmaxBackward(y);
// @ts-expect-error unknown layerNorm option
layerNormBackward(x, x, { epsilon: 1e-5 });

// ---- scaledDotProductAttention ------------------------------------------------------------------
const dropout: DropoutOptions = { p: 0.1, seed: 42 };
const sdpaOptions: AttentionOptions = {
  mask,
  additiveMask: new Tensor(new Float32Array(4), [2, 2]),
  causal: true,
  scale: 0.5,
  dropout,
  needWeights: true,
  trace: true,
};
const sdpa: AttentionResult = scaledDotProductAttention(x, x, x, sdpaOptions);
const out: Tensor = sdpa.output;
const maybeWeights: Tensor | undefined = sdpa.weights;
if (sdpa.weights) console.log(sdpa.weights.shape);
const steps: TraceStep[] = sdpa.trace ?? [];
for (const step of steps) {
  const name: string = step.name;
  const stepData: Float32Array = step.data;
  const axes: string[] = step.axes;
  console.log(name, stepData.length, axes, step.shape);
}
scaledDotProductAttention(x, x, x, { needWeights: false });
// @ts-expect-error v is required
scaledDotProductAttention(x, x);
// @ts-expect-error weights may be absent (needWeights: false)
scaledDotProductAttention(x, x, x).weights.shape;
// @ts-expect-error dropout needs p
scaledDotProductAttention(x, x, x, { dropout: { seed: 1 } });
// @ts-expect-error causal is a boolean
scaledDotProductAttention(x, x, x, { causal: 'yes' });
const grads: { q: Tensor; k: Tensor; v: Tensor } = scaledDotProductAttentionBackward(
  x,
  x,
  x,
  out,
  sdpaOptions,
);
scaledDotProductAttentionBackward(x, x, x, out);
// @ts-expect-error gradOutput is required
scaledDotProductAttentionBackward(x, x, x);
// @ts-expect-error keyPaddingMask is not an SDPA option
scaledDotProductAttentionBackward(x, x, x, out, { keyPaddingMask: mask });

export { y, out, maybeWeights, likes };
export { dtype, data, shape, size, value, asArray, fromNumbers, boolMask, notNumber };
export { ids, idsDtype, dSoftmax, lnGradX, lnGradWeight, grads };
