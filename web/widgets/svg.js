// SVG export of the heatmap views: the picture a HeatmapView draws on its canvas (and the bar and
// line charts of charts.js beside it), as vector shapes a paper can use (Inkscape, Illustrator, a
// browser, LaTeX through svg/pdf conversion). Each panel function mirrors its canvas twin's layout.
//
//   - Cells are shapes, never an embedded raster: the cells of one colour level (one of the colour
//     map's 256 entries, the same quantisation the canvas uses) are ONE <path> for the whole figure
//     (per cell size: the panels of every widget today share theirs),
//     runs of equal cells in a row merged into one rectangle, coordinates in cell units under a
//     scale() so each rectangle costs ~14 bytes (a 64 × 64 heatmap is well under 250 KB).
//   - Self-contained: system font stacks by name, no <image>, no <foreignObject>, no link; the one
//     internal reference is the colour bar's gradient (url(#aw-cbar-<map>), the same for every
//     figure of a map, so several SVGs inlined in one page never disagree).
//   - Text (token labels are user content) is XML-escaped, and characters XML cannot hold (control
//     characters, lone surrogates) become U+FFFD.
//   - The view's state (widget, view, tokens, options) is JSON inside <metadata id="aw-state">.
import { colormap, inkOn } from './colormap.js';
import { fitText, formatNumber } from './draw-util.js';
import { scaleOf, tickText, ticksOf } from './xy-chart.js';

const PAD = 8; // as heatmap-view.js

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
/** Any CSS colour as { hex: '#rrggbb', alpha } (the browser's canvas parser normalises it). */
export function cssHex(color) {
  scratch ||= new OffscreenCanvas(1, 1).getContext('2d');
  scratch.fillStyle = '#000';
  scratch.fillStyle = String(color);
  const c = scratch.fillStyle;
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

const hex3 = (lut, i) =>
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

/** The colour bar's gradient (33 stops of the map's table, enough for its piecewise-linear anchors). */
function gradient(fig, map) {
  const id = `aw-cbar-${map.replace(/[^a-z0-9-]/gi, '')}`;
  if (!fig.defs.has(id)) {
    const lut = colormap(map);
    let stops = '';
    for (let j = 0; j <= 32; j++)
      stops += `<stop offset="${+(j / 32).toFixed(4)}" stop-color="${hex3(lut, Math.round((j * 255) / 32))}"/>`;
    fig.defs.set(id, `<linearGradient id="${id}" x1="0" y1="0" x2="1" y2="0">${stops}</linearGradient>`);
  }
  return id;
}

/** Text y for a canvas textBaseline, from the alphabetic baseline SVG uses. */
function baseY(y, size, baseline) {
  if (baseline === 'middle') return y + 0.35 * size;
  if (baseline === 'top') return y + 0.8 * size;
  if (baseline === 'bottom') return y - 0.22 * size;
  return y;
}

function text(
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
 * The colour bar of a domain at (x, y), `w` wide, with its three values and, if asked, the masked
 * swatch — as the canvas legend draws it.
 */
export function colorBar(fig, { x, y, w, domain, masked = false }) {
  const { theme, s } = fig;
  const { lo, hi, map } = domain;
  const id = gradient(fig, map);
  const out = [`<rect x="${num(x)}" y="${num(y)}" width="${num(w)}" height="10" fill="url(#${id})"/>`];
  const decimals = Math.abs(hi - lo) < 0.1 ? 4 : 2;
  const tick = (t, v, anchor) =>
    text(
      x + t * w,
      y + 13,
      formatNumber(v, decimals),
      { size: 10 * s, anchor, baseline: 'top', fill: theme.muted, mono: true },
      fig,
    );
  out.push(tick(0, lo, 'start'), tick(0.5, (lo + hi) / 2, 'middle'), tick(1, hi, 'end'));
  if (masked) {
    const mx = x + w + 14;
    out.push(
      `<rect x="${num(mx)}" y="${num(y)}" width="14" height="10" ${paint('fill', `rgb(${theme.maskedRgb.slice(0, 3).join(',')})`)}/>`,
      `<path d="M${num(mx + 1)} ${num(y + 9)}L${num(mx + 13)} ${num(y + 1)}" ${paint('stroke', theme.hatch)}/>`,
      text(mx + 20, y - 1, 'masked (−∞)', { size: 11 * s, baseline: 'top', fill: theme.muted }, fig),
    );
  }
  return out.join('\n');
}

/** Which colour-table level the canvas gives value v (−1: masked), the same arithmetic as HeatmapView. */
function levelOf(v, lo, k) {
  if (v >= lo) {
    const t = ((v - lo) * k + 0.5) | 0;
    return t > 255 ? 255 : t;
  }
  return v > -Infinity ? 0 : -1;
}

/**
 * One HeatmapView as a panel of the figure, its top-left corner at (ox, oy): cells, masked hatching,
 * cell borders, numbers, title, labels, Σ column, the selected row and the legend, laid out as the
 * canvas does for `width`. Hover and keyboard-focus marks (transient) are left out.
 * @returns {{ w: number, h: number, geo: object, cells: { x: number, y: number, w: number, h: number } }}
 *   cells: where the panel's cell area lies in the figure (written into the metadata, so a program
 *   can find cell (r, c) of a panel at x + (c + ½)·w/cols, y + (r + ½)·h/rows)
 */
export function heatmapPanel(fig, view, { x: ox = 0, y: oy = 0, width = view.width, legend } = {}) {
  const o = view.opts,
    { theme, s } = fig;
  const g = view.layout(width, s);
  const ctx = view.canvas.getContext('2d');
  const { lo, hi, map } = o.domain,
    lut = colormap(map);
  const fills = Array.from({ length: 256 }, (_, i) => hex3(lut, i));
  const maskedFill = cssHex(`rgb(${theme.maskedRgb.slice(0, 3).join(',')})`).hex;
  const k = hi > lo ? 255 / (hi - lo) : 0;
  const X = (px) => ox + px,
    Y = (py) => oy + py;
  const out = [];
  // Cells: runs of one level along each row.
  const masked = [];
  for (let r = 0; r < o.rows; r++) {
    let c = 0;
    while (c < o.cols) {
      const lev = levelOf(o.data[r * o.cols + c], lo, k);
      let e = c + 1;
      while (e < o.cols && levelOf(o.data[r * o.cols + e], lo, k) === lev) e++;
      if (lev < 0) for (let i = c; i < e; i++) masked.push(r * o.cols + i);
      fig.cells.add(lev < 0 ? maskedFill : fills[lev], g.cw, g.ch, X(g.x0), Y(g.y0), r, c, e - c);
      c = e;
    }
  }
  const showValues = o.values === 'always' || (o.values === 'auto' && g.cw >= 34 && g.ch >= 16);
  if (g.cw >= 5 && masked.length && !showValues) {
    let d = '';
    for (const i of masked) {
      const x = X(g.x0 + (i % o.cols) * g.cw),
        y = Y(g.y0 + Math.floor(i / o.cols) * g.ch);
      d += `M${num(x + 1)} ${num(y + g.ch - 1)}L${num(x + g.cw - 1)} ${num(y + 1)}`;
    }
    out.push(`<path fill="none" ${paint('stroke', theme.hatch)} d="${d}"/>`);
  }
  if (g.cw >= 8 && g.ch >= 8 && (o.rows > 1 || o.cols > 1)) {
    let d = '';
    for (let c = 1; c < o.cols; c++) d += `M${num(X(g.x0 + c * g.cw))} ${num(Y(g.y0))}v${num(o.rows * g.ch)}`;
    for (let r = 1; r < o.rows; r++) d += `M${num(X(g.x0))} ${num(Y(g.y0 + r * g.ch))}h${num(o.cols * g.cw)}`;
    if (d) out.push(`<path fill="none" ${paint('stroke', theme.bgSolid)} stroke-width="1" d="${d}"/>`);
  }
  if (showValues) {
    const size = (g.cw >= 44 ? 11 : 10) * s;
    for (let r = 0; r < o.rows; r++)
      for (let c = 0; c < o.cols; c++) {
        const v = o.data[r * o.cols + c];
        out.push(
          text(
            X(g.x0 + (c + 0.5) * g.cw),
            Y(g.y0 + (r + 0.5) * g.ch),
            formatNumber(v, o.decimals),
            {
              size,
              anchor: 'middle',
              baseline: 'middle',
              fill: Number.isFinite(v) ? inkOn(map, v, lo, hi) : theme.fg,
              mono: true,
            },
            fig,
          ),
        );
      }
  }
  // Title and labels, cut to fit as on the canvas.
  const font = `${12 * s}px ${theme.font}`;
  if (o.title) {
    ctx.font = `600 ${12 * s}px ${theme.font}`;
    out.push(
      text(
        X(PAD),
        Y(PAD),
        fitText(ctx, o.title, g.w - 2 * PAD),
        { size: 12 * s, baseline: 'top', fill: theme.fg, weight: 600 },
        fig,
      ),
    );
  }
  ctx.font = font;
  if (o.rowLabels) {
    const every = Math.max(1, Math.ceil((14 * s) / g.ch));
    for (let r = 0; r < o.rows; r += every) {
      out.push(
        text(
          X(g.x0 - 6),
          Y(g.y0 + (r + 0.5) * g.ch),
          fitText(ctx, o.rowLabels[r], g.rowW - 10),
          {
            size: 12 * s,
            anchor: 'end',
            baseline: 'middle',
            fill: o.selectedRow === r ? theme.accent : theme.fg,
          },
          fig,
        ),
      );
    }
  }
  if (o.colLabels) {
    const widest = g.angled
      ? 13 * s
      : Math.max(16, ...o.colLabels.slice(0, 600).map((l) => ctx.measureText(l).width + 8));
    const every = Math.max(1, Math.ceil((g.angled ? 13 * s : Math.min(widest, 80 * s)) / g.cw));
    for (let c = 0; c < o.cols; c += every) {
      const x = X(g.x0 + (c + 0.5) * g.cw);
      if (g.angled) {
        const y = Y(g.y0 - 5);
        out.push(
          `<g transform="translate(${num(x)} ${num(y)}) rotate(-45)">${text(0, 0, fitText(ctx, o.colLabels[c], 90 * s), { size: 12 * s, baseline: 'middle', fill: theme.fg }, fig)}</g>`,
        );
      } else {
        out.push(
          text(
            x,
            Y(g.y0 - 4),
            fitText(ctx, o.colLabels[c], g.cw * every - 2),
            { size: 12 * s, anchor: 'middle', baseline: 'bottom', fill: theme.fg },
            fig,
          ),
        );
      }
    }
  }
  if (o.rowSums) {
    const x = X(g.x0 + o.cols * g.cw + 8);
    out.push(
      text(x, Y(g.y0 - 4), 'Σ row', { size: 11 * s, baseline: 'bottom', fill: theme.muted, mono: true }, fig),
    );
    if (g.ch >= 10) {
      for (let r = 0; r < o.rows; r++) {
        let sum = 0;
        for (let c = 0; c < o.cols; c++) {
          const v = o.data[r * o.cols + c];
          if (Number.isFinite(v)) sum += v;
        }
        out.push(
          text(
            x,
            Y(g.y0 + (r + 0.5) * g.ch),
            sum.toFixed(3),
            { size: 11 * s, baseline: 'middle', fill: theme.fg, mono: true },
            fig,
          ),
        );
      }
    }
  }
  if (Number.isInteger(o.selectedRow) && o.selectedRow >= 0 && o.selectedRow < o.rows) {
    out.push(
      `<rect x="${num(X(g.x0 + 1))}" y="${num(Y(g.y0 + o.selectedRow * g.ch + 1))}" width="${num(o.cols * g.cw - 2)}" height="${num(g.ch - 2)}" fill="none" ${paint('stroke', theme.accent)} stroke-width="2"/>`,
    );
  }
  if (legend ?? o.legend) {
    const x = PAD + Math.max(0, g.rowW - 4),
      y = g.y0 + o.rows * g.ch + 12;
    const w = Math.max(60, Math.min(220, g.w - x - PAD - 12));
    out.push(colorBar(fig, { x: X(x), y: Y(y), w, domain: o.domain, masked: masked.length > 0 }));
  }
  fig.body.push(out.join('\n'));
  const r2 = (v) => Math.round(v * 1000) / 1000;
  return {
    w: g.w,
    h: g.h,
    geo: g,
    cells: { x: r2(X(g.x0)), y: r2(Y(g.y0)), w: r2(o.cols * g.cw), h: r2(o.rows * g.ch) },
  };
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

/**
 * The line chart of charts.js's drawLines (same options, same layout) as part of a figure, its top
 * left at (ox, oy): grid, axis values, one polyline per series in the Okabe–Ito colours, legend.
 * @returns {{ w: number, h: number }}
 */
export function linesPanel(fig, o, { x: ox = 0, y: oy = 0, colors } = {}) {
  const { theme, s } = fig;
  const height = o.height || 200;
  const left = 40,
    right = 12,
    top = 30,
    bottom = 30;
  const plotW = Math.max(60, o.width - left - right),
    plotH = height - top - bottom;
  const n = Math.max(2, ...o.series.map((q) => q.values.length));
  const [y0, y1] = o.yRange || [-1, 1];
  const X = (i) => ox + left + (i / (n - 1)) * plotW;
  const Y = (v) => oy + top + (1 - (v - y0) / (y1 - y0)) * plotH;
  const out = [];
  const grid = theme.dark ? 'rgba(255,255,255,0.14)' : 'rgba(0,0,0,0.12)';
  let d = '';
  for (const v of [y0, (y0 + y1) / 2, y1]) {
    d += `M${num(ox + left)} ${num(Y(v))}h${num(plotW)}`;
    out.push(
      text(
        ox + left - 6,
        Y(v),
        formatNumber(v, 1),
        { size: 10 * s, anchor: 'end', baseline: 'middle', fill: theme.muted, mono: true },
        fig,
      ),
    );
  }
  out.unshift(`<path fill="none" ${paint('stroke', grid)} d="${d}"/>`);
  const step = Math.max(1, Math.ceil((n - 1) / 8));
  for (let i = 0; i < n; i += step)
    out.push(
      text(
        X(i),
        oy + top + plotH + 5,
        String(i),
        { size: 10 * s, anchor: 'middle', baseline: 'top', fill: theme.muted, mono: true },
        fig,
      ),
    );
  if (o.xLabel)
    out.push(
      text(
        ox + left + plotW,
        oy + top + plotH + 17,
        o.xLabel,
        { size: 10 * s, anchor: 'end', baseline: 'top', fill: theme.muted, mono: true },
        fig,
      ),
    );
  scratch ||= new OffscreenCanvas(1, 1).getContext('2d');
  scratch.font = `${12 * s}px ${theme.font}`;
  let lx = ox + left;
  o.series.forEach((q, k) => {
    const color = colors[k % colors.length];
    const pts = [];
    for (let i = 0; i < q.values.length; i++)
      if (Number.isFinite(q.values[i])) pts.push(`${num(X(i))},${num(Y(q.values[i]))}`);
    out.push(
      `<polyline fill="none" ${paint('stroke', color)} stroke-width="1.8" stroke-linejoin="round" points="${pts.join(' ')}"/>`,
    );
    const w = scratch.measureText(q.label).width;
    if (lx - ox + w + 24 < o.width) {
      out.push(
        `<rect x="${num(lx)}" y="${num(oy + 11)}" width="14" height="3" ${paint('fill', color)}/>`,
        text(lx + 18, oy + 12, q.label, { size: 12 * s, baseline: 'middle', fill: theme.fg }, fig),
      );
      lx += w + 34;
    }
  });
  fig.body.push(out.join('\n'));
  return { w: o.width, h: height };
}

/**
 * The bar chart of charts.js's drawBars (same options, same layout) as part of a figure, its top
 * left at (ox, oy): grid with values, one bar per value, numbers over wide bars, labels under them.
 * @returns {{ w: number, h: number }}
 */
export function barsPanel(fig, o, { x: ox = 0, y: oy = 0 } = {}) {
  const { theme, s } = fig;
  scratch ||= new OffscreenCanvas(1, 1).getContext('2d');
  const ctx = scratch;
  const n = o.values.length;
  const left = 44,
    right = 10;
  const plotW = Math.max(60, o.width - left - right);
  const bw = plotW / Math.max(1, n);
  const top = (o.title ? 28 : 10) + (bw >= 30 ? 12 : 0);
  const labelled = bw >= 11;
  ctx.font = `${12 * s}px ${theme.font}`;
  const longest = labelled ? Math.min(90 * s, Math.max(...o.labels.map((l) => ctx.measureText(l).width))) : 0;
  const angled = labelled && longest + 4 > bw;
  const bottom = labelled ? (angled ? Math.ceil(longest * 0.72) + 16 : 22 * s) : 8;
  const plotH = 130;
  const height = top + plotH + bottom;
  const max = o.maxValue ?? Math.max(1e-9, ...Array.from(o.values, (v) => (Number.isFinite(v) ? v : 0)));
  const out = [];
  let d = '';
  for (const f of [0, 0.5, 1]) {
    const y = oy + top + plotH * (1 - f);
    d += `M${num(ox + left)} ${num(y)}h${num(plotW)}`;
    out.push(
      text(
        ox + left - 6,
        y,
        formatNumber(max * f, 2),
        { size: 10 * s, anchor: 'end', baseline: 'middle', fill: theme.muted, mono: true },
        fig,
      ),
    );
  }
  out.unshift(
    `<path fill="none" ${paint('stroke', theme.dark ? 'rgba(255,255,255,0.14)' : 'rgba(0,0,0,0.12)')} d="${d}"/>`,
  );
  if (o.title) {
    ctx.font = `600 ${12 * s}px ${theme.font}`;
    out.push(
      text(
        ox + 6,
        oy + 6,
        fitText(ctx, o.title, o.width - 12),
        { size: 12 * s, baseline: 'top', fill: theme.fg, weight: 600 },
        fig,
      ),
    );
  }
  let bars = '';
  const rects = [];
  for (let i = 0; i < n; i++) {
    const v = Number.isFinite(o.values[i]) ? o.values[i] : 0;
    const bh = (v / max) * plotH;
    const bx = ox + left + i * bw + (bw > 4 ? 1 : 0),
      bwid = Math.max(1, bw - (bw > 4 ? 2 : 0));
    if (bh > 0) {
      bars += `M${num(bx)} ${num(oy + top + plotH - bh)}h${num(bwid)}v${num(bh)}h${num(-bwid)}z`;
      rects.push({ x: +num(bx), y: +num(oy + top + plotH - bh), w: +num(bwid), h: +num(bh) });
    }
  }
  const fill = cssHex(o.color || theme.accent).hex;
  if (bars) out.push(`<path ${paint('fill', o.color || theme.accent)} d="${bars}"/>`);
  if (bw >= 30) {
    for (let i = 0; i < n; i++) {
      const v = Number.isFinite(o.values[i]) ? o.values[i] : 0;
      out.push(
        text(
          ox + left + (i + 0.5) * bw,
          oy + top + plotH - (v / max) * plotH - 2,
          formatNumber(v, 2),
          { size: 10 * s, anchor: 'middle', baseline: 'bottom', fill: theme.muted, mono: true },
          fig,
        ),
      );
    }
  }
  if (labelled) {
    ctx.font = `${12 * s}px ${theme.font}`;
    const every = Math.max(1, Math.ceil((angled ? 13 : 26) / bw));
    for (let i = 0; i < n; i += every) {
      const x = ox + left + (i + 0.5) * bw;
      if (angled) {
        out.push(
          `<g transform="translate(${num(x)} ${num(oy + top + plotH + 6)}) rotate(45)">${text(0, 0, fitText(ctx, o.labels[i], 90 * s), { size: 12 * s, baseline: 'middle', fill: theme.fg }, fig)}</g>`,
        );
      } else {
        out.push(
          text(
            x,
            oy + top + plotH + 5,
            fitText(ctx, o.labels[i], bw * every - 2),
            { size: 12 * s, anchor: 'middle', baseline: 'top', fill: theme.fg },
            fig,
          ),
        );
      }
    }
  }
  fig.body.push(out.join('\n'));
  return { w: o.width, h: height, bars: rects, fill };
}

// ---- x–y charts (xy-chart.js's drawXY) --------------------------------------------------------

// Axis scales, ticks and tick labels: xy-chart.js's own, so the figure's axes are the canvas's.

/**
 * An x–y chart with drawXY's options and layout (axes, grid, ticks, labels, title, the vertical
 * marker, lines / markers / dashed series, the legend) as part of a figure, its top left at (ox, oy).
 * Points outside the axes are dropped rather than clipped (no clip path, so no id to collide).
 * @returns {{ w: number, h: number }}
 */
export function xyPanel(fig, o, { x: ox = 0, y: oy = 0, colors } = {}) {
  const { theme, s } = fig;
  scratch ||= new OffscreenCanvas(1, 1).getContext('2d');
  const ctx = scratch;
  const width = o.width,
    height = o.height || 240;
  // Legend rows (as legendLayout).
  ctx.font = `${12 * s}px ${theme.font}`;
  const items = [];
  let lx = 48,
    row = 0;
  o.series.forEach((q, k) => {
    if (!q.label) return;
    const w = ctx.measureText(q.label).width + 21;
    if (lx > 48 && lx + w > width - 8) {
      lx = 48;
      row++;
    }
    items.push({ k, x: lx, y: (o.title ? 24 : 8) + 8 + row * 18 });
    lx += w + 17;
  });
  const legendH = items.length ? (row + 1) * 18 + 4 : 0;
  const top = (o.title ? 24 : 8) + legendH,
    bottom = o.x.label ? 40 : 26;
  const g = { left: 48, right: width - 14, top, bottom: height - bottom };
  const X = scaleOf(o.x, g.left, g.right),
    Y = scaleOf(o.y, g.bottom, g.top);
  const out = [];
  const grid = theme.dark ? 'rgba(255,255,255,0.13)' : 'rgba(0,0,0,0.11)';
  let d = '';
  const tick = { size: 10.5 * s, fill: theme.muted, mono: true };
  for (const v of ticksOf(o.y)) {
    const y = Math.round(Y(v)) + 0.5;
    d += `M${num(ox + g.left)} ${num(oy + y)}H${num(ox + g.right)}`;
    out.push(
      text(ox + g.left - 6, oy + y, tickText(o.y, v), { ...tick, anchor: 'end', baseline: 'middle' }, fig),
    );
  }
  for (const v of ticksOf(o.x)) {
    const x = Math.round(X(v)) + 0.5;
    d += `M${num(ox + x)} ${num(oy + g.top)}V${num(oy + g.bottom)}`;
    out.push(
      text(ox + x, oy + g.bottom + 5, tickText(o.x, v), { ...tick, anchor: 'middle', baseline: 'top' }, fig),
    );
  }
  out.unshift(`<path fill="none" ${paint('stroke', grid)} d="${d}"/>`);
  if (o.x.label)
    out.push(
      text(
        ox + (g.left + g.right) / 2,
        oy + height - 17,
        o.x.label,
        { size: 12 * s, anchor: 'middle', baseline: 'top', fill: theme.fg },
        fig,
      ),
    );
  if (o.y.label) {
    out.push(
      `<g transform="translate(${num(ox + 12)} ${num(oy + (g.top + g.bottom) / 2)}) rotate(-90)">${text(0, 0, o.y.label, { size: 12 * s, anchor: 'middle', baseline: 'middle', fill: theme.fg }, fig)}</g>`,
    );
  }
  if (o.title)
    out.push(
      text(ox + 6, oy + 5, o.title, { size: 12.5 * s, baseline: 'top', fill: theme.fg, weight: 600 }, fig),
    );
  if (o.marker && Number.isFinite(o.marker.x)) {
    const x = Math.round(X(o.marker.x)) + 0.5;
    out.push(
      `<path fill="none" ${paint('stroke', theme.accent)} stroke-width="1.5" stroke-dasharray="4 3" d="M${num(ox + x)} ${num(oy + g.top)}V${num(oy + g.bottom)}"/>`,
    );
    if (o.marker.label) {
      const flip = x > width - 90;
      out.push(
        text(
          ox + x + (flip ? -4 : 4),
          oy + g.top + 2,
          o.marker.label,
          { size: 11 * s, anchor: flip ? 'end' : 'start', baseline: 'top', fill: theme.accent },
          fig,
        ),
      );
    }
  }
  const inside = (px, py) => px >= g.left - 5 && px <= g.right + 5 && py >= g.top - 5 && py <= g.bottom + 5;
  o.series.forEach((q, k) => {
    const color = q.color || colors[k % colors.length];
    const pts = q.points
      .filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y))
      .map(([x, y]) => [X(x), Y(y)])
      .filter(([px, py]) => inside(px, py));
    if (q.line !== false && pts.length > 1) {
      out.push(
        `<polyline fill="none" ${paint('stroke', color)} stroke-width="${q.width || 2}" stroke-linejoin="round"${q.dashed ? ' stroke-dasharray="5 4"' : ''} points="${pts.map(([px, py]) => `${num(ox + px)},${num(oy + py)}`).join(' ')}"/>`,
      );
    }
    if (q.markers)
      out.push(
        `<g ${paint('fill', color)}>${pts.map(([px, py]) => `<circle cx="${num(ox + px)}" cy="${num(oy + py)}" r="3.6"/>`).join('')}</g>`,
      );
  });
  for (const { k, x, y } of items) {
    const q = o.series[k];
    const color = q.color || colors[k % colors.length];
    out.push(
      `<path fill="none" ${paint('stroke', color)} stroke-width="2.2"${q.dashed ? ' stroke-dasharray="4 3"' : ''} d="M${num(ox + x)} ${num(oy + y)}h16"/>`,
      text(ox + x + 21, oy + y, q.label, { size: 12 * s, baseline: 'middle', fill: theme.fg }, fig),
    );
  }
  fig.body.push(out.join('\n'));
  return { w: width, h: height };
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
    ? ` ${paint('stroke', halo)} stroke-width="3" stroke-linejoin="round" paint-order="stroke"`
    : '';
  return text(x, y, str, { size, anchor, baseline, fill, mono, weight, extra }, fig);
}

/**
 * An arrow from (x0, y0) to (x1, y1) as the widgets' canvas arrow() draws it: a round-capped shaft
 * stopping short of the tip, and a filled head.
 */
export function svgArrow(x0, y0, x1, y1, color, width, { dashed = false, headBase = 7 } = {}) {
  const a = Math.atan2(y1 - y0, x1 - x0),
    head = headBase + width * 1.5;
  const ex = x1 - Math.cos(a) * head * 0.6,
    ey = y1 - Math.sin(a) * head * 0.6;
  const p = (t) => `${num(x1 - head * Math.cos(a + t))} ${num(y1 - head * Math.sin(a + t))}`;
  return (
    `<path fill="none" ${paint('stroke', color)} stroke-width="${num(width)}" stroke-linecap="round"${dashed ? ' stroke-dasharray="5 4"' : ''} d="M${num(x0)} ${num(y0)}L${num(ex)} ${num(ey)}"/>` +
    `<path ${paint('fill', color)} d="M${num(x1)} ${num(y1)}L${p(-0.42)}L${p(0.42)}z"/>`
  );
}
