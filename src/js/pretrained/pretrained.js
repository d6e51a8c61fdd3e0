// loadPretrained: a Hugging Face checkpoint folder's files (config.json parsed, model.safetensors or
// its shards) as a model of the core (src/model/pretrained.h), for every family of the registry
// (src/js/architectures/). Each tensor's
// bytes go from the bytes or Blob/File given straight into their room in the wasm heap, in chunks,
// in the file's format (F16/BF16 stay 16-bit; the core widens them inside its GEMM).
import { AttentionError, check } from '../errors.js';
import { loadGGUF } from './from-gguf.js';
import { checkpointStopIds, loadFolder } from './from-folder.js';
import { layerSummary } from './layers.js';
import { checkOptions, describe } from '../options.js';
import { layerList, idBatch, traceLayers } from '../ids.js';
import { Handle } from '../runtime/runtime.js';
import { Tensor, fromCore } from '../tensor.js';
import {
  attributionPatch,
  logitAttribution,
  metricGradients,
  modelHeadScores,
  modelPatch,
  qkAttribution,
  saliency,
} from '../interp/head-scores.js';
import { pretrainedInterp } from '../interp/adapter.js';
import { hookNamesOf, runHooks, steeringVector } from '../interp/hooks.js';
import { checkpointTensors } from './checkpoint-tensors.js';
import { GENERATE_PAD, checkAborted, decodeSteps, generationOptions } from './generation.js';
import { renderChatTemplate } from '../tokenizers/chat-template.js';
import { loadFromHub } from '../hub/hub.js';
import { signalOption } from '../hub/api.js';
import { mapStateBytes, prefill } from './prefill.js';

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);

// The functions and the class below take the wrapper copy `rt` (runtime.js); pretrainedApi(rt) binds
// them to one copy of index.js.

class PretrainedModelBase extends Handle {
  constructor(rt, handle, config, architecture, core, generationConfig) {
    super(rt, handle);
    this.config = config;
    this.architecture = architecture;
    this.numLayers = core.layers;
    this.numHeads = core.heads;
    this.numKVHeads = core.kvHeads;
    this.headDim = core.headDim;
    this.hiddenSize = core.hidden;
    this.vocabSize = core.vocabSize;
    this.maxPositions = core.maxPositions; // the longest input (ids plus generated tokens)
    /**
     * Each layer: { kind ('attention'), heads, kvHeads, headDim, kvFrom (the layer whose K/V it
     * reads: itself), window (0 = full), rope, ropeTheta, ropeScaled, qkNorm, softcap }.
     */
    this.layers = Object.freeze(Array.from({ length: core.layers }, (_, l) => layerSummary(core, l)));
    /** generate's default stop ids: the checkpoint's EOS ids (generation_config.json, else config.json). */
    this.stopIds = checkpointStopIds(config, generationConfig, core.vocabSize);
    /** A GGUF file's own key/values (big arrays summarised, as "array<string>[151936]"), else null. */
    this.metadata = null;
    /** What the checkpoint holds that is not run (a multimodal model's towers: its text model alone is). */
    this.ignored = Object.freeze([]);
    /**
     * How the quantized matrices of a GGUF file multiply the activations: 'exact' (dequantized,
     * float32) or 'int8' (loadPretrained's activations option: quantized per block as llama.cpp does).
     */
    this.activations = 'exact';
    this._core = core;
  }

  /** Bytes the weights take in the wasm heap (matrices in the file's format, norms and biases as float32). */
  get weightBytes() {
    return this._live().weightBytes();
  }

  /** Bytes of the tables kept outside the wasm heap, in JS memory (loadPretrained's offHeap). */
  get offHeapBytes() {
    return this._live().offHeapBytes();
  }

  /** Frees the wasm memory and the tables kept outside it; calling it twice is harmless. */
  dispose() {
    for (const table of this._offHeapTables ?? []) table.drop();
    this._offHeapTables = null;
    super.dispose();
  }

  /** The byte limit this model's weights and calls run under (loadPretrained's memoryLimit). */
  get memoryLimit() {
    return this._live().memoryLimit();
  }

  /** { logits (B, T, V), attention, trace?, hiddenStates? } as TinyTransformer.forward's. */
  forward(ids, options = {}) {
    const handle = this._live();
    const {
      attention = true,
      trace = false,
      hiddenStates = false,
      logitLens = false,
    } = checkOptions(options, ['attention', 'trace', 'hiddenStates', 'logitLens'], 'forward option');
    const attentionLayers = layerList(attention, this.numLayers, 'attention');
    const tracedLayers = traceLayers(trace, this.numLayers);
    const batch = idBatch(ids, 'ids');
    this._rt.checkInputBytes('pretrained forward', [batch.tensor]);
    const r = check(
      handle.forward(batch.data, batch.b, batch.t, {
        attentionLayers,
        traceLayers: tracedLayers,
        hiddenStates: Boolean(hiddenStates),
        logitLens: Boolean(logitLens),
      }),
    );
    const out = {
      logits: fromCore(r.logits),
      attention: attention === false ? [] : r.attention.map((w) => (w ? fromCore(w) : null)),
    };
    // What each returned map is: softmax weights, or a short convolution's mixing (layers.js).
    out.attentionKinds = out.attention.map((a, l) => (a ? this.layers[l].kind : null));
    if (trace !== false && trace != null) out.trace = r.traces;
    if (hiddenStates) out.hiddenStates = r.hiddenStates.map(fromCore);
    if (logitLens) {
      const { ids: lensIds, probs, shape } = r.logitLens;
      out.logitLens = { ids: new Tensor(lensIds, shape), probs: new Tensor(probs, shape) };
    }
    return out;
  }

  /** [{ name, shape }] of every hook point (docs/interpretability.md; "B" and "T" symbolic). */
  hookNames() {
    return hookNamesOf(this._live());
  }

  /** { logits, activations } of one forward with hook captures and edits; see docs/interpretability.md. */
  run(ids, options = {}) {
    return runHooks(this, ids, options);
  }

  /** Mean of a hook at `position` over positive prompts minus over negative ones (activation addition). */
  steeringVector(options) {
    return steeringVector(this, options);
  }

  /** { [kind]: Tensor (L, H) } head-type scores from this model's attention on `ids` (a batch of one); see interp/head-scores.js. */
  headScores(ids, options = {}) {
    return modelHeadScores(this, ids, options);
  }

  /** Direct logit attribution of logits[position, token] (− logits[position, against]) to embed, heads, MLPs and constants; see interp/head-scores.js. */
  logitAttribution(ids, options = {}) {
    return logitAttribution(this, ids, options);
  }

  /** QK attribution: (query, key)'s score in one head split over the stream's components at both positions; see interp/qk.js. */
  qkAttribution(ids, options = {}) {
    return qkAttribution(this, ids, options);
  }

  /** ∂M/∂ each hidden state, z and (with attention) A: { value, gradHiddenStates, gradZ, gradAttention }; see docs/interpretability.md. */
  metricGradients(ids, options = {}) {
    return metricGradients(this, ids, options);
  }

  /** Input saliency: { scores, value, delta } (a Promise); see docs/interpretability.md. */
  saliency(ids, options = {}) {
    return saliency(this, ids, options);
  }

  /** Attribution patching: { result, cleanDiff, corruptedDiff } as patch (a Promise); see docs/interpretability.md. */
  attributionPatch(options = {}) {
    return attributionPatch(this, options);
  }

  /** Activation patching: { result, cleanDiff, corruptedDiff } (a Promise); see interp/head-scores.js runPatch and docs/interpretability.md. */
  patch(options = {}) {
    return modelPatch(this, options);
  }

  // The interpretability adapter (interp/adapter.js): what attribution and patching ask of a model.
  _interp() {
    return pretrainedInterp(this);
  }

  /** Token ids of `text` (Int32Array), with what the tokenizer's post-processor adds (e.g. a BOS token) unless addSpecialTokens is false. */
  encode(text, options = {}) {
    const { addSpecialTokens = true } = checkOptions(options, ['addSpecialTokens'], 'encode option');
    if (typeof text !== 'string') throw invalid(`encode needs a string, got ${describe(text)}`);
    return Int32Array.from(this._tok().encode(text, { add_special_tokens: Boolean(addSpecialTokens) }).ids);
  }

  /** The text of `ids` (special tokens included, as the tokenizer's decoder writes them). */
  decode(ids) {
    return this._tok().decode(Array.from(idBatch(ids, 'ids').data));
  }

  /** The display form of each token: its own decoded text (GPT-2's byte-level "Ġ" shown as a space). */
  tokenStrings(ids) {
    const tok = this._tok();
    return Array.from(idBatch(ids, 'ids').data, (id) => tok.decode([id]));
  }

  /**
   * A chat as the model's chat template writes it (transformers' apply_chat_template): token ids
   * (Int32Array, the text tokenized without adding special tokens again: the template writes
   * them), or the text with `tokenize: false`. `template` names one of a list of templates.
   */
  applyChatTemplate(messages, options = {}) {
    const {
      addGenerationPrompt = false,
      tokenize = true,
      template = 'default',
      date = new Date(),
      variables = {},
    } = checkOptions(
      options,
      ['addGenerationPrompt', 'tokenize', 'template', 'date', 'variables'],
      'applyChatTemplate option',
    );
    this._live();
    if (!(date instanceof Date) || Number.isNaN(date.getTime()))
      throw invalid(`date must be a valid Date, got ${describe(date)}`);
    const source = this._chat.templates.get(template);
    if (source === undefined) {
      const names = [...this._chat.templates.keys()];
      throw invalid(
        names.length
          ? `no chat template named ${describe(template)}; this model has: ${names.join(', ')}`
          : 'this model has no chat template (tokenizer_config.json chat_template, or loadPretrained({ chatTemplate }))',
      );
    }
    const text = renderChatTemplate(this._chat.engine, source, {
      messages,
      addGenerationPrompt: Boolean(addGenerationPrompt),
      tokenizerConfig: this._chat.tokenizerConfig,
      date,
      variables,
    });
    return tokenize ? this.encode(text, { addSpecialTokens: false }) : text;
  }

  /** The names of the chat templates this model has ("default" first when there is one). */
  get chatTemplateNames() {
    return [...this._chat.templates.keys()];
  }

  _tok() {
    this._live();
    if (!this._tokenizer)
      throw invalid(
        this._tokenizerWhy ??
          'this model was loaded without a tokenizer: pass loadPretrained({ tokenizer }) (the parsed tokenizer.json)',
      );
    return this._tokenizer;
  }

  /**
   * The next `maxNewTokens` ids after `ids` (B, T), an int32 Tensor (B, maxNewTokens): greedy at
   * temperature 0, else sampled (temperature → topK → topP, seeded). A row that produces a `stop`
   * id (default: the checkpoint's EOS ids) keeps it and is padded with GENERATE_PAD (-1) after it;
   * generation ends when every row has stopped. Decodes with a KV cache per layer (`kvCache`:
   * 'f32', the default, or 'f16': half the bytes); the prompt goes through in chunks of
   * `prefillChunk` tokens (256), `onProgress(done, total)` after each; `signal` stops it between
   * chunks and steps (ABORTED).
   */
  generate(ids, options = {}) {
    const handle = this._idle();
    const o = generationOptions(options, { vocab: this.vocabSize, defaultStop: this.stopIds });
    const batch = idBatch(ids, 'ids');
    const out = new Int32Array(batch.b * o.maxNewTokens).fill(GENERATE_PAD);
    let step = 0;
    checkAborted(o.signal);
    for (const next of decodeSteps(handle, batch, o)) {
      if (!ArrayBuffer.isView(next)) {
        o.onProgress?.(next.done, next.total);
        checkAborted(o.signal); // leaving the loop closes the generator: the caches go
        continue;
      }
      checkAborted(o.signal);
      next.forEach((id, i) => {
        out[i * o.maxNewTokens + step] = id;
      });
      step++;
    }
    return new Tensor(out, [batch.b, o.maxNewTokens]);
  }

  /**
   * generate's tokens one at a time for a batch of one: an async iterator of { id, text } (text:
   * the token's decoded text, or null without a tokenizer) that yields to the page between tokens
   * and ends after a stop id, after maxNewTokens, or when `signal` aborts (also between the chunks of
   * the prompt's prefill, after each of which it calls `onProgress(done, total)` and yields to the page).
   */
  async *generateStream(ids, options = {}) {
    const handle = this._idle();
    const { signal, onProgress, ...o } = generationOptions(options, {
      vocab: this.vocabSize,
      defaultStop: this.stopIds,
    });
    const batch = idBatch(ids, 'ids');
    if (batch.b !== 1) throw invalid(`generateStream takes a batch of one, got ${batch.b} sequences`);
    this._streaming = true;
    try {
      for (const step of decodeSteps(handle, batch, o)) {
        if (signal?.aborted) return;
        if (!ArrayBuffer.isView(step)) {
          onProgress?.(step.done, step.total);
          await new Promise((resolve) => setTimeout(resolve, 0)); // the page can press Stop here
          continue;
        }
        const [id] = step;
        yield { id, text: this._tokenizer ? this._tokenizer.decode([id]) : null };
        await new Promise((resolve) => setTimeout(resolve, 0));
        if (signal?.aborted) return;
      }
    } finally {
      this._streaming = false;
    }
  }

  /**
   * A long prompt read in chunks (pretrained/prefill.js): a MapSession with the last row's logits and
   * the attention maps of `maps.layers` on demand (overview, tile, topK), never a (T, T) tensor.
   */
  prefill(ids, options = {}) {
    return prefill(this._rt, this, ids, options);
  }

  /** The bytes prefill's map state takes for `length` tokens and `maps` ({ layers }), before the run. */
  mapStateBytes(length, maps) {
    this._live();
    return mapStateBytes(this, length, maps);
  }

  // The live handle, when no generation stream holds the model's caches.
  _idle() {
    const handle = this._live();
    if (this._streaming) throw invalid('a generateStream of this model is running: finish or abort it first');
    return handle;
  }
}

/**
 * A Hugging Face checkpoint as a PretrainedModel (dispose it): `config` the parsed config.json,
 * `weights` model.safetensors (ArrayBuffer, Uint8Array, Blob or File) or its shards with
 * `weightsIndex`; or `gguf`, a GGUF file or the parts of a split one (pretrained/from-gguf.js); `onProgress(bytesDone, bytesTotal)` after each chunk; `memoryLimit` (bytes,
 * default the library's memoryLimit()) bounds the weights in the heap and each of the model's calls;
 * `offHeap` (default true) keeps the tables only looked up by token id (an untied embedding, Gemma 4's
 * per-layer table) in JS memory (pretrained/off-heap.js), false puts them in the heap too;
 * `signal` (an AbortSignal) stops the load between chunks. Or `hub: 'owner/name'`: a repository of
 * the Hugging Face Hub, listed, read by ranges and cached (hub/hub.js, docs/hub.md).
 */
async function loadPretrained(rt, options = {}) {
  const m = rt.requireCore();
  if (options !== null && typeof options === 'object' && options.hub !== undefined)
    return loadFromHub(options, (resolved) => loadPretrained(rt, resolved));
  const {
    config,
    weights,
    weightsIndex,
    tokenizer,
    tokenizerConfig,
    generationConfig,
    chatTemplate,
    onProgress,
    memoryLimit = m._memoryLimit(),
    gguf,
    activations = 'exact',
    signal,
    offHeap = true,
  } = checkOptions(
    options,
    [
      'config',
      'weights',
      'weightsIndex',
      'tokenizer',
      'tokenizerConfig',
      'generationConfig',
      'chatTemplate',
      'onProgress',
      'memoryLimit',
      'gguf',
      'activations',
      'signal',
      'offHeap',
    ],
    'loadPretrained option',
  );
  if (generationConfig != null && (typeof generationConfig !== 'object' || Array.isArray(generationConfig))) {
    throw invalid(
      `generationConfig must be the parsed generation_config.json object, got ${describe(generationConfig)}`,
    );
  }
  if (!Number.isSafeInteger(memoryLimit) || memoryLimit < 1) {
    throw invalid(`memoryLimit must be a whole number of bytes in [1, 2^53), got ${describe(memoryLimit)}`);
  }
  if (onProgress != null && typeof onProgress !== 'function')
    throw invalid(`onProgress must be a function, got ${describe(onProgress)}`);
  signalOption(signal);
  if (typeof offHeap !== 'boolean') throw invalid(`offHeap must be true or false, got ${describe(offHeap)}`);
  if (activations !== 'exact' && activations !== 'int8')
    throw invalid(`activations must be 'exact' or 'int8', got ${describe(activations)}`);
  if (activations === 'int8' && gguf === undefined)
    throw invalid("activations: 'int8' computes with a GGUF file's quantized weights: give it as gguf");
  if (gguf !== undefined) {
    // A GGUF file carries its config, weights and tokenizer: the options for a folder's files clash.
    const given = { config, weights, weightsIndex, tokenizer, tokenizerConfig, generationConfig };
    const clash = Object.keys(given).filter((k) => given[k] !== undefined);
    if (clash.length)
      throw invalid(`gguf cannot be given with ${clash.join(', ')}: the GGUF file holds them`);
    return loadGGUF(rt, { gguf, memoryLimit, onProgress, chatTemplate, activations, signal, offHeap });
  }
  const folder = {
    config,
    weights,
    weightsIndex,
    tokenizer,
    tokenizerConfig,
    generationConfig,
    chatTemplate,
  };
  return loadFolder(rt, { ...folder, onProgress, memoryLimit, signal, offHeap });
}

/** loadPretrained and the PretrainedModel class of one wrapper copy. */
export function pretrainedApi(rt) {
  class PretrainedModel extends PretrainedModelBase {
    constructor(handle, config, architecture, core, generationConfig) {
      super(rt, handle, config, architecture, core, generationConfig);
    }
  }
  rt.PretrainedModel = PretrainedModel; // what loadPretrained makes
  return {
    loadPretrained: (...args) => loadPretrained(rt, ...args),
    PretrainedModel,
    checkpointTensors: (config) => checkpointTensors(rt, config),
  };
}
