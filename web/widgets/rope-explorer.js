// <rope-explorer>: rotary position embeddings (RoPE), computed by the library's applyRotary.
//   (a) one frequency pair of a seeded query q, rotated to positions 0…p (a slider): the arrow at p,
//       a faint trail behind it, and k's pair at position 0 for reference;
//   (b) q·k against the relative offset δ = i − j (−32…32), one line per frequency pair (its share
//       of the dot product, from the rotated vectors) and the total;
//   (c) the total for absolute offsets 0, 100 and 1000: the same curve, with the largest difference.
// Positions: for δ the query sits at i and the key at j with i − j = δ and the earlier of the two at
// `offset` (RoPE positions cannot be negative), i.e. i = offset + max(δ, 0), j = offset + max(−δ, 0).
//
// Attributes: d (head size, even, default 8), base (10000), rotary-style half|interleaved (also read
//             from style="half|interleaved"), offset (0), seed (1: q, k = rows 0, 1 of seededNormal([2, d], seed)).
// Properties: d, base, rotaryStyle, offset, seed, pair, position, q, k, deltas, shown;
//             scores(offset) → Float32Array of the totals over δ; pairAngle(pair, position) → radians.
// Events: ready.
import { AwElement, h, withState } from './base-element.js';
import { SERIES_COLORS } from './charts.js';
import { composeCanvases, jsonText } from './export.js';
import { formatNumber, themeOf } from './draw-util.js';
import { attn } from './runtime.js';
import { canvasLayoutSVG, xyPart } from './svg-layout.js';
import { drawPlane, pairDims, planeSVG } from './rope-explorer-plane.js';
import { COMPARE, SPAN, drawCompare, drawLines } from './rope-explorer-charts.js';

const MAX_POS = 256; // the position slider's range
const STYLES = ['half', 'interleaved'];

const ROPE_CSS = `
.controls { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; margin: 0 0 10px; font-size: 13px; }
.controls label { display: inline-flex; align-items: center; gap: 6px; }
.controls input[type=number] { width: 6.5em; }
.controls input[type=range] { width: 200px; accent-color: var(--aw-accent, #b94a08); min-height: 0; padding: 0; border: 0; background: transparent; }
.controls output { font-family: var(--aw-mono, ui-monospace, Menlo, monospace); min-width: 4ch; }
.row { display: flex; flex-wrap: wrap; gap: 12px 18px; align-items: flex-start; }
.chart { margin-top: 12px; }
`;

const intAttr = (el, name, def, lo, hi) => {
  const n = Number(el.getAttribute(name) ?? def);
  return Number.isInteger(n) ? Math.min(hi, Math.max(lo, n)) : def;
};

export class RopeExplorer extends AwElement {
  static get ownAttributes() {
    return ['d', 'base', 'rotary-style', 'style', 'offset', 'seed'];
  }

  constructor() {
    super();
    this._pair = 0;
    this._position = 8;
    this._cache = new Map();
  }

  build() {
    this._pairSel = h('select', {
      onchange: () => {
        this.pair = Number(this._pairSel.value);
      },
    });
    this._styleSel = h(
      'select',
      {
        onchange: () => {
          this.rotaryStyle = this._styleSel.value;
        },
      },
      h('option', { value: 'half', text: 'half (GPT-NeoX, Llama)' }),
      h('option', { value: 'interleaved', text: 'interleaved (GPT-J, RoFormer)' }),
    );
    this._offsetIn = h('input', {
      type: 'number',
      min: '0',
      step: '1',
      onchange: () => {
        const v = Number(this._offsetIn.value);
        if (Number.isInteger(v) && v >= 0) this.offset = v;
      },
    });
    this._slider = h('input', {
      type: 'range',
      min: '0',
      max: String(MAX_POS),
      step: '1',
      oninput: () => {
        this.position = Number(this._slider.value);
      },
    });
    this._posOut = h('output', { 'aria-hidden': 'true' });
    this._plane = h('canvas', { role: 'img' });
    this._compare = h('canvas', { role: 'img', class: 'chart' });
    this._lines = h('canvas', { role: 'img', class: 'chart' });
    this._summary = h('p', { class: 'muted small' });
    this._readout = h('div', { class: 'readout', 'aria-live': 'polite' });
    this._diffOut = h('div', { class: 'readout' });
    this.shadowRoot.append(
      h('style', { text: ROPE_CSS }),
      h(
        'div',
        { class: 'bar' },
        h('span', { class: 'title', text: 'Rotary position embeddings (RoPE)' }),
        this.exportBar(),
      ),
      this._summary,
      ...this.baseParts(),
      h(
        'div',
        { class: 'controls' },
        h('label', {}, h('span', { text: 'Frequency pair' }), this._pairSel),
        h('label', {}, h('span', { text: 'Position of q' }), this._slider, this._posOut),
        h('label', {}, h('span', { text: 'Pairing' }), this._styleSel),
        h('label', {}, h('span', { text: 'Offset' }), this._offsetIn),
      ),
      h('div', { class: 'row' }, this._plane, this._compare),
      this._readout,
      this._lines,
      this._diffOut,
    );
  }

  get d() {
    return intAttr(this, 'd', 8, 2, 128);
  }
  set d(v) {
    this.setAttribute('d', String(v));
  }
  get base() {
    const b = Number(this.getAttribute('base') ?? 10000);
    return Number.isFinite(b) && b > 1 ? b : 10000;
  }
  set base(v) {
    this.setAttribute('base', String(v));
  }
  /** 'half' or 'interleaved' (attribute rotary-style, or style="half|interleaved"). */
  get rotaryStyle() {
    const s = (
      this.getAttribute('rotary-style') ??
      (STYLES.includes(this.getAttribute('style')?.trim()) ? this.getAttribute('style').trim() : 'half')
    ).trim();
    return STYLES.includes(s) ? s : 'half';
  }
  set rotaryStyle(v) {
    this.setAttribute('rotary-style', String(v));
  }
  get offset() {
    return intAttr(this, 'offset', 0, 0, 1_000_000);
  }
  set offset(v) {
    this.setAttribute('offset', String(v));
  }
  get seed() {
    return intAttr(this, 'seed', 1, 0, 2 ** 31 - 1);
  }
  set seed(v) {
    this.setAttribute('seed', String(v));
  }
  /** The frequency pair drawn in the plane (0 … d/2 − 1). */
  get pair() {
    return Math.min(this._pair, Math.floor(this.d / 2) - 1);
  }
  set pair(v) {
    this._pair = Math.max(0, Math.floor(Number(v) || 0));
    this.schedule();
  }
  /** The state: attributes (d, base, rotary-style, offset, seed), the pair and q's position in the plane. */
  extraState() {
    return { rotaryStyle: this.rotaryStyle, pair: this._pair, position: this._position };
  }
  applyExtraState(s) {
    if (s.rotaryStyle && s.rotaryStyle !== this.rotaryStyle)
      this.setAttribute('rotary-style', String(s.rotaryStyle)); // (from a legacy style="…")
    this._pair = Math.max(0, Math.floor(Number(s.pair) || 0));
    this._position = Math.min(MAX_POS, Math.max(0, Math.round(Number(s.position ?? 8) || 0)));
  }

  /** q's position in the plane (0 … 256). */
  get position() {
    return this._position;
  }
  set position(v) {
    this._position = Math.min(MAX_POS, Math.max(0, Math.round(Number(v) || 0)));
    if (this._shown) drawPlane(this);
  }
  /** The seeded query and key (before rotation). */
  get q() {
    return this._shown ? this._shown.q.slice() : null;
  }
  get k() {
    return this._shown ? this._shown.k.slice() : null;
  }
  /** The relative offsets δ of the charts: −32 … 32. */
  get deltas() {
    return Array.from({ length: 2 * SPAN + 1 }, (_, i) => i - SPAN);
  }
  get shown() {
    return this._shown || null;
  }

  /** `n` copies of vec rotated by applyRotary: row t at position offset + t. */
  #rotatedRows(vec, n, offset) {
    const d = vec.length,
      x = new Float32Array(n * d);
    for (let t = 0; t < n; t++) x.set(vec, t * d);
    return attn.applyRotary(new attn.Tensor(x, [n, d]), { base: this.base, style: this.rotaryStyle, offset })
      .data; // (n, d)
  }

  /** { total: Float32Array(65), pairs: Float64Array[] } for an absolute offset. */
  #scoresAt(offset) {
    const s = this._shown;
    const key = `${s.key}|${offset}`;
    if (this._cache.has(key)) return this._cache.get(key);
    const d = s.d,
      P = d / 2,
      n = SPAN + 1;
    const Rq = this.#rotatedRows(s.q, n, offset),
      Rk = this.#rotatedRows(s.k, n, offset); // (33, d) each
    const total = new Float32Array(2 * SPAN + 1),
      pairs = Array.from({ length: P }, () => new Float64Array(2 * SPAN + 1));
    for (let t = 0; t <= 2 * SPAN; t++) {
      const delta = t - SPAN,
        i = Math.max(delta, 0),
        j = Math.max(-delta, 0);
      let sum = 0;
      for (let p = 0; p < P; p++) {
        const [a, b] = pairDims(this.rotaryStyle, p, d);
        const c = Rq[i * d + a] * Rk[j * d + a] + Rq[i * d + b] * Rk[j * d + b];
        pairs[p][t] = c;
        sum += c;
      }
      total[t] = sum;
    }
    const out = { total, pairs };
    this._cache.set(key, out);
    return out;
  }

  /** The total q·k over δ = −32…32 with the earlier position at `offset` (default: the attribute). */
  scores(offset = this.offset) {
    if (!this._shown) return null;
    if (!Number.isInteger(offset) || offset < 0)
      throw new RangeError(`offset must be an integer >= 0, got ${offset}`);
    return this.#scoresAt(offset).total.slice();
  }

  /** The angle (radians, atan2) of q's frequency pair `pair` after the library rotates q to `position`. */
  pairAngle(pair, position) {
    if (!this._shown) return null;
    const d = this._shown.d;
    if (!Number.isInteger(pair) || pair < 0 || pair >= d / 2)
      throw new RangeError(`pair must be an integer in [0, ${d / 2 - 1}], got ${pair}`);
    const r = this.#rotatedRows(this._shown.q, 1, position);
    const [a, b] = pairDims(this.rotaryStyle, pair, d);
    return Math.atan2(r[b], r[a]);
  }

  render() {
    const d = this.d,
      base = this.base,
      style = this.rotaryStyle,
      seed = this.seed,
      offset = this.offset;
    let qk, plane, kPlane;
    try {
      if (d % 2) throw new Error(`d must be even (RoPE rotates pairs of features), got ${d}`);
      qk = attn.seededNormal([2, d], seed).data; // (2, d): q, k
      plane = this.#rotatedRows(qk.subarray(0, d), MAX_POS + 1, 0);
      kPlane = this.#rotatedRows(qk.subarray(d), 1, 0);
    } catch (e) {
      this.showError(e.message);
      this._shown = null;
      return;
    }
    this.showError('');
    const key = `${d}|${base}|${style}|${seed}`;
    if (this._shown?.key !== key) this._cache.clear();
    this._shown = {
      key,
      d,
      base,
      style,
      seed,
      offset,
      q: Float32Array.from(qk.subarray(0, d)),
      k: Float32Array.from(qk.subarray(d)),
      plane,
      kPlane,
    };
    const cur = this.#scoresAt(offset),
      cmp = COMPARE.map((o) => this.#scoresAt(o).total);
    let maxDiff = 0;
    for (const c of cmp.slice(1))
      for (let t = 0; t < c.length; t++) maxDiff = Math.max(maxDiff, Math.abs(c[t] - cmp[0][t]));
    Object.assign(this._shown, { scores: cur, compare: cmp, maxDiff });
    this.dataset.maxDifference = maxDiff.toExponential(2);
    this.#syncControls(d, style, offset);
    this._summary.textContent =
      `q and k: ${d} features drawn with seededNormal (seed ${seed}), rotated by applyRotary (base ${base}, ${style} pairing): ` +
      `pair p turns by θ_p = ${base}^(−2p/${d}) radians per position. Only the relative offset i − j changes q·k.`;
    const W = this.contentWidth,
      side = Math.min(280, W);
    this._planeSize = side;
    drawPlane(this);
    drawLines(this, Math.min(W, 900));
    drawCompare(this, W >= side + 260 ? Math.min(620, W - side - 18) : W);
  }

  #syncControls(d, style, offset) {
    const P = d / 2;
    if (
      this._pairSel.options.length !== P ||
      this._pairSel.dataset.style !== style ||
      this._pairSel.dataset.d !== String(d)
    ) {
      this._pairSel.replaceChildren(
        ...Array.from({ length: P }, (_, p) => {
          const [a, b] = pairDims(this.rotaryStyle, p, d);
          return h('option', {
            value: String(p),
            text: `${p}: dims ${a}, ${b} · θ = ${formatNumber(this.base ** ((-2 * p) / d), 4)}`,
          });
        }),
      );
      Object.assign(this._pairSel.dataset, { style, d: String(d) });
    }
    this._pairSel.value = String(this.pair);
    this._styleSel.value = style;
    if (this.shadowRoot.activeElement !== this._offsetIn) this._offsetIn.value = String(offset);
  }

  getCSV() {
    const s = this._shown;
    if (!s) return '';
    const P = s.d / 2;
    const lines = [
      [
        'delta',
        ...Array.from({ length: P }, (_, p) => `pair_${p}`),
        'total',
        ...COMPARE.map((o) => `total_offset_${o}`),
      ].join(','),
    ];
    this.deltas.forEach((x, t) =>
      lines.push(
        [x, ...s.scores.pairs.map((c) => c[t]), s.scores.total[t], ...s.compare.map((c) => c[t])].join(','),
      ),
    );
    return lines.join('\n') + '\n';
  }

  getJSON() {
    const s = this._shown;
    return jsonText(
      withState(
        this,
        s
          ? {
              kind: 'rope',
              d: s.d,
              base: s.base,
              style: s.style,
              offset: s.offset,
              seed: s.seed,
              q: Array.from(s.q),
              k: Array.from(s.k),
              deltas: this.deltas,
              pairs: s.scores.pairs.map((c) => Array.from(c)),
              total: Array.from(s.scores.total),
              offsets: Object.fromEntries(COMPARE.map((o, i) => [o, Array.from(s.compare[i])])),
              maxDifference: s.maxDiff,
            }
          : null,
      ),
    );
  }

  /**
   * The plane, the comparison and the per-pair chart as an SVG document, laid out as on screen (vector
   * arrows, trail and polylines; the scores and the state in <metadata>).
   */
  toSVG(options = {}) {
    const s = this._shown;
    if (!s || !this._linesOpts) throw new Error('toSVG: nothing is drawn yet (wait for the ready event)');
    return canvasLayoutSVG(
      this,
      themeOf(this),
      [
        { canvas: this._plane, draw: (fig, x, y) => planeSVG(this, fig, x, y) },
        xyPart(this._compare, this._compareOpts, SERIES_COLORS),
        xyPart(this._lines, this._linesOpts, SERIES_COLORS),
      ],
      {
        width: options.width,
        fontSize: options.fontSize,
        title: `RoPE, d = ${s.d}, base ${s.base}, ${s.style} pairing: pair ${this.pair} at position ${this.position}, and q·k against the relative offset`,
        state: {
          widget: 'rope-explorer',
          d: s.d,
          base: s.base,
          style: s.style,
          seed: s.seed,
          offset: s.offset,
          pair: this.pair,
          position: this.position,
          deltas: this.deltas,
          total: s.scores.total,
          maxDifference: s.maxDiff,
          widgetState: this.state,
        },
      },
    );
  }

  /** What printing replaces with the SVG figure (print.js): the plane, the charts. */
  printParts() {
    return [this._plane.parentElement, this._lines];
  }

  pngCanvas() {
    const o = this._plane.getBoundingClientRect(),
      at = (cv) => {
        const r = cv.getBoundingClientRect();
        return { canvas: cv, x: r.left - o.left, y: r.top - o.top };
      };
    return composeCanvases([at(this._plane), at(this._compare), at(this._lines)], themeOf(this).bgSolid);
  }
}
