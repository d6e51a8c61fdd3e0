// <variance-experiment>: why attention divides by √d_k, measured. For each d_k it draws N pairs
// q, k ~ N(0, 1)^{d_k} with the library's seededNormal, runs scaledDotProductAttention with
// trace: true and reads the 'scores' (q·k) and 'scaled' (q·k/√d_k) steps, then plots the sample
// variance of both against d_k: ≈ d_k without scaling, ≈ 1 with it. It also shows what softmax over
// a few such scores does (the mean of the largest weight), linking the variance to saturation.
//
// Attributes: samples="2000" (pairs per d_k, 100…20000), dims="4,8,16,32,64,128,256", seed="1",
//             keys="8" (scores per softmax row in the saturation column, 2…64).
// Properties: results ([{ dk, samples, unscaled, scaled, meanUnscaled, meanScaled, standardError,
//             topUnscaled, topScaled }]), samples, dims, seed, keys; redraw() draws new samples (seed + 1).
// Data attributes written after each run: data-dk, data-unscaled, data-scaled, data-samples, data-seed.
// Events: experiment-change { results } after each run; ready.
import { AwElement, h, withState } from '../base-element.js';
import { composeCanvases, jsonText } from '../export.js';
import { formatNumber, themeOf } from '../figures/draw-util.js';
import { attn } from '../runtime.js';
import { drawXY, pairColors, parseNumberList } from '../figures/xy-chart.js';
import { SERIES_COLORS } from '../figures/charts.js';
import { canvasLayoutSVG, xyPart } from '../figures/svg-layout.js';

const DEFAULT_DIMS = [4, 8, 16, 32, 64, 128, 256];

const VAR_CSS = `
table { border-collapse: collapse; width: 100%; margin-top: 10px; font-size: 13px; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 8px; text-align: right; white-space: nowrap; border-bottom: 1px solid color-mix(in srgb, currentColor 12%, transparent); }
th { font-weight: 600; font-size: 12px; color: var(--aw-muted, color-mix(in srgb, currentColor 62%, transparent)); }
th:first-child, td:first-child { text-align: left; }
td.u { color: var(--unscaled); } td.s { color: var(--scaled); }
tr.sel td { background: color-mix(in srgb, var(--aw-accent, #b94a08) 10%, transparent); }
.note { margin: 0 0 6px; }
.caption { margin: 6px 0 0; }
`;

/** A 32-bit seed for (run seed, d_k, which tensor), so every draw is reproducible and independent. */
function seedFor(seed, dk, which) {
  let x =
    Math.imul((seed >>> 0) ^ 0x9e3779b9, 0x85ebca6b) ^
    Math.imul(dk, 0xc2b2ae35) ^
    Math.imul(which + 1, 0x27d4eb2f);
  x ^= x >>> 15;
  x = Math.imul(x, 0x2c1b3c6d);
  x ^= x >>> 12;
  return x >>> 0;
}

/** Mean and unbiased variance, accumulated in double precision. */
function meanVar(data) {
  let m = 0;
  for (const v of data) m += v;
  m /= data.length;
  let s = 0;
  for (const v of data) s += (v - m) * (v - m);
  return [m, s / (data.length - 1)];
}

/** The mean over rows of the largest softmax weight, for `data` cut into rows of `keys` scores. */
function meanTopWeight(data, keys) {
  const rows = Math.floor(data.length / keys);
  const p = attn.softmax(new attn.Tensor(data.subarray(0, rows * keys), [rows, keys])).data; // (rows, keys)
  let total = 0;
  for (let r = 0; r < rows; r++) {
    let top = 0;
    for (let j = 0; j < keys; j++) top = Math.max(top, p[r * keys + j]);
    total += top;
  }
  return total / rows;
}

/**
 * Runs the experiment for one d_k through the library.
 * @returns {{ dk, samples, unscaled, scaled, meanUnscaled, meanScaled, standardError, topUnscaled, topScaled }}
 */
export function measureDotProductVariance(dk, samples, seed, keys = 8) {
  const q = attn.seededNormal([samples, 1, dk], seedFor(seed, dk, 0)); // (N, T_q=1, d_k)
  const k = attn.seededNormal([samples, 1, dk], seedFor(seed, dk, 1)); // (N, T_k=1, d_k)
  const v = new attn.Tensor(new Float32Array(samples), [samples, 1, 1]); // (N, T_k=1, d_v=1), unused
  const { trace } = attn.scaledDotProductAttention(q, k, v, { trace: true });
  const step = (name) => Float32Array.from(trace.find((s) => s.name === name).data); // (N, 1, 1)
  const scores = step('scores'),
    scaled = step('scaled');
  const [meanUnscaled, unscaled] = meanVar(scores);
  const [meanScaled, scaledVar] = meanVar(scaled);
  // Standard error of a sample variance: sqrt((μ4 − σ⁴)/N). For q·k, a sum of d_k products of
  // independent N(0,1) pairs, σ² = d_k and μ4 = 3d_k² + 6d_k, so s.e./σ² = sqrt((2 + 6/d_k)/N).
  const standardError = Math.sqrt((2 + 6 / dk) / samples);
  return {
    dk,
    samples,
    unscaled,
    scaled: scaledVar,
    meanUnscaled,
    meanScaled,
    standardError,
    topUnscaled: meanTopWeight(scores, keys),
    topScaled: meanTopWeight(scaled, keys),
  };
}

/** A seed attribute's type: an integer ≥ 0, taken modulo 2³²; anything else reads as the default. */
const SEED = {
  read(text, { default: fallback }) {
    const s = Number(text ?? fallback);
    return Number.isInteger(s) && s >= 0 ? s >>> 0 : fallback;
  },
};

export class VarianceExperiment extends AwElement {
  static attributes = {
    samples: { type: 'int', parseInt: true, default: 2000, min: 100, max: 20000 },
    dims: { property: false }, // below: the d_k asked for (1…4096), sorted, at most 16; else the default
    seed: { type: SEED, default: 1 },
    keys: { type: 'int', parseInt: true, default: 8, min: 2, max: 64 },
  };

  build() {
    this._redraw = h('button', { type: 'button', text: 'Draw new samples', onclick: () => this.redraw() });
    this._note = h('p', { class: 'note muted small' });
    this._canvas = h('canvas', { role: 'img', tabindex: '0' });
    this._table = h('table');
    this._caption = h('p', { class: 'caption muted small' });
    this._readout = h('div', { class: 'readout', 'aria-live': 'polite' });
    this._canvas.addEventListener('pointermove', (e) => this.#hover(e));
    this._canvas.addEventListener('pointerleave', () => this.showTooltip(0, 0, null));
    this.shadowRoot.append(
      h('style', { text: VAR_CSS }),
      h(
        'div',
        { class: 'bar' },
        h('span', { class: 'title', text: 'Variance of q · k as d_k grows' }),
        this._redraw,
        this.exportBar(),
      ),
      this._note,
      ...this.baseParts(),
      this._canvas,
      h(
        'div',
        { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': 'Variance table' },
        this._table,
      ),
      this._caption,
      this._readout,
    );
  }

  get dims() {
    const raw = this.getAttribute('dims');
    if (raw === null) return DEFAULT_DIMS.slice();
    try {
      const list = parseNumberList(raw, 'dims').filter((d) => Number.isInteger(d) && d >= 1 && d <= 4096);
      return list.length ? [...new Set(list)].sort((a, b) => a - b).slice(0, 16) : DEFAULT_DIMS.slice();
    } catch {
      return DEFAULT_DIMS.slice();
    }
  }
  set dims(v) {
    this.setAttribute('dims', (Array.isArray(v) ? v : [v]).join(','));
  }

  /** The measured values (copies), one entry per d_k. */
  get results() {
    return this._results ? this._results.map((r) => ({ ...r })) : null;
  }

  /** Draws a fresh set of samples (the next seed). */
  redraw() {
    this.seed = this.seed + 1;
  }

  render() {
    const N = this.samples,
      seed = this.seed,
      keys = this.keys,
      dims = this.dims;
    let results;
    try {
      results = dims.map((dk) => measureDotProductVariance(dk, N, seed, keys));
    } catch (e) {
      this.showError(e.message);
      return;
    }
    this.showError('');
    this._results = results;
    const fmt = (x) => x.toPrecision(6);
    Object.assign(this.dataset, {
      dk: dims.join(','),
      unscaled: results.map((r) => fmt(r.unscaled)).join(','),
      scaled: results.map((r) => fmt(r.scaled)).join(','),
      samples: String(N),
      seed: String(seed),
    });
    this._note.textContent =
      `${N.toLocaleString('en')} random pairs q, k per d_k (seed ${seed}), every component drawn from N(0, 1); ` +
      'the dot products are the “scores” and “scaled” steps of the library’s own attention trace.';
    this.#draw();
    this.#table();
    if (this._selected === undefined) this._selected = Math.max(0, dims.indexOf(64));
    this.#select(Math.min(this._selected, results.length - 1));
    this.emit('experiment-change', { results: this.results });
  }

  #draw() {
    const rs = this._results,
      dims = rs.map((r) => r.dk);
    const lo = Math.min(...dims),
      hi = Math.max(...dims);
    const yMax = 2 ** Math.ceil(Math.log2(Math.max(hi, ...rs.map((r) => r.unscaled)) * 1.2));
    const xAxis = { min: lo / 1.4, max: hi * 1.4, log: 2, ticks: dims, label: 'd_k (log scale)' };
    const colors = pairColors(this);
    this._table.style.setProperty('--unscaled', colors.a);
    this._table.style.setProperty('--scaled', colors.b);
    const yAxis = {
      min: 0.25,
      max: yMax,
      log: 2,
      label: 'variance (log scale)',
      format: (v) => (v < 1 ? `1/${1 / v}` : String(v)),
    };
    this._chart = drawXY(
      this._canvas,
      (this._chartOpts = {
        host: this,
        width: Math.min(this.contentWidth, 900),
        height: 300,
        x: xAxis,
        y: yAxis,
        series: [
          {
            label: 'Var(q·k), unscaled',
            color: colors.a,
            markers: true,
            points: rs.map((r) => [r.dk, r.unscaled]),
          },
          {
            label: 'Var(q·k / √d_k), scaled',
            color: colors.b,
            markers: true,
            points: rs.map((r) => [r.dk, r.scaled]),
          },
          {
            label: 'theory: d_k and 1',
            color: themeOf(this).muted,
            dashed: true,
            width: 1.2,
            points: [
              [xAxis.min, xAxis.min],
              [xAxis.max, xAxis.max],
            ],
          },
          {
            label: '',
            color: themeOf(this).muted,
            dashed: true,
            width: 1.2,
            points: [
              [xAxis.min, 1],
              [xAxis.max, 1],
            ],
          },
        ],
      }),
    );
    const at = (d) => rs.find((r) => r.dk === d);
    const ex = at(64) || rs[Math.floor(rs.length / 2)];
    this._canvas.setAttribute(
      'aria-label',
      `Log–log chart of the variance of q·k against d_k from ${lo} to ${hi}. Unscaled, the variance follows d_k ` +
        `(${formatNumber(ex.unscaled, 1)} at d_k = ${ex.dk}); scaled by 1/√d_k it stays near 1 (${formatNumber(ex.scaled, 3)}).`,
    );
  }

  #table() {
    const keys = this.keys;
    const head = h(
      'tr',
      {},
      ...['d_k', 'Var(q·k)', 'theory', 'Var(q·k/√d_k)', `top weight of ${keys}: unscaled`, 'scaled'].map(
        (t) => h('th', { scope: 'col', text: t }),
      ),
    );
    const rows = this._results.map((r, i) =>
      h(
        'tr',
        { 'data-dk': String(r.dk), onpointerenter: () => this.#select(i) },
        h('td', { text: String(r.dk) }),
        h('td', { class: 'u', text: formatNumber(r.unscaled, 2) }),
        h('td', { class: 'muted', text: `${r.dk} ± ${formatNumber(r.dk * r.standardError, 2)}` }),
        h('td', { class: 's', text: formatNumber(r.scaled, 3) }),
        h('td', { class: 'u', text: formatNumber(r.topUnscaled, 3) }),
        h('td', { class: 's', text: formatNumber(r.topScaled, 3) }),
      ),
    );
    this._caption.textContent =
      '“theory” is d_k ± one standard error of a sample variance, d_k·√((2 + 6/d_k)/N). The last two columns: cut the scores into rows of ' +
      `${keys}, softmax each row, and average the largest weight (1/${keys} = ${formatNumber(1 / keys, 3)} would be uniform).`;
    this._table.replaceChildren(h('thead', {}, head), h('tbody', {}, ...rows));
  }

  #select(i) {
    this._selected = i;
    const r = this._results[i];
    [...this._table.tBodies[0].rows].forEach((tr, k) => tr.classList.toggle('sel', k === i));
    this._readout.replaceChildren(
      h('span', {
        text: `d_k = ${r.dk}: Var(q·k) = ${formatNumber(r.unscaled, 3)} (theory ${r.dk}), Var(q·k/√${r.dk}) = ${formatNumber(r.scaled, 4)} (theory 1)`,
      }),
      h('span', {
        class: 'terms',
        text:
          `Softmax over ${this.keys} such scores gives its top key ${formatNumber(r.topUnscaled, 3)} of the weight unscaled, ` +
          `${formatNumber(r.topScaled, 3)} scaled.`,
      }),
    );
  }

  #hover(e) {
    const hit = this._chart && this._chart.nearest(e.clientX, e.clientY);
    if (!hit || hit.series > 1) {
      this.showTooltip(0, 0, null);
      return;
    }
    this.#select(hit.index);
    const r = this._results[hit.index];
    this.showTooltip(e.clientX, e.clientY, [
      `d_k = ${r.dk}`,
      hit.series === 0
        ? `Var(q·k) = ${r.unscaled.toPrecision(5)}`
        : `Var(q·k/√d_k) = ${r.scaled.toPrecision(5)}`,
    ]);
  }

  getCSV() {
    const rs = this._results || [];
    return (
      [
        'd_k,samples,var_unscaled,var_scaled,mean_unscaled,mean_scaled,top_weight_unscaled,top_weight_scaled',
        ...rs.map((r) =>
          [
            r.dk,
            r.samples,
            r.unscaled,
            r.scaled,
            r.meanUnscaled,
            r.meanScaled,
            r.topUnscaled,
            r.topScaled,
          ].join(','),
        ),
      ].join('\n') + '\n'
    );
  }

  getJSON() {
    return jsonText(
      withState(
        this,
        this._results
          ? { kind: 'dot-product-variance', seed: this.seed, keys: this.keys, results: this._results }
          : null,
      ),
    );
  }

  /** The chart as an SVG document (vector lines and markers; the measured values and the state in <metadata>). */
  toSVG(options = {}) {
    const rs = this._results;
    if (!rs || !this._chartOpts) throw new Error('toSVG: nothing is drawn yet (wait for the ready event)');
    return canvasLayoutSVG(this, themeOf(this), [xyPart(this._canvas, this._chartOpts, SERIES_COLORS)], {
      width: options.width,
      fontSize: options.fontSize,
      title: `Variance of q·k and q·k/√d_k against d_k (${this.samples} samples per d_k, seed ${this.seed})`,
      state: {
        widget: 'variance-experiment',
        seed: this.seed,
        samples: this.samples,
        keys: this.keys,
        results: rs,
        widgetState: this.state,
      },
    });
  }

  pngCanvas() {
    return composeCanvases([{ canvas: this._canvas, x: 0, y: 0 }], themeOf(this).bgSolid);
  }
}
