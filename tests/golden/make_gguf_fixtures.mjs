// Writes the GGUF fixtures of tests/golden/gguf/ (the list in gguf-cases.mjs), reproducibly:
//   node tests/golden/make_gguf_fixtures.mjs
// - Tiny checkpoints of tests/golden/pretrained/ converted as llama.cpp's converter writes them
//   (tests/js/gguf-from-fixture.js), F32 or with Q8_0 / Q4_0 matrices quantized from the weights
//   (ggml's reference quantizers, gguf-blocks.mjs), each with its tokenizer.json as llama.cpp's
//   _set_vocab_gpt2 writes it (byte-level BPE, merges, a tokenizer.ggml.pre) and a chat template.
// - tiny256-kquants.gguf: a llama-shaped model 256 wide (one layer, rows of 256 so the K-quants are
//   real), one type per matrix — Q4_K, Q5_K, Q8_0, Q3_K, Q2_K, IQ4_NL, Q5_0, Q6_K — from random
//   blocks with sane scales (seeded), norms F32, and a SentencePiece ("llama") vocabulary with the
//   256 byte tokens <0x00>..<0xFF>, pieces with distinct scores, a control and a user-defined token.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { fixtureGGUF } from '../js/gguf-from-fixture.js';
import { writeGGUF } from '../js/gguf-writer.js';
import { PRETRAINED_DIR } from '../js/fixture.js';
import { dequantize, quantize, randomBlocks, seeded } from './gguf-blocks.mjs';
import { CASES, GGUF_DIR, TEMPLATES } from './gguf-cases.mjs';
import { qwen35Checkpoint } from './gguf-qwen35-model.mjs';

const TYPE = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, BYTE: 6 };
const readJson = (model, name) =>
  JSON.parse(readFileSync(new URL(`${model}/${name}`, PRETRAINED_DIR), 'utf8'));

// A byte-level tokenizer.json as llama.cpp's _set_vocab_gpt2 writes it: every id's token (added
// tokens control when special, user-defined otherwise; ids without one "[PADi]", up to the
// embeddings' rows as llama.cpp needs), the merges, the
// pre-tokenizer name, the special ids and the add-BOS flag its post-processor implies.
function gpt2Tokenizer(model, pre, template) {
  const json = readJson(model, 'tokenizer.json');
  const config = readJson(model, 'tokenizer_config.json');
  const added = new Map(json.added_tokens.map((t) => [t.id, t]));
  const byId = new Map(Object.entries(json.model.vocab).map(([t, id]) => [id, t]));
  for (const t of added.values()) byId.set(t.id, t.content);
  const n = Math.max(Math.max(...byId.keys()) + 1, readJson(model, 'config.json').vocab_size);
  const tokens = Array.from({ length: n }, (_, id) => byId.get(id) ?? `[PAD${id}]`);
  const types = tokens.map((_, id) =>
    added.has(id) ? (added.get(id).special ? TYPE.CONTROL : TYPE.USER_DEFINED) : TYPE.NORMAL,
  );
  const md = [
    ['tokenizer.ggml.model', 'string', 'gpt2'],
    ['tokenizer.ggml.pre', 'string', pre],
    ['tokenizer.ggml.tokens', 'array<string>', tokens],
    ['tokenizer.ggml.token_type', 'array<int32>', types],
    [
      'tokenizer.ggml.merges',
      'array<string>',
      json.model.merges.map((m) => (Array.isArray(m) ? m.join(' ') : m)),
    ],
  ];
  for (const [key, text] of [
    ['bos', config.bos_token],
    ['eos', config.eos_token],
  ])
    if (tokens.includes(text)) md.push([`tokenizer.ggml.${key}_token_id`, 'uint32', tokens.indexOf(text)]);
  const post = json.post_processor?.processors?.find((p) => p.type === 'TemplateProcessing');
  md.push(['tokenizer.ggml.add_bos_token', 'bool', Boolean(post?.single?.[0]?.SpecialToken)]);
  md.push(['tokenizer.chat_template', 'string', TEMPLATES[template]]);
  return md;
}

// A "gemma4" vocab (SentencePiece-style BPE over raw UTF-8, Gemma4Model.set_vocab) for a checkpoint of
// `size` ids: <pad>, Gemma 4's turn tokens, "▁" and single characters, then each merge's result in
// merge order (ranks), "[PADi]" up to the <bos> / <eos> ids of the config; no byte tokens (the
// strings of gguf-cases.mjs keep to these characters: llama.cpp drops a character missing from the
// vocab). Merges chain on earlier pieces so that their order matters ("▁hello" = "▁he" + "llo").
const GEMMA4_CHARS = [...'\u2581abcdefghijklmnopqrstuvwxyzHTW,.!?\n'];
const GEMMA4_MERGES = (
  'h e|l l|\u2581 t|\u2581 w|o r|l d|i n|e r|t h|\u2581 a|a n|n d|r e|e a|s e|\u2581 s|\u2581 h|' +
  'l o|ll o|e llo|\u2581t he|\u2581h e|\u2581he llo|\u2581w or|\u2581wor ld|\u2581a nd|\u2581s ea|' +
  '\u2581the re|H e|He llo|\u2581 Hello|\u2581 \u2581|\u2581\u2581 \u2581|i s|\u2581 is|\n \n'
)
  .split('|')
  .map((m) => m.split(' '));

function gemma4Tokenizer(model, template) {
  const config = readJson(model, 'config.json');
  const specials = [['<pad>', TYPE.CONTROL], ['<|turn>', TYPE.CONTROL], ['<turn|>', TYPE.CONTROL]];
  const pieces = [...GEMMA4_CHARS, ...GEMMA4_MERGES.map(([a, b]) => a + b)];
  const tokens = [...specials.map(([t]) => t), ...pieces];
  const types = [...specials.map(([, t]) => t), ...pieces.map(() => TYPE.NORMAL)];
  const { bos_token_id: bos, eos_token_id: eos, vocab_size: n } = config;
  if (tokens.length > Math.min(bos, eos)) throw new Error('gemma4 vocab: too many pieces for the ids');
  while (tokens.length < n) {
    const id = tokens.length;
    tokens.push(id === bos ? '<bos>' : id === eos ? '<eos>' : `[PAD${id}]`);
    types.push(id === bos || id === eos ? TYPE.CONTROL : TYPE.NORMAL);
  }
  return [
    ['tokenizer.ggml.model', 'string', 'gemma4'],
    ['tokenizer.ggml.tokens', 'array<string>', tokens],
    ['tokenizer.ggml.scores', 'array<float32>', tokens.map(() => 0)],
    ['tokenizer.ggml.token_type', 'array<int32>', types],
    ['tokenizer.ggml.merges', 'array<string>', GEMMA4_MERGES.map((m) => m.join(' '))],
    ['tokenizer.ggml.bos_token_id', 'uint32', bos],
    ['tokenizer.ggml.eos_token_id', 'uint32', eos],
    ['tokenizer.ggml.padding_token_id', 'uint32', 0],
    ['tokenizer.ggml.add_space_prefix', 'bool', false],
    ['tokenizer.ggml.add_bos_token', 'bool', true],
    ['tokenizer.chat_template', 'string', TEMPLATES[template]],
  ];
}

// The converter's metadata with its tokenizer.* keys replaced by the checkpoint's tokenizer, and
// general.name by `name` where given (llama.cpp looks Phi-3's special tokens up by text when the name
// says "phi3", and the tiny vocab has none of them).
const checkpointMetadata =
  ({ model, pre, template, name, vocab = model }) =>
  (md) => [
    ...md
      .filter(([k]) => !k.startsWith('tokenizer.'))
      .map(([k, t, v]) => (k === 'general.name' && name ? [k, t, name] : [k, t, v])),
    ...(pre === 'gemma4' ? gemma4Tokenizer(model, template) : gpt2Tokenizer(vocab, pre, template)),
  ];

// Checkpoints generated here rather than read from tests/golden/pretrained/ (`generated`), with the
// vocab of a folder fixture (`vocab`).
const GENERATED = { qwen35: qwen35Checkpoint };
const generated = (source) => (source.generated ? GENERATED[source.generated]() : undefined);

// Rows that are whole blocks of 32 are quantized; the others (LFM2's FF width of 80) stay F32 —
// convert_hf_to_gguf falls back to F16 there; F32 keeps those matrices out of the comparison.
const whole = (row) => row % 32 === 0;

// A checkpoint of tests/golden/pretrained/ as a GGUF file with its tokenizer.
function checkpointGGUF(source) {
  const { model, type, quant } = source;
  return fixtureGGUF(model, {
    type,
    quantize: quant ? (_name, values, row) => (whole(row) ? quantize(quant, values) : null) : undefined,
    metadata: checkpointMetadata(source),
    checkpoint: generated(source),
  });
}

/**
 * A quantized checkpoint fixture with its matrices stored as their dequantized values in F32: what
 * llama.cpp computes for it tells its 8-bit activations apart from the weights (check_with_llamacpp).
 */
export function dequantizedGGUF(source) {
  const { model, type, quant } = source;
  return fixtureGGUF(model, {
    type,
    quantize: (_name, values, row) => {
      if (!whole(row)) return null;
      const f32 = dequantize(quant, quantize(quant, values));
      return { type: 0, data: new Uint8Array(f32.buffer) };
    },
    metadata: checkpointMetadata(source),
    checkpoint: generated(source),
  });
}

// The SentencePiece pieces after the specials and the bytes: "▁", single characters, then longer
// pieces. Scores are distinct (llama.cpp breaks ties by position, the library by id) and chosen so
// that the order of merges matters (e.g. "▁hello" is rarer than "▁he" + "llo"). Every character of
// a piece is a piece itself (a character missing from the vocab is covered by the strings of
// tests/golden/gguf-cases.mjs instead: llama.cpp and the library both merge it into a piece).
const CHARS = [..."abcdefghijklmnopqrstuvwxyzHITW0123456789,.!?':"];
const PIECES = [
  ...'he ll ▁t ▁w or ld in er th ▁a an nd re ea se ▁s ▁h lo llo ello ▁the ▁he ▁hello ▁wor ▁world ▁and'.split(
    ' ',
  ),
  ...'▁sea ▁there ere He ▁He Hello ▁Hello ing ▁in ▁is ▁it ▁we on ou ▁o ▁th ▁d ▁c ▁I it at'.split(' '),
];

function spmTokenizer(template) {
  const tokens = ['<unk>', '<s>', '</s>', '<|user|>', '<|end|>'];
  const types = [TYPE.UNKNOWN, TYPE.CONTROL, TYPE.CONTROL, TYPE.USER_DEFINED, TYPE.CONTROL];
  const scores = [0, 0, 0, 0, 0];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(TYPE.BYTE);
    scores.push(0);
  }
  for (const p of PIECES)
    for (const ch of p) if (ch !== '\u2581' && !CHARS.includes(ch)) throw new Error(`piece ${p}: add ${ch}`);
  const rng = seeded(256);
  ['\u2581', ...CHARS, ...PIECES].forEach((piece, i) => {
    tokens.push(piece);
    types.push(TYPE.NORMAL);
    scores.push(-(i + 1) - 0.5 * rng.uniform()); // distinct, later pieces rarer
  });
  return [
    ['tokenizer.ggml.model', 'string', 'llama'],
    ['tokenizer.ggml.tokens', 'array<string>', tokens],
    ['tokenizer.ggml.scores', 'array<float32>', scores],
    ['tokenizer.ggml.token_type', 'array<int32>', types],
    ['tokenizer.ggml.bos_token_id', 'uint32', 1],
    ['tokenizer.ggml.eos_token_id', 'uint32', 2],
    ['tokenizer.ggml.unknown_token_id', 'uint32', 0],
    ['tokenizer.ggml.add_bos_token', 'bool', true],
    ['tokenizer.ggml.add_eos_token', 'bool', false],
    ['tokenizer.chat_template', 'string', TEMPLATES[template]],
  ];
}

// The 256-wide llama: 4 heads of 64, 2 KV heads, an MLP of 256, one layer.
const TINY256 = { hidden: 256, heads: 4, kvHeads: 2, headDim: 64, ffn: 256 };

// A random matrix: F32 normal values, or random blocks of a quantized type.
function randomMatrix(type, rows, cols, std, rng) {
  if (type !== 'F32') return randomBlocks(type, rows, cols, std, rng);
  const values = Float32Array.from({ length: rows * cols }, () => std * rng.normal());
  return { type: 0, data: new Uint8Array(values.buffer) };
}

// The tensors; typeOf(name, type) may change a matrix's type (the diagnosis variants).
function tiny256Tensors(vocab, rng, typeOf) {
  const { hidden, kvHeads, headDim, ffn } = TINY256;
  const norm = (name) => ({
    name,
    dims: [hidden],
    type: 0,
    data: new Uint8Array(Float32Array.from({ length: hidden }, () => 1 + 0.1 * rng.normal()).buffer),
  });
  // [name, type, rows, cols, std of the weights]
  const matrices = [
    ['token_embd.weight', 'Q4_K', vocab, hidden, 1],
    ['blk.0.attn_q.weight', 'Q5_K', hidden, hidden, 0.1],
    ['blk.0.attn_k.weight', 'Q8_0', kvHeads * headDim, hidden, 0.1],
    ['blk.0.attn_v.weight', 'Q3_K', kvHeads * headDim, hidden, 0.1],
    ['blk.0.attn_output.weight', 'Q4_K', hidden, hidden, 0.1],
    ['blk.0.ffn_gate.weight', 'Q2_K', ffn, hidden, 0.1],
    ['blk.0.ffn_up.weight', 'IQ4_NL', ffn, hidden, 0.1],
    ['blk.0.ffn_down.weight', 'Q5_0', hidden, ffn, 0.1],
    ['output.weight', 'Q6_K', vocab, hidden, 0.25],
  ];
  const out = matrices.map(([name, type, rows, cols, std]) => ({
    name,
    dims: [cols, rows],
    ...randomMatrix(typeOf(name, type), rows, cols, std, rng),
  }));
  out.splice(1, 0, norm('blk.0.attn_norm.weight'));
  out.splice(6, 0, norm('blk.0.ffn_norm.weight'));
  out.push(norm('output_norm.weight'));
  return out;
}

function tiny256GGUF({ template }, typeOf = (_name, type) => type) {
  const { hidden, heads, kvHeads, headDim, ffn } = TINY256;
  const tokenizer = spmTokenizer(template);
  const vocab = tokenizer[1][2].length;
  const metadata = [
    ['general.architecture', 'string', 'llama'],
    ['general.name', 'string', 'tiny256-kquants'],
    ['llama.context_length', 'uint32', 128],
    ['llama.embedding_length', 'uint32', hidden],
    ['llama.feed_forward_length', 'uint32', ffn],
    ['llama.block_count', 'uint32', 1],
    ['llama.attention.head_count', 'uint32', heads],
    ['llama.attention.head_count_kv', 'uint32', kvHeads],
    ['llama.attention.layer_norm_rms_epsilon', 'float32', 1e-5],
    ['llama.rope.freq_base', 'float32', 10000],
    ['llama.rope.dimension_count', 'uint32', headDim],
    ...tokenizer,
  ];
  return writeGGUF({ metadata, tensors: tiny256Tensors(vocab, seeded(0x256), typeOf) });
}

/**
 * The 256-wide model with every matrix F32 but the embeddings, in `typeName`: llama.cpp looks rows
 * up by dequantizing them (no 8-bit activations), so with a float32 KV cache the library must agree
 * with it to float noise — a check of each block layout against ggml's (check_with_llamacpp.mjs).
 */
export function tiny256EmbeddingVariant(typeName) {
  const source = CASES.find((c) => c.source.model === 'tiny256').source;
  return tiny256GGUF(source, (name) => (name === 'token_embd.weight' ? typeName : 'F32'));
}

/** Every fixture's bytes by file name. */
export function makeFixtures() {
  return new Map(
    CASES.map((c) => [
      c.file,
      c.source.model === 'tiny256' ? tiny256GGUF(c.source) : checkpointGGUF(c.source),
    ]),
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  mkdirSync(GGUF_DIR, { recursive: true });
  let total = 0;
  for (const [file, bytes] of makeFixtures()) {
    writeFileSync(new URL(file, GGUF_DIR), bytes);
    total += bytes.length;
    console.log(`${file}: ${bytes.length} bytes`);
  }
  console.log(`total ${total} bytes`);
}
