// A Hugging Face checkpoint folder's files (config.json parsed, model.safetensors or its shards, the
// tokenizer) as a model of the core, for loadPretrained (pretrained.js): the config read by its
// family (or a multimodal checkpoint's text model: architectures/wrappers.js), each tensor found by
// the family's file names and copied from the bytes or Blob/File straight into its room in the wasm
// heap, in the file's format (F16/BF16 stay 16-bit; the core widens them inside its GEMM).
import { AttentionError } from '../errors.js';
import { WEIGHT_FORMAT } from '../constants.js';
import { copyTensors, withLimitHint } from './load.js';
import { entryOf, makeTokenizer, readEntries, weightFiles } from './files.js';
import { fileShape, storedTransposed, tensorName } from '../architectures/index.js';
import { coreConfig } from './config.js';
import { defaultStopIds } from './generation.js';
import { chatTemplates, loadJinja } from '../tokenizers/chat-template.js';

const FORMATS = WEIGHT_FORMAT; // the core's WeightFormat (constants.js, generated from the C++ enum)

// Every tensor the core needs (by role) from the entries into the model, found by the family's file
// names, shapes checked in the file's layout, the memory reserved first (pretrained/load.js).
async function loadTensors(rt, handle, entries, { family, names }, { onProgress, signal, offHeap }) {
  const plan = handle.expected().map(({ role, layer, shape: kept }) => {
    const name = tensorName(family, role, layer);
    const transposed = storedTransposed(family, role);
    const shape = fileShape(family, role, kept); // as the files store it (reversed, or reshaped)
    const e = entryOf(entries, family, name, names);
    if (!e) throw new AttentionError('INVALID_ARGUMENT', `the checkpoint has no tensor "${name}"`);
    if (e.shape.length !== shape.length || e.shape.some((n, i) => n !== shape[i])) {
      throw new AttentionError(
        'SHAPE_MISMATCH',
        `tensor "${e.name}" has shape [${e.shape}] but the config needs [${shape}]`,
      );
    }
    const read = (b, end) => e.src.read(e.begin + b, e.begin + end);
    // the core takes a transposed matrix as stored, any other tensor in its own shape
    const core = transposed ? shape : Array.from(kept);
    return {
      name,
      role,
      layer,
      shape: core,
      format: FORMATS[e.dtype],
      transposed,
      bytes: e.end - e.begin,
      read,
    };
  });
  return copyTensors(rt, handle, plan, onProgress, signal, offHeap);
}

/**
 * A model from a folder's parsed files (loadPretrained's options, checked there): `rt` the wrapper
 * copy, whose PretrainedModel class it makes.
 */
export async function loadFolder(rt, options) {
  const { config, weights, weightsIndex, tokenizer, tokenizerConfig, generationConfig, chatTemplate } =
    options;
  const { memoryLimit } = options;
  const read = coreConfig(config);
  const { architecture, core } = read;
  checkpointStopIds(config, generationConfig, core.vocabSize); // bad EOS ids refused before any weight is read
  const tok = tokenizer == null ? null : await makeTokenizer(tokenizer, tokenizerConfig);
  const templates = chatTemplates(tokenizerConfig, chatTemplate);
  const chat = { templates, tokenizerConfig, engine: templates.size ? await loadJinja() : null };
  const files = weightFiles(weights, weightsIndex);
  const entries = await readEntries(files);
  const handle = withLimitHint(() =>
    rt.newHandle('PretrainedHandle', (h) => h.init({ ...core, memoryLimit })),
  );
  const model = new rt.PretrainedModel(handle, config, architecture, core, generationConfig);
  model._tokenizer = tok;
  model._chat = chat;
  model.ignored = Object.freeze(read.ignored);
  try {
    model._offHeapTables = await loadTensors(rt, handle, entries, read, options);
  } catch (error) {
    model.dispose();
    throw error;
  }
  return model;
}

// generate's default stop ids: the checkpoint's EOS ids (generation_config.json, else config.json).
// Ids outside [0, vocab) name no token (transformers' class defaults with a small vocabulary, old
// Llama configs' -1): they are left out, as transformers loads such a file. Non-integers are refused.
export function checkpointStopIds(config, generationConfig, vocab) {
  const eos = generationConfig?.eos_token_id ?? config?.eos_token_id ?? config?.text_config?.eos_token_id;
  const list = eos == null ? [] : Array.isArray(eos) ? eos : [eos];
  const named = list.filter((id) => !Number.isInteger(id) || (id >= 0 && id < vocab));
  return defaultStopIds({ eos_token_id: named }, null, vocab);
}
