// Type test of MultiHeadAttention, its KV cache, the positional encodings, memory and errors.
// Compiled only, never run: `tsc -p tests/js/types --noEmit` (tests/js/types.test.mjs). Each file is
// a module of its own; `// @ts-expect-error` lines mark wrong usages (tsc fails if one compiles).
import {
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
  resetMemoryPeak,
} from 'attention-wasm';
import type {
  AttentionErrorCode,
  MultiHeadAttentionConfig,
  MultiHeadAttentionOptions,
  AttentionResult,
  StateDict,
  MultiHeadAttentionGrads,
} from 'attention-wasm';

// Inputs as usage.ts makes them.
const x = new Tensor(new Float32Array(24), [2, 3, 4]);
const mask = new Tensor(new Uint8Array([1, 0, 1, 1]), [2, 2]);

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
resetMemoryPeak();
const peak: number = memoryStats().peakBytesInUse - memoryStats().bytesInUse;
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

export { dims, eps, hasNorm, same, r, pe, rows, maxLength, normal, limit, variant, stats, badCode };
