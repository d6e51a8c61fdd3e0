// <softmax-playground>: edit a row of logits, multiply them by a scale, and watch softmax — computed
// by the library — saturate: as the scale grows the largest logit takes nearly all the weight.
//
// Attributes: logits="1,1,1,5" (2…16 numbers), scale="1" (0…10, the logits are multiplied by it),
//             labels="a,b,c,d" (optional names of the entries), decimals="4" (rounding shown).
// Properties: logits (number[]), scale, labels, probabilities (Float32Array, what is shown), shown.
// Events: softmax-change { logits, scale, probabilities: number[] } after every user change; ready.
import { AwElement, h, withState } from '../base-element.js';
import { SERIES_COLORS, drawBars } from '../figures/charts.js';
import { composeCanvases, jsonText } from '../export.js';
import { exactNumber, formatNumber, themeOf } from '../figures/draw-util.js';
import { attn } from '../runtime.js';
import { drawXY, parseNumberList } from '../figures/xy-chart.js';
import { barsPart, canvasLayoutSVG, xyPart } from '../figures/svg-layout.js';

const MAX_SCALE = 10;
const CURVE_STEPS = 100; // scales 0, 0.1, …, 10 for the saturation curves

const SOFTMAX_CSS = `
.logits { display: flex; flex-wrap: wrap; gap: 8px 14px; align-items: end; margin: 4px 0 10px; }
.logit { display: flex; flex-direction: column; gap: 2px; font-size: 12px; }
.logit input { width: 5.2em; font-variant-numeric: tabular-nums; }
.scale { display: flex; align-items: center; gap: 10px; flex-wrap: wrap; margin: 0 0 10px; font-size: 13px; }
.scale input[type=range] { flex: 1 1 220px; accent-color: var(--aw-accent, #b94a08); min-height: 0; padding: 0; border: 0; background: transparent; }
.scale output { font-family: var(--aw-mono, ui-monospace, Menlo, monospace); min-width: 4.5ch; }
.charts { display: flex; flex-wrap: wrap; gap: 12px 18px; }
.probs { display: flex; flex-wrap: wrap; gap: 6px 18px; list-style: none; margin: 10px 0 0; padding: 0;
  font-family: var(--aw-mono, ui-monospace, Menlo, monospace); font-size: 13px; }
.probs li { white-space: nowrap; }
.probs .name { color: var(--aw-muted, color-mix(in srgb, currentColor 62%, transparent)); margin-right: 6px; }
.probs output { font-weight: 600; }
`;

export class SoftmaxPlayground extends AwElement {
  static attributes = {
    logits: { property: false }, // below: up to 16, all valid or the default
    scale: { type: 'number', default: 1, min: 0, max: MAX_SCALE },
    labels: { property: false }, // below: one per logit
    decimals: { type: 'int', parseInt: true, default: 4, min: 1, max: 8 },
  };

  build() {
    this._inputs = h('div', {
      class: 'logits',
      role: 'group',
      'aria-label': 'Logits (the scores before softmax)',
    });
    this._slider = h('input', {
      type: 'range',
      min: '0',
      max: String(MAX_SCALE),
      step: '0.05',
      'aria-label': 'Multiply the logits by',
      oninput: () => this.#userChange({ scale: Number(this._slider.value) }),
    });
    this._scaleOut = h('output', { 'aria-hidden': 'true' });
    this._bars = h('canvas', { role: 'img' });
    this._curves = h('canvas', { role: 'img' });
    this._probs = h('ol', { class: 'probs', 'aria-label': 'Softmax of the scaled logits' });
    this._summary = h('div', { class: 'readout', 'aria-live': 'polite' });
    this.shadowRoot.append(
      h('style', { text: SOFTMAX_CSS }),
      h(
        'div',
        { class: 'bar' },
        h('span', { class: 'title', text: 'Softmax playground' }),
        h('button', {
          type: 'button',
          text: 'Reset',
          onclick: () => this.#userChange({ logits: [1, 1, 1, 5], scale: 1 }),
        }),
        this.exportBar(),
      ),
      ...this.baseParts(),
      this._inputs,
      h(
        'label',
        { class: 'scale' },
        h('span', { text: 'Multiply the logits by' }),
        this._slider,
        this._scaleOut,
      ),
      h('div', { class: 'charts' }, this._bars, this._curves),
      this._probs,
      this._summary,
    );
  }

  get logits() {
    try {
      return parseNumberList(this.getAttribute('logits') ?? '1,1,1,5', 'logits').slice(0, 16);
    } catch {
      return [1, 1, 1, 5];
    }
  }
  set logits(v) {
    this.setAttribute('logits', (Array.isArray(v) ? v : parseNumberList(v, 'logits')).join(','));
  }

  get labels() {
    const raw = this.getAttribute('labels');
    const given = raw ? raw.split(',').map((s) => s.trim()) : [];
    return this.logits.map((_, i) => given[i] || `x${toSubscript(i + 1)}`);
  }
  set labels(v) {
    this.setAttribute('labels', Array.isArray(v) ? v.join(',') : String(v));
  }

  /** The probabilities shown (a copy). */
  get probabilities() {
    return this._shown ? this._shown.probabilities.slice() : null;
  }

  /** { logits, scale, scaled, probabilities, labels } */
  get shown() {
    return this._shown || null;
  }

  #userChange(patch) {
    if (patch.logits) this.logits = patch.logits;
    if (patch.scale !== undefined) this.scale = patch.scale;
    this.refresh();
    if (this._shown) {
      this.emit('softmax-change', {
        logits: this._shown.logits.slice(),
        scale: this._shown.scale,
        probabilities: Array.from(this._shown.probabilities),
      });
    }
  }

  render() {
    let logits;
    try {
      logits = parseNumberList(this.getAttribute('logits') ?? '1,1,1,5', 'logits');
      if (logits.length < 2 || logits.length > 16)
        throw new Error(`logits: give 2 to 16 numbers, got ${logits.length}`);
    } catch (e) {
      this.showError(e.message);
      return;
    }
    this.showError('');
    const n = logits.length,
      scale = this.scale,
      labels = this.labels,
      dec = this.decimals;
    // 1. The softmax shown, through the library (float32 throughout, as a model would compute it).
    const scaled = logits.map((x) => x * scale);
    const probabilities = Float32Array.from(attn.softmax(new attn.Tensor(scaled, [1, n])).data); // (1, n)
    // 2. The saturation curves: one softmax call over CURVE_STEPS + 1 scales.
    const grid = new Float32Array((CURVE_STEPS + 1) * n); // (steps + 1, n) row-major
    for (let s = 0; s <= CURVE_STEPS; s++)
      for (let j = 0; j < n; j++) grid[s * n + j] = logits[j] * ((s * MAX_SCALE) / CURVE_STEPS);
    const curves = attn.softmax(new attn.Tensor(grid, [CURVE_STEPS + 1, n])).data;
    this._shown = { logits, scale, scaled, probabilities, labels };
    this.dataset.probabilities = Array.from(probabilities, (p) => p.toFixed(dec)).join(',');
    this.#renderInputs(logits, labels);
    if (this.shadowRoot.activeElement !== this._slider) this._slider.value = String(scale);
    this._scaleOut.textContent = `×${scale.toFixed(2)}`;
    this.#renderCharts(logits, labels, probabilities, curves, scale);
    this._probs.replaceChildren(
      ...Array.from(probabilities, (p, j) =>
        h(
          'li',
          {},
          h('span', { class: 'name', text: `softmax(${labels[j]})` }),
          h('output', { 'data-index': String(j), text: p.toFixed(dec), title: exactNumber(p) }),
        ),
      ),
    );
    this.#renderSummary(probabilities, n, scale);
  }

  #renderInputs(logits, labels) {
    const focused = this.shadowRoot.activeElement;
    if (this._inputs.children.length !== logits.length) {
      this._inputs.replaceChildren(
        ...logits.map((_, j) => {
          const input = h('input', {
            type: 'number',
            step: '0.5',
            'aria-label': `Logit ${j + 1}`,
            oninput: () => {
              const v = Number(input.value);
              if (input.value === '' || !Number.isFinite(v)) return;
              const next = this.logits;
              next[j] = v;
              this.#userChange({ logits: next });
            },
          });
          return h('label', { class: 'logit' }, h('span', { class: 'name muted' }), input);
        }),
      );
    }
    [...this._inputs.children].forEach((lab, j) => {
      lab.firstChild.textContent = labels[j];
      const input = lab.lastChild;
      if (input !== focused) input.value = String(logits[j]);
    });
  }

  #renderCharts(logits, labels, probabilities, curves, scale) {
    const W = this.contentWidth,
      n = logits.length;
    const half = W >= 640 ? Math.floor((W - 18) / 2) : W;
    this._barsOpts = {
      host: this,
      width: half,
      values: probabilities,
      maxValue: 1,
      labels: labels.map((l, j) => `${l} = ${formatNumber(logits[j] * scale, 2)}`),
      title: `softmax of the logits × ${scale.toFixed(2)}`,
    };
    this._barsApi = drawBars(this._bars, this._barsOpts);
    // One curve per distinct logit value (equal logits have equal weights).
    const groups = new Map();
    logits.forEach((x, j) => {
      if (!groups.has(x)) groups.set(x, []);
      groups.get(x).push(j);
    });
    const series = [...groups.entries()]
      .sort((a, b) => b[0] - a[0])
      .map(([x, idx]) => ({
        label: `logit ${formatNumber(x, 2)}${idx.length > 1 ? ` (×${idx.length})` : ''}`,
        markers: false,
        points: Array.from({ length: CURVE_STEPS + 1 }, (_, s) => [
          (s * MAX_SCALE) / CURVE_STEPS,
          curves[s * n + idx[0]],
        ]),
      }));
    this._curvesOpts = {
      host: this,
      width: half,
      height: 218,
      series,
      title: 'weight of each logit as the scale grows',
      x: { min: 0, max: MAX_SCALE, label: 'scale (the logits are multiplied by it)' },
      y: { min: 0, max: 1, ticks: [0, 0.25, 0.5, 0.75, 1] },
      marker: { x: scale, label: `×${scale.toFixed(2)}` },
    };
    drawXY(this._curves, this._curvesOpts);
    const top = Math.max(...probabilities);
    this._bars.setAttribute(
      'aria-label',
      `Bar chart of softmax over ${n} logits multiplied by ${scale.toFixed(2)}; the largest weight is ${top.toFixed(4)}.`,
    );
    this._curves.setAttribute(
      'aria-label',
      `Line chart: the weight of each distinct logit as the scale goes from 0 to ${MAX_SCALE}. At 0 every weight is 1/${n}; as it grows the largest logit's weight approaches 1.`,
    );
  }

  #renderSummary(p, n, scale) {
    let sum = 0,
      entropy = 0,
      top = 0;
    for (const v of p) {
      sum += v;
      top = Math.max(top, v);
      if (v > 0) entropy -= v * Math.log(v);
    }
    const maxEntropy = Math.log(n);
    const state =
      scale === 0
        ? 'At scale 0 every logit is 0, so softmax is uniform.'
        : top > 0.99
          ? 'Saturated: one entry has almost all the weight, and the others get gradients near zero.'
          : top > 0.8
            ? 'Nearly one-hot: the largest logit dominates.'
            : 'Soft: the weight is spread over several entries.';
    this._summary.replaceChildren(
      h('span', {
        text: `Σ = ${sum.toFixed(4)} · largest weight ${top.toFixed(4)} · entropy ${entropy.toFixed(3)} of at most ln ${n} = ${maxEntropy.toFixed(3)} nats`,
      }),
      h('span', { class: 'terms', text: state }),
    );
  }

  getCSV() {
    const s = this._shown;
    if (!s) return '';
    const lines = ['index,label,logit,scaled_logit,probability'];
    s.logits.forEach((x, j) =>
      lines.push(
        [j, JSON.stringify(s.labels[j]), x, Math.fround(s.scaled[j]), Math.fround(s.probabilities[j])].join(
          ',',
        ),
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
              kind: 'softmax',
              logits: s.logits,
              scale: s.scale,
              labels: s.labels,
              probabilities: Array.from(s.probabilities),
            }
          : null,
      ),
    );
  }

  /** The bars and the curves as an SVG document, laid out as on screen (vector bars and polylines; the state in <metadata>). */
  toSVG(options = {}) {
    const s = this._shown;
    if (!s || !this._barsOpts) throw new Error('toSVG: nothing is drawn yet (wait for the ready event)');
    return canvasLayoutSVG(
      this,
      themeOf(this),
      [barsPart(this._bars, this._barsOpts), xyPart(this._curves, this._curvesOpts, SERIES_COLORS)],
      {
        width: options.width,
        fontSize: options.fontSize,
        title: `Softmax of ${s.logits.length} logits multiplied by ${s.scale.toFixed(2)}, and each weight as the scale grows`,
        state: {
          widget: 'softmax-playground',
          logits: s.logits,
          scale: s.scale,
          labels: s.labels,
          probabilities: s.probabilities,
          widgetState: this.state,
        },
      },
    );
  }

  /** What printing replaces with the SVG figure (print.js): the two charts. */
  printParts() {
    return [this._bars.parentElement];
  }

  pngCanvas() {
    const a = this._bars.getBoundingClientRect(),
      b = this._curves.getBoundingClientRect();
    return composeCanvases(
      [
        { canvas: this._bars, x: 0, y: 0 },
        { canvas: this._curves, x: b.left - a.left, y: b.top - a.top },
      ],
      themeOf(this).bgSolid,
    );
  }
}

function toSubscript(n) {
  return String(n).replace(/\d/g, (d) => '₀₁₂₃₄₅₆₇₈₉'[d]);
}
