// The files of a Hugging Face checkpoint folder as loadPretrained reads them: the safetensors
// files' entries (headers checked, other weight formats named), their shards, a tensor's entry by
// the family's file names, and the tokenizer.
import { AttentionError } from '../errors.js';
import { describe } from '../options.js';
import { asBytes, checkEntries, headerLength, readHeader } from '../formats/safetensors.js';
import { fileNames } from '../architectures/index.js';
import { isRangeSource } from '../range-source.js';

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);

// A file to read ranges of: bytes already in memory, or a Blob/File read slice by slice.
function source(value, what) {
  if (isRangeSource(value)) return value;
  if (typeof Blob !== 'undefined' && value instanceof Blob) {
    return { size: value.size, read: async (b, e) => new Uint8Array(await value.slice(b, e).arrayBuffer()) };
  }
  let u8;
  try {
    u8 = asBytes(value);
  } catch {
    throw invalid(`${what} must be an ArrayBuffer, a Uint8Array, a Blob or a File, got ${describe(value)}`);
  }
  return { size: u8.length, read: async (b, e) => u8.subarray(b, e) };
}

// Every safetensors file's entries ({ name, dtype, shape, begin, end, file }), after the header checks.
export async function readEntries(files) {
  const entries = new Map();
  for (const [fileName, src] of files) {
    try {
      const prefix = await src.read(0, Math.min(8, src.size));
      if (src.size > 8 && (await src.read(8, 9))[0] !== 0x7b) refuseOtherFormats(prefix); // a header starts with '{'
      const length = headerLength(prefix, src.size);
      const headBytes = new Uint8Array(8 + length); // checked: at most the limit, never the whole file
      headBytes.set(prefix);
      if (length > 0) headBytes.set(await src.read(8, 8 + length), 8);
      const { header, dataStart } = readHeader(headBytes);
      for (const e of checkEntries(header, src.size - dataStart))
        entries.set(e.name, { ...e, begin: e.begin + dataStart, end: e.end + dataStart, src });
    } catch (error) {
      if (error instanceof AttentionError)
        throw new AttentionError(error.code, `${fileName}: ${error.message}`);
      throw error;
    }
  }
  return entries;
}

// Weights in a format we do not read, told by their first bytes, named with what to do instead.
function refuseOtherFormats(prefix) {
  const magic = String.fromCharCode(...prefix.subarray(0, 4));
  if (magic === 'GGUF')
    throw invalid('this is a GGUF file (llama.cpp): open it with loadPretrained({ gguf }), not as weights');
  if (magic === 'PK\x03\x04' || prefix[0] === 0x80) {
    throw invalid(
      'this looks like a PyTorch pytorch_model.bin (zip or pickle), which is not read: convert it to safetensors (save_pretrained(..., safe_serialization=True))',
    );
  }
}

// [fileName, source] of the weights: one file, or the shards an index names.
export function weightFiles(weights, weightsIndex) {
  if (weightsIndex == null) return [['model.safetensors', source(weights, 'weights')]];
  const map = weightsIndex?.weight_map;
  if (map === null || typeof map !== 'object')
    throw invalid('weightsIndex must be the parsed model.safetensors.index.json (with weight_map)');
  const byName = Array.isArray(weights) ? Object.fromEntries(weights.map((f) => [f?.name, f])) : weights;
  if (byName === null || typeof byName !== 'object')
    throw invalid('with weightsIndex, weights must be { fileName: bytes } or an array of File');
  const names = [...new Set(Object.values(map))];
  return names.map((n) => {
    if (!Object.hasOwn(byName, n))
      throw invalid(`the shard "${n}" named by weightsIndex is not among the weights given`);
    return [n, source(byName[n], `weights["${n}"]`)];
  });
}

// The file's entry for a tensor name, under any of the family's prefixes (GPT-2: "transformer."),
// `names` giving the names a composition's file uses for it (pretrained/config.js: coreConfig).
export function entryOf(entries, family, name, names = (n) => [n]) {
  for (const w of names(name))
    for (const n of fileNames(family, w)) if (entries.has(n)) return entries.get(n);
  return undefined;
}

// A tokenizer from the parsed tokenizer.json (and tokenizer_config.json), by the vendored
// @huggingface/tokenizers, loaded only now (a literal import, which bundlers follow).
export async function makeTokenizer(json, config) {
  if (json === null || typeof json !== 'object' || Array.isArray(json) || typeof json.model !== 'object') {
    throw invalid(`tokenizer must be the parsed tokenizer.json object, got ${describe(json)}`);
  }
  const { Tokenizer } = await import('../vendor/tokenizers/tokenizers.mjs');
  try {
    return new Tokenizer(json, config ?? {});
  } catch (error) {
    throw invalid(`tokenizer.json could not be read: ${error.message}`);
  }
}
