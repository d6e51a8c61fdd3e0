// The demo page: the controls, the URL, and the widgets — no second implementation of anything the
// widgets do. One store drives everything (web/demo-store.js: the state, its actions, subscribe); the
// state lives in the URL. The views read the store and dispatch its actions; those that follow every
// change are subscribed here. The model shown is a model source (web/demo-models.js): the page asks
// it what to show, never which kind of model it is. The page's parts, each wired here once:
//   demo-store.js    the store: state, actions (setState, replaceState, showSource …), subscribe
//   demo-dom.js      the page's elements
//   demo-controls.js the side panel, the widgets' events, Copy link / Save as HTML / Reset
//   demo-files.js    weights JSON, a model file, a figure
//   demo-sources.js  the source shown, the Model control, the folder, "Why this prediction?"
//   demo-render.js   one render of everything; demo-trained.js and demo-tables.js for a trained model
//   demo-embed.js    "Put these widgets in your own page"
//   demo-steer.js    the Steer panel (activation addition; its recipe is in the state)
//   demo-hub.js      "Open from Hugging Face…" (the model worker's hub jobs; asks before any download)
//   demo-long.js     a long prompt on a checkpoint: its plan, prefill with Stop, pooled overview, zoom
import { attn, clearModelCache, ready } from './widgets.js';
import { loadedSource } from './demo-models.js';
import { page, setState, showSource, subscribe } from './demo-store.js';
import { $, els, modelWidgets } from './demo-dom.js';
import { attachControls, fillSelects, syncControls } from './demo-controls.js';
import { attachFiles } from './demo-files.js';
import { attachSources, ensureSource, followSource } from './demo-sources.js';
import { render, scheduleRender, settled, watchChipScrolling } from './demo-render.js';
import { attachPredictionsToggle } from './demo-tables.js';
import { showElementCount } from './demo-embed.js';
import { attachSteer, syncSteer } from './demo-steer.js';
import { attachHub } from './demo-hub.js';
import { attachChat, followChatModel } from './demo-chat.js';
import { attachLong } from './demo-long.js';

// The views that follow every change of the store: the side panel and the Steer panel (not while the
// reader types: the box already holds the text), the model source, and the render (once per frame).
subscribe(({ how }) => {
  if (how === 'typing') return;
  syncControls();
  syncSteer();
});
subscribe(followSource);
subscribe(scheduleRender);
subscribe(followChatModel);

attachControls();
attachFiles();
attachSteer();
attachSources();
attachHub($);
attachChat();
attachLong();
followChatModel();
attachPredictionsToggle($);
showElementCount();
watchChipScrolling();

// ---- start ---------------------------------------------------------------------------------

fillSelects();
syncControls();
await ready;
$('kernel').textContent = `kernels: ${attn.kernelVariant()}`;
// A source open from the start (the seeded layer) renders now, before the widgets draw on their own
// defaults; a preset loads first.
const opened = loadedSource(page.state.model);
if (opened) {
  showSource(opened);
  render();
} else await ensureSource();
// Widgets that were still loading (KaTeX) render themselves when ready; re-render once they are.
await Promise.all(
  [...modelWidgets, els.pe].map((w) =>
    w.dataset.ready !== undefined
      ? null
      : new Promise((ok) => w.addEventListener('ready', ok, { once: true })),
  ),
);
// One more full pass, warm and uncached, so the timing shown first is a steady-state one.
clearModelCache();
render();
document.documentElement.dataset.ready = '';

/**
 * The page's scripting interface, for the console and for scripts that drive the demo (docs/demo.md):
 * the state, a synchronous render, a timing helper, the model shown. Whether the page shows its
 * state is also on the page itself: `data-settled` on <html>.
 */
window.attentionDemo = {
  get state() {
    return { ...page.state };
  },
  get lastRenderMs() {
    return page.lastMs;
  },
  /** True once the page shows its state: nothing scheduled, the newest render drawn (= <html data-settled>). */
  get settled() {
    return settled();
  },
  setState(patch, how = 'push') {
    setState(patch, how);
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
    return page.stateDictName;
  },
  /** The model source shown (web/demo-models.js), its logits on `ids` (a promise), and the last predictions' score. */
  get source() {
    return page.source;
  },
  async trainedLogits(ids) {
    return (await page.source.forward(ids, { attention: false })).logits;
  },
  get predictionScore() {
    return page.lastPredictions;
  },
};
