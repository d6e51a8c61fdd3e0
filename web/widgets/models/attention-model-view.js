// <attention-model-view>: every layer × head of a TinyTransformer as a small heatmap on one
// sequence (BertViz's "model view"); click (or Enter on) a head to open that layer in an
// <attention-steps> — the whole pass, step by step, on that head.
//
// The model: the `model` property (any TinyTransformer the page holds; the widget does not dispose
// it) or the `src` attribute (a safetensors file: TinyTransformer.toSafetensors() or a preset).
// The sequence: `ids` (attribute "3 1 4 1 5" or property array) and optional `tokens` (their texts;
// default the ids). `steps`: the id of an <attention-steps> on the page to open heads in.
// `mode="rollout"`: one tile per layer instead, the attention rollout through layers 0 … l
// (attentionRollout of the forward's attention, residual weight 0.5).
// A layer's tiles are its own heads (the forward's attention[l].shape[1]: a hybrid model's layers
// differ); a layer whose forward kind (attentionKinds) is not softmax attention — a conv or DeltaNet
// layer's signed map — is drawn on the diverging map `diverging` over its own ±max|a|, with its bar.
// Events: head-select { layer, head } (heads mode).
import { AwElement, h, withState } from '../base-element.js';
import { HeatmapView } from '../figures/heatmap-view.js';
import { attn } from '../runtime.js';
import { jsonText, matricesToLongCSV } from '../export.js';
import { SIGNED_NOTE, divergingName } from '../figures/colormap.js';
import { SVG_MAX_BYTES, TILE_GAP, modelViewSVG } from './attention-model-view-svg.js';

export { SVG_MAX_BYTES };

const CSS = `
  .grid { display: grid; gap: ${TILE_GAP}px; }
  .layer { display: flex; flex-wrap: wrap; gap: ${TILE_GAP}px; align-items: start; }
  .layer-name { font-size: 12px; width: 100%; margin-top: 4px; }`;

export class AttentionModelView extends AwElement {
  static attributes = {
    src: { property: false }, // read when it changes (the model loaded)
    ids: { property: false }, // ids and tokens: below (a property set from JS wins over the attribute)
    tokens: { property: false },
    steps: { property: false }, // the id of the <attention-steps> a clicked head opens in
    // The colour map of the tiles, on screen and in exports: 'viridis' (default) | 'cividis' | 'gray'.
    palette: { type: 'palette' },
    // The map of a signed layer's tiles (a conv or DeltaNet layer): 'blue-orange' (default) | 'red-blue'.
    diverging: { type: 'diverging' },
    // 'heads' (default: every layer × head) or 'rollout' (one tile per layer: the attention rollout through it).
    mode: { type: 'enum', values: ['heads', 'rollout'], default: 'heads' },
  };

  build() {
    this._grid = h('div', { class: 'grid' });
    this._readout = h('div', {
      class: 'readout',
      'aria-live': 'polite',
      text: 'Click a head to open it step by step.',
    });
    this.shadowRoot.append(
      h('style', { text: CSS }),
      h(
        'div',
        { class: 'bar' },
        h('span', { class: 'title', text: 'Every layer and head' }),
        this.exportBar(),
      ),
      ...this.baseParts(),
      this._grid,
      this._readout,
    );
    this._tiles = [];
    this._model = null;
    this._ownModel = null; // loaded from src: ours to dispose
  }

  /** Renders (and first fires `ready`) once there is a model and a sequence to show. */
  refresh() {
    return this._model && this.ids?.length ? super.refresh() : false;
  }

  /** The TinyTransformer shown (set one the page holds, or use `src`). */
  get model() {
    return this._model;
  }
  set model(m) {
    this.#setModel(m, false);
  }

  get ids() {
    if (this._ids) return this._ids;
    const text = this.getAttribute('ids');
    return text
      ? text
          .trim()
          .split(/[\s,]+/)
          .map(Number)
      : null;
  }
  set ids(v) {
    this._ids = v ? Array.from(v, Number) : null;
    this.schedule();
  }

  get tokens() {
    if (this._tokens) return this._tokens;
    const text = this.getAttribute('tokens');
    return text ? text.trim().split(/\s+/) : (this.ids?.map(String) ?? []);
  }
  set tokens(v) {
    this._tokens = v ? Array.from(v, String) : null;
    this.schedule();
  }

  /**
   * The state: attributes (src, ids, tokens, steps, palette), ids/tokens set as properties, the
   * model's reference (`{ src }` when loaded from `src`; `{ config, source: 'set from JS' }` for a
   * model the page set: setting the state keeps the target's own model) and the layer last opened.
   */
  extraState() {
    const m = this._model;
    return {
      ids: this._ids ?? null,
      tokens: this._tokens ?? null,
      openedLayer: this._openedLayer ?? null,
      model: this.getAttribute('src')
        ? { src: this.getAttribute('src') }
        : m
          ? { config: plainConfig(m.config), source: 'set from JS' }
          : null,
    };
  }

  applyExtraState(s) {
    this._ids = Array.isArray(s.ids) ? s.ids.map(Number) : null;
    this._tokens = Array.isArray(s.tokens) ? s.tokens.map(String) : null;
    this._openedLayer = Number.isInteger(s.openedLayer) ? s.openedLayer : undefined;
  }

  attributeChangedCallback(name, old, value) {
    if (name === 'src' && value && value !== old) this.#load(value);
    super.attributeChangedCallback();
  }

  async #load(src) {
    try {
      await this.prepare();
      const response = await fetch(new URL(src, document.baseURI));
      if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
      this.#setModel(
        attn.TinyTransformer.fromSafetensors(new Uint8Array(await response.arrayBuffer())),
        true,
      );
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
    const m = this._model,
      ids = this.ids;
    if (!m || !ids || !ids.length) {
      this.showError(m ? 'Set ids: the sequence to show.' : '');
      return;
    }
    let attention, kinds;
    try {
      ({ attention, attentionKinds: kinds } = m.forward([ids], { attention: true }));
    } catch (error) {
      this.showError(`${error.code ?? 'ERROR'}: ${error.message}`);
      return;
    }
    const rollout = this.mode === 'rollout';
    const signed = attention.map((_, l) => Boolean(kinds?.[l]) && kinds[l] !== 'attention');
    const mixer = signed.indexOf(true);
    // The rollout multiplies row-stochastic maps: a signed layer's has no meaning there.
    this.showError(
      rollout && mixer >= 0
        ? `The rollout needs softmax attention in every layer: layer ${mixer} is a ${kinds[mixer]} layer.`
        : '',
    );
    if (rollout && mixer >= 0) return;
    this.#draw(rollout ? rolloutShown(attention, ids.length) : headsShown(attention, kinds, signed), ids);
  }

  // Draws `sh` (headsShown or rolloutShown, tiles per layer) as tiles on `ids`.
  #draw(sh, ids) {
    const T = ids.length,
      tokens = this.tokens;
    const key = `${sh.heads}|${sh.mode}|${sh.names}`;
    if (this._tilesKey !== key) this.#buildTiles(sh);
    this._tilesKey = key;
    this.shown = { ids, tokens, T, ...sh };
    const diverging = divergingName(this.diverging);
    // A signed layer's scale: ±max|a| over its maps (every head of the layer on one scale).
    const scale = sh.layers.map((d, l) =>
      sh.signed[l] ? d.reduce((a, v) => Math.max(a, Math.abs(v)), 1e-6) : 1,
    );
    for (const t of this._tiles) {
      const data = sh.layers[t.layer].subarray(t.head * T * T, (t.head + 1) * T * T);
      const m = scale[t.layer];
      t.view.width = AttentionModelView.tileWidth(this.contentWidth, sh.heads[t.layer]);
      t.view.set({
        data,
        rows: T,
        cols: T,
        rowLabels: tokens,
        colLabels: tokens,
        rowAxis: 'query',
        colAxis: sh.mode === 'rollout' ? 'input' : 'key',
        domain: sh.signed[t.layer]
          ? { lo: -m, hi: m, map: diverging, caption: 'signed' }
          : { lo: 0, hi: 1, map: this.palette },
        values: 'never',
        maxCell: 14,
        minRowHeight: 0,
        legend: sh.signed[t.layer] && t.head === 0, // a signed layer's own scale
        title: sh.titles[t.layer](t.head),
      });
    }
  }

  /** Each tile's CSS width for an available width W and H heads. */
  static tileWidth(W, H) {
    return Math.min(240, Math.max(130, Math.floor(W / Math.min(H, 4)) - 10));
  }

  #buildTiles(sh) {
    this._tiles = [];
    const rows = [];
    sh.heads.forEach((H, layer) => {
      const row = h(
        'div',
        { class: 'layer', role: 'group', 'aria-label': sh.names[layer] },
        h('div', { class: 'layer-name muted', text: sh.names[layer] }),
      );
      for (let head = 0; head < H; head++) {
        const canvas = h('canvas', { 'aria-label': sh.labels[layer](head) });
        const view = new HeatmapView(canvas, {
          host: this,
          onClick: () => {
            if (sh.mode === 'heads' && !sh.signed[layer]) this.open(layer, head);
            else if (sh.signed[layer])
              this._readout.textContent = `${sh.names[layer]}: no softmax steps to open; ${SIGNED_NOTE}.`;
          },
        });
        row.append(canvas);
        this._tiles.push({ layer, head, view });
      }
      rows.push(row);
    });
    this._grid.replaceChildren(...rows);
  }

  /** Opens layer/head in the <attention-steps> named by `steps` (if any) and emits head-select. */
  open(layer, head) {
    const m = this._model,
      ids = this.ids;
    this._readout.textContent = `Layer ${layer}, head ${head}${this.getAttribute('steps') ? ': opened step by step below.' : '.'}`;
    const target = this.getAttribute('steps') && document.getElementById(this.getAttribute('steps'));
    if (target && m) {
      const { trace } = m.forward([ids], { attention: false, trace: { layers: [layer] } });
      target.trace = {
        tokens: this.tokens,
        steps: trace[layer],
        heads: this.shown?.heads[layer] ?? m.config.numHeads,
        dModel: m.config.dModel,
        causal: m.config.causal,
      };
      target.setAttribute('head', String(head));
      target.setAttribute('step', 'weights');
    }
    this._openedLayer = layer;
    this.emit('head-select', { layer, head });
  }

  /**
   * Every layer × head (or one layer: option `layer`) as an SVG document: the tiles as on screen, one
   * colour bar for the softmax layers (one scale, 0…1), each signed layer's own bar in its first tile.
   * Options: width (CSS px), fontSize (px), layer, maxBytes (default 8 MB). A figure over maxBytes is
   * not returned: it throws an Error (code 'SVG_TOO_LARGE') whose message gives its size and offers
   * one layer.
   */
  toSVG(options = {}) {
    const sh = this.shown;
    if (!sh || this._tiles.length !== sh.heads.reduce((a, b) => a + b, 0))
      throw new Error('toSVG: nothing is drawn yet (set a model and ids, wait for ready)');
    return modelViewSVG(this, sh, this._tiles, options);
  }

  /** The SVG button: the whole model, or (when that is too large) the layer last opened, and why. */
  svgForDownload() {
    try {
      return { svg: this.toSVG() };
    } catch (error) {
      if (error.code !== 'SVG_TOO_LARGE' || this.shown.L < 2) {
        this.showError(error.message);
        return { svg: '' };
      }
      const layer = this._openedLayer ?? 0;
      try {
        const svg = this.toSVG({ layer });
        this._readout.textContent = `${error.message.split(':')[0]}: saved layer ${layer} only (click a head to choose its layer).`;
        return { svg, suffix: `-layer${layer}` };
      } catch (e2) {
        this.showError(e2.message);
        return { svg: '' };
      }
    }
  }

  getCSV() {
    const s = this.shown;
    if (!s) return '';
    return matricesToLongCSV(
      s.layers.flatMap((data, l) =>
        Array.from({ length: s.heads[l] }, (_, hd) => ({
          key: `layer ${l} head ${hd}`,
          data: data.subarray(hd * s.T * s.T, (hd + 1) * s.T * s.T),
          rows: s.T,
          cols: s.T,
          rowLabels: s.tokens,
          colLabels: s.tokens,
        })),
      ),
      'layer_head',
    );
  }
  getJSON() {
    return jsonText(
      withState(
        this,
        this.shown ? { tokens: this.shown.tokens, layers: this.shown.layers.map((d) => Array.from(d)) } : {},
      ),
    );
  }
  pngCanvas() {
    return this._tiles[0]?.view.canvas ?? h('canvas');
  }
}

/** A model's config as plain JSON (null when it holds something JSON cannot: a BigInt, a cycle). */
function plainConfig(c) {
  try {
    return JSON.parse(JSON.stringify(c ?? null, (k, v) => (ArrayBuffer.isView(v) ? Array.from(v) : v)));
  } catch {
    return null;
  }
}

/** What the heads mode draws: each layer's heads (its map's own count), names and tile labels. */
function headsShown(attention, kinds, signed) {
  const heads = attention.map((w) => w.shape[1]);
  const KNOWN = { conv: 'short convolution', delta: 'gated DeltaNet' };
  const what = (l) => KNOWN[kinds[l]] ?? `${kinds[l]} layer`;
  return {
    mode: 'heads',
    layers: attention.map((w) => w.data),
    L: attention.length,
    H: Math.max(...heads),
    heads,
    kinds: attention.map((_, l) => kinds?.[l] ?? 'attention'),
    signed,
    names: heads.map((_, l) => (signed[l] ? `Layer ${l} · ${what(l)} (signed)` : `Layer ${l}`)),
    titles: signed.map((sg, l) =>
      sg && heads[l] === 1 ? () => `L${l} · ${kinds[l]}` : (hd) => `L${l} · H${hd}`,
    ),
    labels: signed.map((sg, l) =>
      sg
        ? (hd) => `Layer ${l} (${what(l)}), map ${hd}: ${SIGNED_NOTE}.`
        : (hd) => `Layer ${l}, head ${hd}: attention weights. Enter opens it step by step.`,
    ),
  };
}

/** What the rollout mode draws: one tile per layer, the attention rollout through layers 0 … l. */
function rolloutShown(attention, T) {
  const L = attention.length;
  const R = attn.attentionRollout(attention).data;
  return {
    mode: 'rollout',
    layers: Array.from({ length: L }, (_, l) => R.slice(l * T * T, (l + 1) * T * T)),
    L,
    H: 1,
    heads: Array(L).fill(1),
    kinds: Array(L).fill('attention'),
    signed: Array(L).fill(false),
    names: Array.from({ length: L }, (_, l) => `Layer ${l}`),
    titles: Array.from({ length: L }, (_, l) => () => `Rollout to L${l}`),
    labels: Array.from(
      { length: L },
      (_, l) => () =>
        `Attention rollout through layers 0 to ${l}: how much each input can reach each position.`,
    ),
  };
}
