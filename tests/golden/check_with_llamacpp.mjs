// Every GGUF fixture of tests/golden/gguf/ through llama.cpp itself (node-llama-cpp 3.22.1, its
// prebuilt CPU binary, installed by this script into build/llamacpp) and through the library
// (src/js/index.js over dist/), in the same Node process:
//   node tests/golden/check_with_llamacpp.mjs
// It compares the next-token probabilities at every prompt position (max |Δp| over the vocabulary),
// the tokenization of several strings (must be identical, with and without what the vocab adds),
// greedy ids for a few steps and the chat template as llama.cpp's Jinja engine renders it; prints
// a table; and writes tests/golden/gguf/llamacpp-expected.json with llama.cpp's numbers (token ids,
// the top probabilities at each position, greedy ids with their top two probabilities, the chat),
// which tests/js/gguf-llamacpp.test.mjs holds the library to in npm test. Exits 1 when
// tokenization or the chat differs, a |Δp| passes the case's tolerance (gguf-cases.mjs), or
// greedy ids differ where llama.cpp's choice was clear. Diagnoses printed too: each quantized
// checkpoint against llama.cpp on its dequantized weights in F32, and each block layout alone (the
// 256-wide model with only its embeddings quantized, float32 KV cache, within 1e-4).
// LLAMACPP_F32_KV=1 runs llama.cpp with a float32 KV cache (and writes no expectations).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { init, loadPretrained } from '../../src/js/index.js';
import { CASES, EXPECTED_FILE, GGUF_DIR, INT8_TOLERANCE, greedyAgreement } from './gguf-cases.mjs';
import { dequantizedGGUF, makeFixtures, tiny256EmbeddingVariant } from './make_gguf_fixtures.mjs';
import { NODE_LLAMA_CPP, openLlama, runLlamaCpp } from './llamacpp-run.mjs';

const TOP_K = 24; // probabilities kept per position in the expectations

/** softmax of row `t` of logits (B = 1, T, V), in float64. */
export function softmaxRow(logits, t) {
  const V = logits.shape[2];
  const row = Array.from(logits.data.subarray(t * V, (t + 1) * V));
  const max = Math.max(...row);
  const e = row.map((x) => Math.exp(x - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / sum);
}

// The same fixture through the library.
async function runOurs(bytes, testCase, prompt, activations = 'exact') {
  const model = await loadPretrained({ gguf: bytes, activations });
  try {
    const texts = testCase.texts.map((text) => ({
      ids: Array.from(model.encode(text, { addSpecialTokens: false })),
      idsSpecial: Array.from(model.encode(text)),
    }));
    const { logits } = model.forward(prompt);
    const probs = prompt.map((_, t) => softmaxRow(logits, t));
    const greedy = Array.from(model.generate(prompt, { maxNewTokens: testCase.greedySteps, stop: [] }).data);
    const chat = model.chatTemplateNames.length
      ? model.applyChatTemplate(testCase.chat, { tokenize: false, addGenerationPrompt: true })
      : null;
    return { texts, probs, greedy, chat };
  } finally {
    model.dispose();
  }
}

const maxAbsDiff = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
const round = (p) => Number(p.toPrecision(8));

// The k likeliest [id, p] of a dense probability vector (ties to the lower id).
export function topK(p, k) {
  return Array.from(p, (v, id) => [id, v])
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, k);
}

// What the library must reproduce, from llama.cpp's run.
function expectation(testCase, ll) {
  return {
    texts: ll.texts,
    prompt: ll.prompt,
    vocab: ll.probs[0].length,
    top: ll.probs.map((p) => topK(p, TOP_K).map(([id, v]) => [id, round(v)])),
    greedy: ll.greedy,
    greedyTop2: ll.greedyProbs.map((p) => topK(p, 2).map(([id, v]) => [id, round(v)])),
    chat: ll.chat,
    tolerance: testCase.tolerance,
  };
}

// The agreement of one fixture: max |Δp| at the prompt positions, tokenization, greedy ids, chat.
function agreement(ll, ours, tolerance) {
  const dp = maxDp(ll.probs, ours.probs);
  const tokenization = ll.texts.every(
    (t, i) =>
      JSON.stringify(t.ids) === JSON.stringify(ours.texts[i].ids) &&
      JSON.stringify(t.idsSpecial) === JSON.stringify(ours.texts[i].idsSpecial),
  );
  const mismatches = ll.texts.filter((t, i) => JSON.stringify(t.ids) !== JSON.stringify(ours.texts[i].ids));
  return {
    maxDp: dp,
    tokenization,
    mismatches: mismatches.map((t) => ({
      text: t.text,
      llama: t.ids,
      ours: ours.texts[ll.texts.indexOf(t)].ids,
    })),
    greedy: greedyAgreement(
      ll.greedy,
      ll.greedyProbs.map((p) => topK(p, 2)),
      ours.greedy,
      tolerance,
    ),
    chat: ll.chat === ours.chat,
  };
}

const maxDp = (a, b) => Math.max(...a.map((p, t) => maxAbsDiff(p, b[t])));

// For a Q8_0 / Q4_0 fixture, llama.cpp also runs the same weights dequantized into an F32 file: the
// library's quantized model against that run leaves only the KV cache's rounding, and llama.cpp's
// quantized run against it shows what its 8-bit activations alone change.
async function diagnoseQuantized(handle, c, ll, ours) {
  if (!c.source.quant) return {};
  const dir = fileURLToPath(new URL('../../build/llamacpp/dequantized/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const path = `${dir}${c.file.replace('.gguf', '.dequantized.gguf')}`;
  writeFileSync(path, dequantizedGGUF(c.source));
  const deq = await runLlamaCpp(handle, path, c);
  return {
    'ours vs llama.cpp F32-dequantized': maxDp(ours.probs, deq.probs).toExponential(2),
    'llama.cpp quantized vs F32-dequantized': maxDp(ll.probs, deq.probs).toExponential(2),
  };
}

const LAYOUT_TYPES = ['Q8_0', 'Q4_0', 'Q5_0', 'IQ4_NL', 'Q2_K', 'Q3_K', 'Q4_K', 'Q5_K', 'Q6_K'];
const kLayoutDp = 1e-4; // float noise: both dequantize the rows exactly, the rest is F32

// Each block layout against ggml's: the 256-wide model with only its embeddings in that type, run
// with a float32 KV cache (tiny256EmbeddingVariant). Returns { type: max |Δp| }.
async function checkLayouts(handle) {
  const c = CASES.find((x) => x.source.model === 'tiny256');
  const dir = fileURLToPath(new URL('../../build/llamacpp/dequantized/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const out = {};
  for (const type of LAYOUT_TYPES) {
    const path = `${dir}tiny256-embd-${type}.gguf`;
    writeFileSync(path, tiny256EmbeddingVariant(type));
    const ll = await runLlamaCpp(handle, path, c, { f32Kv: true });
    const ours = await runOurs(readFileSync(path), c, ll.prompt);
    out[type] = Number(maxDp(ll.probs, ours.probs).toPrecision(3));
  }
  console.log('embeddings of each type, float32 KV cache: max |Δp|', out);
  return out;
}

// The int8 activation mode against llama.cpp with a float32 KV cache (then llama.cpp and the int8
// mode differ only in float rounding), on each quantized fixture: llama.cpp's top probabilities of
// that run go into the expectations (the case's `int8`), with the measured |Δp| of both modes.
async function checkInt8(handle, expected) {
  const rows = [];
  let failed = false;
  for (const c of CASES.filter((x) => x.quantized)) {
    const path = fileURLToPath(new URL(c.file, GGUF_DIR));
    const ll = await runLlamaCpp(handle, path, c, { f32Kv: true });
    const dp = {};
    for (const activations of ['int8', 'exact'])
      dp[activations] = maxDp(ll.probs, (await runOurs(readFileSync(path), c, ll.prompt, activations)).probs);
    expected.cases[c.file].int8 = {
      top: ll.probs.map((p) => topK(p, TOP_K).map(([id, v]) => [id, round(v)])),
      measured: { int8: Number(dp.int8.toPrecision(3)), exact: Number(dp.exact.toPrecision(3)) },
    };
    rows.push({ fixture: c.file, 'int8 max |Δp|': dp.int8.toExponential(2), 'exact max |Δp|': dp.exact.toExponential(2) });
    failed ||= dp.int8 > (c.int8Tolerance ?? INT8_TOLERANCE);
  }
  console.log(`llama.cpp with a float32 KV cache against the int8 and exact modes (tolerance ${INT8_TOLERANCE}):`);
  console.table(rows);
  return failed;
}

// The expectations as JSON with one line per key and per fixture (readable diffs, compact file).
function formatExpected({ cases, ...rest }) {
  const head = Object.entries(rest).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)},`);
  const body = Object.entries(cases).map(([k, v]) => `    ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
  return `{\n${head.join('\n')}\n  "cases": {\n${body.join(',\n')}\n  }\n}\n`;
}

// The committed fixtures must be what make_gguf_fixtures.mjs writes (the script is seeded).
function checkFixtures() {
  for (const [file, bytes] of makeFixtures()) {
    const committed = readFileSync(new URL(file, GGUF_DIR));
    if (Buffer.compare(committed, Buffer.from(bytes)) !== 0)
      throw new Error(`${file} differs from what make_gguf_fixtures.mjs writes: rerun it`);
  }
}

async function main() {
  checkFixtures();
  await init();
  const handle = await openLlama();
  const expected = {
    generator: 'tests/golden/check_with_llamacpp.mjs',
    llamaCpp: `node-llama-cpp ${NODE_LLAMA_CPP} (CPU, prebuilt)`,
    kvCache: 'F16 (llama.cpp default)',
    cases: {},
  };
  const rows = [];
  let failed = false;
  for (const c of CASES) {
    const path = fileURLToPath(new URL(c.file, GGUF_DIR));
    const ll = await runLlamaCpp(handle, path, c);
    const ours = await runOurs(readFileSync(path), c, ll.prompt);
    const a = agreement(ll, ours, c.tolerance);
    const measured = { maxDp: Number(a.maxDp.toPrecision(3)), greedy: a.greedy.text };
    expected.cases[c.file] = { ...expectation(c, ll), measured };
    rows.push({
      fixture: c.file,
      'max |Δp|': a.maxDp.toExponential(2),
      tolerance: c.tolerance,
      tokenization: a.tokenization ? 'identical' : 'DIFFERS',
      greedy: a.greedy.text,
      chat: ll.chat === null ? '-' : a.chat ? 'identical' : 'DIFFERS',
      ...(await diagnoseQuantized(handle, c, ll, ours)),
    });
    for (const m of a.mismatches) console.log(`${c.file}: ${JSON.stringify(m)}`);
    if (!a.chat)
      console.log(`${c.file} chat:\n llama ${JSON.stringify(ll.chat)}\n ours  ${JSON.stringify(ours.chat)}`);
    failed ||= !a.tokenization || !a.chat || !a.greedy.ok || a.maxDp > c.tolerance;
  }
  console.table(rows);
  failed = (await checkInt8(handle, expected)) || failed; // run even when a case failed: it writes expectations
  expected.layouts = await checkLayouts(handle);
  failed ||= Object.values(expected.layouts).some((dp) => dp > kLayoutDp);
  if (process.env.LLAMACPP_F32_KV)
    console.log('LLAMACPP_F32_KV: a diagnosis, the expectations are not written');
  else {
    writeFileSync(EXPECTED_FILE, formatExpected(expected));
    console.log(`wrote ${fileURLToPath(EXPECTED_FILE)}`);
  }
  await handle.llama.dispose();
  if (failed) process.exitCode = 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
