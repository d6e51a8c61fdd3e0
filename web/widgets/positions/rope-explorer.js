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
import { AwElement, h, withState } from '../base-element.js';
import { SERIES_COLORS } from '../figures/charts.js';
import { composeCanvases, jsonText } from '../export.js';
import { formatNumber, themeOf } from '../figures/draw-util.js';
import { pairColors } from '../figures/xy-chart.js';
import { canvasLayoutSVG, xyPart } from '../figures/svg-layout.js';
import { drawPlane, planeFrame, planeSVG } from './rope-explorer-plane.js';
import { compareChart, drawChart, linesChart } from './rope-explorer-charts.js';
import { ropeCSV, ropeRecord } from './rope-explorer-export.js';
import {
  COMPARE,
  MAX_POS,
  RopeScores,
  SPAN,
  maxDifference,
  pairDims,
  ropeSetting,
  rotatedRows,
} from './rope-explorer-data.js';

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

export class RopeExplorer extends AwElement {
  /** The scores shown and compared, kept per setting and offset. */
  #scores = new RopeScores();

  static attributes = {
    d: { type: 'int', default: 8, min: 2, max: 128 },
    base: { type: 'number', default: 10000, above: 1 },
    'rotary-style': { property: false }, // rotary-style and style: rotaryStyle below
    style: { property: false }, // a legacy style="half|interleaved" (the property is HTMLElement's)
    offset: { type: 'int', default: 0, min: 0, max: 1_000_000 },
    seed: { type: 'int', default: 1, min: 0, max: 2 ** 31 - 1 },
  };

  constructor() {
    super();
    this._pair = 0;
    this._position = 8;
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
    if (this._shown) this.#drawPlane();
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

  /** How q and k are rotated now: the base and pairing attributes. */
  #rotation() {
    return { base: this.base, style: this.rotaryStyle };
  }

  /** { total: Float32Array(65), pairs: Float64Array[] } for an absolute offset. */
  #scoresAt(offset) {
    return this.#scores.at(this._shown, offset, this.#rotation());
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
    const r = rotatedRows(this._shown.q, 1, position, this.#rotation());
    const [a, b] = pairDims(this.rotaryStyle, pair, d);
    return Math.atan2(r[b], r[a]);
  }

  render() {
    const d = this.d,
      base = this.base,
      style = this.rotaryStyle,
      seed = this.seed,
      offset = this.offset;
    let shown;
    try {
      shown = ropeSetting({ d, base, style, seed, offset });
    } catch (e) {
      this.showError(e.message);
      this._shown = null;
      return;
    }
    this.showError('');
    if (this._shown?.key !== shown.key) this.#scores.clear();
    this._shown = shown;
    const cur = this.#scoresAt(offset),
      cmp = COMPARE.map((o) => this.#scoresAt(o).total);
    const maxDiff = maxDifference(cmp);
    Object.assign(this._shown, { scores: cur, compare: cmp, maxDiff });
    this.dataset.maxDifference = maxDiff.toExponential(2);
    this.#syncControls(d, style, offset);
    this._summary.textContent =
      `q and k: ${d} features drawn with seededNormal (seed ${seed}), rotated by applyRotary (base ${base}, ${style} pairing): ` +
      `pair p turns by θ_p = ${base}^(−2p/${d}) radians per position. Only the relative offset i − j changes q·k.`;
    const W = this.contentWidth,
      side = Math.min(280, W);
    this._planeSize = side;
    this.#drawPlane();
    this.#drawCharts(Math.min(W, 900), W >= side + 260 ? Math.min(620, W - side - 18) : W);
  }

  /** The plane's frame (rope-explorer-plane.js): the setting shown, the pair and position, the size. */
  #planeFrame() {
    const view = {
      shown: this._shown,
      pair: this.pair,
      position: this.position,
      style: this.rotaryStyle,
      size: this._planeSize || 280,
    };
    return planeFrame(view, themeOf(this), pairColors(this));
  }

  /** (a) The plane, the position slider's value and the readout on the pair. */
  #drawPlane() {
    const f = this.#planeFrame();
    const words = drawPlane(this._plane, f);
    if (this.shadowRoot.activeElement !== this._slider) this._slider.value = String(f.pos);
    this._posOut.textContent = String(f.pos);
    this._readout.replaceChildren(
      h('span', { text: words.turn }),
      h('span', { class: 'terms', text: words.share }),
    );
  }

  /** (b) the per-pair chart, `linesWidth` wide, and (c) the comparison, `compareWidth` wide. */
  #drawCharts(linesWidth, compareWidth) {
    const s = this._shown,
      deltas = this.deltas,
      fg = themeOf(this).fg;
    const lines = linesChart({ shown: s, pair: this.pair, deltas, fg, host: this, width: linesWidth });
    this._linesOpts = drawChart(this._lines, lines);
    const height = this._planeSize || 280;
    const compare = compareChart({ shown: s, deltas, fg, host: this, width: compareWidth, height });
    this._compareOpts = drawChart(this._compare, compare);
    this._diffOut.textContent = compare.note;
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
    return this._shown ? ropeCSV(this._shown, this.deltas) : '';
  }

  getJSON() {
    return jsonText(withState(this, this._shown ? ropeRecord(this._shown, this.deltas) : null));
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
        { canvas: this._plane, draw: (fig, x, y) => planeSVG(this.#planeFrame(), fig, x, y) },
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
