// <patching-view>'s inputs: the ids typed as text, the plan of a run (defaults filled from the model's
// predictions), the sentence that describes it, and the grid's labels.
import { logitsAt, modelShape, topIds } from './interp-base.js';

/** Text of ids → ids: vocabulary names (of `vocab`) or numbers; null for empty text. */
export function parseIds(text, vocab) {
  if (!text || !text.trim()) return null;
  const names = new Map((vocab ?? []).map((t, i) => [t, i]));
  return text
    .trim()
    .split(/[\s,]+/)
    .map((p) => (names.has(p) ? names.get(p) : Number(p)));
}

/**
 * What a run of `el` would use: ids, position and the token pair (defaults filled from the two runs' top
 * predictions). Throws with a readable message when the inputs are incomplete.
 */
export function planPatch(el) {
  const m = el._model;
  if (!m) throw new Error('No model yet.');
  const clean = el.clean,
    corrupted = el.corrupted;
  if (!clean || !corrupted)
    throw new Error('Type a clean and a corrupted input (token ids, space-separated).');
  if (clean.length !== corrupted.length)
    throw new Error(
      `The clean input has ${clean.length} tokens and the corrupted one ${corrupted.length}: they must have one length.`,
    );
  const { V } = modelShape(m);
  for (const id of [...clean, ...corrupted])
    if (!Number.isInteger(id) || id < 0 || id >= V)
      throw new Error(`“${id}” is not a token of this model (ids 0 … ${V - 1}).`);
  const T = clean.length;
  const position = el.position ?? T - 1;
  if (!Number.isInteger(position) || position < 0 || position >= T)
    throw new Error(`position must be in 0 … ${T - 1}.`);
  let token = el.token,
    against = el.against;
  if (token === undefined) token = topIds(logitsAt(m, clean, position), 1)[0];
  if (against === undefined) against = topIds(logitsAt(m, corrupted, position), 2).find((t) => t !== token);
  return { clean, corrupted, position, token, against, component: el.component };
}

/** The sentence above the grid: what the plan p compares, and where the inputs differ. */
export function planSummary(el, p) {
  const nameOf = (i) => el.tokenName(i);
  const changed = p.clean.map((id, i) => (id !== p.corrupted[i] ? i : -1)).filter((i) => i >= 0);
  return (
    `At position ${p.position} (after “${nameOf(p.clean[p.position])}”): the logit of “${nameOf(p.token)}”` +
    `${el.token === undefined ? ' (the clean run’s top prediction)' : ''} minus that of “${nameOf(p.against)}”` +
    `${el.against === undefined ? ' (the corrupted run’s top prediction)' : ''}. ` +
    `${changed.length ? `The inputs differ at position${changed.length > 1 ? 's' : ''} ${changed.join(', ')}.` : 'The inputs are the same: nothing to explain.'}`
  );
}

/** Row labels (layers) and column labels (heads, or the positions' tokens: clean/corrupted where they differ) of the grid s. */
export function gridLabels(el, s) {
  const rowLabels = Array.from({ length: s.L }, (_, l) => `L${l}`);
  const colLabels =
    s.component === 'head'
      ? Array.from({ length: s.cols }, (_, hd) => `H${hd}`)
      : s.clean.map((id, t) =>
          id === s.corrupted[t] ? el.tokenName(id) : `${el.tokenName(id)}/${el.tokenName(s.corrupted[t])}`,
        );
  return { rowLabels, colLabels };
}
