// Which model the demo shows: the source state.model names made the shown one (a preset loads once),
// the Model control, the opened folder and the "Why this prediction?" section wired to the shown
// source, and typing that is never a dead end — text a task preset cannot read switches to the
// character model, with a note and a way back. A view of the store: after every change it loads the
// source the state names when that is not the one shown (followSource, subscribed in demo.js).
import { DEMO_DEFAULTS, normalizeState } from './demo-state.js';
import { register, sourceFor } from './demo-models.js';
import { attachFolder } from './demo-pretrained.js';
import { attachWhy } from './demo-why.js';
import { streamReply } from './demo-chat.js';
import { page, replaceState, seeded, setState, setWayBack, showSource } from './demo-store.js';
import { $, els } from './demo-dom.js';

const TEXT_PRESET = 'text'; // the character model: it reads any text (unknown characters as its unknown token)

/** The state on a new model: its first layer, head and step, no clicked cells, all heads shown. */
const freshView = (state, patch) =>
  normalizeState({ ...state, layer: 0, head: 0, view: 'all', query: -1, queries: [], toggles: [], ...patch });

let loading = null; // { name, promise } of the source being loaded

/** Makes the source state.model names the shown one (loading a preset once; one load per name at a time). */
export function ensureSource() {
  const name = page.state.model;
  if (loading?.name === name) return loading.promise;
  const promise = loadSource(name).finally(() => {
    if (loading?.promise === promise) loading = null;
  });
  loading = { name, promise };
  return promise;
}

async function loadSource(name) {
  const note = $('model-note');
  try {
    const s = await sourceFor(name);
    if (page.state.model !== name) return; // another model was chosen meanwhile
    note.className = 'note';
    note.textContent = '';
    // A link with a model but no input opens on the model's own example, not the seeded sentence.
    if (page.state.text === DEMO_DEFAULTS.text && (await s.tokenize(page.state.text)).error) {
      if (page.state.model !== name) return;
      replaceState({ ...page.state, text: s.example }, 'none', { source: s });
    }
    // A link whose text its preset cannot read opens on the character model (the link follows).
    if (switchToText(page.state.text, 'replace', s.example, s)) return;
    if (page.source !== s) showSource(s); // (already shown when its example replaced the text)
  } catch (err) {
    if (page.state.model !== name) return;
    note.className = 'note bad';
    note.textContent = `Could not load the model: ${err.message}. Back to seeded weights.`;
    replaceState({ ...page.state, model: seeded.name }, 'replace', { source: seeded });
  }
}

/** After every change of the store: the source the state names is loaded, and the switch note drawn. */
export function followSource() {
  if (page.source?.name !== page.state.model) ensureSource();
  showSwitchNote();
}

/** The Model control: a preset, the opened file or folder, or the seeded layer, on its own example input. */
export async function switchModel(name) {
  setWayBack(null);
  const s = await sourceFor(name).catch(() => null);
  const state = freshView(page.state, {
    model: name,
    step: s?.firstStep ?? 'weights',
    text: s ? s.example : page.state.text,
  });
  replaceState(state, 'push', { source: null });
  await ensureSource();
}

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
export function switchToText(text, how, back = page.readableText, source = page.source) {
  const { state } = page;
  const words = source?.name === state.model ? source.words : null;
  if (!words) return false;
  const token = unknownWord(text, words);
  if (token === undefined) return false;
  const reads = (t) => Boolean(String(t).trim()) && unknownWord(t, words) === undefined;
  const wayBack = {
    state: { ...state, text: reads(back) ? back : source.example },
    label: source.label,
    vocabulary: words,
    token,
  };
  replaceState(freshView(state, { model: TEXT_PRESET, step: 'weights', text }), how, {
    source: null,
    wayBack,
  });
  return true;
}

/** The note after a switch (shown while the character model is): what happened, and the way back. */
function showSwitchNote() {
  const { wayBack, state } = page;
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

function switchBack() {
  if (!page.wayBack) return;
  replaceState(page.wayBack.state, 'push', { wayBack: null });
  $('text').focus();
}

/** Makes `text` the input, as typed (one history entry); `patch`: more of the state with it. */
function setText(text, patch = {}) {
  setState({ text, ...patch }, 'push');
}

/** Wires the way back, the opened folder, the model view's heads and "Why this prediction?". */
export function attachSources() {
  $('switch-back').addEventListener('click', switchBack);
  attachFolder($, {
    async opened(s) {
      register(s);
      await switchModel(s.name);
    },
    source: () => page.source,
    getText: () => page.state.text,
    setText,
    onChatToken: streamReply,
  });
  // A head clicked in the model view opens its layer everywhere (the steps view on that head).
  $('model-view').addEventListener('head-select', (e) =>
    setState({ layer: e.detail.layer, head: e.detail.head, step: 'weights' }, 'push'),
  );
  // "Why this prediction?": asks the shown source; a head named there opens in the steps view.
  attachWhy($, {
    getContext: () => ({ source: page.source, text: page.state.text, layer: page.state.layer }),
    openHead: (layer, head) => {
      setState({ layer, head, step: 'weights' }, 'push');
      els.steps.scrollIntoView({ block: 'nearest' });
    },
    setText,
  });
}
