// A GGUF "gpt2" vocab (byte-level BPE with merges and the split regexes llama.cpp's llama-vocab.cpp
// names by tokenizer.ggml.pre) as tokenizer.json pieces the vendored @huggingface/tokenizers runs.
// ("llama" SentencePiece vocabs run llama.cpp's own algorithm: tokenizers/gguf-spm.js.)
import { AttentionError } from '../errors.js';
import { describe } from '../options.js';

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);

// GPT-2's split (llama.cpp's copy, without the trailing `|\s+`: what no alternative matches is kept
// as its own piece anyway, as HF's Split "Isolated" keeps it).
const GPT2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
// Llama 3's (and cl100k's) split, with the case-insensitive group spelled out as llama.cpp adapts it.
const CONTRACTIONS = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";
const LLAMA3 = `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`;
const QWEN2 = `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`;
const QWEN35 = `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`;
// GPT-4o's (o200k, Phi-4-mini's) split as llama.cpp adapts it: its upper- and lower-case letter
// classes spelled with look-aheads (a letter that is not a-z / not A-Z), groups non-capturing.
const UPPER = '(?:(?=[\\p{L}])[^a-z])',
  LOWER = '(?:(?=[\\p{L}])[^A-Z])';
const GPT4O = [
  `[^\\r\\n\\p{L}\\p{N}]?${UPPER}*${LOWER}+${CONTRACTIONS}?`,
  `[^\\r\\n\\p{L}\\p{N}]?${UPPER}+${LOWER}*${CONTRACTIONS}?`,
  '\\p{N}{1,3}',
  ' ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*',
  '\\s*[\\r\\n]+',
  '\\s+(?!\\S)',
  '\\s+',
].join('|');

// Mistral's Tekken split (Ministral 3, Mistral Nemo) as llama.cpp adapts it: GPT-4o's letter classes,
// single digits, no contractions.
const TEKKEN = [
  `[^\\r\\n\\p{L}\\p{N}]?${UPPER}*${LOWER}+`,
  `[^\\r\\n\\p{L}\\p{N}]?${UPPER}+${LOWER}*`,
  '\\p{N}',
  ' ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*',
  '\\s*[\\r\\n]+',
  '\\s+(?!\\S)',
  '\\s+',
].join('|');

// llama.cpp's regex lists by pre-tokenizer type (each regex splits the pieces of the one before).
const REGEXES = {
  default: ['[\\p{P}\\$\\+<=>\\^~\\|]+', GPT2, '\\p{N}+', '[0-9][0-9][0-9]'],
  gpt2: [GPT2],
  llama3: [LLAMA3],
  qwen2: [QWEN2],
  qwen35: [QWEN35],
  gpt4o: [GPT4O],
  tekken: [TEKKEN],
  starcoder: ['\\p{N}', GPT2],
};

// tokenizer.ggml.pre → [regex list, llama.cpp's flags]: ignoreMerges (a whole piece in the vocab is
// one token), addBos (the default of tokenizer.ggml.add_bos_token), cleanSpaces (the decoder's
// clean_up_tokenization_spaces). The names and flags are llama-vocab.cpp's.
const LLAMA3_FLAGS = { regexes: 'llama3', ignoreMerges: true, addBos: true, cleanSpaces: true };
const PRE = {
  default: { regexes: 'default', cleanSpaces: true },
  'gpt-2': { regexes: 'gpt2', cleanSpaces: true },
  'phi-2': { regexes: 'gpt2', cleanSpaces: true },
  mpt: { regexes: 'gpt2', cleanSpaces: true },
  olmo: { regexes: 'gpt2', cleanSpaces: true },
  exaone4: { regexes: 'gpt2', cleanSpaces: true },
  llama3: LLAMA3_FLAGS,
  'llama-v3': LLAMA3_FLAGS,
  'llama-bpe': LLAMA3_FLAGS,
  falcon3: LLAMA3_FLAGS,
  pixtral: LLAMA3_FLAGS,
  lfm2: LLAMA3_FLAGS,
  dbrx: { regexes: 'llama3', cleanSpaces: true },
  'smaug-bpe': { regexes: 'llama3', cleanSpaces: true },
  qwen2: { regexes: 'qwen2', cleanSpaces: false },
  'deepseek-r1-qwen': { regexes: 'qwen2', cleanSpaces: false },
  megrez: { regexes: 'qwen2', cleanSpaces: true },
  stablelm2: { regexes: 'qwen2', cleanSpaces: true },
  qwen35: { regexes: 'qwen35', cleanSpaces: false },
  'gpt-4o': { regexes: 'gpt4o', cleanSpaces: false },
  tekken: { regexes: 'tekken', ignoreMerges: true, addBos: true, cleanSpaces: false },
  smollm: { regexes: 'starcoder', cleanSpaces: false },
  starcoder: { regexes: 'starcoder', cleanSpaces: true },
  refact: { regexes: 'starcoder', cleanSpaces: true },
  codeshell: { regexes: 'starcoder', cleanSpaces: true },
  'command-r': { regexes: 'starcoder', cleanSpaces: false },
};

/** The pre-tokenizer names this module maps (llama.cpp's names). */
export const GGUF_PRE_TOKENIZERS = Object.freeze(Object.keys(PRE));

/** llama.cpp's flags of a pre-tokenizer name (missing: "default", as llama.cpp falls back). */
export function preFlags(pre) {
  const name = pre ?? 'default';
  if (typeof name !== 'string' || !Object.hasOwn(PRE, name)) {
    throw invalid(
      `gguf: tokenizer.ggml.pre ${describe(name)} is not supported; supported: ${GGUF_PRE_TOKENIZERS.join(', ')}`,
    );
  }
  return { ignoreMerges: false, addBos: false, ...PRE[name], name };
}

// A merges entry as llama.cpp splits it: at the first space after the first character.
function splitMerge(word, i) {
  if (typeof word !== 'string') throw invalid(`gguf: tokenizer.ggml.merges[${i}] is not a string`);
  const at = word.indexOf(' ', 1);
  return at < 0 ? ['', ''] : [word.slice(0, at), word.slice(at + 1)];
}

/** The model, pre-tokenizer and decoder of a "gpt2" (byte-level BPE) vocab. */
export function gpt2Parts({ vocab, merges, flags }) {
  if (!Array.isArray(merges)) throw invalid('gguf: tokenizer.ggml.merges (an array of strings) is missing');
  const splits = REGEXES[flags.regexes].map((regex) => ({
    type: 'Split',
    pattern: { Regex: regex },
    behavior: 'Isolated',
    invert: false,
  }));
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false };
  return {
    normalizer: null,
    pre_tokenizer: { type: 'Sequence', pretokenizers: [...splits, byteLevel] },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: flags.ignoreMerges,
      vocab,
      merges: merges.map(splitMerge),
    },
  };
}

/**
 * The model, normalizer, pre-tokenizer and decoder of a "gemma4" vocab (llama.cpp's
 * LLAMA_VOCAB_PRE_TYPE_GEMMA4): SentencePiece-style BPE over raw UTF-8 — spaces written as "▁",
 * the text split into runs of newlines and runs of anything else only, merges by rank from single
 * characters, a piece not in the vocab spelled as its <0xXX> byte tokens (dropped where the vocab
 * has none, as llama.cpp drops it); decoded back with "▁" as a space and the bytes fused.
 */
export function gemma4Parts({ vocab, merges }) {
  if (!Array.isArray(merges)) throw invalid('gguf: tokenizer.ggml.merges (an array of strings) is missing');
  const space = { type: 'Replace', pattern: { String: ' ' }, content: '\u2581' };
  return {
    normalizer: space,
    pre_tokenizer: {
      type: 'Split',
      pattern: { Regex: '[^\\n]+|[\\n]+' },
      behavior: 'Isolated',
      invert: false,
    },
    decoder: {
      type: 'Sequence',
      decoders: [
        { type: 'Replace', pattern: { String: '\u2581' }, content: ' ' },
        { type: 'ByteFallback' },
        { type: 'Fuse' },
      ],
    },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: true,
      ignore_merges: false,
      vocab,
      merges: merges.map(splitMerge),
    },
  };
}
