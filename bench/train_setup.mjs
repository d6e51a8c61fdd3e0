// Shared set-up of the training-step benchmark (bench/train.mjs): the model sizes, the state-dict
// layout of TinyTransformer, one seeded set of initial weights and one list of batches that every
// contender (ours, tfjs-backend-wasm, PyTorch) starts from, so their first losses can be compared.
import { writeFileSync } from 'node:fs';
import { mulberry32 } from './naive.mjs'; // the same data generator as the forward benchmark

// The reverse task at length 8: x1..x8 SEP a1..a8 over 10 symbols, so V = 11 and T = 16
// (src/train/tasks.h). The batches below follow that format; the content does not change the cost.
export const kSymbols = 10;
export const kTaskLength = 8;
export const kVocab = kSymbols + 1;
export const kSeqLen = 2 * kTaskLength; // T of ids
export const kBatch = 32;
export const kNumBatches = 8; // cycled: step s trains on batch s mod 8
export const kIgnore = -100;

export const OPTIMIZER = { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0.01, clipGradNorm: 1 };

/** A model size of the benchmark: 4 heads, 2 pre-LN layers with an MLP of 4·d, learned positions. */
export function modelConfig(dModel) {
  return { vocabSize: kVocab, maxLength: kSeqLen, dModel, numHeads: 4, numLayers: 2, mlpHidden: 4 * dModel };
}

/** [name, shape] in TinyTransformer's parameter order (its state-dict names). */
export function parameterShapes(c) {
  const d = c.dModel;
  const list = [
    ['tok_emb.weight', [c.vocabSize, d]],
    ['pos_emb.weight', [c.maxLength, d]],
  ];
  for (let i = 0; i < c.numLayers; i++) {
    const p = `blocks.${i}.`;
    list.push(
      [`${p}ln1.weight`, [d]],
      [`${p}ln1.bias`, [d]],
      [`${p}attn.in_proj_weight`, [3 * d, d]],
      [`${p}attn.in_proj_bias`, [3 * d]],
      [`${p}attn.out_proj.weight`, [d, d]],
      [`${p}attn.out_proj.bias`, [d]],
      [`${p}ln2.weight`, [d]],
      [`${p}ln2.bias`, [d]],
      [`${p}mlp.fc1.weight`, [c.mlpHidden, d]],
      [`${p}mlp.fc1.bias`, [c.mlpHidden]],
      [`${p}mlp.fc2.weight`, [d, c.mlpHidden]],
      [`${p}mlp.fc2.bias`, [d]],
    );
  }
  list.push(
    ['ln_f.weight', [d]],
    ['ln_f.bias', [d]],
    ['head.weight', [c.vocabSize, d]],
    ['head.bias', [c.vocabSize]],
  );
  return list;
}

export function parameterCount(c) {
  return parameterShapes(c).reduce((n, [, s]) => n + s.reduce((a, b) => a * b, 1), 0);
}

/** The FLOP convention for a training step: 6 · parameters · tokens (B·T) per step. */
export function stepFlops(c) {
  return 6 * parameterCount(c) * kBatch * kSeqLen;
}

function normal(rand) {
  const u = 1 - rand(); // (0, 1]: log is finite
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
}

/**
 * Initial weights with TinyTransformer's scheme (GPT-2's): matrices and embeddings ~ N(0, 0.02²),
 * the residual-stream projections (out_proj, fc2) ~ N(0, (0.02/√(2·layers))²), pos_emb ~ N(0, 0.01²),
 * biases 0, LayerNorm weights 1. Returns { name: { shape, data: Float32Array } } in module order.
 */
export function initialWeights(c, seed) {
  const rand = mulberry32(seed);
  const out = {};
  for (const [name, shape] of parameterShapes(c)) {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    const leaf = name.split('.').slice(-1)[0];
    if (/(^|\.)ln(\d+|_f)\.weight$/.test(name))
      data.fill(1); // LayerNorm gains
    else if (leaf === 'weight' || leaf === 'in_proj_weight') {
      const residual = name.endsWith('out_proj.weight') || name.endsWith('fc2.weight');
      const std = name === 'pos_emb.weight' ? 0.01 : residual ? 0.02 / Math.sqrt(2 * c.numLayers) : 0.02;
      for (let i = 0; i < data.length; i++) data[i] = std * normal(rand);
    }
    out[name] = { shape, data };
  }
  return out;
}

/**
 * kNumBatches batches of the reverse task in its format (src/train/tasks.h): ids = seq[:-1],
 * targets = seq[1:] with −100 before the answer. Each { ids, targets }: Int32Array (B·T), row-major.
 */
export function makeBatches(seed, count = kNumBatches) {
  const rand = mulberry32(seed ^ 0x5eed);
  const n = kSeqLen + 1;
  const batches = [];
  for (let b = 0; b < count; b++) {
    const ids = new Int32Array(kBatch * kSeqLen);
    const targets = new Int32Array(kBatch * kSeqLen);
    for (let r = 0; r < kBatch; r++) {
      const seq = new Int32Array(n);
      for (let i = 0; i < kTaskLength; i++) seq[i] = Math.floor(rand() * kSymbols);
      seq[kTaskLength] = kSymbols; // SEP
      for (let i = 0; i < kTaskLength; i++) seq[kTaskLength + 1 + i] = seq[kTaskLength - 1 - i];
      for (let t = 0; t < kSeqLen; t++) {
        ids[r * kSeqLen + t] = seq[t];
        targets[r * kSeqLen + t] = t >= kTaskLength ? seq[t + 1] : kIgnore;
      }
    }
    batches.push({ ids, targets });
  }
  return batches;
}

/**
 * The input file of bench/train_torch.py, safetensors-like: 8-byte little-endian header length,
 * a JSON header ({ config, optimizer, steps: { budget_ms, fixed_runs }, tensors: [{ name, dtype,
 * shape, offset }] }), then the raw little-endian data (weights float32, batches int32).
 */
export function writeTorchInput(file, { config, weights, batches, budgetMs, fixedRuns }) {
  const tensors = [];
  const parts = [];
  let offset = 0;
  const add = (name, dtype, shape, array) => {
    tensors.push({ name, dtype, shape, offset });
    parts.push(Buffer.from(array.buffer, array.byteOffset, array.byteLength));
    offset += array.byteLength;
  };
  for (const [name, { shape, data }] of Object.entries(weights)) add(name, 'float32', shape, data);
  batches.forEach((b, i) => {
    add(`batch.${i}.ids`, 'int32', [kBatch, kSeqLen], b.ids);
    add(`batch.${i}.targets`, 'int32', [kBatch, kSeqLen], b.targets);
  });
  const header = Buffer.from(
    JSON.stringify({
      config,
      optimizer: OPTIMIZER,
      steps: { budget_ms: budgetMs, fixed_runs: fixedRuns },
      tensors,
    }),
  );
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(header.length));
  writeFileSync(file, Buffer.concat([length, header, ...parts]));
}
