// The demo page's one store: its state, the actions that change it, and subscribe. Every other demo
// module reads `page` (getters only: an assignment to it throws) and changes it through the actions
// here; views that must follow a change subscribe (demo.js wires them: the render, the side panel,
// the model source). The store imports no view, so the demo's import graph has no cycle
// (tests/js/import-cycles.test.mjs). The demo state lives in the URL (replaceState while typing,
// pushState on discrete changes; the back button restores the previous state).
import { DEMO_DEFAULTS, normalizeState, searchFromState, stateFromSearch } from './demo-state.js';
import { inLink, register, seededSource } from './demo-models.js';

const data = {
  state: stateFromSearch(location.search), // the demo state: what the link holds
  stateDict: null, // loaded PyTorch weights (too big for the URL)
  stateDictName: '',
  source: null, // the model source shown (web/demo-models.js); null while the one state.model names loads
  lastMs: 0, // how long the last render that drew took
  lastPredictions: null, // what the last model render predicted: { right, scored } or the top 10
  readableText: '', // the last input the shown preset read (where the way back returns)
  wayBack: null, // { state, label, vocabulary, token } after typing switched to the character model
};
let typingBurst = null; // a timer while the user types: the burst's first change pushes, the rest replace
const listeners = new Set();

/** What the page holds, read-only (getters): change it through the actions below. */
export const page = Object.freeze(
  Object.defineProperties(
    {},
    Object.fromEntries(Object.keys(data).map((key) => [key, { get: () => data[key], enumerable: true }])),
  ),
);

/**
 * Calls `listener(change)` after every action; change = { how } (the URL record: 'push' | 'replace' |
 * 'typing' | 'none'). Returns the function that unsubscribes.
 */
export function subscribe(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function notify(how) {
  for (const listener of listeners) listener({ how });
}

/** The seeded layer's config: the demo state plus loaded weights. */
export const modelConfig = () => ({ ...data.state, stateDict: data.stateDict });

// The seeded layer the side panel's settings define: always open.
export const seeded = register(seededSource(modelConfig, { example: DEMO_DEFAULTS.text }));

/** Records the state in the URL: 'push' | 'replace' | 'typing' (a burst: push once, then replace) | 'none'. */
function writeURL(how) {
  // A source with no ref (a folder): the URL keeps the last state that has one.
  if (how === 'none' || !inLink(data.state.model)) return;
  const url = `${location.pathname}${searchFromState(data.state)}${location.hash}`;
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

/** Merges a patch into the state, records it in the URL ('push' | 'replace' | 'typing' | 'none'). */
export function setState(patch, how = 'push') {
  replaceState({ ...data.state, ...patch }, how);
}

/**
 * Makes `state` the whole state (normalized) and records it; `extra` sets the other fields in the
 * same action: `source` (the source shown, null while the new one loads), `wayBack`.
 */
export function replaceState(state, how = 'push', extra = {}) {
  data.state = normalizeState(state);
  assignExtra(extra);
  writeURL(how);
  notify(how);
}

function assignExtra(extra) {
  for (const key of Object.keys(extra)) {
    if (!['source', 'wayBack', 'stateDict', 'stateDictName'].includes(key))
      throw new Error(`demo store: ${key} is not set through replaceState`);
    data[key] = extra[key];
  }
}

/** The state from the URL (the back button): nothing written, views follow. */
export function stateFromURL() {
  data.state = stateFromSearch(location.search);
  notify('none');
}

/** The source state.model names is loaded: shown from now on. */
export function showSource(source) {
  data.source = source;
  notify('none');
}

/** Loaded weights for the seeded layer (null: back to seeded ones), and the state's patch with them. */
export function setWeights(stateDict, name, patch = {}) {
  data.stateDict = stateDict;
  data.stateDictName = stateDict ? name : '';
  setState(patch, 'push');
}

/** The way back after typing switched to the character model (null: none). */
export function setWayBack(wayBack) {
  data.wayBack = wayBack;
}

/** What a render that drew found: its time, its predictions, and the text the shown preset read. */
export function recordRender({ ms, predictions, readableText }) {
  data.lastMs = ms;
  if (predictions !== undefined) data.lastPredictions = predictions;
  if (readableText !== undefined) data.readableText = readableText;
}
