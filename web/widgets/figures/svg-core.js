// The building blocks of the SVG export (svg.js has the overview): XML-safe text, numbers and
// colours, the figure that panels draw into (cells as one path per colour level), text, and the
// finished document (paint-svg.js paints display lists into a figure).
import { HALO_WIDTH } from './display-list.js';

/** Text as XML character data or attribute value: escaped, and only characters XML 1.0 allows. */
export function xmlText(value) {
  let t = String(value);
  t =
    typeof t.toWellFormed === 'function'
      ? t.toWellFormed()
      : t.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
  return t
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** A coordinate: at most 2 decimals, no "-0". */
export function num(v) {
  const r = Math.round(v * 100) / 100;
  return String(r === 0 ? 0 : r);
}

let scratch = null;
/** A 2-D context for measuring text and parsing colours (one for the whole export). */
export function scratchContext() {
  scratch ||= new OffscreenCanvas(1, 1).getContext('2d');
  return scratch;
}

/** Any CSS colour as { hex: '#rrggbb', alpha } (the browser's canvas parser normalises it). */
export function cssHex(color) {
  const ctx = scratchContext();
  ctx.fillStyle = '#000';
  ctx.fillStyle = String(color);
  const c = ctx.fillStyle;
  if (c.startsWith('#')) return { hex: c, alpha: 1 };
  const m = /rgba?\(([^)]+)\)/.exec(c);
  if (!m) return { hex: '#000000', alpha: 1 };
  const [r, g, b, a = 1] = m[1]
    .split(/[\s,/]+/)
    .filter(Boolean)
    .map(Number);
  return { hex: `#${[r, g, b].map((x) => Math.round(x).toString(16).padStart(2, '0')).join('')}`, alpha: a };
}

/**
 * A CSS colour as SVG paint attributes that every SVG reader understands: `name="#rrggbb"`, plus
 * `name-opacity` for translucent colours.
 */
export function paint(name, color) {
  const { hex, alpha } = cssHex(color);
  return `${name}="${hex}"${alpha < 1 ? ` ${name}-opacity="${+alpha.toFixed(3)}"` : ''}`;
}

/** Entry i of a colour table as #rrggbb. */
export const hex3 = (lut, i) =>
  `#${[lut[i * 3], lut[i * 3 + 1], lut[i * 3 + 2]].map((x) => x.toString(16).padStart(2, '0')).join('')}`;

/**
 * The cells of a figure: one path per fill colour, rectangles in cell units. Panels of the same cell
 * size share one scale() group; a panel's origin is its first move (in thousandths of a cell), every
 * later move is relative (integers within a panel).
 */
export class CellPaths {
  constructor() {
    this.groups = new Map();
    this.count = 0;
  }

  /** A run of `len` cells of colour `fill` from (row, col) of a panel whose cell (0, 0) is at (ox, oy) px. */
  add(fill, cw, ch, ox, oy, row, col, len) {
    const key = `${cw},${ch}`;
    let g = this.groups.get(key);
    if (!g) this.groups.set(key, (g = { cw, ch, levels: new Map() }));
    let p = g.levels.get(fill);
    if (!p) g.levels.set(fill, (p = { d: [], x: null, y: null }));
    const x = Math.round((ox / cw) * 1000) + col * 1000,
      y = Math.round((oy / ch) * 1000) + row * 1000;
    const u = (m) => String(m / 1000);
    p.d.push(
      p.x === null ? `M${u(x)} ${u(y)}h${len}v1h-${len}z` : `m${u(x - p.x)} ${u(y - p.y)}h${len}v1h-${len}z`,
    );
    p.x = x;
    p.y = y;
    this.count++;
  }

  toString() {
    let out = '';
    for (const g of this.groups.values()) {
      out += `<g transform="scale(${+g.cw.toFixed(6)} ${+g.ch.toFixed(6)})" shape-rendering="crispEdges">\n`;
      const fills = [...g.levels.keys()].sort();
      for (const f of fills) out += `<path fill="${f}" d="${g.levels.get(f).d.join('')}"/>\n`;
      out += '</g>\n';
    }
    return out;
  }
}

/**
 * What one figure collects while its panels are drawn.
 * @param {object} theme  themeOf(host)
 * @param {number} s      font scale (fontSize / 12)
 */
export function svgFigure(theme, s = 1) {
  return { theme, s, cells: new CellPaths(), defs: new Map(), body: [] };
}

/** Text y for a canvas textBaseline, from the alphabetic baseline SVG uses. */
export function baseY(y, size, baseline) {
  if (baseline === 'middle') return y + 0.35 * size;
  if (baseline === 'top') return y + 0.8 * size;
  if (baseline === 'bottom') return y - 0.22 * size;
  return y;
}

/** A text element, its y from the canvas textBaseline `baseline`; `extra` is appended to its attributes. */
export function text(
  x,
  y,
  str,
  { size, anchor = 'start', baseline = 'alphabetic', fill, mono, weight, extra = '' },
  fig,
) {
  const attrs = [`x="${num(x)}"`, `y="${num(baseY(y, size, baseline))}"`, `font-size="${num(size)}"`];
  if (anchor !== 'start') attrs.push(`text-anchor="${anchor}"`);
  if (fill) attrs.push(paint('fill', fill));
  if (mono) attrs.push(`font-family="${xmlText(fig.theme.mono)}"`);
  if (weight) attrs.push(`font-weight="${weight}"`);
  return `<text ${attrs.join(' ')}${extra}>${xmlText(str)}</text>`;
}

/**
 * The figure as an SVG document.
 * @param {object} fig  from svgFigure, its panels drawn
 * @param {{ width: number, height: number, title: string, state: object, outWidth?: number }} o
 */
export function svgDocument(fig, { width, height, title, state, outWidth }) {
  const { theme } = fig;
  const W = Math.ceil(width),
    H = Math.ceil(height);
  // outWidth: the document's width, the drawing scaled to it as vectors (the viewBox keeps the layout).
  const k = outWidth > 0 ? outWidth / W : 1;
  const head =
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="${num(W * k)}" height="${num(H * k)}" viewBox="0 0 ${W} ${H}" ` +
    `font-family="${xmlText(theme.font)}" role="img" aria-label="${xmlText(title)}">\n` +
    `<title>${xmlText(title)}</title>\n` +
    `<metadata id="aw-state">${xmlText(JSON.stringify(state))}</metadata>\n` +
    (fig.defs.size ? `<defs>${[...fig.defs.values()].join('')}</defs>\n` : '') +
    `<rect width="${W}" height="${H}" ${paint('fill', theme.bgSolid)}/>\n`;
  return `${head}${fig.cells}${fig.body.join('\n')}\n</svg>\n`;
}

/** The state object written into <metadata>: JSON-safe (typed arrays → arrays, −∞ → null). */
export function jsonSafe(value) {
  return JSON.parse(
    JSON.stringify(value, (k, v) =>
      ArrayBuffer.isView(v) ? Array.from(v, (x) => (Number.isFinite(x) ? x : null)) : v,
    ),
  );
}

/** A text element (the canvas's fillText, textBaseline and textAlign as SVG): for widgets' own drawings (12 px × the figure's font scale unless a size is given). */
export function svgText(
  fig,
  x,
  y,
  str,
  { size = 12 * fig.s, anchor = 'start', baseline = 'alphabetic', fill, mono, weight, halo } = {},
) {
  const extra = halo
    ? ` ${paint('stroke', halo)} stroke-width="${HALO_WIDTH}" stroke-linejoin="round" paint-order="stroke"`
    : '';
  return text(x, y, str, { size, anchor, baseline, fill, mono, weight, extra }, fig);
}
