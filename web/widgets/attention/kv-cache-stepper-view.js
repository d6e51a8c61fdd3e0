// The view of <kv-cache-stepper>: its layout below the title bar (the controls row it is given, then
// x, the cache's panels and the readouts), and the drawing of one state through its three
// HeatmapViews (x, the cached keys of the K/V head shown, the new query's weights), whose display
// lists paint the canvases and the SVG export. What is drawn comes from kv-cache-stepper-draw.js.
import { h } from '../base-element.js';
import { HeatmapView } from '../figures/heatmap-view.js';
import {
  emptyTexts,
  keysPanel,
  stepTexts,
  summaryText,
  weightsPanel,
  xPanel,
} from './kv-cache-stepper-draw.js';

const KV_CSS = `
.controls { display: flex; flex-wrap: wrap; gap: 8px 14px; align-items: center; margin: 0 0 10px; font-size: 13px; }
.controls label { display: inline-flex; align-items: center; gap: 6px; }
.controls .status { font-family: var(--aw-mono, ui-monospace, Menlo, monospace); }
.panels { display: flex; flex-wrap: wrap; gap: 12px 22px; align-items: flex-start; }
.panel { min-width: 0; }
.panel h3 { margin: 0 0 2px; font-size: 13px; font-weight: 650; }
.panel p { margin: 0 0 6px; font-size: 12.5px; max-width: 46ch; }
.empty { font-size: 13px; margin: 4px 0 8px; }
.check { margin-top: 6px; }
`;

/** One titled panel: its heading, an optional note, the canvas. */
const panel = (title, note, canvas) => h('div', { class: 'panel' }, h('h3', { text: title }), note, canvas);

export class KvStepperView {
  #x;
  #keys;
  #weights;
  #summary = h('p', { class: 'muted small' });
  #empty = h('p', { class: 'empty muted', text: 'The cache is empty. Press Step to feed token 0.' });
  #keysNote = h('p', { class: 'muted' });
  #wNote = h('p', { class: 'muted' });
  #xPanels;
  #cachePanels;
  #cost = h('div', { class: 'readout cost' });
  #check = h('div', { class: 'readout check' });
  #readout = h('div', {
    class: 'readout',
    'aria-live': 'polite',
    text: 'Hover or focus a cell for its value.',
  });
  #body;

  /**
   * @param {Element} host  the widget (its theme, its shadow root's focus)
   * @param {Element} controls  the controls row, shown first in the body
   * @param {(which: 'x' | 'keys' | 'weights', cell: object | null) => void} hover  a hovered, focused
   *   or clicked cell (null: none)
   */
  constructor(host, controls, hover) {
    const view = (which) =>
      new HeatmapView(h('canvas', { role: 'img' }), {
        host,
        onHover: (c) => hover(which, c),
        onClick: (c) => hover(which, c),
      });
    this.#x = view('x');
    this.#keys = view('keys');
    this.#weights = view('weights');
    this.#xPanels = h(
      'div',
      { class: 'panels' },
      panel(
        'The input sequence x',
        h('p', { class: 'muted', text: 'One row per token; the outlined row is fed next.' }),
        this.#x.canvas,
      ),
    );
    this.#cachePanels = h(
      'div',
      { class: 'panels' },
      panel('The cached keys', this.#keysNote, this.#keys.canvas),
      panel('The new query’s weights over every cached key', this.#wNote, this.#weights.canvas),
    );
    this.#body = h(
      'div',
      {},
      controls,
      this.#xPanels,
      this.#empty,
      this.#cachePanels,
      this.#cost,
      this.#check,
      this.#readout,
    );
  }

  /** The shadow root's content: the style, the title bar (with exportBar), the summary, baseParts, the body. */
  layout(exportBar, baseParts) {
    return [
      h('style', { text: KV_CSS }),
      h(
        'div',
        { class: 'bar' },
        h('span', { class: 'title', text: 'KV cache: decoding one token at a time' }),
        exportBar,
      ),
      this.#summary,
      ...baseParts,
      this.#body,
    ];
  }

  /**
   * The three HeatmapViews ({ x, keys, weights }), read-only, for the exports (their canvases,
   * options and layout); `x.opts` is null until the first draw.
   */
  get heatmaps() {
    return { x: this.#x, keys: this.#keys, weights: this.#weights };
  }

  /** Hides the body and says why in the summary (settings that make no valid module). */
  showInvalid(text) {
    this.#body.hidden = true;
    this.#summary.textContent = text;
  }

  /** Shows the body again (before a draw). */
  showValid() {
    this.#body.hidden = false;
  }

  /** The readout under the panels (a hovered cell's words). */
  set readout(text) {
    this.#readout.textContent = text;
  }

  /** Client coordinates of the centre of cell (row, col) of panel `which`. */
  cellCenter(which, row, col) {
    return this.heatmaps[which].cellCenter(row, col);
  }

  /** What printing replaces with the SVG figure: the panels. */
  printParts() {
    return [this.#xPanels, this.#cachePanels];
  }

  /**
   * Draws one state: `s` the session's config, t the cache's length, g the K/V head shown, W the
   * width available; after the first step `keys` (g's cached keys, (t, d_k)), `last` (the last step's
   * { weights, diff }) and `maxDifference`; `diverging` and `palette` the maps of the signed views and
   * of the weights.
   */
  draw({ s, t, g, W, keys, last, maxDifference, diverging, palette }) {
    this.#summary.textContent = summaryText(s);
    const x = xPanel(s, t, W, diverging);
    this.#x.width = x.width;
    this.#x.set(x.opts);
    this.#x.canvas.setAttribute('aria-label', x.label);
    this.#empty.hidden = t > 0;
    this.#cachePanels.hidden = t === 0;
    if (t === 0) {
      const e = emptyTexts(s);
      this.#cost.textContent = e.cost;
      this.#check.textContent = e.check;
      return;
    }
    this.#panel(this.#keys, this.#keysNote, keysPanel(s, keys, { t, g, W, map: diverging }));
    this.#panel(this.#weights, this.#wNote, weightsPanel(s, last.weights, { t, W, map: palette }));
    const texts = stepTexts(s, t, last.diff, maxDifference);
    this.#cost.replaceChildren(
      h('span', { text: texts.line }),
      h('span', { class: 'terms', text: texts.terms }),
    );
    this.#check.textContent = texts.check;
  }

  /** One heatmap and its note from a panel description ({ note, width, opts, label }). */
  #panel(view, note, p) {
    note.textContent = p.note;
    view.width = p.width;
    view.set(p.opts);
    view.canvas.setAttribute('aria-label', p.label);
  }
}
