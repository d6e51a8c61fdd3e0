// <attention-model-view>: every layer × head of a TinyTransformer as a small heatmap on one
// sequence (BertViz's "model view"); click (or Enter on) a head to open that layer in an
// <attention-steps> — the whole pass, step by step, on that head.
//
// The model: the `model` property (any TinyTransformer the page holds; the widget does not dispose
// it) or the `src` attribute (a safetensors file: TinyTransformer.toSafetensors() or a preset).
// The sequence: `ids` (attribute "3 1 4 1 5" or property array) and optional `tokens` (their texts;
// default the ids). `steps`: the id of an <attention-steps> on the page to open heads in.
// Events: head-select { layer, head }.
import { AwElement, h } from './base-element.js';
import { HeatmapView } from './heatmap-view.js';
import { attn } from './runtime.js';
import { jsonText, matricesToLongCSV } from './export.js';

const CSS = `
  .grid { display: grid; gap: 8px; }
  .layer { display: flex; flex-wrap: wrap; gap: 8px; align-items: start; }
  .layer-name { font-size: 12px; width: 100%; margin-top: 4px; }`;

export class AttentionModelView extends AwElement {
  static get ownAttributes() { return ['src', 'ids', 'tokens', 'steps']; }

  build() {
    this._grid = h('div', { class: 'grid' });
    this._readout = h('div', { class: 'readout', 'aria-live': 'polite', text: 'Click a head to open it step by step.' });
    this.shadowRoot.append(h('style', { text: CSS }),
      h('div', { class: 'bar' }, h('span', { class: 'title', text: 'Every layer and head' }), this.exportBar()),
      ...this.baseParts(), this._grid, this._readout);
    this._tiles = [];
    this._model = null;
    this._ownModel = null;   // loaded from src: ours to dispose
  }

  /** Renders (and first fires `ready`) once there is a model and a sequence to show. */
  refresh() { return this._model && this.ids?.length ? super.refresh() : false; }

  /** The TinyTransformer shown (set one the page holds, or use `src`). */
  get model() { return this._model; }
  set model(m) { this.#setModel(m, false); }

  get ids() {
    if (this._ids) return this._ids;
    const text = this.getAttribute('ids');
    return text ? text.trim().split(/[\s,]+/).map(Number) : null;
  }
  set ids(v) { this._ids = v ? Array.from(v, Number) : null; this.schedule(); }

  get tokens() {
    if (this._tokens) return this._tokens;
    const text = this.getAttribute('tokens');
    return text ? text.trim().split(/\s+/) : this.ids?.map(String) ?? [];
  }
  set tokens(v) { this._tokens = v ? Array.from(v, String) : null; this.schedule(); }

  attributeChangedCallback(name, old, value) {
    if (name === 'src' && value && value !== old) this.#load(value);
    super.attributeChangedCallback();
  }

  async #load(src) {
    try {
      await this.prepare();
      const response = await fetch(new URL(src, document.baseURI));
      if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
      this.#setModel(attn.TinyTransformer.fromSafetensors(new Uint8Array(await response.arrayBuffer())), true);
      this.emit('model-load', { src });
    } catch (error) {
      this.showError(`Could not load the model “${src}”: ${error.message}`);
    }
  }

  #setModel(m, own) {
    if (this._ownModel && this._ownModel !== m) this._ownModel.dispose();
    this._ownModel = own ? m : null;
    this._model = m;
    this.schedule();
  }

  render() {
    const m = this._model, ids = this.ids;
    if (!m || !ids || !ids.length) { this.showError(m ? 'Set ids: the sequence to show.' : ''); return; }
    let attention;
    try {
      attention = m.forward([ids], { attention: true }).attention;
    } catch (error) {
      this.showError(`${error.code ?? 'ERROR'}: ${error.message}`);
      return;
    }
    this.showError('');
    const { numLayers: L, numHeads: H } = m.config, T = ids.length, tokens = this.tokens;
    if (this._tiles.length !== L * H) this.#buildTiles(L, H);
    const tileW = Math.min(240, Math.max(130, Math.floor(this.contentWidth / Math.min(H, 4)) - 10));
    this.shown = { ids, tokens, layers: attention.map((w) => w.data), T, L, H };
    for (const t of this._tiles) {
      t.view.width = tileW;
      t.view.set({ data: attention[t.layer].data.subarray(t.head * T * T, (t.head + 1) * T * T), rows: T, cols: T,
        rowLabels: tokens, colLabels: tokens, rowAxis: 'query', colAxis: 'key', domain: { lo: 0, hi: 1, map: 'viridis' },
        values: 'never', maxCell: 14, minRowHeight: 0, legend: false, title: `L${t.layer} · H${t.head}` });
    }
  }

  #buildTiles(L, H) {
    this._tiles = [];
    const rows = [];
    for (let layer = 0; layer < L; layer++) {
      const row = h('div', { class: 'layer', role: 'group', 'aria-label': `Layer ${layer}` },
        h('div', { class: 'layer-name muted', text: `Layer ${layer}` }));
      for (let head = 0; head < H; head++) {
        const canvas = h('canvas', { 'aria-label': `Layer ${layer}, head ${head}: attention weights. Enter opens it step by step.` });
        const view = new HeatmapView(canvas, { host: this, onClick: () => this.open(layer, head) });
        row.append(canvas);
        this._tiles.push({ layer, head, view });
      }
      rows.push(row);
    }
    this._grid.replaceChildren(...rows);
  }

  /** Opens layer/head in the <attention-steps> named by `steps` (if any) and emits head-select. */
  open(layer, head) {
    const m = this._model, ids = this.ids;
    this._readout.textContent = `Layer ${layer}, head ${head}${this.getAttribute('steps') ? ': opened step by step below.' : '.'}`;
    const target = this.getAttribute('steps') && document.getElementById(this.getAttribute('steps'));
    if (target && m) {
      const { trace } = m.forward([ids], { attention: false, trace: { layers: [layer] } });
      target.trace = { tokens: this.tokens, steps: trace[layer], heads: m.config.numHeads, dModel: m.config.dModel, causal: m.config.causal };
      target.setAttribute('head', String(head));
      target.setAttribute('step', 'weights');
    }
    this.emit('head-select', { layer, head });
  }

  getCSV() {
    const s = this.shown;
    if (!s) return '';
    return matricesToLongCSV(s.layers.flatMap((data, l) => Array.from({ length: s.H }, (_, hd) => ({
      key: `layer ${l} head ${hd}`, data: data.subarray(hd * s.T * s.T, (hd + 1) * s.T * s.T), rows: s.T, cols: s.T,
      rowLabels: s.tokens, colLabels: s.tokens }))), 'layer_head');
  }
  getJSON() { return jsonText(this.shown ? { tokens: this.shown.tokens, layers: this.shown.layers.map((d) => Array.from(d)) } : {}); }
  pngCanvas() { return this._tiles[0]?.view.canvas ?? h('canvas'); }
}
