// Type test: the whole public API used as a TypeScript user would, with `// @ts-expect-error`
// lines for wrong usages (tsc fails if one of them compiles, so they prove the types are strict).
// Compiled only, never run: `tsc -p tests/js/types --noEmit`.
import {
  init,
  Tensor,
  AttentionError,
  softmax,
  layerNorm,
  scaledDotProductAttention,
  MultiHeadAttention,
  sinusoidalEncoding,
  LearnedPositionalEncoding,
  seededNormal,
  setMemoryLimit,
  memoryLimit,
  kernelVariant,
  memoryStats,
  scaledDotProductAttentionBackward,
  softmaxBackward,
  layerNormBackward,
  TinyTransformer,
  Trainer,
  createTask,
  evaluate,
  applyRotary,
  applyRotaryBackward,
  alibiSlopes,
  KVCache,
  loadPretrained,
  PretrainedModel,
} from 'attention-wasm';
import type {
  AttentionErrorCode,
  TensorLike,
  NestedArray,
  InitOptions,
  DropoutOptions,
  AttentionOptions,
  MultiHeadAttentionConfig,
  MultiHeadAttentionOptions,
  AttentionResult,
  TraceStep,
  StateDict,
  DType,
  TensorOptions,
  LayerNormOptions,
  MultiHeadAttentionGrads,
  IdsLike,
  TinyTransformerConfig,
  TinyForwardOptions,
  TinyForwardResult,
  TrainerOptions,
  TrainerState,
  Task,
  TaskName,
  TaskOptions,
  EvaluateOptions,
  SdpaOptions,
  RotaryOptions,
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

// ---- MultiHeadAttention -------------------------------------------------------------------------
const config: MultiHeadAttentionConfig = {
  embedDim: 8,
  numHeads: 2,
  kdim: 6,
  vdim: 10,
  headDim: 4,
  valueHeadDim: 4,
  bias: true,
  addBiasKV: false,
  addZeroAttn: false,
  residual: true,
  layerNorm: { eps: 1e-6 },
  seed: 1,
};
const mha = new MultiHeadAttention(config);
const small = new MultiHeadAttention({ embedDim: 8 });
new MultiHeadAttention({ embedDim: 8, layerNorm: true });
const dims: number = mha.embedDim + mha.numHeads + mha.headDim + mha.valueHeadDim;
const eps: number = mha.config.layerNormEps;
const hasNorm: boolean = mha.config.layerNorm;
const stateDict: Record<string, Tensor> = mha.stateDict();
const input: StateDict = {
  in_proj_weight: stateDict.in_proj_weight,
  'out_proj.bias': [0, 0, 0, 0, 0, 0, 0, 0],
};
const same: MultiHeadAttention = small.loadStateDict(input);
const forwardOptions: MultiHeadAttentionOptions = {
  mask,
  additiveMask: null,
  keyPaddingMask: new Tensor(new Uint8Array(6), [2, 3]),
  causal: false,
  needWeights: true,
  averageWeights: false,
  positional: sinusoidalEncoding(16, 8),
  trace: true,
  dropout: { p: 0.1 },
};
const r: AttentionResult = mha.forward(x, x, x, forwardOptions);
small.forward(x);
small.forward(x, null, null, { trace: true });
small.forward(x, x);
small.forward(x, null, null, { requiresGrad: true, causal: true });
const mhaGrads: MultiHeadAttentionGrads = small.backward(x);
const dQuery: Tensor = mhaGrads.inputs.query;
const dKey: Tensor | undefined = mhaGrads.inputs.key;
const dOutWeight: Tensor = small.backward(new Tensor(new Float32Array(24), [2, 3, 4])).params[
  'out_proj.weight'
];
// @ts-expect-error key's gradient may be absent (self-attention)
mhaGrads.inputs.key.shape;
// @ts-expect-error backward needs gradOutput
small.backward();
// @ts-expect-error requiresGrad is a boolean
small.forward(x, null, null, { requiresGrad: 'yes' });
mha.dispose();
small.dispose();
// @ts-expect-error embedDim is required
new MultiHeadAttention({ numHeads: 2 });
// @ts-expect-error unknown config key
new MultiHeadAttention({ embedDim: 8, heads: 2 });
// @ts-expect-error layerNorm is a boolean or { eps }
new MultiHeadAttention({ embedDim: 8, layerNorm: 1e-5 });
// @ts-expect-error config is read-only
mha.config.embedDim = 16;
// @ts-expect-error averageWeights is a boolean
small.forward(x, null, null, { averageWeights: 'yes' });
// @ts-expect-error keyPaddingMask is not an SDPA option
scaledDotProductAttention(x, x, x, { keyPaddingMask: mask });

// ---- positional encodings, seededNormal, memory -------------------------------------------------
const pe: Tensor = sinusoidalEncoding(16, 8, { base: 10000 });
sinusoidalEncoding(16, 8);
const learned = new LearnedPositionalEncoding({ maxLength: 32, dModel: 8, seed: 3 });
const rows: Tensor = learned.encode(10);
const table: Tensor = learned.table;
learned.setTable(new Tensor(new Float32Array(32 * 8), [32, 8]));
const maxLength: number = learned.maxLength + learned.dModel;
learned.dispose();
const normal: Tensor = seededNormal([2, 3], 7);
seededNormal([4]);
setMemoryLimit(2 ** 28);
const limit: number = memoryLimit();
const variant: 'relaxed-simd' | 'simd128' | 'scalar' = kernelVariant();
const stats: { heapBytes: number; liveHandles: number } = memoryStats();
// @ts-expect-error dModel is required
sinusoidalEncoding(16);
// @ts-expect-error the table is read-only (use setTable)
learned.table = table;
// @ts-expect-error maxLength is required
new LearnedPositionalEncoding({ dModel: 8 });
// @ts-expect-error bytes is a number
setMemoryLimit('1GB');
// @ts-expect-error 'avx' is never a kernel variant
if (kernelVariant() === 'avx') console.log('impossible');

// ---- errors -------------------------------------------------------------------------------------
try {
  softmax([Number.NaN]);
} catch (error) {
  if (error instanceof AttentionError) {
    const code: AttentionErrorCode = error.code;
    const message: string = error.message;
    const isError: Error = error;
    switch (code) {
      case 'NON_FINITE':
      case 'TOO_LARGE':
      case 'DISPOSED':
      case 'NOT_INITIALIZED':
        console.log(message, isError.name);
        break;
      default:
        break;
    }
  }
}
const made = new AttentionError('SHAPE_MISMATCH', 'shapes disagree');
// @ts-expect-error not an error code
const badCode: AttentionErrorCode = 'NOPE';
// @ts-expect-error not an error code
new AttentionError('OOPS', 'message');
// @ts-expect-error code is read-only
made.code = 'TOO_LARGE';

export {
  y,
  out,
  maybeWeights,
  dims,
  eps,
  hasNorm,
  same,
  r,
  pe,
  rows,
  maxLength,
  normal,
  limit,
  variant,
  stats,
  likes,
};
export { dtype, data, shape, size, value, asArray, fromNumbers, boolMask, notNumber, badCode };
export { ids, idsDtype, dSoftmax, lnGradX, lnGradWeight, grads };

// ---- TinyTransformer, Trainer, tasks, evaluate ----------------------------------------------------
const tinyConfig: TinyTransformerConfig = {
  vocabSize: 11,
  maxLength: 16,
  dModel: 32,
  numHeads: 4,
  numLayers: 2,
  mlp: true,
  mlpHidden: 64,
  positional: 'sinusoidal',
  norm: 'post',
  causal: true,
  seed: 1,
};
const tiny = new TinyTransformer(tinyConfig);
new TinyTransformer({ vocabSize: 11, maxLength: 16, dModel: 32, numHeads: 4 });
const fullConfig: Required<TinyTransformerConfig> = tiny.config;
const parameterCount: number = tiny.parameterCount;
const tokenIds: IdsLike = { data: new Int32Array(16), shape: [1, 16] };
const tinyForwardOptions: TinyForwardOptions = { attention: [0], trace: { layers: [1] } };
const tinyResult: TinyForwardResult = tiny.forward(tokenIds, tinyForwardOptions);
const logits: Tensor = tinyResult.logits;
const layerWeights: (Tensor | null)[] = tinyResult.attention;
const layerTrace: (TraceStep[] | null)[] | undefined = tinyResult.trace;
tiny.forward([[1, 2, 3]], { attention: false, trace: true });
const tinyLoss: number = tiny.loss([1, 2, 3], [2, 3, -100]);
const tinyGrads: Record<string, Tensor> = tiny.gradients(ids, ids).grads;
tiny.loadStateDict(tiny.stateDict());
const file: Uint8Array = tiny.toSafetensors();
const loaded: TinyTransformer = TinyTransformer.fromSafetensors(file.buffer);
TinyTransformer.fromSafetensors(file.subarray(0));
// @ts-expect-error positional is 'learned' | 'sinusoidal' | 'rope' | 'alibi' | 'none'
new TinyTransformer({ ...tinyConfig, positional: 'rotary' });
new TinyTransformer({ ...tinyConfig, positional: 'rope', numKVHeads: 1, window: 16 });
// @ts-expect-error vocabSize is required
new TinyTransformer({ maxLength: 16, dModel: 32, numHeads: 4 });
// @ts-expect-error unknown config key
new TinyTransformer({ ...tinyConfig, n_head: 4 });
// @ts-expect-error trace takes { layers }, not a list
tiny.forward(tokenIds, { trace: [0] });
// @ts-expect-error config is read-only
tiny.config.dModel = 8;

const trainerOptions: TrainerOptions = {
  lr: 1e-2,
  betas: [0.9, 0.98],
  eps: 1e-8,
  weightDecay: 0,
  clipGradNorm: 1,
};
const trainer = new Trainer(tiny, trainerOptions);
new Trainer(tiny, { clipGradNorm: null });
const stepResult: { loss: number; gradNorm: number } = trainer.step(tokenIds, tokenIds);
const stepCount: number = trainer.steps;
trainer.setLearningRate(1e-3);
const trainerState: TrainerState = trainer.stateDict();
trainer.loadStateDict(trainerState);
// @ts-expect-error betas is a pair
new Trainer(tiny, { betas: 0.9 });
// @ts-expect-error weight_decay is spelled weightDecay
new Trainer(tiny, { weight_decay: 0 });
// @ts-expect-error steps is read-only
trainer.steps = 3;

const taskOptions: TaskOptions = { length: 8, numSymbols: 10, seed: 5 };
const task: Task = createTask('reverse', taskOptions);
const taskName: TaskName = task.name;
const taskBatch: { ids: Tensor; targets: Tensor } = task.batch(32);
const vocab: number = task.vocabSize + task.sequenceLength;
const tokenNames: readonly string[] = task.tokenNames;
// @ts-expect-error unknown task
createTask('palindrome', { length: 3 });
// @ts-expect-error length is required
createTask('copy', {});
const evalOptions: EvaluateOptions = { batches: 4, seed: 1, batchSize: 16 };
const scores: { loss: number; tokenAccuracy: number; sequenceAccuracy: number } = evaluate(
  tiny,
  task,
  evalOptions,
);
evaluate(tiny, task);
// @ts-expect-error unknown evaluate option
evaluate(tiny, task, { batch_size: 8 });
for (const h of [trainer, tiny, loaded, task]) h.dispose();

// ---- attention as today's models use it (issue #15) ---------------------------------------------
const modern: SdpaOptions = {
  causal: 'bottom-right',
  window: 128,
  alibi: true,
  enableGQA: true,
  needWeights: false,
};
scaledDotProductAttention(
  seededNormal([1, 8, 4, 16]),
  seededNormal([1, 2, 6, 16]),
  seededNormal([1, 2, 6, 16]),
  modern,
);
scaledDotProductAttention(
  seededNormal([1, 2, 4, 16]),
  seededNormal([1, 2, 4, 16]),
  seededNormal([1, 2, 4, 16]),
  { causal: 'top-left', positionOffset: 3, alibi: [0.5, 0.25] },
);
scaledDotProductAttention(seededNormal([2, 2]), seededNormal([2, 2]), seededNormal([2, 2]), {
  // @ts-expect-error causal is true, false, 'top-left' or 'bottom-right'
  causal: 'bottom_right',
});
const rope: RotaryOptions = { base: 500000, style: 'interleaved', dims: 8, offset: 10 };
const rotated: Tensor = applyRotary(seededNormal([4, 16]), rope);
applyRotaryBackward(rotated, { style: 'half' });
// @ts-expect-error style is 'half' or 'interleaved'
applyRotary(rotated, { style: 'neox' });
const slopes: Float32Array = alibiSlopes(12);
const gqa = new MultiHeadAttention({
  embedDim: 16,
  numHeads: 4,
  numKVHeads: 2,
  rope: { base: 500000, style: 'half' },
});
const kvHeads: number = gqa.numKVHeads;
const ropeConfig = gqa.config.rope;
if (ropeConfig) {
  const b: number = ropeConfig.base;
}
const cache: KVCache = gqa.createCache({ maxLength: 64 });
gqa.forward(seededNormal([1, 1, 16]), null, null, { cache, causal: true, alibi: true, window: 8 });
const cachedLength: number = cache.length;
cache.reset().dispose();
// @ts-expect-error rope has no offset
new MultiHeadAttention({ embedDim: 16, numHeads: 4, rope: { offset: 3 } });
gqa.dispose();

// ---- real checkpoints (issue #16) -----------------------------------------------------------------
const pretrained: PretrainedModel = await loadPretrained({
  config: { architectures: ['GPT2LMHeadModel'] },
  weights: new Uint8Array(8),
  onProgress: (done: number, total: number) => void (done / total),
});
const pOut = pretrained.forward([1, 2, 3], { attention: [0], hiddenStates: true });
const pLogits: Tensor = pOut.logits;
const newIds: Tensor = pretrained.generate(pretrained.encode('hi'), {
  maxNewTokens: 4,
  temperature: 0.8,
  topK: 20,
  seed: 1,
});
const pieces: string[] = pretrained.tokenStrings(newIds);
const text: string = pretrained.decode(newIds);
// @ts-expect-error maxNewTokens is required
pretrained.generate([1], {});
pretrained.dispose();

// ---- interpretability (issue #27) ---------------------------------------------------------------
import { attentionRollout } from 'attention-wasm';
import type {
  HeadScoreKind,
  HeadScoresOptions,
  HeadScores,
  AttentionRolloutOptions,
  LogitAttribution,
  LogitAttributionOptions,
} from 'attention-wasm';
const scoreKinds: HeadScoreKind[] = ['previous-token', 'duplicate-token', 'induction'];
const scoreOptions: HeadScoresOptions = { kinds: scoreKinds };
const tinyScores: HeadScores = tiny.headScores([1, 2, 1, 2], scoreOptions);
const inductionScores: Tensor | undefined = tinyScores.induction;
const pScores: HeadScores = pretrained.headScores(new Int32Array([1, 2, 3]));
// @ts-expect-error not a kind
tiny.headScores([1, 2], { kinds: ['copying'] });
const rolloutOptions: AttentionRolloutOptions = { residualWeight: 0.25 };
const rolled: Tensor = attentionRollout(tiny.forward([1, 2, 3]).attention, rolloutOptions);
attentionRollout(pretrained.forward([1, 2]).attention);
// @ts-expect-error residualWeight is a number
attentionRollout([], { residualWeight: '0.5' });
const attrOptions: LogitAttributionOptions = { token: 3, against: 4, position: 0 };
const attr: LogitAttribution = tiny.logitAttribution([1, 2, 3], attrOptions);
const attrHeads: Tensor = attr.heads;
const attrTotal: number = attr.total + attr.embed + attr.bias + attr.logitDiff;
// @ts-expect-error token is required
tiny.logitAttribution([1, 2, 3], { against: 4 });
const pAttr: LogitAttribution = pretrained.logitAttribution([1, 2, 3], { token: 3 });
import type { PatchOptions, PatchResult, PatchComponent } from 'attention-wasm';
const patchComponent: PatchComponent = 'head-position';
const patchOptions: PatchOptions = {
  clean: [1, 2, 3],
  corrupted: [1, 4, 3],
  token: 5,
  against: 6,
  position: 2,
  component: patchComponent,
  metric: 'probability',
  onProgress: (done: number, total: number) => void (done / total),
  signal: new AbortController().signal,
};
const patched: Promise<PatchResult> = tiny.patch(patchOptions);
void pretrained
  .patch({
    clean: [
      [1, 2],
      [3, 4],
    ],
    corrupted: [
      [1, 5],
      [3, 6],
    ],
    token: 1,
  })
  .then((r: PatchResult) => r.result.shape);
// @ts-expect-error not a component
tiny.patch({ clean: [1], corrupted: [2], token: 1, component: 'mlp' });
