// The demo's model sources: one interface for every model the page shows — the seeded
// layer its settings define, the trained presets of web/presets/ (docs/presets.md), a TinyTransformer
// .safetensors file the reader opens, and a checkpoint folder (web/demo-pretrained.js: it lives in a
// worker). demo.js asks a source what it needs, never which kind it is. Every method returns a promise,
// so a source may live in a worker. Token text only ever goes through textContent.
//
// A source:
//   name      the Model control's value and the state's `model` ('seeded', 'reverse', 'file', 'folder' …)
//   label     the Model control's text ("Trained: reverse")
//   ref       how it goes in a link: the ?model= value, or null when it cannot be in one (the link then
//             keeps the last state that can); a link to a source that is not open says `reopen`
//   example   the input it opens on;  firstStep: the step the steps view opens on
//   info      the library's names: { numLayers, numHeads, numKVHeads, headDim, hiddenSize, vocabSize,
//             maxPositions, causal, architecture }
//   views     which views apply: { settings (the side panel defines it; the widgets compute it),
//             maskEditor, predictions: 'positions' | 'next', modelView, lens, generate, chat }
//   preset    a preset's description (title, summary, heads) or null
//   words     a word vocabulary (Set) when text with another word goes to the character model, else null
//   tokenize(text)                 → { tokens, ids, error, truncated }
//   forward(ids, { layer, mask, rows, attention }) → { logits (rows × vocabSize; rows: 'all' | 'last'),
//                                    vocabSize, attention: Float32Array (H_l, T, T) per layer (H_l: the layer's
//                                    own heads, 1 for a conv layer), kinds? (per layer 'attention' | 'conv' |
//                                    'delta'; absent: all softmax attention), trace: the layer's steps (null
//                                    for a layer without softmax steps), delta? (a DeltaNet layer's hooks
//                                    for <delta-rule-steps>: { activations, layer, layout }, else null) }
//   strings(ids)                   → the token texts of ids
//   scored(ids)                    → [from, to): the positions whose next token is predictable
//   logitLens(ids)?  generate(text, { maxNewTokens, signal })? (async iterator of { id, text })
//   chat(messages)?  dispose()
//   steer(recipe, { signal, onToken })? (the Steer panel: web/workers/steer.js's runSteer — the plain and
//                                    the steered continuations, each token told to onToken as it comes)
//   for the interpretability views (src/js/interp/head-scores.js; tensors as { data, shape }): headScores(ids, options),
//   logitAttribution(ids, options), patch(options, { signal, onProgress }) (abortable: long work),
//   saliency(ids, options, { signal, onProgress }), attributionPatch(options, { signal, onProgress }),
//   qkAttribution(ids, options)
//   for a long prompt (a checkpoint's, web/demo-long.js): longPlan(T), longPrefill(ids, { signal,
//   onProgress }), longOverview(layer, head), longTile(layer, head, rows, cols) — their absence keeps
//   a source on the full maps
import { attn, runModel, tokenizeWithInfo, MAX_TOKENS } from './widgets.js';
import { rowMax, softmaxTerm, softmaxTotal } from '../src/js/numeric.js';
import { runLoop, runSteer } from './workers/steer.js';

export const PRESETS = ['reverse', 'copy', 'sort', 'induction', 'text'];
/** What a link names when the source it names was opened from this device (it is not in the link). */
const REOPEN = {
  file: 'open the model file again (files are not stored in the link)',
  folder: 'open the model folder again (folders are not stored in the link)',
};

const open = new Map(); // name → source: presets once loaded, the opened file and folder

/** Makes `source` the one named source.name (disposing the one it replaces). */
export function register(source) {
  const old = open.get(source.name);
  if (old && old !== source) old.dispose();
  open.set(source.name, source);
  return source;
}

/** The source named `name` (a preset is fetched from this origin once). Throws what to do when it is not open. */
export async function sourceFor(name) {
  if (open.has(name)) return open.get(name);
  if (PRESETS.includes(name)) {
    const response = await fetch(new URL(`./presets/${name}.safetensors`, import.meta.url));
    if (!response.ok) throw new Error(`the preset “${name}” could not be fetched (${response.status})`);
    const bytes = new Uint8Array(await response.arrayBuffer());
    return open.get(name) ?? register(tinySource(name, bytes, { ref: name }));
  }
  throw new Error(REOPEN[name] ?? `there is no model “${name}”`);
}

/** The source loaded under `name`, or null (no loading). */
export const loadedSource = (name) => open.get(name) ?? null;

/** Whether the state's model goes into the link (a source not loaded yet: a preset name, it does). */
export const inLink = (name) => !open.has(name) || open.get(name).ref !== null;

/** A TinyTransformer file the reader opened: replaces any earlier one (named "file"; the link says so). */
export function openFile(bytes, fileName) {
  return register(tinySource('file', bytes, { ref: 'file', label: 'Opened file', fileName }));
}

// ---- softmax and top-k: the one place the demo turns logits into probabilities --------------

/** The k likeliest entries of a logits row: [{ id, p }], most likely first (softmax in double). */
export function topK(row, k) {
  const max = rowMax(row),
    z = softmaxTotal(row, max);
  const best = []; // sorted ids, at most k
  for (let id = 0; id < row.length; id++) {
    if (best.length === k && row[id] <= row[best[k - 1]]) continue;
    let at = best.length;
    while (at > 0 && row[best[at - 1]] < row[id]) at--;
    best.splice(at, 0, id);
    if (best.length > k) best.pop();
  }
  return best.map((id) => ({ id, p: softmaxTerm(row[id], max) / z }));
}

/**
 * Per position: the 3 likeliest next tokens with probabilities, and whether the actual next one is
 * first (null where it is not predictable: outside source.scored(ids)).
 */
export async function positionPredictions(source, ids, logits, vocabSize) {
  const tops = ids.map((_, t) => topK(logits.subarray(t * vocabSize, (t + 1) * vocabSize), 3));
  const [from, to] = await source.scored(ids);
  const [texts, topTexts] = await Promise.all([
    source.strings(ids),
    source.strings(tops.flat().map((x) => x.id)),
  ]);
  return tops.map((top, t) => {
    const shown = top.map(({ p }, k) => ({ token: topTexts[t * 3 + k], p }));
    const next = t + 1 < ids.length ? texts[t + 1] : null;
    return {
      top: shown,
      next,
      correct: next === null || t < from || t >= to ? null : shown[0].token === next,
    };
  });
}

// ---- the sources ----------------------------------------------------------------------------

const plain = (t) => ({ data: t.data, shape: Array.from(t.shape) });

const seededViews = Object.freeze({
  settings: true,
  maskEditor: true,
  predictions: null,
  modelView: false,
  lens: false,
  generate: false,
  chat: false,
});
const tinyViews = Object.freeze({
  settings: false,
  maskEditor: true,
  predictions: 'positions',
  modelView: false,
  lens: false,
  generate: false,
  chat: false,
});

/** The seeded layer of the side panel's settings: `config()` is the current one (the widgets compute it). */
export function seededSource(config, { example }) {
  return {
    name: 'seeded',
    label: 'Seeded (untrained)',
    ref: 'seeded',
    example,
    firstStep: 'scores',
    views: seededViews,
    preset: null,
    words: null,
    get info() {
      const c = config();
      return {
        numLayers: 1,
        numHeads: c.heads,
        numKVHeads: c.kvHeads || c.heads,
        headDim: c.dModel / c.heads,
        hiddenSize: c.dModel,
        vocabSize: null,
        maxPositions: MAX_TOKENS,
        causal: c.mask === 'causal',
        architecture: 'seeded attention layer',
      };
    },
    async tokenize(text) {
      const { tokens, truncated } = tokenizeWithInfo(text);
      return {
        tokens,
        ids: tokens.map((_, i) => i),
        error: tokens.length ? '' : 'There are no tokens: type some.',
        truncated,
      };
    },
    async forward() {
      const r = runModel(config());
      if (!r.ok) throw new Error(r.error.message);
      return { logits: null, vocabSize: null, attention: [r.byName.weights.data], trace: r.steps };
    },
    async strings(ids) {
      return Array.from(ids, String);
    },
    async scored() {
      return [0, 0];
    },
    dispose() {},
  };
}

const EXAMPLES = {
  reverse: '3 1 4 1 5 9 | 9 5 1 4 1',
  copy: '3 1 4 1 5 9 | 3 1 4 1 5',
  sort: '3 1 4 1 5 | 1 1 3 4',
  induction: '3 9 12 5 1 7 14 3 9 12 5 1 7 14 2 8 0 11',
};

/** The library's description of a TinyTransformer, in the names every source uses. */
const tinyInfo = (model) => ({
  numLayers: model.numLayers,
  numHeads: model.numHeads,
  numKVHeads: model.numKVHeads,
  headDim: model.headDim,
  hiddenSize: model.hiddenSize,
  vocabSize: model.vocabSize,
  maxPositions: model.maxPositions,
  causal: model.config.causal,
  architecture: 'TinyTransformer',
});

/**
 * The tokenizer of a TinyTransformer: characters for a text model (unknown ones read as its unknown
 * token), else whitespace-separated vocabulary entries (a word outside it is an error that says so).
 */
function tinyTokenizer(preset, vocab, index, maxPositions) {
  const isText = preset?.kind === 'text';
  return async (text) => {
    let parts;
    if (isText) parts = [...String(text)].map((c) => (index.has(c) ? c : preset.unknownToken));
    else {
      parts = String(text).trim().split(/\s+/).filter(Boolean);
      const bad = parts.find((p) => !index.has(p));
      if (bad !== undefined) {
        const shown = vocab.length > 12 ? `${vocab.slice(0, 12).join(' ')} …` : vocab.join(' ');
        return { tokens: [], ids: [], error: `“${bad}” is not in this model’s vocabulary (${shown}).` };
      }
    }
    const truncated = parts.length > maxPositions;
    parts = parts.slice(0, maxPositions);
    if (!parts.length) return { tokens: [], ids: [], error: 'There are no tokens: type some.' };
    return { tokens: parts, ids: parts.map((p) => index.get(p)), error: '', truncated };
  };
}

/** The interpretability calls of a source on `model` (tensors as plain { data, shape }). */
function tinyInterp(model) {
  return {
    async headScores(ids, options = {}) {
      return Object.fromEntries(
        Object.entries(model.headScores(ids, options)).map(([kind, t]) => [kind, plain(t)]),
      );
    },
    async logitAttribution(ids, options = {}) {
      const r = model.logitAttribution(ids, options);
      return { ...r, heads: plain(r.heads), mlp: plain(r.mlp) };
    },
    async patch(options, { signal, onProgress } = {}) {
      const r = await model.patch({
        ...options,
        ...(signal && { signal }),
        ...(onProgress && { onProgress }),
      });
      return { ...r, result: plain(r.result) };
    },
    async saliency(ids, options = {}, { signal, onProgress } = {}) {
      const r = await model.saliency(ids, {
        ...options,
        ...(signal && { signal }),
        ...(onProgress && { onProgress }),
      });
      return { scores: plain(r.scores), value: r.value, delta: r.delta };
    },
    async attributionPatch(options, { signal, onProgress } = {}) {
      const r = await model.attributionPatch({
        ...options,
        ...(signal && { signal }),
        ...(onProgress && { onProgress }),
      });
      return { ...r, result: plain(r.result) };
    },
    async qkAttribution(ids, options) {
      const r = model.qkAttribution(ids, options);
      return { ...r, components: Array.from(r.components), matrix: plain(r.matrix) };
    },
  };
}

/** The input a TinyTransformer opens on: a preset's own example, a sentence, or its first tokens. */
function tinyExample(preset, vocab, model) {
  if (EXAMPLES[preset?.name]) return EXAMPLES[preset.name];
  if (preset?.kind === 'text') return 'The weights of a head sum to one.';
  return vocab.slice(0, Math.min(6, model.maxPositions)).join(' ');
}

/**
 * The Steer panel's recipe on a TinyTransformer held in this page (no generate: one run() per token,
 * letting the page in between). Continuations read as the input does: characters, or spaced words.
 */
function tinySteer(model, tokenize, vocab, isText) {
  const decode = (ids) => ids.map((id) => (isText ? vocab[id] : ` ${vocab[id]}`)).join('');
  const on = {
    model,
    tokenize,
    decode,
    stream: (ids, options) => runLoop(model, ids, options),
    maxPositions: model.maxPositions,
  };
  return (recipe, { signal, onToken } = {}) => runSteer(on, recipe, { signal, emit: (t) => onToken?.(t) });
}

/** A TinyTransformer (a preset or a trainer export) from its safetensors bytes, held in this page. */
function tinySource(name, bytes, { ref, label = `Trained: ${name}`, fileName = '' }) {
  const meta = attn.readSafetensorsMetadata(bytes);
  const preset = meta.preset ? JSON.parse(meta.preset) : null;
  const model = attn.TinyTransformer.fromSafetensors(bytes);
  const vocab = preset?.tokens ?? Array.from({ length: model.vocabSize }, (_, i) => String(i));
  const index = new Map(vocab.map((t, i) => [t, i]));
  const tokenize = tinyTokenizer(preset, vocab, index, model.maxPositions);
  return {
    name,
    label,
    ref,
    fileName,
    example: tinyExample(preset, vocab, model),
    firstStep: 'weights',
    views: tinyViews,
    preset,
    words: preset && preset.kind !== 'text' ? index : null,
    info: tinyInfo(model),
    tokenize,
    steer: tinySteer(model, tokenize, vocab, preset?.kind === 'text'),
    /** `mask` (T × T, 1 = may attend) is applied in every layer on top of the model's causal mask. */
    async forward(ids, { layer = null, mask = null, rows = 'all', attention = true } = {}) {
      const T = ids.length,
        V = model.vocabSize;
      const r = model.forward([ids], {
        attention,
        trace: layer === null ? false : { layers: [layer] },
        mask: mask && { data: mask, shape: [T, T] },
      });
      return {
        logits: rows === 'last' ? r.logits.data.slice((T - 1) * V) : r.logits.data,
        vocabSize: V,
        attention: r.attention.map((w) => w.data),
        trace: layer === null ? null : r.trace[layer],
      };
    },
    async strings(ids) {
      return Array.from(ids, (id) => vocab[id]);
    },
    ...tinyInterp(model),
    /** Task inputs are random: only answers (t ≥ L) are predictable; induction data only in its repeat. */
    async scored(ids) {
      if (preset?.kind === 'repeat') {
        const n = ids.indexOf(ids[0], 1);
        return n > 0 ? [n, 2 * n - 1] : [ids.length, ids.length];
      }
      return [preset?.kind === 'task' ? preset.task.length : 0, ids.length];
    },
    dispose() {
      model.dispose();
    },
  };
}
