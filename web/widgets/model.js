// The model behind the widgets: a plain config object → token embeddings (+ positional encoding) →
// MultiHeadAttention.forward(..., { trace: true }) through the library. Results are cached by
// config, so several widgets showing the same config share one forward pass.
import { attn } from './runtime.js';
import { embedTokens } from './embedding.js';
import { MAX_TOKENS, tokenize } from './tokenizer.js';

export const PAD_TOKEN = '<pad>';
export const MAX_PADS = 8;

/** Defaults of every config key; the attribute name is the kebab-case of the key. */
export const DEFAULT_CONFIG = Object.freeze({
  text: 'The cat sat on the mat because it was tired.',
  source: 'Le chat était fatigué.',
  cross: false, // cross-attention: queries from `text`, keys/values from `source`
  tokens: null, // string[]: use these tokens instead of tokenizing `text`
  sourceTokens: null, // string[]: same for `source`
  dModel: 16,
  heads: 4,
  seed: 1, // weight initialisation and token embeddings
  positional: 'sinusoidal', // 'none' | 'sinusoidal' | 'learned' | 'rope' | 'alibi'
  kvHeads: 0, // key/value heads (grouped-query attention); 0 = as many as heads
  base: 10000, // sinusoidal base
  mask: 'none', // 'none' | 'causal' | 'padding' | 'custom'
  pad: 2, // <pad> tokens appended in 'padding' mode (0…8)
  toggles: [], // [[i, j], ...] cells flipped on top of the mask mode (custom clicks)
  scaling: true, // divide by √d_k
  temperature: 1, // scores are further divided by this
  dropout: 0, // dropout probability on the attention weights
  dropoutSeed: 0,
  residual: false, // output + X
  layerNorm: false, // LayerNorm after (residual) output
  stateDict: null, // PyTorch-layout weights to load instead of seeded ones (not serialisable)
});

const ENUMS = {
  positional: ['none', 'sinusoidal', 'learned', 'rope', 'alibi'],
  mask: ['none', 'causal', 'padding', 'custom'],
};
const BOOLS = ['cross', 'scaling', 'residual', 'layerNorm'];
const INTS = {
  dModel: [1, 1024],
  heads: [1, 64],
  kvHeads: [0, 64],
  seed: [0, 0xffffffff],
  pad: [0, MAX_PADS],
  dropoutSeed: [0, 0xffffffff],
};
const FLOATS = { base: [1.0001, 1e9], temperature: [0.01, 100], dropout: [0, 0.95] };

/** kebab-case attribute name of a config key: dModel → d-model. */
export const attrName = (key) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** The attributes every model-driven widget observes. */
export const CONFIG_ATTRIBUTES = Object.keys(DEFAULT_CONFIG)
  .filter((k) => !['tokens', 'sourceTokens', 'stateDict'].includes(k))
  .map(attrName);

/** "1", "true", "on", "yes", "" → true; "0", "false", "off", "no" → false. */
export function parseBool(s, fallback) {
  if (s === null || s === undefined) return fallback;
  if (typeof s === 'boolean') return s;
  const t = String(s).trim().toLowerCase();
  if (['', '1', 'true', 'on', 'yes'].includes(t)) return true;
  if (['0', 'false', 'off', 'no'].includes(t)) return false;
  return fallback;
}

/** "0.1,2.3" or [[0,1],[2,3]] → sorted unique [[0,1],[2,3]]. */
export function parseToggles(v) {
  const pairs = Array.isArray(v)
    ? v
    : String(v || '')
        .split(/[\s,;]+/)
        .filter(Boolean)
        .map((p) => p.split(/[.:-]/));
  const seen = new Set();
  const out = [];
  for (const p of pairs) {
    const i = Number(p[0]),
      j = Number(p[1]);
    if (!Number.isInteger(i) || !Number.isInteger(j) || i < 0 || j < 0 || i >= 520 || j >= 520) continue;
    if (!seen.has(`${i}.${j}`)) {
      seen.add(`${i}.${j}`);
      out.push([i, j]);
    }
  }
  return out.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

/** [[0,1],[2,3]] → "0.1,2.3" */
export const formatToggles = (t) => t.map(([i, j]) => `${i}.${j}`).join(',');

/** Validates and fills a (partial) config; out-of-range numbers are clamped, bad enums defaulted. */
export function normalizeConfig(partial = {}) {
  const c = { ...DEFAULT_CONFIG };
  for (const [k, v] of Object.entries(partial)) if (k in DEFAULT_CONFIG && v !== undefined) c[k] = v;
  c.text = String(c.text ?? '');
  c.source = String(c.source ?? '');
  for (const k of BOOLS) c[k] = parseBool(c[k], DEFAULT_CONFIG[k]);
  for (const [k, values] of Object.entries(ENUMS)) if (!values.includes(c[k])) c[k] = DEFAULT_CONFIG[k];
  for (const [k, [lo, hi]] of Object.entries(INTS)) {
    const n = Math.round(Number(c[k]));
    c[k] = Number.isFinite(n) ? Math.min(hi, Math.max(lo, n)) : DEFAULT_CONFIG[k];
  }
  for (const [k, [lo, hi]] of Object.entries(FLOATS)) {
    const n = Number(c[k]);
    c[k] = Number.isFinite(n) ? Math.min(hi, Math.max(lo, n)) : DEFAULT_CONFIG[k];
  }
  c.toggles = parseToggles(c.toggles);
  for (const k of ['tokens', 'sourceTokens'])
    c[k] = Array.isArray(c[k]) ? c[k].slice(0, MAX_TOKENS).map(String) : null;
  return c;
}

/** Reads the config attributes present on an element. */
export function configFromAttributes(el) {
  const out = {};
  for (const key of Object.keys(DEFAULT_CONFIG)) {
    const a = attrName(key);
    if (el.hasAttribute(a)) out[key] = el.getAttribute(a);
  }
  if (el.hasAttribute('tokens')) {
    try {
      out.tokens = JSON.parse(el.getAttribute('tokens'));
    } catch {
      /* not JSON: ignored */
    }
  }
  return out;
}

/** Head counts that divide d_model, for explanations. */
export function validHeadCounts(dModel, max = 16) {
  return Array.from({ length: max }, (_, i) => i + 1).filter((h) => dModel % h === 0);
}

/** The query and key token lists a config produces (padding included). */
export function tokensOf(c) {
  const q = c.tokens || tokenize(c.text);
  const k = c.cross ? c.sourceTokens || tokenize(c.source) : null;
  const pads = c.mask === 'padding' ? Array(c.pad).fill(PAD_TOKEN) : [];
  if (c.cross) return { queryTokens: q, keyTokens: [...k, ...pads], realKeys: k.length };
  const all = [...q, ...pads];
  return { queryTokens: all, keyTokens: all, realKeys: q.length };
}

/**
 * The boolean mask (Tq, Tk), 1 = may attend, that a config describes: the mode's pattern with the
 * toggled cells flipped. Used to build the library input and to draw the mask editor.
 */
export function maskMatrix(c, Tq, Tk, realKeys) {
  const m = new Uint8Array(Tq * Tk).fill(1); // (Tq, Tk) row-major
  for (let i = 0; i < Tq; i++)
    for (let j = 0; j < Tk; j++) {
      if (c.mask === 'causal' && j > i) m[i * Tk + j] = 0;
      if (c.mask === 'padding' && j >= realKeys) m[i * Tk + j] = 0;
    }
  for (const [i, j] of c.toggles) if (i < Tq && j < Tk) m[i * Tk + j] ^= 1;
  return m;
}

// ---- running -------------------------------------------------------------------------------

const sdIds = new WeakMap();
let sdCounter = 0;
const stateDictId = (sd) => (sd ? (sdIds.get(sd) ?? (sdIds.set(sd, ++sdCounter), sdCounter)) : 0);

const models = new Map(); // key → MultiHeadAttention (a few, disposed when evicted)
const learned = new Map(); // key → LearnedPositionalEncoding
const results = new Map(); // config key → result
const LIMIT = { models: 4, learned: 2, results: 8 };

function remember(map, key, value, limit, dispose) {
  map.set(key, value);
  while (map.size > limit) {
    const [k, v] = map.entries().next().value;
    map.delete(k);
    if (dispose) dispose(v);
  }
  return value;
}

function getModel(c) {
  const rope = c.positional === 'rope';
  const key = `${c.dModel}|${c.heads}|${c.kvHeads}|${rope}|${c.seed}|${c.residual}|${c.layerNorm}|${stateDictId(c.stateDict)}`;
  let m = models.get(key);
  if (m) {
    models.delete(key);
    models.set(key, m);
    return m;
  } // most recently used last
  m = new attn.MultiHeadAttention({
    embedDim: c.dModel,
    numHeads: c.heads,
    seed: c.seed,
    residual: c.residual,
    layerNorm: c.layerNorm,
    numKVHeads: c.kvHeads || c.heads,
    rope,
  });
  if (c.stateDict) {
    try {
      m.loadStateDict(c.stateDict);
    } catch (e) {
      m.dispose();
      throw e;
    }
  }
  return remember(models, key, m, LIMIT.models, (x) => x.dispose());
}

/** Positional encoding (T, dModel) as a Float32Array, or null for 'none'. */
function positionalRows(c, T) {
  if (c.positional === 'sinusoidal') return attn.sinusoidalEncoding(T, c.dModel, { base: c.base }).data;
  if (c.positional !== 'learned') return null;
  const key = `${c.dModel}|${c.seed}`;
  let p = learned.get(key);
  if (!p) {
    p = remember(
      learned,
      key,
      new attn.LearnedPositionalEncoding({
        maxLength: MAX_TOKENS + MAX_PADS,
        dModel: c.dModel,
        seed: c.seed,
      }),
      LIMIT.learned,
      (x) => x.dispose(),
    );
  }
  return p.encode(T).data;
}

/** The cache key of a normalized config. */
export function configKey(c) {
  return JSON.stringify({ ...c, stateDict: stateDictId(c.stateDict) });
}

/** Forward options for the library from a config (mask, scale, dropout, positional). */
function forwardOptions(c, Tq, Tk, realKeys, posQ) {
  const opts = { trace: true, needWeights: true };
  if (c.toggles.length) opts.mask = new attn.Tensor(maskMatrix(c, Tq, Tk, realKeys), [Tq, Tk]);
  else if (c.mask === 'causal') opts.causal = true;
  else if (c.mask === 'padding') {
    const kpm = new Uint8Array(Tk); // (B=1, Tk), 1 = real token
    kpm.fill(1, 0, realKeys);
    opts.keyPaddingMask = new attn.Tensor(kpm, [1, Tk]);
  }
  const dk = c.dModel / c.heads;
  if (!c.scaling || c.temperature !== 1) opts.scale = (c.scaling ? 1 / Math.sqrt(dk) : 1) / c.temperature;
  if (c.dropout > 0) opts.dropout = { p: c.dropout, seed: c.dropoutSeed };
  if (posQ) opts.positional = new attn.Tensor(posQ, [Tq, c.dModel]);
  if (c.positional === 'alibi') opts.alibi = true;
  return opts;
}

function compute(c) {
  const { queryTokens, keyTokens, realKeys } = tokensOf(c);
  const Tq = queryTokens.length,
    Tk = keyTokens.length;
  if (Tq === 0 || (c.cross && realKeys === 0)) {
    throw Object.assign(
      new Error(
        c.cross && Tq
          ? 'The source sentence has no tokens: type one.'
          : 'There are no tokens: type a sentence.',
      ),
      { code: 'EMPTY_INPUT' },
    );
  }
  const E = c.dModel;
  const mha = getModel(c);
  const query = new attn.Tensor(embedTokens(queryTokens, E, c.seed), [1, Tq, E]); // (B=1, Tq, E)
  let key;
  if (c.cross) {
    // The library treats cross-attention memory as already encoded (as in a decoder), so the
    // source gets its own positional encoding here.
    const mem = embedTokens(keyTokens, E, c.seed); // (Tk, E)
    const pos = positionalRows(c, Tk);
    if (pos) for (let i = 0; i < mem.length; i++) mem[i] += pos[i];
    key = new attn.Tensor(mem, [1, Tk, E]);
  }
  const opts = forwardOptions(c, Tq, Tk, realKeys, positionalRows(c, Tq));
  const { weights, trace } = mha.forward(query, key, key, opts);
  // The library hands back copies (never views into wasm memory), so they can be kept as they are.
  const steps = trace.map((s) => ({
    name: s.name,
    shape: Array.from(s.shape),
    axes: Array.from(s.axes || []),
    data: s.data,
  }));
  const byName = Object.fromEntries(steps.map((s) => [s.name, s]));
  return {
    ok: true,
    config: c,
    queryTokens,
    keyTokens,
    realKeys,
    Tq,
    Tk,
    heads: c.heads,
    dk: E / c.heads,
    steps,
    byName,
    meanWeights: weights.data,
    mask: maskMatrix(c, Tq, Tk, realKeys),
  };
}

/**
 * Runs (or fetches from the cache) the forward pass for a config. Never throws: invalid configs
 * (heads that do not divide d_model, no tokens, a state dict of the wrong shape, …) come back as
 * { ok: false, error: { code, message } } so widgets can explain them.
 * @param {object} partial  config (normalized here)
 * @param {{ fresh?: boolean }} [options]  fresh: bypass the cache (timing)
 */
export function runModel(partial, { fresh = false } = {}) {
  const c = normalizeConfig(partial);
  const key = configKey(c);
  if (!fresh && results.has(key)) return results.get(key);
  let r;
  try {
    r = compute(c);
  } catch (e) {
    let queryTokens = [],
      keyTokens = [];
    try {
      ({ queryTokens, keyTokens } = tokensOf(c));
    } catch {
      /* keep empty */
    }
    r = {
      ok: false,
      config: c,
      queryTokens,
      keyTokens,
      error: { code: e.code || 'ERROR', message: e.message || String(e) },
    };
  }
  return remember(results, key, r, LIMIT.results);
}

/**
 * The result shape runModel returns, for a trace computed elsewhere: one layer of a TinyTransformer
 * (model.forward(ids, { trace: { layers: [l] } }).trace[l]), so the step-by-step widgets can show a
 * trained model's layer. tokens: the sequence's token texts (self-attention: queries = keys).
 * @param {{ tokens: string[], steps: { name, shape, axes, data }[], heads: number, dModel: number, causal?: boolean }} t
 */
export function resultFromTrace({ tokens, steps, heads, dModel, causal = true }) {
  const T = tokens.length;
  const config = normalizeConfig({ dModel, heads, mask: causal ? 'causal' : 'none', positional: 'none' });
  const list = steps.map((s) => ({
    name: s.name,
    shape: Array.from(s.shape),
    axes: Array.from(s.axes || []),
    data: s.data,
  }));
  const byName = Object.fromEntries(list.map((s) => [s.name, s]));
  const w = byName.weights;
  const mean = new Float32Array(T * T);
  if (w)
    for (let hd = 0; hd < heads; hd++)
      for (let i = 0; i < T * T; i++) mean[i] += w.data[hd * T * T + i] / heads;
  return {
    ok: true,
    config,
    queryTokens: tokens,
    keyTokens: tokens,
    realKeys: T,
    Tq: T,
    Tk: T,
    heads,
    dk: dModel / heads,
    steps: list,
    byName,
    meanWeights: mean,
    mask: maskMatrix(config, T, T, T),
  };
}

/** Drops cached results (after loading new weights, or to time a fresh pass). */
export function clearModelCache() {
  results.clear();
}

/**
 * The weights a config runs with, in PyTorch names and layouts, as plain JSON-ready
 * { name: { shape, data } } (the format the demo's "load weights" accepts back).
 */
export function modelStateDict(partial) {
  const c = normalizeConfig(partial);
  const sd = getModel(c).stateDict();
  return Object.fromEntries(
    Object.entries(sd).map(([k, t]) => [
      k,
      { shape: Array.from(t.shape), data: Array.from(t.data, Math.fround) },
    ]),
  );
}
