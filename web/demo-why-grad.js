// The gradient answers of the demo's "Why this prediction?": input saliency (which input tokens the
// explained token depends on: source.saliency, gradient × input or integrated gradients) and
// attribution patching (which heads carry the answer, estimated from one backward:
// source.attributionPatch), both run where the source's model lives (a folder's in the model worker),
// with progress and the section's Cancel (the calls: demo-why-calls.js). Token text goes through textContent only.
import { cell, fmt, table, topHeads } from './demo-why-table.js';
import { chooseTarget, targetWhere } from './demo-why-target.js';
import { callOn, offers } from './demo-why-calls.js';

/** Starts a long run: the section's Cancel and progress bar shown; returns { signal, onProgress }. */
export function startRun($, why) {
  why.running = new AbortController();
  $('why-cancel').hidden = false;
  const progress = $('why-progress');
  progress.hidden = false;
  progress.value = 0;
  return {
    signal: why.running.signal,
    onProgress: (done, total) => {
      progress.value = total ? done / total : 0;
    },
  };
}

/** Ends a long run (finished, failed or cancelled). */
export function endRun($, why) {
  why.running = null;
  $('why-cancel').hidden = true;
  $('why-progress').hidden = true;
}

/**
 * The input's tokens shaded by their scores (orange: for the token, blue: against it; the strength
 * |score| / max |score|), each token's score in its tooltip, and a table of the largest (what a screen
 * reader reads: the shading is for the eye).
 */
function saliencyView(tokens, scores, caption) {
  let m = 0;
  for (const v of scores) if (Number.isFinite(v)) m = Math.max(m, Math.abs(v));
  const line = document.createElement('p');
  line.className = 'why-saliency';
  tokens.forEach((text, t) => {
    const v = scores[t],
      a = m > 0 && Number.isFinite(v) ? (0.45 * Math.abs(v)) / m : 0;
    const span = cell('span', text, 'why-token');
    span.style.backgroundColor = v >= 0 ? `rgba(230, 120, 20, ${a})` : `rgba(40, 110, 200, ${a})`;
    span.title = `position ${t}: ${fmt(v)}`;
    span.style.whiteSpace = 'pre-wrap'; // spaces in a token stay visible; long lines still wrap
    line.append(span);
  });
  const order = Array.from(scores.keys()).sort((x, y) => Math.abs(scores[y]) - Math.abs(scores[x]));
  const rows = order.slice(0, 6).map((t) => ({ cells: [`${tokens[t]} (${t})`, fmt(scores[t])] }));
  const box = document.createElement('div');
  box.append(line, table(caption, ['token (position)', 'score'], rows));
  return box;
}

/** "Saliency": which input tokens the explained token depends on (the method chosen in #why-method). */
export async function saliency($, why) {
  const { source, text } = why.getContext();
  const out = $('why-saliency-results'),
    note = $('why-saliency-note');
  out.replaceChildren();
  if (!offers(source, 'saliency')) {
    note.textContent = 'This model source does not offer saliency yet.';
    return;
  }
  let run = null; // set once the run starts: only then is there a Cancel and progress to put away
  try {
    const input = await source.tokenize(text);
    if (input.error) {
      note.textContent = input.error;
      return;
    }
    const target = await chooseTarget($, source, input.ids);
    const [tokenText] = await source.strings([target.token]);
    const method = $('why-method').value;
    note.textContent = 'Computing saliency…';
    run = startRun($, why);
    const { signal, onProgress } = run;
    const { position, token, against } = target;
    const r = await callOn(
      source,
      'saliency',
      input.ids,
      { position, token, against, method },
      { signal, onProgress },
    );
    const caption = `Input tokens that “${tokenText}” depends on ${targetWhere(target)} (${method})`;
    out.append(saliencyView(await source.strings(input.ids), Array.from(r.scores.data), caption));
    const gap = Number.isFinite(r.delta) ? `; completeness gap ${fmt(r.delta)}` : '';
    note.textContent = `Saliency of “${tokenText}”: metric ${fmt(r.value)}${gap}.`;
  } catch (error) {
    note.textContent =
      error.name === 'AbortError' ? 'Cancelled.' : `Could not compute saliency: ${error.message}`;
  } finally {
    if (run) endRun($, why);
  }
}

/**
 * "Attribution patching": every head's estimated share of the answer from one backward
 * (`inputs`: the clean and corrupted ids; `target`: chooseTarget's), with progress and Cancel.
 */
export async function attributionPatch($, why, inputs, target) {
  const { source } = why.getContext();
  const out = $('why-patch-results'),
    note = $('why-patch-note');
  if (!offers(source, 'attributionPatch')) {
    note.textContent = 'This model source does not offer attribution patching yet.';
    return;
  }
  note.textContent = 'Attribution patching (two forwards, one backward)…';
  try {
    const run = startRun($, why);
    const { position, token, against } = target;
    const result = await callOn(
      source,
      'attributionPatch',
      { ...inputs, position, token, against, component: 'head' },
      run,
    );
    out.append(
      table(
        'Heads whose clean output restores the answer, estimated by attribution patching (1 = all of it)',
        ['head', 'estimated'],
        topHeads(result.result, 6, Math.abs).map((e) => why.headRow(e.layer, e.head, [fmt(e.value)])),
      ),
    );
    note.textContent = `Attribution patching: clean logit difference ${fmt(result.cleanDiff)}, corrupted ${fmt(result.corruptedDiff)}.`;
  } catch (error) {
    note.textContent =
      error.name === 'AbortError' ? 'Cancelled.' : `Could not run attribution patching: ${error.message}`;
  } finally {
    endRun($, why);
  }
}
