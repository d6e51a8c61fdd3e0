// <kv-cache-stepper>: decoding one token at a time with a real KV cache. A seeded MultiHeadAttention
// (numKVHeads, optional RoPE) and a seeded input sequence x (1, T, E). Each Step feeds the next row
// of x through mha.forward(row, null, null, { cache, causal: true, averageWeights: false, trace: true }):
// only that row is projected, its key and value are appended to the cache, and its query attends over
// every cached key. The widget shows
//   - x, with the row fed next outlined;
//   - the keys the cache holds for one key/value head (rows = positions so far, the new row outlined),
//     read from that forward's own trace (`k_rotated` with RoPE, `k` without: the cache's contents);
//   - the new query row's weights over every cached key, one row per query head (H, t);
//   - what was computed, and a check: the stepped output row against the same row of one full causal
//     forward over the prefix (max |difference|, computed here).
//
// Attributes: embed-dim (E, default 16), heads (H, 4), kv-heads (H_kv, 2), rope (default true),
//             length (T, tokens in x, default 10), seed (1: the module's weights; x = seededNormal([1, T, E], seed + 1)).
// Properties: embedDim, heads, kvHeads, rope, sequenceLength (the attribute `length`), seed;
//             length (read-only: tokens in the cache now), outputs (Float32Array (t, E) of every stepped
//             output row), x, weights (the last step's (H, t)), keys (the shown head's cached keys (t, d_k)),
//             kvHead (the key/value head shown), maxDifference, shown;
//             step() → { position, output, weights } | null when x is used up; runAll() → Promise;
//             reset(); fullOutput() → Float32Array (t, E) from one full causal forward over the prefix.
// Events: kv-step { length, position, maxDifference } after each step and reset (position −1); ready.
// The module and the cache are disposed in disconnectedCallback (reconnecting starts again from an
// empty cache).
import { AwElement, h } from './base-element.js';
import { composeCanvases } from './export.js';
import { exactNumber, formatNumber, themeOf } from './draw-util.js';
import { parseBool } from './model.js';
import { attn, isReady } from './runtime.js';
import { divergingName, paletteName } from './colormap.js';
import { buildStepperBody, drawStepper, headKeys, syncButtons } from './kv-cache-stepper-view.js';
import { kvCSV, kvJSON, kvSVG } from './kv-cache-stepper-export.js';

const RUN_DELAY_MS = 140; // between the steps of Run all (0 with prefers-reduced-motion)

const intAttr = (el, name, def, lo, hi) => {
  const n = Number(el.getAttribute(name) ?? def);
  return Number.isInteger(n) ? Math.min(hi, Math.max(lo, n)) : def;
};

export class KvCacheStepper extends AwElement {
  static get ownAttributes() {
    return ['embed-dim', 'heads', 'kv-heads', 'rope', 'length', 'seed', 'palette', 'diverging'];
  }

  /** The weights' colour map, on screen and in exports: 'viridis' (default) | 'cividis' | 'gray'. */
  get palette() {
    return paletteName(this.getAttribute('palette'));
  }
  set palette(v) {
    this.setAttribute('palette', String(v));
  }
  /** The signed views' (x, the cached keys) map: 'blue-orange' (default) | 'red-blue'. */
  get diverging() {
    return divergingName(this.getAttribute('diverging')) === 'red-blue' ? 'red-blue' : 'blue-orange';
  }
  set diverging(v) {
    this.setAttribute('diverging', String(v));
  }

  constructor() {
    super();
    this._kvHead = 0;
    this._mha = null;
    this._cache = null;
    this._state = null; // { key, E, H, Hkv, T, dk, rope, seed, x } for the module held
    this._steps = []; // per step: { output: Float32Array(E), weights: Float32Array(H·t), keys: Float32Array(Hkv·t·dk), diff }
    this._run = null; // the Run all in progress
  }

  build() {
    this._stepBtn = h('button', {
      type: 'button',
      text: 'Step',
      'aria-label': 'Step: feed the next token',
      onclick: () => {
        this.#stop();
        this.step();
      },
    });
    this._runBtn = h('button', {
      type: 'button',
      text: 'Run all',
      'aria-label': 'Run all: feed every remaining token',
      onclick: () => {
        this.runAll();
      },
    });
    this._resetBtn = h('button', {
      type: 'button',
      text: 'Reset',
      'aria-label': 'Reset: empty the cache',
      onclick: () => {
        this.#stop();
        this.reset();
      },
    });
    this._headSel = h('select', {
      onchange: () => {
        this.kvHead = Number(this._headSel.value);
      },
    });
    buildStepperBody(this, (which, c) => this.#hover(which, c));
  }

  // ---- attributes ----------------------------------------------------------------------------

  get embedDim() {
    return intAttr(this, 'embed-dim', 16, 1, 256);
  }
  set embedDim(v) {
    this.setAttribute('embed-dim', String(v));
  }
  get heads() {
    return intAttr(this, 'heads', 4, 1, 32);
  }
  set heads(v) {
    this.setAttribute('heads', String(v));
  }
  get kvHeads() {
    return intAttr(this, 'kv-heads', 2, 1, 32);
  }
  set kvHeads(v) {
    this.setAttribute('kv-heads', String(v));
  }
  get rope() {
    return parseBool(this.getAttribute('rope'), true);
  }
  set rope(v) {
    this.setAttribute('rope', String(Boolean(v)));
  }
  /** The attribute `length`: tokens in x (1…64). (The property `length` is the cache's length.) */
  get sequenceLength() {
    return intAttr(this, 'length', 10, 1, 64);
  }
  set sequenceLength(v) {
    this.setAttribute('length', String(v));
  }
  get seed() {
    return intAttr(this, 'seed', 1, 0, 2 ** 31 - 2);
  }
  set seed(v) {
    this.setAttribute('seed', String(v));
  }

  // ---- state ---------------------------------------------------------------------------------

  /** Tokens in the cache now (read-only). */
  get length() {
    return this._cache ? this._cache.length : 0;
  }
  /** Every stepped output row so far, (length, E) row-major. */
  get outputs() {
    const s = this._state;
    if (!s) return new Float32Array(0);
    const out = new Float32Array(this._steps.length * s.E);
    this._steps.forEach((st, t) => out.set(st.output, t * s.E));
    return out;
  }
  /** The input sequence x, (T, E) row-major. */
  get x() {
    return this._state ? this._state.x.slice() : null;
  }
  /** The last step's weights, (H, length) row-major; null before the first step. */
  get weights() {
    const st = this._steps.at(-1);
    return st ? st.weights.slice() : null;
  }
  /** The shown key/value head's cached keys, (length, d_k) row-major; null before the first step. */
  get keys() {
    return this._steps.length ? headKeys(this, this._kvHead) : null;
  }
  /** The key/value head whose keys are shown. */
  get kvHead() {
    return this._state ? Math.min(this._kvHead, this._state.Hkv - 1) : this._kvHead;
  }
  set kvHead(v) {
    this._kvHead = Math.max(0, Math.floor(Number(v) || 0));
    if (this._state) drawStepper(this);
  }
  /** The state: attributes (embed-dim, heads, kv-heads, rope, length, seed), tokens stepped so far, the key/value head shown. */
  extraState() {
    return { stepped: this.length, kvHead: this._kvHead };
  }
  applyExtraState(s) {
    this._kvHead = Math.max(0, Math.floor(Number(s.kvHead) || 0));
    const n = Math.max(0, Math.floor(Number(s.stepped) || 0));
    // After the attribute changes (which rebuild the module on the next render): empty cache, n steps.
    this.prepare().then(() =>
      queueMicrotask(() => {
        this.#stop();
        this.reset();
        for (let i = 0; i < n; i++) if (!this.step()) break;
        this.refresh();
      }),
    );
  }

  /** Max |stepped − full| over every row so far (0 before the first step). */
  get maxDifference() {
    return this._steps.reduce((m, st) => Math.max(m, st.diff), 0);
  }
  get shown() {
    const s = this._state;
    return s
      ? {
          embedDim: s.E,
          heads: s.H,
          kvHeads: s.Hkv,
          headDim: s.dk,
          rope: s.rope,
          sequenceLength: s.T,
          seed: s.seed,
          length: this.length,
          kvHead: this.kvHead,
          maxDifference: this.maxDifference,
        }
      : null;
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    this.#stop();
    this.#free();
  }

  #free() {
    this._cache?.dispose();
    this._mha?.dispose();
    this._cache = null;
    this._mha = null;
    this._state = null;
    this._steps = [];
  }

  /** The module, cache and x for the current attributes; rebuilt (from an empty cache) when they change. */
  #ensure() {
    const E = this.embedDim,
      H = this.heads,
      Hkv = this.kvHeads,
      rope = this.rope,
      T = this.sequenceLength,
      seed = this.seed;
    const key = `${E}|${H}|${Hkv}|${rope}|${T}|${seed}`;
    if (this._state?.key === key && this._mha) return true;
    this.#stop();
    this.#free();
    let mha = null;
    try {
      mha = new attn.MultiHeadAttention({ embedDim: E, numHeads: H, numKVHeads: Hkv, rope, seed });
      this._cache = mha.createCache({ maxLength: T });
    } catch (e) {
      mha?.dispose();
      this.showError(e.message);
      return false;
    }
    this._mha = mha;
    this._state = {
      key,
      E,
      H,
      Hkv,
      T,
      dk: E / H,
      rope,
      seed,
      x: Float32Array.from(attn.seededNormal([1, T, E], seed + 1).data),
    };
    return true;
  }

  /**
   * Feeds the next token of x through the cache. Returns { position, output, weights } (weights (H, t)),
   * or null when every token has been fed (or the widget has no valid module).
   */
  step() {
    if (!isReady() || !this.isConnected || !this.#ensure()) return null;
    const s = this._state,
      t = this._cache.length;
    if (t >= s.T) return null;
    const row = new attn.Tensor(s.x.slice(t * s.E, (t + 1) * s.E), [1, 1, s.E]);
    const r = this._mha.forward(row, null, null, {
      cache: this._cache,
      causal: true,
      averageWeights: false,
      trace: true,
    });
    const output = Float32Array.from(r.output.data); // (1, 1, E)
    const weights = Float32Array.from(r.weights.data); // (1, H, 1, t + 1)
    const k = r.trace.find((st) => st.name === (s.rope ? 'k_rotated' : 'k'));
    const keys = Float32Array.from(k.data); // (1, H_kv, t + 1, d_k): what the cache holds
    const full = this.fullOutput(); // (t + 1, E)
    let diff = 0;
    for (let i = 0; i < s.E; i++) diff = Math.max(diff, Math.abs(output[i] - full[t * s.E + i]));
    this._steps.push({ output, weights, keys, diff });
    drawStepper(this);
    this.emit('kv-step', { length: this._cache.length, position: t, maxDifference: diff });
    return { position: t, output: output.slice(), weights: weights.slice() };
  }

  /** Steps until x is used up, one step every ~140 ms (at once with prefers-reduced-motion). */
  async runAll() {
    const run = {};
    this._run = run;
    syncButtons(this);
    const delay = matchMedia('(prefers-reduced-motion: reduce)').matches ? 0 : RUN_DELAY_MS;
    while (this._run === run && this.step()) {
      if (delay) await new Promise((r) => setTimeout(r, delay));
    }
    if (this._run === run) {
      this._run = null;
      syncButtons(this);
    }
  }

  /** Stops a Run all in progress. */
  #stop() {
    if (this._run) {
      this._run = null;
      if (this._stepBtn) syncButtons(this);
    }
  }

  /** Empties the cache (cache.reset()): the next step feeds token 0 again. */
  reset() {
    this._cache?.reset();
    this._steps = [];
    if (this._state) drawStepper(this);
    this.emit('kv-step', { length: this.length, position: -1, maxDifference: 0 });
  }

  /** One full causal forward (no cache) over the first `length` rows of x: its output, (length, E). */
  fullOutput() {
    const s = this._state,
      t = this.length;
    if (!s || !t) return new Float32Array(0);
    const prefix = new attn.Tensor(s.x.slice(0, t * s.E), [1, t, s.E]);
    return Float32Array.from(
      this._mha.forward(prefix, null, null, { causal: true, needWeights: false }).output.data,
    );
  }

  // ---- drawing -------------------------------------------------------------------------------

  render() {
    if (!this.#ensure()) {
      this._body.hidden = true;
      this._summary.textContent = `${this.heads} query heads over ${this.kvHeads} key/value heads with embed-dim ${this.embedDim}: not a valid module.`;
      return;
    }
    this.showError('');
    this._body.hidden = false;
    drawStepper(this);
  }

  #hover(which, cell) {
    if (!cell) {
      this.showTooltip(0, 0, null);
      return;
    }
    const s = this._state,
      size = s.H / s.Hkv;
    let text;
    if (which === 'x')
      text = `x, token ${cell.row}, feature ${cell.col}: ${exactNumber(cell.value)}${cell.row < this.length ? ' (cached)' : ''}`;
    else if (which === 'keys')
      text = `cached key of K/V head ${this.kvHead}, position ${cell.row}, feature ${cell.col}: ${exactNumber(cell.value)}`;
    else
      text = `query head ${cell.row} (K/V head ${Math.floor(cell.row / size)}), new query ${this.length - 1}, key ${cell.col}: weight ${exactNumber(cell.value)}`;
    this._readout.textContent = text;
    const view = which === 'x' ? this._xView : which === 'keys' ? this._keysView : this._wView;
    const p = view.cellCenter(cell.row, cell.col);
    this.showTooltip(p.x, p.y, [text.split(': ')[0], formatNumber(cell.value, 4)]);
  }

  // ---- exports -------------------------------------------------------------------------------

  getCSV() {
    return kvCSV(this);
  }

  getJSON() {
    return kvJSON(this);
  }

  /**
   * x, the shown head's cached keys and the new query's weights as an SVG document, laid out as on
   * screen (vector cells, one path per colour level; the state in <metadata>).
   */
  toSVG(options = {}) {
    return kvSVG(this, options);
  }

  /** What printing replaces with the SVG figure (print.js): the panels. */
  printParts() {
    return [this._xCanvas.closest('.panels'), this._cachePanels];
  }

  pngCanvas() {
    const canvases = [this._xCanvas, ...(this.length ? [this._keysCanvas, this._wCanvas] : [])];
    const o = canvases[0].getBoundingClientRect();
    return composeCanvases(
      canvases.map((c) => {
        const r = c.getBoundingClientRect();
        return { canvas: c, x: r.left - o.left, y: r.top - o.top };
      }),
      themeOf(this).bgSolid,
    );
  }
}
