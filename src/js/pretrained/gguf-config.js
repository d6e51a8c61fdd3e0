// A GGUF file's metadata → the Hugging Face-style config.json it maps to and the core's config,
// computing what llama.cpp computes for the file (docs/gguf.md, "Loading a model"): each family's
// GGUF part in the registry (src/js/architectures/) names its general.architecture, its keys and
// what llama.cpp fixes; the config then goes through the same checks as a config.json
// (pretrained/config.js). A key of the architecture that is neither read nor known to be inert is
// refused by name, never defaulted.
import { AttentionError } from '../errors.js';
import { describe } from '../options.js';
import {
  GGUF_ARCHITECTURES,
  REFUSED_GGUF_ARCHITECTURES,
  familyOfGGUF,
  ggufTensorName,
} from '../architectures/index.js';
import { ROPE_FACTORS, ROPE_FREQS } from '../architectures/gguf-layout.js';
import { coreConfig } from './config.js';

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);

// Keys outside the architecture's own that cannot change the forward: the file's description, the
// tokenizer (read by tokenizers/gguf-tokenizer.js), a split file's bookkeeping, the quantizer's notes.
const PASSIVE_PREFIXES = ['general.', 'tokenizer.', 'split.', 'quantize.'];
// Keys read only by a RoPE scaling that is refused (YaRN): inert.
const ROPE_INERT = ['rope.scaling.original_context_length', 'rope.scaling.finetuned'];
// Keys llama.cpp may do without (it has defaults for them); every other key of a family's table is needed.
const OPTIONAL = ['attention.head_count_kv', 'attention.key_length', 'rope.freq_base', 'vocab_size'];
// Keys a family that does not read them may still carry, as long as each holds the value the family
// implies (llama.cpp writes them for every architecture): accepted when equal, refused by name when
// the value would change the computation. suffix → (read) → the implied value.
const IMPLIED = {
  'attention.head_count_kv': (read) => read('attention.head_count'),
};

// read(suffix[, fallback]): the number, string or bool value of "<arch>.<suffix>", the fallback when the
// file has none (no fallback: the key is needed); every suffix asked for is counted as read.
function metadataReader(metadata, arch) {
  const used = new Set();
  function read(suffix, ...fallback) {
    const key = `${arch}.${suffix}`;
    used.add(suffix);
    const v = metadata[key];
    if (v === undefined) {
      if (fallback.length === 0) throw invalid(`gguf: the file has no ${key}, which ${arch} needs`);
      return fallback[0];
    }
    if (typeof v !== 'string' && typeof v !== 'boolean' && !(typeof v === 'number' && Number.isFinite(v)))
      throw invalid(`gguf: ${key} must be one number, string or bool, got ${describe(v)}`);
    return v;
  }
  // read.array(suffix[, fallback]): a key that may hold one value per layer (llama.cpp's get_key_or_arr,
  // get_arr): an Array of its numbers or bools, or the fallback.
  read.array = (suffix, ...fallback) => {
    const key = `${arch}.${suffix}`;
    used.add(suffix);
    const v = metadata[key];
    if (v === undefined && fallback.length > 0) return fallback[0];
    if (v === undefined) throw invalid(`gguf: the file has no ${key}, which ${arch} needs`);
    return ArrayBuffer.isView(v) || Array.isArray(v) ? Array.from(v) : read(suffix);
  };
  return { read, used };
}

// The family's keys copied into the config under their config.json names (needed ones checked).
function tableKeys(g, read) {
  const out = {};
  for (const [key, hfKey] of Object.entries(g.keys)) {
    const v = OPTIONAL.includes(key) ? read(key, undefined) : read(key);
    if (v !== undefined) out[hfKey] = v;
  }
  return out;
}

// The head size llama.cpp uses (attention.key_length, else hidden / heads), checked against
// value_length and against a family that has no head_dim key.
function headDims(config, g, read, table) {
  const heads = config.num_attention_heads ?? config.n_head;
  const derived = Math.floor((config.hidden_size ?? config.n_embd) / heads);
  const key = read('attention.key_length', derived);
  const value = read('attention.value_length', key);
  if (value !== key)
    throw invalid(
      `gguf: attention.value_length ${value} differs from attention.key_length ${key}: not implemented`,
    );
  if (Object.hasOwn(table, 'head_dim')) config.head_dim = key;
  else if (key !== derived)
    throw invalid(
      `gguf: attention.key_length ${key} is not hidden/heads (${derived}): not implemented for this architecture`,
    );
  return key;
}

// RoPE as llama.cpp reads it: rope.dimension_count (a partial RoPE), and a linear scaling by
// rope.scaling.factor (llama.cpp divides positions by it whatever the type, unless YaRN/LongRoPE).
function ropeKeys(config, read, table, headDim, arch) {
  config.rope_theta ??= 10000; // llama.cpp's default rope.freq_base
  const dims = read('rope.dimension_count', headDim);
  if (dims !== headDim) {
    if (!Object.hasOwn(table, 'partial_rotary_factor'))
      throw invalid(
        `gguf: ${arch}.rope.dimension_count ${dims} is not the head size ${headDim}: not implemented for ${arch}`,
      );
    config.partial_rotary_factor = dims / headDim;
  }
  const type = read('rope.scaling.type', 'linear');
  if (type !== 'linear' && type !== 'none')
    throw invalid(`gguf: ${arch}.rope.scaling.type "${type}" is not implemented (only none and linear)`);
  const factor = read('rope.scaling.factor', read('rope.scale_linear', 0));
  if (factor !== 0 && factor !== 1) config.rope_scaling = { rope_type: 'linear', factor };
}

// Phi-3's LongRoPE as its converter writes it (convert_hf_to_gguf's Phi3MiniModel): the factor
// tensors (read by readRopeFactors), rope.scaling.attn_factor (llama.cpp multiplies cos and sin by
// it) and rope.scaling.original_context_length, back as the config.json's rope_scaling. Without the
// tensors an attn_factor other than 1 is refused (llama.cpp would still apply it).
function longRopeKeys(config, read, factors, arch) {
  const attn = read('rope.scaling.attn_factor', 1);
  const original = read('rope.scaling.original_context_length', undefined);
  if (!factors) {
    if (attn !== 1)
      throw invalid(
        `gguf: ${arch}.rope.scaling.attn_factor ${attn} without ${ROPE_FACTORS.short} / ${ROPE_FACTORS.long} is not implemented`,
      );
    return;
  }
  if (original === undefined)
    throw invalid(
      `gguf: the file has ${ROPE_FACTORS.short} but no ${arch}.rope.scaling.original_context_length`,
    );
  if (config.rope_scaling)
    throw invalid(`gguf: ${arch}.rope.scaling.factor together with LongRoPE factors is not implemented`);
  config.original_max_position_embeddings = original;
  config.rope_scaling = {
    rope_type: 'longrope',
    short_factor: Array.from(factors.short),
    long_factor: Array.from(factors.long),
    attention_factor: attn,
  };
}

/**
 * The LongRoPE factor tensors of a file ({ short, long } as F32 arrays, or null when it has neither):
 * F32, one dimension; both or none.
 */
export async function readRopeFactors(file) {
  const found = file.tensors.filter((t) => t.name === ROPE_FACTORS.short || t.name === ROPE_FACTORS.long);
  if (found.length === 0) return null;
  if (found.length !== 2)
    throw invalid(
      `gguf: LongRoPE needs both ${ROPE_FACTORS.short} and ${ROPE_FACTORS.long}, the file has one`,
    );
  const out = {};
  for (const t of found) {
    if (t.typeName !== 'F32' || t.shape.length !== 1)
      throw invalid(
        `gguf: tensor "${t.name}" must be F32 with one dimension, got ${t.typeName} [${t.shape}]`,
      );
    const bytes = await file.readTensor(t);
    out[t.name === ROPE_FACTORS.short ? 'short' : 'long'] = new Float32Array(bytes.slice().buffer);
  }
  return out;
}

// The config.json of the file: the family's keys, llama.cpp's defaults and fixes, the special ids.
function hfConfig(family, { read }, tensors, metadata, arch, factors) {
  const g = family.gguf;
  const table = family.keys.implemented;
  const config = {
    architectures: [family.architecture],
    model_type: family.keys.modelType,
    ...tableKeys(g, read),
  };
  const embed = tensors.get(ggufTensorName(family, 'embed'));
  if (!embed) throw invalid(`gguf: the file has no tensor "${ggufTensorName(family, 'embed')}"`);
  const vocab = embed.shape[0];
  if (config.vocab_size !== undefined && config.vocab_size !== vocab)
    throw invalid(
      `gguf: ${arch}.vocab_size ${config.vocab_size} differs from the ${vocab} rows of ${embed.name}`,
    );
  config.vocab_size = vocab;
  if (Object.hasOwn(table, 'num_key_value_heads')) config.num_key_value_heads ??= config.num_attention_heads;
  if (Object.hasOwn(table, 'tie_word_embeddings'))
    config.tie_word_embeddings = !tensors.has(ggufTensorName(family, 'unembed'));
  const headDim = headDims(config, g, read, table);
  if (Object.hasOwn(table, 'rope_theta')) ropeKeys(config, read, table, headDim, arch);
  if (g.longRope) longRopeKeys(config, read, factors, arch);
  Object.assign(config, g.config(read, config));
  for (const id of ['bos', 'eos']) {
    const v = metadata[`tokenizer.ggml.${id}_token_id`];
    if (Number.isSafeInteger(v)) config[`${id}_token_id`] = v;
  }
  return config;
}

// Every key of the architecture is read, inert, or holds the value the family implies; other keys
// only in the passive namespaces.
function checkKeys(metadata, arch, g, used, read) {
  const known = new Set([...Object.keys(g.keys), ...g.inert, ...used, ...ROPE_INERT]);
  for (const [key, value] of Object.entries(metadata)) {
    if (key === 'general.architecture' || PASSIVE_PREFIXES.some((p) => key.startsWith(p))) continue;
    const suffix = key.startsWith(`${arch}.`) ? key.slice(arch.length + 1) : undefined;
    if (suffix !== undefined && known.has(suffix)) continue;
    if (suffix !== undefined && Object.hasOwn(IMPLIED, suffix)) {
      const implied = IMPLIED[suffix](read);
      if (value === implied) continue;
      throw invalid(
        `gguf: key ${key} (${describe(value)}) is not implemented for ${arch} (only ${describe(implied)}, the value ${arch} implies)`,
      );
    }
    throw invalid(`gguf: key ${key} (${describe(value)}) is not implemented for ${arch}`);
  }
}

/**
 * The model a parsed GGUF file (formats/gguf.js parseGGUF) describes: { family, architecture, config (the
 * config.json it maps to), core (the core's config), ropeFreqs (the rope_freqs tensor the family
 * reads, or undefined), configTensors (names of the tensors read into the config), skipped (name →
 * whether the family leaves that tensor unread on purpose) }. `factors`: the
 * file's LongRoPE factors (readRopeFactors). INVALID_ARGUMENT naming an unknown architecture or a
 * key not implemented.
 */
export function ggufConfig(file, factors = null) {
  const arch = file.metadata['general.architecture'];
  const family = typeof arch === 'string' ? familyOfGGUF(arch) : undefined;
  if (!family && Object.hasOwn(REFUSED_GGUF_ARCHITECTURES, arch ?? ''))
    throw invalid(`gguf: general.architecture ${arch}: ${REFUSED_GGUF_ARCHITECTURES[arch]}`);
  if (!family) {
    throw invalid(
      `gguf: general.architecture ${describe(arch)} is not supported; supported: ${GGUF_ARCHITECTURES.join(', ')}`,
    );
  }
  const g = family.gguf;
  const tensors = new Map(file.tensors.map((t) => [t.name, t]));
  const reader = metadataReader(file.metadata, arch);
  const { read, used } = reader;
  const config = hfConfig(family, reader, tensors, file.metadata, arch, g.longRope ? factors : null);
  checkKeys(file.metadata, arch, g, used, read);
  const { architecture, core } = coreConfig(config);
  // llama.cpp's head is output.weight, else the embeddings (GPT-2's converter writes a copy).
  core.tieEmbeddings = !tensors.has(ggufTensorName(family, 'unembed'));
  if (g.normsPlusOne) core.normWeightOffset = 0; // stored as 1 + w: used as stored
  if (g.core) Object.assign(core, g.core); // the core's fields the family's files fix (their layout)
  const configTensors = g.longRope && factors ? [ROPE_FACTORS.short, ROPE_FACTORS.long] : [];
  const ropeFreqs = g.ropeFreqs ? tensors.get(ROPE_FREQS) : undefined;
  // tensors of the file the family knows and does not run (Qwen3.5's MTP blocks)
  const skipped = g.skipTensor ? (name) => g.skipTensor(name, config, read) : () => false;
  return { family, architecture, config, core, ropeFreqs, configTensors, skipped };
}

/**
 * Llama 3's scaled RoPE as llama.cpp runs it: each frequency divided by the rope_freqs tensor's
 * factor (F32, one per rotated pair), on top of a linear scaling if any.
 */
export async function applyRopeFreqs(file, tensor, core) {
  // the frequencies it divides: the scaled RoPE's own (Gemma 4's full layers, wider than head_dim)
  const dims = core.ropeInvFreq ? core.ropeInvFreq.length * 2 : core.rotaryDims || core.headDim;
  if (tensor.typeName !== 'F32' || tensor.shape.length !== 1 || tensor.shape[0] !== dims / 2) {
    throw invalid(
      `gguf: tensor "${tensor.name}" must be F32 [${dims / 2}], got ${tensor.typeName} [${tensor.shape}]`,
    );
  }
  const bytes = await file.readTensor(tensor);
  const factors = new Float32Array(bytes.slice().buffer);
  const theta = core.ropeTheta;
  const base = core.ropeInvFreq ?? Array.from({ length: dims / 2 }, (_, i) => 1 / theta ** ((2 * i) / dims));
  factors.forEach((f, i) => {
    if (!(f > 0) || !Number.isFinite(f))
      throw invalid(`gguf: tensor "${tensor.name}" holds ${f} at ${i}; the factors must be finite and > 0`);
  });
  core.ropeInvFreq = base.map((f, i) => f / factors[i]);
}
