// loadPretrained({ gguf }): a GGUF file (llama.cpp's format, docs/gguf.md) as a PretrainedModel.
// The header is read first (formats/gguf.js), its metadata mapped to a config as llama.cpp reads it
// (pretrained/gguf-config.js), every tensor the model needs found by llama.cpp's name, its shape and type
// checked, and its bytes copied into the heap as stored (quantized blocks stay quantized), the q/k
// rows of the families whose converter permuted them put back in Hugging Face's order on the way.
import { AttentionError } from '../errors.js';
import { WEIGHT_FORMAT } from '../constants.js';
import { ggmlType, parseGGUF } from '../formats/gguf.js';
import { applyRopeFreqs, ggufConfig, readRopeFactors } from './gguf-config.js';
import { ggufTensorName } from '../architectures/index.js';
import { makeTokenizer } from './files.js';
import { chatTemplates, loadJinja } from '../tokenizers/chat-template.js';
import { copyTensors, withLimitHint } from './load.js';

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);
const kShortArray = 16; // arrays up to this long are kept in `metadata`; longer ones summarised

/** The file's key/values with arrays longer than kShortArray summarised ("array<string>[151936]"). */
export function summarizeMetadata(metadata, types) {
  const out = Object.create(null);
  for (const [key, v] of Object.entries(metadata)) {
    const isArray = Array.isArray(v) || ArrayBuffer.isView(v);
    out[key] = !isArray ? v : v.length > kShortArray ? `${types[key]}[${v.length}]` : Array.from(v);
  }
  return Object.freeze(out);
}

// llama.cpp's converter permutes the q/k rows of the rope-type-NORM families (LlamaModel.permute:
// per head, rows (t, j) → (j, t) for t < 2, j < d/2); file row f of a head goes back to row
// t·d/2 + j of Hugging Face's order.
function unpermute(rows, heads) {
  const d = rows / heads;
  return (f) => {
    const head = Math.floor(f / d),
      w = f % d;
    return head * d + (w & 1) * (d / 2) + (w >> 1);
  };
}

// The plan of copies (pretrained/load.js) of every tensor the core needs, checked: present, the
// shape the config needs, a type the core keeps; and no tensor of the file left unread.
function planTensors(handle, file, model) {
  const { family, core, ropeFreqs } = model;
  const byName = new Map(file.tensors.map((t) => [t.name, t]));
  const read = new Set([...(ropeFreqs ? [ropeFreqs.name] : []), ...model.configTensors]);
  const plan = handle.expected().map(({ role, layer, shape }) => {
    const name = ggufTensorName(family, role, layer);
    const t = byName.get(name);
    if (!t) throw invalid(`gguf: the file has no tensor "${name}"`);
    read.add(name);
    if (t.shape.length !== shape.length || t.shape.some((n, i) => n !== shape[i])) {
      throw new AttentionError(
        'SHAPE_MISMATCH',
        `gguf: tensor "${name}" has shape [${t.shape}] but the config needs [${shape}]`,
      );
    }
    const format = WEIGHT_FORMAT[t.typeName];
    if (format === undefined)
      throw invalid(`gguf: tensor "${name}" is ${t.typeName}, a type this library cannot compute with`);
    const p = { name, role, layer, shape, format, transposed: false, bytes: t.bytes };
    p.read = (b, e) => file.readTensor(t, b, e);
    if (family.gguf.permutedQK && (role === 'q' || role === 'k'))
      p.rowOrder = unpermute(shape[0], role === 'q' ? core.heads : core.kvHeads);
    return p;
  });
  const unread = file.tensors.find((t) => !read.has(t.name) && !model.skipped(t.name));
  if (unread)
    throw invalid(
      `gguf: tensor "${unread.name}" is not read by this library's ${model.architecture} (llama.cpp may use it)`,
    );
  return plan;
}

// The tokenizer of the file (tokenizers/gguf-tokenizer.js, loaded only now): { tok, tokenizerConfig, eosIds },
// or { why } — the model then takes ids, and encode() says why it has no tokenizer.
async function fileTokenizer(metadata) {
  let tokenizerFromGGUF;
  try {
    ({ tokenizerFromGGUF } = await import('../tokenizers/gguf-tokenizer.js'));
  } catch (error) {
    return { why: `this GGUF file's tokenizer could not be read (${error.message}); the model takes ids` };
  }
  try {
    const { tokenizer, tokenizerConfig, eosIds } = tokenizerFromGGUF(metadata);
    // a "llama" vocab comes as llama.cpp's tokenizer itself (tokenizers/gguf-spm.js), a "gpt2" one as tokenizer.json
    const tok =
      typeof tokenizer.encode === 'function' ? tokenizer : await makeTokenizer(tokenizer, tokenizerConfig);
    return { tok, tokenizerConfig, eosIds };
  } catch (error) {
    if (!(error instanceof AttentionError)) throw error;
    return { why: `this GGUF file's tokenizer is not supported: ${error.message}; the model takes ids` };
  }
}

// Every tensor of the file in a type the core keeps (the loader reads them all), checked before
// anything is allocated; rope_freqs is read here, as F32 (pretrained/gguf-config.js).
function checkTypes(file, ropeFreqs) {
  for (const t of file.tensors) {
    if (t !== ropeFreqs && WEIGHT_FORMAT[t.typeName] === undefined)
      throw invalid(`gguf: tensor "${t.name}" is ${t.typeName}, a type this library cannot compute with`);
  }
}

/** loadPretrained's GGUF path (pretrained.js checked the shared options). */
export async function loadGGUF(
  rt,
  { gguf, memoryLimit, onProgress, chatTemplate, activations = 'exact', signal, offHeap },
) {
  const file = await parseGGUF(gguf);
  const model = ggufConfig(file, await readRopeFactors(file));
  checkTypes(file, model.ropeFreqs);
  if (model.ropeFreqs) await applyRopeFreqs(file, model.ropeFreqs, model.core);
  const { tok, tokenizerConfig, eosIds, why } = await fileTokenizer(file.metadata);
  const templates = chatTemplates(tokenizerConfig, chatTemplate);
  const chat = { templates, tokenizerConfig, engine: templates.size ? await loadJinja() : null };
  const handle = withLimitHint(() =>
    rt.newHandle('PretrainedHandle', (h) =>
      h.init({ ...model.core, memoryLimit, int8Activations: activations === 'int8' }),
    ),
  );
  const generation = eosIds ? { eos_token_id: [...eosIds] } : null;
  const out = new rt.PretrainedModel(handle, model.config, model.architecture, model.core, generation);
  out._tokenizer = tok ?? null;
  out._tokenizerWhy = why;
  out._chat = chat;
  out.metadata = summarizeMetadata(file.metadata, file.metadataTypes);
  out.activations = activations;
  try {
    const plan = planTensors(handle, file, model);
    if (activations === 'int8' && !plan.some((p) => ggmlType(p.format).int8))
      throw invalid(
        "activations: 'int8' needs quantized matrices, and every matrix of this file is F32, F16 or BF16",
      );
    out._offHeapTables = await copyTensors(rt, handle, plan, onProgress, signal, offHeap);
  } catch (error) {
    out.dispose();
    throw error;
  }
  return out;
}
