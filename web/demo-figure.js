// "Open a figure…" in the demo: a view's JSON export or SVG figure holds the widget's
// state (the JSON's `state`, the SVG's <metadata> `widgetState`), and the demo's widgets carry in it,
// as `context`, what the demo showed: its whole state as the link's query string, and the model
// (name, label; the file or folder it was opened from). Opening the figure sets the demo's own state
// from it — model, text, layer, head, step, view … — so a preset or the seeded layer redraws the same
// picture bit for bit; a figure of an opened file or folder says which files to open first (they are
// not in a link). A figure of a widget from a page of its own (no context) opens when its settings are
// the seeded layer's. Nothing here reads more than the chosen file.
import { normalizeState, stateFromSearch } from './demo-state.js';
import { isGGUF } from './demo-gguf.js';

/** The demo's views whose figures it opens, by widget. */
const DEMO_WIDGETS = [
  'attention-heatmap',
  'attention-steps',
  'mask-editor',
  'positional-encoding-heatmap',
  'attention-model-view',
];
const MAX_BYTES = 64 * 2 ** 20;

/**
 * The widget state in a figure file's text: a JSON export's `state`, a bare state (el.state), or an
 * SVG figure's <metadata> `widgetState`. Throws a readable Error otherwise.
 */
export function figureState(text) {
  const t = String(text)
    .replace(/^\uFEFF/, '')
    .trim();
  let s = null;
  if (t.startsWith('{')) {
    let obj;
    try {
      obj = JSON.parse(t);
    } catch (e) {
      throw new Error(`it is not valid JSON (${e.message})`);
    }
    s =
      obj && typeof obj.state === 'object' && obj.state
        ? obj.state
        : obj && typeof obj.widget === 'string'
          ? obj
          : null;
    if (!s) throw new Error('this JSON holds no widget state: export one with a view’s JSON button');
  } else if (t.startsWith('<')) {
    const doc = new DOMParser().parseFromString(t, 'image/svg+xml');
    if (doc.getElementsByTagName('parsererror').length) throw new Error('it is not a well-formed SVG');
    const meta = doc.querySelector('metadata');
    if (!meta) throw new Error('this SVG has no <metadata>: save a figure with a view’s SVG button');
    let m;
    try {
      m = JSON.parse(meta.textContent);
    } catch {
      throw new Error('its <metadata> is not JSON');
    }
    s =
      m && typeof m.widgetState === 'object' && m.widgetState
        ? m.widgetState
        : m && typeof m.version === 'number'
          ? m
          : null;
    if (!s) throw new Error('its <metadata> holds no widget state');
  } else throw new Error('expected a view’s JSON export or SVG figure');
  if (typeof s.widget !== 'string') throw new Error('the state names no widget');
  return s;
}

/** What must be opened before a figure of an opened file or folder can be redrawn. */
function needs(model, name) {
  if (model.files?.length && model.files.every(isGGUF)) {
    return (
      `This figure shows the GGUF model “${model.folderName || model.label}”, which is read on the device where it was opened and is not in ` +
      `the figure or a link. Open ${model.files.length > 1 ? 'its parts' : 'that file'} again (Open a model (.safetensors, .gguf)…: ${model.files.join(', ')}), then open the figure again.`
    );
  }
  if (name === 'folder' || model.files) {
    const files = model.files?.length
      ? model.files.join(', ')
      : 'config.json, tokenizer.json and model.safetensors (or its shards)';
    return (
      `This figure shows the model folder “${model.folderName || model.label || 'folder'}”, which is read on the device where it was opened and is not in ` +
      `the figure or a link. Open that folder again (Open a model folder…: ${files}), then open the figure again.`
    );
  }
  return (
    `This figure shows the model file “${model.fileName || 'model.safetensors'}”, which is not in the figure or a link. ` +
    'Open that file again (Open a model (.safetensors, .gguf)…), then open the figure again.'
  );
}

/**
 * What opening a figure's widget state does in the demo:
 *   { demoState, view, note }  set the demo's state to demoState, then (view: the id of the demo's
 *                              widget it came from) give that widget the figure's state
 *   { need }                   what to open or do first (nothing changes)
 * `open`: { loadedSource(name), stateDictName }.
 */
export function planFigure(ws, { loadedSource, stateDictName }) {
  const tag = ws.widget,
    c = ws.context;
  if (c && typeof c === 'object' && typeof c.search === 'string') {
    const demoState = stateFromSearch(c.search);
    const model = c.model && typeof c.model === 'object' ? c.model : { name: demoState.model };
    if (model.ref === null || ['file', 'folder'].includes(demoState.model)) {
      const open = loadedSource(demoState.model);
      const same = open && open.label === model.label && (open.fileName || '') === (model.fileName || '');
      if (!same) return { need: needs(model, demoState.model) };
    }
    if (c.weights && c.weights !== stateDictName) {
      return {
        need:
          `This figure shows the seeded layer with the weights loaded from “${c.weights}”, which are not in the figure or a link. ` +
          'Load them again (Load weights (JSON)…), then open the figure again.',
      };
    }
    return {
      demoState,
      view: DEMO_WIDGETS.includes(tag) && typeof c.view === 'string' ? c.view : null,
      note: model.label || demoState.model,
      weights: c.weights ?? null,
    };
  }
  // A figure from a page of its own: the demo can show it when it is the seeded layer of its settings.
  if (!['attention-heatmap', 'attention-steps', 'mask-editor'].includes(tag)) {
    return {
      need: `This is a figure of <${tag}>, which the demo does not show. Set it as el.state on a <${tag}> in a page to redraw it.`,
    };
  }
  if (ws.data || ws.trace || !ws.config || typeof ws.config !== 'object') {
    return {
      need:
        `This <${tag}> figure holds precomputed weights but not the model that made them, so the demo cannot redraw it. ` +
        `Set it as el.state on a <${tag}> in a page.`,
    };
  }
  const a = ws.attributes && typeof ws.attributes === 'object' ? ws.attributes : {};
  const patch = { ...ws.config, model: 'seeded' };
  if (tag === 'attention-heatmap') Object.assign(patch, { view: a.head ?? 'all', query: a.query ?? -1 });
  if (tag === 'attention-steps') Object.assign(patch, { step: a.step ?? 'scores', head: a.head ?? 0 });
  return {
    demoState: normalizeState(patch),
    view: null,
    note: 'the seeded layer with the figure’s settings',
    weights: null,
  };
}

/** Reads a chosen file as text (at most 64 MB). */
export async function readFigureFile(file) {
  if (file.size > MAX_BYTES)
    throw new Error(`it is ${(file.size / 2 ** 20).toFixed(0)} MB: a figure is smaller than 64 MB`);
  return file.text();
}
