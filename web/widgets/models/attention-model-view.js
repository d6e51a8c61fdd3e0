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
// Events: head-select { layer, head } (heads mode).
import { AwElement, h, withState } from '../base-element.js';
import { HeatmapView } from '../figures/heatmap-view.js';
import { attn } from '../runtime.js';
import { jsonText, matricesToLongCSV } from '../export.js';
import { themeOf } from '../figures/draw-util.js';
import { heatmapPanel, jsonSafe, svgDocument, svgFigure } from '../figures/svg.js';
import { figureLegend } from '../figures/display-list.js';
import { paintSvg } from '../figures/paint-svg.js';

/** The largest model-view SVG toSVG() writes (bytes); over it, it throws and offers one layer. */
export const SVG_MAX_BYTES = 8 * 1024 * 1024;
const TILE_GAP = 8;

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
    let attention;
    try {
      attention = m.forward([ids], { attention: true }).attention;
    } catch (error) {
      this.showError(`${error.code ?? 'ERROR'}: ${error.message}`);
      return;
    }
    this.showError('');
    const rollout = this.mode === 'rollout';
    const { numLayers: L } = m.config,
      H = rollout ? 1 : m.config.numHeads,
      T = ids.length,
      tokens = this.tokens;
    // Rollout: (L, T, T), layer l's tile the flow through layers 0 … l.
    const layers = rollout
      ? (() => {
          const R = attn.attentionRollout(attention).data;
          return Array.from({ length: L }, (_, l) => R.slice(l * T * T, (l + 1) * T * T));
        })()
      : attention.map((w) => w.data);
    if (this._tiles.length !== L * H || this._rollout !== rollout) this.#buildTiles(L, H, rollout);
    const tileW = AttentionModelView.tileWidth(this.contentWidth, H);
    this.shown = { ids, tokens, layers, T, L, H, mode: rollout ? 'rollout' : 'heads' };
    for (const t of this._tiles) {
      t.view.width = tileW;
      t.view.set({
        data: layers[t.layer].subarray(t.head * T * T, (t.head + 1) * T * T),
        rows: T,
        cols: T,
        rowLabels: tokens,
        colLabels: tokens,
        rowAxis: 'query',
        colAxis: rollout ? 'input' : 'key',
        domain: { lo: 0, hi: 1, map: this.palette },
        values: 'never',
        maxCell: 14,
        minRowHeight: 0,
        legend: false,
        title: rollout ? `Rollout to L${t.layer}` : `L${t.layer} · H${t.head}`,
      });
    }
  }

  /** Each tile's CSS width for an available width W and H heads. */
  static tileWidth(W, H) {
    return Math.min(240, Math.max(130, Math.floor(W / Math.min(H, 4)) - 10));
  }

  #buildTiles(L, H, rollout = false) {
    this._tiles = [];
    this._rollout = rollout;
    const rows = [];
    for (let layer = 0; layer < L; layer++) {
      const row = h(
        'div',
        { class: 'layer', role: 'group', 'aria-label': `Layer ${layer}` },
        h('div', { class: 'layer-name muted', text: `Layer ${layer}` }),
      );
      for (let head = 0; head < H; head++) {
        const canvas = h('canvas', {
          'aria-label': rollout
            ? `Attention rollout through layers 0 to ${layer}: how much each input can reach each position.`
            : `Layer ${layer}, head ${head}: attention weights. Enter opens it step by step.`,
        });
        const view = new HeatmapView(canvas, {
          host: this,
          onClick: () => {
            if (!rollout) this.open(layer, head);
          },
        });
        row.append(canvas);
        this._tiles.push({ layer, head, view });
      }
      rows.push(row);
    }
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
        heads: m.config.numHeads,
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
   * colour bar for all of them (one scale, 0…1). Options: width (CSS px), fontSize (px), layer,
   * maxBytes (default 8 MB). A figure over maxBytes is not returned: it throws an Error (code
   * 'SVG_TOO_LARGE') whose message gives its size and offers one layer.
   */
  toSVG(options = {}) {
    const sh = this.shown;
    if (!sh || this._tiles.length !== sh.L * sh.H)
      throw new Error('toSVG: nothing is drawn yet (set a model and ids, wait for ready)');
    const W = Math.max(160, Number(options.width) || this.contentWidth);
    const fontSize = Math.max(6, Math.min(48, Number(options.fontSize) || 12));
    const s = fontSize / 12;
    const layers = svgLayers(options.layer, sh.L);
    const theme = themeOf(this);
    const fig = svgFigure(theme, s);
    const tileW = AttentionModelView.tileWidth(W, sh.H);
    const panels = [];
    let y = 0,
      width = 0;
    for (const layer of layers) {
      // The layer's name (12 px, muted, 4 px above), then its tiles wrapped as the flex row wraps them.
      const name = `Layer ${layer}`;
      fig.body.push(
        paintSvg(fig, [
          { kind: 'text', x: 0, y: y + 4 + 12 * s, text: name, size: 12 * s, fill: theme.muted },
        ]),
      );
      y += 4 + Math.ceil(15 * s) + TILE_GAP;
      let x = 0,
        rowH = 0;
      for (let head = 0; head < sh.H; head++) {
        const { view } = this._tiles[layer * sh.H + head];
        const w = view.layout(tileW, s).w;
        if (x > 0 && x + w > W) {
          y += rowH + TILE_GAP;
          x = 0;
          rowH = 0;
        }
        const p = heatmapPanel(fig, view, { x, y, width: tileW });
        panels.push({ layer, head, rows: sh.T, cols: sh.T, cells: p.cells });
        width = Math.max(width, x + p.w);
        rowH = Math.max(rowH, p.h);
        x += p.w + TILE_GAP;
      }
      y += rowH + TILE_GAP;
    }
    // One colour bar: every tile shares the scale 0…1.
    const domain = { lo: 0, hi: 1, map: this.palette };
    const legend = figureLegend(y, width, domain, theme, s);
    fig.body.push(paintSvg(fig, legend.items));
    y += legend.h;
    const state = jsonSafe({
      widget: 'attention-model-view',
      palette: this.palette,
      ids: sh.ids,
      tokens: sh.tokens,
      L: sh.L,
      H: sh.H,
      T: sh.T,
      layers,
      domain,
      options: { width: W, fontSize, ...(layers.length === 1 && sh.L > 1 ? { layer: layers[0] } : {}) },
      panels,
      theme: theme.dark ? 'dark' : 'light',
      widgetState: this.state,
    });
    const svg = svgDocument(fig, {
      width: Math.max(width, 240),
      height: y,
      state,
      title: `Attention weights of ${layers.length === 1 ? `layer ${layers[0]}` : `all ${sh.L} layers`} × ${sh.H} heads on ${sh.T} tokens`,
    });
    checkSvgSize(svg, Number(options.maxBytes) || SVG_MAX_BYTES, layers, sh.L);
    return svg;
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
        Array.from({ length: s.H }, (_, hd) => ({
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

/** The layers toSVG draws: all L, or the one of option `layer` (an integer in 0…L−1). */
function svgLayers(layer, L) {
  if (layer === undefined || layer === null) return [...Array(L).keys()];
  const l = Number(layer);
  if (!Number.isInteger(l) || l < 0 || l >= L)
    throw new RangeError(`toSVG: layer must be an integer in 0…${L - 1}, not ${layer}`);
  return [l];
}

/**
 * Throws an Error (code 'SVG_TOO_LARGE', its size in `bytes`) when the figure of `layers` (of L) is
 * over `max` bytes of UTF-8, offering one layer (or the PNG export when it is one already).
 */
function checkSvgSize(svg, max, layers, L) {
  // Counted in UTF-16 units first: UTF-8 is at most 3 bytes per unit, so short figures skip encoding.
  const bytes = svg.length > max / 3 ? new TextEncoder().encode(svg).length : svg.length;
  if (bytes <= max) return;
  const mb = (b) => `${(b / 1048576).toFixed(1)} MB`;
  const e = new Error(
    `The ${layers.length === 1 ? `layer ${layers[0]}` : 'model view'} as SVG would be ${mb(bytes)}, over the limit of ${mb(max)}: ` +
      (layers.length > 1
        ? `export one layer instead, toSVG({ layer: n }) with n in 0…${L - 1}.`
        : 'use the PNG export.'),
  );
  e.code = 'SVG_TOO_LARGE';
  e.bytes = bytes;
  throw e;
}
