// A standalone HTML snapshot of views: one file with each view as inline SVG (its
// toSVG()) and its data as an HTML table (its CSV) — no script, no wasm, no network, no external
// reference — that opens anywhere (email, a notebook's HTML output, a course page) and renders under
// `default-src 'none'`: its one <style> is allowed by its SHA-256 hash in a <meta> policy, and the
// figures use SVG presentation attributes only.
//
//   snapshotHTML(elements, { title, tables, maxRows, description }) → string
//   downloadSnapshot(elements, { title, filename, ... })             saves it
//   figureSVG(el)                                                    the SVG a snapshot / print uses
import { download, slug } from './export.js';
import { xmlText } from './figures/svg.js';

/** The stylesheet of every snapshot (constant: its hash goes into the page's policy). */
export const SNAPSHOT_CSS = `:root { color-scheme: light; color: #1d2330; background: #fff;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; }
body { margin: 0 auto; max-width: 1120px; padding: 1.5rem 1rem 3rem; line-height: 1.45; }
h1 { font-size: 1.5rem; margin: 0 0 .5rem; }
h2 { font-size: 1.1rem; margin: 2rem 0 .5rem; }
.note { color: #4a4f5a; font-size: .9rem; }
figure { margin: .75rem 0; }
figure svg { display: block; max-width: 100%; height: auto; }
figcaption { color: #4a4f5a; font-size: .9rem; margin-top: .35rem; }
details { margin: .5rem 0 1rem; }
summary { cursor: pointer; }
.table { overflow: auto; max-height: 32rem; }
table { border-collapse: collapse; font-size: .8rem; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: 600; padding: .25rem 0; }
th, td { border: 1px solid #c9ccd3; padding: 2px 6px; text-align: right; white-space: nowrap; }
th { background: #f2f3f5; }
@media print { details { display: block; } .table { max-height: none; overflow: visible; } }
`;

/**
 * The SVG of a widget as a snapshot or a print shows it: <attention-heatmap> with its query bars;
 * an <attention-model-view> over its size limit: the layer last opened (and `note` says so).
 * @returns {{ svg: string, note: string } | null} null: the widget has no vector export (or nothing is drawn)
 */
export function figureSVG(el) {
  if (typeof el.toSVG !== 'function') return null;
  try {
    return { svg: el.localName === 'attention-heatmap' ? el.toSVG({ bars: true }) : el.toSVG(), note: '' };
  } catch (error) {
    if (error.code !== 'SVG_TOO_LARGE' || !el.shown || el.shown.L < 2) return null;
    const layer = el.state?.openedLayer ?? 0;
    try {
      return { svg: el.toSVG({ layer }), note: `${error.message.split(':')[0]}: layer ${layer} only.` };
    } catch {
      return null;
    }
  }
}

/** The SVG text ready to inline in HTML as figure k: no XML prolog, its ids (and references) made unique. */
export function inlineSVG(svg, k) {
  let out = svg.replace(/^<\?xml[^>]*\?>\s*/, '');
  const ids = new Set([...out.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]));
  for (const id of ids) {
    const esc = id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    out = out
      .replace(new RegExp(`(\\sid=")${esc}"`, 'g'), `$1${id}-f${k}"`)
      .replace(new RegExp(`url\\(#${esc}\\)`, 'g'), `url(#${id}-f${k})`);
  }
  return out.trim();
}

/** RFC 4180 CSV → rows of fields. */
export function parseCSV(text) {
  const rows = [];
  let row = [],
    field = '',
    i = 0,
    quoted = false;
  const s = String(text ?? '');
  while (i < s.length) {
    const ch = s[i];
    if (quoted) {
      if (ch === '"' && s[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (ch === '"') {
        quoted = false;
        i++;
        continue;
      }
      field += ch;
      i++;
      continue;
    }
    if (ch === '"') {
      quoted = true;
      i++;
      continue;
    }
    if (ch === ',') {
      row.push(field);
      field = '';
      i++;
      continue;
    }
    if (ch === '\r') {
      i++;
      continue;
    }
    if (ch === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
      continue;
    }
    field += ch;
    i++;
  }
  if (field !== '' || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** CSV text as an HTML table (header row, first column as row headers), at most maxRows data rows. */
export function csvTableHTML(csv, caption, maxRows = 500) {
  const rows = parseCSV(csv);
  if (!rows.length) return '';
  const [head, ...body] = rows;
  const shown = body.slice(0, maxRows);
  const th = (t, scope) => `<th scope="${scope}">${xmlText(t)}</th>`;
  const lines = shown.map(
    (r) => `<tr>${r.map((c, j) => (j === 0 ? th(c, 'row') : `<td>${xmlText(c)}</td>`)).join('')}</tr>`,
  );
  const more =
    body.length > shown.length
      ? `<p class="note">The first ${shown.length} of ${body.length} rows; the widget's CSV export has all of them.</p>`
      : '';
  return (
    `<div class="table" role="region" tabindex="0" aria-label="${xmlText(caption)}"><table><caption>${xmlText(caption)}</caption>` +
    `<thead><tr>${head.map((c) => th(c, 'col')).join('')}</tr></thead><tbody>${lines.join('')}</tbody></table></div>${more}`
  );
}

/**
 * One standalone HTML document: for each element its figure (inline SVG) and its data table.
 * Options: title (the page's <title> and <h1>), description (a paragraph under it), tables (default
 * true), maxRows (rows per table, default 500). Elements without toSVG() (or with nothing drawn)
 * get a note and their table. Nothing in it runs or loads: the page's policy is
 * `default-src 'none'; style-src 'sha256-…'` (the hash of SNAPSHOT_CSS).
 * @param {Iterable<HTMLElement>} elements  widgets, drawn
 * @returns {string}
 */
export function snapshotHTML(
  elements,
  { title = 'Attention views', description = '', tables = true, maxRows = 500 } = {},
) {
  const parts = [];
  let k = 0;
  for (const el of elements) {
    k++;
    const name = el.localName;
    const fig = figureSVG(el);
    const svgTitle = fig ? (/<title>([\s\S]*?)<\/title>/.exec(fig.svg)?.[1] ?? '') : '';
    const heading = `${k}. &lt;${xmlText(name)}&gt;${el.id ? ` #${xmlText(el.id)}` : ''}`;
    let html = `<section aria-labelledby="v${k}"><h2 id="v${k}">${heading}</h2>\n`;
    if (fig) {
      html += `<figure>${inlineSVG(fig.svg, k)}<figcaption>${svgTitle}${fig.note ? ` ${xmlText(fig.note)}` : ''}</figcaption></figure>\n`;
    } else {
      html += `<p class="note">This view has no vector figure${typeof el.toSVG === 'function' ? ' (nothing drawn yet)' : ''}; its data follows.</p>\n`;
    }
    if (tables && typeof el.getCSV === 'function') {
      let csv = '';
      try {
        csv = el.getCSV();
      } catch {
        csv = '';
      }
      const table = csv ? csvTableHTML(csv, `Data of view ${k} (${name})`, maxRows) : '';
      if (table) html += `<details><summary>Data (the widget's CSV)</summary>${table}</details>\n`;
    }
    parts.push(`${html}</section>`);
  }
  const policy = `default-src 'none'; style-src 'sha256-${sha256Base64(SNAPSHOT_CSS)}'`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${policy}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="attention-wasm widgets snapshotHTML">
<title>${xmlText(title)}</title>
<style>${SNAPSHOT_CSS}</style>
</head>
<body>
<main>
<h1>${xmlText(title)}</h1>
${description ? `<p>${xmlText(description)}</p>\n` : ''}<p class="note">A snapshot: each view as a vector figure (its state is in the figure's metadata) and its data. No script; nothing is loaded.</p>
${parts.join('\n')}
</main>
</body>
</html>
`;
}

/** Saves snapshotHTML(elements, options) as `filename` (default: the title's slug + .html). */
export function downloadSnapshot(elements, options = {}) {
  const html = snapshotHTML(elements, options);
  download(options.filename || `${slug(options.title || 'attention-views')}.html`, html, 'text/html');
  return html;
}

// ---- SHA-256 (synchronous, for the style hash; crypto.subtle is asynchronous) -----------------

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

/** SHA-256 of a string's UTF-8 bytes, base64 (as CSP hash sources write it). */
export function sha256Base64(text) {
  const msg = new TextEncoder().encode(text);
  const len = msg.length,
    total = Math.ceil((len + 9) / 64) * 64;
  const buf = new Uint8Array(total);
  buf.set(msg);
  buf[len] = 0x80;
  const dv = new DataView(buf.buffer);
  dv.setUint32(total - 8, Math.floor((len * 8) / 2 ** 32));
  dv.setUint32(total - 4, (len * 8) >>> 0);
  const H = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  const w = new Uint32Array(64);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));
  for (let off = 0; off < total; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = dv.getUint32(off + i * 4);
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, h] = H;
    for (let i = 0; i < 64; i++) {
      const S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i] + w[i]) >>> 0;
      const S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) >>> 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) >>> 0;
    }
    H[0] += a;
    H[1] += b;
    H[2] += c;
    H[3] += d;
    H[4] += e;
    H[5] += f;
    H[6] += g;
    H[7] += h;
  }
  let bin = '';
  for (const x of H) bin += String.fromCharCode(x >>> 24, (x >>> 16) & 255, (x >>> 8) & 255, x & 255);
  return btoa(bin);
}
