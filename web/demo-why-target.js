// Which token the demo's "Why this prediction?" explains: the next one after the input (the default),
// or a token already in it — a generated token, appended to the input by Generate — chosen in
// #why-target. A token at position t is explained where the model predicted it: at position t − 1,
// against the likeliest other token there.
import { topK } from './demo-models.js';

/** How many of the input's last tokens the chooser offers (generation appends at most 20). */
const OFFERED = 24;

/**
 * The target of `ids`: { position, token, against, next } — next: the token after the input, its
 * prediction and the runner-up; else the chosen token of the input against the likeliest other one.
 */
export async function chooseTarget($, source, ids) {
  const chosen = $('why-target').value;
  const t = chosen === '' ? ids.length : Number(chosen);
  if (!(Number.isInteger(t) && t >= 1 && t < ids.length)) {
    const r = await source.forward(ids, { layer: 0, rows: 'last' });
    const [top, second] = topK(r.logits.subarray(r.logits.length - r.vocabSize), 2);
    return { position: ids.length - 1, token: top.id, against: second.id, next: true };
  }
  const r = await source.forward(ids, { layer: 0, rows: 'all' });
  const V = r.vocabSize,
    position = t - 1;
  const [a, b] = topK(r.logits.subarray(position * V, (position + 1) * V), 2);
  return { position, token: ids[t], against: (a.id === ids[t] ? b : a).id, next: false };
}

/** Fills the chooser with the next token and the input's last tokens (keeping the choice where it still exists). */
export function fillTargets($, tokens) {
  const select = $('why-target'),
    was = select.value;
  const option = (value, text) => Object.assign(document.createElement('option'), { value, text });
  const from = Math.max(1, tokens.length - OFFERED);
  const options = [option('', 'the next token')];
  for (let t = tokens.length - 1; t >= from; t--)
    options.push(option(String(t), `“${tokens[t]}” at position ${t}`));
  select.replaceChildren(...options);
  select.value = options.some((o) => o.value === was) ? was : '';
}

/** The caption's words for the target: "at the last position" or "at position p (predicting …)". */
export const targetWhere = (target) =>
  target.next ? 'at the last position' : `at position ${target.position}, where it was predicted`;
