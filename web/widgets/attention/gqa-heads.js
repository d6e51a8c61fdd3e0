// <gqa-heads>: grouped-query attention (GQA, Llama 2/3, Mistral; MQA when kv-heads = 1). H query
// heads share H_kv key/value heads: query head h reads key/value head ⌊h / (H / H_kv)⌋ (Hugging
// Face's repeat_kv order). A diagram shows the groups; below it each query head's causal attention
// weights, grouped by the key/value head they share, from the library's
// scaledDotProductAttention(q, k, v, { enableGQA: true, causal: true }) on seeded
// q (1, H, T, 8) and k, v (1, H_kv, T, 8). A count that does not divide shows the library's error.
//
// Attributes: heads (H, default 8, 1…32), kv-heads (H_kv, default 2), length (T, default 10, 1…32),
//             seed (1: q, k, v = seededNormal(shape, seed), seed + 1, seed + 2).
// Properties: heads, kvHeads, length, seed, groups (number[][]: the query heads of each key/value
//             head; null while an error is shown), weights(head) → Float32Array (T·T), shown.
// Events: cell-hover { head, kvHead, row, col, value }; ready.
import { AwElement, h, withState } from '../base-element.js';
import { HeatmapView } from '../figures/heatmap-view.js';
import { SERIES_COLORS } from '../figures/charts.js';
import { composeCanvases, jsonText, matricesToLongCSV, toNested } from '../export.js';
import { exactNumber, formatNumber, themeOf } from '../figures/draw-util.js';
import { attn } from '../runtime.js';
import { screenLayoutSVG } from '../figures/svg-layout.js';

const DK = 8;

const GQA_CSS = `
.groups { display: flex; flex-wrap: wrap; gap: 10px; list-style: none; margin: 4px 0 12px; padding: 0; }
.group { border: 2px solid var(--g); border-radius: 8px; padding: 6px 8px; min-width: 120px;
  background: color-mix(in srgb, var(--g) 8%, transparent); }
.group .kv { font-weight: 650; font-size: 13px; display: flex; align-items: center; gap: 6px; }
.group ul { display: flex; flex-wrap: wrap; gap: 4px; list-style: none; margin: 6px 0 0; padding: 0; }
.group ul li { font-family: var(--aw-mono, ui-monospace, Menlo, monospace); font-size: 12px; padding: 1px 6px;
  border: 1px solid var(--g); border-radius: 4px; }
.maps { display: flex; flex-direction: column; gap: 10px; }
.mapgroup { border-left: 4px solid var(--g); padding-left: 10px; }
.mapgroup h3 { margin: 0 0 4px; font-size: 13px; font-weight: 650; }
.tiles { display: flex; flex-wrap: wrap; gap: 8px 12px; }
`;

export class GqaHeads extends AwElement {
  static attributes = {
    heads: { type: 'int', default: 8, min: 1, max: 32 },
    'kv-heads': { type: 'int', default: 2, min: 1, max: 32 },
    length: { type: 'int', default: 10, min: 1, max: 32 },
    seed: { type: 'int', default: 1, min: 0, max: 2 ** 31 - 3 },
  };

  constructor() {
    super();
    this._views = [];
  }

  build() {
    this._summary = h('p', { class: 'muted small' });
    this._diagram = h('ul', { class: 'groups', 'aria-label': 'Which query heads share each key/value head' });
    this._maps = h('div', { class: 'maps' });
    this._note = h('p', {
      class: 'muted small',
      text: 'Colour: attention weight from 0 (dark purple) to 1 (yellow); keys after the query are masked (causal).',
    });
    this._readout = h('div', {
      class: 'readout',
      'aria-live': 'polite',
      text: 'Hover or focus a cell for its weight.',
    });
    this._body = h('div', {}, this._diagram, this._note, this._maps, this._readout);
    this.shadowRoot.append(
      h('style', { text: GQA_CSS }),
      h(
        'div',
        { class: 'bar' },
        h('span', { class: 'title', text: 'Grouped-query attention: heads sharing keys and values' }),
        this.exportBar(),
      ),
      this._summary,
      ...this.baseParts(),
      this._body,
    );
  }

  /** The query heads of each key/value head; null while an error is shown. */
  get groups() {
    return this._shown ? this._shown.groups.map((g) => g.slice()) : null;
  }
  get shown() {
    return this._shown || null;
  }

  /** One query head's weights, (T, T) row-major. */
  weights(head) {
    const s = this._shown;
    if (!s) return null;
    if (!Number.isInteger(head) || head < 0 || head >= s.H)
      throw new RangeError(`head must be an integer in [0, ${s.H - 1}], got ${head}`);
    return s.weights.slice(head * s.T * s.T, (head + 1) * s.T * s.T);
  }

  render() {
    const H = this.heads,
      Hkv = this.kvHeads,
      T = this.length,
      seed = this.seed;
    let weights;
    try {
      const q = attn.seededNormal([1, H, T, DK], seed); // (1, H, T, 8)
      const k = attn.seededNormal([1, Hkv, T, DK], seed + 1); // (1, H_kv, T, 8)
      const v = attn.seededNormal([1, Hkv, T, DK], seed + 2);
      weights = Float32Array.from(
        attn.scaledDotProductAttention(q, k, v, { enableGQA: true, causal: true }).weights.data,
      ); // (1, H, T, T)
    } catch (e) {
      this.showError(e.message);
      this._shown = null;
      this._body.hidden = true;
      this._summary.textContent = `${H} query heads, ${Hkv} key/value heads: not a valid grouping.`;
      delete this.dataset.groups;
      return;
    }
    this.showError('');
    this._body.hidden = false;
    const size = H / Hkv;
    const groups = Array.from({ length: Hkv }, (_, g) =>
      Array.from({ length: size }, (_, i) => g * size + i),
    );
    this._shown = { H, Hkv, T, seed, groups, weights };
    this.dataset.groups = JSON.stringify(groups);
    this._summary.textContent =
      `${H} query heads share ${Hkv} key/value head${Hkv > 1 ? 's' : ''}: ${size} query head${size > 1 ? 's' : ''} per group` +
      `${Hkv === 1 ? ' (multi-query attention)' : Hkv === H ? ' (plain multi-head attention)' : ''}. Query head h reads key/value head ⌊h / ${size}⌋, ` +
      `so the K/V cache holds ${Hkv} heads instead of ${H} (${formatNumber(Hkv / H, 3)}×). Heads of a group see the same keys through different queries.`;
    this.#diagram();
    this.#heatmaps();
  }

  #diagram() {
    const s = this._shown;
    this._diagram.replaceChildren(
      ...s.groups.map((g, gi) => {
        const li = h(
          'li',
          { class: 'group' },
          h(
            'div',
            { class: 'kv' },
            h('span', { class: 'swatch', 'aria-hidden': 'true' }),
            h('span', { text: `K/V head ${gi}` }),
          ),
          h(
            'ul',
            { 'aria-label': `Query heads reading K/V head ${gi}` },
            ...g.map((qh) => h('li', { text: `q head ${qh}` })),
          ),
        );
        li.style.setProperty('--g', SERIES_COLORS[gi % 6]);
        li.querySelector('.swatch').style.background = SERIES_COLORS[gi % 6];
        return li;
      }),
    );
  }

  #heatmaps() {
    const s = this._shown,
      T = s.T,
      n = T * T,
      size = s.H / s.Hkv;
    const labels = Array.from({ length: T }, (_, i) => String(i));
    const W = this.contentWidth - 14;
    const perRow = Math.max(1, Math.min(size, Math.floor((W + 12) / 150)));
    const tileW = Math.max(120, Math.min(260, Math.floor((W + 12) / perRow) - 12));
    // One HeatmapView per query head, reused while the head count stays.
    if (this._views.length !== s.H) {
      this._views = Array.from({ length: s.H }, (_, hd) => {
        const canvas = h('canvas', { role: 'img' });
        return {
          canvas,
          view: new HeatmapView(canvas, {
            host: this,
            onHover: (c) => this.#hover(hd, c),
            onClick: (c) => this.#hover(hd, c),
          }),
        };
      });
    }
    this._maps.replaceChildren(
      ...s.groups.map((g, gi) => {
        const sec = h(
          'section',
          { class: 'mapgroup', 'aria-label': `Query heads ${g.join(', ')}, sharing K/V head ${gi}` },
          h('h3', { text: `K/V head ${gi}: query heads ${g.join(', ')}` }),
          h('div', { class: 'tiles' }, ...g.map((hd) => this._views[hd].canvas)),
        );
        sec.style.setProperty('--g', SERIES_COLORS[gi % 6]);
        return sec;
      }),
    );
    for (let hd = 0; hd < s.H; hd++) {
      const { canvas, view } = this._views[hd],
        gi = Math.floor(hd / size);
      const data = s.weights.slice(hd * n, (hd + 1) * n);
      for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) data[i * T + j] = -Infinity; // causal: drawn as masked
      view.width = tileW;
      view.set({
        data,
        rows: T,
        cols: T,
        rowLabels: labels,
        colLabels: labels,
        rowAxis: 'query',
        colAxis: 'key',
        domain: { lo: 0, hi: 1, map: 'viridis' },
        values: 'never',
        maxCell: 24,
        minRowHeight: 0,
        legend: false,
        title: `q head ${hd} · K/V ${gi}`,
      });
      canvas.setAttribute(
        'aria-label',
        `Heatmap of query head ${hd} (K/V head ${gi}): causal attention weights over ${T} queries and ${T} keys. Arrow keys move between cells.`,
      );
    }
  }

  #hover(hd, cell) {
    if (!cell) {
      this.showTooltip(0, 0, null);
      return;
    }
    const s = this._shown,
      gi = Math.floor(hd / (s.H / s.Hkv));
    const w = s.weights[(hd * s.T + cell.row) * s.T + cell.col];
    const masked = cell.col > cell.row;
    this._readout.textContent = `query head ${hd} (K/V head ${gi}), query ${cell.row}, key ${cell.col}: ${masked ? 'masked (causal), weight 0' : `weight ${exactNumber(w)}`}`;
    const p = this._views[hd].view.cellCenter(cell.row, cell.col);
    this.showTooltip(p.x, p.y, [
      `q head ${hd} · K/V ${gi}`,
      `query ${cell.row} · key ${cell.col}: ${masked ? 'masked' : formatNumber(w, 4)}`,
    ]);
    this.emit('cell-hover', { head: hd, kvHead: gi, row: cell.row, col: cell.col, value: w });
  }

  getCSV() {
    const s = this._shown;
    if (!s) return '';
    const n = s.T * s.T;
    return matricesToLongCSV(
      Array.from({ length: s.H }, (_, hd) => ({
        key: hd,
        rows: s.T,
        cols: s.T,
        data: s.weights.subarray(hd * n, (hd + 1) * n),
      })),
      'query_head',
    );
  }

  getJSON() {
    const s = this._shown;
    if (!s) return jsonText(null);
    const n = s.T * s.T;
    return jsonText(
      withState(this, {
        kind: 'grouped-query-attention',
        heads: s.H,
        kvHeads: s.Hkv,
        length: s.T,
        seed: s.seed,
        causal: true,
        groups: s.groups,
        weights: Array.from({ length: s.H }, (_, hd) =>
          toNested(s.weights.subarray(hd * n, (hd + 1) * n), s.T, s.T),
        ),
      }),
    );
  }

  /** Every query head's weights as an SVG document (vector cells; the state in <metadata>), laid out as on screen. */
  toSVG(options = {}) {
    const s = this._shown;
    if (!s || !this._views.length) throw new Error('toSVG: nothing is drawn yet (wait for the ready event)');
    return screenLayoutSVG(
      themeOf(this),
      this._views.map((v) => v.view),
      {
        width: options.width,
        fontSize: options.fontSize,
        title: `Grouped-query attention: ${s.H} query heads sharing ${s.Hkv} key/value heads, ${s.T} tokens`,
        state: {
          widget: 'gqa-heads',
          heads: s.H,
          kvHeads: s.Hkv,
          length: s.T,
          seed: s.seed,
          groups: s.groups,
          widgetState: this.state,
        },
      },
    );
  }

  pngCanvas() {
    if (!this._shown) return composeCanvases([], themeOf(this).bgSolid);
    const canvases = this._views.map((v) => v.canvas);
    const o = canvases[0].getBoundingClientRect();
    return composeCanvases(
      canvases.map((c) => {
        const r = c.getBoundingClientRect();
        return { canvas: c, x: r.left - o.left, y: r.top - o.top };
      }),
      themeOf(this).bgSolid,
    );
  }
}
