// Checkpoints of a real model's shape with seeded random BF16 weights, written at run time (no model
// hub is reachable; never committed; cached under bench/.cache/): the SmolLM2-360M check of
// `npm test` and `npm run bench:shapes` load them to prove a family fits its stated memoryLimit.
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { coreConfig } from '../src/js/pretrained/config.js';
import { familyOf } from '../src/js/architectures/index.js';
import { LISTING_LIMIT, namedTensors } from '../src/js/pretrained/checkpoint-tensors.js';
import createAttentionModule from '../dist/attention_core.mjs';

// A module instance of its own (the single-thread build) lists a config's tensors (it loads
// nothing), so the library's init() — and the thread count a benchmark asks of it — stays the
// caller's.
const lister = await createAttentionModule();

/** GPT-2-small's config.json (bench/interp.mjs and bench/hooks.mjs share its cached checkpoint). */
export const GPT2_SMALL_CONFIG = Object.freeze({
  activation_function: 'gelu_new',
  architectures: ['GPT2LMHeadModel'],
  attn_pdrop: 0.1,
  bos_token_id: 50256,
  embd_pdrop: 0.1,
  eos_token_id: 50256,
  initializer_range: 0.02,
  layer_norm_epsilon: 1e-5,
  model_type: 'gpt2',
  n_ctx: 1024,
  n_embd: 768,
  n_head: 12,
  n_inner: null,
  n_layer: 12,
  n_positions: 1024,
  reorder_and_upcast_attn: false,
  resid_pdrop: 0.1,
  scale_attn_by_inverse_layer_idx: false,
  scale_attn_weights: true,
  tie_word_embeddings: true,
  torch_dtype: 'bfloat16',
  use_cache: true,
  vocab_size: 50257,
});

/**
 * Hugging Face tensor names and shapes of a config.json (any family of the registry), in the file's
 * layout and sorted by name as safetensors writers do; with the core config it maps to.
 */
export function configTensors(config) {
  const { architecture, core } = coreConfig(config);
  const handle = new lister.PretrainedHandle();
  try {
    const st = handle.init({ ...core, memoryLimit: LISTING_LIMIT });
    if (st.code !== 0) throw new Error(st.message);
    return { tensors: namedTensors(familyOf(architecture), handle.expected()), core };
  } finally {
    handle.delete();
  }
}

// The header bytes (8-byte length + JSON padded with spaces to 8) and the data size.
function header(tensors) {
  const h = { __metadata__: { format: 'pt' } };
  let at = 0;
  for (const [name, shape] of tensors) {
    const bytes = 2 * shape.reduce((a, b) => a * b, 1);
    h[name] = { dtype: 'BF16', shape, data_offsets: [at, at + bytes] };
    at += bytes;
  }
  let json = Buffer.from(JSON.stringify(h));
  json = Buffer.concat([json, Buffer.alloc((8 - (json.length % 8)) % 8, 0x20)]);
  const prefix = Buffer.alloc(8);
  prefix.writeBigUInt64LE(BigInt(json.length));
  return { head: Buffer.concat([prefix, json]), dataBytes: at };
}

/**
 * Writes dir/config.json and dir/model.safetensors (BF16, streamed 16 MiB at a time: norms 1.0 (0 where
 * the family's RMSNorm scales by 1 + w),
 * matrices uniform with std ≈ 0.02 from a seeded LCG) unless a file with the same header is there.
 */
export function writeShapedCheckpoint(
  dir,
  config,
  tensors = configTensors(config).tensors,
  seed0 = 20261124,
) {
  const { head, dataBytes } = header(tensors);
  const file = path.join(dir, 'model.safetensors');
  const size = head.length + dataBytes;
  if (existsSync(file) && statSync(file).size === size) {
    const fd = openSync(file, 'r');
    const got = Buffer.alloc(head.length);
    readSync(fd, got, 0, head.length, 0);
    closeSync(fd);
    if (got.equals(head)) return { file, size, written: false };
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config, null, 2));
  const fd = openSync(file, 'w');
  writeSync(fd, head);
  let seed = seed0;
  const normValue = configTensors(config).core.normWeightOffset ? 0 : 1; // Gemma's RMSNorm scales by (1 + w)
  const count = 8 << 20; // values per chunk (16 MiB of BF16)
  const values = new Float32Array(count),
    bits = new Uint32Array(values.buffer),
    out = new Uint16Array(count);
  for (const [name, shape] of tensors) {
    let left = shape.reduce((a, b) => a * b, 1);
    const norm = name.endsWith('norm.weight');
    while (left > 0) {
      const n = Math.min(left, count);
      for (let i = 0; i < n; i++) {
        seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
        values[i] = norm ? normValue : ((seed >>> 8) / 16777216 - 0.5) * 0.0693;
      }
      for (let i = 0; i < n; i++) out[i] = bits[i] >>> 16; // BF16: the top half (little-endian host)
      writeSync(fd, out, 0, 2 * n);
      left -= n;
    }
  }
  closeSync(fd);
  return { file, size, written: true };
}
