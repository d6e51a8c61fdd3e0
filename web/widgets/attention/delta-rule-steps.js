// <delta-rule-steps>: one value head of a gated DeltaNet layer (Qwen3.5's linear attention) at one
// token, step by step: the decay S ← e^{g_t} S, the delta correction u = β_t(v_t − Sᵀk_t), the write
// S ← S + k_t uᵀ and the read o_t = Sᵀq_t/√d_k, with the state S (d_k × d_v) as a small signed
// heatmap before and after each step and the numbers of each. The walk is float64 in JS
// (delta-rule-data.js) from the layer's captured hooks; the library's effective attention, when
// given, is shown reproducing o_t as Σ_s A[t,s]·v_s, and the library's own o_t (hook_o) when captured.
//
// Attributes: src (a Qwen3.5 folder URL the widget loads itself when no `data` is set), text (what it
//             reads; token ids when the folder has no tokenizer.json), layer (its layer; −1: the first
//             DeltaNet layer), head (value head, default 0), token (default −1: the last), step
//             (decay | correct | write | read, default write), diverging (blue-orange | red-blue).
// Properties: data ({ activations, layer, tokens?, map?, layout?, eps? }: activations holds
//             model.run(ids, { capture: deltaHooks(layer) }).activations of batch 1; map the layer's
//             (H_v, T, T) effective attention from forward(ids, { attention })), shown.
// Events: cell-hover { matrix, row, col, value }; ready.
import { AwElement, h, withState } from '../base-element.js';
import { HeatmapView } from '../figures/heatmap-view.js';
import { composeCanvases, jsonText, toNested } from '../export.js';
import { exactNumber, formatNumber, themeOf } from '../figures/draw-util.js';
import { divergingName } from '../figures/colormap.js';
import { screenLayoutSVG } from '../figures/svg-layout.js';
import { deltaHeadFromActivations, deltaWalk, mixValues } from './delta-rule-data.js';
import { STEPS, stepPanels, stepNumbers } from './delta-rule-steps-text.js';
import { loadDeltaData } from './delta-rule-steps-load.js';

// A free text attribute: as written, else the default.
const TEXT = { read: (t, a) => t ?? a.default };

const CSS = `
.controls { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; margin: 0 0 8px; font-size: 13px; }
.controls label { display: inline-flex; align-items: center; gap: 6px; }
.steps { display: inline-flex; flex-wrap: wrap; gap: 4px; }
.steps button[aria-pressed="true"] { font-weight: 700; }
.panels { display: flex; flex-wrap: wrap; gap: 12px 18px; }
.panel { flex: 1 1 220px; min-width: 0; }
.formula { font-family: var(--aw-mono, ui-monospace, Menlo, monospace); font-size: 13px; margin: 4px 0 8px; }
.numbers { font-family: var(--aw-mono, ui-monospace, Menlo, monospace); font-size: 12px; margin: 8px 0 0;
  overflow-wrap: anywhere; }
.numbers dt { font-weight: 650; }
.numbers dd { margin: 0 0 4px 12px; }
`;

export class DeltaRuleSteps extends AwElement {
  static attributes = {
    src: { type: TEXT, default: '' },
    text: { type: TEXT, default: 'Hello world, the sea there' },
    layer: { type: 'int', default: -1, min: -1, max: 4096 },
    head: { type: 'int', default: 0, min: 0, max: 4096 },
    token: { type: 'int', default: -1, min: -1, max: 1 << 20 },
    step: { type: 'enum', values: STEPS.map((s) => s.name), default: 'write' },
    diverging: { type: 'diverging', default: 'blue-orange' },
  };

  constructor() {
    super();
    this._data = null;
    this._shown = null;
  }

  build() {
    this._headSel = h('select', { onchange: () => (this.head = Number(this._headSel.value)) });
    this._tokenSel = h('select', { onchange: () => (this.token = Number(this._tokenSel.value)) });
    this._stepButtons = STEPS.map((s) =>
      h('button', { type: 'button', text: s.label, onclick: () => (this.step = s.name) }),
    );
    this._canvases = [h('canvas', { role: 'img' }), h('canvas', { role: 'img' })];
    this._views = this._canvases.map(
      (c, i) =>
        new HeatmapView(c, {
          host: this,
          onHover: (cell) => this.#hover(cell, i),
          onClick: (cell) => this.#hover(cell, i),
        }),
    );
    this._formula = h('p', { class: 'formula' });
    this._numbers = h('dl', { class: 'numbers' });
    this._readout = h('div', { class: 'readout', 'aria-live': 'polite' });
    this._summary = h('p', { class: 'muted small' });
    this.shadowRoot.append(
      h('style', { text: CSS }),
      h(
        'div',
        { class: 'bar' },
        h('span', { class: 'title', text: 'The delta rule, step by step' }),
        this.exportBar(),
      ),
      this._summary,
      ...this.baseParts(),
      h(
        'div',
        { class: 'controls' },
        h('label', {}, h('span', { text: 'Value head' }), this._headSel),
        h('label', {}, h('span', { text: 'Token' }), this._tokenSel),
        h('span', { class: 'steps', role: 'group', 'aria-label': 'Step' }, ...this._stepButtons),
      ),
      this._formula,
      h('div', { class: 'panels' }, ...[0, 1].map((i) => h('div', { class: 'panel' }, this._canvases[i]))),
      this._numbers,
      this._readout,
    );
  }

  /** { activations, layer, tokens?, map?, layout?, eps? } (see the header), or null. */
  get data() {
    return this._data;
  }
  set data(d) {
    this._data = d ?? null;
    this.schedule();
  }
  get shown() {
    return this._shown;
  }

  render() {
    const d = this._data ?? this.#loaded();
    if (!d) {
      this._shown = null;
      this._summary.textContent = !this.src
        ? 'No DeltaNet layer is given yet (set src or data).'
        : this._loadFailed
          ? 'The model could not be loaded.'
          : 'Loading the model…';
      return;
    }
    let head, walk;
    const vHeads = d.activations?.[`blocks.${d.layer}.linear_attn.hook_v`]?.shape?.[2] ?? 0;
    try {
      head = deltaHeadFromActivations(d.activations, d.layer, Math.min(this.head, vHeads - 1), {
        layout: d.layout ?? 'grouped',
        eps: d.eps ?? 1e-6,
      });
      walk = deltaWalk(head, this.token < 0 ? head.T - 1 : Math.min(this.token, head.T - 1));
    } catch (e) {
      this.showError(e.message);
      this._shown = null;
      return;
    }
    this.showError('');
    const t = walk.t;
    const tokens = d.tokens ?? Array.from({ length: head.T }, (_, s) => String(s));
    const mixed = d.map
      ? mixValues(head, d.map.subarray(head.head * head.T ** 2, (head.head + 1) * head.T ** 2), t)
      : null;
    const hookO = d.activations[`blocks.${d.layer}.linear_attn.hook_o`];
    const captured = hookO
      ? Array.from(
          hookO.data.subarray((t * vHeads + head.head) * head.dv, (t * vHeads + head.head + 1) * head.dv),
        )
      : null;
    this._shown = {
      layer: d.layer,
      head: head.head,
      keyHead: head.keyHead,
      T: head.T,
      dk: head.dk,
      dv: head.dv,
      t,
      step: this.step,
      walk,
      tokens,
      mixed,
      captured,
      beta: head.beta[t],
      g: head.g[t],
      k: head.k[t],
      v: head.v[t],
      q: head.q[t],
    };
    this.#controls(vHeads, tokens);
    this._summary.textContent =
      `Layer ${d.layer}, value head ${head.head} (key head ${head.keyHead}), token ${t} "${tokens[t]}": ` +
      `the state S is ${head.dk} × ${head.dv} (d_k × d_v), zero before token 0; each token decays it, ` +
      'corrects what it predicts for k_t, writes the correction, and reads it with q_t.';
    this.#draw();
  }

  /** The wasm module, then `src`'s model when the page gave one and no data: `ready` means drawn. */
  prepare() {
    return super.prepare().then(() => (this.src && !this._data ? this.#load() : null));
  }

  // Loads the data of `src` on `text` at `layer` (once per the three); resolves when it is there.
  #load() {
    const key = JSON.stringify([this.src, this.text, this.layer]);
    this._loadKey = key;
    this._loadedData = null;
    this._loadFailed = false;
    return loadDeltaData(this.src, this.text, this.layer).then(
      (data) => {
        if (this._loadKey !== key) return;
        this._loadedData = data;
        this.schedule();
      },
      (e) => {
        if (this._loadKey !== key) return;
        this._loadFailed = true;
        this.showError(`Could not load ${this.src}: ${e.message}`);
      },
    );
  }

  // The data `src` gave on `text` at `layer`, starting a load when the attributes changed.
  #loaded() {
    if (!this.src) return null;
    if (this._loadKey !== JSON.stringify([this.src, this.text, this.layer])) this.#load();
    return this._loadedData;
  }

  #controls(vHeads, tokens) {
    const s = this._shown;
    if (this._headSel.options.length !== vHeads)
      this._headSel.replaceChildren(
        ...Array.from({ length: vHeads }, (_, i) => h('option', { value: String(i), text: String(i) })),
      );
    this._headSel.value = String(s.head);
    const labels = tokens.map((tok, i) => `${i}: ${tok}`);
    if ([...this._tokenSel.options].map((o) => o.textContent).join('\n') !== labels.join('\n'))
      this._tokenSel.replaceChildren(...labels.map((text, i) => h('option', { value: String(i), text })));
    this._tokenSel.value = String(s.t);
    for (const [i, b] of this._stepButtons.entries())
      b.setAttribute('aria-pressed', String(STEPS[i].name === s.step));
  }

  #draw() {
    const s = this._shown;
    const panels = stepPanels(s);
    const m = Math.max(1e-12, ...panels.flatMap((p) => Array.from(p.data, Math.abs)));
    const W = this.contentWidth,
      half = W >= 480 ? Math.floor((W - 18) / 2) : W;
    const rowLabels = Array.from({ length: s.dk }, (_, i) => `k${i}`);
    const colLabels = Array.from({ length: s.dv }, (_, j) => `v${j}`);
    for (const [i, p] of panels.entries()) {
      this._views[i].width = half;
      this._views[i].set({
        data: Float32Array.from(p.data),
        rows: s.dk,
        cols: s.dv,
        rowLabels,
        colLabels,
        rowAxis: 'key feature',
        colAxis: 'value feature',
        decimals: 2,
        maxCell: 34,
        minRowHeight: 0,
        domain: { lo: -m, hi: m, map: divergingName(this.diverging), caption: 'signed; one scale for both' },
        title: p.title,
      });
      this._canvases[i].setAttribute(
        'aria-label',
        `Heatmap of ${p.title}: ${s.dk} key features by ${s.dv} value features, signed. Arrow keys move between cells.`,
      );
    }
    this._panels = panels;
    const { formula, numbers } = stepNumbers(s);
    this._formula.textContent = formula;
    this._numbers.replaceChildren(
      ...numbers.flatMap(([name, value]) => [h('dt', { text: name }), h('dd', { text: value })]),
    );
    this._readout.textContent = 'Hover or focus a cell for its value.';
  }

  #hover(cell, i) {
    if (!cell || !this._panels) {
      this.showTooltip(0, 0, null);
      return;
    }
    const p = this._panels[i],
      s = this._shown;
    const value = p.data[cell.row * s.dv + cell.col];
    this._readout.textContent = `${p.title}, key feature ${cell.row}, value feature ${cell.col}: ${exactNumber(value)}`;
    const at = this._views[i].cellCenter(cell.row, cell.col);
    this.showTooltip(at.x, at.y, [`k${cell.row} · v${cell.col}`, formatNumber(value, 4)]);
    this.emit('cell-hover', { matrix: p.name, row: cell.row, col: cell.col, value });
  }

  getCSV() {
    if (!this._panels) return '';
    const s = this._shown;
    const lines = ['matrix,key_feature,value_feature,value'];
    for (const p of this._panels)
      for (let i = 0; i < s.dk; i++)
        for (let j = 0; j < s.dv; j++) lines.push([p.name, i, j, p.data[i * s.dv + j]].join(','));
    return lines.join('\n') + '\n';
  }

  getJSON() {
    const s = this._shown;
    if (!s) return jsonText(null);
    const vec = (x) => Array.from(x);
    return jsonText(
      withState(this, {
        kind: 'delta-rule-steps',
        layer: s.layer,
        head: s.head,
        keyHead: s.keyHead,
        token: s.t,
        step: s.step,
        beta: s.beta,
        g: s.g,
        k: vec(s.k),
        v: vec(s.v),
        q: vec(s.q),
        prediction: vec(s.walk.prediction),
        correction: vec(s.walk.correction),
        o: vec(s.walk.o),
        matrices: Object.fromEntries(this._panels.map((p) => [p.name, toNested(p.data, s.dk, s.dv)])),
      }),
    );
  }

  /** The two states of the step shown as an SVG document (vector cells, labels, legends; the state in <metadata>). */
  toSVG(options = {}) {
    if (!this._shown || !this._views[0].opts)
      throw new Error('toSVG: nothing is drawn yet (wait for the ready event)');
    return screenLayoutSVG(themeOf(this), this._views, {
      width: options.width,
      fontSize: options.fontSize,
      title: `Delta rule, ${this._formula.textContent}`,
      state: { widget: 'delta-rule-steps', layer: this._shown.layer, widgetState: this.state },
    });
  }

  pngCanvas() {
    const [a, b] = this._canvases.map((c) => c.getBoundingClientRect());
    return composeCanvases(
      [
        { canvas: this._canvases[0], x: 0, y: 0 },
        { canvas: this._canvases[1], x: b.left - a.left, y: b.top - a.top },
      ],
      themeOf(this).bgSolid,
    );
  }
}
