#!/usr/bin/env node
// `npm run bench:gguf-shapes [-- llama-3.2-3b qwen3-4b phi-3-mini-4k smollm3-3b] [--browser] [--no-node]`:
// the 3–4B models people run, as Q4_K_M GGUF files, in a tab. For each, a file of the released
// model's shape is written at run time under bench/.cache/ (never committed): the metadata llama.cpp's
// converter writes (hyperparameters from the released config.json; a synthetic vocabulary of the
// right size with readable tokenizer metadata; a stand-in chat template), the tensors and tensor
// types of a real Q4_K_M file (bench/gguf_shape_types.mjs), seeded random blocks with small finite
// float16 scales, streamed to disk. Then it is loaded with loadPretrained({ gguf, memoryLimit }) from
// a Blob over the file in Node (fs.openAsBlob) and, with --browser, from an <input type=file> in
// Chromium (bench/gguf_shape_browser.mjs), one model at a time (each in its own process), and checked
// (bench/gguf_shape_check.mjs). Exit 1 on any failure.
import { spawnSync } from 'node:child_process';
import { openAsBlob } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { GGUF_SHAPES, llama3RopeFactors } from './gguf_shape_models.mjs';
import { q4kmTensors, q8_0Tensors, typeSummary } from './gguf_shape_types.mjs';
import { tokenizerMetadata } from './gguf_shape_vocab.mjs';
import { writeShapedGGUF } from './gguf_shape_writer.mjs';
import { checkGGUF, describeGGUF } from './gguf_shape_check.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
// llama_ftype of each file kind written, and its tensors' types.
const FTYPES = { Q4_K_M: [15, q4kmTensors], Q8_0: [7, q8_0Tensors] };

/**
 * The memoryLimit model `name` is loaded under: its stated one, or --memory-limit=<bytes> (to measure
 * past a refusal of the stated one; the results say which was used).
 */
export function memoryLimitOf(name, argv = process.argv) {
  const flag = argv.find((a) => a.startsWith('--memory-limit='));
  return flag ? Number(flag.slice('--memory-limit='.length)) : GGUF_SHAPES[name].memoryLimit;
}

/** The metadata entries ([key, type, value]) of model m, in the converter's order. */
export function shapeMetadata(m, ftype = 'Q4_K_M') {
  const { hp, arch } = m;
  const a = (key) => `${arch}.${key}`;
  const out = [
    ['general.architecture', 'string', arch],
    ['general.type', 'string', 'model'],
    ['general.name', 'string', m.name],
    [a('block_count'), 'uint32', hp.layers],
    [a('context_length'), 'uint32', hp.ctx],
    [a('embedding_length'), 'uint32', hp.hidden],
    [a('feed_forward_length'), 'uint32', hp.ff],
    [a('attention.head_count'), 'uint32', hp.heads],
    [a('attention.head_count_kv'), 'uint32', hp.kvHeads],
  ];
  for (const [key, v] of Object.entries(m.keys))
    out.push([a(key), Number.isInteger(v) && !key.startsWith('rope.freq') ? 'uint32' : 'float32', v]);
  if (m.headDimKey) {
    out.push(
      [a('attention.key_length'), 'uint32', hp.headDim],
      [a('attention.value_length'), 'uint32', hp.headDim],
    );
  }
  if (m.llamaKeys)
    out.push(
      [a('vocab_size'), 'uint32', m.tokenizer.vocab],
      [a('rope.dimension_count'), 'uint32', hp.headDim],
    );
  out.push(['general.file_type', 'uint32', FTYPES[ftype][0]]);
  out.push(...tokenizerMetadata(m.tokenizer));
  out.push(['general.quantization_version', 'uint32', 2]);
  return out;
}

/** Writes (or finds) the shaped file of model `name`, Q4_K_M or Q8_0: { file, size, written, tensors }. */
export function writeGGUFShape(name, ftype = 'Q4_K_M') {
  const m = GGUF_SHAPES[name];
  const tensors = FTYPES[ftype][1](m);
  const values = (t) =>
    t.name === 'rope_freqs.weight' ? llama3RopeFactors(m.ropeFreqs) : new Float32Array(t.dims[0]).fill(1);
  const file = path.join(here, '.cache', `${name}-${ftype}-shaped.gguf`);
  return { ...writeShapedGGUF(file, shapeMetadata(m, ftype), tensors, values), tensors };
}

async function runNode(attn, name) {
  const memoryLimit = memoryLimitOf(name);
  const t0 = performance.now();
  const { file, size, written, tensors } = writeGGUFShape(name);
  const types = Object.entries(typeSummary(tensors))
    .map(([type, [n, bytes]]) => `${type} ×${n} (${(bytes / 1e6).toFixed(0)} MB)`)
    .join(', ');
  console.log(
    `${name}: ${written ? 'wrote' : 'found'} ${path.relative(process.cwd(), file)} (${(size / 1e9).toFixed(2)} GB` +
      `${written ? ` in ${((performance.now() - t0) / 1000).toFixed(1)} s` : ''}); ${tensors.length} tensors: ${types}`,
  );
  if (process.argv.includes('--no-node')) return [];
  const r = await checkGGUF(attn, await openAsBlob(file), size, { memoryLimit });
  console.log(describeGGUF(`${name}, Node, memoryLimit ${memoryLimit.toExponential(2)}`, r));
  console.log(`${name}: Node result ${JSON.stringify(r)}`);
  return r.problems.map((p) => `${name}: Node: ${p}`);
}

// One model in this process (Node, then Chromium with --browser): its problems.
async function runOne(name) {
  const attn = await import('../src/js/index.js');
  await attn.init();
  const problems = [];
  try {
    problems.push(...(await runNode(attn, name)));
  } catch (error) {
    problems.push(`${name}: Node: ${error.code ?? ''} ${error.message}`);
  }
  if (process.argv.includes('--browser')) {
    const flags = process.argv.filter((a) => a.startsWith('--memory-limit='));
    const b = spawnSync(process.execPath, [path.join(here, 'gguf_shape_browser.mjs'), name, ...flags], {
      stdio: 'inherit',
    });
    if (b.status !== 0) problems.push(`${name}: Chromium: exit ${b.status}`);
  }
  return problems;
}

async function main() {
  const flags = process.argv.slice(2).filter((a) => a.startsWith('-'));
  const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const names = wanted.length ? wanted : Object.keys(GGUF_SHAPES);
  for (const name of names)
    if (!GGUF_SHAPES[name])
      throw new Error(`unknown shape ${name}; known: ${Object.keys(GGUF_SHAPES).join(', ')}`);
  if (names.length === 1) {
    const problems = await runOne(names[0]);
    if (problems.length) console.error(problems.join('\n'));
    process.exit(problems.length ? 1 : 0);
  }
  // One process per model: the wasm heap only grows, so each model's heap is measured in a fresh one.
  let failed = false;
  for (const name of names) {
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), name, ...flags], {
      stdio: 'inherit',
    });
    failed ||= r.status !== 0;
  }
  process.exit(failed ? 1 : 0);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
