// The demo's side panel: the form controls filled from the state and the state set from them, the
// text boxes, the widgets' own events (a step, a head, a cell, a mask click), and the page buttons
// (Copy link, Save as HTML, Reset). No inline handler anywhere (strict CSP). A view of the store: it
// dispatches what the reader does and puts the state into the controls after every change
// (syncControls, subscribed in demo.js).
import { downloadSnapshot } from './widgets.js';
import { MAX_HEADS } from './demo-state.js';
import { inLink } from './demo-models.js';
import { page, replaceState, setState, setWayBack, stateFromURL } from './demo-store.js';
import { $, autosize, els } from './demo-dom.js';
import { switchModel, switchToText } from './demo-sources.js';

const D_MODELS = [4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256, 512];
let kvHeadsFor = 0; // the head count the key/value heads select was filled for

// The form controls set from the state by name (the text boxes and the head selects apart).
const FIELDS = ['dModel', 'seed', 'positional', 'base', 'mask', 'pad', 'temperature', 'dropout'];
const MORE_FIELDS = ['dropoutSeed', 'model', 'layer', 'scaling', 'residual', 'layerNorm'];
const NUMBERS = ['dModel', 'heads', 'kvHeads', 'seed', 'pad', 'dropoutSeed', 'layer'];

export function fillSelects() {
  $('dModel').replaceChildren(...D_MODELS.map((d) => new Option(String(d), String(d))));
}

function fillHeads() {
  const { state } = page;
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
function fillKvHeads() {
  const { state } = page;
  const kv = $('kvHeads');
  const value = state.kvHeads && state.heads % state.kvHeads === 0 ? String(state.kvHeads) : '0';
  if (kvHeadsFor === state.heads) {
    kv.value = value;
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
  kv.value = value;
}

/** Sets one named form control to `v` (a focused box the user is typing in keeps its text). */
function setControl(name, v) {
  const el = els.form.elements[name];
  if (!el) return;
  if (el instanceof RadioNodeList) {
    for (const r of el) r.checked = r.value === String(v);
    return;
  }
  if (el.type === 'checkbox') el.checked = !!v;
  else if (document.activeElement !== el || el.value !== String(v)) el.value = String(v);
}

/** Puts the state into the form controls (without firing their handlers). */
export function syncControls() {
  const { state } = page;
  if (!D_MODELS.includes(state.dModel))
    $('dModel').append(new Option(String(state.dModel), String(state.dModel)));
  fillHeads();
  for (const k of [...FIELDS, ...MORE_FIELDS]) setControl(k, state[k]);
  setControl('cross', state.cross ? 1 : 0);
  for (const id of ['text', 'source']) {
    if ($(id).value !== state[id]) $(id).value = state[id];
    autosize($(id));
  }
  $('tau-out').textContent = `${state.temperature}`;
  $('p-out').textContent = `${state.dropout}`;
}

/** A form control changed: its value into the state (the Model control switches the source). */
function onControl(e) {
  const el = e.target;
  const name = el.name;
  if (!name || name === 'text' || name === 'source') return;
  let v = el.type === 'checkbox' ? el.checked : el.value;
  if (name === 'cross') v = el.value === '1';
  if (name === 'model') return switchModel(v);
  if (NUMBERS.includes(name)) v = Number(v);
  if (['base', 'temperature', 'dropout'].includes(name)) {
    v = Number(v);
    if (!Number.isFinite(v) || (name === 'base' && v <= 1)) return; // keep typing: 1 → 10 → 100 …
  }
  const patch = { [name]: v };
  if (name === 'mask') patch.toggles = [];
  if (name === 'heads' && page.state.kvHeads && v % page.state.kvHeads !== 0) patch.kvHeads = 0; // keep a divisor
  // Sliders: replace while dragging, one history entry when let go.
  setState(patch, e.type === 'input' && el.type === 'range' ? 'replace' : 'push');
}

/** The form and the two text boxes. */
function attachForm() {
  // Enter in a text field must not submit (reload) the page.
  els.form.addEventListener('submit', (e) => e.preventDefault());
  els.form.addEventListener('change', onControl);
  els.form.addEventListener('input', (e) => {
    if (e.target.type === 'range') onControl(e);
  });
  for (const id of ['text', 'source']) {
    $(id).addEventListener('input', (e) => {
      autosize(e.target);
      if (id === 'text' && switchToText(e.target.value, 'push')) return;
      setState({ [id]: e.target.value }, 'typing');
    });
  }
}

/** What the reader picks in the widgets goes into the state (and so into the link). */
function attachWidgetEvents() {
  const { steps, heatmap, maskEditor } = els;
  steps.addEventListener('step-change', (e) =>
    setState({ step: e.detail.name, head: e.detail.head }, 'push'),
  );
  heatmap.addEventListener('view-change', (e) => setState({ view: String(e.detail.head) }, 'push'));
  heatmap.addEventListener('cell-click', (e) => setState({ query: e.detail.row, queries: [] }, 'push'));
  // Keys hidden (an attention sink) and query rows selected together go into the link too.
  heatmap.addEventListener('selection-change', (e) => {
    const { hideColumns, queries, combine } = e.detail;
    setState({ hideColumns, queries, combine }, 'push');
  });
  // A trained model keeps its own (causal) mask: there the editor's clicks only add masked cells.
  maskEditor.addEventListener('mask-change', (e) =>
    setState(
      page.source?.views.settings
        ? { mask: e.detail.mask, toggles: e.detail.toggles }
        : { toggles: e.detail.toggles },
      'push',
    ),
  );
}

async function copyLink(e) {
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
}

// Save as HTML: the views on screen, as inline SVG plus their data tables, in one file that needs no
// script, no wasm and no network (snapshotHTML).
function saveHTML() {
  const { state, source } = page;
  const views = [...document.querySelectorAll('#steps, #heatmap, #model-view')].filter(
    (el) => !el.hidden && el.offsetParent !== null,
  );
  const link = inLink(state.model) ? location.href : 'an opened model, which a link cannot hold';
  downloadSnapshot(views, {
    title: `attention-wasm: ${source?.label ?? 'demo'}`,
    description: `Input: “${state.text}”. Model: ${source?.label ?? ''}. Link: ${link}`,
  });
}

function resetAll() {
  setWayBack(null);
  replaceState({}, 'push');
}

/** Wires the side panel, the widgets' events and the page buttons. */
export function attachControls() {
  addEventListener('popstate', stateFromURL);
  attachForm();
  attachWidgetEvents();
  $('copy-link').addEventListener('click', copyLink);
  $('save-html').addEventListener('click', saveHTML);
  $('reset-all').addEventListener('click', resetAll);
}
