// The demo page: the controls, the URL, and the four widgets — no second implementation of anything
// the widgets do. One state object drives everything; it lives in the URL (replaceState while typing,
// pushState on discrete changes; the back button restores the previous state). The model shown is a
// model source (web/demo-models.js): this file asks it what to show, never which kind of model it is.
import {
  attn,
  clearModelCache,
  download,
  downloadSnapshot,
  modelStateDict,
  ready,
  runModel,
  tokenizeWithInfo,
  tokensOf,
  validHeadCounts,
  PAD_TOKEN,
} from './widgets.js';
import { DEMO_DEFAULTS, normalizeState, searchFromState, stateFromSearch } from './demo-state.js';
import { inLink, loadedSource, openFile, register, seededSource, sourceFor } from './demo-models.js';
import { renderModel, showMode } from './demo-trained.js';
import { attachFolder } from './demo-pretrained.js';
import { attachWhy, showWhy } from './demo-why.js';
import { figureState, planFigure, readFigureFile } from './demo-figure.js';

const D_MODELS = [4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256, 512];
const MAX_HEADS = 16;

const $ = (id) => document.getElementById(id);
const form = $('controls');
const steps = $('steps'),
  heatmap = $('heatmap'),
  maskEditor = $('mask-editor'),
  pe = $('pe');
const modelWidgets = [steps, heatmap, maskEditor];

let state = stateFromSearch(location.search);
let stateDict = null; // loaded PyTorch weights (too big for the URL)
let stateDictName = '';
let lastMs = 0;
let lastPredictions = null; // what the last model render predicted: { right, scored } or the top 10 (tests)
let readableText = ''; // the last input the shown preset read (where the way back returns)
let wayBack = null; // { state, label, token } after typing switched to the character model

const modelConfig = () => ({ ...state, stateDict });
// The model shown: a source (web/demo-models.js) — the page asks it, never which kind it is. Null while
// the one state.model names loads.
const seeded = register(seededSource(modelConfig, { example: DEMO_DEFAULTS.text }));
let source = null;

// ---- URL -----------------------------------------------------------------------------------

let typingBurst = null; // a timer while the user types: the burst's first change pushes, the rest replace

function writeURL(how) {
  if (how === 'none' || !inLink(state.model)) return; // a source with no ref (a folder): the URL keeps the last state that has one
  const url = `${location.pathname}${searchFromState(state)}${location.hash}`;
  if (url === `${location.pathname}${location.search}${location.hash}`) return;
  if (how === 'typing') {
    how = typingBurst ? 'replace' : 'push';
    clearTimeout(typingBurst);
    typingBurst = setTimeout(() => {
      typingBurst = null;
    }, 1200);
  }
  history[how === 'push' ? 'pushState' : 'replaceState'](null, '', url);
}

/** Merges a patch into the state, records it in the URL ('push' | 'replace' | 'typing' | 'none'), re-renders. */
function setState(patch, how = 'push') {
  state = normalizeState({ ...state, ...patch });
  writeURL(how);
  scheduleRender();
}

addEventListener('popstate', () => {
  state = stateFromSearch(location.search);
  syncControls();
  render();
});

// ---- controls ------------------------------------------------------------------------------

function fillSelects() {
  $('dModel').replaceChildren(...D_MODELS.map((d) => new Option(String(d), String(d))));
}

function fillHeads() {
  const sel = $('heads');
  sel.replaceChildren(
    ...Array.from({ length: MAX_HEADS }, (_, i) => {
      const n = i + 1;
      const ok = state.dModel % n === 0;
      return new Option(
        ok ? `${n}  (d_k = ${state.dModel / n})` : `${n}  — does not divide ${state.dModel}`,
        String(n),
      );
    }),
  );
  sel.value = String(state.heads);
  fillKvHeads();
}

// Key/value heads: every divisor of H (grouped-query attention; 1 = multi-query, H = none). Refilled
// only when H changed, so a focused select keeps its options.
let kvHeadsFor = 0;
function fillKvHeads() {
  const kv = $('kvHeads');
  if (kvHeadsFor === state.heads) {
    kv.value = state.kvHeads && state.heads % state.kvHeads === 0 ? String(state.kvHeads) : '0';
    return;
  }
  kvHeadsFor = state.heads;
  const options = Array.from({ length: state.heads }, (_, i) => i + 1)
    .filter((n) => state.heads % n === 0)
    .map(
      (n) =>
        new Option(
          n === state.heads ? `${n}  (one per head)` : `${n}  (${state.heads / n} query heads each)`,
          String(n),
        ),
    );
  kv.replaceChildren(new Option('= heads', '0'), ...options);
  kv.value = state.kvHeads && state.heads % state.kvHeads === 0 ? String(state.kvHeads) : '0';
}

/** Puts the state into the form controls (without firing their handlers). */
function syncControls() {
  if (!D_MODELS.includes(state.dModel))
    $('dModel').append(new Option(String(state.dModel), String(state.dModel)));
  fillHeads();
  const set = (name, v) => {
    const el = form.elements[name];
    if (!el) return;
    if (el instanceof RadioNodeList) {
      for (const r of el) r.checked = r.value === String(v);
      return;
    }
    if (el.type === 'checkbox') el.checked = !!v;
    else if (document.activeElement !== el || el.value !== String(v)) el.value = String(v);
  };
  for (const k of [
    'dModel',
    'seed',
    'positional',
    'base',
    'mask',
    'pad',
    'temperature',
    'dropout',
    'dropoutSeed',
    'model',
    'layer',
  ])
    set(k, state[k]);
  for (const k of ['scaling', 'residual', 'layerNorm']) set(k, state[k]);
  set('cross', state.cross ? 1 : 0);
  for (const id of ['text', 'source']) {
    if ($(id).value !== state[id]) $(id).value = state[id];
    autosize($(id));
  }
  $('tau-out').textContent = `${state.temperature}`;
  $('p-out').textContent = `${state.dropout}`;
}

function onControl(e) {
  const el = e.target;
  const name = el.name;
  if (!name || name === 'text' || name === 'source') return;
  let v = el.type === 'checkbox' ? el.checked : el.value;
  if (name === 'cross') v = el.value === '1';
  if (name === 'model') return switchModel(v);
  if (['dModel', 'heads', 'kvHeads', 'seed', 'pad', 'dropoutSeed', 'layer'].includes(name)) v = Number(v);
  if (['base', 'temperature', 'dropout'].includes(name)) {
    v = Number(v);
    if (!Number.isFinite(v) || (name === 'base' && v <= 1)) return; // keep typing: 1 → 10 → 100 …
  }
  const patch = { [name]: v };
  if (name === 'mask') patch.toggles = [];
  if (name === 'heads' && state.kvHeads && v % state.kvHeads !== 0) patch.kvHeads = 0; // keep a divisor
  // Sliders: replace while dragging, one history entry when let go.
  setState(patch, e.type === 'input' && el.type === 'range' ? 'replace' : 'push');
}

// Enter in a text field must not submit (reload) the page; no inline handler (strict CSP).
form.addEventListener('submit', (e) => e.preventDefault());
form.addEventListener('change', onControl);
form.addEventListener('input', (e) => {
  if (e.target.type === 'range') onControl(e);
});
/** Grows a text box with its content (up to 12 lines), so long sentences stay visible. */
function autosize(el) {
  el.style.height = 'auto';
  el.style.height = `${Math.min(el.scrollHeight + 2, 12 * 28)}px`;
}
for (const id of ['text', 'source']) {
  $(id).addEventListener('input', (e) => {
    autosize(e.target);
    if (id === 'text' && switchToText(e.target.value, 'push')) return;
    setState({ [id]: e.target.value }, 'typing');
  });
}

steps.addEventListener('step-change', (e) => setState({ step: e.detail.name, head: e.detail.head }, 'push'));
heatmap.addEventListener('view-change', (e) => setState({ view: String(e.detail.head) }, 'push'));
heatmap.addEventListener('cell-click', (e) => setState({ query: e.detail.row }, 'push'));
// A trained model keeps its own (causal) mask: there the editor's clicks only add masked cells.
maskEditor.addEventListener('mask-change', (e) =>
  setState(
    source?.views.settings
      ? { mask: e.detail.mask, toggles: e.detail.toggles }
      : { toggles: e.detail.toggles },
    'push',
  ),
);

$('copy-link').addEventListener('click', async (e) => {
  const b = e.currentTarget;
  try {
    await navigator.clipboard.writeText(location.href);
    b.textContent = 'Link copied';
  } catch {
    b.textContent = 'Copy the address bar';
  }
  setTimeout(() => {
    b.textContent = 'Copy link';
  }, 1600);
});
// Save as HTML (#28): the views on screen, as inline SVG plus their data tables, in one file that
// needs no script, no wasm and no network (snapshotHTML).
$('save-html').addEventListener('click', () => {
  const views = [...document.querySelectorAll('#steps, #heatmap, #model-view')].filter(
    (el) => !el.hidden && el.offsetParent !== null,
  );
  const link = inLink(state.model) ? location.href : 'an opened model, which a link cannot hold';
  downloadSnapshot(views, {
    title: `attention-wasm: ${source?.label ?? 'demo'}`,
    description: `Input: “${state.text}”. Model: ${source?.label ?? ''}. Link: ${link}`,
  });
});
// Open a figure (#28): a view's JSON export or SVG figure sets the demo's state (see demo-figure.js).
$('figure-file').addEventListener('change', async (e) => {
  const file = e.target.files[0];
  e.target.value = '';
  if (!file) return;
  const note = $('figure-note'),
    root = document.documentElement;
  note.className = 'note';
  note.textContent = '';
  delete root.dataset.figure;
  try {
    const ws = figureState(await readFigureFile(file));
    const plan = planFigure(ws, { loadedSource, stateDictName });
    if (plan.need) {
      note.className = 'note bad';
      note.textContent = plan.need;
      root.dataset.figure = 'needs-files';
      return;
    }
    wayBack = null;
    if (!plan.weights && stateDict && plan.demoState.model === seeded.name) {
      // the figure was drawn with seeded weights
      stateDict = null;
      stateDictName = '';
      $('weights-reset').hidden = true;
      $('weights-note').textContent = 'Back to seeded weights: the figure was drawn with them.';
    }
    const drawn = whenDrawn();
    state = plan.demoState;
    writeURL('push');
    syncControls();
    render();
    await drawn;
    // The figure's own view gets its state too: what the demo's state does not hold (the tile whose
    // query row is shown as bars, a palette) comes back; the rest is what the demo just drew.
    const el = plan.view ? $(plan.view) : null;
    if (el && el.localName === ws.widget && el.localName !== 'attention-model-view') {
      el.state = ws;
      el.refresh();
    }
    note.textContent = `Opened “${file.name}”: a <${ws.widget}> figure of ${plan.note}, on “${state.text}”.`;
    root.dataset.figure = 'opened';
  } catch (err) {
    note.className = 'note bad';
    note.textContent = `Could not open “${file.name}” as a figure: ${err.message}`;
    root.dataset.figure = 'error';
  }
});
$('reset-all').addEventListener('click', () => {
  wayBack = null;
  state = normalizeState({});
  writeURL('push');
  syncControls();
  render();
});

// ---- weights -------------------------------------------------------------------------------

/** d_model implied by a state dict (in_proj_weight is (3E, E); out_proj.weight is (E, E)). */
function inferDModel(sd) {
  const shapeOf = (v) =>
    v && Array.isArray(v.shape)
      ? v.shape
      : Array.isArray(v) && Array.isArray(v[0])
        ? [v.length, v[0].length]
        : null;
  const s = shapeOf(sd['out_proj.weight']) || shapeOf(sd.in_proj_weight);
  return s ? s[1] : null;
}

$('weights-file').addEventListener('change', async (e) => {
  const file = e.target.files[0];
  e.target.value = '';
  if (!file) return;
  const note = $('weights-note');
  note.className = 'note';
  try {
    const sd = JSON.parse(await file.text());
    if (!sd || typeof sd !== 'object' || Array.isArray(sd))
      throw new Error('expected a JSON object { name: tensor }');
    const E = inferDModel(sd);
    const patch = {};
    if (E && E !== state.dModel) {
      patch.dModel = E;
      if (E % state.heads) patch.heads = 1;
    }
    const trial = runModel({ ...state, ...patch, stateDict: sd });
    if (!trial.ok) throw new Error(trial.error.message);
    stateDict = sd;
    stateDictName = file.name;
    note.textContent = `Loaded ${Object.keys(sd).length} tensors from “${file.name}”${patch.dModel ? ` (d_model set to ${E})` : ''}. Weights are not stored in the link.`;
    $('weights-reset').hidden = false;
    setState(patch, 'push');
    syncControls();
  } catch (err) {
    note.className = 'note bad';
    note.textContent = `Could not load “${file.name}”: ${err.message}`;
  }
});

$('weights-reset').addEventListener('click', () => {
  stateDict = null;
  stateDictName = '';
  $('weights-reset').hidden = true;
  $('weights-note').textContent = 'Back to seeded weights.';
  render();
});

$('weights-save').addEventListener('click', () => {
  const sd = modelStateDict(modelConfig());
  download(
    `attention-weights-d${state.dModel}-h${state.heads}${stateDict ? '-loaded' : `-seed${state.seed}`}.json`,
    JSON.stringify(sd),
    'application/json',
  );
});

// ---- model sources ---------------------------------------------------------------------------

/** Makes the source state.model names the shown one (loading a preset once), then renders. */
async function ensureSource() {
  const note = $('model-note');
  const name = state.model;
  try {
    const s = await sourceFor(name);
    if (state.model !== name) return; // another model was chosen meanwhile
    source = s;
    note.className = 'note';
    note.textContent = '';
    // A link with a model but no input opens on the model's own example, not the seeded sentence.
    if (state.text === DEMO_DEFAULTS.text && (await s.tokenize(state.text)).error) {
      state = normalizeState({ ...state, text: s.example });
      syncControls();
    }
    // A link whose text its preset cannot read opens on the character model (the link follows).
    if (switchToText(state.text, 'replace', s.example)) return;
  } catch (err) {
    if (state.model !== name) return;
    note.className = 'note bad';
    note.textContent = `Could not load the model: ${err.message}. Back to seeded weights.`;
    state = normalizeState({ ...state, model: seeded.name });
    source = seeded;
    writeURL('replace');
    syncControls();
  }
  render();
}

/** The Model control: a preset, the opened file or folder, or the seeded layer, on its own example input. */
async function switchModel(name) {
  wayBack = null;
  const s = await sourceFor(name).catch(() => null);
  state = normalizeState({
    ...state,
    model: name,
    layer: 0,
    head: 0,
    view: 'all',
    query: -1,
    step: s?.firstStep ?? 'weights',
    toggles: [],
    text: s ? s.example : state.text,
  });
  source = null;
  writeURL('push');
  syncControls();
  await ensureSource();
}

$('model-file').addEventListener('change', async (e) => {
  const file = e.target.files[0];
  e.target.value = '';
  if (!file) return;
  const note = $('model-note');
  try {
    const s = openFile(new Uint8Array(await file.arrayBuffer()), file.name);
    Object.assign($('model').querySelector(`option[value="${s.name}"]`), {
      hidden: false,
      textContent: s.label,
    });
    const said = `Opened “${file.name}”: ${s.info.numLayers} layer(s), ${s.info.numHeads} head(s), vocabulary of ${s.info.vocabSize}.`;
    note.className = 'note';
    note.textContent = said;
    await switchModel(s.name);
    note.textContent = said;
  } catch (err) {
    note.className = 'note bad';
    note.textContent = `Could not open “${file.name}”: ${err.message}`;
  }
});

attachFolder($, {
  async opened(s) {
    register(s);
    await switchModel(s.name);
  },
  source: () => source,
  getText: () => state.text,
  setText(text) {
    setState({ text }, 'push');
    syncControls();
  },
});
// A head clicked in the model view opens its layer everywhere (the steps view on that head).
$('model-view').addEventListener('head-select', (e) =>
  setState({ layer: e.detail.layer, head: e.detail.head, step: 'weights' }, 'push'),
);
// "Why this prediction?" (#27): asks the shown source; a head named there opens in the steps view.
attachWhy($, {
  getContext: () => ({ source, text: state.text }),
  openHead: (layer, head) => {
    setState({ layer, head, step: 'weights' }, 'push');
    steps.scrollIntoView({ block: 'nearest' });
  },
  setText: (text) => {
    setState({ text }, 'push');
    syncControls();
  },
});

// ---- typing is never a dead end -------------------------------------------------------------

const TEXT_PRESET = 'text'; // the character model: it reads any text (unknown characters as its unknown token)

/** The first word of `text` outside `words`, or undefined. */
const unknownWord = (text, words) =>
  String(text)
    .trim()
    .split(/\s+/)
    .find((w) => w && !words.has(w));

/**
 * Text the shown source hands over (a task preset's `words`: a word outside its vocabulary) switches to
 * the character model, keeping the text; the note above the tokens says so and its button goes back to
 * the preset and its last readable input. Opened files and folders hand nothing over. Returns whether it
 * switched. `how`: the URL record ('push' while typing; 'replace' for a link).
 */
function switchToText(text, how, back = readableText) {
  const words = source?.name === state.model ? source.words : null;
  if (!words) return false;
  const token = unknownWord(text, words);
  if (token === undefined) return false;
  const reads = (t) => Boolean(String(t).trim()) && unknownWord(t, words) === undefined;
  wayBack = {
    state: { ...state, text: reads(back) ? back : source.example },
    label: source.label,
    vocabulary: words,
    token,
  };
  state = normalizeState({
    ...state,
    model: TEXT_PRESET,
    layer: 0,
    head: 0,
    view: 'all',
    query: -1,
    step: 'weights',
    toggles: [],
    text,
  });
  source = null;
  writeURL(how);
  syncControls();
  ensureSource();
  return true;
}

/** The note after a switch (shown while the character model is): what happened, and the way back. */
function showSwitchNote() {
  const shown = Boolean(wayBack) && state.model === TEXT_PRESET;
  $('switch-note').hidden = !shown;
  if (!shown) return;
  // The first word of the text now shown that the preset does not know (the text grows as one types).
  const token = unknownWord(state.text, wayBack.vocabulary) ?? wayBack.token;
  const short = (t) => (t.length > 24 ? `${t.slice(0, 23)}…` : t);
  const name = wayBack.label.replace(/^Trained: /, '');
  $('switch-text').textContent =
    `“${short(token)}” is not in the ${name} model’s vocabulary, so the character model reads your text.`;
  $('switch-back').textContent = `Back to ${name}`;
}

$('switch-back').addEventListener('click', () => {
  if (!wayBack) return;
  state = normalizeState(wayBack.state);
  wayBack = null;
  writeURL('push');
  syncControls();
  $('text').focus();
  render();
});

// ---- rendering -----------------------------------------------------------------------------

let frame = 0;
function scheduleRender() {
  if (!frame)
    frame = requestAnimationFrame(() => {
      frame = 0;
      render();
    });
}

function chips(container, tokens) {
  const sig = tokens.join('\u0000');
  if (container.dataset.sig === sig && container.childElementCount === tokens.length) return;
  container.dataset.sig = sig;
  container.replaceChildren(
    ...tokens.map((t, i) => {
      const chip = document.createElement('span');
      chip.className = t === PAD_TOKEN ? 'chip pad' : 'chip';
      chip.setAttribute('role', 'listitem');
      const idx = document.createElement('span');
      idx.className = 'i';
      idx.textContent = String(i);
      const text = document.createElement('span');
      text.className = 't';
      text.textContent = t; // token text: always textContent
      text.dir = 'auto';
      chip.append(idx, text);
      return chip;
    }),
  );
}

function renderPanel() {
  const c = normalizeState(state);
  const { queryTokens, keyTokens } = tokensOf(c);
  chips($('chips'), queryTokens);
  chips($('source-chips'), c.cross ? keyTokens : []);
  if ($('source-block').hidden === c.cross) {
    $('source-block').hidden = !c.cross;
    autosize($('source'));
  }
  $('text-label').lastElementChild.textContent = c.cross ? '(queries)' : '(queries, keys and values)';
  $('cross-hint').textContent = c.cross
    ? 'Queries come from the sentence; keys and values from the source sentence (T_q ≠ T_k is fine).'
    : 'Queries, keys and values all come from your sentence.';
  const info = tokenizeWithInfo(c.text);
  $('token-count').textContent =
    `${info.tokens.length} token${info.tokens.length === 1 ? '' : 's'}` +
    (info.truncated ? ' (the first 512; the rest is cut)' : '') +
    (c.mask === 'padding' ? ` + ${c.pad} ${PAD_TOKEN}` : '');
  const valid = validHeadCounts(c.dModel, MAX_HEADS);
  const note = $('heads-note');
  if (c.dModel % c.heads === 0) {
    note.className = 'note ok';
    note.textContent = `✓ Each head gets d_k = ${c.dModel} / ${c.heads} = ${c.dModel / c.heads} dimensions.`;
  } else {
    note.className = 'note bad';
    note.textContent =
      `✗ ${c.heads} heads do not divide d_model = ${c.dModel} (${c.dModel} / ${c.heads} = ${(c.dModel / c.heads).toFixed(2)}): ` +
      `every head needs the same whole number of dimensions. Pick ${valid.slice(0, -1).join(', ')}${valid.length > 1 ? ' or ' : ''}${valid.at(-1)}.`;
  }
  fillKvHeads();
  if (c.kvHeads && c.kvHeads !== c.heads && c.heads % c.kvHeads === 0 && c.dModel % c.heads === 0) {
    note.textContent += ` ${c.heads / c.kvHeads} query heads share each of the ${c.kvHeads} key/value head${c.kvHeads > 1 ? 's' : ''} (grouped-query attention).`;
  }
  $('base-row').hidden = c.positional !== 'sinusoidal';
  $('pad-row').hidden = c.mask !== 'padding';
  $('mask-hint').textContent =
    {
      none: 'Every token may attend to every token.',
      causal: 'Token i sees only tokens 0 … i.',
      padding: `${c.pad} ${PAD_TOKEN} tokens are appended${c.cross ? ' to the source' : ''} and masked as keys.`,
      custom: 'Click cells in the mask editor below to mask them.',
    }[c.mask] +
    (c.toggles.length ? ` ${c.toggles.length} cell${c.toggles.length > 1 ? 's' : ''} clicked.` : '');
  $('pe-hint').textContent =
    c.positional === 'sinusoidal'
      ? `Step 2 adds the first ${queryTokens.length} rows of this table to the token embeddings.`
      : `This page currently uses ${c.positional === 'none' ? 'no' : 'a learned'} positional encoding; the sinusoidal table is shown for comparison.`;
  $('embed-code').textContent = embedSnippet(c);
}

let renderSeq = 0; // each render's number: a model render that finishes after a newer one is dropped

// Promises of the next render that draws (a render dropped for a newer one does not count).
let drawnWaiters = [];
const whenDrawn = () => new Promise((resolve) => drawnWaiters.push(resolve));
function settleDrawn() {
  const w = drawnWaiters;
  drawnWaiters = [];
  for (const resolve of w) resolve();
}

/**
 * What a figure of a view says it shows (el.context, carried in its state and so in its JSON and SVG
 * exports): the demo's state as the link's query string, the model (for an opened file or folder, what
 * to open again) and loaded weights. "Open a figure…" reads it back.
 */
function figureContext(view) {
  const s = source && source.name === state.model ? source : null;
  const model = s ? { name: s.name, label: s.label, ref: s.ref ?? null } : { name: state.model };
  if (s?.fileName) model.fileName = s.fileName;
  if (s?.folderName) Object.assign(model, { folderName: s.folderName, files: s.files ?? [] });
  return {
    page: 'attention-wasm demo',
    view,
    search: searchFromState(state),
    model,
    ...(stateDict && state.model === seeded.name ? { weights: stateDictName || 'loaded weights' } : {}),
  };
}

/**
 * Renders everything: a source the settings define synchronously (the model runs once, cached, and each
 * widget redraws); any other source by asking it (asynchronously) and drawing what it answers.
 */
function render() {
  const seq = ++renderSeq;
  if (!source || source.name !== state.model) {
    ensureSource();
    return;
  }
  const t0 = performance.now();
  showMode({ $, steps, heatmap, maskEditor }, source);
  showWhy($, source);
  showSwitchNote();
  for (const el of [steps, heatmap, maskEditor, pe, $('model-view')]) el.context = figureContext(el.id);
  if (!source.views.settings) {
    const shown = source,
      text = state.text;
    renderModel({
      state,
      source,
      $,
      steps,
      heatmap,
      maskEditor,
      chips,
      current: () => seq === renderSeq && source === shown,
    })
      .then((result) => {
        if (result === undefined) return;
        lastPredictions = result;
        if (result && shown.words) readableText = text;
        lastMs = performance.now() - t0;
        $('timing').textContent = `· computed and redrawn in ${lastMs.toFixed(1)} ms${onThreads()}`;
        settleDrawn();
      })
      .catch((error) => {
        if (seq !== renderSeq) return;
        settleDrawn();
        $('token-count').className = 'bad';
        $('token-count').textContent = `The model could not run: ${error.message}`;
      });
    return;
  }
  const cfg = modelConfig();
  steps.setAttribute('step', state.step);
  steps.setAttribute('head', String(state.head));
  heatmap.setAttribute('head', state.view);
  heatmap.setAttribute('query', String(state.query));
  for (const w of modelWidgets) {
    w.config = cfg;
    w.refresh();
  }
  pe.setAttribute('d-model', String(state.dModel));
  pe.setAttribute('base', String(state.base));
  pe.setAttribute(
    'length',
    String(Math.max(24, Math.min(128, tokensOf(normalizeState(state)).queryTokens.length))),
  );
  pe.refresh();
  renderPanel();
  lastMs = performance.now() - t0;
  $('timing').textContent = `· recomputed and redrawn in ${lastMs.toFixed(1)} ms${onThreads()}`;
  settleDrawn();
}

// " on 8 threads": what the page's module uses (docs/threads.md; the model worker's module starts
// the same count, both from init's 'auto'). One thread where the page is not cross-origin isolated.
function onThreads() {
  const n = attn.threadCount();
  return ` on ${n} thread${n === 1 ? '' : 's'}`;
}

/** Text for a double-quoted HTML attribute in the copy-paste snippet. */
function escapeAttr(s) {
  return String(s).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function embedSnippet(c) {
  const attrs = [`text="${escapeAttr(c.text)}"`];
  const d = DEMO_DEFAULTS;
  if (c.dModel !== 16) attrs.push(`d-model="${c.dModel}"`);
  if (c.heads !== 4) attrs.push(`heads="${c.heads}"`);
  if (c.kvHeads && c.kvHeads !== c.heads) attrs.push(`kv-heads="${c.kvHeads}"`);
  if (c.seed !== d.seed) attrs.push(`seed="${c.seed}"`);
  if (c.positional !== d.positional) attrs.push(`positional="${c.positional}"`);
  if (c.mask !== 'none') attrs.push(`mask="${c.mask}"`);
  if (c.cross) attrs.push('cross', `source="${escapeAttr(c.source)}"`);
  const a = attrs.join(' ');
  return (
    `<script type="module" src="${location.origin}/web/widgets.js"></script>\n\n` +
    `<attention-steps ${a}></attention-steps>\n<attention-heatmap ${a} head="all"></attention-heatmap>\n` +
    `<mask-editor ${a}></mask-editor>\n<positional-encoding-heatmap d-model="64" base="10000"></positional-encoding-heatmap>`
  );
}

// ---- start ---------------------------------------------------------------------------------

fillSelects();
syncControls();
await ready;
$('kernel').textContent = `kernels: ${attn.kernelVariant()}`;
// A source open from the start (the seeded layer) renders now, before the widgets draw on their own
// defaults; a preset loads first.
source = loadedSource(state.model);
if (source) render();
else await ensureSource();
// Widgets that were still loading (KaTeX) render themselves when ready; re-render once they are.
await Promise.all(
  [...modelWidgets, pe].map((w) =>
    w.dataset.ready !== undefined
      ? null
      : new Promise((ok) => w.addEventListener('ready', ok, { once: true })),
  ),
);
// One more full pass, warm and uncached, so the timing shown first is a steady-state one.
clearModelCache();
render();
document.documentElement.dataset.ready = '';

/** For tests and the curious: the state, a synchronous render, and a timing helper. */
window.attentionDemo = {
  get state() {
    return { ...state };
  },
  get lastRenderMs() {
    return lastMs;
  },
  setState(patch, how = 'push') {
    setState(patch, how);
    syncControls();
    render();
  },
  render,
  /** Median time of `n` recompute-and-redraw passes with the result cache cleared. */
  measure(n = 20) {
    const times = [];
    for (let i = 0; i < n; i++) {
      clearModelCache();
      const t0 = performance.now();
      render();
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    return { median: times[n >> 1], min: times[0], max: times[n - 1], n };
  },
  get stateDictName() {
    return stateDictName;
  },
  /** The model source shown (web/demo-models.js), its logits on `ids` (a promise), and the last predictions' score. */
  get source() {
    return source;
  },
  async trainedLogits(ids) {
    return (await source.forward(ids, { attention: false })).logits;
  },
  get predictionScore() {
    return lastPredictions;
  },
};
