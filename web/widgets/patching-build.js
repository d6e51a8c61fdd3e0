// <patching-view>'s controls and parts, built once into its shadow root: the clean and corrupted
// inputs, the token pair, the component and the method, Run / Cancel / progress, the grid and, for
// attribution beside exact patching, the second grid, the scatter and the agreement line.
import { h } from './base-element.js';
import { HeatmapView } from './heatmap-view.js';
import { tokenPicker } from './interp-base.js';
import { hoverPatching, selectPatching } from './patching-draw.js';

const CSS = `
  .inputs { display: grid; grid-template-columns: auto minmax(0, 1fr); gap: 6px 8px; align-items: center; margin-bottom: 6px; }
  .inputs input { width: 100%; min-width: 0; font-family: var(--aw-mono, ui-monospace, Menlo, monospace); }
  .controls { display: flex; flex-wrap: wrap; gap: 6px 12px; align-items: center; margin: 6px 0; }
  .run { display: flex; flex-wrap: wrap; gap: 6px 10px; align-items: center; margin: 6px 0; }
  progress { width: 160px; max-width: 100%; height: 14px; }
  .scatter { position: relative; overflow: hidden; }`;

const select = (onchange, options) =>
  h('select', { onchange }, ...options.map(([value, text]) => h('option', { value, text })));

/** A labelled text input whose change sets the attribute `name`: [label, input]. */
function field(el, name, label) {
  const input = h('input', {
    type: 'text',
    id: `pv-${name}`,
    autocomplete: 'off',
    spellcheck: 'false',
    onchange: () => el.setAttribute(name, input.value.trim()),
  });
  return [h('label', { for: `pv-${name}`, text: label }), input];
}

/** The token pair, the component and the method (each an attribute of the element). */
function controls(el, setAttr) {
  el._token = tokenPicker('Token', { onchange: (v) => setAttr('token', v) });
  el._against = tokenPicker('against', { onchange: (v) => setAttr('against', v) });
  el._component = select(
    () => el.setAttribute('component', el._component.value),
    [
      ['head', 'each head (layer × head)'],
      ['residual', 'residual stream (layer × position)'],
      ['mlp', 'each MLP output (layer × position)'],
    ],
  );
  el._method = select(
    () => el.setAttribute('method', el._method.value),
    [
      ['exact', 'exact (one run per entry)'],
      ['attribution', 'attribution (one backward)'],
      ['both', 'both, compared'],
    ],
  );
  return h(
    'div',
    { class: 'controls' },
    el._token.label,
    el._against.label,
    h('label', { class: 'inline' }, h('span', { text: 'Patch' }), el._component),
    h('label', { class: 'inline' }, h('span', { text: 'Method' }), el._method),
  );
}

/** Run, Cancel, the progress bar and the status line. */
function runBar(el) {
  el._runButton = h('button', {
    type: 'button',
    class: 'run-button',
    text: 'Run',
    onclick: () => {
      el.run();
    },
  });
  el._cancelButton = h('button', {
    type: 'button',
    class: 'cancel-button',
    text: 'Cancel',
    disabled: true,
    onclick: () => el.cancel(),
  });
  el._progress = h('progress', { max: '1', value: '0', 'aria-label': 'Patching progress' });
  el._status = h('span', { class: 'muted small', role: 'status' });
  return h('div', { class: 'run' }, el._runButton, el._cancelButton, el._progress, el._status);
}

/** A grid canvas and its HeatmapView (hover and select go to patching-draw.js). */
function gridView(el) {
  const canvas = h('canvas');
  const view = new HeatmapView(canvas, {
    host: el,
    onHover: (c) => hoverPatching(el, view, c),
    onClick: (c) => selectPatching(el, c),
  });
  canvas.hidden = true;
  return [canvas, view];
}

/** Builds the widget's parts into its shadow root (`setAttr(name, v)`: set, or remove for none). */
export function buildPatching(el, setAttr) {
  const [cleanLabel, cleanInput] = field(el, 'clean', 'Clean');
  const [corruptLabel, corruptInput] = field(el, 'corrupted', 'Corrupted');
  el._cleanInput = cleanInput;
  el._corruptInput = corruptInput;
  el._summary = h('p', { class: 'muted small' });
  [el._canvas, el._view] = gridView(el);
  [el._attrCanvas, el._attrView] = gridView(el);
  el._scatter = h('canvas', { role: 'img' });
  el._scatter.hidden = true;
  el._agreement = h('p', { class: 'agreement', hidden: true, 'aria-live': 'polite' });
  el._readout = h('div', {
    class: 'readout',
    'aria-live': 'polite',
    text: 'Press Run: each head of the corrupted run is replaced, one at a time, by its clean value.',
  });
  el.shadowRoot.append(
    h('style', { text: CSS }),
    h('div', { class: 'bar' }, h('span', { class: 'title', text: 'Activation patching' }), el.exportBar()),
    h('div', { class: 'inputs' }, cleanLabel, cleanInput, corruptLabel, corruptInput),
    controls(el, setAttr),
    runBar(el),
    ...el.baseParts(),
    el._summary,
    el._canvas,
    el._attrCanvas,
    // The scatter's wrapper clips the table of its points that drawXY adds for screen readers.
    h('div', { class: 'scatter' }, el._scatter),
    el._agreement,
    el._readout,
  );
  el._runId = 0;
}
