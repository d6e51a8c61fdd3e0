// Synthetic vocabularies of a real model's size for the shaped GGUF files (bench/gguf_shapes.mjs):
// the token strings are made up, the structure is the real one, so the file's tokenizer metadata is
// readable by the loader (src/js/tokenizers/gguf-tokenizer.js) as llama.cpp would read it.
//   gpt2:  256 byte-level tokens (GPT-2's bytes_to_unicode), then byte pairs, then pair + byte, each
//          with its merge; the model's special tokens (control) at their real ids; unused pads.
//   llama: SentencePiece pieces (<unk>, <s>, </s>, <0xNN> bytes, then ▁-words of 1–3 characters with
//          decreasing scores), the model's added tokens, unused pads.

const TYPE = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, UNUSED: 5, BYTE: 6 };

// GPT-2's byte → printable character map (bytes_to_unicode).
function byteChars() {
  const keep = [];
  for (let b = 33; b <= 126; b++) keep.push(b);
  for (let b = 161; b <= 172; b++) keep.push(b);
  for (let b = 174; b <= 255; b++) keep.push(b);
  const out = new Array(256);
  let n = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCodePoint(keep.includes(b) ? b : 256 + n++);
  return out;
}

// The special and unused tokens after the regular ones: named ids (CONTROL, or USER_DEFINED for
// Qwen's <think>-style tags without "|"), reserved names up to `top`, [PAD<i>] (UNUSED) after.
function addSpecials(tokens, types, spec) {
  const top = spec.top ?? spec.vocab;
  for (let id = tokens.length; id < spec.vocab; id++) {
    const named = spec.specials[id];
    if (named !== undefined) {
      tokens.push(named);
      types.push(named.includes('|') ? TYPE.CONTROL : TYPE.USER_DEFINED);
    } else if (id < top && spec.reserved) {
      tokens.push(spec.reserved(id));
      types.push(TYPE.CONTROL);
    } else {
      tokens.push(`[PAD${id}]`);
      types.push(TYPE.UNUSED);
    }
  }
}

/** A byte-level BPE vocabulary of spec.vocab tokens: { tokens, types, merges }. */
export function gpt2Vocab(spec) {
  const bytes = byteChars();
  const tokens = [...bytes],
    merges = [];
  for (let i = 0; tokens.length < spec.regular && i < 65536; i++) {
    const a = bytes[i >> 8],
      b = bytes[i & 255];
    tokens.push(a + b);
    merges.push(`${a} ${b}`);
  }
  for (let i = 0; tokens.length < spec.regular; i++) {
    const pair = tokens[256 + (i >> 8)],
      b = bytes[i & 255];
    tokens.push(pair + b);
    merges.push(`${pair} ${b}`);
  }
  const types = tokens.map(() => TYPE.NORMAL);
  addSpecials(tokens, types, spec);
  return { tokens, types, merges };
}

/** A SentencePiece vocabulary of spec.vocab pieces: { tokens, types, scores }. */
export function spmVocab(spec) {
  const tokens = ['<unk>', '<s>', '</s>'];
  const types = [TYPE.UNKNOWN, TYPE.CONTROL, TYPE.CONTROL];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(TYPE.BYTE);
  }
  const alphabet = [...'etaoinshrdlcumwfgypbvkjxqzETAOINSHRDLCUMWFGYPBVKJXQZ0123456789.,;:!?'];
  // pieces in breadth-first order of a tree (each piece its prefix + one character): all distinct
  const pieces = ['▁', ...alphabet];
  const top = Math.min(...Object.keys(spec.specials).map(Number));
  for (let i = 0; tokens.length < top; i++) {
    if (pieces.length < top) for (const c of alphabet) pieces.push(pieces[i] + c);
    tokens.push(pieces[i]);
    types.push(TYPE.NORMAL);
  }
  addSpecials(tokens, types, spec);
  const scores = new Float32Array(tokens.length);
  tokens.forEach((_, id) => (scores[id] = types[id] === TYPE.NORMAL ? -id : 0));
  return { tokens, types, scores };
}

/** The tokenizer.* metadata entries ([key, type, value]) of a model's tokenizer spec. */
export function tokenizerMetadata(spec) {
  const m = [['tokenizer.ggml.model', 'string', spec.model]];
  if (spec.model === 'gpt2') {
    const { tokens, types, merges } = gpt2Vocab(spec);
    m.push(['tokenizer.ggml.pre', 'string', spec.pre]);
    m.push(['tokenizer.ggml.tokens', 'array<string>', tokens]);
    m.push(['tokenizer.ggml.token_type', 'array<int32>', types]);
    m.push(['tokenizer.ggml.merges', 'array<string>', merges]);
  } else {
    const { tokens, types, scores } = spmVocab(spec);
    m.push(['tokenizer.ggml.tokens', 'array<string>', tokens]);
    m.push(['tokenizer.ggml.scores', 'array<float32>', scores]);
    m.push(['tokenizer.ggml.token_type', 'array<int32>', types]);
  }
  for (const [name, id] of Object.entries(spec.ids))
    m.push([`tokenizer.ggml.${name}_token_id`, 'uint32', id]);
  m.push(['tokenizer.ggml.add_bos_token', 'bool', spec.addBos]);
  m.push(['tokenizer.chat_template', 'string', spec.template]);
  return m;
}
