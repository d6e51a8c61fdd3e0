// <head-scores>: which heads behave like previous-token, duplicate-token and induction heads on a
// sequence — model.headScores(ids) (docs/interpretability.md), one layer × head grid per
// kind (0 … 1). Click (or Enter on) a head to emit head-select { layer, head, kind, score }.
//
// The model: `src` (a TinyTransformer safetensors file: a preset) or the `model` property (a
// TinyTransformer or PretrainedModel the page holds). The sequence: `ids`, optional `tokens`.
// `kinds`: which scores, comma- or space-separated (default all three). One forward runs, in the page.
// `steps`: the id of an <attention-steps> to open a selected head in (TinyTransformer models).
// Properties: model, ids, tokens, vocab, kinds, shown ({ ids, L, H, kinds, scores: { kind: Float32Array (L·H) } }).
// Events: head-select, cell-hover { kind, layer, head, score }, model-load, ready.
import { h, withState } from '../base-element.js';
import { HeatmapView } from '../figures/heatmap-view.js';
import { composeCanvases, jsonText, toNested } from '../export.js';
import { formatNumber, themeOf } from '../figures/draw-util.js';
import { screenLayoutSVG } from '../figures/svg-layout.js';
import { InterpElement, modelShape } from './interp-base.js';

export const HEAD_SCORE_KINDS = Object.freeze(['previous-token', 'duplicate-token', 'induction']);

const CSS = `
  .maps { display: flex; flex-wrap: wrap; gap: 10px 16px; align-items: start; }
  .kind { min-width: 0; max-width: 100%; }
  .kind p { margin: 0 0 4px; max-width: 34ch; }`;

const MEANING = {
  'previous-token': 'weight on the token just before',
  'duplicate-token': 'weight on earlier copies of the same token',
  induction: 'weight on the token after an earlier copy',
};

/** The `kinds` attribute's type: the kinds asked for (commas or spaces; unknown ones and repeats
 * dropped), else all; an array is written with commas. */
const KINDS = {
  read(text) {
    const asked = text ? text.split(/[\s,]+/).filter((k) => HEAD_SCORE_KINDS.includes(k)) : [];
    return asked.length ? [...new Set(asked)] : [...HEAD_SCORE_KINDS];
  },
  write: (el, name, v) => el.setAttribute(name, Array.isArray(v) ? v.join(',') : String(v)),
};

export class HeadScores extends InterpElement {
  static attributes = {
    src: { property: false }, // src, ids, tokens: InterpElement's
    ids: { property: false },
    tokens: { property: false },
    kinds: { type: KINDS }, // the kinds shown (default all three)
    steps: { property: false }, // the id of the <attention-steps> a selected head opens in
  };

  build() {
    this._summary = h('p', { class: 'muted small', 'aria-live': 'polite' });
    this._maps = h('div', { class: 'maps' });
    this._readout = h('div', {
      class: 'readout',
      'aria-live': 'polite',
      text: 'Hover or focus a head for its score; click or press Enter to select it.',
    });
    this.shadowRoot.append(
      h('style', { text: CSS }),
      h('div', { class: 'bar' }, h('span', { class: 'title', text: 'Head-type scores' }), this.exportBar()),
      ...this.baseParts(),
      this._summary,
      this._maps,
      this._readout,
    );
    this._panels = new Map(); // kind → { section, note, canvas, view }
  }

  /** Renders (and first fires `ready`) once there is a model and a sequence. */
  refresh() {
    return this._model && this.ids?.length ? super.refresh() : false;
  }

  get shown() {
    return this._shown ?? null;
  }

  render() {
    const m = this._model,
      ids = this.ids,
      kinds = this.kinds;
    let scores;
    try {
      scores = m.headScores(ids, { kinds });
    } catch (error) {
      this.showError(`${error.code ?? 'ERROR'}: ${error.message}`);
      this._shown = null;
      this._maps.hidden = true;
      return;
    }
    this.showError('');
    this._maps.hidden = false;
    const { L, H } = modelShape(m);
    const data = Object.fromEntries(kinds.map((k) => [k, Float32Array.from(scores[k].data)]));
    this._shown = { ids: ids.slice(), tokens: this.tokens, L, H, kinds, scores: data };
    const rowLabels = Array.from({ length: L }, (_, l) => `L${l}`),
      colLabels = Array.from({ length: H }, (_, hd) => `H${hd}`);
    const width = Math.min(this.contentWidth, Math.max(150, 60 + H * 46));
    const tops = [];
    for (const kind of HEAD_SCORE_KINDS) {
      if (!kinds.includes(kind)) {
        this._panels.get(kind)?.section.remove();
        continue;
      }
      const p = this.#panel(kind);
      const d = data[kind];
      const undefinedKind = d.every((v) => Number.isNaN(v));
      p.note.textContent = undefinedKind
        ? `No position counts on these ids (${kind === 'previous-token' ? 'one token' : 'no repeated token'}): the score is undefined (NaN) for every head.`
        : `Mean ${MEANING[kind]}, per layer and head (0 to 1).`;
      p.canvas.hidden = undefinedKind;
      p.view.width = width;
      p.view.set({
        data: d,
        rows: L,
        cols: H,
        rowLabels,
        colLabels,
        rowAxis: 'layer',
        colAxis: 'head',
        domain: { lo: 0, hi: 1, map: 'viridis' },
        values: 'auto',
        decimals: 2,
        maxCell: 46,
        minRowHeight: 18,
        title: kind,
      });
      p.canvas.setAttribute(
        'aria-label',
        `${kind} scores: ${L} layers × ${H} heads. Arrow keys move between heads; Enter selects one.`,
      );
      if (!undefinedKind) {
        let best = 0;
        for (let i = 1; i < d.length; i++) if (d[i] > d[best] || Number.isNaN(d[best])) best = i;
        tops.push(`${kind} L${Math.floor(best / H)} H${best % H} (${formatNumber(d[best], 3)})`);
      }
    }
    this._maps.replaceChildren(...kinds.map((k) => this._panels.get(k).section));
    this._summary.textContent = `${L} layers × ${H} heads on ${ids.length} tokens. Highest: ${tops.length ? tops.join('; ') : 'none defined'}.`;
  }

  #panel(kind) {
    let p = this._panels.get(kind);
    if (p) return p;
    const canvas = h('canvas');
    const view = new HeatmapView(canvas, {
      host: this,
      onHover: (c) => this.#hover(kind, c),
      onClick: (c) => this.select(c.row, c.col, kind),
    });
    const note = h('p', { class: 'muted small' });
    const section = h('section', { class: 'kind', 'aria-label': `${kind} scores` }, note, canvas);
    p = { section, note, canvas, view };
    this._panels.set(kind, p);
    return p;
  }

  #hover(kind, cell) {
    if (!cell) {
      this.showTooltip(0, 0, null);
      return;
    }
    const score = cell.value;
    this._readout.textContent = `${kind}: layer ${cell.row}, head ${cell.col}: ${formatNumber(score, 4)}`;
    const p = this._panels.get(kind).view.cellCenter(cell.row, cell.col);
    this.showTooltip(p.x, p.y, [
      `${kind}`,
      `layer ${cell.row} · head ${cell.col}: ${formatNumber(score, 4)}`,
    ]);
    this.emit('cell-hover', { kind, layer: cell.row, head: cell.col, score });
  }

  /** Selects a head: the readout says so and head-select { layer, head, kind, score } is emitted. */
  select(layer, head, kind = this.kinds[0]) {
    const s = this._shown;
    const score = s?.scores[kind] ? s.scores[kind][layer * s.H + head] : NaN;
    const opened = s ? this.openInSteps(layer, head, s.ids) : false;
    this._readout.textContent = `Selected layer ${layer}, head ${head} (${kind} ${formatNumber(score, 4)})${opened ? ': opened step by step.' : '.'}`;
    this.emit('head-select', { layer, head, kind, score });
  }

  getCSV() {
    const s = this._shown;
    if (!s) return '';
    const lines = ['kind,layer,head,score'];
    for (const k of s.kinds)
      for (let i = 0; i < s.L * s.H; i++)
        lines.push(
          `${k},${Math.floor(i / s.H)},${i % s.H},${Number.isFinite(s.scores[k][i]) ? Math.fround(s.scores[k][i]) : 'NaN'}`,
        );
    return `${lines.join('\n')}\n`;
  }

  getJSON() {
    const s = this._shown;
    if (!s) return jsonText(withState(this, {}));
    return jsonText(
      withState(this, {
        kind: 'head-scores',
        ids: s.ids,
        tokens: s.tokens,
        layers: s.L,
        heads: s.H,
        scores: Object.fromEntries(s.kinds.map((k) => [k, toNested(s.scores[k], s.L, s.H)])),
      }),
    );
  }

  #views() {
    return this._shown
      ? this._shown.kinds
          .map((k) => this._panels.get(k))
          .filter((p) => !p.canvas.hidden)
          .map((p) => p.view)
      : [];
  }

  /** The grids as an SVG document (vector cells, laid out as on screen; the scores and state in <metadata>). */
  toSVG(options = {}) {
    const s = this._shown,
      views = this.#views();
    if (!s || !views.length)
      throw new Error('toSVG: nothing is drawn yet (set a model and ids, wait for ready)');
    return screenLayoutSVG(themeOf(this), views, {
      width: options.width,
      fontSize: options.fontSize,
      title: `Head-type scores: ${s.L} layers × ${s.H} heads on ${s.ids.length} tokens`,
      state: { widget: 'head-scores', ids: s.ids, kinds: s.kinds, scores: s.scores, widgetState: this.state },
    });
  }

  /** What printing replaces with the SVG figure (print.js): the grids. */
  printParts() {
    return [this._maps];
  }

  pngCanvas() {
    const canvases = this.#views().map((v) => v.canvas);
    if (!canvases.length) return composeCanvases([], themeOf(this).bgSolid);
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
