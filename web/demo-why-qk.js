// QK attribution from the demo's attention heatmap: a click on (or Enter on) a cell of a head's
// weights asks the source's qkAttribution (a folder's model in the model worker) which components of
// the residual stream made that query look at that key — the score split bilinearly over the query
// position's components (rows) and the key position's (columns). Shown: the score, its sum check
// (Σ matrix + position bias = score), the largest entries as a table with bars, and for a key the
// mask hides, why it is refused. Token text goes through textContent only.
import { cell, fmt, table } from './demo-why-table.js';
import { callOn, offers } from './demo-why-calls.js';

const TOP = 8;

/** The `count` largest |entries| of the (C, C) matrix as rows: query part, key part, value, bar. */
function topEntries(r, count) {
  const C = r.components.length,
    data = r.matrix.data;
  const order = Array.from(data.keys()).sort((a, b) => Math.abs(data[b]) - Math.abs(data[a]));
  const m = Math.abs(data[order[0]]) || 1;
  return order.slice(0, count).map((i) => {
    const v = data[i];
    return {
      cells: [r.components[Math.floor(i / C)], r.components[i % C], fmt(v)],
      bar: Math.abs(v) / m,
      sign: v >= 0 ? 'pos' : 'neg',
    };
  });
}

/** A table of the top entries, each row with a bar of its size (hidden from screen readers: the value says it). */
function entriesTable(r, caption) {
  const rows = topEntries(r, TOP);
  const t = table(caption, ['query part', 'key part', 'contribution'], rows);
  [...t.tBodies[0].rows].forEach((tr, k) => {
    const bar = cell('span', '', `why-bar ${rows[k].sign}`);
    bar.setAttribute('aria-hidden', 'true');
    // Styled here: demo.css has no rule for it (inline style through the CSSOM passes the CSP).
    Object.assign(bar.style, {
      display: 'inline-block',
      height: '0.7em',
      width: `${Math.round(rows[k].bar * 60)}px`,
      background: rows[k].sign === 'pos' ? '#b35900' : '#2a64b0',
    });
    tr.cells[2].append(' ', bar);
  });
  return t;
}

/** The sum check's sentence: every entry summed, the position bias, the score they make. */
function sumText(r) {
  let sum = 0;
  for (const v of r.matrix.data) sum += v;
  return (
    `Score ${fmt(r.score)} = Σ of the ${r.matrix.data.length} entries (${fmt(sum)})` +
    ` + position bias (${fmt(r.positionBias)}).`
  );
}

/**
 * Explains the heatmap cell `d` (cell-click's detail: head, row = query, col = key) of layer `layer`
 * on the shown source and text, into #why-qk-results and #why-qk-note.
 */
export async function explainCell($, { source, text, layer }, d) {
  const out = $('why-qk-results'),
    note = $('why-qk-note');
  out.replaceChildren();
  delete out.dataset.score;
  // Each click numbered on the element: an answer to an earlier click that comes late is dropped.
  const seq = String(Number(out.dataset.seq ?? 0) + 1);
  out.dataset.seq = seq;
  if (!offers(source, 'qkAttribution')) {
    note.textContent = 'This model source does not offer QK attribution.';
    return;
  }
  if (typeof d.head !== 'number') {
    note.textContent = 'Choose one head in the heatmap (not the mean) to see why its query looks at a key.';
    return;
  }
  const where = `layer ${layer}, head ${d.head}: query “${d.query}” (${d.row}) → key “${d.key}” (${d.col})`;
  try {
    const input = await source.tokenize(text);
    if (input.error) {
      note.textContent = input.error;
      return;
    }
    const options = { layer, head: d.head, query: d.row, key: d.col };
    const r = await callOn(source, 'qkAttribution', input.ids, options);
    if (out.dataset.seq !== seq) return;
    out.dataset.score = String(r.score);
    out.append(entriesTable(r, `Why ${where} (the ${TOP} largest of ${r.matrix.data.length} parts)`));
    note.textContent = sumText(r);
  } catch (error) {
    if (out.dataset.seq !== seq) return;
    const hidden = /mask hides it/.test(error.message);
    const reason = error.message.replace(/^qkAttribution: /, '');
    note.textContent = hidden
      ? `Refused: ${where}: ${reason}. A key the query cannot look at has no score to split.`
      : `Could not explain the cell: ${error.message}`;
  }
}
