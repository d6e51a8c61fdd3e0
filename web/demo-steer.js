// The demo's Steer panel (activation addition): for a model source that steers (web/demo-models.js's
// `steer`: a preset or an opened TinyTransformer file in this page, an opened checkpoint or GGUF file
// in the model worker), a recipe — the hook (a layer's blocks.{l}.hook_resid_pre, a middle one by
// default), positive and negative prompts (one per line: a set each), a coefficient, a prompt to
// continue and how many tokens — and Run: the steering vector (the mean of the hook at the positive
// prompts' last tokens minus the negative ones') × the coefficient is added at every position while
// the model continues the prompt; the plain and the steered continuations stream side by side, with
// Stop. The recipe is part of the demo state, so it is in the link (web/demo-state.js) and comes
// back from it. A view of the store: it dispatches what the reader changes and puts the state into
// its controls after every change (syncSteer, subscribed in demo.js). Token text: textContent only.
import { page, setState } from './demo-store.js';
import { $, autosize } from './demo-dom.js';

// This module's one state object: the running recipe and which source the shown results are of.
const steering = {
  run: null, // the running recipe's AbortController
  source: null, // the source the panel was last shown for (its results are cleared on another)
  layers: 0, // the layer count the layer picker was filled for
};

const hookOf = (layer) => `blocks.${layer}.hook_resid_pre`;

/** The layer of the state's hook on a model of L layers: the link's, else (none, or too deep) the middle one. */
export function steerLayer(state, L) {
  const m = /^blocks\.(\d+)\.hook_resid_pre$/.exec(state.steerHook);
  const layer = m ? Number(m[1]) : -1;
  return layer >= 0 && layer < L ? layer : Math.floor(L / 2);
}

/** The recipe the panel runs: the state's, its prompt sets split into lines. */
function recipeOf(state, L) {
  const lines = (text) => text.split('\n').filter((line) => line.trim());
  return {
    hook: hookOf(steerLayer(state, L)),
    positive: lines(state.steerPositive),
    negative: lines(state.steerNegative),
    coefficient: state.steerCoefficient,
    prompt: state.steerPrompt,
    maxNewTokens: state.steerTokens,
  };
}

/** One of the two outputs: the prompt (muted) and its continuation, as text. */
function showOutput(which, prompt, text, { count = 0, of = 0 } = {}) {
  const out = $(`steer-${which}`);
  const head = document.createElement('span');
  head.className = 'muted';
  head.textContent = prompt;
  const tail = document.createElement('strong');
  tail.textContent = text;
  out.replaceChildren(head, tail);
  out.dataset.count = String(count);
  out.dataset.text = text;
  $(`steer-${which}-count`).textContent = of ? `${count} of ${of} tokens` : '';
}

/** Empties the outputs (a new run, another model). */
function clearOutputs() {
  for (const which of ['plain', 'steered']) showOutput(which, '', '');
  $('steer-steered-title').textContent = 'Steered';
  $('steer-note').textContent = '';
  delete $('steer').dataset.state;
}

const fmt = (x) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toPrecision(3));

/** What a finished run says: the vector, where it went, and how each continuation ended. */
function summary(recipe, r) {
  const n = (k, what) => `${k} ${what} prompt${k === 1 ? '' : 's'}`;
  const vector =
    r.norm === 0
      ? `The steering vector at ${r.hook} is zero (the prompts' last tokens are alike there): try a later layer or other prompts.`
      : `Steering vector at ${r.hook}: ‖v‖ = ${fmt(r.norm)} over ${r.size} dimensions, the mean over ${n(recipe.positive.length, 'positive')} minus over ${n(recipe.negative.length, 'negative')} at each one's last token; ${recipe.coefficient} × v added at every position.`;
  const ended = r.aborted
    ? ' Stopped by you.'
    : r.plain.count < r.of || r.steered.count < r.of
      ? ' A continuation that stopped early reached the end-of-sequence token.'
      : '';
  return `${vector} Greedy, up to ${r.of} new tokens each.${ended}`;
}

/** Run: the recipe on the shown source, the two continuations drawn as their tokens come; Stop ends it. */
async function run() {
  const source = page.source;
  if (steering.run || typeof source?.steer !== 'function') return;
  const layer = steerLayer(page.state, source.info.numLayers);
  const recipe = recipeOf(page.state, source.info.numLayers);
  steering.run = new AbortController();
  const { signal } = steering.run;
  clearOutputs();
  const panel = $('steer');
  panel.dataset.state = 'running';
  $('steer-steered-title').textContent = `Steered (${recipe.coefficient} × v at layer ${layer})`;
  $('steer-run').disabled = true;
  $('steer-stop').hidden = false;
  $('steer-note').textContent = 'Computing the steering vector…';
  // The note (a live region) says each phase once; the counts under the outputs follow every token.
  const onToken = ({ which, text, count, of }) => {
    if (steering.source !== source) return;
    showOutput(which, recipe.prompt, text, { count, of });
    if (count === 1) $('steer-note').textContent = `Continuing the prompt, ${which}…`;
  };
  try {
    const r = await source.steer(recipe, { signal, onToken });
    if (steering.source !== source) return;
    showOutput('plain', recipe.prompt, r.plain.text, { count: r.plain.count, of: r.of });
    showOutput('steered', recipe.prompt, r.steered.text, { count: r.steered.count, of: r.of });
    $('steer-note').textContent = summary(recipe, r);
    panel.dataset.state = r.aborted ? 'stopped' : 'done';
  } catch (error) {
    if (steering.source !== source) return;
    const stopped = error.name === 'AbortError';
    $('steer-note').textContent = stopped
      ? 'Stopped by you.'
      : error.code === 'INPUT'
        ? error.message
        : `Could not steer: ${error.message}`;
    panel.dataset.state = stopped ? 'stopped' : 'error';
  } finally {
    steering.run = null;
    $('steer-run').disabled = false;
    $('steer-stop').hidden = true;
  }
}

/** The layer picker for a model of L layers (refilled only when L changed, so a focused picker keeps its options). */
function fillLayers(L) {
  if (steering.layers === L) return;
  steering.layers = L;
  const middle = Math.floor(L / 2);
  $('steer-layer').replaceChildren(
    ...Array.from(
      { length: L },
      (_, l) => new Option(l === middle ? `Layer ${l} (middle)` : `Layer ${l}`, String(l)),
    ),
  );
}

/** Sets a box to `value` unless the reader is typing in it (it already holds the text). */
function setBox(id, value) {
  const el = $(id);
  if (document.activeElement === el && el.value === value) return;
  if (el.value !== value) el.value = value;
  if (el.tagName === 'TEXTAREA') autosize(el);
}

/** Puts the state's recipe into the panel's controls (after every change of the store). */
export function syncSteer() {
  const { state } = page;
  setBox('steer-positive', state.steerPositive);
  setBox('steer-negative', state.steerNegative);
  setBox('steer-prompt', state.steerPrompt);
  setBox('steer-coefficient', String(state.steerCoefficient));
  setBox('steer-tokens', String(state.steerTokens));
  $('steer-coefficient-out').textContent = String(state.steerCoefficient);
  if (steering.layers) {
    const layer = steerLayer(state, steering.layers);
    $('steer-layer').value = String(layer);
    $('steer-hook').textContent = hookOf(layer);
  }
}

/**
 * Shows the panel for a source that steers (hidden for the others): the layer picker for its layers;
 * a source other than the last one's stops the running recipe and clears its results.
 */
export function showSteer(source) {
  const can = typeof source?.steer === 'function';
  $('steer').hidden = !can;
  if (source !== steering.source) {
    steering.run?.abort();
    steering.source = source;
    clearOutputs();
  }
  if (!can) return;
  fillLayers(source.info.numLayers);
  syncSteer();
}

/** What each control sets in the state, and how the change goes in the URL. */
function onInput(e) {
  const el = e.target;
  const patch = {
    'steer-layer': () => [{ steerHook: hookOf(Number(el.value)) }, 'push'],
    'steer-positive': () => [{ steerPositive: el.value }, 'typing'],
    'steer-negative': () => [{ steerNegative: el.value }, 'typing'],
    'steer-prompt': () => [{ steerPrompt: el.value }, 'typing'],
    'steer-tokens': () => (el.value === '' ? null : [{ steerTokens: Number(el.value) }, 'typing']),
    // The slider: one history entry per drag (its first move pushes, the rest replace).
    'steer-coefficient': () => [{ steerCoefficient: Number(el.value) }, 'typing'],
  }[el.id]?.();
  if (!patch) return;
  if (el.tagName === 'TEXTAREA') autosize(el);
  setState(...patch);
  // While the reader types or drags, the controls are not synced from the state: the slider's number is.
  if (el.id === 'steer-coefficient')
    $('steer-coefficient-out').textContent = String(page.state.steerCoefficient);
}

/** Wires the panel: its controls into the state, Run and Stop. */
export function attachSteer() {
  const form = $('steer-form');
  form.addEventListener('input', (e) => {
    if (e.target.id !== 'steer-layer') onInput(e);
  });
  form.addEventListener('change', (e) => {
    if (e.target.id === 'steer-layer') onInput(e);
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    run();
  });
  $('steer-stop').addEventListener('click', () => steering.run?.abort());
}
