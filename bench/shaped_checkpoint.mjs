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
import { checkpointTensors, init } from '../src/js/index.js';

await init();

/**
 * Hugging Face tensor names and shapes of a config.json (any family of the registry), in the file's
 * layout and sorted by name as safetensors writers do; with the core config it maps to.
 */
export function configTensors(config) {
  return { tensors: checkpointTensors(config), core: coreConfig(config).core };
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
