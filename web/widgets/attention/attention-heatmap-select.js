// Attention sinks and selections in <attention-heatmap>: columns hidden (the first token, which
// soaks up weight in most trained models, or any chosen key) with each row renormalised without
// them, and several query rows selected at once, their rows summed or averaged for the bar chart.
// Plain numbers in, new arrays out: the element draws what these return, and tests check them.

/** The indices a list attribute holds ("0,3" → [0, 3]): whole numbers ≥ 0, sorted, each once; else none. */
export function parseIndexList(text) {
  const out = new Set();
  for (const part of String(text ?? '').split(',')) {
    const t = part.trim();
    if (/^\d{1,6}$/.test(t)) out.add(Number(t));
  }
  return [...out].sort((a, b) => a - b);
}

/** The attribute type of such a list (attributes.js): read as above, written "0,3"; empty removes it. */
export const INDEX_LIST = {
  read: (text) => parseIndexList(text),
  write(el, name, value) {
    const list = parseIndexList(Array.isArray(value) ? value.join(',') : value);
    if (list.length) el.setAttribute(name, list.join(','));
    else el.removeAttribute(name);
  },
};

/** `list` with `i` added, or taken out when it was in it (sorted). */
export function toggleIndex(list, i) {
  return list.includes(i) ? list.filter((v) => v !== i) : [...list, i].sort((a, b) => a - b);
}

/**
 * A (rows, cols) matrix with the `hidden` columns taken out: their cells −∞ (drawn as masked) and,
 * when `renormalise`, each row divided by what is left of it, so a softmax row sums to 1 again
 * without them (sums in double). A signed map (a conv or DeltaNet layer's) is not a distribution:
 * its columns are hidden, its rows left as they are. A row with no weight left outside the hidden
 * columns (a causal first row that sees only token 0) has nothing to renormalise: it is all −∞ and
 * listed in `empty`. Returns { data: Float32Array, empty: row indices }.
 */
export function hideColumns(data, rows, cols, hidden, { renormalise = true } = {}) {
  const out = Float32Array.from(data);
  const cut = hidden.filter((c) => c >= 0 && c < cols);
  const empty = [];
  if (!cut.length) return { data: out, empty };
  for (let r = 0; r < rows; r++) {
    const row = out.subarray(r * cols, (r + 1) * cols);
    for (const c of cut) row[c] = -Infinity;
    if (!renormalise) continue;
    let left = 0;
    for (let c = 0; c < cols; c++) if (Number.isFinite(row[c])) left += row[c];
    if (!(left > 0)) {
      row.fill(-Infinity);
      empty.push(r);
      continue;
    }
    for (let c = 0; c < cols; c++) if (Number.isFinite(row[c])) row[c] = row[c] / left;
  }
  return { data: out, empty };
}

/**
 * Rows `queries` of a (rows, cols) matrix summed ('sum') or averaged ('mean'), in double; a masked
 * (−∞) cell counts as 0 (no weight). Returns a Float32Array of `cols` values.
 */
export function combineRows(data, cols, queries, how) {
  const acc = new Float64Array(cols);
  for (const q of queries)
    for (let c = 0; c < cols; c++) {
      const v = data[q * cols + c];
      if (Number.isFinite(v)) acc[c] += v;
    }
  const n = how === 'mean' && queries.length ? queries.length : 1;
  return Float32Array.from(acc, (v) => v / n);
}

/** The selected query rows inside a map of `rows` rows (none: the bars show the one `query` row). */
export const rowsShown = (queries, rows) => queries.filter((q) => q < rows);

/**
 * Hides `hidden` key columns in every tile drawn (`matrices`, each { rows, cols, data }: their data
 * replaced), renormalising softmax rows (not a signed map's). Returns what the summary adds ('' when
 * nothing is hidden).
 */
export function hideShown(matrices, hidden, signed) {
  const cols = hidden.filter((c) => c < (matrices[0]?.cols ?? 0));
  if (!cols.length) return '';
  signed ||= matrices.some((m) => m.data.some((v) => v < 0 && Number.isFinite(v)));
  let empty = [];
  for (const m of matrices) {
    const r = hideColumns(m.data, m.rows, m.cols, cols, { renormalise: !signed });
    m.data = r.data;
    if (r.empty.length > empty.length) empty = r.empty;
  }
  const which = `key${cols.length > 1 ? 's' : ''} ${cols.join(', ')} hidden`;
  const rest = signed
    ? ' (signed weights: rows not renormalised)'
    : ', each row renormalised without ' + (cols.length > 1 ? 'them' : 'it');
  const none = empty.length
    ? `; row${empty.length > 1 ? 's' : ''} ${empty.join(', ')} had no weight elsewhere (masked)`
    : '';
  return ` · ${which}${rest}${none}`;
}

/**
 * The bars of tile `m`: query row `q`, or the selected rows `queries` (two or more inside the map)
 * combined by `how`. Returns { row, what (the title's start), n (rows combined) }.
 */
export function barsRow(m, q, queries, how, queryTokens) {
  const rows = rowsShown(queries, m.rows);
  if (rows.length < 2) {
    const row = Float32Array.from(m.data.subarray(q * m.cols, (q + 1) * m.cols), (v) =>
      Number.isFinite(v) ? v : 0,
    );
    return { row, what: `Query “${queryTokens[q]}” (row ${q})`, n: 1 };
  }
  const row = combineRows(m.data, m.cols, rows, how);
  const verb = how === 'sum' ? 'Sum' : 'Mean';
  return { row, what: `${verb} of ${rows.length} query rows (${rows.join(', ')})`, n: rows.length };
}
