// The demo's views of a model source (web/demo-models.js): which parts of the page a source shows,
// the layer selector, and one render of the source on the input — its tokens, the steps, heatmap and
// mask editor on the chosen layer, then what its `views` ask for: the predictions per position or the
// 10 likeliest next tokens, every layer × head in <attention-model-view>, the logit lens. Everything
// is asked of the source (all of it asynchronous) first and drawn in one go, so the views never show
// two different inputs. Token text only goes through textContent.
import { positionPredictions, topK } from './demo-models.js';

/** A token as shown in tables: spaces, line breaks and tabs made visible. */
export const visible = (s) => String(s).replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥') || '∅';

/** The layer selector: one option per layer, hidden for a one-layer model. */
export function fillLayers($, L, layer) {
  const select = $('layer');
  if (select.childElementCount !== L)
    select.replaceChildren(...Array.from({ length: L }, (_, i) => new Option(`Layer ${i}`, String(i))));
  select.value = String(layer);
  $('layer-row').hidden = L < 2;
}

/**
 * What is particular to the shown layer of a checkpoint (model.layers): its window, its RoPE (or none),
 * q/k norms, soft-capping — the steps view's numbers follow them (issue #25).
 */
export function showLayerNote($, info, layer) {
  const note = $('layer-note');
  note.hidden = !info;
  if (!info) return;
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
  note.textContent = `Layer ${layer}: ${parts.join('; ')}.`;
}

/** Shows what the source's views include and hides the rest. */
export function showMode({ $, steps, heatmap, maskEditor }, { views, preset }) {
  const isModel = !views.settings;
  for (const id of ['seeded-controls', 'untrained-note']) $(id).hidden = isModel;
  $('pretrained').hidden = views.predictions !== 'next';
  $('model-view').hidden = !views.modelView;
  $('lens').hidden = !views.lens;
  maskEditor.hidden = !views.maskEditor;
  if (views.predictions !== 'positions') $('predictions').hidden = true;
  if (!preset) $('preset-about').hidden = true;
  if (isModel) $('source-block').hidden = true;
  $('pe').closest('section').hidden = isModel;
  if (!isModel) {
    $('layer-row').hidden = true;
    $('layer-note').hidden = true;
    if (steps.trace) steps.trace = null;
    if (heatmap.data) heatmap.data = null;
    if (maskEditor.data) maskEditor.data = null;
  }
}

/**
 * Renders `source` on state.text: every view on state.layer. `current()` says whether this render is
 * still wanted (a newer one drops it). Resolves to what the predictions show ({ right, scored }, or the
 * top 10 next tokens), null on an input the model cannot read, undefined when dropped.
 */
export async function renderModel({ state, source, $, steps, heatmap, maskEditor, chips, current }) {
  const { views } = source;
  const { numLayers: L, numHeads: H, headDim, causal } = source.info;
  const layer = Math.min(state.layer, L - 1);
  const input = await source.tokenize(state.text);
  if (!current()) return undefined;
  if (input.error) {
    fillLayers($, L, layer);
    showInput($, chips, source, input);
    for (const id of ['predictions', 'pretrained', 'model-view', 'lens']) $(id).hidden = true;
    return null;
  }
  const { ids, tokens } = input,
    T = ids.length;
  const mask = views.maskEditor ? clickedMask(state.toggles, T, causal) : null;
  const r = await source.forward(ids, {
    layer,
    mask: mask?.extra ?? null,
    rows: views.predictions === 'positions' ? 'all' : 'last',
  });
  let result = null;
  if (views.predictions === 'positions')
    result = await positionPredictions(source, ids, r.logits, r.vocabSize);
  else if (views.predictions === 'next') {
    const top = topK(r.logits.subarray(r.logits.length - r.vocabSize), 10);
    const strings = await source.strings(top.map((t) => t.id));
    result = top.map((t, k) => ({ ...t, token: strings[k] }));
  }
  if (!current()) return undefined;

  // Everything is in hand: draw it all at once.
  fillLayers($, L, layer);
  showLayerNote($, source.info.layers?.[layer], layer);
  showPreset($, source.preset);
  showInput($, chips, source, input);
  steps.trace = { tokens, steps: r.trace, heads: H, dModel: H * headDim, causal };
  steps.setAttribute('step', state.step);
  steps.setAttribute('head', String(Math.min(state.head, H - 1)));
  heatmap.data = { weights: r.attention[layer], shape: [H, T, T], queryTokens: tokens, keyTokens: tokens };
  heatmap.setAttribute('head', state.view);
  heatmap.setAttribute('query', String(state.query));
  if (views.maskEditor) {
    maskEditor.setAttribute('head', state.view === 'all' ? 'mean' : state.view);
    maskEditor.data = {
      weights: r.attention[layer],
      heads: H,
      allowed: mask.allowed,
      fixed: mask.fixed,
      toggles: mask.toggles,
      tokens,
      summary: `Layer ${layer} of the trained model${causal ? ' (causal: a query sees only keys up to itself)' : ''}; clicks mask cells in every layer.`,
    };
  }
  if (views.predictions === 'positions') {
    $('predictions').hidden = false;
    result = renderPredictions($('predictions-table'), tokens, result);
    $('predictions-summary').textContent =
      `Layer ${layer} of ${L} shown above. The model's most likely next token is right at ` +
      `${result.right} of ${result.scored} positions (✓/✗ compare it with the token that actually comes next).`;
  } else if (views.predictions === 'next') {
    $('pretrained').hidden = false;
    renderTop($('next-table'), result);
    $('next-summary').textContent =
      `After “${tokens[T - 1]}” (position ${T - 1}): the 10 likeliest next tokens hold ` +
      `${(100 * result.reduce((s, t) => s + t.p, 0)).toFixed(1)}% of the probability. Layer ${layer} of ${L} is shown below.`;
  }
  $('chat').hidden = !views.chat;
  if (views.modelView) showModelView($('model-view'), source, ids, tokens, r.attention);
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
function showModelView(view, source, ids, tokens, attention) {
  const sig = `${source.label}|${source.key ?? ''}|${ids}`;
  if (view.dataset.sig === sig) return;
  view.dataset.sig = sig;
  const { numLayers, numHeads, headDim, causal } = source.info;
  const shape = [1, numHeads, ids.length, ids.length]; // as the library's forward gives it (a batch of one)
  view.model = {
    config: { numLayers, numHeads, dModel: numHeads * headDim, causal },
    forward: () => ({ attention: attention.map((data) => ({ data, shape })) }),
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

function cell(tag, text, cls) {
  const c = document.createElement(tag);
  c.textContent = text;
  if (cls) c.className = cls;
  return c;
}

function table(el, caption, headers, rows) {
  const head = document.createElement('tr');
  for (const h of headers) {
    const th = cell('th', h);
    th.scope = 'col';
    head.append(th);
  }
  const thead = document.createElement('thead'),
    tbody = document.createElement('tbody');
  thead.append(head);
  tbody.append(...rows);
  el.replaceChildren(...(caption ? [cell('caption', caption, 'visually-hidden')] : []), thead, tbody);
}

/** The predictions as a table: position, token, top 3 (probabilities), the actual next token ✓/✗. */
function renderPredictions(el, tokens, preds) {
  table(
    el,
    '',
    ['#', 'token', '1st', '2nd', '3rd', 'actual next'],
    preds.map((p, t) => {
      const tr = document.createElement('tr');
      tr.append(cell('td', String(t)), cell('td', visible(tokens[t]), 'tok'));
      for (const { token, p: prob } of p.top)
        tr.append(cell('td', `${visible(token)}  ${(100 * prob).toFixed(1)}%`, 'tok'));
      if (p.next === null) tr.append(cell('td', '—'));
      else if (p.correct === null) tr.append(cell('td', `${visible(p.next)} (not predictable)`, 'muted'));
      else
        tr.append(
          cell('td', `${visible(p.next)} ${p.correct ? '✓ right' : '✗ wrong'}`, p.correct ? 'ok' : 'bad'),
        );
      return tr;
    }),
  );
  const scored = preds.filter((p) => p.correct !== null);
  return { right: scored.filter((p) => p.correct).length, scored: scored.length };
}

/** The 10 likeliest next tokens, most likely first, with a bar for each probability. */
function renderTop(el, top) {
  table(
    el,
    'The ten likeliest next tokens, most likely first',
    ['#', 'next token', 'id', 'probability'],
    top.map((t, k) => {
      const tr = document.createElement('tr');
      const bar = cell('span', '', 'bar');
      bar.style.width = `${Math.max(1, Math.round(120 * t.p))}px`;
      const prob = cell('td', `${(100 * t.p).toFixed(2)}%`, 'prob');
      prob.prepend(bar);
      tr.append(
        cell('td', String(k + 1)),
        cell('td', visible(t.token), 'tok'),
        cell('td', String(t.id), 'muted'),
        prob,
      );
      return tr;
    }),
  );
}

// ---- the logit lens: asked a moment after the input settles (L + 1 passes through the head) ----

let lensTimer = 0,
  lensKey = '';

function scheduleLens(source, ids, tokens, $) {
  const key = `${source.label}|${source.key ?? ''}|${ids}`;
  if (key === lensKey) return;
  lensKey = key;
  clearTimeout(lensTimer);
  $('lens').dataset.state = 'pending';
  lensTimer = setTimeout(async () => {
    const el = $('lens-table'),
      note = $('lens-note');
    let lens;
    try {
      lens = await source.logitLens(ids);
    } catch (error) {
      if (lensKey !== key) return;
      el.replaceChildren();
      note.textContent = `Logit lens: ${error.message}`;
      $('lens').dataset.state = 'unavailable';
      return;
    }
    if (lensKey !== key) return;
    renderLens(el, source.info.numLayers, tokens, lens);
    note.textContent =
      "Each layer's residual stream put through the final norm and the output head; the last row is the model's own prediction. Darker = more probable.";
    $('lens').dataset.state = 'ready';
  }, 150);
}

function renderLens(el, L, tokens, { probs, strings }) {
  const T = tokens.length;
  const head = document.createElement('tr');
  head.append(cell('td', ''));
  tokens.forEach((t, i) => {
    const th = cell('th', t, 'tok');
    th.scope = 'col';
    th.title = `position ${i}`;
    head.append(th);
  });
  const rows = Array.from({ length: L + 1 }, (_, l) => {
    const tr = document.createElement('tr');
    const th = cell('th', l === 0 ? 'Embeddings' : l === L ? `Layer ${l} (output)` : `Layer ${l}`);
    th.scope = 'row';
    tr.append(th);
    for (let t = 0; t < T; t++) {
      const p = probs[l * T + t];
      const td = cell('td', visible(strings[l * T + t]), 'tok');
      td.style.setProperty('--p', p.toFixed(3));
      td.title = `${(100 * p).toFixed(1)}%`;
      td.append(cell('span', ` ${(100 * p).toFixed(0)}%`, 'visually-hidden'));
      tr.append(td);
    }
    return tr;
  });
  const caption = cell(
    'caption',
    'Logit lens: rows are layers (the embeddings, then after each block), columns are positions; ' +
      'each cell is the likeliest next token read from that layer, shaded by its probability.',
    'visually-hidden',
  );
  const thead = document.createElement('thead'),
    tbody = document.createElement('tbody');
  thead.append(head);
  tbody.append(...rows);
  el.replaceChildren(caption, thead, tbody);
}
