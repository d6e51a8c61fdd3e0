// The qwen35 check at Qwen3.5-4B's widths, too large for a committed fixture (0.69 GB in F32):
//   node tests/golden/check_qwen35_wide.mjs
// A generated checkpoint (gguf-qwen35-model.mjs) 2560 wide, 16 heads of 256 on 4 KV heads with a
// quarter-rotary RoPE and the released mRoPE sections [11, 11, 10], DeltaNet layers of 16 key heads
// and 32 value heads of 128 (three, then a full layer), converted as convert_hf_to_gguf does, in
// build/llamacpp/, run through llama.cpp (node-llama-cpp, as check_with_llamacpp.mjs does) and the
// library on the qwen35-tiny prompt: prints max |Δp| at every position and both greedy chains, with
// llama.cpp's F16 and F32 KV caches (measured 7.7e-6 and 5.5e-7, greedy ids equal). Exits 1 past
// 1e-4 or when the greedy ids differ; the file is deleted after.
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { init, loadPretrained } from '../../src/js/index.js';
import { parseGGUF } from '../../src/js/formats/gguf.js';
import { fixtureGGUF } from '../js/gguf-from-fixture.js';
import { QWEN35_CONFIG, qwen35Checkpoint } from './gguf-qwen35-model.mjs';
import { CASES, GGUF_DIR } from './gguf-cases.mjs';
import { openLlama, runLlamaCpp } from './llamacpp-run.mjs';
import { softmaxRow } from './check_with_llamacpp.mjs';

const WIDE = {
  ...QWEN35_CONFIG,
  hidden_size: 2560,
  intermediate_size: 256,
  num_attention_heads: 16,
  num_key_value_heads: 4,
  head_dim: 256,
  linear_key_head_dim: 128,
  linear_value_head_dim: 128,
  linear_num_key_heads: 16,
  linear_num_value_heads: 32,
  max_position_embeddings: 262144,
  rope_parameters: { ...QWEN35_CONFIG.rope_parameters, rope_theta: 1e7, mrope_section: [11, 11, 10] },
};

await init();
const c = CASES.find((x) => x.file === 'qwen35-tiny.f32.gguf');
const tiny = await parseGGUF(readFileSync(new URL(c.file, GGUF_DIR)));
const tokenizer = Object.entries(tiny.metadata)
  .filter(([k]) => k.startsWith('tokenizer.'))
  .map(([k, v]) => [k, tiny.metadataTypes[k], ArrayBuffer.isView(v) ? Array.from(v) : v]);
const dir = fileURLToPath(new URL('../../build/llamacpp/dequantized/', import.meta.url));
mkdirSync(dir, { recursive: true });
const path = `${dir}qwen35-wide.f32.gguf`;
const withVocab = (md) => [...md.filter(([k]) => !k.startsWith('tokenizer.')), ...tokenizer];
writeFileSync(path, fixtureGGUF('qwen35-wide', { checkpoint: qwen35Checkpoint(WIDE), metadata: withVocab }));
const handle = await openLlama();
const model = await loadPretrained({ gguf: readFileSync(path) });
let failed = false;
for (const f32Kv of [false, true]) {
  const ll = await runLlamaCpp(handle, path, c, { f32Kv });
  const { logits } = model.forward(ll.prompt);
  const dp = Math.max(...ll.probs.map((p, t) => Math.max(...softmaxRow(logits, t).map((q, i) => Math.abs(q - p[i])))));
  const greedy = Array.from(model.generate(ll.prompt, { maxNewTokens: c.greedySteps, stop: [] }).data);
  console.log(`${f32Kv ? 'F32' : 'F16'} KV cache: max |Δp| ${dp.toExponential(2)}; greedy ${greedy} (llama.cpp ${ll.greedy})`);
  failed ||= dp > 1e-4 || greedy.join() !== ll.greedy.join();
}
model.dispose();
await handle.llama.dispose();
unlinkSync(path); // 0.69 GB
if (failed) process.exitCode = 1;
