// Drawing the demo: the token chips, the side panel's notes, and one render of the shown source — a
// source the settings define synchronously (the model runs once, cached, and each widget redraws);
// any other source by asking it (asynchronously, web/demo-trained.js) and drawing what it answers.
// A view of the store (web/demo-store.js): it reads the state and records what it drew; its own
// bookkeeping (the scheduled frame, the renders' numbers) is kept here.
import { keepScrollFocusable } from './widgets/figures/a11y.js';
import { attn, tokensOf, validHeadCounts, tokenizeWithInfo, PAD_TOKEN } from './widgets.js';
import { MAX_HEADS, normalizeState, searchFromState } from './demo-state.js';
import { renderModel, showMode, showSelection } from './demo-trained.js';
import { showWhy } from './demo-why.js';
import { showSteer } from './demo-steer.js';
import { modelConfig, page, recordRender, seeded } from './demo-store.js';
import { $, autosize, els, modelWidgets } from './demo-dom.js';
import { showEmbed } from './demo-embed.js';
import { showChat } from './demo-chat.js';

const rendering = {
  frame: 0, // the requested animation frame of a scheduled render
  seq: 0, // each render's number: a model render that finishes after a newer one is dropped
  drawnSeq: 0, // the number of the last render that drew
  waiters: [], // promises of the next render that draws (a dropped render does not count)
};

/** A render at the next animation frame (several changes in one frame: one render). */
export function scheduleRender() {
  if (!rendering.frame)
    rendering.frame = requestAnimationFrame(() => {
      rendering.frame = 0;
      render();
    });
  showSettled();
}

/**
 * Whether the page shows what its state says: no render scheduled, the state's model shown, and the
 * newest render drawn (a model source answers asynchronously, so a changed control is drawn later).
 */
export const settled = () =>
  rendering.frame === 0 && page.source?.name === page.state.model && rendering.drawnSeq === rendering.seq;

/**
 * The page says whether it shows its state: `data-settled` on <html> while settled() holds (what a
 * script driving the page, or a test, waits on after changing a control or the URL).
 */
function showSettled() {
  document.documentElement.toggleAttribute('data-settled', settled());
}

/** A promise of the next render that draws. */
export const whenDrawn = () => new Promise((resolve) => rendering.waiters.push(resolve));

/** Render `seq` has drawn (or shown its error): resolves whenDrawn's promises. */
function settleDrawn(seq) {
  rendering.drawnSeq = seq;
  showSettled();
  const waiting = rendering.waiters;
  rendering.waiters = [];
  for (const resolve of waiting) resolve();
}

/** The tokens as numbered chips (redrawn only when they changed). Token text: always textContent. */
export function chips(container, tokens) {
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
      text.textContent = t;
      text.dir = 'auto';
      chip.append(idx, text);
      return chip;
    }),
  );
}

/** The token lists are tab stops while they scroll (a long input, a narrow screen), so keys can scroll them. */
export function watchChipScrolling() {
  for (const id of ['chips', 'source-chips']) keepScrollFocusable($(id));
}

/** The note under the model size: whether the heads divide d_model, and grouped-query sharing. */
function showHeadsNote(c) {
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
  if (c.kvHeads && c.kvHeads !== c.heads && c.heads % c.kvHeads === 0 && c.dModel % c.heads === 0) {
    note.textContent += ` ${c.heads / c.kvHeads} query heads share each of the ${c.kvHeads} key/value head${c.kvHeads > 1 ? 's' : ''} (grouped-query attention).`;
  }
}

/** The input card for the seeded layer: chips, the source block (cross-attention), the token count. */
function showSeededInput(c, queryTokens, keyTokens) {
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
}

/** The hints of the mask and positional-encoding settings. */
function showHints(c, queryTokens) {
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
}

/** Everything outside the widgets for the seeded layer. */
function renderPanel() {
  const c = normalizeState(page.state);
  const { queryTokens, keyTokens } = tokensOf(c);
  showSeededInput(c, queryTokens, keyTokens);
  showHeadsNote(c);
  showHints(c, queryTokens);
  showEmbed({ state: c, source: page.source });
}

/**
 * What a figure of a view says it shows (el.context, carried in its state and so in its JSON and SVG
 * exports): the demo's state as the link's query string, the model (for an opened file or folder, what
 * to open again) and loaded weights. "Open a figure…" reads it back.
 */
function figureContext(view) {
  const { state, source, stateDict, stateDictName } = page;
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

// " on 8 threads": what the page's module uses (docs/threads.md; the model worker's module starts
// the same count, both from init's 'auto'). One thread where the page is not cross-origin isolated.
function onThreads() {
  const n = attn.threadCount();
  return ` on ${n} thread${n === 1 ? '' : 's'}`;
}

/** A source that is not the settings' own: asked asynchronously, drawn when it answers (if still wanted). */
function renderTrained(seq, t0) {
  const shown = page.source,
    { state } = page,
    text = state.text;
  const { steps, heatmap, maskEditor } = els;
  renderModel({
    state,
    source: shown,
    $,
    steps,
    heatmap,
    maskEditor,
    chips,
    current: () => seq === rendering.seq && page.source === shown,
    onInput: (input) => showEmbed({ state, source: shown, input }),
    onChat: showChat,
  })
    .then((result) => {
      if (result === undefined) return;
      recordRender({
        ms: performance.now() - t0,
        predictions: result,
        readableText: result && shown.words ? text : undefined,
      });
      $('timing').textContent = `· computed and redrawn in ${page.lastMs.toFixed(1)} ms${onThreads()}`;
      settleDrawn(seq);
    })
    .catch((error) => {
      if (seq !== rendering.seq) return;
      settleDrawn(seq);
      $('token-count').className = 'bad';
      $('token-count').textContent = `The model could not run: ${error.message}`;
    });
}

/** The seeded layer: every widget recomputes from the settings, synchronously. */
function renderSeeded(seq, t0) {
  const { state } = page;
  const { steps, heatmap, pe } = els;
  const cfg = modelConfig();
  steps.setAttribute('step', state.step);
  steps.setAttribute('head', String(state.head));
  heatmap.setAttribute('head', state.view);
  heatmap.setAttribute('query', String(state.query));
  showSelection(heatmap, state);
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
  recordRender({ ms: performance.now() - t0 });
  $('timing').textContent = `· recomputed and redrawn in ${page.lastMs.toFixed(1)} ms${onThreads()}`;
  settleDrawn(seq);
}

/**
 * Renders everything for the shown source. While the source state.model names loads (demo-sources.js
 * follows the store and shows it when loaded, which renders again), nothing is drawn.
 */
export function render() {
  const seq = ++rendering.seq;
  showSettled();
  const { source } = page;
  if (!source || source.name !== page.state.model) return;
  const t0 = performance.now();
  showMode({ $, steps: els.steps, heatmap: els.heatmap, maskEditor: els.maskEditor }, source);
  showWhy($, source);
  showSteer(source);
  for (const el of [els.steps, els.heatmap, els.maskEditor, els.pe, $('model-view')])
    el.context = figureContext(el.id);
  if (!source.views.settings) renderTrained(seq, t0);
  else renderSeeded(seq, t0);
}
