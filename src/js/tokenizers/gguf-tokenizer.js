// The tokenizer of a GGUF file (its tokenizer.ggml.* keys, as llama.cpp's llama-vocab.cpp reads
// them): a "gpt2" or "gemma4" vocab as the tokenizer.json object of the Hugging Face tokenizer llama.cpp's
// converter read from, a "llama" (SentencePiece) vocab as llama.cpp's own tokenizer (tokenizers/gguf-spm.js);
// plus the tokenizer_config.json object and the end-of-generation ids llama.cpp stops at.
import { AttentionError } from '../errors.js';
import { describe } from '../options.js';
import { gemma4Parts, gpt2Parts, preFlags } from './gguf-tokenizer-models.js';
import { SpmTokenizer } from './gguf-spm.js';

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);

/** The tokenizer models this module reads (tokenizer.ggml.model). */
export const GGUF_TOKENIZER_MODELS = Object.freeze(['llama', 'gpt2', 'gemma4']);

// llama.cpp's token types (tokenizer.ggml.token_type).
const TYPE = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, UNUSED: 5, BYTE: 6 };

// Tokens llama.cpp adds to its end-of-generation set by their text (llama-vocab.cpp), and the FIM
// tokens it finds by text and adds too.
const EOG_TEXTS = new Set([
  '<|eot_id|>',
  '<|im_end|>',
  '<|end|>',
  '<|return|>',
  '<|call|>',
  '<|flush|>',
  '<|calls|>',
  '<end_of_turn>',
  '<|endoftext|>',
  '</s>',
  '<|eom_id|>',
  '<EOT>',
  '_<EOT>',
  '[EOT]',
  '[EOS]',
  '<|end_of_text|>',
  '<end_of_utterance>',
  '<eos>',
  '<turn|>',
  '<|tool_response>',
  '<\uff5cend\u2581of\u2581sentence\uff5c>',
  '[e~[',
]);
const FIM_TEXTS = {
  fim_pad: ['<|fim_pad|>', '<fim-pad>', '<fim_pad>', '<PAD>', '[PAD]'],
  fim_rep: ['<|fim_repo|>', '<|repo_name|>', '<fim-repo>', '<REPO>', '<reponame>'],
  fim_sep: ['<|file_sep|>'],
};
// Texts llama.cpp treats as control tokens whatever their type: the end-of-generation and FIM ones.
const FIM_OTHER = [
  '<|fim_prefix|> <fim-prefix> <fim_prefix> <\uff5cfim\u2581begin\uff5c> <PRE> \u2581<PRE> <|code_prefix|> <|prefix|>',
  '<|fim_suffix|> <fim-suffix> <fim_suffix> <\uff5cfim\u2581hole\uff5c> <SUF> \u2581<SUF> <|code_suffix|> <|suffix|>',
  '<|fim_middle|> <fim-middle> <fim_middle> <\uff5cfim\u2581end\uff5c> <MID> \u2581<MID> <|code_middle|> <|middle|>',
].flatMap((line) => line.split(' '));
const CONTROL_TEXTS = new Set([...EOG_TEXTS, ...Object.values(FIM_TEXTS).flat(), ...FIM_OTHER]);

const key = (name) => `tokenizer.ggml.${name}`;

// A metadata array of `length` numbers (typed array or Array), or null when absent.
function numbers(metadata, name, length) {
  const v = metadata[key(name)];
  if (v == null) return null;
  const ok =
    (ArrayBuffer.isView(v) && !(v instanceof BigInt64Array || v instanceof BigUint64Array)) ||
    Array.isArray(v);
  if (!ok || v.length < length)
    throw invalid(`gguf: ${key(name)} must be an array of at least ${length} numbers, got ${describe(v)}`);
  return v;
}

// The pieces (empty ones named as llama.cpp names them), their ids, scores and types.
function readVocab(metadata) {
  const given = metadata[key('tokens')];
  if (!Array.isArray(given) || given.length === 0)
    throw invalid(`gguf: ${key('tokens')} (an array of strings) is missing, got ${describe(given)}`);
  const tokens = given.map((t, i) => {
    if (typeof t !== 'string') throw invalid(`gguf: ${key('tokens')}[${i}] is not a string`);
    return t === '' ? `[EMPTY_${i}]` : t;
  });
  const ids = new Map();
  tokens.forEach((t, i) => {
    if (ids.has(t))
      throw invalid(`gguf: duplicate token in the vocab: ${describe(t)} has ids ${ids.get(t)} and ${i}`);
    ids.set(t, i);
  });
  const n = tokens.length;
  const scores = numbers(metadata, 'scores', n) ?? new Float32Array(n);
  const types = numbers(metadata, 'token_type', n) ?? new Int32Array(n).fill(TYPE.NORMAL);
  return { tokens, ids, scores, types };
}

// A special id key: the file's value when in range, else llama.cpp's default (null: none).
function specialId(metadata, name, fallback, n) {
  const v = metadata[key(`${name}_token_id`)];
  const id = Number.isInteger(v) && v >= 0 && v < n ? v : fallback;
  return id != null && id >= 0 && id < n ? id : null;
}

function flag(metadata, name, fallback) {
  const v = metadata[key(name)];
  if (v == null) return fallback;
  if (typeof v !== 'boolean') throw invalid(`gguf: ${key(name)} must be a bool, got ${describe(v)}`);
  return v;
}

// Control and unknown tokens become special added tokens, user-defined ones non-special added
// tokens: matched in the raw text before the model runs, as llama.cpp matches them. A token whose
// text llama.cpp takes for a control token (CONTROL_TEXTS) is one whatever its type. For a model
// named Phi-3, llama.cpp strips the spaces after every special token but <unk>, <s> and
// <|endoftext|>, as Phi-3's tokenizer.json does.
function addedTokens(tokens, types, name) {
  const phi3 = typeof name === 'string' && /phi-3|phi3/.test(name.toLowerCase());
  const out = [];
  tokens.forEach((content, id) => {
    const t = CONTROL_TEXTS.has(content) ? TYPE.CONTROL : types[id];
    if (t !== TYPE.CONTROL && t !== TYPE.UNKNOWN && t !== TYPE.USER_DEFINED) return;
    const special = t !== TYPE.USER_DEFINED;
    const rstrip = phi3 && !['<unk>', '<s>', '<|endoftext|>'].includes(content);
    out.push({ id, content, single_word: false, lstrip: false, rstrip, normalized: false, special });
  });
  return out;
}

// BOS/EOS around each sequence when the file's flags say so (HF's Llama TemplateProcessing).
function postProcessor(tokens, { addBos, addEos, bos, eos }) {
  if (!addBos && !addEos) return null;
  const special = (id, typeId) => ({ SpecialToken: { id: tokens[id], type_id: typeId } });
  const seq = (name, typeId) => [
    ...(addBos ? [special(bos, typeId)] : []),
    { Sequence: { id: name, type_id: typeId } },
    ...(addEos ? [special(eos, typeId)] : []),
  ];
  const specialTokens = {};
  for (const id of [addBos ? bos : null, addEos ? eos : null]) {
    if (id != null) specialTokens[tokens[id]] = { id: tokens[id], ids: [id], tokens: [tokens[id]] };
  }
  return {
    type: 'TemplateProcessing',
    single: seq('A', 0),
    pair: [...seq('A', 0), ...seq('B', 1)],
    special_tokens: specialTokens,
  };
}

// llama.cpp's end-of-generation set: the FIM pad/repo/separator tokens, every token whose text is
// in EOG_TEXTS, and the eos/eot/eom ids; then its
// two workarounds (no <|end|> beside <|return|> and <|call|>, or <|calls|> and <|flush|>; no </s>
// beside <|tool_response>).
function eogIds(metadata, { tokens, ids }, eos) {
  const n = tokens.length;
  const byText = (texts) => texts.map((t) => ids.get(t)).find((id) => id !== undefined) ?? null;
  const out = new Set();
  for (const [name, texts] of Object.entries(FIM_TEXTS)) {
    const id = specialId(metadata, name, byText(texts), n);
    if (id != null) out.add(id);
  }
  tokens.forEach((t, id) => EOG_TEXTS.has(t) && out.add(id));
  // (the eot/eom llama.cpp finds by text when the file names none are in EOG_TEXTS already)
  for (const id of [eos, specialId(metadata, 'eot', null, n), specialId(metadata, 'eom', null, n)])
    if (id != null) out.add(id);
  const has = (t) => ids.has(t) && out.has(ids.get(t));
  if (has('<|end|>') && ((has('<|return|>') && has('<|call|>')) || (has('<|calls|>') && has('<|flush|>'))))
    out.delete(ids.get('<|end|>'));
  if (has('<|tool_response>') && has('</s>')) out.delete(ids.get('</s>'));
  return [...out].sort((a, b) => a - b);
}

// The model-specific parts and llama.cpp's defaults for the model named by tokenizer.ggml.model
// ("llama": no tokenizer.json parts, llama.cpp's tokenizer is built once the flags are known).
function modelParts(metadata, vocab) {
  const model = metadata[key('model')];
  if (model === 'llama') return { parts: null, bos: 1, eos: 2, addBos: true, cleanSpaces: false };
  if (model === 'gpt2') {
    const flags = preFlags(metadata[key('pre')]);
    const object = Object.fromEntries(vocab.tokens.map((t, i) => [t, i]));
    const parts = gpt2Parts({ vocab: object, merges: metadata[key('merges')], flags });
    return { parts, bos: 11, eos: 11, addBos: flags.addBos, cleanSpaces: flags.cleanSpaces };
  }
  if (model === 'gemma4') {
    // llama.cpp sets add_bos_token true whatever the file says (forceBos) and ignores tokenizer.ggml.pre
    const object = Object.fromEntries(vocab.tokens.map((t, i) => [t, i]));
    const parts = gemma4Parts({ vocab: object, merges: metadata[key('merges')] });
    return { parts, bos: null, eos: null, addBos: true, forceBos: true, cleanSpaces: true };
  }
  throw invalid(
    `gguf: tokenizer.ggml.model ${describe(model)} is not supported; supported: ${GGUF_TOKENIZER_MODELS.join(', ')}`,
  );
}

// The tokenizer.json object of a "gpt2" vocab, or llama.cpp's SentencePiece tokenizer of a "llama"
// one (its special tokens typed as addedTokens types them, Phi-3's stripped spaces included).
function buildTokenizer(metadata, vocab, model, flags) {
  const added = addedTokens(vocab.tokens, vocab.types, metadata['general.name']);
  if (model.parts === null) {
    const types = Array.from(vocab.types);
    for (const t of added) if (t.special && types[t.id] !== TYPE.UNKNOWN) types[t.id] = TYPE.CONTROL;
    return new SpmTokenizer({
      tokens: vocab.tokens,
      scores: vocab.scores,
      types,
      ...flags,
      addSpacePrefix: flag(metadata, 'add_space_prefix', true),
      rstrip: added.filter((t) => t.rstrip).map((t) => t.id),
    });
  }
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    ...model.parts,
    post_processor: postProcessor(vocab.tokens, flags),
  };
}

// tokenizer.chat_template, and named templates (tokenizer.chat_template.<name>) as HF's list.
function chatTemplate(metadata) {
  const main = metadata['tokenizer.chat_template'];
  const names = metadata['tokenizer.chat_templates'];
  if (!Array.isArray(names) || names.length === 0) return typeof main === 'string' ? main : null;
  const list = typeof main === 'string' ? [{ name: 'default', template: main }] : [];
  for (const name of names) {
    const template = metadata[`tokenizer.chat_template.${name}`];
    if (typeof name === 'string' && typeof template === 'string') list.push({ name, template });
  }
  return list.length ? list : null;
}

/**
 * The tokenizer of a GGUF file's metadata (parseGGUF's `metadata`): `tokenizer` (for "gpt2" a
 * tokenizer.json object for makeTokenizer; for "llama" llama.cpp's SentencePiece tokenizer itself,
 * an SpmTokenizer with the vendored Tokenizer's encode/decode), `tokenizerConfig` (chat_template,
 * bos/eos/unk/pad tokens, the add-BOS and add-EOS flags, clean_up_tokenization_spaces) and `eosIds` (llama.cpp's end-of-generation
 * ids, sorted). An unknown tokenizer.ggml.model or tokenizer.ggml.pre is an INVALID_ARGUMENT
 * AttentionError naming it.
 */
export function tokenizerFromGGUF(metadata) {
  if (metadata === null || typeof metadata !== 'object')
    throw invalid(`gguf: metadata must be an object, got ${describe(metadata)}`);
  const vocab = readVocab(metadata);
  const n = vocab.tokens.length;
  const model = modelParts(metadata, vocab);
  const bos = specialId(metadata, 'bos', model.bos, n);
  const eos = specialId(metadata, 'eos', model.eos, n);
  const flags = {
    addBos: model.forceBos || flag(metadata, 'add_bos_token', model.addBos),
    addEos: flag(metadata, 'add_eos_token', false),
    bos,
    eos,
  };
  if (flags.addBos && bos == null)
    throw invalid(`gguf: ${key('add_bos_token')} is true, but ${key('bos_token_id')} is not set`);
  if (flags.addEos && eos == null)
    throw invalid(`gguf: ${key('add_eos_token')} is true, but ${key('eos_token_id')} is not set`);
  const text = (id) => (id == null ? null : vocab.tokens[id]);
  const tokenizer = buildTokenizer(metadata, vocab, model, flags);
  const tokenizerConfig = {
    chat_template: chatTemplate(metadata),
    bos_token: text(bos),
    eos_token: text(eos),
    unk_token: text(specialId(metadata, 'unknown', metadata[key('model')] === 'llama' ? 0 : null, n)),
    pad_token: text(specialId(metadata, 'padding', null, n)),
    add_bos_token: flags.addBos,
    add_eos_token: flags.addEos,
    clean_up_tokenization_spaces: model.cleanSpaces,
  };
  return { tokenizer, tokenizerConfig, eosIds: eogIds(metadata, vocab, eos) };
}
