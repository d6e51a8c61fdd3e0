// The demo's views of a model source (web/demo-models.js): which parts of the page a source shows,
// the layer selector, and one render of the source on the input — its tokens, the steps, heatmap and
// mask editor on the chosen layer, then what its `views` ask for: the predictions per position or the
// 10 likeliest next tokens, every layer × head in <attention-model-view>, the logit lens. Everything
// is asked of the source (all of it asynchronous) first and drawn in one go, so the views never show
// two different inputs. Token text only goes through textContent.
import { positionPredictions, topK } from './demo-models.js';
import { markLensStep, scheduleLens, showPredictions } from './demo-tables.js';
import { LONG_T, hideLong, renderLong } from './demo-long.js';

export { visible } from './demo-tables.js';

/** The layer selector: one option per layer, hidden for a one-layer model. */
export function fillLayers($, L, layer) {
  const select = $('layer');
  if (select.childElementCount !== L)
    select.replaceChildren(...Array.from({ length: L }, (_, i) => new Option(`Layer ${i}`, String(i))));
  select.value = String(layer);
  $('layer-row').hidden = L < 2;
}

// What a layer that is not softmax attention computes, and what its map is (model.layers[l].kind).
const MIXERS = {
  conv: (info) =>
    `a short convolution (kernel ${info.kernel}): its map is the effective token mixing A[t,s] = mean over ` +
    'channels of C_t·w[t−s]·B_s — signed, banded, no softmax',
  delta: (info) =>
    'gated DeltaNet linear attention: its map is the exact effective attention of the delta rule per ' +
    'value head — signed, rows need not sum to 1' +
    // a llama.cpp qwen35 file keeps its converter's value-head order (docs/gguf.md)
    (info.valueHeadOrder === 'tiled'
      ? `; value heads in the GGUF file's order: head h reads key head h mod ${info.kvHeads}`
      : ''),
};

/**
 * What is particular to the shown layer of a checkpoint (model.layers): what it is (softmax
 * attention, a short convolution, DeltaNet), its window, its RoPE (or none), q/k norms,
 * soft-capping, whose K/V it reads — the steps view's numbers follow them.
 */
export function showLayerNote($, info, layer) {
  const note = $('layer-note');
  note.hidden = !info;
  if (!info) return;
  if (info.kind !== 'attention') {
    const what =
      MIXERS[info.kind]?.(info) ?? `a ${info.kind} layer, not softmax attention: its map is signed`;
    note.textContent = `Layer ${layer}: ${what}.`;
    return;
  }
  const parts = [
    info.window > 0
      ? `a sliding window: each query sees its ${info.window} latest keys, itself included`
      : 'full causal attention',
  ];
  parts.push(
    info.rope
      ? `RoPE with base ${info.ropeTheta}${info.ropeScaled ? ', scaled frequencies' : ''}`
      : 'no RoPE in this layer',
  );
  if (info.qkNorm) parts.push('q and k RMS-normalised first (the q-norm and k-norm steps)');
  if (info.softcap > 0)
    parts.push(`scores soft-capped at ${info.softcap}·tanh(s / ${info.softcap}) (shown in the scaled step)`);
  if (Number.isInteger(info.kvFrom) && info.kvFrom !== layer) parts.push(`K/V from layer ${info.kvFrom}`);
  note.textContent = `Layer ${layer}: ${parts.join('; ')}.`;
}

/** The state's attention sinks and selections on a heatmap (hide-columns, queries, combine). */
export function showSelection(heatmap, state) {
  // Only what changed: an attribute set is a redraw.
  if (heatmap.hideColumns.join() !== state.hideColumns.join()) heatmap.hideColumns = state.hideColumns;
  if (heatmap.queries.join() !== state.queries.join()) heatmap.queries = state.queries;
  if (heatmap.combine !== state.combine) heatmap.combine = state.combine;
}

/** Shows what the source's views include and hides the rest. */
export function showMode({ $, steps, heatmap, maskEditor }, { views, preset }) {
  const isModel = !views.settings;
  for (const id of ['seeded-controls', 'untrained-note']) $(id).hidden = isModel;
  $('pretrained').hidden = views.predictions !== 'next';
  $('model-view').hidden = !views.modelView;
  $('lens').hidden = !views.lens;
  if (!views.chat) {
    $('chat-watch-view').hidden = true;
    markLensStep($, -1);
  }
  maskEditor.hidden = !views.maskEditor;
  if (views.predictions !== 'positions') $('predictions').hidden = true;
  if (!preset) $('preset-about').hidden = true;
  if (isModel) $('source-block').hidden = true;
  $('pe').closest('section').hidden = isModel;
  // The seeded layer set its settings as the widgets' config; a model's views draw the model's trace
  // and weights, so they go back to no config of the page's (as a link to the model opens them, and
  // their exported state names no settings that the figure does not show). No trace yet: the seeded
  // layer (or nothing) was drawn last.
  if (isModel && !steps.trace) for (const w of [steps, heatmap, maskEditor]) w.config = null;
  if (!isModel) {
    steps.hidden = false;
    $('steps-note').hidden = true;
    heatmap.removeAttribute('signed');
    $('layer-row').hidden = true;
    $('layer-note').hidden = true;
    if (steps.trace) steps.trace = null;
    if (heatmap.data) heatmap.data = null;
    // A model source set the mask editor's head from the heatmap's view: the seeded layer leaves it to
    // the editor's own selector, so it goes back to what a link to the seeded layer opens with.
    if (maskEditor.data) {
      maskEditor.data = null;
      maskEditor.removeAttribute('head');
    }
  }
}

/** What the predictions view shows: per position (the top 3, right or wrong), or the 10 likeliest next tokens. */
async function predict(source, ids, r) {
  const { predictions } = source.views;
  if (predictions === 'positions') return positionPredictions(source, ids, r.logits, r.vocabSize);
  if (predictions !== 'next') return null;
  const top = topK(r.logits.subarray(r.logits.length - r.vocabSize), 10);
  const strings = await source.strings(top.map((t) => t.id));
  return top.map((t, k) => ({ ...t, token: strings[k] }));
}

/**
 * The steps view (or, for a layer without softmax steps, a note saying so) on the forward's layer
 * `layer` of H heads (the layer's own).
 */
function drawSteps({ state, source, steps, $ }, { r, layer, tokens, H, kind }) {
  const softmax = kind === 'attention';
  steps.hidden = !softmax;
  $('steps-note').hidden = softmax;
  drawDeltaSteps($('delta-steps'), { r, tokens, kind });
  if (!softmax) {
    $('steps-note').textContent =
      `Layer ${layer} is ${kind === 'conv' ? 'a short convolution' : kind === 'delta' ? 'a gated DeltaNet layer' : `a ${kind} layer`}: ` +
      'it has no softmax steps (no scores, no softmax) to walk through. Its signed map is drawn below.';
    return;
  }
  const { headDim, causal } = source.info;
  const dk = source.info.layers?.[layer]?.headDim ?? headDim;
  steps.trace = { tokens, steps: r.trace, heads: H, dModel: H * dk, causal };
  steps.setAttribute('step', state.step);
  steps.setAttribute('head', String(Math.min(state.head, H - 1)));
}

/** A DeltaNet layer's step view (its hooks from the forward, r.delta), hidden for other layers. */
function drawDeltaSteps(view, { r, tokens, kind }) {
  if (!view) return;
  view.hidden = kind !== 'delta' || !r.delta;
  if (view.hidden) return;
  const T = tokens.length;
  view.data = { ...r.delta, tokens, map: r.attention[r.delta.layer] };
  if (view.token >= T) view.token = -1;
}

/**
 * The steps view, the heatmap and the mask editor on the forward's layer `layer`: H, the layer's own
 * heads, from its map's size (a hybrid model's layers differ); a layer that is not softmax attention
 * (r.kinds) has a signed map and no softmax steps, and no mask editor.
 */
function drawAttention(ctx, { r, layer, tokens, mask }) {
  const { state, source, heatmap, maskEditor } = ctx;
  const { causal } = source.info;
  const T = tokens.length;
  const weights = r.attention[layer];
  const H = weights.length / (T * T);
  const kind = r.kinds?.[layer] ?? 'attention';
  drawSteps(ctx, { r, layer, tokens, H, kind });
  heatmap.toggleAttribute('signed', kind !== 'attention'); // absent, not "false", for softmax layers
  heatmap.data = { weights, shape: [H, T, T], queryTokens: tokens, keyTokens: tokens };
  heatmap.setAttribute('head', state.view);
  heatmap.setAttribute('query', String(state.query));
  showSelection(heatmap, state);
  maskEditor.hidden = !source.views.maskEditor || kind !== 'attention';
  if (maskEditor.hidden) return;
  maskEditor.setAttribute('head', state.view === 'all' ? 'mean' : state.view);
  maskEditor.data = {
    weights,
    heads: H,
    allowed: mask.allowed,
    fixed: mask.fixed,
    toggles: mask.toggles,
    tokens,
    summary: `Layer ${layer} of the trained model${causal ? ' (causal: a query sees only keys up to itself)' : ''}; clicks mask cells in every layer.`,
  };
}

/**
 * Renders `source` on state.text: every view on state.layer. `current()` says whether this render is
 * still wanted (a newer one drops it); `onInput(input)` gets the tokenized input when it is drawn.
 * Resolves to what the predictions show ({ right, scored }, or the top 10 next tokens), null on an
 * input the model cannot read, undefined when dropped.
 */
export async function renderModel(ctx) {
  const { state, source, $, chips, current, onInput } = ctx;
  const { views } = source;
  const { numLayers: L, causal } = source.info;
  const layer = Math.min(state.layer, L - 1);
  const input = await source.tokenize(state.text);
  if (!current()) return undefined;
  if (input.error) {
    onInput?.(input);
    fillLayers($, L, layer);
    showInput($, chips, source, input);
    for (const id of ['predictions', 'pretrained', 'model-view', 'lens']) $(id).hidden = true;
    return null;
  }
  const { ids, tokens } = input;
  if (ids.length > LONG_T && source.longPrefill) {
    onInput?.(input);
    fillLayers($, L, layer);
    showLayerNote($, source.info.layers?.[layer], layer);
    showInput($, chips, source, input);
    return renderLong(ctx, { ids, tokens, layer });
  }
  hideLong(ctx.heatmap);
  const mask = views.maskEditor ? clickedMask(state.toggles, ids.length, causal) : null;
  const r = await source.forward(ids, {
    layer,
    mask: mask?.extra ?? null,
    rows: views.predictions === 'positions' ? 'all' : 'last',
  });
  const predicted = await predict(source, ids, r);
  if (!current()) return undefined;

  // Everything is in hand: draw it all at once.
  onInput?.(input);
  fillLayers($, L, layer);
  showLayerNote($, source.info.layers?.[layer], layer);
  showPreset($, source.preset);
  showInput($, chips, source, input);
  drawAttention(ctx, { r, layer, tokens, mask });
  const result = showPredictions($, views.predictions, predicted, { tokens, layer, L });
  $('chat').hidden = !views.chat;
  if (views.chat) ctx.onChat?.({ source, state, r, tokens });
  if (views.modelView) showModelView($('model-view'), source, { ids, tokens, r });
  if (views.lens) {
    $('lens').hidden = false;
    scheduleLens(source, ids, tokens, $);
  }
  return result;
}

function showInput($, chips, source, input) {
  chips($('chips'), input.tokens);
  const n = input.tokens.length;
  $('token-count').textContent =
    input.error ||
    `${n} token${n === 1 ? '' : 's'}` +
      `${input.truncated ? ` (the first ${source.info.maxPositions}: the model's longest input)` : ''}`;
  $('token-count').className = input.error ? 'bad' : '';
}

function showPreset($, p) {
  $('preset-about').hidden = !p;
  if (!p) return;
  $('preset-title').textContent = p.title;
  $('preset-summary').textContent = p.summary;
  $('preset-heads').replaceChildren(
    ...p.heads.map((h) => {
      const li = document.createElement('li');
      li.textContent = `Layer ${h.layer}, head ${h.head}: ${h.explanation}`;
      return li;
    }),
  );
}

/**
 * <attention-model-view> on this input: the widget asks its model for every layer's attention, which
 * this render already has (the source may live in a worker), so it gets a model that answers from them.
 * The page opens a clicked head itself (head-select), so the widget is not given the steps view.
 */
function showModelView(view, source, { ids, tokens, r }) {
  const sig = `${source.label}|${source.key ?? ''}|${ids}`;
  if (view.dataset.sig === sig) return;
  view.dataset.sig = sig;
  const { numLayers, numHeads, headDim, causal } = source.info;
  const T = ids.length;
  // As the library's forward gives them: a batch of one, each layer's own heads, each layer's kind.
  const shaped = r.attention.map((data) => ({ data, shape: [1, data.length / (T * T), T, T] }));
  view.model = {
    config: { numLayers, numHeads, dModel: numHeads * headDim, causal },
    forward: () => ({ attention: shaped, ...(r.kinds ? { attentionKinds: r.kinds } : {}) }),
  };
  view.ids = ids;
  view.tokens = tokens;
}

/**
 * The clicked cells (toggles) as the extra mask of TinyTransformer.forward (T, T), 1 = may attend, or
 * null when none applies; `allowed` adds the model's own causal mask, which `fixed` marks (a click
 * cannot unmask it). Toggles outside the input or on a fixed cell are dropped.
 */
export function clickedMask(toggles, T, causal) {
  const fixed = new Uint8Array(T * T),
    extra = new Uint8Array(T * T).fill(1);
  if (causal) for (let i = 0; i < T; i++) fixed.fill(1, i * T + i + 1, (i + 1) * T);
  const kept = toggles.filter(([i, j]) => i < T && j < T && !fixed[i * T + j]);
  for (const [i, j] of kept) extra[i * T + j] = 0;
  const allowed = extra.map((v, k) => (fixed[k] ? 0 : v));
  return { extra: kept.length ? extra : null, allowed, fixed, toggles: kept };
}
