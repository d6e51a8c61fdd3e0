// The view of <kv-cache-stepper>: its layout below the buttons, and the drawing of one state (x, the
// cached keys of the K/V head shown, the new query's weights, the cost and the check).
import { h } from './base-element.js';
import { HeatmapView } from './heatmap-view.js';
import { divergingName } from './colormap.js';

const KV_CSS = `
.controls { display: flex; flex-wrap: wrap; gap: 8px 14px; align-items: center; margin: 0 0 10px; font-size: 13px; }
.controls label { display: inline-flex; align-items: center; gap: 6px; }
.controls .status { font-family: var(--aw-mono, ui-monospace, Menlo, monospace); }
.panels { display: flex; flex-wrap: wrap; gap: 12px 22px; align-items: flex-start; }
.panel { min-width: 0; }
.panel h3 { margin: 0 0 2px; font-size: 13px; font-weight: 650; }
.panel p { margin: 0 0 6px; font-size: 12.5px; max-width: 46ch; }
.empty { font-size: 13px; margin: 4px 0 8px; }
.check { margin-top: 6px; }
`;

/**
 * The widget's views and layout below its buttons (el._stepBtn, el._runBtn, el._resetBtn, el._headSel):
 * the three heatmaps, their notes, the readouts; `hover(which, cell)` answers a hovered or clicked cell.
 */
export function buildStepperBody(el, hover) {
  el._status = h('span', { class: 'status', role: 'status' });
  el._xCanvas = h('canvas', { role: 'img' });
  el._keysCanvas = h('canvas', { role: 'img' });
  el._wCanvas = h('canvas', { role: 'img' });
  const hooks = (which) => ({
    host: el,
    onHover: (c) => hover(which, c),
    onClick: (c) => hover(which, c),
  });
  el._xView = new HeatmapView(el._xCanvas, hooks('x'));
  el._keysView = new HeatmapView(el._keysCanvas, hooks('keys'));
  el._wView = new HeatmapView(el._wCanvas, hooks('weights'));
  el._summary = h('p', { class: 'muted small' });
  el._empty = h('p', { class: 'empty muted', text: 'The cache is empty. Press Step to feed token 0.' });
  el._keysNote = h('p', { class: 'muted' });
  el._wNote = h('p', { class: 'muted' });
  el._cachePanels = h(
    'div',
    { class: 'panels' },
    h('div', { class: 'panel' }, h('h3', { text: 'The cached keys' }), el._keysNote, el._keysCanvas),
    h(
      'div',
      { class: 'panel' },
      h('h3', { text: 'The new query’s weights over every cached key' }),
      el._wNote,
      el._wCanvas,
    ),
  );
  el._cost = h('div', { class: 'readout cost' });
  el._check = h('div', { class: 'readout check' });
  el._readout = h('div', {
    class: 'readout',
    'aria-live': 'polite',
    text: 'Hover or focus a cell for its value.',
  });
  el._body = h(
    'div',
    {},
    h(
      'div',
      { class: 'controls' },
      el._stepBtn,
      el._runBtn,
      el._resetBtn,
      h('label', {}, h('span', { text: 'K/V head shown' }), el._headSel),
      el._status,
    ),
    h(
      'div',
      { class: 'panels' },
      h(
        'div',
        { class: 'panel' },
        h('h3', { text: 'The input sequence x' }),
        h('p', { class: 'muted', text: 'One row per token; the outlined row is fed next.' }),
        el._xCanvas,
      ),
    ),
    el._empty,
    el._cachePanels,
    el._cost,
    el._check,
    el._readout,
  );
  el.shadowRoot.append(
    h('style', { text: KV_CSS }),
    h(
      'div',
      { class: 'bar' },
      h('span', { class: 'title', text: 'KV cache: decoding one token at a time' }),
      el.exportBar(),
    ),
    el._summary,
    ...el.baseParts(),
    el._body,
  );
}

/** Enables the buttons that apply: Step and Run all while x has tokens left, Reset once a step was made. */
export function syncButtons(el) {
  const s = el._state,
    full = !s || el.length >= s.T;
  el._stepBtn.disabled = full;
  el._runBtn.disabled = full || Boolean(el._run);
  el._resetBtn.disabled = !s || el.length === 0;
}

/** The keys cached for K/V head g after the last step: (t, d_k) row-major. */
export function headKeys(el, g) {
  const s = el._state,
    st = el._steps.at(-1),
    t = el._steps.length,
    n = t * s.dk;
  return st.keys.slice(g * n, (g + 1) * n);
}

/** Draws the state of `el`: the header, x, and (after the first step) the cache and the new weights. */
export function drawStepper(el) {
  const s = el._state,
    t = el.length,
    g = el.kvHead,
    size = s.H / s.Hkv;
  drawHeader(el, s, t, g, size);
  const W = el.contentWidth;
  drawX(el, s, t, W);
  el._empty.hidden = t > 0;
  el._cachePanels.hidden = t === 0;
  if (t === 0) {
    el._cost.textContent = `Nothing computed yet. Stepping through all ${s.T} tokens projects ${s.T} rows in all; recomputing the whole prefix at every step would project ${(s.T * (s.T + 1)) / 2}.`;
    el._check.textContent = 'Check: nothing to compare yet.';
    return;
  }
  const st = el._steps.at(-1),
    pos = t - 1;
  const posLabels = Array.from({ length: t }, (_, i) => `pos ${i}`);
  drawKeys(el, s, { t, g, size, W, pos, posLabels });
  drawWeights(el, s, st, { t, size, W, pos, posLabels });
  drawCost(el, s, st, t);
}

/** The dataset, the buttons, the summary, the K/V head picker and the cache's length. */
function drawHeader(el, s, t, g, size) {
  el.dataset.length = String(t);
  el.dataset.maxDifference = el.maxDifference.toExponential(2);
  syncButtons(el);
  el._summary.textContent =
    `A seeded MultiHeadAttention (embedDim ${s.E}, ${s.H} query heads over ${s.Hkv} key/value head${s.Hkv > 1 ? 's' : ''}, ` +
    `d_k = ${s.dk}, ${s.rope ? 'RoPE' : 'no RoPE'}, seed ${s.seed}) decodes x (${s.T} tokens) with createCache({ maxLength: ${s.T} }). ` +
    'Each step projects only the new token, appends its key and value to the cache, and lets its query attend over every cached key.';
  if (el._headSel.options.length !== s.Hkv) {
    el._headSel.replaceChildren(
      ...Array.from({ length: s.Hkv }, (_, i) =>
        h('option', { value: String(i), text: `${i} (query heads ${i * size}–${(i + 1) * size - 1})` }),
      ),
    );
  }
  el._headSel.value = String(g);
  el._status.textContent = `cache.length = ${t} of ${s.T}`;
}

/** x, one row per token, the row fed next outlined. */
function drawX(el, s, t, W) {
  const dims = Array.from({ length: s.E }, (_, i) => String(i));
  const tokenLabels = Array.from({ length: s.T }, (_, i) => `token ${i}`);
  let mx = 0;
  for (const v of s.x) mx = Math.max(mx, Math.abs(v));
  el._xView.width = Math.min(W, 520);
  el._xView.set({
    data: s.x,
    rows: s.T,
    cols: s.E,
    rowLabels: tokenLabels,
    colLabels: dims,
    rowAxis: 'token',
    colAxis: 'feature',
    domain: { lo: -mx, hi: mx, map: divergingName(el.getAttribute('diverging')) },
    values: 'never',
    maxCell: 22,
    minRowHeight: 0,
    legend: false,
    selectedRow: t < s.T ? t : undefined,
    title: t < s.T ? `x (${s.T} × ${s.E}): token ${t} is next` : `x (${s.T} × ${s.E}): every token fed`,
  });
  el._xCanvas.setAttribute(
    'aria-label',
    `Heatmap of the input sequence x: ${s.T} tokens by ${s.E} features. ` +
      (t < s.T ? `Token ${t} is fed next.` : 'Every token has been fed.') +
      ' Arrow keys move between cells.',
  );
}

/** The cached keys of K/V head g: (t, d_k), the new row outlined. */
function drawKeys(el, s, { t, g, size, W, pos, posLabels }) {
  const keys = headKeys(el, g);
  let km = 0;
  for (const v of keys) km = Math.max(km, Math.abs(v));
  el._keysNote.textContent =
    `K/V head ${g} (read by query heads ${g * size}–${(g + 1) * size - 1}): ${t} row${t > 1 ? 's' : ''} × d_k = ${s.dk}, ` +
    `${s.rope ? 'rotated to their positions (RoPE), ' : ''}one row per position so far; the new row ${pos} is outlined. The values are cached the same way.`;
  el._keysView.width = Math.min(W, 260);
  el._keysView.set({
    data: keys,
    rows: t,
    cols: s.dk,
    rowLabels: posLabels,
    colLabels: Array.from({ length: s.dk }, (_, i) => String(i)),
    rowAxis: 'position',
    colAxis: 'feature',
    domain: { lo: -km || -1, hi: km || 1, map: divergingName(el.getAttribute('diverging')) },
    values: 'never',
    maxCell: 26,
    minRowHeight: 0,
    legend: false,
    selectedRow: pos,
    title: `cached k, K/V head ${g}`,
  });
  el._keysCanvas.setAttribute(
    'aria-label',
    `Heatmap of the keys cached for key/value head ${g}: ${t} positions by ${s.dk} features; ` +
      `position ${pos} was just added. Arrow keys move between cells.`,
  );
}

/** The new query row's weights: (H, t), one row per query head. */
function drawWeights(el, s, st, { t, size, W, pos, posLabels }) {
  const headLabels = Array.from({ length: s.H }, (_, hd) => `q head ${hd} · K/V ${Math.floor(hd / size)}`);
  el._wNote.textContent =
    `Query ${pos} against keys 0–${pos}, one row per query head: the causal mask over the cache hides nothing, ` +
    'because every cached key is at or before the new token. Each row sums to 1.';
  el._wView.width = Math.min(W, 520);
  el._wView.set({
    data: st.weights,
    rows: s.H,
    cols: t,
    rowLabels: headLabels,
    colLabels: posLabels.map((l) => l.slice(4)),
    rowAxis: 'query head',
    colAxis: 'key',
    domain: { lo: 0, hi: 1, map: el.palette },
    values: 'never',
    maxCell: 30,
    minRowHeight: 0,
    legend: true,
    title: `new query ${pos}`,
  });
  el._wCanvas.setAttribute(
    'aria-label',
    `Heatmap of the attention weights of the new query (position ${pos}) over the ${t} cached keys, ` +
      `one row per query head (${s.H}). Arrow keys move between cells.`,
  );
}

/** What this step computed, what the cache holds, and the check against one full causal forward. */
function drawCost(el, s, st, t) {
  const pos = t - 1;
  const cachedFloats = 2 * t * s.Hkv * s.dk;
  el._cost.replaceChildren(
    h('span', {
      text: `Step ${t}: computed 1 new row (q·kᵀ over ${t} key${t > 1 ? 's' : ''}); recomputing would project ${t} row${t > 1 ? 's' : ''}.`,
    }),
    h('span', {
      class: 'terms',
      text:
        `The cache now holds keys and values for ${t} position${t > 1 ? 's' : ''} × ${s.Hkv} key/value head${s.Hkv > 1 ? 's' : ''} × d_k = ${s.dk}: ` +
        `${cachedFloats} floats${s.Hkv < s.H ? ` (${2 * t * s.H * s.dk} if each of the ${s.H} query heads had its own)` : ''}. ` +
        `Over all ${s.T} tokens stepping projects ${s.T} rows; recomputing the prefix every step would project ${(s.T * (s.T + 1)) / 2}.`,
    }),
  );
  el._check.textContent =
    `Check: stepped output row ${pos} against row ${pos} of one full causal forward over the ${t}-token prefix: ` +
    `max |difference| = ${st.diff.toExponential(2)}${t > 1 ? ` (every row so far: ${el.maxDifference.toExponential(2)})` : ''}.`;
}
