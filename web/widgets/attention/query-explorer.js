// <query-explorer>: one query against a few keys, small enough to see everything. Drag the query
// arrow (or use its sliders) and the dot products, the softmax weights and the output — a weighted
// average of the values — move with it. Computed by the library's scaledDotProductAttention with
// trace: true (its 'scores', 'scaled' and 'weights' steps), one call per change.
//
// Attributes: query="1.5,0.5"   keys="x,y; x,y; …"   values="x,y; x,y; …"   labels="cat,dog,car,bus"
//             scaling="true" (divide by √d_k; "false" uses scale 1).  The planes are drawn when the
//             keys (and the values) have 2 components; any length works for the numbers.
// Properties: query (number[]), keys, values (number[][]), labels, scaling,
//             result { scores, scaled, weights, output } (plain arrays of what is shown).
// Events: query-change { query, scores, weights, output } after every user change; ready.
import { AwElement, h, withState } from '../base-element.js';
import { composeCanvases, jsonText } from '../export.js';
import { formatNumber, themeOf } from '../figures/draw-util.js';
import { attn } from '../runtime.js';
import { parseNumberList, parseVectors } from '../figures/xy-chart.js';
import { canvasLayoutSVG } from '../figures/svg-layout.js';
import {
  RANGE,
  drawKeyPlane,
  drawValuePlane,
  keyPlaneSVG,
  queryAt,
  valuePlaneSVG,
} from './query-explorer-planes.js';
import { readoutText, weightsTable } from './query-explorer-table.js';

const DEFAULTS = {
  query: '1.5,0.5',
  keys: '1.8,0.4; 1.3,-0.7; -0.3,1.9; -1.2,1.2',
  values: '0.5,2.5; 1,2; 2.5,0.5; 2.8,1.2',
  labels: 'cat,dog,car,bus',
};
const STEP = 0.05;

// Attribute types (static attributes): "x,y" and "x,y; x,y; …" (a text that is not one throws when read).
const VECTOR = {
  read: (text, a, name) => parseNumberList(text ?? a.default, name),
  write: (el, name, v) =>
    el.setAttribute(
      name,
      (Array.isArray(v) ? v : parseNumberList(v, name)).map((x) => +x.toFixed(4)).join(','),
    ),
};
const VECTORS = {
  read: (text, a, name) => parseVectors(text ?? a.default, name),
  write: (el, name, v) =>
    el.setAttribute(name, Array.isArray(v) ? v.map((r) => r.join(',')).join(';') : String(v)),
};

const QE_CSS = `
.planes { display: flex; flex-wrap: wrap; gap: 12px 18px; }
.plane { display: flex; flex-direction: column; gap: 4px; }
.plane h3 { margin: 0; font-size: 12.5px; font-weight: 600; }
.plane canvas { cursor: crosshair; }
.plane canvas.drag { touch-action: none; }  /* a finger drags the query instead of scrolling the page */
.sliders { display: grid; grid-template-columns: auto minmax(120px, 1fr) 5ch; gap: 4px 10px; align-items: center; margin: 10px 0 4px; font-size: 13px; max-width: 520px; }
.sliders input { accent-color: var(--aw-accent, #b94a08); min-height: 0; padding: 0; border: 0; background: transparent; }
.sliders output { font-family: var(--aw-mono, ui-monospace, Menlo, monospace); text-align: right; }
table { border-collapse: collapse; margin-top: 8px; font-size: 13px; font-variant-numeric: tabular-nums; width: 100%; }
th, td { padding: 4px 8px; border-bottom: 1px solid color-mix(in srgb, currentColor 12%, transparent); text-align: right; white-space: nowrap; }
th { font-size: 12px; font-weight: 600; color: var(--aw-muted, color-mix(in srgb, currentColor 62%, transparent)); }
th:first-child, td:first-child { text-align: left; }
td.w { width: 40%; text-align: left; }
.wbar { display: inline-block; height: 10px; border-radius: 2px; vertical-align: -1px; margin-right: 8px; background: var(--aw-accent, #b94a08); }
tfoot td { font-weight: 600; border-bottom: 0; }
`;

export class QueryExplorer extends AwElement {
  static attributes = {
    query: { type: VECTOR, default: DEFAULTS.query }, // number[]; written rounded to 4 decimals
    keys: { type: VECTORS, default: DEFAULTS.keys }, // number[][]
    values: { type: VECTORS, default: DEFAULTS.values },
    labels: { property: false }, // below: one per key
    scaling: { type: 'boolean', default: true },
  };

  build() {
    this._keyCanvas = h('canvas', { role: 'img', tabindex: '0', class: 'drag' });
    this._valueCanvas = h('canvas', { role: 'img' });
    this._keyPlane = h(
      'div',
      { class: 'plane' },
      h('h3', { text: 'Query and keys (drag the query)' }),
      this._keyCanvas,
    );
    this._valuePlane = h(
      'div',
      { class: 'plane' },
      h('h3', { text: 'Values and the output' }),
      this._valueCanvas,
    );
    this._sliders = h('div', { class: 'sliders', role: 'group', 'aria-label': 'Query vector' });
    this._table = h('table');
    this._readout = h('div', { class: 'readout', 'aria-live': 'polite' });
    this.shadowRoot.append(
      h('style', { text: QE_CSS }),
      h(
        'div',
        { class: 'bar' },
        h('span', { class: 'title', text: 'One query, four keys' }),
        h('button', { type: 'button', text: 'Reset', onclick: () => this.#setQuery(this.#defaultQuery()) }),
        this.exportBar(),
      ),
      ...this.baseParts(),
      h('div', { class: 'planes' }, this._keyPlane, this._valuePlane),
      this._sliders,
      h(
        'div',
        { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': 'Scores and weights table' },
        this._table,
      ),
      this._readout,
    );
    this.#wirePlane();
  }

  get labels() {
    const given = (this.getAttribute('labels') ?? DEFAULTS.labels).split(',').map((s) => s.trim());
    let n = 0;
    try {
      n = this.keys.length;
    } catch {
      /* reported by render */
    }
    return Array.from({ length: n }, (_, j) => given[j] || `k${j}`);
  }
  set labels(v) {
    this.setAttribute('labels', Array.isArray(v) ? v.join(',') : String(v));
  }

  /** What is shown: { query, scores, scaled, weights, output } as plain arrays. */
  get result() {
    return this._shown ? structuredClone(this._shown.result) : null;
  }

  #defaultQuery() {
    return this._initialQuery ? this._initialQuery.slice() : parseNumberList(DEFAULTS.query, 'query');
  }

  #setQuery(q) {
    this.query = q.map((x) => Math.max(-RANGE, Math.min(RANGE, x)));
    this.refresh();
    if (this._shown) this.emit('query-change', this.result);
  }

  render() {
    let q, K, V, labels;
    try {
      q = this.query;
      K = this.keys;
      V = this.values;
      labels = this.labels;
      if (q.length !== K[0].length)
        throw new Error(`query has ${q.length} components but the keys have ${K[0].length}`);
      if (V.length !== K.length)
        throw new Error(`${K.length} keys but ${V.length} values: give one value per key`);
    } catch (e) {
      this.showError(e.message);
      return;
    }
    if (!this._initialQuery) this._initialQuery = q.slice();
    const d = q.length,
      n = K.length,
      dv = V[0].length;
    const scale = this.scaling ? 1 / Math.sqrt(d) : 1;
    let out;
    try {
      out = attn.scaledDotProductAttention(
        new attn.Tensor(q, [1, d]),
        new attn.Tensor(K.flat(), [n, d]),
        new attn.Tensor(V.flat(), [n, dv]),
        { trace: true, scale },
      );
    } catch (e) {
      this.showError(e.message);
      return;
    }
    this.showError('');
    const step = (name) => Array.from(out.trace.find((s) => s.name === name).data); // (1, n)
    const result = {
      query: q.slice(),
      scores: step('scores'),
      scaled: step('scaled'),
      weights: step('weights'),
      output: Array.from(out.output.data),
    };
    this._shown = { q, K, V, labels, d, dv, scale, result };
    this.dataset.weights = result.weights.map((w) => w.toFixed(4)).join(',');
    this.#renderSliders(q);
    this.#renderPlanes();
    this._table.replaceChildren(...weightsTable(this._shown, this.scaling));
    this._readout.replaceChildren(h('span', { text: readoutText(this._shown) }));
  }

  #renderSliders(q) {
    if (this._sliders.children.length !== q.length * 3) {
      const names = q.length === 2 ? ['q₁ (x)', 'q₂ (y)'] : q.map((_, i) => `q${i + 1}`);
      this._sliders.replaceChildren(
        ...q.flatMap((_, i) => {
          const input = h('input', {
            type: 'range',
            min: String(-RANGE),
            max: String(RANGE),
            step: String(STEP),
            'aria-label': `Query component ${i + 1}`,
            oninput: () => {
              const next = this.query;
              next[i] = Number(input.value);
              this.#setQuery(next);
            },
          });
          return [h('span', { text: names[i] }), input, h('output')];
        }),
      );
    }
    q.forEach((x, i) => {
      const input = this._sliders.children[i * 3 + 1];
      if (this.shadowRoot.activeElement !== input) input.value = String(x);
      this._sliders.children[i * 3 + 2].textContent = formatNumber(x, 2);
    });
  }

  // ---- the two planes ------------------------------------------------------------------------

  #planeSize() {
    const W = this.contentWidth;
    return Math.max(180, Math.min(320, W >= 560 ? Math.floor((W - 18) / 2) : W));
  }

  #renderPlanes() {
    const s = this._shown;
    this._keyPlane.hidden = s.d !== 2;
    this._valuePlane.hidden = s.dv !== 2;
    const size = this.#planeSize(),
      theme = themeOf(this);
    if (s.d === 2) this._keyGeo = drawKeyPlane(this._keyCanvas, s, theme, size);
    if (s.dv === 2) drawValuePlane(this._valueCanvas, s, theme, size);
  }

  #wirePlane() {
    const fromPointer = (e) =>
      this._keyGeo
        ? queryAt(this._keyGeo, this._keyCanvas.getBoundingClientRect(), e.clientX, e.clientY, STEP)
        : null;
    let dragging = false;
    this._keyCanvas.addEventListener('pointerdown', (e) => {
      const p = fromPointer(e);
      if (!p) return;
      dragging = true;
      this._keyCanvas.setPointerCapture?.(e.pointerId);
      this.#setQuery(p);
    });
    this._keyCanvas.addEventListener('pointermove', (e) => {
      if (dragging) {
        const p = fromPointer(e);
        if (p) this.#setQuery(p);
      }
    });
    const stop = () => {
      dragging = false;
    };
    this._keyCanvas.addEventListener('pointerup', stop);
    this._keyCanvas.addEventListener('pointercancel', stop);
    this._keyCanvas.addEventListener('keydown', (e) => {
      const d = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] }[e.key];
      if (!d || !this._shown || this._shown.d !== 2) return;
      e.preventDefault();
      const q = this.query;
      this.#setQuery([q[0] + d[0] * 0.1, q[1] + d[1] * 0.1]);
    });
  }

  getCSV() {
    const s = this._shown;
    if (!s) return '';
    const lines = ['key,label,score,scaled,weight,' + s.V[0].map((_, i) => `value_${i}`).join(',')];
    s.K.forEach((_, j) =>
      lines.push(
        [
          j,
          JSON.stringify(s.labels[j]),
          s.result.scores[j],
          s.result.scaled[j],
          s.result.weights[j],
          ...s.V[j],
        ].join(','),
      ),
    );
    lines.push(['output', '', '', '', '', ...s.result.output].join(','));
    return lines.join('\n') + '\n';
  }

  getJSON() {
    const s = this._shown;
    return jsonText(
      withState(
        this,
        s
          ? {
              kind: 'query-explorer',
              query: s.q,
              keys: s.K,
              values: s.V,
              labels: s.labels,
              scale: s.scale,
              ...s.result,
            }
          : null,
      ),
    );
  }

  /** The two planes as an SVG document, laid out as on screen (vector arrows and points; the numbers and the state in <metadata>). */
  toSVG(options = {}) {
    const s = this._shown;
    if (!s) throw new Error('toSVG: nothing is drawn yet (wait for the ready event)');
    const size = this.#planeSize(),
      parts = [];
    if (s.d === 2)
      parts.push({
        canvas: this._keyCanvas,
        heading: 'Query and keys',
        draw: (fig, x, y) => keyPlaneSVG(s, fig, x, y, size),
      });
    if (s.dv === 2)
      parts.push({
        canvas: this._valueCanvas,
        heading: 'Values and the output',
        draw: (fig, x, y) => valuePlaneSVG(s, fig, x, y, size),
      });
    if (!parts.length) throw new Error('toSVG: the planes are drawn only for vectors of 2 components');
    return canvasLayoutSVG(this, themeOf(this), parts, {
      width: options.width,
      fontSize: options.fontSize,
      title: `One query against ${s.K.length} keys: weights ${s.result.weights.map((w) => formatNumber(w, 2)).join(', ')}`,
      state: {
        widget: 'query-explorer',
        query: s.q,
        keys: s.K,
        values: s.V,
        labels: s.labels,
        scale: s.scale,
        ...s.result,
        widgetState: this.state,
      },
    });
  }

  /** What printing replaces with the SVG figure (print.js): the planes. */
  printParts() {
    return [this._keyPlane.parentElement];
  }

  pngCanvas() {
    const items = [];
    const a = this._keyCanvas.getBoundingClientRect();
    if (!this._keyPlane.hidden) items.push({ canvas: this._keyCanvas, x: 0, y: 0 });
    if (!this._valuePlane.hidden) {
      const b = this._valueCanvas.getBoundingClientRect();
      items.push({
        canvas: this._valueCanvas,
        x: this._keyPlane.hidden ? 0 : b.left - a.left,
        y: this._keyPlane.hidden ? 0 : b.top - a.top,
      });
    }
    if (!items.length) {
      const c = document.createElement('canvas');
      c.width = c.height = 1;
      return c;
    }
    return composeCanvases(items, themeOf(this).bgSolid);
  }
}
