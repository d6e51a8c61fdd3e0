// The demo's "Why this prediction?" section: for whatever model source is shown — a preset,
// an opened file or an opened folder (whose model lives in the worker) — on the reader's request, the
// heads that look like previous-token, duplicate-token and induction heads (headScores), which parts
// write the next-token prediction against the runner-up (logitAttribution), and, for a corrupted
// input of the same length, which heads carry the answer (patch, with progress and Cancel); and, from
// gradients, which input tokens it depends on (saliency) and the heads' shares estimated from one
// backward (attribution patching: demo-why-grad.js); a cell of the attention heatmap clicked says which
// components made that query look at that key (demo-why-qk.js). The token explained is the next one
// or one of the input's, a generated one (demo-why-target.js). It asks the source (demo-models.js),
// never the kind; token text goes through textContent only.
import { fmt, table, topHeads } from './demo-why-table.js';
import { chooseTarget, fillTargets, targetWhere } from './demo-why-target.js';
import { attributionPatch, endRun, saliency, startRun } from './demo-why-grad.js';
import { offers } from './demo-why-calls.js';
import { explainCell } from './demo-why-qk.js';

// IOI (Wang et al. 2022): the indirect object is the answer; swapping the names corrupts it.
export const IOI = {
  clean: 'When Mary and John went to the store, John gave a drink to',
  corrupted: 'When Mary and John went to the store, Mary gave a drink to',
};
const KIND_NAMES = {
  'previous-token': 'Previous-token',
  'duplicate-token': 'Duplicate-token',
  induction: 'Induction',
};

/** The parts that write the prediction: the 8 largest heads, then the 4 largest other components. */
function attributionRows(parts, headRow) {
  const components = [
    ['embeddings', parts.embed],
    ['constants (biases, norms)', parts.bias],
    ...Array.from(parts.mlp.data, (v, l) => [`MLP of layer ${l}`, v]),
  ];
  return [
    ...topHeads(parts.heads, 8, Math.abs).map((e) => headRow(e.layer, e.head, [fmt(e.value)])),
    ...components
      .sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]))
      .slice(0, 4)
      .map(([name, v]) => ({ cells: [name, fmt(v)] })),
  ];
}

/** "Explain the next token": the head-type scores and the logit attribution at the last position. */
async function explain($, { getContext, headRow }) {
  const { source, text } = getContext();
  const out = $('why-results'),
    note = $('why-note');
  out.replaceChildren();
  note.textContent = 'Computing…';
  try {
    const input = await source.tokenize(text);
    if (input.error) {
      note.textContent = input.error;
      return;
    }
    const { ids } = input;
    fillTargets($, await source.strings(ids));
    const target = await chooseTarget($, source, ids);
    const [tokenText, againstText] = await source.strings([target.token, target.against]);
    const scores = await source.headScores(ids);
    const { position, token, against } = target;
    const parts = await source.logitAttribution(ids, { position, token, against });
    const scoreTables = Object.entries(scores).map(([kind, t]) =>
      table(
        `${KIND_NAMES[kind]} heads (top 3 of ${t.data.length})`,
        ['head', 'score'],
        topHeads(t, 3).map((e) => headRow(e.layer, e.head, [fmt(e.value)])),
      ),
    );
    out.append(
      ...scoreTables,
      table(
        `Who writes “${tokenText}” over “${againstText}” ${targetWhere(target)} (logit difference ${fmt(parts.logitDiff)}; the parts sum to ${fmt(parts.total)})`,
        ['part', 'contribution'],
        attributionRows(parts, headRow),
      ),
    );
    const what = target.next ? 'Next token' : `Token at position ${position + 1}:`;
    note.textContent = `${what} “${tokenText}” over “${againstText}”. A head's name opens it step by step above.`;
    if (!$('why-corrupted').value) $('why-corrupted').value = text;
  } catch (error) {
    note.textContent = `Could not explain: ${error.message}`;
  }
}

/** The clean and corrupted inputs' ids, or a note saying why they cannot be patched. */
async function patchInputs(source, text, corruptedText) {
  const [clean, corrupted] = await Promise.all([source.tokenize(text), source.tokenize(corruptedText)]);
  if (clean.error || corrupted.error) return { error: clean.error || corrupted.error };
  if (clean.ids.length !== corrupted.ids.length)
    return {
      error: `The corrupted input has ${corrupted.ids.length} tokens and the input ${clean.ids.length}: patching needs the same length.`,
    };
  return { clean: clean.ids, corrupted: corrupted.ids };
}

/** The inputs and the target of a patching run, or null with the reason in the patch note. */
async function patchPlan($, why) {
  const { source, text } = why.getContext();
  $('why-patch-results').replaceChildren();
  const inputs = await patchInputs(source, text, $('why-corrupted').value);
  if (inputs.error) {
    $('why-patch-note').textContent = inputs.error;
    return null;
  }
  return { inputs, target: await chooseTarget($, source, inputs.clean) };
}

/** "Patch every head": which heads' clean output restores the answer (with progress and Cancel). */
async function patch($, why) {
  const { source } = why.getContext();
  const out = $('why-patch-results'),
    note = $('why-patch-note');
  let run = null; // set once the run starts: only then is there a Cancel and progress to put away
  try {
    const plan = await patchPlan($, why);
    if (!plan) return;
    const { position, token, against } = plan.target;
    run = startRun($, why);
    note.textContent = 'Patching every head…';
    const result = await source.patch({ ...plan.inputs, position, token, against, component: 'head' }, run);
    out.append(
      table(
        'Heads whose clean output restores the answer (1 = all of it)',
        ['head', 'restored'],
        topHeads(result.result, 6, Math.abs).map((e) => why.headRow(e.layer, e.head, [fmt(e.value)])),
      ),
    );
    note.textContent = `Clean logit difference ${fmt(result.cleanDiff)}, corrupted ${fmt(result.corruptedDiff)}.`;
  } catch (error) {
    note.textContent = error.name === 'AbortError' ? 'Cancelled.' : `Could not patch: ${error.message}`;
  } finally {
    if (run) endRun($, why);
  }
}

/** "Attribution patching": the same heads' shares estimated from one backward (demo-why-grad.js). */
async function attribution($, why) {
  try {
    const plan = await patchPlan($, why);
    if (plan) await attributionPatch($, why, plan.inputs, plan.target);
  } catch (error) {
    $('why-patch-note').textContent = `Could not run attribution patching: ${error.message}`;
  }
}

/**
 * Wires the section: `getContext()` → { source, text, layer } of what is shown; `openHead(layer, head)`
 * opens a head in the steps view; `setText(text)` makes a text the input.
 */
export function attachWhy($, { getContext, openHead, setText }) {
  const why = {
    getContext,
    running: null, // the patch run's AbortController
    // A head's row: its name is a button that opens it in the steps view.
    headRow: (layer, head, cells) => ({
      cells: [`L${layer} H${head}`, ...cells],
      onSelect: () => openHead(layer, head),
    }),
  };
  $('why-explain').addEventListener('click', () => explain($, why));
  const once = (id, f) =>
    $(id).addEventListener('click', () => {
      if (!why.running) f($, why);
    });
  once('why-patch', patch);
  once('why-attribution', attribution);
  once('why-saliency', saliency);
  // A heatmap cell of a model source: which components made that query look at that key.
  $('heatmap').addEventListener('cell-click', (e) => {
    const { source, text, layer } = getContext();
    if (!$('why').hidden) explainCell($, { source, text, layer }, e.detail);
  });
  $('why-cancel').addEventListener('click', () => why.running?.abort());
  $('why-ioi').addEventListener('click', () => {
    setText(IOI.clean);
    $('why-corrupted').value = IOI.corrupted;
  });
}

/**
 * Shows the section for a source that answers the interpretability calls, with the IOI example (its
 * circuit was found in GPT-2 small, but the prompt pair is plain English for any model to try: the
 * page asks no family's name).
 */
export function showWhy($, source) {
  const can = typeof source?.headScores === 'function' && typeof source?.patch === 'function';
  $('why').hidden = !can;
  $('why-ioi').hidden = !can;
  // The gradient answers where the source offers them (demo-why-grad.js says so when asked anyway).
  $('why-saliency').hidden = !can || !offers(source, 'saliency');
  $('why-attribution').hidden = !can || !offers(source, 'attributionPatch');
}
