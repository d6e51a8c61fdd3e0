// TinyTransformer weights as safetensors files (https://github.com/huggingface/safetensors):
//   8 bytes  header length N, unsigned little-endian
//   N bytes  JSON header: { "__metadata__": { string: string }, name: { dtype, shape, data_offsets } }
//   rest     the tensors' bytes; data_offsets [begin, end) count from the end of the header
// Written: every tensor F32 little-endian, in state-dict order, the header padded with spaces to a
// multiple of 8 (so the data is aligned), the config as a JSON string in __metadata__.config
// (safetensors metadata values must be strings) beside __metadata__.format.
//
// Read: a file may come from anywhere, so everything is checked before the model is allocated:
// the header length (within the file, at most 100 MB), the JSON, each tensor (F32, its offsets in
// range and of its shape's size), the data (contiguous, no overlaps, no trailing bytes), the config
// (the constructor's checks and the core's size limits) and the tensor names and shapes against
// the state dict that config makes. The model is then at most a few times the file's size.
import { AttentionError } from '../errors.js';
import { describe } from '../options.js';

export const SAFETENSORS_FORMAT = 'attention-wasm/tiny-transformer';
const kMaxHeaderBytes = 100 * 1000 * 1000;
// The core's limits (src/model/tiny_transformer.cpp check_config), checked here before the state
// dict's names are listed: a hostile numLayers of 2^31 must not make 2^31 names.
const kMaxDim = 1 << 16;
const kMaxLayers = 64;
const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

const fail = (message) => {
  throw new AttentionError('INVALID_ARGUMENT', `safetensors: ${message}`);
};

/**
 * The state dict's names and shapes for a full config, in the core's order
 * (TinyTransformer::create); tests check it against real models.
 */
export function stateDictShapes(c) {
  const d = c.dModel;
  const norm = c.norm !== 'none';
  const shapes = [['tok_emb.weight', [c.vocabSize, d]]];
  if (c.positional === 'learned') shapes.push(['pos_emb.weight', [c.maxLength, d]]);
  for (let i = 0; i < c.numLayers; i++) {
    const p = `blocks.${i}.`;
    if (norm) shapes.push([`${p}ln1.weight`, [d]], [`${p}ln1.bias`, [d]]);
    const kv = (c.numKVHeads ?? c.numHeads) * (d / c.numHeads); // H_kv·dk: the key and value widths
    if (kv === d) shapes.push([`${p}attn.in_proj_weight`, [3 * d, d]]);
    else
      shapes.push(
        [`${p}attn.q_proj_weight`, [d, d]],
        [`${p}attn.k_proj_weight`, [kv, d]],
        [`${p}attn.v_proj_weight`, [kv, d]],
      );
    shapes.push(
      [`${p}attn.in_proj_bias`, [d + 2 * kv]],
      [`${p}attn.out_proj.weight`, [d, d]],
      [`${p}attn.out_proj.bias`, [d]],
    );
    if (!c.mlp) continue;
    if (norm) shapes.push([`${p}ln2.weight`, [d]], [`${p}ln2.bias`, [d]]);
    shapes.push(
      [`${p}mlp.fc1.weight`, [c.mlpHidden, d]],
      [`${p}mlp.fc1.bias`, [c.mlpHidden]],
      [`${p}mlp.fc2.weight`, [d, c.mlpHidden]],
      [`${p}mlp.fc2.bias`, [d]],
    );
  }
  if (c.norm === 'pre') shapes.push(['ln_f.weight', [d]], ['ln_f.bias', [d]]);
  shapes.push(['head.weight', [c.vocabSize, d]], ['head.bias', [c.vocabSize]]);
  return shapes;
}

/** The bytes of a safetensors file of `tensors` ({ name: Tensor }, float32) and the model config. */
export function encodeSafetensors(tensors, config) {
  return encodeFloat32Safetensors(tensors, { format: SAFETENSORS_FORMAT, config: JSON.stringify(config) });
}

/**
 * Captured activations (run()'s `activations`: { [hook]: Tensor }) as the bytes of a safetensors
 * file, one F32 tensor per hook under its name, for other tools (safetensors.torch.load,
 * TransformerLens' cache names).
 */
export function captureToSafetensors(activations) {
  if (activations == null || typeof activations !== 'object')
    throw new AttentionError('INVALID_ARGUMENT', "captureToSafetensors needs run()'s activations object");
  for (const [name, t] of Object.entries(activations)) {
    if (!(t?.data instanceof Float32Array) || !Array.isArray(t.shape))
      throw new AttentionError('INVALID_ARGUMENT', `activation "${name}" is not a float32 Tensor`);
  }
  return encodeFloat32Safetensors(activations, { format: 'attention-wasm/activations' });
}

function encodeFloat32Safetensors(tensors, metadata) {
  const header = { __metadata__: metadata };
  let offset = 0;
  for (const [name, t] of Object.entries(tensors)) {
    header[name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + 4 * t.data.length] };
    offset += 4 * t.data.length;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const headerBytes = new Uint8Array(json.length + ((8 - (json.length % 8)) % 8)).fill(0x20); // space-padded
  headerBytes.set(json);
  const out = new Uint8Array(8 + headerBytes.length + offset);
  const view = new DataView(out.buffer);
  view.setUint32(0, headerBytes.length, true); // the high 32 bits stay 0
  out.set(headerBytes, 8);
  let at = 8 + headerBytes.length;
  for (const t of Object.values(tensors)) {
    if (littleEndian) out.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), at);
    else t.data.forEach((v, i) => view.setFloat32(at + 4 * i, v, true));
    at += t.data.byteLength;
  }
  return out;
}

export function asBytes(bytes) {
  const shared = typeof SharedArrayBuffer !== 'undefined' && bytes instanceof SharedArrayBuffer;
  if (bytes instanceof ArrayBuffer || shared) return new Uint8Array(bytes);
  if (ArrayBuffer.isView(bytes)) return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  throw new AttentionError(
    'INVALID_ARGUMENT',
    `safetensors bytes must be an ArrayBuffer or a Uint8Array, got ${describe(bytes)}`,
  );
}

/**
 * The header's byte length from a file's first 8 bytes (`prefix`), checked — in this order, for
 * every reader (bytes here, Blobs in pretrained.js) — against the limit and the file's size, so no
 * buffer of a hostile length is ever allocated.
 */
export function headerLength(prefix, fileSize) {
  if (fileSize < 8 || prefix.length < 8)
    fail(`the file has ${fileSize} bytes, fewer than the 8 of the header length`);
  const view = new DataView(prefix.buffer, prefix.byteOffset, 8);
  const length = view.getUint32(4, true) * 2 ** 32 + view.getUint32(0, true);
  if (length > kMaxHeaderBytes) fail(`header length ${length} is over the limit of ${kMaxHeaderBytes} bytes`);
  if (8 + length > fileSize) fail(`header length ${length} runs past the end of the ${fileSize}-byte file`);
  return length;
}

// The header object and where the data starts, after checking the length prefix and the JSON.
export function readHeader(u8) {
  const length = headerLength(u8, u8.length);
  let header;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(u8.subarray(8, 8 + length)));
  } catch (error) {
    fail(`the header is not valid JSON (${error.message})`);
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header))
    fail('the header is not a JSON object');
  return { header, dataStart: 8 + length };
}

const isShape = (s) => Array.isArray(s) && s.every((n) => Number.isSafeInteger(n) && n >= 0);

// Bytes per element of the dtypes read (F16 and BF16 widen to float32 exactly).
const DTYPE_BYTES = { F32: 4, F16: 2, BF16: 2 };

// Every tensor entry: F32, F16 or BF16, a shape, offsets in [0, dataBytes] covering exactly its shape's bytes,
// and together covering the data exactly once (contiguous, no overlap, nothing after).
export function checkEntries(header, dataBytes) {
  const entries = [];
  for (const [name, e] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    if (e === null || typeof e !== 'object') fail(`tensor "${name}" is not an object`);
    if (!Object.hasOwn(DTYPE_BYTES, e.dtype))
      fail(`tensor "${name}" has dtype ${describe(e.dtype)}; "F32", "F16" and "BF16" are supported`);
    if (!isShape(e.shape)) fail(`tensor "${name}" has no valid shape`);
    const o = e.data_offsets;
    if (!Array.isArray(o) || o.length !== 2 || !o.every(Number.isSafeInteger))
      fail(`tensor "${name}" has no valid data_offsets`);
    const [begin, end] = o;
    if (begin < 0 || end < begin || end > dataBytes) {
      fail(
        `tensor "${name}" data_offsets [${begin}, ${end}] are out of range: the data has ${dataBytes} bytes`,
      );
    }
    const numel = e.shape.reduce((a, b) => a * b, 1);
    const size = DTYPE_BYTES[e.dtype];
    if (end - begin !== size * numel)
      fail(
        `tensor "${name}" has ${end - begin} bytes but shape [${e.shape}] needs ${size * numel} as ${e.dtype}`,
      );
    entries.push({ name, dtype: e.dtype, shape: e.shape, begin, end });
  }
  entries.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let at = 0;
  let previous = null;
  for (const e of entries) {
    if (e.begin < at) fail(`tensors "${previous}" and "${e.name}" overlap`);
    if (e.begin > at)
      fail(`bytes [${at}, ${e.begin}) of the data belong to no tensor (the data must be contiguous)`);
    at = e.end;
    previous = e.name;
  }
  if (at !== dataBytes) fail(`the data has ${dataBytes - at} bytes after the last tensor`);
  return entries;
}

// The config of __metadata__, through the constructor's checks and the core's size limits.
function readConfig(header, normalizeConfig) {
  const meta = header.__metadata__;
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta))
    fail('the header has no __metadata__ object');
  if (meta.format !== SAFETENSORS_FORMAT)
    fail(`__metadata__.format must be "${SAFETENSORS_FORMAT}", got ${describe(meta.format)}`);
  if (typeof meta.config !== 'string') fail('__metadata__.config must be the model config as a JSON string');
  let config;
  try {
    config = normalizeConfig(JSON.parse(meta.config));
  } catch (error) {
    fail(`__metadata__.config is invalid: ${error.message}`);
  }
  for (const key of ['vocabSize', 'maxLength', 'dModel', 'numHeads', 'mlpHidden']) {
    if (config[key] < 1 || config[key] > kMaxDim)
      fail(`config ${key} = ${config[key]} is not in [1, ${kMaxDim}]`);
  }
  if (config.numLayers < 1 || config.numLayers > kMaxLayers)
    fail(`config numLayers = ${config.numLayers} is not in [1, ${kMaxLayers}]`);
  if (config.dModel % config.numHeads !== 0)
    fail(`config numHeads ${config.numHeads} does not divide dModel ${config.dModel}`);
  return config;
}

// binary16 bits → float (exact: every half is a float).
function halfToFloat(h) {
  const exp = (h >> 10) & 0x1f,
    mant = h & 0x3ff,
    sign = h & 0x8000 ? -1 : 1;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 31) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

// Float32Array of an entry's bytes, widened from F16 / BF16 (little-endian, any alignment).
export function readTensor(u8, dtype, begin, end) {
  if (dtype === 'F32') return readFloats(u8, begin, end);
  const view = new DataView(u8.buffer, u8.byteOffset + begin, end - begin);
  const out = new Float32Array((end - begin) / 2);
  if (dtype === 'F16') for (let i = 0; i < out.length; i++) out[i] = halfToFloat(view.getUint16(2 * i, true));
  else {
    const bits = new Uint32Array(out.buffer); // BF16: the high half of a float32
    for (let i = 0; i < out.length; i++) bits[i] = view.getUint16(2 * i, true) << 16;
  }
  return out;
}

// Float32Array of bytes [begin, end) of u8 (any alignment), read as little-endian.
function readFloats(u8, begin, end) {
  if (littleEndian) return new Float32Array(u8.slice(begin, end).buffer); // slice: a fresh, aligned copy
  const view = new DataView(u8.buffer, u8.byteOffset + begin, end - begin);
  return Float32Array.from({ length: (end - begin) / 4 }, (_, i) => view.getFloat32(4 * i, true));
}

/**
 * { config, tensors: { name: { data, shape } } } of a safetensors file written by encodeSafetensors,
 * after every check above (INVALID_ARGUMENT naming the problem). `normalizeConfig` is the model's.
 */
export function decodeSafetensors(bytes, normalizeConfig) {
  const u8 = asBytes(bytes);
  const { header, dataStart } = readHeader(u8);
  const entries = checkEntries(header, u8.length - dataStart);
  const config = readConfig(header, normalizeConfig);
  const byName = new Map(entries.map((e) => [e.name, e]));
  const expected = stateDictShapes(config);
  for (const [name, shape] of expected) {
    const e = byName.get(name);
    if (!e) fail(`tensor "${name}" is missing`);
    if (e.shape.length !== shape.length || e.shape.some((n, a) => n !== shape[a])) {
      fail(`tensor "${name}" has shape [${e.shape}] but the config needs [${shape}]`);
    }
  }
  if (entries.length !== expected.length) {
    const known = new Set(expected.map(([name]) => name));
    fail(`tensor "${entries.find((e) => !known.has(e.name)).name}" is not a parameter of this config`);
  }
  const tensors = {};
  for (const [name, shape] of expected) {
    const e = byName.get(name);
    tensors[name] = { data: readTensor(u8, e.dtype, dataStart + e.begin, dataStart + e.end), shape };
  }
  return { config, tensors, metadata: { ...header.__metadata__ } };
}

/**
 * The `__metadata__` of a safetensors file (string values), read from its header alone: what a
 * preset says about itself (`metadata.preset`, JSON) before its model is built. INVALID_ARGUMENT
 * for a malformed header.
 */
export function readSafetensorsMetadata(bytes) {
  const { header } = readHeader(asBytes(bytes));
  const meta = header.__metadata__;
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta))
    fail('the header has no __metadata__ object');
  return Object.fromEntries(Object.entries(meta).filter(([, v]) => typeof v === 'string'));
}
