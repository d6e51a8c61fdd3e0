// Type test of TinyTransformer and training, today's attention variants, checkpoints and
// interpretability.
// Compiled only, never run: `tsc -p tests/js/types --noEmit` (tests/js/types.test.mjs). Each file is
// a module of its own; `// @ts-expect-error` lines mark wrong usages (tsc fails if one compiles).
import {
  Tensor,
  scaledDotProductAttention,
  MultiHeadAttention,
  seededNormal,
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
  MapSession,
  TraceStep,
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

// Token ids as usage.ts makes them.
const ids = new Tensor(new Int32Array([1, 2, 3, 4]), [2, 2]);

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

// ---- attention as today's models use it ---------------------------------------------------------
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

// ---- real checkpoints ---------------------------------------------------------------------------
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
const noThought: string = pretrained.applyChatTemplate([{ role: 'user', content: 'hi' }], {
  tokenize: false,
  variables: { enable_thinking: false },
});
const order: 'grouped' | 'tiled' | undefined = pretrained.layers[0].valueHeadOrder;
// @ts-expect-error maxNewTokens is required
pretrained.generate([1], {});
pretrained.generate([1], {
  maxNewTokens: 2,
  kvCache: 'f16',
  prefillChunk: 128,
  onProgress: (done: number, total: number) => void (done / total),
  signal: new AbortController().signal,
});
// @ts-expect-error the KV cache is 'f32' or 'f16'
pretrained.generate([1], { maxNewTokens: 2, kvCache: 'bf16' });
const stated: number = pretrained.mapStateBytes(3, { layers: true });
const session: MapSession = await pretrained.prefill([1, 2, 3], {
  maps: { layers: [0] },
  onProgress: (done: number, total: number) => void (done / total),
});
const cells: Tensor = session.overview({ layer: 0, heads: [0, 1], pool: 'mean' });
const window: Tensor = session.tile({ layer: 0, head: 0, rows: [0, 2], cols: [0, 3] });
const top: Int32Array = session.topK({ layer: 0, head: 0, query: 2, k: 2 }).indices;
// @ts-expect-error pool is 'max' or 'mean'
session.overview({ layer: 0, head: 0, pool: 'sum' });
session.dispose();
pretrained.dispose();

// ---- the Hugging Face Hub: what a load would download, then the load --------------------------------
import { hubFiles, hubCache } from 'attention-wasm';
import type { HubFiles, HubCacheEntry } from 'attention-wasm';
const listed: HubFiles = await hubFiles({
  hub: 'owner/name',
  file: 'Q4_K_M',
  signal: new AbortController().signal,
});
const listedBytes: number = listed.size + listed.files[0].size;
const listedKind: 'gguf' | 'safetensors' = listed.kind;
// @ts-expect-error hubFiles lists: it takes no cache option
await hubFiles({ hub: 'owner/name', cache: false });
const cachedEntries: HubCacheEntry[] = await hubCache.list();

// ---- interpretability ---------------------------------------------------------------------------
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
tiny.patch({ clean: [1], corrupted: [2], token: 1, component: 'mlp' });
// @ts-expect-error not a component
tiny.patch({ clean: [1], corrupted: [2], token: 1, component: 'attn' });
const hookGrads: Record<string, Tensor> = tiny.metricGradients([1, 2], {
  token: 1,
  hooks: ['blocks.*.hook_resid_pre', 'blocks.0.attn.hook_z'],
}).gradHooks;
// @ts-expect-error hooks is a list of names
tiny.metricGradients([1, 2], { token: 1, hooks: 'blocks.0.hook_resid_pre' });
