// TinyTransformer: the small decoder-style language model of src/model/tiny_transformer.h (logits,
// loss, every gradient, weights by state-dict name, safetensors files) over one wrapper's runtime.
// Token ids cross into wasm as one Int32Array plus (B, T): no per-token conversion.
import { AttentionError, check } from '../errors.js';
import { NORM_KIND, POSITIONAL_KIND } from '../constants.js';
import { checkInt, checkOptions, checkSeed, describe } from '../options.js';
import { decodeSafetensors, encodeSafetensors } from '../formats/safetensors.js';
import { Tensor, asBoolTensor, asFloatTensor, fromCore } from '../tensor.js';
import { idBatch, layerList, traceLayers } from '../ids.js';
import {
  attributionPatch,
  logitAttribution,
  metricGradients,
  modelHeadScores,
  modelPatch,
  qkAttribution,
  saliency,
} from '../interp/head-scores.js';
import { tinyInterp } from '../interp/adapter.js';
import { hookNamesOf, runHooks, steeringVector } from '../interp/hooks.js';
import { Handle } from '../runtime/runtime.js';

// The id and layer checks every model shares (ids.js), here too for the modules that import them from here.
export { idBatch, layerList, traceLayers };

const CONFIG_KEYS = [
  'vocabSize',
  'maxLength',
  'dModel',
  'numHeads',
  'numLayers',
  'mlp',
  'mlpHidden',
  'positional',
  'norm',
  'causal',
  'seed',
  'numKVHeads',
  'window',
];
const CONFIG_HINTS = {
  n_embd: 'dModel',
  n_head: 'numHeads',
  n_layer: 'numLayers',
  block_size: 'maxLength',
  n_positions: 'maxLength',
  dropout: 'nothing: TinyTransformer has no dropout',
};
// The core's enums (attn::PositionalKind, attn::NormKind; constants.js), by the names the config uses.
const POSITIONAL = POSITIONAL_KIND;
const NORM = NORM_KIND;

function checkChoice(value, choices, what) {
  if (typeof value !== 'string' || !Object.hasOwn(choices, value)) {
    throw new AttentionError(
      'INVALID_ARGUMENT',
      `${what} must be one of ${Object.keys(choices)
        .map((c) => `'${c}'`)
        .join(', ')}; got ${describe(value)}`,
    );
  }
  return value;
}

function checkBool(value, what) {
  if (typeof value !== 'boolean')
    throw new AttentionError('INVALID_ARGUMENT', `${what} must be true or false, got ${describe(value)}`);
  return value;
}

function required(value, what) {
  if (value === undefined)
    throw new AttentionError('INVALID_ARGUMENT', `TinyTransformer config needs ${what}`);
  return checkInt(value, what);
}

/**
 * The full config (defaults filled) of a TinyTransformer config object; unknown keys and values of
 * the wrong type are INVALID_ARGUMENT. Ranges are the core's to check (its messages name them).
 */
export function normalizeConfig(config) {
  if (config == null) throw new AttentionError('INVALID_ARGUMENT', 'TinyTransformer needs a config object');
  const {
    vocabSize,
    maxLength,
    dModel,
    numHeads,
    numLayers = 1,
    mlp = true,
    mlpHidden,
    positional = 'learned',
    norm = 'pre',
    causal = true,
    seed = 0,
    numKVHeads,
    window = null,
  } = checkOptions(config, CONFIG_KEYS, 'TinyTransformer config key', CONFIG_HINTS);
  const d = required(dModel, 'dModel');
  const heads = required(numHeads, 'numHeads');
  if (window !== null && (!Number.isInteger(window) || window < 1)) {
    throw new AttentionError(
      'INVALID_ARGUMENT',
      `window must be null (none) or an integer >= 1, got ${describe(window)}`,
    );
  }
  return {
    vocabSize: required(vocabSize, 'vocabSize'),
    maxLength: required(maxLength, 'maxLength'),
    dModel: d,
    numHeads: heads,
    numKVHeads: numKVHeads === undefined ? heads : checkInt(numKVHeads, 'numKVHeads'),
    window,
    numLayers: checkInt(numLayers, 'numLayers'),
    mlp: checkBool(mlp, 'mlp'),
    mlpHidden: mlpHidden === undefined ? 4 * d : checkInt(mlpHidden, 'mlpHidden'),
    positional: checkChoice(positional, POSITIONAL, 'positional'),
    norm: checkChoice(norm, NORM, 'norm'),
    causal: checkBool(causal, 'causal'),
    seed: checkSeed(seed, 'seed'),
  };
}

/** Targets for `ids`: ids' exact shape (the core's message), -100 where a position is not scored. */
export function targetBatch(ids, value) {
  const targets = idBatch(value, 'targets');
  const same = targets.shape.length === ids.shape.length && targets.shape.every((n, a) => n === ids.shape[a]);
  if (!same) {
    throw new AttentionError(
      'SHAPE_MISMATCH',
      `targets must have the shape of ids (${ids.shape.join(', ')}), got (${targets.shape.join(', ')})`,
    );
  }
  return targets;
}

/** `names` → tensors of `values` as an object (state dicts, gradients, moments). */
export function byName(names, values) {
  const out = {};
  names.forEach((name, k) => (out[name] = fromCore(values[k])));
  return out;
}

/**
 * A state-dict-like object `dict` with exactly the parameter `names`, as float32 tensors in that
 * order: an unknown name is UNKNOWN_PARAMETER, a missing one INVALID_ARGUMENT, both naming it.
 */
export function tensorsByName(dict, names, what) {
  if (dict == null || typeof dict !== 'object' || Array.isArray(dict) || dict instanceof Tensor) {
    throw new AttentionError(
      'INVALID_ARGUMENT',
      `${what} must be an object of tensors by parameter name, got ${describe(dict)}`,
    );
  }
  for (const key of Object.keys(dict)) {
    if (!names.includes(key))
      throw new AttentionError('UNKNOWN_PARAMETER', `${what}: TinyTransformer has no parameter "${key}"`);
  }
  return names.map((name) => {
    if (!Object.hasOwn(dict, name))
      throw new AttentionError('INVALID_ARGUMENT', `${what} is missing "${name}"`);
    return asFloatTensor(dict[name], name);
  });
}

/**
 * The TinyTransformer, over a wrapper copy `rt` (runtime.js); tinyTransformerClass(rt) gives each copy
 * of index.js its subclass (the one users construct: `new TinyTransformer(config)`).
 */
class TinyTransformerBase extends Handle {
  /** @param {object} config see index.d.ts (TinyTransformerConfig) */
  constructor(rt, config) {
    const full = normalizeConfig(config);
    const core = {
      ...full,
      positional: POSITIONAL[full.positional],
      norm: NORM[full.norm],
      window: full.window ?? 0,
    };
    super(
      rt,
      rt.newHandle('TinyModelHandle', (h) => h.init(core)),
    );
    // Constant for the model's life: asked once (mlpHidden 0 means 4·dModel in the core).
    this.config = Object.freeze({ ...full, mlpHidden: this._handle.mlpHidden() });
    this._names = Object.freeze(this._handle.parameterNames());
    this._parameterCount = this._handle.parameterCount();
  }

  /** Σ numel of the parameters. */
  get parameterCount() {
    return this._parameterCount;
  }

  // The names PretrainedModel uses (a page asks either model the same way); dModel and maxLength stay.
  get numLayers() {
    return this.config.numLayers;
  }
  get numHeads() {
    return this.config.numHeads;
  }
  get numKVHeads() {
    return this.config.numKVHeads;
  }
  get headDim() {
    return this.config.dModel / this.config.numHeads;
  }
  get hiddenSize() {
    return this.config.dModel;
  }
  get vocabSize() {
    return this.config.vocabSize;
  }
  get maxPositions() {
    return this.config.maxLength;
  }
  get dModel() {
    return this.config.dModel;
  }
  get maxLength() {
    return this.config.maxLength;
  }

  /**
   * { logits (B, T, V), attention: (Tensor (B, H, T, T) | null)[], trace?: (TraceStep[] | null)[] }.
   * `mask` (boolean, true = may attend; (T, T) or per head (B·H, T, T)) is applied in every layer on
   * top of the model's causal mask: it can only take keys away.
   */
  forward(ids, options = {}) {
    const handle = this._live();
    const {
      attention = true,
      trace = false,
      mask = null,
    } = checkOptions(options, ['attention', 'trace', 'mask'], 'forward option');
    const { numLayers } = this.config;
    const attentionLayers = layerList(attention, numLayers, 'attention');
    const tracedLayers = traceLayers(trace, numLayers);
    const batch = idBatch(ids, 'ids');
    const maskTensor = mask == null ? null : asBoolTensor(mask, 'mask');
    this._rt.checkInputBytes('TinyTransformer forward', [batch.tensor, maskTensor]);
    const r = check(
      handle.forward(batch.data, batch.b, batch.t, {
        attentionLayers,
        traceLayers: tracedLayers,
        mask: maskTensor,
      }),
    );
    const out = {
      logits: fromCore(r.logits),
      attention: attention === false ? [] : r.attention.map((w) => (w ? fromCore(w) : null)),
    };
    if (trace !== false && trace != null) out.trace = r.traces;
    return out;
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
    return tinyInterp(this);
  }

  /** [{ name, shape }] of every hook point; run() captures and edits them (docs/interpretability.md). */
  hookNames() {
    return hookNamesOf(this._live());
  }

  run(ids, options = {}) {
    return runHooks(this, ids, options);
  }

  steeringVector(options) {
    return steeringVector(this, options);
  }

  /** Each layer: { kind ('attention'), heads, kvHeads, headDim, kvFrom, window }. */
  get layers() {
    const c = this.config;
    return Array.from({ length: c.numLayers }, (_, l) =>
      Object.freeze({
        kind: 'attention',
        heads: c.numHeads,
        kvHeads: c.numKVHeads,
        headDim: this.headDim,
        kvFrom: l,
        window: c.window ?? 0,
      }),
    );
  }

  /** Mean cross-entropy over the positions whose target is not -100. */
  loss(ids, targets) {
    const handle = this._live();
    const i = idBatch(ids, 'ids');
    const t = targetBatch(i, targets);
    this._rt.checkInputBytes('TinyTransformer loss', [i.tensor, t.tensor]);
    return check(handle.loss(i.data, t.data, i.b, i.t)).loss;
  }

  /** { loss, grads: { name: Tensor } } for every parameter (zeros included). */
  gradients(ids, targets) {
    const handle = this._live();
    const i = idBatch(ids, 'ids');
    const t = targetBatch(i, targets);
    this._rt.checkInputBytes('TinyTransformer gradients', [i.tensor, t.tensor]);
    const r = check(handle.gradients(i.data, t.data, i.b, i.t));
    return { loss: r.loss, grads: byName(this._names, r.grads) };
  }

  /** Copies of the parameters by state-dict name (PyTorch layouts). */
  stateDict() {
    return byName(this._names, this._live().parameters());
  }

  /** Sets every parameter; strict (exactly the state-dict names and shapes); nothing changes on an error. */
  loadStateDict(stateDict) {
    const handle = this._live();
    const values = tensorsByName(stateDict, this._names, 'stateDict');
    this._rt.checkInputBytes('TinyTransformer loadStateDict', values);
    check(handle.setParameters(values));
    return this;
  }

  /**
   * A new TinyTransformer (dispose it) equal to this one but with the output of each listed head
   * zeroed: head h of layer l writes only through columns [h·dk, (h+1)·dk) of
   * `blocks.{l}.attn.out_proj.weight` (dk = dModel / numHeads), so zeroing them removes exactly that
   * head's term from the attention output (out_proj's bias stays). The head still attends: its
   * weights are returned as before; nothing reads its values. This model is not changed.
   * @param {Array<[number, number]>} heads [layer, head] pairs
   */
  ablateHeads(heads) {
    this._live();
    const { numLayers, numHeads, dModel } = this.config;
    if (!Array.isArray(heads))
      throw new AttentionError(
        'INVALID_ARGUMENT',
        `ablateHeads needs an array of [layer, head] pairs, got ${describe(heads)}`,
      );
    for (const pair of heads) {
      const ok =
        Array.isArray(pair) &&
        pair.length === 2 &&
        Number.isInteger(pair[0]) &&
        Number.isInteger(pair[1]) &&
        pair[0] >= 0 &&
        pair[0] < numLayers &&
        pair[1] >= 0 &&
        pair[1] < numHeads;
      if (!ok) {
        throw new AttentionError(
          'INVALID_ARGUMENT',
          `ablateHeads: ${describe(pair)} is not a [layer, head] pair with layer in [0, ${numLayers}) and head in [0, ${numHeads})`,
        );
      }
    }
    const dict = this.stateDict();
    const dk = dModel / numHeads;
    for (const [layer, head] of heads) {
      const w = dict[`blocks.${layer}.attn.out_proj.weight`].data; // (dModel, dModel), row = output feature
      for (let row = 0; row < dModel; row++)
        w.fill(0, row * dModel + head * dk, row * dModel + (head + 1) * dk);
    }
    const model = new this.constructor(this.config);
    try {
      model.loadStateDict(dict);
    } catch (error) {
      model.dispose();
      throw error;
    }
    return model;
  }

  /** The weights as a safetensors file (F32, state-dict names, the config in __metadata__). */
  toSafetensors() {
    return encodeSafetensors(this.stateDict(), this.config);
  }

  /** A model from toSafetensors' bytes; a malformed or hostile file is INVALID_ARGUMENT naming the problem. */
  static fromSafetensors(bytes) {
    this.runtime.requireCore();
    const { config, tensors } = decodeSafetensors(bytes, normalizeConfig);
    let model;
    try {
      model = new this(config);
    } catch (error) {
      if (error instanceof AttentionError && error.code === 'TOO_LARGE') throw error;
      throw new AttentionError('INVALID_ARGUMENT', `safetensors: the config is invalid: ${error.message}`);
    }
    try {
      model.loadStateDict(tensors);
    } catch (error) {
      model.dispose();
      // Names and shapes were checked: what is left is the values (NaN or ±∞) or the memory limit.
      if (!(error instanceof AttentionError) || error.code === 'TOO_LARGE') throw error;
      throw new AttentionError('INVALID_ARGUMENT', `safetensors: ${error.message}`);
    }
    return model;
  }
}

/** The TinyTransformer class of one wrapper copy (runtime.js createRuntime). */
export function tinyTransformerClass(rt) {
  return class TinyTransformer extends TinyTransformerBase {
    constructor(config) {
      super(rt, config);
    }
    /** The wrapper copy this class belongs to (its static methods need the module). */
    static get runtime() {
      return rt;
    }
  };
}
