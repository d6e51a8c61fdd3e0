// The demo's "Why this prediction?" section: for whatever model source is shown — a preset,
// an opened file or an opened folder (whose model lives in the worker) — on the reader's request, the
// heads that look like previous-token, duplicate-token and induction heads (headScores), which parts
// write the next-token prediction against the runner-up (logitAttribution), and, for a corrupted
// input of the same length, which heads carry the answer (patch, with progress and Cancel). It asks
// the source (demo-models.js), never the kind; token text goes through textContent only.
import { topK } from './demo-models.js';

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

const cell = (tag, text, cls) => {
  const c = document.createElement(tag);
  c.textContent = text;
  if (cls) c.className = cls;
  return c;
};

// A table of rows (arrays of cell texts) under a caption; a row's `onSelect` makes its first cell a button.
function table(caption, head, rows) {
  const t = document.createElement('table');
  t.append(cell('caption', caption));
  const tr = document.createElement('tr');
  for (const h of head) {
    const th = cell('th', h);
    th.scope = 'col';
    tr.append(th);
  }
  const thead = document.createElement('thead'),
    tbody = document.createElement('tbody');
  thead.append(tr);
  for (const r of rows) {
    const row = document.createElement('tr');
    r.cells.forEach((text, i) => {
      if (i === 0 && r.onSelect) {
        const td = document.createElement('td'),
          b = cell('button', text, 'link-button');
        b.type = 'button';
        b.addEventListener('click', r.onSelect);
        td.append(b);
        row.append(td);
      } else row.append(cell('td', text));
    });
    tbody.append(row);
  }
  t.append(thead, tbody);
  return t;
}

// The `count` largest entries of a (L, H) tensor { data, shape } as [{ layer, head, value }].
function topHeads(t, count, by = (v) => v) {
  const H = t.shape[1];
  return Array.from(t.data, (value, i) => ({ layer: Math.floor(i / H), head: i % H, value }))
    .filter((e) => !Number.isNaN(e.value))
    .sort((a, b) => by(b.value) - by(a.value))
    .slice(0, count);
}

const fmt = (x) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(3));

/** The two likeliest next tokens after `ids` (the prediction and the runner-up it is compared with). */
async function topTwo(source, ids) {
  const r = await source.forward(ids, { layer: 0, rows: 'last' });
  return topK(r.logits.subarray(r.logits.length - r.vocabSize), 2);
}

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
    const [top, second] = await topTwo(source, ids);
    const [tokenText, againstText] = await source.strings([top.id, second.id]);
    const scores = await source.headScores(ids);
    const parts = await source.logitAttribution(ids, {
      position: ids.length - 1,
      token: top.id,
      against: second.id,
    });
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
        `Who writes “${tokenText}” over “${againstText}” at the last position (logit difference ${fmt(parts.logitDiff)}; the parts sum to ${fmt(parts.total)})`,
        ['part', 'contribution'],
        attributionRows(parts, headRow),
      ),
    );
    note.textContent = `Next token “${tokenText}” over “${againstText}”. A head's name opens it step by step above.`;
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

/** "Patch every head": which heads' clean output restores the answer (with progress and Cancel). */
async function patch($, why) {
  const { source, text } = why.getContext();
  const out = $('why-patch-results'),
    note = $('why-patch-note'),
    progress = $('why-progress');
  out.replaceChildren();
  try {
    const inputs = await patchInputs(source, text, $('why-corrupted').value);
    if (inputs.error) {
      note.textContent = inputs.error;
      return;
    }
    const [top, second] = await topTwo(source, inputs.clean);
    why.running = new AbortController();
    $('why-cancel').hidden = false;
    progress.hidden = false;
    note.textContent = 'Patching every head…';
    const result = await source.patch(
      { ...inputs, token: top.id, against: second.id, component: 'head' },
      {
        signal: why.running.signal,
        onProgress: (done, total) => {
          progress.value = total ? done / total : 0;
        },
      },
    );
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
    why.running = null;
    $('why-cancel').hidden = true;
    progress.hidden = true;
  }
}

/**
 * Wires the section: `getContext()` → { source, text } of what is shown; `openHead(layer, head)`
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
  $('why-patch').addEventListener('click', () => {
    if (!why.running) patch($, why);
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
}
