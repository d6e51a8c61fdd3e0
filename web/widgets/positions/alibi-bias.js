// <alibi-bias>: ALiBi (attention with linear biases), computed by the library. Per head h the bias
// −m_h·(i − j) (causal) or −m_h·|i − j| that scaledDotProductAttention(q, k, v, { alibi: true })
// adds to the scaled scores, beside the softmax weights it produces on seeded q, k, v (1, H, T, 8).
// The slopes m_h are alibiSlopes(H), the ALiBi paper's get_slopes.
//
// Attributes: heads (H, default 8, 1…32), length (T, default 12, 1…48), causal (default true;
//             "false" turns it off), seed (1: q, k, v = seededNormal([1, H, T, 8], seed, seed + 1, seed + 2)).
// Properties: heads, length, causal, seed, head (the head shown), slopes (Float32Array),
//             bias(head) and weights(head) → Float32Array (T·T, row-major: query i, key j), shown.
// Events: cell-hover { head, row, col, bias, weight }; ready.
import { AwElement, h, withState } from '../base-element.js';
import { HeatmapView } from '../figures/heatmap-view.js';
import { composeCanvases, jsonText, toNested } from '../export.js';
import { exactNumber, formatNumber, themeOf } from '../figures/draw-util.js';
import { attn } from '../runtime.js';
import { screenLayoutSVG } from '../figures/svg-layout.js';

const DK = 8;

const ALIBI_CSS = `
.controls { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; margin: 0 0 8px; font-size: 13px; }
.controls label { display: inline-flex; align-items: center; gap: 6px; }
.panels { display: flex; flex-wrap: wrap; gap: 12px 18px; }
.panel { flex: 1 1 280px; min-width: 0; }
.panel h3 { margin: 0 0 2px; font-size: 13px; font-weight: 650; }
.panel p { margin: 0 0 6px; font-size: 12.5px; }
.slopes { display: flex; flex-wrap: wrap; gap: 4px 16px; list-style: none; margin: 8px 0 0; padding: 0;
  font-family: var(--aw-mono, ui-monospace, Menlo, monospace); font-size: 12.5px; }
.slopes li[aria-current="true"] { font-weight: 700; }
`;

export class AlibiBias extends AwElement {
  static attributes = {
    heads: { type: 'int', default: 8, min: 1, max: 32 },
    length: { type: 'int', default: 12, min: 1, max: 48 },
    causal: { type: 'boolean', default: true },
    seed: { type: 'int', default: 1, min: 0, max: 2 ** 31 - 3 },
  };

  constructor() {
    super();
    this._head = 0;
  }

  build() {
    this._headSel = h('select', {
      onchange: () => {
        this.head = Number(this._headSel.value);
      },
    });
    this._causalBox = h('input', {
      type: 'checkbox',
      onchange: () => {
        this.causal = this._causalBox.checked;
      },
    });
    this._biasCanvas = h('canvas', { role: 'img' });
    this._weightCanvas = h('canvas', { role: 'img' });
    const hooks = (which) => ({
      host: this,
      onHover: (cell) => this.#hover(cell, which),
      onClick: (cell) => this.#hover(cell, which),
    });
    this._biasView = new HeatmapView(this._biasCanvas, hooks('bias'));
    this._weightView = new HeatmapView(this._weightCanvas, hooks('weights'));
    this._biasNote = h('p', { class: 'muted' });
    this._slopes = h('ol', { class: 'slopes', 'aria-label': 'ALiBi slopes per head' });
    this._readout = h('div', {
      class: 'readout',
      'aria-live': 'polite',
      text: 'Hover or focus a cell for its bias and weight.',
    });
    this._summary = h('p', { class: 'muted small' });
    this.shadowRoot.append(
      h('style', { text: ALIBI_CSS }),
      h(
        'div',
        { class: 'bar' },
        h('span', { class: 'title', text: 'ALiBi: a linear bias per head' }),
        this.exportBar(),
      ),
      this._summary,
      ...this.baseParts(),
      h(
        'div',
        { class: 'controls' },
        h('label', {}, h('span', { text: 'Head' }), this._headSel),
        h('label', {}, this._causalBox, h('span', { text: 'Causal' })),
      ),
      h(
        'div',
        { class: 'panels' },
        h(
          'div',
          { class: 'panel' },
          h('h3', { text: 'The bias added to the scaled scores' }),
          this._biasNote,
          this._biasCanvas,
        ),
        h(
          'div',
          { class: 'panel' },
          h('h3', { text: 'The softmax weights with that bias' }),
          h('p', {
            class: 'muted',
            text: 'scaledDotProductAttention(q, k, v, { alibi: true }) on seeded q, k, v.',
          }),
          this._weightCanvas,
        ),
      ),
      this._slopes,
      this._readout,
    );
  }

  /** The head shown (0 … heads − 1). */
  get head() {
    return Math.min(this._head, this.heads - 1);
  }
  set head(v) {
    this._head = Math.max(0, Math.floor(Number(v) || 0));
    this.schedule();
  }
  /** The state: attributes (heads, length, causal, seed) and the head shown. */
  extraState() {
    return { head: this._head };
  }
  applyExtraState(s) {
    this._head = Math.max(0, Math.floor(Number(s.head) || 0));
  }
  /** alibiSlopes(heads), as used. */
  get slopes() {
    return this._shown ? this._shown.slopes.slice() : null;
  }
  get shown() {
    return this._shown || null;
  }

  /** The bias −m_h·(i − j) (causal) or −m_h·|i − j| of a head, (T, T) row-major; the causal mask is separate. */
  bias(head) {
    return this.#block(head, 'bias');
  }
  /** The softmax weights of a head, (T, T) row-major. */
  weights(head) {
    return this.#block(head, 'weights');
  }

  #block(head, which) {
    const s = this._shown;
    if (!s) return null;
    if (!Number.isInteger(head) || head < 0 || head >= s.H)
      throw new RangeError(`head must be an integer in [0, ${s.H - 1}], got ${head}`);
    const n = s.T * s.T;
    return s[which].slice(head * n, (head + 1) * n);
  }

  render() {
    const H = this.heads,
      T = this.length,
      causal = this.causal,
      seed = this.seed;
    let slopes, weights;
    try {
      slopes = Float32Array.from(attn.alibiSlopes(H));
      const [q, k, v] = [0, 1, 2].map((i) => attn.seededNormal([1, H, T, DK], seed + i)); // (1, H, T, 8) each
      weights = Float32Array.from(
        attn.scaledDotProductAttention(q, k, v, { alibi: true, causal }).weights.data,
      ); // (1, H, T, T)
    } catch (e) {
      this.showError(e.message);
      this._shown = null;
      return;
    }
    this.showError('');
    const bias = new Float32Array(H * T * T); // (H, T, T)
    for (let hd = 0; hd < H; hd++)
      for (let i = 0; i < T; i++)
        for (let j = 0; j < T; j++) {
          bias[(hd * T + i) * T + j] = -slopes[hd] * (causal ? i - j : Math.abs(i - j));
        }
    this._shown = { H, T, causal, seed, slopes, bias, weights };
    this.dataset.slopes = Array.from(slopes, (m) => m.toPrecision(6)).join(',');
    this._summary.textContent =
      `${H} heads, ${T} positions. ALiBi adds no position vectors: each head h subtracts m_h times the distance ` +
      `from its scaled scores, ${causal ? '−m_h·(i − j) under the causal mask' : '−m_h·|i − j| in both directions'}. ` +
      'A large slope looks only at nearby keys; a small one sees far.';
    if (this._headSel.options.length !== H) {
      this._headSel.replaceChildren(
        ...Array.from(slopes, (m, hd) =>
          h('option', { value: String(hd), text: `head ${hd} (m = ${slopeText(m)})` }),
        ),
      );
    }
    this._headSel.value = String(this.head);
    this._causalBox.checked = causal;
    this._slopes.replaceChildren(
      ...Array.from(slopes, (m, hd) =>
        h('li', {
          'aria-current': hd === this.head ? 'true' : false,
          text: `m${toSubscript(hd)} = ${slopeText(m)}`,
        }),
      ),
    );
    this.#draw();
  }

  #draw() {
    const s = this._shown,
      hd = this.head,
      T = s.T,
      n = T * T,
      m = s.slopes[hd];
    const W = this.contentWidth,
      half = W >= 600 ? Math.floor((W - 18) / 2) : W;
    const labels = Array.from({ length: T }, (_, i) => String(i));
    const shownBias = s.bias.slice(hd * n, (hd + 1) * n);
    if (s.causal)
      for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) shownBias[i * T + j] = -Infinity;
    const common = {
      rows: T,
      cols: T,
      rowLabels: labels,
      colLabels: labels,
      rowAxis: 'query',
      colAxis: 'key',
      maxCell: 40,
      minRowHeight: 0,
    };
    this._biasView.width = half;
    this._biasView.set({
      ...common,
      data: shownBias,
      decimals: 2,
      domain: { lo: -m * Math.max(1, T - 1), hi: 0, map: 'viridis' },
      title: `head ${hd}: bias, m = ${slopeText(m)}`,
    });
    this._weightView.width = half;
    this._weightView.set({
      ...common,
      data: s.weights.slice(hd * n, (hd + 1) * n),
      decimals: 2,
      rowSums: true,
      domain: { lo: 0, hi: 1, map: 'viridis' },
      title: `head ${hd}: weights`,
    });
    this._biasNote.textContent = s.causal
      ? 'Cells above the diagonal are masked (causal), so their bias never matters.'
      : 'Not causal: the bias falls off with the distance in both directions.';
    this._biasCanvas.setAttribute(
      'aria-label',
      `Heatmap of head ${hd}'s ALiBi bias over ${T} queries and ${T} keys: −${slopeText(m)} times the distance` +
        `${s.causal ? ', keys after the query masked' : ''}. Arrow keys move between cells.`,
    );
    this._weightCanvas.setAttribute(
      'aria-label',
      `Heatmap of head ${hd}'s attention weights with ALiBi over ${T} queries and ${T} keys; each row sums to 1. Arrow keys move between cells.`,
    );
  }

  #hover(cell, which) {
    if (!cell) {
      this.showTooltip(0, 0, null);
      return;
    }
    const s = this._shown,
      hd = this.head,
      T = s.T,
      i = cell.row,
      j = cell.col,
      idx = (hd * T + i) * T + j;
    const masked = s.causal && j > i,
      m = s.slopes[hd];
    const b = s.bias[idx],
      w = s.weights[idx];
    const dist = s.causal ? `(${i} − ${j})` : `|${i} − ${j}|`;
    const text = `head ${hd}, query ${i}, key ${j}: bias −${slopeText(m)}·${dist} = ${masked ? 'masked (causal)' : exactNumber(b)}; weight ${exactNumber(w)}`;
    this._readout.textContent = text;
    const view = which === 'bias' ? this._biasView : this._weightView;
    const p = view.cellCenter(i, j);
    this.showTooltip(p.x, p.y, [
      `query ${i} · key ${j}`,
      `bias ${masked ? 'masked' : formatNumber(b, 4)}`,
      `weight ${formatNumber(w, 4)}`,
    ]);
    this.emit('cell-hover', { head: hd, row: i, col: j, bias: b, weight: w });
  }

  getCSV() {
    const s = this._shown;
    if (!s) return '';
    const lines = ['head,slope,query,key,bias,weight'];
    for (let hd = 0; hd < s.H; hd++)
      for (let i = 0; i < s.T; i++)
        for (let j = 0; j < s.T; j++) {
          const idx = (hd * s.T + i) * s.T + j;
          lines.push([hd, s.slopes[hd], i, j, s.bias[idx], s.weights[idx]].join(','));
        }
    return lines.join('\n') + '\n';
  }

  getJSON() {
    const s = this._shown;
    if (!s) return jsonText(null);
    const n = s.T * s.T;
    return jsonText(
      withState(this, {
        kind: 'alibi',
        heads: s.H,
        length: s.T,
        causal: s.causal,
        seed: s.seed,
        slopes: Array.from(s.slopes),
        bias: Array.from({ length: s.H }, (_, hd) =>
          toNested(s.bias.subarray(hd * n, (hd + 1) * n), s.T, s.T),
        ),
        weights: Array.from({ length: s.H }, (_, hd) =>
          toNested(s.weights.subarray(hd * n, (hd + 1) * n), s.T, s.T),
        ),
      }),
    );
  }

  /**
   * The shown head's bias and weights as an SVG document (vector cells, labels, legends; the state
   * in <metadata>), laid out as on screen.
   */
  toSVG(options = {}) {
    const s = this._shown;
    if (!s || !this._biasView.opts) throw new Error('toSVG: nothing is drawn yet (wait for the ready event)');
    return screenLayoutSVG(themeOf(this), [this._biasView, this._weightView], {
      width: options.width,
      fontSize: options.fontSize,
      title: `ALiBi: ${this._biasView.opts.title}; ${this._weightView.opts.title}`,
      state: {
        widget: 'alibi-bias',
        heads: s.H,
        length: s.T,
        causal: s.causal,
        seed: s.seed,
        slopes: s.slopes,
        head: this.head,
        widgetState: this.state,
      },
    });
  }

  pngCanvas() {
    const a = this._biasCanvas.getBoundingClientRect(),
      b = this._weightCanvas.getBoundingClientRect();
    return composeCanvases(
      [
        { canvas: this._biasCanvas, x: 0, y: 0 },
        { canvas: this._weightCanvas, x: b.left - a.left, y: b.top - a.top },
      ],
      themeOf(this).bgSolid,
    );
  }
}

/** 0.0625 → "1/16" when the slope is 1/2^k, else 4 significant digits. */
function slopeText(m) {
  const k = Math.log2(1 / m);
  return Number.isInteger(k) ? `1/${2 ** k}` : m.toPrecision(4);
}

function toSubscript(n) {
  return String(n).replace(/\d/g, (d) => '₀₁₂₃₄₅₆₇₈₉'[d]);
}
