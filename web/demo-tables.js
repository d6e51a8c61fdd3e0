// The demo's tables of a model's predictions: per position (the top 3 next tokens, right or wrong;
// the last PREDICTION_ROWS positions until the reader asks for all), the 10 likeliest next tokens
// after the input, and the logit lens (asked a moment after the input settles). Token text only goes
// through textContent.

/** A token as shown in tables: spaces, line breaks and tabs made visible. */
export const visible = (s) => String(s).replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥') || '∅';

/**
 * The rows of the per-position table shown until "Show all": the last positions — where the input
 * ends, what the model expects next, and the query row the heatmap's bars show first.
 */
export const PREDICTION_ROWS = 8;

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

/**
 * Shows the per-position table limited to its last PREDICTION_ROWS rows, or all of them, as the
 * toggle says (aria-expanded); the toggle is hidden when the table has no more rows than that.
 */
export function limitPredictionRows($) {
  const button = $('predictions-toggle');
  const rows = [...($('predictions-table').tBodies[0]?.rows ?? [])];
  const all = button.getAttribute('aria-expanded') === 'true';
  const limited = rows.length > PREDICTION_ROWS && !all;
  rows.forEach((tr, i) => {
    tr.hidden = limited && i < rows.length - PREDICTION_ROWS;
  });
  button.hidden = rows.length <= PREDICTION_ROWS;
  button.textContent = all ? `Show only the last ${PREDICTION_ROWS}` : `Show all ${rows.length} positions`;
  $('predictions-shown').textContent = limited
    ? `Showing the last ${PREDICTION_ROWS} of ${rows.length} positions.`
    : '';
}

/** The "Show all" toggle of the per-position table (a button: keys work as clicks). */
export function attachPredictionsToggle($) {
  const button = $('predictions-toggle');
  button.addEventListener('click', () => {
    button.setAttribute('aria-expanded', String(button.getAttribute('aria-expanded') !== 'true'));
    limitPredictionRows($);
  });
}

/**
 * Draws what predict() found, by the source's `predictions` view: the per-position table (returns
 * { right, scored }) or the 10 likeliest next tokens (returns them).
 */
export function showPredictions($, kind, predicted, { tokens, layer, L }) {
  const T = tokens.length;
  if (kind === 'positions') {
    $('predictions').hidden = false;
    const result = renderPredictions($('predictions-table'), tokens, predicted);
    limitPredictionRows($);
    $('predictions-summary').textContent =
      `Layer ${layer} of ${L} shown above. The model's most likely next token is right at ` +
      `${result.right} of ${result.scored} positions (✓/✗ compare it with the token that actually comes next).`;
    return result;
  }
  if (kind === 'next') {
    $('pretrained').hidden = false;
    renderTop($('next-table'), predicted);
    $('next-summary').textContent =
      `After “${tokens[T - 1]}” (position ${T - 1}): the 10 likeliest next tokens hold ` +
      `${(100 * predicted.reduce((s, t) => s + t.p, 0)).toFixed(1)}% of the probability. Layer ${layer} of ${L} is shown below.`;
  }
  return predicted;
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

const lensRun = { timer: 0, key: '', step: -1 }; // the pending lens request, its input, the column outlined

/**
 * Outlines the lens column of position `col` (-1: none) — the step a chat's picked reply token was
 * written at (web/demo-chat.js) — now and in every lens drawn after.
 */
export function markLensStep($, col) {
  lensRun.step = col;
  const table = $('lens-table');
  for (const c of table.querySelectorAll('.step')) c.classList.remove('step');
  const rows = [...(table.tBodies[0]?.rows ?? [])];
  const at = (tr) => tr.cells[col + 1];
  const shown = col >= 0 && rows.length > 0 && at(rows[0]);
  // The same column in words where the chat view is (the table may be far below it, or scrolled).
  $('chat-lens').textContent = shown
    ? `The logit lens at that step (position ${col}): ` +
      rows
        .map((tr) => `${tr.cells[0].textContent} “${at(tr).firstChild.textContent}” ${at(tr).title}`)
        .join(' · ')
    : '';
  if (!shown) return;
  for (const tr of table.rows) at(tr)?.classList.add('step');
  at(table.rows[0])?.scrollIntoView?.({ block: 'nearest', inline: 'center' });
}

export function scheduleLens(source, ids, tokens, $) {
  const key = `${source.label}|${source.key ?? ''}|${ids}`;
  if (key === lensRun.key) return;
  lensRun.key = key;
  clearTimeout(lensRun.timer);
  $('lens').dataset.state = 'pending';
  lensRun.timer = setTimeout(async () => {
    const el = $('lens-table'),
      note = $('lens-note');
    let lens;
    try {
      lens = await source.logitLens(ids);
    } catch (error) {
      if (lensRun.key !== key) return;
      el.replaceChildren();
      note.textContent = `Logit lens: ${error.message}`;
      $('lens').dataset.state = 'unavailable';
      return;
    }
    if (lensRun.key !== key) return;
    renderLens(el, source.info.numLayers, tokens, lens);
    markLensStep($, lensRun.step);
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
