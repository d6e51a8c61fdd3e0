// The tutorial page's glue: the live numbers in the prose (each bound to a widget's events), the
// multi-head presets and shape table, the trained models' views. The formulas are web/tutorial-math.js;
// the copy buttons, contents highlight and theme switch web/tutorial-chrome.js. Every computation
// happens in the widgets or through the library; every piece of text is written with textContent.
import { attn, ready, runModel } from './widgets.js';
import { renderMath } from './tutorial-math.js';
import { attachContents, attachCopyButtons, attachTheme } from './tutorial-chrome.js';
import { showDeltaSection } from './tutorial-delta.js';

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];

/** Writes `text` into every element marked data-bind="name". */
function bind(name, text) {
  for (const el of $$(`[data-bind="${name}"]`)) el.textContent = text;
}

/** Calls fn(el) once the widget has drawn and again after each of `events`. */
function follow(el, events, fn) {
  if (!el) return;
  const run = () => {
    if (el.isConnected) fn(el);
  };
  for (const e of ['ready', ...events]) el.addEventListener(e, run);
  if (el.hasAttribute('data-ready')) run();
}

const f = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : String(x)).replace('-', '−');
const vec = (v, d = 2) => `(${Array.from(v, (x) => f(x, d)).join(', ')})`;

// ---- 1. the query explorer -------------------------------------------------------------------

follow($('#qe'), ['query-change'], (el) => {
  const r = el.result;
  if (!r) return;
  const top = r.weights.indexOf(Math.max(...r.weights));
  bind('qe-query', vec(r.query));
  bind('qe-top-weight', f(r.weights[top], 3));
  bind('qe-top-label', `“${el.labels[top]}”`);
  bind('qe-output', vec(r.output));
});

// ---- 2. variance and softmax -----------------------------------------------------------------

follow($('#variance'), ['experiment-change'], (el) => {
  const rs = el.results;
  if (!rs) return;
  const r = rs.find((x) => x.dk === 64) || rs[Math.floor(rs.length / 2)];
  bind('var-64-unscaled', f(r.unscaled, 2));
  bind('var-64-scaled', f(r.scaled, 3));
  bind('var-samples', r.samples.toLocaleString('en'));
});

follow($('#softmax'), ['softmax-change'], (el) => {
  const p = el.probabilities;
  if (!p) return;
  const top = Math.max(...p);
  bind('sm-scale', f(el.scale, 2));
  bind('sm-top', f(top, 4));
  bind(
    'sm-verdict',
    el.scale === 0
      ? 'Every logit is multiplied by 0, so the weights are uniform.'
      : top > 0.999
        ? 'That is saturated: to four decimals, one entry has everything.'
        : top > 0.9
          ? 'Most of the weight already sits on one entry.'
          : 'The weight is still shared.',
  );
});

// ---- 3. the fully masked row -----------------------------------------------------------------

follow($('#fill'), ['masked-change'], (el) => {
  const r = el.result;
  if (!r) return;
  const n = r.scores.length,
    m = r.masked.length;
  bind(
    'fill-summary',
    m === n
      ? `All ${n} keys are masked. This library returns weights ${vec(r.booleanWeights, 0)} and output ${vec(r.booleanOutput, 0)}; ` +
          `the −1e9 fill returns ${vec(r.fillWeights, 2)} and output ${vec(r.fillOutput, 2)} — the average of every value.`
      : `${m} of ${n} keys masked: both rules give ${vec(r.booleanWeights, 3)}.`,
  );
});

// ---- 4. multi-head: presets and shapes -------------------------------------------------------

const PRESETS = { small: { dModel: 16, heads: 4 }, paper: { dModel: 512, heads: 8 } };
const steps = $('#steps'),
  headsMap = $('#heads');

/** Rows of the shape table: [trace steps it stands for, operation, axes, sizes, note] for a model result. */
function shapeRows(r) {
  const T = r.Tq,
    D = r.config.dModel,
    H = r.heads,
    dk = r.dk;
  const traced = (name) => r.byName[name]?.shape;
  const first = r.byName.x ? 'x' : 'input';
  return [
    [['input', 'positional', 'x'], 'Input X: token embeddings (+ positions)', ['B', 'T', 'D'], traced(first)],
    [[], 'Project: Q = X·W_Q (and K, V)', ['B', 'T', 'D'], [1, T, D], 'part of q, k, v'],
    [
      [],
      'Split the last axis into heads (reshape)',
      ['B', 'T', 'H', 'd_k'],
      [1, T, H, dk],
      'a reshape: same numbers',
    ],
    [['q', 'k', 'v'], 'Move the head axis forward (transpose)', ['B', 'H', 'T', 'd_k'], traced('q')],
    [['scores'], 'Scores Q_h·K_hᵀ, every head at once', ['B', 'H', 'T_q', 'T_k'], traced('scores')],
    [['scaled', 'masked'], 'Divide by √d_k (and mask)', ['B', 'H', 'T_q', 'T_k'], traced('scaled')],
    [['weights', 'dropped'], 'Softmax over the keys', ['B', 'H', 'T_q', 'T_k'], traced('weights')],
    [['context'], 'Weighted values A_h·V_h', ['B', 'H', 'T', 'd_k'], traced('context')],
    [[], 'Move the head axis back (transpose)', ['B', 'T', 'H', 'd_k'], [1, T, H, dk], 'part of concat'],
    [['concat'], 'Concatenate the heads (reshape)', ['B', 'T', 'H·d_k'], traced('concat')],
    [['output', 'residual', 'normalized'], 'Output projection ·W_O', ['B', 'T', 'D'], traced('output')],
  ];
}

function renderShapes() {
  const r = runModel(steps.config);
  const tbody = $('#shape-table tbody');
  if (!r.ok) {
    bind('mh-config', r.error.message);
    tbody.replaceChildren();
    return;
  }
  const c = r.config;
  bind(
    'mh-config',
    `B = 1 sentence, T = ${r.Tq} tokens, D = ${c.dModel}, H = ${r.heads} heads, d_k = ${c.dModel} / ${r.heads} = ${r.dk}`,
  );
  tbody.replaceChildren(
    ...shapeRows(r).map(([names, op, axes, sizes, note]) => {
      const tr = document.createElement('tr');
      tr.dataset.steps = names.join(' ');
      if (!names.length) tr.classList.add('derived');
      const shown = names.filter((n) => r.byName[n]);
      const cells = [
        op,
        `(${axes.join(', ')})`,
        sizes ? `(${sizes.join(', ')})` : '—',
        shown.length ? shown.join(', ') : note || '—',
      ];
      for (const text of cells) {
        const td = document.createElement('td');
        td.textContent = text;
        tr.append(td);
      }
      if (names.length) {
        tr.tabIndex = 0;
        tr.title = 'Show this step below';
        const go = () => {
          const name = names.find((n) => r.byName[n]);
          if (name) steps.goTo(name);
        };
        tr.addEventListener('click', go);
        tr.addEventListener('keydown', (e) => {
          if (e.key === 'Enter' || e.key === ' ') {
            e.preventDefault();
            go();
          }
        });
      }
      return tr;
    }),
  );
  const D = c.dModel;
  bind(
    'mh-params',
    `with D = ${D}, 4 × ${D}² = ${(4 * D * D).toLocaleString('en')} weights (plus ${4 * D} biases) whether H is 1 or ${r.heads}`,
  );
  highlightStep();
}

function highlightStep() {
  const name = steps.current?.name;
  for (const tr of $$('#shape-table tbody tr'))
    tr.classList.toggle('current', !!name && tr.dataset.steps.split(' ').includes(name));
}

function applyPreset(key) {
  const p = PRESETS[key];
  for (const el of [steps, headsMap]) {
    el.setAttribute('d-model', String(p.dModel));
    el.setAttribute('heads', String(p.heads));
  }
  for (const b of $$('[data-preset]')) b.setAttribute('aria-pressed', String(b.dataset.preset === key));
  renderShapes();
}

for (const b of $$('[data-preset]')) b.addEventListener('click', () => applyPreset(b.dataset.preset));
follow(steps, ['step-change'], () => {
  if (!$('#shape-table tbody').children.length) renderShapes();
  else highlightStep();
});

// ---- 5. self and cross -----------------------------------------------------------------------

function shapeText(el) {
  const r = runModel(el.config);
  if (!r.ok) return r.error.message;
  return `${r.Tq} query tokens × ${r.Tk} key tokens, so A is ${r.Tq} × ${r.Tk}${r.Tq === r.Tk ? ' (square)' : ''}.`;
}
follow($('#self-map'), [], (el) => bind('self-shape', shapeText(el)));
follow($('#cross-map'), [], (el) => bind('cross-shape', shapeText(el)));

// ---- 6. positional encoding ------------------------------------------------------------------

/** The wavelength of the slowest sine/cosine pair: 2π·base^{2i/d} for the last pair i. */
function slowestWavelength(base, d) {
  const i = Math.floor((d - 1) / 2);
  return 2 * Math.PI * base ** ((2 * i) / d);
}

function bindWavelength(el, prefix) {
  if (!el) return;
  const update = () => {
    bind(`${prefix}-base`, String(el.base));
    bind(`${prefix}-slowest`, Math.round(slowestWavelength(el.base, el.dModel)).toLocaleString('en'));
  };
  new MutationObserver(update).observe(el, { attributes: true, attributeFilter: ['base', 'd-model'] });
  update();
}
bindWavelength($('#pe-10000'), 'pe-a');
bindWavelength($('#pe-1000'), 'pe-b');

/** The largest difference between the attention rows of the copies of `word`. */
function repeatSpread(el, word) {
  const r = runModel(el.config);
  if (!r.ok) return null;
  const rows = r.queryTokens.map((t, i) => (t === word ? i : -1)).filter((i) => i >= 0);
  let spread = 0;
  for (const a of rows)
    for (const b of rows)
      for (let j = 0; j < r.Tk; j++) {
        spread = Math.max(spread, Math.abs(r.meanWeights[a * r.Tk + j] - r.meanWeights[b * r.Tk + j]));
      }
  return { count: rows.length, spread };
}

function updateRepeat() {
  const without = repeatSpread($('#no-pe'), 'the'),
    withPe = repeatSpread($('#with-pe'), 'the');
  if (!without || !withPe) return;
  bind(
    'pe-repeat',
    `The word “the” appears ${without.count} times. Without positional encoding its ${without.count} rows of weights differ by at most ` +
      `${f(without.spread, 4)}: they are identical. With it, they differ by up to ${f(withPe.spread, 4)}.`,
  );
}
follow($('#no-pe'), [], updateRepeat);
follow($('#with-pe'), [], updateRepeat);

// ---- section 8: today's models (RoPE, the KV cache) -----------------------------------------------

/** Calls fn(el) once the widget has drawn and again whenever one of its data attributes changes. */
function followData(el, attributes, fn) {
  if (!el) return;
  follow(el, [], fn);
  new MutationObserver(() => {
    if (el.hasAttribute('data-ready')) fn(el);
  }).observe(el, { attributes: true, attributeFilter: attributes });
}

followData($('#rope-widget'), ['data-max-difference'], (el) => {
  const s = el.shown;
  if (!s) return;
  bind(
    'rope-diff',
    `With q and k as drawn, moving both positions by 100 or by 1000 changes q·k by at most ${s.maxDiff.toExponential(1)} ` +
      `over every offset from −32 to 32: float32 rounding, not position.`,
  );
});

follow($('#kv-widget'), ['kv-step'], (el) => {
  const t = el.length,
    s = el.shown;
  if (!s) return;
  bind(
    'kv-check',
    t === 0
      ? `The cache is empty. Each Step feeds one of the ${s.sequenceLength} tokens; the output rows it produces are compared with one full forward over the prefix.`
      : `${t} of ${s.sequenceLength} tokens cached. Every stepped output row so far equals the full forward’s row (max |difference| ` +
          `${el.maxDifference.toExponential(1)}): the cache changes the cost, not the result.`,
  );
});

// ---- section 9: finding the heads that matter ---------------------------------------------------

const best = (data, H) => {
  let i = 0;
  for (let k = 1; k < data.length; k++) if (data[k] > data[i]) i = k;
  return { layer: Math.floor(i / H), head: i % H, value: data[i] };
};
const headName = ({ layer, head }) => `layer ${layer} head ${head}`;

follow($('#interp-scores'), [], (el) => {
  const s = el.shown;
  if (!s) return;
  const pt = best(s.scores['previous-token'], s.H),
    ind = best(s.scores.induction, s.H);
  bind(
    'interp-scores',
    `Highest previous-token score: ${headName(pt)} (${f(pt.value, 2)}). Highest induction score: ${headName(ind)} (${f(ind.value, 3)}).`,
  );
});

follow($('#interp-patch'), ['patch-done'], (el) => {
  const s = el.shown;
  if (!s || s.component !== 'head') return;
  const H = s.cols,
    parts = Array.from(
      s.result,
      (v, i) => `${headName({ layer: Math.floor(i / H), head: i % H })} ${f(v, 2)}`,
    );
  bind(
    'interp-patch',
    `Restored by each head alone: ${parts.join(', ')}. Clean run ${f(s.cleanDiff, 1)}, corrupted ${f(s.corruptedDiff, 1)}.`,
  );
});

follow($('#interp-attr'), [], (el) => {
  const s = el.shown;
  if (!s) return;
  const heads = s.components.filter((c) => c.kind === 'head');
  bind(
    'interp-attr',
    `Of the logit difference ${f(s.logitDiff, 2)} (“${el.tokenName(s.token)}” against “${el.tokenName(s.against)}”): ` +
      `${heads.map((c) => `${headName(c)} ${f(c.value, 2)}`).join(', ')}; the embedding ${f(s.embed, 2)}, the biases ${f(s.bias, 2)}.`,
  );
});

follow($('#interp-saliency'), ['saliency-done'], (el) => {
  const s = el.shown;
  if (!s) return;
  const order = Array.from(s.scores.keys()).sort((a, b) => Math.abs(s.scores[b]) - Math.abs(s.scores[a]));
  const top = order.slice(0, 3).map((t) => `position ${t} (“${s.tokens[t]}”) ${f(s.scores[t], 2)}`);
  const gap = Number.isFinite(s.delta) ? `; they add up to it within ${f(s.delta, 3)}` : '';
  bind(
    'interp-saliency',
    `The answer’s logit difference is ${f(s.value, 2)}${gap}. Largest scores: ${top.join(', ')}.`,
  );
});

/** Pearson's correlation of two equally long arrays (NaN when either is constant). */
function correlation(a, b) {
  const n = a.length,
    ma = a.reduce((x, y) => x + y, 0) / n,
    mb = b.reduce((x, y) => x + y, 0) / n;
  let ab = 0,
    aa = 0,
    bb = 0;
  for (let i = 0; i < n; i++) {
    ab += (a[i] - ma) * (b[i] - mb);
    aa += (a[i] - ma) ** 2;
    bb += (b[i] - mb) ** 2;
  }
  return ab / Math.sqrt(aa * bb);
}

// Attribution patching of the same pair, in the page (two forwards and one backward), beside the
// exact patching result of the widget above.
follow($('#interp-patch'), ['patch-done'], async (el) => {
  const s = el.shown,
    m = el.model;
  if (!s || s.component !== 'head') return;
  try {
    const { clean, corrupted, position, token, against } = s;
    const r = await m.attributionPatch({ clean, corrupted, position, token, against, component: 'head' });
    const est = Array.from(r.result.data),
      exact = Array.from(s.result),
      H = s.cols;
    const parts = est.map(
      (v, i) => `${headName({ layer: Math.floor(i / H), head: i % H })} ${f(v, 2)} (exact ${f(exact[i], 2)})`,
    );
    bind(
      'interp-attrpatch',
      `Estimated share restored by each head: ${parts.join(', ')}. Correlation with the exact patch: ${f(correlation(est, exact), 2)}.`,
    );
  } catch (error) {
    bind('interp-attrpatch', `Attribution patching failed: ${error.message}`);
  }
});

// The induction head opens step by step once the model view has its model (a head selected in any of
// the section's widgets opens there too: their steps attribute).
const interpView = $('#interp-view');
interpView?.addEventListener('model-load', () => interpView.open(1, 1));

// ---- 7. copy buttons, the contents highlight and the theme switch (web/tutorial-chrome.js) ----

attachCopyButtons();
attachContents();
attachTheme();

// ---- section 7: trained models ------------------------------------------------------------------

// The reverse preset opens its head in the steps view below it as soon as it has loaded.
const reverseView = $('#reverse-view');
reverseView?.addEventListener('model-load', () => reverseView.open(0, 0));

// The character model reads a sentence through its own vocabulary (from the file's description;
// a character it does not know is read as its unknown token).
const TEXT_SENTENCE = 'The attention of a head is a weighted average.';
async function showTextModel() {
  const view = $('#text-view');
  if (!view) return;
  const bytes = new Uint8Array(await (await fetch(view.getAttribute('src'))).arrayBuffer());
  const preset = JSON.parse(attn.readSafetensorsMetadata(bytes).preset);
  const id = new Map(preset.tokens.map((t, i) => [t, i]));
  const chars = [...TEXT_SENTENCE].map((c) => (id.has(c) ? c : preset.unknownToken));
  view.tokens = chars.map((c) => (c === ' ' ? '␣' : c));
  view.ids = chars.map((c) => id.get(c));
  bind('text-sentence', TEXT_SENTENCE);
}

await renderMath();
await ready;
// How many threads the page's module runs (docs/threads.md): more than one only where the page is
// cross-origin isolated (served with COOP/COEP).
{
  const n = attn.threadCount();
  bind(
    'runtime-threads',
    n > 1
      ? `${n} threads (the page is cross-origin isolated)`
      : 'one thread (threads need a cross-origin-isolated page: docs/threads.md)',
  );
}
await showTextModel();
showDeltaSection(bind); // section 10: fetches the tiny Qwen3.5 fixture, fills its map when it has run
document.documentElement.dataset.tutorialReady = '';
