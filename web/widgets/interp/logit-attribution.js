// <logit-attribution>: which parts of the model write a prediction — model.logitAttribution(ids,
// { position, token, against }) (docs/interpretability.md): the token embedding (with
// positions), each head (a hybrid model's conv layer as one part), each MLP and the constant biases,
// each one's share of the logit difference
// logits[position, token] − logits[position, against], sorted by |share| as bars (positive in orange,
// negative in blue, the value written beside each) and, below them, every component in a data table.
// The shares add up to the logit difference. Click a head's bar (or its button in the table) to emit
// head-select { layer, head, value }.
//
// The model: `src` (a TinyTransformer safetensors file: a preset) or the `model` property (a
// TinyTransformer or PretrainedModel). The sequence: `ids`, optional `tokens`.
// `position` (default the last), `token` (default the model's top prediction there), `against`
// (default its runner-up; `none`: attribute the logit of `token` alone), `limit` (bars drawn, default 12;
// the table lists all), `steps` (the id of an <attention-steps> to open a selected head in). One
// forward runs, in the page.
// Properties: model, ids, tokens, vocab, shown ({ position, token, against, components: [{ name, kind,
// layer, head, value }] sorted, total, logitDiff, heads: Float32Array (L·H), mlp, embed, bias }).
// Events: head-select, model-load, ready.
import { h, withState } from '../base-element.js';
import { jsonText } from '../export.js';
import { formatNumber, themeOf } from '../figures/draw-util.js';
import { paintFigure } from '../figures/paint-canvas.js';
import { paintSvg } from '../figures/paint-svg.js';
import { jsonSafe, svgDocument, svgFigure } from '../figures/svg.js';
import { scratchContext } from '../figures/svg-core.js';
import {
  InterpElement,
  OPTIONAL_INT,
  logitsAt,
  modelShape,
  targetAttributes,
  tokenPicker,
  topIds,
} from './interp-base.js';
import { ROW_H, attributionList, barsGeometry } from './logit-attribution-list.js';

const CSS = `
  .controls { display: flex; flex-wrap: wrap; gap: 6px 14px; margin-bottom: 6px; }
  .table-wrap { overflow-x: auto; max-height: 260px; overflow-y: auto; margin-top: 8px; }
  table { border-collapse: collapse; font-size: 12.5px; min-width: 260px; }
  caption { text-align: left; font-weight: 600; padding: 2px 0 4px; }
  th, td { text-align: left; padding: 2px 10px 2px 4px; border-bottom: 1px solid color-mix(in srgb, currentColor 12%, transparent); }
  td.num { text-align: right; font-family: var(--aw-mono, ui-monospace, Menlo, monospace); }
  td button { min-height: 22px; padding: 0 6px; font-size: 12px; }`;

export class LogitAttribution extends InterpElement {
  static attributes = {
    src: { property: false }, // src, ids, tokens: InterpElement's
    ids: { property: false },
    tokens: { property: false },
    ...targetAttributes(), // position, token, against ('none': no comparison token)
    limit: { type: OPTIONAL_INT, default: 12, min: 1, none: true }, // bars drawn
    steps: { property: false }, // the id of the <attention-steps> a selected head opens in
  };

  build() {
    this._token = tokenPicker('Token', { onchange: (v) => (this.token = v) });
    this._against = tokenPicker('against', { none: true, onchange: (v) => (this.against = v) });
    this._summary = h('p', { class: 'muted small', 'aria-live': 'polite' });
    this._canvas = h('canvas', { role: 'img' });
    this._tbody = h('tbody');
    this._caption = h('caption', { text: 'Every component' });
    this._table = h(
      'table',
      {},
      this._caption,
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col', text: 'component' }),
          h('th', { scope: 'col', text: 'contribution' }),
          h('th', { scope: 'col', text: 'share of |total|' }),
        ),
      ),
      this._tbody,
    );
    this._readout = h('div', {
      class: 'readout',
      'aria-live': 'polite',
      text: 'Click a head’s bar to select it.',
    });
    this._canvas.addEventListener('click', (e) => {
      const c = this.#barAt(e.clientY);
      if (c?.kind === 'head') this.select(c.layer, c.head);
    });
    this._canvas.addEventListener('pointermove', (e) => {
      const c = this.#barAt(e.clientY);
      this.showTooltip(e.clientX, e.clientY, c ? [c.name, `${formatNumber(c.value, 4)}`] : null);
    });
    this._canvas.addEventListener('pointerleave', () => this.showTooltip(0, 0, null));
    this.shadowRoot.append(
      h('style', { text: CSS }),
      h(
        'div',
        { class: 'bar' },
        h('span', { class: 'title', text: 'Direct logit attribution' }),
        this.exportBar(),
      ),
      h('div', { class: 'controls' }, this._token.label, this._against.label),
      ...this.baseParts(),
      this._summary,
      this._canvas,
      h(
        'div',
        { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Every component, as a table' },
        this._table,
      ),
      this._readout,
    );
  }

  refresh() {
    return this._model && this.ids?.length ? super.refresh() : false;
  }

  get shown() {
    return this._shown ?? null;
  }

  render() {
    const m = this._model,
      ids = this.ids;
    const { L, H, V } = modelShape(m);
    const T = ids.length;
    const nameOf = (i) => this.tokenName(i);
    this._token.fill(V, nameOf);
    this._against.fill(V, nameOf);
    let a, position, token, against;
    try {
      position = this.position ?? T - 1;
      let ranked = null;
      const rank = () => (ranked ??= topIds(logitsAt(m, ids, Math.max(0, Math.min(T - 1, position))), 2));
      token = this.token ?? rank()[0];
      against = this.against === null ? undefined : (this.against ?? rank().find((t) => t !== token));
      a = m.logitAttribution(ids, { position, token, ...(against === undefined ? {} : { against }) });
    } catch (error) {
      this.showError(`${error.code ?? 'ERROR'}: ${error.message}`);
      this._shown = null;
      this._canvas.hidden = true;
      return;
    }
    this.showError('');
    this._canvas.hidden = false;
    this._token.set(this.token);
    this._against.set(this.against);
    const heads = Float32Array.from(a.heads.data),
      mlp = Float32Array.from(a.mlp.data);
    const hasMlp = (m.config?.mlp ?? true) !== false;
    const components = [{ name: 'embed', kind: 'embed', value: a.embed }];
    for (let l = 0; l < L; l++) {
      for (let hd = 0; hd < H; hd++)
        if (!Number.isNaN(heads[l * H + hd]))
          components.push({
            name: `L${l} H${hd}`,
            kind: 'head',
            layer: l,
            head: hd,
            value: heads[l * H + hd],
          });
      // a layer without heads (LFM2's short convolution): its output is one part
      const mixer = a.mixers?.data[l];
      if (mixer !== undefined && !Number.isNaN(mixer))
        components.push({ name: `L${l} CONV`, kind: 'mixer', layer: l, value: mixer });
      if (hasMlp) components.push({ name: `L${l} MLP`, kind: 'mlp', layer: l, value: mlp[l] });
    }
    components.push({ name: 'bias', kind: 'bias', value: a.bias });
    components.sort((x, y) => Math.abs(y.value) - Math.abs(x.value));
    this._shown = {
      ids: ids.slice(),
      position,
      token,
      against: against ?? null,
      L,
      H,
      components,
      total: a.total,
      logitDiff: a.logitDiff,
      heads,
      mlp,
      embed: a.embed,
      bias: a.bias,
    };
    const what =
      against === undefined
        ? `the logit of “${nameOf(token)}”`
        : `logit(“${nameOf(token)}”) − logit(“${nameOf(against)}”)`;
    this._summary.textContent =
      `At position ${position} (“${this.tokens[position] ?? ''}”): ${what} = ${formatNumber(a.logitDiff, 3)}` +
      `${this.token === undefined ? ` (token: the top prediction${this.against === undefined && against !== undefined ? ', against: the runner-up' : ''})` : ''}. ` +
      `The parts add up to ${formatNumber(a.total, 3)}; the largest is ${components[0].name} (${formatNumber(components[0].value, 3)}).`;
    this.#draw();
    this.#table();
  }

  /** The bars drawn: the `limit` largest by |value|. */
  #bars() {
    return this._shown.components.slice(0, this.limit);
  }

  #geometry(width) {
    return barsGeometry(this.#bars(), width);
  }

  // The bars' display list painted onto the canvas (the SVG paints the same list).
  #draw() {
    const W = Math.min(this.contentWidth, 640);
    const g = this.#geometry(W),
      theme = themeOf(this);
    paintFigure(this._canvas, W, g.height, theme, (ctx, th) => attributionList(ctx, th, g));
    const s = this._shown;
    this._canvas.setAttribute(
      'aria-label',
      `Bars: the ${g.bars.length} largest of ${s.components.length} components by size; ` +
        `${g.bars
          .slice(0, 3)
          .map((c) => `${c.name} ${formatNumber(c.value, 3)}`)
          .join(', ')}. The table below lists every component.`,
    );
    this._geo = g;
  }

  #barAt(clientY) {
    const g = this._geo;
    if (!g) return null;
    const y = clientY - this._canvas.getBoundingClientRect().top - g.top;
    const i = Math.floor(y / ROW_H);
    return y >= 0 && i < g.bars.length ? g.bars[i] : null;
  }

  #table() {
    const s = this._shown;
    const abs = Math.abs(s.total) || 1;
    this._caption.textContent = `Every component's contribution (sum ${formatNumber(s.total, 4)}; logit difference ${formatNumber(s.logitDiff, 4)})`;
    this._tbody.replaceChildren(
      ...s.components.map((c) => {
        const name =
          c.kind === 'head'
            ? h('button', {
                type: 'button',
                text: c.name,
                'aria-label': `${c.name}: select layer ${c.layer}, head ${c.head}`,
                onclick: () => this.select(c.layer, c.head),
              })
            : h('span', { text: c.name });
        return h(
          'tr',
          { 'data-component': c.name },
          h('td', {}, name),
          h('td', { class: 'num', text: formatNumber(c.value, 4) }),
          h('td', { class: 'num', text: `${formatNumber((100 * c.value) / abs, 1)} %` }),
        );
      }),
    );
  }

  /** Selects a head: head-select { layer, head, value }. */
  select(layer, head) {
    const s = this._shown;
    const value = s ? s.heads[layer * s.H + head] : NaN;
    const opened = s ? this.openInSteps(layer, head, s.ids) : false;
    this._readout.textContent = `Selected layer ${layer}, head ${head}: it writes ${formatNumber(value, 4)}${opened ? '; opened step by step' : ''}.`;
    this.emit('head-select', { layer, head, value });
  }

  getCSV() {
    const s = this._shown;
    if (!s) return '';
    return `component,kind,layer,head,value\n${s.components.map((c) => `${c.name},${c.kind},${c.layer ?? ''},${c.head ?? ''},${c.value}`).join('\n')}\n`;
  }

  getJSON() {
    const s = this._shown;
    if (!s) return jsonText(withState(this, {}));
    return jsonText(
      withState(this, {
        kind: 'logit-attribution',
        ids: s.ids,
        position: s.position,
        token: s.token,
        against: s.against,
        logitDiff: s.logitDiff,
        total: s.total,
        embed: s.embed,
        bias: s.bias,
        components: s.components,
        heads: Array.from({ length: s.L }, (_, l) => Array.from(s.heads.subarray(l * s.H, (l + 1) * s.H))),
        mlp: Array.from(s.mlp),
      }),
    );
  }

  /** The bars as an SVG document (as on screen; every component and the state in <metadata>). */
  toSVG() {
    const s = this._shown;
    if (!s || !this._geo)
      throw new Error('toSVG: nothing is drawn yet (set a model and ids, wait for ready)');
    const W = parseFloat(this._canvas.style.width) || 600;
    const g = this.#geometry(W),
      theme = themeOf(this),
      fig = svgFigure(theme, 1);
    fig.body.push(paintSvg(fig, attributionList(scratchContext(), theme, g)));
    return svgDocument(fig, {
      width: W,
      height: g.height,
      title: `Direct logit attribution at position ${s.position}: the ${g.bars.length} largest components`,
      state: jsonSafe({
        widget: 'logit-attribution',
        ids: s.ids,
        position: s.position,
        token: s.token,
        against: s.against,
        logitDiff: s.logitDiff,
        total: s.total,
        bars: g.bars,
        components: s.components,
        theme: theme.dark ? 'dark' : 'light',
        widgetState: this.state,
      }),
    });
  }

  pngCanvas() {
    return this._canvas;
  }
}
