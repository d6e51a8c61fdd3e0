// Export helpers: every widget can hand back what it shows as CSV, JSON or PNG (as strings/Blobs for
// programs and tests) and download it (through a temporary blob: link, so nothing leaves the page).

/** RFC 4180 field. Text that a spreadsheet would run as a formula (=, +, -, @) gets a leading '. */
function csvText(s) {
  let t = String(s);
  if (/^[=+\-@\t\r]/.test(t)) t = `'${t}`;
  return /[",\n\r]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
}

/** Numbers as the shortest text that round-trips the stored float32; −∞ as -Infinity. */
function csvNumber(v) {
  if (v === -Infinity) return '-Infinity';
  if (v === Infinity) return 'Infinity';
  return String(Math.fround(v));
}

/**
 * A matrix as CSV: a header row of column labels, then one row per matrix row led by its label.
 * @param {{ data: ArrayLike<number>, rows: number, cols: number, rowLabels?: string[], colLabels?: string[], corner?: string }} m
 */
export function matrixToCSV({ data, rows, cols, rowLabels, colLabels, corner = '' }) {
  const lines = [
    [csvText(corner), ...Array.from({ length: cols }, (_, c) => csvText(colLabels ? colLabels[c] : c))].join(
      ',',
    ),
  ];
  for (let r = 0; r < rows; r++) {
    const cells = [csvText(rowLabels ? rowLabels[r] : r)];
    for (let c = 0; c < cols; c++) cells.push(csvNumber(data[r * cols + c]));
    lines.push(cells.join(','));
  }
  return lines.join('\n') + '\n';
}

/** Long-format CSV for several matrices (e.g. every head): one line per cell. */
export function matricesToLongCSV(list, keyName = 'head') {
  const lines = [[keyName, 'row', 'row_label', 'col', 'col_label', 'value'].join(',')];
  for (const m of list) {
    for (let r = 0; r < m.rows; r++)
      for (let c = 0; c < m.cols; c++) {
        lines.push(
          [
            csvText(m.key),
            r,
            csvText(m.rowLabels ? m.rowLabels[r] : r),
            c,
            csvText(m.colLabels ? m.colLabels[c] : c),
            csvNumber(m.data[r * m.cols + c]),
          ].join(','),
        );
      }
  }
  return lines.join('\n') + '\n';
}

/** (rows, cols) flat data → nested arrays; −∞ (masked) becomes null, as JSON has no infinities. */
export function toNested(data, rows, cols) {
  return Array.from({ length: rows }, (_, r) =>
    Array.from({ length: cols }, (_, c) => {
      const v = data[r * cols + c];
      return Number.isFinite(v) ? Math.fround(v) : null;
    }),
  );
}

/** Pretty JSON text of an export object. */
export function jsonText(obj) {
  return JSON.stringify(obj, null, 1) + '\n';
}

/**
 * Draws several canvases into one image (a grid of heads, a heatmap plus its chart) on an opaque
 * background. Each item is { canvas, x, y } in CSS pixels; the result is at the canvases' DPR.
 * @returns {HTMLCanvasElement}
 */
export function composeCanvases(items, background) {
  const dpr = items.length
    ? items[0].canvas.width / Math.max(1, parseFloat(items[0].canvas.style.width) || items[0].canvas.width)
    : 1;
  let w = 0,
    h = 0;
  for (const it of items) {
    w = Math.max(w, it.x + it.canvas.width / dpr);
    h = Math.max(h, it.y + it.canvas.height / dpr);
  }
  const out = document.createElement('canvas');
  out.width = Math.max(1, Math.round(w * dpr));
  out.height = Math.max(1, Math.round(h * dpr));
  const ctx = out.getContext('2d');
  ctx.fillStyle = background;
  ctx.fillRect(0, 0, out.width, out.height);
  for (const it of items) ctx.drawImage(it.canvas, Math.round(it.x * dpr), Math.round(it.y * dpr));
  return out;
}

/** @returns {Promise<Blob>} the canvas as a PNG */
export function canvasToBlob(canvas) {
  return new Promise((ok, fail) =>
    canvas.toBlob((b) => (b ? ok(b) : fail(new Error('PNG encoding failed'))), 'image/png'),
  );
}

/** Saves `content` (string or Blob) as `filename` through a temporary blob: link. */
export function download(filename, content, mime = 'text/plain') {
  const blob = content instanceof Blob ? content : new Blob([content], { type: `${mime};charset=utf-8` });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.rel = 'noopener';
  a.style.display = 'none';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A file-name-safe slug. */
export function slug(s) {
  return (
    String(s)
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'matrix'
  );
}
