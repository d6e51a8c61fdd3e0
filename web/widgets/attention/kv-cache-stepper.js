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
//
// Its parts, each a whole: kv-cache-stepper-state.js (KvCacheSession: the module, the cache, x and
// the steps), -draw.js (what one state draws, as plain values), -view.js (KvStepperView: the layout
// and the three HeatmapViews), -controls.js (KvStepperControls: the buttons and the head picker; the
// words of a hovered cell), -export.js (CSV, JSON, SVG, PNG). This element owns one of each and
// passes them what they need.
import { AwElement } from '../base-element.js';
import { formatNumber } from '../figures/draw-util.js';
import { isReady } from '../runtime.js';
import { divergingName } from '../figures/colormap.js';
import { KvCacheSession } from './kv-cache-stepper-state.js';
import { KvStepperControls, cellText, runDelay } from './kv-cache-stepper-controls.js';
import { KvStepperView } from './kv-cache-stepper-view.js';
import { headChoices, invalidText, statusText } from './kv-cache-stepper-draw.js';
import { kvCSV, kvJSON, kvPNGCanvas, kvSVG } from './kv-cache-stepper-export.js';

export class KvCacheStepper extends AwElement {
  #kvHead = 0;
  #session = null; // the KvCacheSession of the current attributes (module, cache, x, steps), or null
  #run = null; // the Run all in progress
  #controls = null; // built in build()
  #view = null;

  static attributes = {
    'embed-dim': { type: 'int', default: 16, min: 1, max: 256 },
    heads: { type: 'int', default: 4, min: 1, max: 32 },
    'kv-heads': { type: 'int', default: 2, min: 1, max: 32 },
    rope: { type: 'boolean', default: true },
    // Tokens in x (1…64); its property is sequenceLength (the property `length` is the cache's length).
    length: { type: 'int', default: 10, min: 1, max: 64, property: 'sequenceLength' },
    seed: { type: 'int', default: 1, min: 0, max: 2 ** 31 - 2 },
    // The weights' colour map, on screen and in exports: 'viridis' (default) | 'cividis' | 'gray'.
    palette: { type: 'palette' },
    // The signed views' (x, the cached keys) map: 'blue-orange' (default) | 'red-blue'.
    diverging: { type: 'diverging' },
  };

  build() {
    this.#controls = new KvStepperControls({
      onStep: () => {
        this.#stop();
        this.step();
      },
      onRun: () => {
        this.runAll();
      },
      onReset: () => {
        this.#stop();
        this.reset();
      },
      onHead: (g) => {
        this.kvHead = g;
      },
    });
    this.#view = new KvStepperView(this, this.#controls.element(), (which, c) => this.#hover(which, c));
    this.shadowRoot.append(...this.#view.layout(this.exportBar(), this.baseParts()));
  }

  // ---- state ---------------------------------------------------------------------------------

  /** Tokens in the cache now (read-only). */
  get length() {
    return this.#session ? this.#session.length : 0;
  }
  /** Every stepped output row so far, (length, E) row-major. */
  get outputs() {
    return this.#session ? this.#session.outputs : new Float32Array(0);
  }
  /** The input sequence x, (T, E) row-major. */
  get x() {
    return this.#session ? this.#session.config.x.slice() : null;
  }
  /** The last step's weights, (H, length) row-major; null before the first step. */
  get weights() {
    const st = this.#session?.lastStep;
    return st ? st.weights.slice() : null;
  }
  /** The shown key/value head's cached keys, (length, d_k) row-major; null before the first step. */
  get keys() {
    return this.#session?.stepCount ? this.#session.headKeys(this.#kvHead) : null;
  }
  /** The key/value head whose keys are shown. */
  get kvHead() {
    return this.#session ? Math.min(this.#kvHead, this.#session.config.Hkv - 1) : this.#kvHead;
  }
  set kvHead(v) {
    this.#kvHead = Math.max(0, Math.floor(Number(v) || 0));
    if (this.#session) this.#draw();
  }
  /** The state: attributes (embed-dim, heads, kv-heads, rope, length, seed), tokens stepped so far, the key/value head shown. */
  extraState() {
    return { stepped: this.length, kvHead: this.#kvHead };
  }
  applyExtraState(s) {
    this.#kvHead = Math.max(0, Math.floor(Number(s.kvHead) || 0));
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
    return this.#session ? this.#session.maxDifference : 0;
  }
  get shown() {
    const s = this.#session?.config;
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
    this.#session?.dispose();
    this.#session = null;
  }

  /** The session for the current attributes; rebuilt (from an empty cache) when they change. */
  #ensure() {
    const settings = {
      E: this.embedDim,
      H: this.heads,
      Hkv: this.kvHeads,
      rope: this.rope,
      T: this.sequenceLength,
      seed: this.seed,
    };
    if (this.#session?.config.key === KvCacheSession.keyOf(settings)) return true;
    this.#stop();
    this.#free();
    try {
      this.#session = new KvCacheSession(settings);
    } catch (e) {
      this.showError(e.message);
      return false;
    }
    return true;
  }

  /**
   * Feeds the next token of x through the cache. Returns { position, output, weights } (weights (H, t)),
   * or null when every token has been fed (or the widget has no valid module).
   */
  step() {
    if (!isReady() || !this.isConnected || !this.#ensure()) return null;
    const r = this.#session.step();
    if (!r) return null;
    this.#draw();
    this.emit('kv-step', { length: this.length, position: r.position, maxDifference: r.diff });
    return { position: r.position, output: r.output.slice(), weights: r.weights.slice() };
  }

  /** Steps until x is used up, one step every ~140 ms (at once with prefers-reduced-motion). */
  async runAll() {
    const run = {};
    this.#run = run;
    this.#syncButtons();
    const delay = runDelay();
    while (this.#run === run && this.step()) {
      if (delay) await new Promise((r) => setTimeout(r, delay));
    }
    if (this.#run === run) {
      this.#run = null;
      this.#syncButtons();
    }
  }

  /** Stops a Run all in progress. */
  #stop() {
    if (this.#run) {
      this.#run = null;
      if (this.#controls) this.#syncButtons();
    }
  }

  /** Empties the cache (cache.reset()): the next step feeds token 0 again. */
  reset() {
    this.#session?.reset();
    if (this.#session) this.#draw();
    this.emit('kv-step', { length: this.length, position: -1, maxDifference: 0 });
  }

  /** One full causal forward (no cache) over the first `length` rows of x: its output, (length, E). */
  fullOutput() {
    return this.#session ? this.#session.fullOutput() : new Float32Array(0);
  }

  // ---- drawing -------------------------------------------------------------------------------

  render() {
    if (!this.#ensure()) {
      this.#view.showInvalid(
        invalidText({ heads: this.heads, kvHeads: this.kvHeads, embedDim: this.embedDim }),
      );
      return;
    }
    this.showError('');
    this.#view.showValid();
    this.#draw();
  }

  /** Enables the buttons that apply: Step and Run all while x has tokens left, Reset once a step was made. */
  #syncButtons() {
    const s = this.#session?.config,
      full = !s || this.length >= s.T;
    this.#controls.sync({ full, running: Boolean(this.#run), empty: !s || this.length === 0 });
  }

  /** Draws the session: the dataset, the controls, x, and (after the first step) the cache and the new weights. */
  #draw() {
    const session = this.#session,
      s = session.config,
      t = this.length,
      g = this.kvHead;
    this.dataset.length = String(t);
    this.dataset.maxDifference = this.maxDifference.toExponential(2);
    this.#syncButtons();
    this.#controls.showHeads(headChoices(s), g);
    this.#controls.status = statusText(s, t);
    this.#view.draw({
      s,
      t,
      g,
      W: this.contentWidth,
      keys: t ? session.headKeys(g) : null,
      last: session.lastStep,
      maxDifference: session.maxDifference,
      diverging: divergingName(this.getAttribute('diverging')),
      palette: this.palette,
    });
  }

  #hover(which, cell) {
    if (!cell) {
      this.showTooltip(0, 0, null);
      return;
    }
    const text = cellText(which, cell, {
      s: this.#session.config,
      length: this.length,
      kvHead: this.kvHead,
    });
    this.#view.readout = text;
    const p = this.#view.cellCenter(which, cell.row, cell.col);
    this.showTooltip(p.x, p.y, [text.split(': ')[0], formatNumber(cell.value, 4)]);
  }

  // ---- exports -------------------------------------------------------------------------------

  getCSV() {
    return kvCSV(this.#session);
  }

  getJSON() {
    return kvJSON(this, this.#session, this.kvHead);
  }

  /**
   * x, the shown head's cached keys and the new query's weights as an SVG document, laid out as on
   * screen (vector cells, one path per colour level; the state in <metadata>).
   */
  toSVG(options = {}) {
    return kvSVG(this, this.#session, { heatmaps: this.#view?.heatmaps, kvHead: this.kvHead }, options);
  }

  /** What printing replaces with the SVG figure (print.js): the panels. */
  printParts() {
    return this.#view.printParts();
  }

  pngCanvas() {
    return kvPNGCanvas(this, this.#view.heatmaps, this.length > 0);
  }
}
