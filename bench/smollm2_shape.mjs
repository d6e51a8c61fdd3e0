#!/usr/bin/env node
// `npm run bench:smollm2` (also part of `npm run bench`): issue #16's large-model check. A checkpoint
// of SmolLM2-360M's shape (LlamaForCausalLM, 32 layers, 960 wide, 15 query / 5 key-value heads,
// vocab 49152, tied head; BF16, ~724 MB) with seeded random weights is written here (no model hub is
// reachable; never committed; cached in bench/.cache/), then loaded and run:
//   Node:     loadPretrained from a Blob of the file (fs.openAsBlob: read 16 MiB at a time), under the
//             library's default memory limit; a forward of 8 ids (logits finite, (1, 8, 49152); layer
//             0's attention rows sum to 1), greedy generation; load time, heap against the file size.
//   Chromium: bench/smollm2_browser.mjs does the same in a page, the file picked through an
//             <input type=file> (node bench/smollm2_shape.mjs --browser runs both).
// Exit 1 on any failure.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openAsBlob, openSync, readSync, statSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { CONFIG, checkModel, describe } from './smollm2_check.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const SMOLLM2_DIR = path.join(here, '.cache', 'smollm2-360m-shaped');
function tensorList(c) {
  const E = c.hidden_size, I = c.intermediate_size, d = E / c.num_attention_heads, kv = c.num_key_value_heads * d;
  const list = [['model.embed_tokens.weight', [c.vocab_size, E]], ['model.norm.weight', [E]]];
  for (let l = 0; l < c.num_hidden_layers; l++) {
    const p = `model.layers.${l}.`;
    list.push([`${p}input_layernorm.weight`, [E]], [`${p}post_attention_layernorm.weight`, [E]],
      [`${p}self_attn.q_proj.weight`, [E, E]], [`${p}self_attn.k_proj.weight`, [kv, E]],
      [`${p}self_attn.v_proj.weight`, [kv, E]], [`${p}self_attn.o_proj.weight`, [E, E]],
      [`${p}mlp.gate_proj.weight`, [I, E]], [`${p}mlp.up_proj.weight`, [I, E]], [`${p}mlp.down_proj.weight`, [E, I]]);
  }
  return list.sort((a, b) => (a[0] < b[0] ? -1 : 1));  // safetensors writers sort by name
}

// The header bytes (8-byte length + JSON padded with spaces to 8) and the data size.
function header(c) {
  const h = { __metadata__: { format: 'pt' } };
  let at = 0;
  for (const [name, shape] of tensorList(c)) {
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

/** Writes dir/config.json and dir/model.safetensors (streamed, 16 MiB at a time) unless already there. */
export function writeSmolLM2Shaped(dir = SMOLLM2_DIR) {
  const { head, dataBytes } = header(CONFIG);
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
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify(CONFIG, null, 2));
  const fd = openSync(file, 'w');
  writeSync(fd, head);
  let seed = 20261124;
  const count = 8 << 20;  // values per chunk (16 MiB of BF16)
  const values = new Float32Array(count), bits = new Uint32Array(values.buffer), out = new Uint16Array(count);
  for (const [name, shape] of tensorList(CONFIG)) {
    let left = shape.reduce((a, b) => a * b, 1);
    const norm = name.endsWith('norm.weight');
    while (left > 0) {
      const n = Math.min(left, count);
      for (let i = 0; i < n; i++) {  // norms 1.0; matrices uniform with std ≈ 0.02 (an LCG's top bits)
        seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
        values[i] = norm ? 1 : ((seed >>> 8) / 16777216 - 0.5) * 0.0693;
      }
      for (let i = 0; i < n; i++) out[i] = bits[i] >>> 16;  // BF16: the top half (little-endian host)
      writeSync(fd, out, 0, 2 * n);
      left -= n;
    }
  }
  closeSync(fd);
  return { file, size, written: true };
}

async function main() {
  const t0 = performance.now();
  const { file, size, written } = writeSmolLM2Shaped();
  if (written) console.log(`smollm2: wrote ${file} (${(size / 1e6).toFixed(0)} MB) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const attn = await import('../src/js/index.js');
  await attn.init();
  const r = await checkModel(attn, await openAsBlob(file), size);
  console.log(describe('Node', r));
  let failed = r.problems.length > 0;
  if (failed) console.error(`smollm2: Node: ${r.problems.join('; ')}`);
  if (process.argv.includes('--browser')) {
    const b = spawnSync(process.execPath, [path.join(here, 'smollm2_browser.mjs')], { stdio: 'inherit' });
    failed ||= b.status !== 0;
  }
  process.exit(failed ? 1 : 0);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
