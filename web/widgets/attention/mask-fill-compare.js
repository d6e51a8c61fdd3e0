// <mask-fill-compare>: one query row, a few keys, and two ways to mask them, side by side, both
// computed by the library's scaledDotProductAttention:
//   left   a boolean mask (1 = may attend): masked scores become −∞; a row with every key masked
//          gets all-zero weights and a zero output row (this library's rule, never NaN);
//   right  the usual additive fill of −1e9: identical while one key is allowed, but a fully masked
//          row gets uniform weights 1/n — an average of the very keys it was told to ignore.
// The scores are the query itself: q = scores (1, n) against K = I (n, n) with scale 1.
//
// Attributes: scores="2,0.5,-1,1.2"  masked="3" (indices, comma-separated; "all" or "" allowed)
//             labels="the,cat,sat,<pad>"  values="x,y; …" (one value vector per key)
// Properties: scores, masked (number[]), labels, values, result { booleanWeights, fillWeights,
//             booleanOutput, fillOutput }, toggle(index), maskAll(), unmaskAll().
// Events: masked-change { masked, result } after every user change; ready.
import { AwElement, h, withState } from '../base-element.js';
import { drawBars } from '../figures/charts.js';
import { composeCanvases, jsonText } from '../export.js';
import { exactNumber, formatNumber, themeOf } from '../figures/draw-util.js';
import { attn } from '../runtime.js';
import { pairColors, parseNumberList, parseVectors } from '../figures/xy-chart.js';
import { barsPart, canvasLayoutSVG } from '../figures/svg-layout.js';

const FILL = -1e9;
const DEFAULTS = {
  scores: '2,0.5,-1,1.2',
  masked: '3',
  labels: 'the,cat,sat,<pad>',
  values: '1,0; 0,1; 1,1; -1,2',
};

const MF_CSS = `
.keys { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin: 2px 0 10px; }
.keys button[aria-pressed="true"] { background: repeating-linear-gradient(135deg, color-mix(in srgb, currentColor 14%, transparent) 0 3px, transparent 3px 6px);
  color: inherit; border-color: color-mix(in srgb, currentColor 40%, transparent); text-decoration: line-through; }
.keys .sep { width: 10px; }
.panels { display: flex; flex-wrap: wrap; gap: 12px 18px; }
.panel { flex: 1 1 300px; min-width: 0; }
.panel h3 { margin: 0 0 2px; font-size: 13px; font-weight: 650; }
.panel p { margin: 0 0 6px; font-size: 12.5px; }
table { border-collapse: collapse; margin-top: 10px; font-size: 13px; font-variant-numeric: tabular-nums; width: 100%; }
th, td { padding: 4px 8px; border-bottom: 1px solid color-mix(in srgb, currentColor 12%, transparent); text-align: right; white-space: nowrap; }
th { font-size: 12px; font-weight: 600; color: var(--aw-muted, color-mix(in srgb, currentColor 62%, transparent)); }
th:first-child, td:first-child { text-align: left; }
td.lib { color: var(--lib); font-weight: 600; } td.fill { color: var(--fill); font-weight: 600; }
tfoot td { border-bottom: 0; }
`;

export class MaskFillCompare extends AwElement {
  // Lists, read below: scores (all numbers, else an error), and per score a label, a value vector and
  // whether it is masked, so their reading depends on the scores.
  static attributes = {
    scores: { property: false },
    masked: { property: false },
    labels: { property: false },
    values: { property: false },
  };

  build() {
    this._keys = h('div', { class: 'keys', role: 'group', 'aria-label': 'Keys: press to mask or unmask' });
    this._libCanvas = h('canvas', { role: 'img' });
    this._fillCanvas = h('canvas', { role: 'img' });
    this._table = h('table');
    this._readout = h('div', { class: 'readout', 'aria-live': 'polite' });
    this.shadowRoot.append(
      h('style', { text: MF_CSS }),
      h(
        'div',
        { class: 'bar' },
        h('span', { class: 'title', text: 'Masking with −∞ versus a −1e9 fill' }),
        this.exportBar(),
      ),
      ...this.baseParts(),
      this._keys,
      h(
        'div',
        { class: 'panels' },
        h(
          'div',
          { class: 'panel' },
          h('h3', { text: 'This library: boolean mask, scores → −∞' }),
          h('p', { class: 'muted', text: 'A row with no key left gets weights 0 and an output of 0.' }),
          this._libCanvas,
        ),
        h(
          'div',
          { class: 'panel' },
          h('h3', { text: 'The usual fill: add −1e9 to masked scores' }),
          h('p', { class: 'muted', text: 'A row with no key left gets 1/n on every (masked) key.' }),
          this._fillCanvas,
        ),
      ),
      h(
        'div',
        { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': 'Comparison table' },
        this._table,
      ),
      this._readout,
    );
  }

  get scores() {
    return parseNumberList(this.getAttribute('scores') ?? DEFAULTS.scores, 'scores');
  }
  set scores(v) {
    this.setAttribute('scores', Array.isArray(v) ? v.join(',') : String(v));
  }
  get labels() {
    const given = (this.getAttribute('labels') ?? DEFAULTS.labels).split(',').map((s) => s.trim());
    let n = 4;
    try {
      n = this.scores.length;
    } catch {
      /* reported by render */
    }
    return Array.from({ length: n }, (_, j) => given[j] || `k${j}`);
  }
  set labels(v) {
    this.setAttribute('labels', Array.isArray(v) ? v.join(',') : String(v));
  }
  get values() {
    if (this.hasAttribute('values')) return parseVectors(this.getAttribute('values'), 'values');
    const n = this.scores.length;
    const def = parseVectors(DEFAULTS.values, 'values');
    return Array.from({ length: n }, (_, j) => def[j % def.length]);
  }
  set values(v) {
    this.setAttribute('values', Array.isArray(v) ? v.map((r) => r.join(',')).join(';') : String(v));
  }

  /** Indices of the masked keys. */
  get masked() {
    const raw = (this.getAttribute('masked') ?? DEFAULTS.masked).trim();
    let n = 0;
    try {
      n = this.scores.length;
    } catch {
      return [];
    }
    if (raw === 'all') return Array.from({ length: n }, (_, j) => j);
    return [
      ...new Set(
        raw
          .split(/[\s,]+/)
          .filter(Boolean)
          .map(Number),
      ),
    ]
      .filter((j) => Number.isInteger(j) && j >= 0 && j < n)
      .sort((a, b) => a - b);
  }
  set masked(v) {
    this.setAttribute('masked', Array.isArray(v) ? v.join(',') : String(v));
  }

  /** What is shown: { scores, masked, booleanWeights, fillWeights, booleanOutput, fillOutput }. */
  get result() {
    return this._shown ? structuredClone(this._shown.result) : null;
  }

  toggle(j) {
    const m = this.masked;
    this.#change(m.includes(j) ? m.filter((x) => x !== j) : [...m, j]);
  }
  maskAll() {
    this.#change(this.scores.map((_, j) => j));
  }
  unmaskAll() {
    this.#change([]);
  }

  #change(masked) {
    this.masked = masked.sort((a, b) => a - b);
    this.refresh();
    if (this._shown) this.emit('masked-change', { masked: this.masked, result: this.result });
  }

  render() {
    let s, V, labels;
    try {
      s = this.scores;
      V = this.values;
      labels = this.labels;
      if (s.length < 1 || s.length > 16) throw new Error(`scores: give 1 to 16 numbers, got ${s.length}`);
      if (V.length !== s.length)
        throw new Error(`${s.length} scores but ${V.length} values: give one value per key`);
    } catch (e) {
      this.showError(e.message);
      return;
    }
    this.showError('');
    const n = s.length,
      dv = V[0].length,
      masked = this.masked;
    // 1. q = the scores, K = I, so q·k_j = s_j exactly; scale 1 keeps them unchanged.
    const eye = new Float32Array(n * n); // (n, n) identity
    for (let j = 0; j < n; j++) eye[j * n + j] = 1;
    const q = new attn.Tensor(s, [1, n]),
      K = new attn.Tensor(eye, [n, n]),
      Vt = new attn.Tensor(V.flat(), [n, dv]);
    const allowed = new Uint8Array(n).fill(1); // (1, n): 1 = may attend
    const fill = new Float32Array(n); // (1, n): 0 or −1e9
    for (const j of masked) {
      allowed[j] = 0;
      fill[j] = FILL;
    }
    let lib, add;
    try {
      lib = attn.scaledDotProductAttention(q, K, Vt, { mask: new attn.Tensor(allowed, [1, n]), scale: 1 });
      add = attn.scaledDotProductAttention(q, K, Vt, {
        additiveMask: new attn.Tensor(fill, [1, n]),
        scale: 1,
      });
    } catch (e) {
      this.showError(e.message);
      return;
    }
    const result = {
      scores: s.slice(),
      masked: masked.slice(),
      booleanWeights: Array.from(lib.weights.data),
      fillWeights: Array.from(add.weights.data),
      booleanOutput: Array.from(lib.output.data),
      fillOutput: Array.from(add.output.data),
    };
    this._shown = { labels, V, allowed, result };
    this.dataset.booleanWeights = result.booleanWeights.map((w) => w.toFixed(4)).join(',');
    this.dataset.fillWeights = result.fillWeights.map((w) => w.toFixed(4)).join(',');
    this.dataset.allMasked = String(masked.length === n);
    this.#renderKeys(labels, allowed);
    this.#renderCharts();
    this.#renderTable();
    this.#renderReadout();
  }

  #renderKeys(labels, allowed) {
    if (this._keys.children.length !== labels.length + 3) {
      this._keys.replaceChildren(
        ...labels.map((_, j) =>
          h('button', { type: 'button', 'data-index': String(j), onclick: () => this.toggle(j) }),
        ),
        h('span', { class: 'sep' }),
        h('button', { type: 'button', text: 'Mask every key', onclick: () => this.maskAll() }),
        h('button', { type: 'button', text: 'Unmask all', onclick: () => this.unmaskAll() }),
      );
    }
    labels.forEach((l, j) => {
      const b = this._keys.children[j];
      b.textContent = l;
      b.setAttribute('aria-pressed', String(!allowed[j]));
      b.setAttribute(
        'aria-label',
        `Key “${l}”: ${allowed[j] ? 'may attend; press to mask it' : 'masked; press to let it attend'}`,
      );
    });
  }

  #renderCharts() {
    const { labels, result } = this._shown;
    const W = this.contentWidth;
    const half = W >= 640 ? Math.floor((W - 18) / 2) : W;
    const colors = pairColors(this);
    this._table.style.setProperty('--lib', colors.b);
    this._table.style.setProperty('--fill', colors.a);
    const marked = labels.map((l, j) => (result.masked.includes(j) ? `${l} ✕` : l));
    this._libOpts = {
      host: this,
      width: half,
      values: result.booleanWeights,
      labels: marked,
      maxValue: 1,
      color: colors.b,
    };
    this._fillOpts = {
      host: this,
      width: half,
      values: result.fillWeights,
      labels: marked,
      maxValue: 1,
      color: colors.a,
    };
    drawBars(this._libCanvas, this._libOpts);
    drawBars(this._fillCanvas, this._fillOpts);
    const say = (w) => w.map((x, j) => `${labels[j]} ${x.toFixed(4)}`).join(', ');
    this._libCanvas.setAttribute(
      'aria-label',
      `Weights with the boolean mask: ${say(result.booleanWeights)}.`,
    );
    this._fillCanvas.setAttribute('aria-label', `Weights with the −1e9 fill: ${say(result.fillWeights)}.`);
  }

  #renderTable() {
    const { labels, allowed, result } = this._shown;
    const vec = (v) => `(${v.map((x) => formatNumber(x, 3)).join(', ')})`;
    const head = h(
      'tr',
      {},
      ...['key', 'score', 'may attend', 'weight, −∞ (this library)', 'weight, −1e9 fill'].map((t) =>
        h('th', { scope: 'col', text: t }),
      ),
    );
    const rows = labels.map((l, j) =>
      h(
        'tr',
        {},
        h('td', { text: l }),
        h('td', { text: formatNumber(result.scores[j], 2) }),
        h('td', { text: allowed[j] ? 'yes' : 'no (masked)' }),
        h('td', {
          class: 'lib',
          text: result.booleanWeights[j].toFixed(4),
          title: exactNumber(result.booleanWeights[j]),
        }),
        h('td', {
          class: 'fill',
          text: result.fillWeights[j].toFixed(4),
          title: exactNumber(result.fillWeights[j]),
        }),
      ),
    );
    const sum = (w) => w.reduce((a, b) => a + b, 0).toFixed(4);
    this._table.replaceChildren(
      h('thead', {}, head),
      h('tbody', {}, ...rows),
      h(
        'tfoot',
        {},
        h(
          'tr',
          {},
          h('td', { text: 'row sum' }),
          h('td'),
          h('td'),
          h('td', { class: 'lib', text: sum(result.booleanWeights) }),
          h('td', { class: 'fill', text: sum(result.fillWeights) }),
        ),
        h(
          'tr',
          {},
          h('td', { text: 'output = Σ w·v' }),
          h('td'),
          h('td'),
          h('td', { class: 'lib', text: vec(result.booleanOutput) }),
          h('td', { class: 'fill', text: vec(result.fillOutput) }),
        ),
      ),
    );
  }

  #renderReadout() {
    const { labels, result } = this._shown;
    const n = labels.length,
      m = result.masked.length;
    let main, detail;
    if (m === n) {
      main =
        `Every key is masked. This library: all weights 0, output (${result.booleanOutput.map((x) => formatNumber(x, 3)).join(', ')}). ` +
        `The −1e9 fill: every weight ${formatNumber(1 / n, 4)}, output (${result.fillOutput.map((x) => formatNumber(x, 3)).join(', ')}), the plain average of the values.`;
      detail =
        'With −1e9 every masked score is about −1e9, so they are all equal and softmax spreads the weight evenly. Exact −∞ would be 0/0 = NaN; this library defines that row as zeros instead.';
    } else if (m === 0) {
      main = 'Nothing is masked: both columns are the same softmax of the scores.';
      detail = 'Press a key above to mask it, or “Mask every key” to see where the two rules part ways.';
    } else {
      main = `${m} of ${n} keys masked. Both rules agree: the masked keys get exactly 0 and the others share the weight.`;
      detail =
        'e^(−1e9) underflows to 0 in float32, so −1e9 behaves like −∞ — as long as at least one key is left.';
    }
    this._readout.replaceChildren(h('span', { text: main }), h('span', { class: 'terms', text: detail }));
  }

  getCSV() {
    const s = this._shown;
    if (!s) return '';
    const lines = ['key,label,score,may_attend,weight_boolean_mask,weight_fill_1e9'];
    s.labels.forEach((l, j) =>
      lines.push(
        [
          j,
          JSON.stringify(l),
          s.result.scores[j],
          s.allowed[j],
          s.result.booleanWeights[j],
          s.result.fillWeights[j],
        ].join(','),
      ),
    );
    return lines.join('\n') + '\n';
  }

  getJSON() {
    return jsonText(
      withState(
        this,
        this._shown
          ? {
              kind: 'mask-fill-compare',
              labels: this._shown.labels,
              values: this._shown.V,
              ...this._shown.result,
            }
          : null,
      ),
    );
  }

  /** The two weight charts as an SVG document, laid out as on screen with their headings (vector bars; the state in <metadata>). */
  toSVG(options = {}) {
    const s = this._shown;
    if (!s || !this._libOpts) throw new Error('toSVG: nothing is drawn yet (wait for the ready event)');
    const n = s.labels.length,
      m = s.result.masked.length;
    return canvasLayoutSVG(
      this,
      themeOf(this),
      [
        barsPart(this._libCanvas, this._libOpts, 'This library: boolean mask, scores → −∞'),
        barsPart(this._fillCanvas, this._fillOpts, 'The usual fill: add −1e9 to masked scores'),
      ],
      {
        width: options.width,
        fontSize: options.fontSize,
        title: `Masking ${m} of ${n} keys: weights with −∞ (this library) and with a −1e9 fill`,
        state: {
          widget: 'mask-fill-compare',
          labels: s.labels,
          values: s.V,
          ...s.result,
          widgetState: this.state,
        },
      },
    );
  }

  /** What printing replaces with the SVG figure (print.js): the two panels. */
  printParts() {
    return [this._libCanvas.closest('.panels')];
  }

  pngCanvas() {
    const a = this._libCanvas.getBoundingClientRect(),
      b = this._fillCanvas.getBoundingClientRect();
    return composeCanvases(
      [
        { canvas: this._libCanvas, x: 0, y: 0 },
        { canvas: this._fillCanvas, x: b.left - a.left, y: b.top - a.top },
      ],
      themeOf(this).bgSolid,
    );
  }
}
