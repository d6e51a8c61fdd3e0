// The model worker of the demo: an opened checkpoint folder's or GGUF file's PretrainedModel lives
// here, in this worker's own wasm instance, so its weights are held once and the page never waits on a
// load, a forward or a generation. web/demo-pretrained.js is its async proxy (the model's source).
//
// Jobs (the protocol of web/workers/rpc.js, each started as it comes): open | hubFiles | hubOpen |
//   hubCacheList | hubCacheDelete | tokenize | forward | strings | logitLens | generate | steer | chat |
//   headScores | logitAttribution | patch | attributionPatch | saliency | qkAttribution | dispose { key },
//   and a long prompt's (web/workers/long-prompt.js): longPlan | longPrefill | longOverview | longTile.
// The hub jobs reach the Hugging Face Hub (or the mirror the page names) only when the reader asks;
// the token they are given is passed to the library and kept nowhere.
// While a job runs it may send progress (open, patch, attributionPatch, saliency) or events { id, text,
// of } (generate: text is everything generated so far, decoded; of the number asked; steer: the same
// with `which`, 'plain' or 'steered': web/workers/steer.js). A cancel ends a running generation or
// steer after its current token, or rejects a running patch, attribution patch or
// saliency (AbortError) at its next batch. Tensors come back as { data, shape }.
import { hubCache, hubFiles, init, loadPretrained, memoryLimit } from '../../src/js/index.js';
import { parseGGUF } from '../../src/js/formats/gguf.js';
import { isGGUF, mb, opensAsGGUF, typeCounts } from './gguf-files.js';
import { serve } from './rpc.js';
import { runSteer } from './steer.js';
import { longHandlers } from './long-prompt.js';

const kMaxModelBytes = 3 * 2 ** 30; // of the 4 GiB heap, leaving room for the forwards' buffers
const models = new Map(); // key → { model, hasTokenizer, idsHint (what a model without a tokenizer says) }
let opened = 0;

/** An error whose message is meant for the reader as it is (no "Could not …" prefix). */
const said = (message) => Object.assign(new Error(message), { code: 'INPUT' });

async function readJSON(file) {
  try {
    return JSON.parse(await file.text());
  } catch (error) {
    throw new Error(`${file.name} is not valid JSON (${error.message}).`);
  }
}

function modelOf(key) {
  const m = models.get(key);
  if (!m) throw new Error('this model was closed: open it again');
  return m;
}

/**
 * The folder's weights: model.safetensors (or its one .safetensors file), or the shards that
 * model.safetensors.index.json names. Resolves to { weights (a File or File[]), weightsIndex, size (bytes) };
 * throws a message that says what is missing (or which unreadable format was found instead).
 */
async function findWeights(byName, json) {
  const shards = [...byName.values()].filter((f) => f.name.endsWith('.safetensors'));
  let weights,
    weightsIndex = null,
    size;
  if (byName.has('model.safetensors.index.json')) {
    weightsIndex = await json('model.safetensors.index.json');
    const named = new Set(Object.values(weightsIndex?.weight_map ?? {}));
    const missing = [...named].filter((n) => !byName.has(n));
    if (missing.length)
      throw new Error(
        `a weights file is missing: model.safetensors.index.json names ${missing.join(', ')}, which ${missing.length > 1 ? 'are' : 'is'} not in the folder.`,
      );
    weights = shards.filter((f) => named.has(f.name));
    size = weights.reduce((n, f) => n + f.size, 0);
  } else {
    weights = byName.get('model.safetensors') ?? (shards.length === 1 ? shards[0] : null);
    const other = [...byName.keys()].find((n) => /^pytorch_model.*\.bin$/i.test(n));
    if (!weights && other) {
      throw new Error(
        `${other} holds PyTorch pickled weights, which this page does not read: convert them to safetensors (save_pretrained with safe_serialization=True).`,
      );
    }
    if (!weights) {
      throw new Error(
        `the weights file is missing: the folder has no model.safetensors (nor model.safetensors.index.json with its shards)${
          shards.length
            ? `; it has ${shards.map((f) => f.name).join(', ')}: rename the one to open model.safetensors`
            : ''
        }.`,
      );
    }
    size = weights.size;
  }
  return { weights, weightsIndex, size };
}

/**
 * loadPretrained(options) with this page's memory limit for `size` bytes of weight files; a model too
 * large for the page (TOO_LARGE) gets a message that says what the page allows (`kind`: the format).
 */
async function loadSized(options, size, kind, job) {
  // Weights stay in the file's format in the heap (16-bit stays 16-bit, quantized blocks stay
  // quantized): the model needs about its file's size plus a forward's buffers. A model may use up to
  // 3 GiB of the 4 GiB heap.
  const limit = Math.min(kMaxModelBytes, Math.max(memoryLimit(), Math.ceil(size * 1.2) + 256 * 2 ** 20));
  try {
    return await loadPretrained({ ...options, memoryLimit: limit, onProgress: job.progress });
  } catch (error) {
    if (error.code === 'TOO_LARGE') {
      throw new Error(
        `the weights (${mb(size)} of ${kind}) are too large for this page, which gives a model at most ` +
          `${mb(kMaxModelBytes)} of the 4 GiB WebAssembly heap: ${error.message}.`,
      );
    }
    throw error;
  }
}

/** Keeps a loaded model under a new key; its description for the page (`extra`: what its kind adds). */
function describe(model, { idsHint, ...extra }) {
  const key = ++opened;
  models.set(key, { model, hasTokenizer: extra.hasTokenizer, idsHint });
  return {
    key,
    architecture: model.architecture,
    chatTemplateNames: model.chatTemplateNames,
    numLayers: model.numLayers,
    numHeads: model.numHeads,
    numKVHeads: model.numKVHeads,
    headDim: model.headDim,
    hiddenSize: model.hiddenSize,
    vocabSize: model.vocabSize,
    maxPositions: model.maxPositions,
    layers: model.layers,
    ...extra,
  };
}

/**
 * Loads a checkpoint folder from its files ([name, File], one per name: config.json, tokenizer.json,
 * tokenizer_config.json, generation_config.json, chat_template.jinja, model.safetensors or the shards
 * with model.safetensors.index.json), or a GGUF file (or a split one's parts) when the files are that.
 * Resolves to the model's description; the page frees the model it replaces (dispose) once this one
 * is shown.
 */
async function open({ files, folderName, activations = 'exact' }, job) {
  const byName = new Map(files);
  if (opensAsGGUF([...byName.keys()]))
    return openGGUF(
      [...byName.values()].filter((f) => isGGUF(f.name)),
      job,
      activations,
    );
  if (!byName.has('config.json')) {
    throw new Error(
      `the folder has no config.json (found ${byName.size ? [...byName.keys()].slice(0, 6).join(', ') : 'no files'}). ` +
        'Open the folder of a Hugging Face checkpoint (config.json, tokenizer.json and model.safetensors) or a GGUF file.',
    );
  }
  const json = (name) => (byName.has(name) ? readJSON(byName.get(name)) : null);
  const config = await json('config.json');
  const tokenizer = await json('tokenizer.json');
  const tokenizerConfig = await json('tokenizer_config.json');
  const generationConfig = await json('generation_config.json');
  const chatTemplate = byName.has('chat_template.jinja')
    ? await byName.get('chat_template.jinja').text()
    : null;
  const { weights, weightsIndex, size } = await findWeights(byName, json);
  const options = {
    config,
    weights,
    weightsIndex,
    tokenizer,
    tokenizerConfig,
    generationConfig,
    chatTemplate,
  };
  const model = await loadSized(options, size, 'safetensors', job);
  const name = String(folderName || config['_name_or_path'] || config.model_type || 'model')
    .split('/')
    .pop();
  return describe(model, { folderName: name, hasTokenizer: Boolean(tokenizer) });
}

/** Why the model has no tokenizer (encode's message), or '' when it has one. */
function tokenizerWhy(model) {
  try {
    model.encode('a');
    return '';
  } catch (error) {
    return error.message;
  }
}

/**
 * Loads a GGUF file, or the parts of a split one (File objects: read tensor by tensor, here). Its
 * description adds `gguf`: { architecture (general.architecture), types ("Q4_K ×97, F32 ×65"), bytes
 * (the weights' stored bytes), files (the parts' names) }; its name is general.name, else the file's.
 */
async function openGGUF(parts, job, activations) {
  parts.sort((a, b) => (a.name < b.name ? -1 : 1));
  const gguf = parts.length === 1 ? parts[0] : parts;
  const size = parts.reduce((n, f) => n + f.size, 0);
  let model, header;
  try {
    model = await loadSized({ gguf, activations }, size, 'GGUF', job);
    header = await parseGGUF(gguf); // the header again (the model keeps no tensor types): no tensor read
  } catch (error) {
    model?.dispose();
    const what =
      parts.length > 1
        ? `${parts.map((f) => f.name).join(', ')} are a split GGUF file`
        : `${parts[0].name} is a GGUF file`;
    throw new Error(`${what} that this page cannot open: ${error.message}`);
  }
  const md = model.metadata;
  const why = tokenizerWhy(model);
  return describe(model, {
    folderName: String(md['general.name'] || parts[0].name),
    hasTokenizer: !why,
    idsHint: why && `${why[0].toUpperCase()}${why.slice(1)}. Type`,
    gguf: {
      architecture: String(md['general.architecture']),
      types: typeCounts(header.tensors.map((t) => t.typeName)),
      bytes: model.weightBytes + model.offHeapBytes,
      offHeapBytes: model.offHeapBytes,
      files: parts.map((f) => f.name),
      activations: model.activations,
    },
  });
}

// ---- the Hugging Face Hub (loadPretrained({ hub }), docs/hub.md) ----

/** The Hub options the page sends: repository, file, revision, Hub URL and token (none kept). */
const hubOptions = ({ hub, file, revision, hubUrl, token }) => ({
  hub,
  ...(file ? { file } : {}),
  ...(revision ? { revision } : {}),
  ...(hubUrl ? { hubUrl } : {}),
  ...(token ? { token } : {}),
});

/** What opening the repository would download (the Hub's listing only): hubFiles's answer. */
const listHub = (args, job) => hubFiles({ ...hubOptions(args), signal: job.signal });

/**
 * Loads a Hub repository (`kind` and `size` from listHub) through the cache, its progress sent, with
 * events { phase, bytesPerSecond } (the download's rate); the job's cancel stops it (ABORTED).
 */
async function openHub({ kind, size, activations = 'exact', ...args }, job) {
  let phase = '';
  const progress = (done, total, info) => {
    // the download's rate with each of its reports; the copy's phase once, when it starts
    if (info?.phase === 'download')
      job.emit({ phase: (phase = 'download'), bytesPerSecond: info.bytesPerSecond });
    else if (info?.phase && info.phase !== phase) job.emit({ phase: (phase = info.phase) });
    job.progress(done, total);
  };
  const options = { ...hubOptions(args), signal: job.signal, ...(kind === 'gguf' ? { activations } : {}) };
  const model = await loadSized(options, size, kind === 'gguf' ? 'GGUF' : 'safetensors', { progress });
  const why = tokenizerWhy(model);
  return describe(model, {
    folderName: args.hub,
    hasTokenizer: !why,
    idsHint: why && `${why[0].toUpperCase()}${why.slice(1)}. Type`,
    hub: { repo: args.hub, kind, size, activations: model.activations ?? null },
  });
}

/** { tokens, ids, error, truncated } of the text (token ids typed with spaces when there is no tokenizer). */
function tokenize({ key, text, addSpecialTokens = true }) {
  const { model, hasTokenizer, idsHint } = modelOf(key);
  let ids;
  if (hasTokenizer) ids = Array.from(model.encode(String(text), { addSpecialTokens }));
  else {
    ids = String(text)
      .trim()
      .split(/[\s,]+/)
      .filter(Boolean)
      .map(Number);
    const bad = ids.find((i) => !Number.isInteger(i) || i < 0 || i >= model.vocabSize);
    if (bad !== undefined)
      return {
        tokens: [],
        ids: [],
        error: `${idsHint ?? 'This folder has no tokenizer.json: type'} token ids (0 … ${model.vocabSize - 1}) separated by spaces.`,
      };
  }
  if (!ids.length) return { tokens: [], ids: [], error: 'There are no tokens: type some.' };
  const truncated = ids.length > model.maxPositions;
  ids = ids.slice(0, model.maxPositions);
  return { ids, tokens: strings({ key, ids }), error: '', truncated };
}

function strings({ key, ids }) {
  const { model, hasTokenizer } = modelOf(key);
  return hasTokenizer ? model.tokenStrings(ids) : Array.from(ids, String);
}

/**
 * Logits (every row, or the last: rows 'last'), every layer's map (H_l, T, T) with its kind
 * ('attention' | 'conv' | 'delta', model.layers) and head count, and `layer`'s trace: asked only of a
 * softmax attention layer (the other kinds have no softmax steps), else null.
 */
function forward({ key, ids, layer = null, rows = 'all', attention = true }) {
  const { model } = modelOf(key);
  const kinds = model.layers.map((d) => d.kind);
  const traced = layer !== null && kinds[layer] === 'attention';
  const r = model.forward([ids], { attention, trace: traced ? { layers: [layer] } : false });
  const V = model.vocabSize,
    T = ids.length;
  return {
    logits: rows === 'last' ? r.logits.data.slice((T - 1) * V) : r.logits.data,
    vocabSize: V,
    attention: r.attention.map((w) => w.data),
    kinds,
    heads: r.attention.map((w) => w.shape[1]),
    trace: traced ? r.trace[layer] : null,
    delta: layer !== null && kinds[layer] === 'delta' ? deltaHooksOf(model, ids, layer) : null,
  };
}

/**
 * A DeltaNet layer's hooks for the step view (<delta-rule-steps>): q, k, v, β, g and the read o, as
 * { shape, data }, with the layer's value-head order (model.layers[l].valueHeadOrder: a GGUF file's
 * tiled, a folder's grouped).
 */
function deltaHooksOf(model, ids, layer) {
  const names = ['q', 'k', 'v', 'beta', 'g', 'o'].map((n) => `blocks.${layer}.linear_attn.hook_${n}`);
  const { activations } = model.run([ids], { capture: names });
  const plain = Object.fromEntries(
    names.map((n) => [n, { shape: activations[n].shape, data: activations[n].data }]),
  );
  return { activations: plain, layer, layout: model.layers[layer].valueHeadOrder };
}

function logitLens({ key, ids }) {
  const { logitLens: lens } = modelOf(key).model.forward([ids], { attention: false, logitLens: true });
  return { ids: lens.ids.data, probs: lens.probs.data, strings: strings({ key, ids: lens.ids.data }) };
}

/** Up to maxNewTokens greedy tokens after the text, each sent as it comes; ends at EOS, the limit or an abort. */
async function generate({ key, text, addSpecialTokens, maxNewTokens }, job) {
  const { model, hasTokenizer } = modelOf(key);
  const input = tokenize({ key, text, addSpecialTokens });
  if (input.error) throw said(input.error);
  const n = Math.min(maxNewTokens, model.maxPositions - input.ids.length);
  if (n < 1) throw said(`The input already fills the model's ${model.maxPositions} positions.`);
  const ids = [];
  for await (const token of model.generateStream(input.ids, { maxNewTokens: n, signal: job.signal })) {
    ids.push(token.id);
    job.emit({ id: token.id, text: hasTokenizer ? model.decode(ids) : ` ${ids.join(' ')}`, of: n });
  }
  return { count: ids.length, of: n, aborted: job.signal.aborted };
}

/**
 * The Steer panel's recipe on the model (web/workers/steer.js): the steering vector of its prompts at
 * its hook, then the plain and the steered greedy continuations of its prompt, sent token by token.
 */
function steer({ key, recipe }, job) {
  const { model, hasTokenizer } = modelOf(key);
  const on = {
    model,
    tokenize: (text) => tokenize({ key, text }),
    decode: (ids) => (hasTokenizer ? model.decode(ids) : ` ${ids.join(' ')}`),
    stream: (ids, options) => model.generateStream(ids, options),
    maxPositions: model.maxPositions,
  };
  return runSteer(on, recipe, job);
}

// ---- interpretability (src/js/interp/head-scores.js through the model's methods) ----

const plain = (t) => ({ data: t.data, shape: Array.from(t.shape) });

function headScores({ key, ids, options = {} }) {
  return Object.fromEntries(
    Object.entries(modelOf(key).model.headScores(ids, options)).map(([kind, t]) => [kind, plain(t)]),
  );
}

function logitAttribution({ key, ids, options }) {
  const r = modelOf(key).model.logitAttribution(ids, options);
  return { ...r, heads: plain(r.heads), mlp: plain(r.mlp) };
}

/** Activation patching (model.patch's options less onProgress and signal): progress sent, abortable. */
async function patch({ key, options }, job) {
  const { model } = modelOf(key);
  const r = await model.patch({ ...options, signal: job.signal, onProgress: job.progress });
  return { ...r, result: plain(r.result) };
}

/** Attribution patching (model.attributionPatch's options less onProgress and signal): as patch. */
async function attributionPatch({ key, options }, job) {
  const { model } = modelOf(key);
  const r = await model.attributionPatch({ ...options, signal: job.signal, onProgress: job.progress });
  return { ...r, result: plain(r.result) };
}

/** Input saliency (model.saliency's options less onProgress and signal): progress sent, abortable. */
async function saliency({ key, ids, options = {} }, job) {
  const { model } = modelOf(key);
  const r = await model.saliency(ids, { ...options, signal: job.signal, onProgress: job.progress });
  return { ...r, scores: plain(r.scores) };
}

/** QK attribution of one (query, key) score of a head: model.qkAttribution, its matrix plain. */
function qkAttribution({ key, ids, options }) {
  const r = modelOf(key).model.qkAttribution(ids, options);
  return { ...r, matrix: plain(r.matrix) };
}

/** Frees a model (the page's source of it was replaced or closed). */
function dispose({ key }) {
  long.longDispose({ key });
  models.get(key)?.model.dispose();
  models.delete(key);
}

function chat({ key, messages }) {
  return modelOf(key).model.applyChatTemplate(messages, { addGenerationPrompt: true, tokenize: false });
}

const long = longHandlers(modelOf);

const handlers = {
  open,
  hubFiles: listHub,
  hubOpen: openHub,
  hubCacheList: () => hubCache.list(),
  hubCacheDelete: ({ entry }) => hubCache.delete(entry),
  tokenize,
  strings,
  forward,
  logitLens,
  generate,
  steer,
  chat,
  headScores,
  logitAttribution,
  patch,
  attributionPatch,
  saliency,
  qkAttribution,
  dispose,
  ...long,
};

serve(handlers, { ready: init() });
