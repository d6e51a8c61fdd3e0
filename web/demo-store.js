// The demo page's one state object and its record in the URL. `page` holds everything the page
// changes while it runs (the demo state, the model source shown, loaded weights, the render's
// bookkeeping); no other demo module keeps mutable state of its own. The demo state lives in the URL
// (replaceState while typing, pushState on discrete changes; the back button restores the previous
// state). The other modules read and write `page` and call setState / writeURL here.
import { DEMO_DEFAULTS, normalizeState, searchFromState, stateFromSearch } from './demo-state.js';
import { inLink, register, seededSource } from './demo-models.js';
import { scheduleRender } from './demo-render.js';

export const $ = (id) => document.getElementById(id);

/** The page's elements that every section uses. */
export const els = {
  form: $('controls'),
  steps: $('steps'),
  heatmap: $('heatmap'),
  maskEditor: $('mask-editor'),
  pe: $('pe'),
};
export const modelWidgets = [els.steps, els.heatmap, els.maskEditor];

export const page = {
  state: stateFromSearch(location.search), // the demo state: what the link holds
  stateDict: null, // loaded PyTorch weights (too big for the URL)
  stateDictName: '',
  source: null, // the model source shown (web/demo-models.js); null while the one state.model names loads
  lastMs: 0,
  lastPredictions: null, // what the last model render predicted: { right, scored } or the top 10 (tests)
  readableText: '', // the last input the shown preset read (where the way back returns)
  wayBack: null, // { state, label, vocabulary, token } after typing switched to the character model
  typingBurst: null, // a timer while the user types: the burst's first change pushes, the rest replace
  kvHeadsFor: 0, // the head count the key/value heads select was filled for
  frame: 0, // the requested animation frame of a scheduled render
  renderSeq: 0, // each render's number: a model render that finishes after a newer one is dropped
  drawnWaiters: [], // promises of the next render that draws (a dropped render does not count)
  drawnSeq: 0, // the number of the last render that drew
};

/** The seeded layer's config: the demo state plus loaded weights. */
export const modelConfig = () => ({ ...page.state, stateDict: page.stateDict });

// The seeded layer the side panel's settings define: always open.
export const seeded = register(seededSource(modelConfig, { example: DEMO_DEFAULTS.text }));

/** Records the state in the URL: 'push' | 'replace' | 'typing' (a burst: push once, then replace) | 'none'. */
export function writeURL(how) {
  // A source with no ref (a folder): the URL keeps the last state that has one.
  if (how === 'none' || !inLink(page.state.model)) return;
  const url = `${location.pathname}${searchFromState(page.state)}${location.hash}`;
  if (url === `${location.pathname}${location.search}${location.hash}`) return;
  if (how === 'typing') {
    how = page.typingBurst ? 'replace' : 'push';
    clearTimeout(page.typingBurst);
    page.typingBurst = setTimeout(() => {
      page.typingBurst = null;
    }, 1200);
  }
  history[how === 'push' ? 'pushState' : 'replaceState'](null, '', url);
}

/** Merges a patch into the state, records it in the URL ('push' | 'replace' | 'typing' | 'none'), re-renders. */
export function setState(patch, how = 'push') {
  page.state = normalizeState({ ...page.state, ...patch });
  writeURL(how);
  scheduleRender();
}

/**
 * Whether the page shows what its state says: no render scheduled, the state's model shown, and the
 * newest render drawn (a model source answers asynchronously, so a changed control is drawn later).
 */
export const settled = () =>
  page.frame === 0 && page.source?.name === page.state.model && page.drawnSeq === page.renderSeq;

/** A promise of the next render that draws. */
export const whenDrawn = () => new Promise((resolve) => page.drawnWaiters.push(resolve));

/** Render `seq` has drawn (or shown its error): resolves whenDrawn's promises. */
export function settleDrawn(seq) {
  page.drawnSeq = seq;
  const waiting = page.drawnWaiters;
  page.drawnWaiters = [];
  for (const resolve of waiting) resolve();
}
