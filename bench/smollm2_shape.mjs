#!/usr/bin/env node
// `npm run bench:smollm2` (also part of `npm run bench`): the large-model check. A checkpoint
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
import { openAsBlob } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { CONFIG, checkModel, describe } from './smollm2_check.mjs';
import { writeShapedCheckpoint } from './shaped_checkpoint.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const SMOLLM2_DIR = path.join(here, '.cache', 'smollm2-360m-shaped');
/** Writes dir/config.json and dir/model.safetensors (streamed, 16 MiB at a time) unless already there. */
export function writeSmolLM2Shaped(dir = SMOLLM2_DIR) {
  return writeShapedCheckpoint(dir, CONFIG);
}

async function main() {
  const t0 = performance.now();
  const { file, size, written } = writeSmolLM2Shaped();
  if (written)
    console.log(
      `smollm2: wrote ${file} (${(size / 1e6).toFixed(0)} MB) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
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
