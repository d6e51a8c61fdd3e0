// The demo with a trained model (web/demo-models.js): every view on the chosen layer of the model,
// its predictions, and the preset's description; and which controls each mode shows. demo.js calls
// these with its state and elements.
import { predictions, renderPredictions, runModel as runTrained, tokenizeFor } from './demo-models.js';

/** Shows the trained model on the input: every view on the chosen layer, and its predictions. */
export function renderTrained({ state, trained, $, steps, heatmap, maskEditor, chips }) {
  const { numLayers: L, numHeads: H, dModel, causal } = trained.model.config;
  const layer = Math.min(state.layer, L - 1);
  const input = tokenizeFor(trained, state.text);
  const layerSelect = $('layer');
  if (layerSelect.childElementCount !== L) layerSelect.replaceChildren(...Array.from({ length: L }, (_, i) => new Option(`Layer ${i}`, String(i))));
  layerSelect.value = String(layer);
  $('layer-row').hidden = L < 2;
  const p = trained.preset;
  $('preset-about').hidden = !p;
  if (p) {
    $('preset-title').textContent = p.title;
    $('preset-summary').textContent = p.summary;
    $('preset-heads').replaceChildren(...p.heads.map((h) => {
      const li = document.createElement('li');
      li.textContent = `Layer ${h.layer}, head ${h.head}: ${h.explanation}`;
      return li;
    }));
  }
  chips($('chips'), input.tokens);
  $('token-count').textContent = input.error || `${input.tokens.length} tokens${input.truncated ? ` (the first ${trained.model.config.maxLength}: the model's longest input)` : ''}`;
  $('token-count').className = input.error ? 'bad' : '';
  $('predictions').hidden = Boolean(input.error);
  if (input.error) return null;
  const T = input.tokens.length;
  const mask = clickedMask(state.toggles, T, causal);
  const r = runTrained(trained, input.ids, layer, mask.extra);
  steps.trace = { tokens: input.tokens, steps: r.trace, heads: H, dModel, causal };
  steps.setAttribute('step', state.step);
  steps.setAttribute('head', String(Math.min(state.head, H - 1)));
  heatmap.data = { weights: r.attention[layer], shape: [H, T, T], queryTokens: input.tokens, keyTokens: input.tokens };
  heatmap.setAttribute('head', state.view);
  maskEditor.setAttribute('head', state.view === 'all' ? 'mean' : state.view);
  maskEditor.data = { weights: r.attention[layer], heads: H, allowed: mask.allowed, fixed: mask.fixed, toggles: mask.toggles, tokens: input.tokens,
    summary: `Layer ${layer} of the trained model${causal ? ' (causal: a query sees only keys up to itself)' : ''}; clicks mask cells in every layer.` };
  heatmap.setAttribute('query', String(state.query));
  const score = renderPredictions($('predictions-table'), input.tokens, predictions(trained, input.ids, r.logits));
  $('predictions-summary').textContent = `Layer ${layer} of ${L} shown above. The model's most likely next token is right at `
    + `${score.right} of ${score.scored} positions (✓/✗ compare it with the token that actually comes next).`;
  return score;
}

/**
 * The clicked cells (toggles) as the extra mask of TinyTransformer.forward (T, T), 1 = may attend, or
 * null when none applies; `allowed` adds the model's own causal mask, which `fixed` marks (a click
 * cannot unmask it). Toggles outside the input or on a fixed cell are dropped.
 */
export function clickedMask(toggles, T, causal) {
  const fixed = new Uint8Array(T * T), extra = new Uint8Array(T * T).fill(1);
  if (causal) for (let i = 0; i < T; i++) fixed.fill(1, i * T + i + 1, (i + 1) * T);
  const kept = toggles.filter(([i, j]) => i < T && j < T && !fixed[i * T + j]);
  for (const [i, j] of kept) extra[i * T + j] = 0;
  const allowed = extra.map((v, k) => (fixed[k] ? 0 : v));
  return { extra: kept.length ? extra : null, allowed, fixed, toggles: kept };
}

/** Shows or hides what only one of the modes has (an opened folder: web/demo-pretrained.js, no mask editor). */
export function showMode({ $, steps, heatmap, maskEditor }, isTrained, isFolder = false) {
  for (const id of ['seeded-controls', 'untrained-note']) $(id).hidden = isTrained;
  for (const id of ['pretrained', 'model-view', 'lens']) $(id).hidden = !isFolder;
  maskEditor.hidden = isFolder;
  if (isFolder) for (const id of ['predictions', 'preset-about']) $(id).hidden = true;
  if (isTrained) $('source-block').hidden = true;
  $('pe').closest('section').hidden = isTrained;
  if (!isTrained) {
    $('predictions').hidden = true;
    $('preset-about').hidden = true;
    $('layer-row').hidden = true;
    if (steps.trace) steps.trace = null;
    if (heatmap.data) heatmap.data = null;
    if (maskEditor.data) maskEditor.data = null;
  }
}
