// Which model the demo shows: the source state.model names made the shown one (a preset loads once),
// the Model control, the opened folder and the "Why this prediction?" section wired to the shown
// source, and typing that is never a dead end — text a task preset cannot read switches to the
// character model, with a note and a way back.
import { DEMO_DEFAULTS, normalizeState } from './demo-state.js';
import { register, sourceFor } from './demo-models.js';
import { attachFolder } from './demo-pretrained.js';
import { attachWhy } from './demo-why.js';
import { $, els, page, seeded, setState, writeURL } from './demo-store.js';
import { render } from './demo-render.js';
import { syncControls } from './demo-controls.js';

const TEXT_PRESET = 'text'; // the character model: it reads any text (unknown characters as its unknown token)

/** The state on a new model: its first layer, head and step, no clicked cells, all heads shown. */
const freshView = (state, patch) =>
  normalizeState({ ...state, layer: 0, head: 0, view: 'all', query: -1, toggles: [], ...patch });

/** Makes the source state.model names the shown one (loading a preset once), then renders. */
export async function ensureSource() {
  const note = $('model-note');
  const name = page.state.model;
  try {
    const s = await sourceFor(name);
    if (page.state.model !== name) return; // another model was chosen meanwhile
    page.source = s;
    note.className = 'note';
    note.textContent = '';
    // A link with a model but no input opens on the model's own example, not the seeded sentence.
    if (page.state.text === DEMO_DEFAULTS.text && (await s.tokenize(page.state.text)).error) {
      page.state = normalizeState({ ...page.state, text: s.example });
      syncControls();
    }
    // A link whose text its preset cannot read opens on the character model (the link follows).
    if (switchToText(page.state.text, 'replace', s.example)) return;
  } catch (err) {
    if (page.state.model !== name) return;
    note.className = 'note bad';
    note.textContent = `Could not load the model: ${err.message}. Back to seeded weights.`;
    page.state = normalizeState({ ...page.state, model: seeded.name });
    page.source = seeded;
    writeURL('replace');
    syncControls();
  }
  render();
}

/** The Model control: a preset, the opened file or folder, or the seeded layer, on its own example input. */
export async function switchModel(name) {
  page.wayBack = null;
  const s = await sourceFor(name).catch(() => null);
  page.state = freshView(page.state, {
    model: name,
    step: s?.firstStep ?? 'weights',
    text: s ? s.example : page.state.text,
  });
  page.source = null;
  writeURL('push');
  syncControls();
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
export function switchToText(text, how, back = page.readableText) {
  const { state, source } = page;
  const words = source?.name === state.model ? source.words : null;
  if (!words) return false;
  const token = unknownWord(text, words);
  if (token === undefined) return false;
  const reads = (t) => Boolean(String(t).trim()) && unknownWord(t, words) === undefined;
  page.wayBack = {
    state: { ...state, text: reads(back) ? back : source.example },
    label: source.label,
    vocabulary: words,
    token,
  };
  page.state = freshView(state, { model: TEXT_PRESET, step: 'weights', text });
  page.source = null;
  writeURL(how);
  syncControls();
  ensureSource();
  return true;
}

/** The note after a switch (shown while the character model is): what happened, and the way back. */
export function showSwitchNote() {
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
  page.state = normalizeState(page.wayBack.state);
  page.wayBack = null;
  writeURL('push');
  syncControls();
  $('text').focus();
  render();
}

/** Makes `text` the input, as typed (one history entry). */
function setText(text) {
  setState({ text }, 'push');
  syncControls();
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
  });
  // A head clicked in the model view opens its layer everywhere (the steps view on that head).
  $('model-view').addEventListener('head-select', (e) =>
    setState({ layer: e.detail.layer, head: e.detail.head, step: 'weights' }, 'push'),
  );
  // "Why this prediction?": asks the shown source; a head named there opens in the steps view.
  attachWhy($, {
    getContext: () => ({ source: page.source, text: page.state.text }),
    openHead: (layer, head) => {
      setState({ layer, head, step: 'weights' }, 'push');
      els.steps.scrollIntoView({ block: 'nearest' });
    },
    setText,
  });
}
